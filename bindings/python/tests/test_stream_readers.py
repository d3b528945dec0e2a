"""One stream read from several places at once: ``next`` on the main thread or another one,
``anext`` on an event loop, one after another or side by side. A read the caller stopped
waiting for (an ``anext`` cancelled, a main-thread ``next`` interrupted by a signal, a call
whose timeout passed first) goes on, and the event it brings is handed out before any later
event, whichever way the next read comes: events come out in the library's order, none lost
and none twice. No call waits past its own timeout for such a read, and ``close()`` still wakes
every reader at once.

The events are an order stream's replies to one order: the "accepted" ack (``final`` False),
then the outcome (``final`` True). Each test waits for the library to have handed the ack to
the read left running (``LibraryReads`` sees every event ``perps_stream_next`` returns), so
that read is known to hold it before the other way reads.
"""

import asyncio
import concurrent.futures
import json
import linecache
import os
import sys
import threading
import time

import pytest

import perps
from test_flow import sandbox  # noqa: F401  (the fixture signed_in needs)
from test_stream import is_status, next_interrupted_then, next_where, response_to, signed_in  # noqa: F401
from test_trading import far_bid, limit_buy

_PACKAGE = os.path.dirname(os.path.abspath(perps.__file__))


class LibraryReads:
    """Every event the library returns to the binding (``perps._stream._next_once``, the one
    place the binding calls ``perps_stream_next``), in order, on whatever thread."""

    def __init__(self, monkeypatch):
        self.events = []
        self._changed = threading.Condition()
        real = perps._stream._next_once

        def recording(ptr, timeout_ms):
            text = real(ptr, timeout_ms)
            if text is not None:
                with self._changed:
                    self.events.append(json.loads(text))
                    self._changed.notify_all()
            return text

        monkeypatch.setattr(perps._stream, "_next_once", recording)

    def wait_for(self, accept, seconds=10.0):
        with self._changed:
            found = self._changed.wait_for(lambda: any(accept(e) for e in self.events), seconds)
        assert found, f"the library returned no such event within {seconds} s: {self.events}"


def quiet_order_stream(client, session):
    """An order stream, connected, with what the connection brought first read."""
    orders = client.open_order_stream(session)
    next_where(orders, is_status("connected"))
    while orders.next(0.3) is not None:
        pass
    return orders


def on_thread(call, *args):
    """``call(*args)`` on a thread of its own (not the main thread): its result, or raises
    what it raised."""
    outcome = {}

    def run():
        try:
            outcome["result"] = call(*args)
        except BaseException as e:  # noqa: BLE001  (raised below)
            outcome["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), f"{call} still running after 60 s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def test_the_event_a_cancelled_anext_left_comes_before_later_ones_read_by_next(signed_in, monkeypatch):
    # anext waits for the ack in a read on the stream's worker; the loop is held until the
    # library has returned the ack to that read, then the anext is cancelled: the read keeps
    # the ack. next() on another thread must give that ack, not the outcome after it (it once
    # read the library directly, past the kept read), and the anext after it the outcome.
    _, client, session = signed_in
    bid = far_bid(client)
    with quiet_order_stream(client, session) as orders:
        reads = LibraryReads(monkeypatch)

        async def main():
            loop = asyncio.get_running_loop()
            waiting = asyncio.create_task(orders.anext())
            await asyncio.sleep(0)  # the task starts, and waits for the stream's worker
            sent = orders.new_order(limit_buy(bid))
            reads.wait_for(response_to(sent["request_id"], False))  # the loop held: the task cannot take it
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            first = await loop.run_in_executor(None, orders.next, 5)
            second = await orders.anext(5)
            return sent, first, second

        sent, first, second = asyncio.run(main())
        assert first is not None and response_to(sent["request_id"], False)(first), f"next() gave {first}, not the ack"
        assert second is not None and response_to(sent["request_id"], True)(second), f"anext() gave {second}, not the outcome"


def test_the_event_an_interrupted_next_left_comes_before_later_ones_read_by_anext(signed_in, monkeypatch):
    # A SIGINT interrupts next() on the main thread; its read goes on (slices made 10 s long,
    # so that the ack comes within it however slow the machine) and takes the ack of the order
    # placed just after the signal. anext must give that ack, waiting for that read if need be
    # (it once read the library past the kept read, and gave the outcome first), and next()
    # after it the outcome. (Were the signal to land before the read began, nothing would be
    # kept and anext would read the ack itself.)
    monkeypatch.setattr(perps._stream, "_ASYNC_SLICE_S", 10.0)
    _, client, session = signed_in
    assert threading.current_thread() is threading.main_thread()
    bid = far_bid(client)
    with quiet_order_stream(client, session) as orders:
        sent = {}
        next_interrupted_then(orders, lambda: sent.update(orders.new_order(limit_buy(bid))))
        first = asyncio.run(orders.anext(5))
        second = orders.next(5)
        assert first is not None and response_to(sent["request_id"], False)(first), f"anext() gave {first}, not the ack"
        assert second is not None and response_to(sent["request_id"], True)(second), f"next() gave {second}, not the outcome"


def test_no_call_waits_past_its_timeout_for_a_read_left_running(signed_in, monkeypatch):
    # The interrupted next()'s read goes on for 30 s (slices made that long), as nothing comes.
    # Calls asked for 0.01 s must return None within 2 s, not wait for that read (next(0.01)
    # on the main thread once waited for it to end; anext(0.01) queued its own read behind it
    # on the stream's worker). The read stays the stream's: the event it then takes is the
    # next call's.
    monkeypatch.setattr(perps._stream, "_ASYNC_SLICE_S", 30.0)
    _, client, session = signed_in
    bid = far_bid(client)
    with quiet_order_stream(client, session) as orders:
        reads = LibraryReads(monkeypatch)
        next_interrupted_then(orders, lambda: None)
        for name, call in [
            ("next(0.01)", lambda: orders.next(0.01)),
            ("next(0.01) on another thread", lambda: on_thread(orders.next, 0.01)),
            ("anext(0.01)", lambda: asyncio.run(orders.anext(0.01))),
            ("next(0)", lambda: orders.next(0)),
        ]:
            started = time.monotonic()
            assert call() is None, name
            took = time.monotonic() - started
            assert took < 2.0, f"{name} took {took:.1f} s: it waited for the read left running"
        assert reads.events == []
        sent = orders.new_order(limit_buy(bid))  # its ack ends the read left running, which keeps it
        assert response_to(sent["request_id"], False)(on_thread(orders.next, 5))
        assert response_to(sent["request_id"], True)(orders.next(5))


def test_close_wakes_every_reader_whichever_read_it_waits_for(signed_in, monkeypatch):
    # A read left running for 30 s (an interrupted next()'s); next() on a thread, anext on a
    # loop on another, and next() on the main thread each wait for it. close() from yet another
    # thread wakes them all: each ends with STREAM_CLOSED within 5 s, not when the read would
    # have ended.
    monkeypatch.setattr(perps._stream, "_ASYNC_SLICE_S", 30.0)
    _, client, session = signed_in
    orders = quiet_order_stream(client, session)
    try:
        next_interrupted_then(orders, lambda: None)
        ended = {}

        def read(name, call):
            try:
                call()
                ended[name] = "returned"
            except perps.PerpsError as e:
                ended[name] = e.code
            ended[name + " at"] = time.monotonic()

        readers = [
            threading.Thread(target=read, args=("next", orders.next)),
            threading.Thread(target=read, args=("anext", lambda: asyncio.run(orders.anext()))),
        ]
        for reader in readers:
            reader.start()
        closing = {}

        def close():
            closing["at"] = time.monotonic()
            orders.close()

        closer = threading.Timer(0.3, close)
        closer.start()
        read("main next", orders.next)
        for reader in readers:
            reader.join(40)
        closer.join()
        for name in ("next", "anext", "main next"):
            assert ended.get(name) is perps.Code.STREAM_CLOSED, ended
            assert ended[name + " at"] - closing["at"] < 5.0, f"{name} was not woken by close(): {ended}"
    finally:
        orders.close()


def test_two_anext_at_once_on_two_loops_one_waits_and_the_other_is_refused(signed_in):
    # anext on a loop in thread A is held just after it found no other anext waiting, before it
    # marks itself waiting, until anext(0) on a loop in thread B has run (or 2 s passed: B is
    # held out meanwhile). B must be refused (RuntimeError) while A waits: the check and the
    # mark are one step. Before, B passed the same check and read beside A. A then gets the
    # ack of an order placed once B is done.
    _, client, session = signed_in
    bid = far_bid(client)
    with quiet_order_stream(client, session) as orders:
        a_held, b_done = threading.Event(), threading.Event()
        outcome = {}

        def hold_after_the_check(frame, event, arg):
            if event == "call" and frame.f_code.co_name == "anext" and frame.f_code.co_filename.startswith(_PACKAGE):
                return hold_after_the_check
            if event == "line":
                line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
                if "self._awaiting =" in line and "True" in line:
                    a_held.set()
                    b_done.wait(2.0)
                    sys.settrace(None)
                    return None
            return hold_after_the_check if event != "call" else None

        def a():
            sys.settrace(hold_after_the_check)
            try:
                outcome["a"] = asyncio.run(orders.anext(30.0))
            except BaseException as e:  # noqa: BLE001  (asserted below)
                outcome["a"] = e
            finally:
                sys.settrace(None)

        def b():
            assert a_held.wait(10)
            try:
                outcome["b"] = asyncio.run(orders.anext(0))
            except BaseException as e:  # noqa: BLE001  (asserted below)
                outcome["b"] = e
            b_done.set()

        threads = [threading.Thread(target=a), threading.Thread(target=b)]
        for thread in threads:
            thread.start()
        threads[1].join(20)
        sent = orders.new_order(limit_buy(bid))
        threads[0].join(20)
        assert a_held.is_set(), "thread A's anext never reached its check"
        assert isinstance(outcome.get("a"), dict) and response_to(sent["request_id"], False)(outcome["a"]), outcome
        assert isinstance(outcome.get("b"), RuntimeError), f"the second anext was not refused: {outcome}"


def test_an_anext_waiting_behind_a_long_read_hooks_it_once_not_at_every_wake_up():
    # next() on another thread, without a timeout, reads directly for as long as nothing
    # comes (hours on a quiet order stream). anext calls on a loop wait behind that read in
    # steps of _WAKE_S, and each step once added a done-callback to it (holding a loop
    # future), freed only when the read ends: 4 a second for as long as both wait. The read
    # must be hooked once, whatever the steps and calls; its end still wakes the loop at once.
    # (The library read is a stand-in: no venue needed.)
    from perps._reads import _Reads

    release = threading.Event()

    def read_here(wait_ms):
        release.wait(60)
        return '{"n":1}'

    reads = _Reads(read_here)
    outcome = {}
    reader = threading.Thread(target=lambda: outcome.update(text=reads.next(None, False, 250)))
    reader.start()
    for _ in range(600):
        if reads._read is not None:
            break
        time.sleep(0.01)
    running = reads._read
    assert running is not None, "next() on the thread claimed no read"
    hooks = []
    real = running.add_done_callback
    running.add_done_callback = lambda fn: (hooks.append(fn), real(fn))
    for _ in range(3):
        assert asyncio.run(reads.anext(0.6, 250)) is None
    assert len(hooks) == 1, f"{len(hooks)} callbacks added to the one read waited for"

    async def woken_by_its_end():
        waiting = asyncio.create_task(reads.anext(30, 250))
        await asyncio.sleep(0.3)  # waiting behind the thread's read
        release.set()
        return await waiting

    assert asyncio.run(woken_by_its_end()) == '{"n":1}'
    reader.join(60)
    assert outcome["text"] == '{"n":1}'


def test_an_event_a_read_left_running_took_is_not_handed_out_after_close():
    # A cancelled anext leaves its read running on the worker; the read takes an event that no
    # caller is waiting for, and the stream is closed. Any call on a closed stream raises
    # STREAM_CLOSED (as the library's perps_stream_next does: the events it held are dropped);
    # next() and anext() once gave that event instead. (The library read is a stand-in.)
    from perps._reads import _Reads

    comes, closed = threading.Event(), threading.Event()

    def read_here(wait_ms):
        comes.wait(60)
        if closed.is_set():  # the library's read of a closed stream
            raise perps.PerpsError(perps.Code.STREAM_CLOSED, "the stream is closed")
        return '{"n":1}'

    reads = _Reads(read_here)

    async def cancelled_anext():
        waiting = asyncio.create_task(reads.anext(None, 250))
        for _ in range(600):
            if reads._read is not None:
                break
            await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting

    asyncio.run(cancelled_anext())
    left = reads._read
    assert left is not None and not left.done(), "the cancelled anext left no read running"
    comes.set()
    concurrent.futures.wait((left,), 60)
    assert left.result() == '{"n":1}'
    closed.set()  # Stream.close(): the library's close, then the reads'
    reads.close()
    for name, call in [
        ("next()", lambda: reads.next(None, False, 250)),
        ("next() on the main thread", lambda: reads.next(0, True, 250)),
        ("anext()", lambda: asyncio.run(reads.anext(None, 250))),
    ]:
        with pytest.raises(perps.PerpsError) as raised:
            call()
        assert raised.value.code is perps.Code.STREAM_CLOSED, name
