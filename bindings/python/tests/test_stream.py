"""perps.Stream against the sandbox venue's two WebSockets: an order placed and cancelled over
the order stream, with both reply frames of each (the "accepted" ack, final False, then the
outcome) and the account stream's `order` events, checked against the venue's REST view; a
public `depth_book` subscription with its levels sorted by exact decimal value (the sandbox
shuffles them); close() from another thread waking a blocked next(); and from asyncio: the
loop never blocked, anext() cancelled at once without losing the event it was waiting for,
`async for` ended by aclose(); a signal interrupting next() in the main thread loses no event, and one interrupting an
open leaves no connection open.
Misuse raises precise errors. A real partial write: orders
written to an order stream the venue has stalled until one no longer fits the socket, whose
error names the request by its envelope request_id (PerpsError.stream_request_id), the id the
`disconnected` event's `unanswered` list names; errors of requests refused unsent have none.
"""

import asyncio
import json
import os
import signal
import socket
import threading
import time
import urllib.parse
import urllib.request
from decimal import Decimal

import pytest

import perps
from test_flow import WALLET_KEY, sandbox  # noqa: F401  (sandbox: the fixture)
from test_trading import far_bid, limit_buy


@pytest.fixture
def signed_in(sandbox):  # noqa: F811
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)
        yield sandbox, client, session


def next_where(stream, accept, seconds=5.0):
    """The first event for which accept(event) holds, within `seconds` (events before it are
    skipped); fails the test when none comes."""
    deadline = time.monotonic() + seconds
    seen = []
    while time.monotonic() < deadline:
        event = stream.next(0.2)
        if event is not None:
            if accept(event):
                return event
            seen.append(event)
    pytest.fail(f"no such event within {seconds} s; saw {seen}")


def is_status(state):
    return lambda e: e["channel"] == "status" and e["state"] == state


def response_to(request_id, final):
    return lambda e: e["channel"] == "order_response" and e["request_id"] == request_id and e["final"] is final


def account_order(cl_ord_id, status):
    return lambda e: e["channel"] == "order" and e["data"]["cl_ord_id"] == cl_ord_id and e["data"]["status"] == status


def test_order_over_the_order_stream_and_its_account_event(signed_in):
    sandbox, client, session = signed_in
    bid = far_bid(client)
    with client.open_stream(session, [{"channel": "order"}]) as account, client.open_order_stream(session) as orders:
        assert next_where(account, is_status("connected"))["stream"] == "market"
        assert next_where(orders, is_status("connected"))["stream"] == "order"

        # The order as a dict with Decimals; the call returns once the frame is written.
        sent = orders.new_order(limit_buy(bid, "0.010"))
        request_id, cl = sent["request_id"], sent["cl_ord_id"]
        assert isinstance(request_id, str) and isinstance(cl, str) and len(cl) >= 26, sent

        ack = next_where(orders, response_to(request_id, False))
        assert ack["message"] == "accepted" and ack["code"] == 0 and ack["matched"] is True
        outcome = next_where(orders, response_to(request_id, True))
        assert outcome["code"] == 0 and outcome["message"] == "success" and outcome["cl_ord_id"] == cl
        assert isinstance(outcome["received_ns"], int) and outcome["received_ns"] >= ack["received_ns"]

        event = next_where(account, account_order(cl, "open"))
        assert isinstance(event["seq"], int) and event["seq"] >= 1
        assert Decimal(event["data"]["price"]) == Decimal(bid) and Decimal(event["data"]["qty"]) == Decimal("0.01")
        # The venue's REST view agrees: the order it accepted (signature verified) is ours.
        rest = json.loads(client.query_order(session, {"cl_ord_id": cl}))
        assert rest["id"] == event["data"]["id"] and rest["status"] == "open"

        # Cancel it over the order stream: two frames again, and the account event.
        cancel = orders.cancel_order({"cl_ord_id": cl})
        assert cancel["cl_ord_id"] == cl and cancel["request_id"] != request_id
        assert next_where(orders, response_to(cancel["request_id"], False))["message"] == "accepted"
        assert next_where(orders, response_to(cancel["request_id"], True))["code"] == 0
        next_where(account, account_order(cl, "canceled"))
        assert json.loads(client.query_order(session, {"order_id": rest["id"]}))["status"] == "canceled"

        # Refused before anything is sent.
        with pytest.raises(perps.PerpsError) as exc:
            orders.new_order({**limit_buy(bid), "qty": 0.01})  # a float in an order
        assert exc.value.code is perps.Code.INVALID_ORDER and "qty" in exc.value.message
        assert exc.value.stream_request_id is None  # no frame was written
        with pytest.raises(perps.PerpsError) as exc:
            orders.cancel_order({"order_id": 1.0})
        assert exc.value.code is perps.Code.INVALID_ARGUMENT and "params.order_id" in exc.value.message
        assert exc.value.stream_request_id is None
        with pytest.raises(perps.PerpsError) as exc:
            account.new_order(limit_buy(bid))  # a market stream takes no orders
        assert exc.value.code is perps.Code.INVALID_STATE
        with pytest.raises(ValueError):
            orders.next(-1)


def test_depth_book_levels_sorted(sandbox):  # noqa: F811
    with perps.Client(sandbox.base_url, sandbox.perps_url) as client:
        # XAG-USD's bids (100.04 … 99.95 around the default mark) sort differently as strings.
        with client.open_stream(None, '[{"channel":"depth_book","symbol":"XAG-USD"}]') as stream:
            for _ in range(3):  # the snapshot, then pushes (each shuffled by the venue)
                event = next_where(stream, lambda e: e["channel"] == "depth_book")
                assert event["symbol"] == "XAG-USD" and event["data"]["symbol"] == "XAG-USD"
                bids = [Decimal(price) for price, _ in event["data"]["bids"]]
                asks = [Decimal(price) for price, _ in event["data"]["asks"]]
                assert len(bids) == 10 and len(asks) == 10 and bids[0] < asks[0], event
                assert all(a > b for a, b in zip(bids, bids[1:])), f"bids high to low: {bids}"
                assert all(a < b for a, b in zip(asks, asks[1:])), f"asks low to high: {asks}"
                assert isinstance(event["data"]["bids"][0][0], str)  # the venue's texts kept

        with pytest.raises(perps.PerpsError) as exc:
            client.open_stream(None, [{"channel": "order"}])  # an account channel needs a session
        assert exc.value.code is perps.Code.INVALID_ARGUMENT
        with pytest.raises(perps.PerpsError) as exc:
            client.open_stream(None, [{"channel": "kline", "symbol": "BTC-USD"}])
        assert exc.value.code is perps.Code.INVALID_ARGUMENT and "kline" in exc.value.message


def test_close_from_another_thread_wakes_next(signed_in):
    _, client, session = signed_in
    stream = client.open_order_stream(session)  # no orders: nothing more will come
    next_where(stream, is_status("connected"))
    outcome = {}

    def reader():
        started = time.monotonic()
        try:
            outcome["events"] = list(stream)  # blocks in next() until closed: then ends
        except BaseException as e:  # noqa: BLE001  (reported below)
            outcome["error"] = e
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=reader)
    thread.start()
    time.sleep(0.3)
    closed_at = time.monotonic()
    stream.close()
    thread.join(5)
    assert not thread.is_alive() and "error" not in outcome, outcome
    assert outcome["events"] == [] and outcome["seconds"] >= 0.25
    assert time.monotonic() - closed_at < 1.0  # woken, not timed out
    stream.close()  # idempotent
    for call in (lambda: stream.next(0), lambda: stream.new_order("{}"), lambda: stream.cancel_order("{}")):
        with pytest.raises(perps.PerpsError) as exc:
            call()
        assert exc.value.code is perps.Code.STREAM_CLOSED and exc.value.code == 15
    assert list(stream) == []
    assert perps.Code.STREAM_LIMIT == 16


def test_asyncio(signed_in):
    _, client, session = signed_in
    bid = far_bid(client)

    async def main():
        loop = asyncio.get_running_loop()
        orders = await loop.run_in_executor(None, client.open_order_stream, session)
        account = await loop.run_in_executor(None, client.open_stream, session, [{"channel": "order"}])
        async with orders, account:
            assert (await orders.anext(5))["state"] == "connected"
            assert (await account.anext(5))["state"] == "connected"

            # Waiting does not block the loop: a ticker runs meanwhile.
            ticks = 0

            async def ticker():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            tick_task = asyncio.create_task(ticker())
            started = loop.time()
            assert await orders.anext(0.5) is None  # nothing within the timeout
            assert 0.45 <= loop.time() - started < 2.0
            assert ticks >= 10, ticks  # a blocked loop would not tick at all

            # Cancelled at once, and the event it was waiting for is not lost.
            waiting = asyncio.create_task(orders.anext())
            await asyncio.sleep(0.1)
            with pytest.raises(RuntimeError):
                await orders.anext(0)  # one waiter at a time
            cancelled_at = loop.time()
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            assert loop.time() - cancelled_at < 0.5  # at once (without it: never, nothing comes)
            sent = orders.new_order(limit_buy(bid))
            ack = await orders.anext(5)
            assert ack["channel"] == "order_response" and ack["request_id"] == sent["request_id"], ack
            assert ack["final"] is False
            outcome = await orders.anext(5)
            assert outcome["request_id"] == sent["request_id"] and outcome["final"] is True

            # async for, ended by aclose() from another task.
            seen, closing = [], []

            async def consume():
                async for event in account:
                    seen.append(event)
                    if event["channel"] == "order" and event["data"]["cl_ord_id"] == sent["cl_ord_id"]:
                        closing.append(asyncio.create_task(account.aclose()))

            await asyncio.wait_for(consume(), 10)
            await closing[0]
            assert any(e["channel"] == "order" for e in seen)
            with pytest.raises(perps.PerpsError) as exc:
                await account.anext(0)
            assert exc.value.code is perps.Code.STREAM_CLOSED
            tick_task.cancel()
        client.cancel_order(session, {"cl_ord_id": sent["cl_ord_id"]})

    asyncio.run(main())


def test_a_partly_written_order_frame_is_named_by_its_envelope_request_id(sandbox):  # noqa: F811
    # A write that finds the socket full waits read_timeout_ms; the stalled venue's silence
    # must not end the connection first (stream_idle_timeout_ms).
    options = {"read_timeout_ms": 2000, "stream_idle_timeout_ms": 120000}
    with perps.Client(sandbox.base_url, sandbox.perps_url, options) as client, perps.Session() as session:
        client.signin(session, "bsc", WALLET_KEY, 3600)
        bid = far_bid(client)
        with client.open_order_stream(session) as orders:
            next_where(orders, is_status("connected"))
            first = orders.new_order(limit_buy(bid))
            next_where(orders, response_to(first["request_id"], True))

            # The venue stops reading (its socket stays open): orders until one does not fit.
            stall = urllib.request.Request(sandbox.admin_url + "/ws/stall", data=b"{}", method="POST")
            with urllib.request.urlopen(stall, timeout=5) as resp:
                assert json.load(resp)["stalled"] >= 1
            written = []
            deadline = time.monotonic() + 60
            with pytest.raises(perps.PerpsError) as exc:
                while len(written) < 50000 and time.monotonic() < deadline:
                    written.append(orders.new_order(limit_buy(bid))["request_id"])
            e = exc.value
            assert written, "the socket took at least one order before it was full"
            assert e.code in (perps.Code.TIMEOUT, perps.Code.TRANSPORT) and e.may_have_reached_venue, e
            # The envelope request_id of the partly written frame: the one the message names,
            # a new request (none of those written in full), not the x-request-id.
            assert e.stream_request_id is not None and len(e.stream_request_id) == 36, e
            assert f"request_id {e.stream_request_id} may have been partly sent" in e.message
            assert e.stream_request_id not in written and e.stream_request_id != first["request_id"]
            assert e.x_request_id is not None and e.x_request_id != e.stream_request_id
            assert e.cl_ord_id is not None

            # The connection is replaced; its `disconnected` event lists that request as
            # awaiting its outcome, by the same id, with the orders written before it.
            down = next_where(orders, is_status("disconnected"), seconds=30)
            assert e.stream_request_id in down["unanswered"]
            assert written[-1] in down["unanswered"]


def next_interrupted_then(stream, then) -> float:
    """stream.next() with no timeout in the main thread, interrupted by a SIGINT 50 ms in;
    ``then`` runs on another thread 10 ms after the signal, and has returned when this does.
    How long next() took before its KeyboardInterrupt."""

    def interrupt_then():
        time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)
        then()

    other = threading.Thread(target=interrupt_then)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):  # (a SIGINT landing before next() is caught too)
        other.start()
        stream.next()  # no timeout
    took = time.monotonic() - started
    other.join()
    return took


def test_a_signal_interrupting_next_in_the_main_thread_loses_no_event(signed_in):
    # SIGINT lands while next() waits; the event (an order's, placed by REST 10 ms later)
    # comes within the same wait. The KeyboardInterrupt must not take the event with it: the
    # next next() returns it.
    _, client, session = signed_in
    assert threading.current_thread() is threading.main_thread()
    bid = far_bid(client)
    placed = {}

    def order():
        placed.update(json.loads(client.new_order(session, limit_buy(bid))))

    with client.open_stream(session, [{"channel": "order"}]) as stream:
        next_where(stream, is_status("connected"))
        while stream.next(0.3) is not None:  # what the connection brought first
            pass
        assert next_interrupted_then(stream, order) < 1.0, "interrupted at once"
        event = stream.next(2.0)
        assert event is not None and event["channel"] == "order", f"the first event after the interrupt: {event}"
        assert event["data"]["cl_ord_id"] == placed["cl_ord_id"], (event, placed)


def test_after_a_signal_interrupted_next_a_polling_next_0_gets_the_event_the_interrupted_wait_brought(signed_in):
    # As above, but the program then polls with next(0) (a busy loop of the main thread). The
    # event the interrupted wait brought (kept for the next next()) must be what those polls
    # return, before any event after it: next(0) once went to the library directly, past the
    # kept wait, so it never saw that event (a later one overtook it, or none came).
    _, client, session = signed_in
    assert threading.current_thread() is threading.main_thread()
    bid = far_bid(client)
    placed = []

    def orders():
        placed.append(json.loads(client.new_order(session, limit_buy(bid))))
        time.sleep(0.1)  # the interrupted wait has returned the first order's event by now
        placed.append(json.loads(client.new_order(session, limit_buy(bid))))

    with client.open_stream(session, [{"channel": "order"}]) as stream:
        next_where(stream, is_status("connected"))
        while stream.next(0.3) is not None:  # what the connection brought first
            pass
        next_interrupted_then(stream, orders)
        time.sleep(0.3)  # both orders' events are in by now
        got = []  # the cl_ord_ids of the order events, in the order next(0) returns them
        deadline = time.monotonic() + 2.0
        while len(set(got)) < 2 and time.monotonic() < deadline:
            event = stream.next(0)
            if event is None:
                time.sleep(0.01)
            elif event["channel"] == "order":
                got.append(event["data"]["cl_ord_id"])
        firsts = list(dict.fromkeys(got))  # each order's first event
        assert firsts == [placed[0]["cl_ord_id"], placed[1]["cl_ord_id"]], (got, placed)


def slow_proxy(target_host, target_port, delay_s):
    """A TCP proxy on 127.0.0.1 that waits `delay_s` after accepting each connection before it
    connects on and relays; returns its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def relay(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve():
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            time.sleep(delay_s)
            upstream = socket.create_connection((target_host, target_port))
            threading.Thread(target=relay, args=(client, upstream), daemon=True).start()
            threading.Thread(target=relay, args=(upstream, client), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def test_a_signal_interrupting_a_stream_open_in_the_main_thread_leaves_no_connection(signed_in):
    # SIGINT lands while open_stream waits for a handshake a proxy delays by 1 s. The open is
    # interrupted at once, and the stream it then completes is closed, not left connected
    # (and subscribed) with nothing to close it.
    sandbox, client, session = signed_in
    host, port = urllib.parse.urlsplit(sandbox.perps_url).netloc.split(":")
    proxy_port = slow_proxy(host, int(port), 1.0)
    options = {"stream_url": f"ws://127.0.0.1:{proxy_port}/perps/ws-stream/v1"}

    def ws_stream_connections():
        with urllib.request.urlopen(sandbox.admin_url + "/ws/connections", timeout=5) as resp:
            listed = json.loads(resp.read())
        return [c for c in listed if c["endpoint"] == "ws-stream"]

    with perps.Client(sandbox.base_url, sandbox.perps_url, options) as slow:
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT)).start()
            slow.open_stream(session, [{"channel": "order"}])
        assert time.monotonic() - started < 0.9, "interrupted before the handshake could end"
        deadline = time.monotonic() + 6
        seen = []
        while time.monotonic() < deadline:
            seen = ws_stream_connections()
            if not seen and time.monotonic() - started > 2.0:  # the handshake over by now
                break
            time.sleep(0.1)
        assert seen == [], f"the interrupted open left a connection open: {seen}"


def test_a_stream_never_closed_is_closed_when_collected(sandbox, monkeypatch):  # noqa: F811
    """Closed on the thread that drops the last reference (its connection leaves the venue),
    freed on a daemon thread of its own: the dropping thread (an asyncio loop's, say) returns
    before perps_stream_free, which can take about 2 s, has finished."""
    import gc

    def connections():
        with urllib.request.urlopen(sandbox.admin_url + "/ws/connections", timeout=5) as resp:
            return json.loads(resp.read())

    # The steps of the collected stream's end, in order, each with the thread it ran on
    # (perps._stream._collected_hook, tests only), and this thread's own "dropped" once the
    # collection has returned and the free has started. The free is held (its "freeing" step
    # blocks) until "dropped", as a slow I/O thread would hold perps_stream_free, so "freed"
    # comes after "dropped" only if the collection did not wait for the free. On this thread
    # the free is not held: a free moved back into __del__ fails on the order, at once.
    steps = []
    dropper = threading.current_thread()
    dropped = threading.Event()

    def record(event):
        steps.append((event, threading.current_thread()))
        if event == "freeing" and threading.current_thread() is not dropper:
            dropped.wait(10)

    monkeypatch.setattr(perps._stream, "_collected_hook", record)
    try:
        with perps.Client(sandbox.base_url, sandbox.perps_url) as client:
            stream = client.open_stream(None, [{"channel": "price", "symbol": "BTC-USD"}])
            next_where(stream, is_status("connected"))
            assert len(connections()) == 1
            # Without automatic collections, the stream is collected here, on this thread,
            # whether its last reference goes with the del or with a cycle gc.collect() breaks.
            gc.disable()
            try:
                del stream
                gc.collect()
            finally:
                gc.enable()
            deadline = time.monotonic() + 10
            while not any(event == "freeing" for event, _ in steps):  # the free's thread has started
                assert time.monotonic() < deadline, f"the collected stream's free never started; steps {steps}"
                time.sleep(0.01)
            steps.append(("dropped", dropper))  # the collection has returned: the free must be held still
            dropped.set()
            while not any(event == "freed" for event, _ in steps):
                assert time.monotonic() < deadline, f"the collected stream was never freed; steps {steps}"
                time.sleep(0.01)
            while connections():
                assert time.monotonic() < deadline, "the collected stream's connection is still open"
                time.sleep(0.05)
            assert [event for event, _ in steps] == ["closed", "freeing", "dropped", "freed"], steps
            (_, closed_on), (_, freeing_on), _, (_, freed_on) = steps
            assert closed_on is dropper, f"closed on {closed_on}, not on the thread that dropped it"
            assert freeing_on is freed_on and freed_on is not dropper, steps
            assert freed_on.name == "perps-stream-free" and freed_on.daemon, freed_on
    finally:
        dropped.set()
