"""The awaitable variants of the stream API's blocking calls, from an asyncio event loop against
the sandbox venue: `Client.aopen_order_stream` / `aopen_stream`, an order placed with
`Stream.anew_order` and cancelled with `acancel_order`, their replies and account events read
with `anext` / `async for`; errors the sync calls' own. The loop keeps running while an
awaitable blocks: a ticker coroutine keeps ticking while an open waits for a handshake a proxy
delays, and while an order waits for a symbol-rules read the venue delays. Cancellation: an
`aopen_*` cancelled while its open is in flight, or just after it finished, leaves no stream
(its connection leaves the venue, closed by the binding off the loop and freed, not left to
the garbage collector); an `anew_order` cancelled mid-flight may still send its order, which
is then found by the cl_ord_id the caller gave it (the documented caveat); an `aclose`
cancelled while it waits for the loop's executor still closes the stream.
"""

import asyncio
import concurrent.futures
import json
import threading
import time
import urllib.parse
import urllib.request

import pytest

import perps
from test_flow import WALLET_KEY, sandbox  # noqa: F401  (sandbox: the fixture)
from test_stream import account_order, is_status, response_to, signed_in, slow_proxy  # noqa: F401  (signed_in: the fixture)
from test_trading import far_bid, limit_buy


async def anext_where(stream, accept, seconds=5.0):
    """`next_where` with anext: the first event for which accept(event) holds."""
    deadline = time.monotonic() + seconds
    seen = []
    while time.monotonic() < deadline:
        event = await stream.anext(0.2)
        if event is not None:
            if accept(event):
                return event
            seen.append(event)
    pytest.fail(f"no such event within {seconds} s; saw {seen}")


class Ticker:
    """A coroutine ticking every 10 ms while it runs: the longest gap between two ticks is how
    long the event loop was blocked (at least)."""

    def __init__(self):
        self.ticks = []
        self.task = asyncio.create_task(self._run())

    async def _run(self):
        loop = asyncio.get_running_loop()
        while True:
            self.ticks.append(loop.time())
            await asyncio.sleep(0.01)

    def since(self, started):
        """The number of ticks since `started` (loop.time()) and the longest gap among them."""
        ticks = [started] + [t for t in self.ticks if t >= started] + [asyncio.get_running_loop().time()]
        return len(ticks) - 2, max(b - a for a, b in zip(ticks, ticks[1:]))

    def stop(self):
        self.task.cancel()


def ws_connections(sandbox, endpoint=None):  # noqa: F811
    with urllib.request.urlopen(sandbox.admin_url + "/ws/connections", timeout=5) as resp:
        listed = json.loads(resp.read())
    return [c for c in listed if endpoint is None or c["endpoint"] == endpoint]


def test_order_entry_from_asyncio(signed_in):
    sandbox, client, session = signed_in
    bid = far_bid(client)

    async def main():
        orders = await client.aopen_order_stream(session)
        account = await client.aopen_stream(session, [{"channel": "order"}])
        assert isinstance(orders, perps.Stream) and isinstance(account, perps.Stream)
        async with orders, account:
            assert (await anext_where(orders, is_status("connected")))["stream"] == "order"
            assert (await anext_where(account, is_status("connected")))["stream"] == "market"

            sent = await orders.anew_order(limit_buy(bid, "0.010"))
            request_id, cl = sent["request_id"], sent["cl_ord_id"]
            assert isinstance(request_id, str) and isinstance(cl, str) and len(cl) >= 26, sent
            ack = await anext_where(orders, response_to(request_id, False))
            assert ack["message"] == "accepted" and ack["code"] == 0
            outcome = await anext_where(orders, response_to(request_id, True))
            assert outcome["code"] == 0 and outcome["cl_ord_id"] == cl

            # The account event, by async for.
            async def first_open():
                async for event in account:
                    if account_order(cl, "open")(event):
                        return event

            event = await asyncio.wait_for(first_open(), 5)
            rest = json.loads(client.query_order(session, {"cl_ord_id": cl}))
            assert rest["id"] == event["data"]["id"] and rest["status"] == "open"

            cancel = await orders.acancel_order({"cl_ord_id": cl})
            assert cancel["cl_ord_id"] == cl and cancel["request_id"] != request_id
            assert (await anext_where(orders, response_to(cancel["request_id"], False)))["message"] == "accepted"
            assert (await anext_where(orders, response_to(cancel["request_id"], True)))["code"] == 0
            await anext_where(account, account_order(cl, "canceled"))
            assert json.loads(client.query_order(session, {"cl_ord_id": cl}))["status"] == "canceled"

            # The sync calls' errors, refused before anything is sent.
            with pytest.raises(perps.PerpsError) as exc:
                await orders.anew_order({**limit_buy(bid), "qty": 0.01})
            assert exc.value.code is perps.Code.INVALID_ORDER and "qty" in exc.value.message
            with pytest.raises(perps.PerpsError) as exc:
                await orders.acancel_order({"order_id": 1.0})
            assert exc.value.code is perps.Code.INVALID_ARGUMENT and "params.order_id" in exc.value.message
            with pytest.raises(perps.PerpsError) as exc:
                await account.anew_order(limit_buy(bid))  # a market stream takes no orders
            assert exc.value.code is perps.Code.INVALID_STATE
            with pytest.raises(perps.PerpsError) as exc:
                await client.aopen_stream(None, [{"channel": "order"}])  # an account channel needs a session
            assert exc.value.code is perps.Code.INVALID_ARGUMENT
        for call in (orders.anew_order(limit_buy(bid)), orders.acancel_order({"cl_ord_id": cl})):
            with pytest.raises(perps.PerpsError) as exc:
                await call
            assert exc.value.code is perps.Code.STREAM_CLOSED
        with perps.Session() as signed_out:  # no token: the sync call's error, as it is
            with pytest.raises(perps.PerpsError) as sync:
                client.open_order_stream(signed_out)
            with pytest.raises(perps.PerpsError) as exc:
                await client.aopen_order_stream(signed_out)
            assert (exc.value.code, exc.value.message) == (sync.value.code, sync.value.message)

    asyncio.run(main())
    assert ws_connections(sandbox) == []


def test_the_loop_runs_while_an_open_waits_for_a_delayed_handshake(signed_in):
    # A proxy holds each connection 1.5 s before it relays: each open takes that long, and
    # the ticker keeps ticking through it (a blocked loop would not tick for 1.5 s).
    sandbox, _, session = signed_in
    host, port = urllib.parse.urlsplit(sandbox.perps_url).netloc.split(":")
    proxy = slow_proxy(host, int(port), 1.5)
    options = {
        "stream_url": f"ws://127.0.0.1:{proxy}/perps/ws-stream/v1",
        "order_stream_url": f"ws://127.0.0.1:{proxy}/perps/ws-api/v1",
    }

    async def main():
        loop = asyncio.get_running_loop()
        ticker = Ticker()
        try:
            with perps.Client(sandbox.base_url, sandbox.perps_url, options) as slow:
                for name, open_it in [
                    ("aopen_stream", lambda: slow.aopen_stream(session, [{"channel": "order"}])),
                    ("aopen_order_stream", lambda: slow.aopen_order_stream(session)),
                ]:
                    started = loop.time()
                    async with await open_it() as stream:
                        took = loop.time() - started
                        ticks, gap = ticker.since(started)
                        assert took >= 1.4, f"{name}: the proxy's delay was not waited for ({took:.2f} s)"
                        assert gap < 0.5 and ticks >= 10, f"{name}: the loop was blocked: {ticks} ticks, longest gap {gap:.2f} s"
                        await anext_where(stream, is_status("connected"))
        finally:
            ticker.stop()

    asyncio.run(main())


def test_the_loop_runs_while_an_order_waits_for_a_delayed_symbol_rules_read(signed_in):
    # With symbol_rules on, the first order reads the symbol list first; the venue answers
    # that read 1.5 s late, and the ticker keeps ticking while anew_order waits for it.
    sandbox, _, session = signed_in
    with perps.Client(sandbox.base_url, sandbox.perps_url, {"symbol_rules": True}) as client:
        bid = far_bid(client)  # query_symbol_price: no rules read
        sandbox.set_faults({"per_endpoint": {"query_symbol_info": {"slow_ms": 1500, "times": 1}}})

        async def main():
            loop = asyncio.get_running_loop()
            async with await client.aopen_order_stream(session) as orders:
                await anext_where(orders, is_status("connected"))
                ticker = Ticker()
                try:
                    started = loop.time()
                    sent = await orders.anew_order(limit_buy(bid))
                    took = loop.time() - started
                    ticks, gap = ticker.since(started)
                finally:
                    ticker.stop()
                assert took >= 1.4, f"the rules read was not waited for ({took:.2f} s)"
                assert gap < 0.5 and ticks >= 10, f"the loop was blocked: {ticks} ticks, longest gap {gap:.2f} s"
                assert (await anext_where(orders, response_to(sent["request_id"], True)))["code"] == 0
                await orders.acancel_order({"cl_ord_id": sent["cl_ord_id"]})

        asyncio.run(main())
    assert len(sandbox.requests("query_symbol_info")) == 1


def test_anew_order_cancelled_mid_flight_may_still_be_sent(signed_in):
    # The task is cancelled while the order's rules read is held by the venue: the await ends
    # at once, yet the call goes on and the order reaches the venue. The cl_ord_id the order
    # was given finds it (its replies come as events as usual; REST has it).
    sandbox, _, session = signed_in
    with perps.Client(sandbox.base_url, sandbox.perps_url, {"symbol_rules": True}) as client:
        bid = far_bid(client)
        cl = f"async-cancelled-{time.time_ns()}"
        sandbox.set_faults({"per_endpoint": {"query_symbol_info": {"slow_ms": 1500, "times": 1}}})

        async def main():
            loop = asyncio.get_running_loop()
            async with await client.aopen_order_stream(session) as orders:
                await anext_where(orders, is_status("connected"))
                task = asyncio.create_task(orders.anew_order(limit_buy(bid, cl_ord_id=cl)))
                await asyncio.sleep(0.3)
                assert not task.done()
                cancelled_at = loop.time()
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                assert loop.time() - cancelled_at < 0.5, "cancelled at once"
                outcome = await anext_where(orders, lambda e: e["channel"] == "order_response" and e["final"], seconds=10)
                assert outcome["cl_ord_id"] == cl and outcome["code"] == 0, outcome

        asyncio.run(main())
        assert json.loads(client.query_order(session, {"cl_ord_id": cl}))["status"] == "open"
        client.cancel_order(session, {"cl_ord_id": cl})


# -- a cancelled aopen_* leaves no stream ----------------------------------------------------


@pytest.fixture
def closes(monkeypatch):
    """Each Stream.close() that returned, as (stream, thread it ran on); and the steps of the
    garbage collector's safety net (perps._stream._collected_hook), which must stay empty: a
    stream it closes is one the binding dropped unclosed."""
    calls, collected = [], []
    real_close = perps.Stream.close

    def close(self):
        real_close(self)
        calls.append((self, threading.current_thread()))

    monkeypatch.setattr(perps.Stream, "close", close)
    monkeypatch.setattr(perps._stream, "_collected_hook", collected.append)
    return calls, collected


def assert_closed_off_the_loop(sandbox, calls, collected, count, loop_thread):  # noqa: F811
    """`count` streams closed by the binding, none on the loop's thread, each freed (its handle
    holds no pointer), none left to the collector, and no connection left at the venue."""
    deadline = time.monotonic() + 8
    while ws_connections(sandbox) or len(calls) < count:
        assert time.monotonic() < deadline, f"open: {ws_connections(sandbox)}; closed {calls}; collected {collected}"
        time.sleep(0.05)
    assert len(calls) == count, calls
    for stream, thread in calls:
        assert thread is not loop_thread, f"closed on the loop's thread: {thread}"
        assert stream._handle._ptr is None and stream._handle._closing is None, "not freed"
    assert collected == [], f"left to the garbage collector: {collected}"


def test_aopen_cancelled_while_its_open_is_in_flight_leaves_no_stream(signed_in, closes):
    # The opens wait 1 s for a handshake a proxy delays; each task is cancelled after 0.2 s.
    # The opens go on and reach the venue, and each stream they make is closed as it comes.
    sandbox, _, session = signed_in
    calls, collected = closes
    host, port = urllib.parse.urlsplit(sandbox.perps_url).netloc.split(":")
    proxy = slow_proxy(host, int(port), 1.0)
    options = {
        "stream_url": f"ws://127.0.0.1:{proxy}/perps/ws-stream/v1",
        "order_stream_url": f"ws://127.0.0.1:{proxy}/perps/ws-api/v1",
    }
    opened_before = sandbox.stats()["ws_connections_opened"]

    async def main(slow):
        loop = asyncio.get_running_loop()
        for open_it in (lambda: slow.aopen_stream(session, [{"channel": "order"}]), lambda: slow.aopen_order_stream(session)):
            task = asyncio.create_task(open_it())
            await asyncio.sleep(0.2)
            assert not task.done()
            cancelled_at = loop.time()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert loop.time() - cancelled_at < 0.5, "cancelled at once"
        # asyncio.run waits for its executor as it ends: the opens finish meanwhile.

    with perps.Client(sandbox.base_url, sandbox.perps_url, options) as slow:
        asyncio.run(main(slow))
        assert sandbox.stats()["ws_connections_opened"] == opened_before + 2, "the opens reached the venue"
        assert_closed_off_the_loop(sandbox, calls, collected, 2, threading.current_thread())
        assert {thread.name.split("_")[0] for _, thread in calls} == {"asyncio"}  # the executor's (the open's own)


def test_aopen_cancelled_as_its_open_returns_leaves_no_stream(signed_in, closes, monkeypatch):
    # The open has returned and its stream is on its way to the awaiting task, which is
    # cancelled before it resumes (the loop held meanwhile): the task never sees the stream,
    # so the binding closes it, on a thread of its own.
    sandbox, client, session = signed_in
    calls, collected = closes
    returned = threading.Event()
    real_run = perps._stream._Handover.run

    def run(self, open_stream):
        try:
            return real_run(self, open_stream)
        finally:
            returned.set()

    monkeypatch.setattr(perps._stream._Handover, "run", run)

    async def main():
        task = asyncio.create_task(client.aopen_order_stream(session))
        await asyncio.sleep(0)  # the task starts, and awaits the open
        assert returned.wait(10), "the open never returned"
        time.sleep(0.3)  # holding the loop: the result is queued for it, the task not resumed
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert sandbox.stats()["ws_connections_opened"] == 1
    assert_closed_off_the_loop(sandbox, calls, collected, 1, threading.current_thread())
    assert calls[0][1].name == "perps-stream-close", calls


def test_aopen_cancelled_before_its_open_began_opens_nothing(signed_in, closes):
    # The loop's executor (one thread here) is busy: the open waits in its queue, and the
    # task is cancelled there. The open never runs: no connection is made at all.
    sandbox, client, session = signed_in
    calls, collected = closes
    release = threading.Event()

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=1))
        busy = loop.run_in_executor(None, release.wait, 10)
        task = asyncio.create_task(client.aopen_stream(session, [{"channel": "order"}]))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        await busy
        await asyncio.sleep(0.2)

    asyncio.run(main())
    assert sandbox.stats()["ws_connections_opened"] == 0
    assert calls == [] and collected == [] and ws_connections(sandbox) == []


def test_aclose_cancelled_in_the_executor_queue_still_closes(signed_in, closes):
    # The loop's executor (one thread here) is busy when aclose() is called and cancelled: the
    # close still runs once the executor is free (not dropped with the cancelled await).
    sandbox, client, session = signed_in
    calls, collected = closes
    release = threading.Event()

    async def main():
        loop = asyncio.get_running_loop()
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(max_workers=1))
        stream = await client.aopen_stream(session, [{"channel": "order"}])
        await anext_where(stream, is_status("connected"))
        busy = loop.run_in_executor(None, release.wait, 10)
        task = asyncio.create_task(stream.aclose())
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert calls == [] and len(ws_connections(sandbox)) == 1  # queued still
        release.set()
        await busy

    asyncio.run(main())
    assert_closed_off_the_loop(sandbox, calls, collected, 1, threading.current_thread())
