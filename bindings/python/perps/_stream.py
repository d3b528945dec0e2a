"""perps.Stream: one of the venue's two WebSockets (``Client.open_stream``,
``Client.open_order_stream``), read by polling the library (``perps_stream_next``).

    with client.open_stream(session, [{"channel": "depth_book", "symbol": "BTC-USD"},
                                      {"channel": "order"}]) as stream:
        for event in stream:                       # dicts; ends when the stream is closed
            if event["channel"] == "depth_book":
                ...

    async for event in stream:                     # or stream.aiter(); await stream.anext(timeout)
        ...

Events are objects the library builds (the venue's push inside its envelope, order replies,
status changes: README "Streams"), so they come back as ``dict`` (decimals in JSON numbers as
:class:`decimal.Decimal`, never float); :meth:`Stream.next_text` gives the exact JSON text.
``new_order`` / ``cancel_order`` return the library's ``{"request_id", "cl_ord_id"}`` as a dict
too.

Blocking and threads: :meth:`Stream.next` waits in the library with the GIL released; an
event is returned as soon as it arrives. In the main thread, where signal handlers run, the
wait runs on the stream's worker thread (made at the first such wait) while the main thread
waits for it: Ctrl-C (KeyboardInterrupt), or an exception a SIGTERM handler raises, interrupts
``next`` at once and loses nothing — an event the interrupted wait brings is the result of the
next read of the stream, ``next`` or ``anext`` (a ``next(0)`` too, which returns None while that
wait still runs). (An event already queued is taken without the worker. Other threads wait in
the library directly, in slices of 100 ms.) :meth:`Stream.close` may be called from any thread:
it wakes every blocked ``next`` and ``anext`` at once (which then raise ``STREAM_CLOSED``),
waits for the calls in flight to return, then frees the stream. Any call on a closed stream
raises ``STREAM_CLOSED``.

Several readers: one stream may be read from several threads and loops at once, ``next`` and
``anext`` alike, one after another or side by side. At most one library read of a stream runs
at a time, and the event a read brings — one whose caller stopped waiting too (interrupted,
cancelled, out of time) — goes to the next call that reads, whichever way, before any later
event: events come out in the library's order, none lost or given twice (side by side, each
goes to one of the callers). A call that finds a read running waits for it up to its own
timeout, never longer (``perps._reads``).

asyncio: :meth:`Stream.anext` never blocks the event loop: the library call runs on the
stream's own worker thread (one per stream, made at the first ``anext``, so streams never
starve the loop's default executor) in slices of at most 250 ms. Cancelling ``anext`` returns
at once and loses nothing: the slice in progress is kept, and an event it brings is the result
of the next read (``anext`` or ``next``). Only one ``anext`` may wait on a stream at a time
(another raises RuntimeError; ``next`` may read beside it).

The other blocking calls have awaitable variants that run them in the loop's default executor:
``Client.aopen_stream`` / ``Client.aopen_order_stream`` (connect, TLS, auth, subscribe),
:meth:`Stream.anew_order` / :meth:`Stream.acancel_order` (a write; with the client option
``symbol_rules``, a rules read that may take up to ``total_timeout_ms``) and
:meth:`Stream.aclose`. Errors are the sync calls' own. Cancelling one returns at once, but a
call already running cannot be recalled: a cancelled ``aopen_*`` closes the stream its open
still makes (nothing is left connected), and a cancelled ``anew_order`` / ``acancel_order``
has an unknown outcome — the frame may have been written, or may be written after the
cancellation (the venue's replies then come as events as usual). Look such an order up by its
``cl_ord_id``: set it in the order yourself, since the dict naming it is lost with the
cancelled call. An ``aopen_*`` still in flight when its loop is closed without being
cancelled first (``loop.close()`` directly; ``asyncio.run`` cancels and waits) leaves its
stream to be closed when the coroutine is collected.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import threading
import time
from ctypes import byref, c_void_p
from decimal import Decimal
from typing import Any, AsyncIterator, Callable, Dict, Iterator, Optional, TypeVar

from . import JsonObject
from ._calls import _call_str, _Handle, _holding, _json_text, _Owner, _refuse_floats, _take_error, _take_string
from ._errors import Code, PerpsError
from ._native import Disowned, OwnedError, OwnedStream, _lib
from ._reads import _Reads

#: One stream event (README "Streams": ``channel``, ``received_ns``, …).
Event = Dict[str, Any]

_R = TypeVar("_R")
_SLICE_MS = 100  # a direct read off the main thread: how long one library call may block
_ASYNC_SLICE_S = 0.25  # a kept read on the worker (perps._reads): the longest it runs on unwaited for


#: Tests only (tests/test_stream.py sets it; None otherwise, which costs a global read per step
#: of a collected stream's end). Where _collected runs each step is its whole point and
#: shows in no result, so each step tells it, on the thread running it: "closed" once
#: perps_stream_close returned (on the thread that dropped the last reference), then "freeing"
#: and "freed" around perps_stream_free (on the thread that frees). A test holds the free by
#: blocking in "freeing", as a slow I/O thread would.
_collected_hook: Optional[Callable[[str], None]] = None


def _tell_collected(event: str) -> None:
    hook = _collected_hook
    if hook is not None:
        hook(event)


def _collected(stream: c_void_p) -> None:
    """The finaliser of a stream never closed (``OwnedStream``: a closed one's pointer is
    disowned, and collecting it runs nothing): closed at once, on the thread that dropped the
    last reference (its connection leaves the venue), and freed (which may wait up to about
    2 s for the library's I/O thread) on a thread of its own, not on that thread (an asyncio
    loop's, say). No call can be in flight: each holds the pointer."""
    _lib.perps_stream_close(stream)
    _tell_collected("closed")
    address = Disowned(stream.value)
    try:
        threading.Thread(target=_free_collected, args=(address,), name="perps-stream-free", daemon=True).start()
    except Exception:  # interpreter shutdown: no new threads
        _lib.perps_stream_free(address)


def _free_collected(stream: c_void_p) -> None:
    _tell_collected("freeing")
    _lib.perps_stream_free(stream)
    _tell_collected("freed")


OwnedStream._collected = staticmethod(_collected)


def _timeout_ms(timeout: float) -> int:
    """Seconds (int or float, >= 0) as whole milliseconds, rounded up."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"perps: timeout must be a number of seconds or None, not {type(timeout).__name__}")
    if not timeout >= 0 or math.isinf(timeout):  # also refuses NaN
        raise ValueError(f"perps: timeout must be a finite number of seconds >= 0 (or None), not {timeout!r}")
    return math.ceil(timeout * 1000)


def _decode(text: str) -> Event:
    event: Event = json.loads(text, parse_float=Decimal)
    return event


def _next_once(ptr: int, timeout_ms: int) -> Optional[str]:
    """One perps_stream_next: the event's text, or None when the time passed first."""
    err: c_void_p = OwnedError()  # both freed if an interrupt drops them untaken (see _native.Owned)
    result = _lib.perps_stream_next(ptr, timeout_ms, byref(err))
    if not result:
        result.__class__ = Disowned
        if err.value:
            raise _take_error(err)
        err.__class__ = Disowned
        return None
    err.__class__ = Disowned
    return _take_string(result)


def _read_sliced(ptr: int, limit_ms: Optional[int]) -> Optional[str]:
    """perps_stream_next calls of at most _SLICE_MS each until an event comes or ``limit_ms``
    passed (None: no limit)."""
    if limit_ms is not None and limit_ms <= _SLICE_MS:
        return _next_once(ptr, limit_ms)
    deadline = None if limit_ms is None else time.monotonic() + limit_ms / 1000
    while True:
        wait = _SLICE_MS
        if deadline is not None:
            wait = min(_SLICE_MS, max(0, math.ceil((deadline - time.monotonic()) * 1000)))
        text = _next_once(ptr, wait)
        if text is not None or (deadline is not None and time.monotonic() >= deadline):
            return text


def _read_held(handle: _Handle, limit_ms: Optional[int]) -> Optional[str]:
    """One read of the library in this thread, the stream held open (STREAM_CLOSED once
    closed): the ``read_here`` of the stream's :class:`perps._reads._Reads`. Given the handle,
    not the Stream, so that a read running on the worker does not keep the Stream alive."""
    return _holding((handle,), lambda ptr: _read_sliced(ptr, limit_ms))


class Stream(_Owner):
    """The market + account stream or the order stream. Open one with
    :meth:`Client.open_stream` or :meth:`Client.open_order_stream`; close it with
    :meth:`close` (or ``with`` / ``async with``). Iterating yields events until it is closed.

    Thread-safe: ``next``, ``anext``, ``new_order``, ``cancel_order`` and ``close`` may run on
    different threads (and loops) at once; events come out in the library's order whichever
    way they are read (module docs). The stream keeps what it needs of its client and session:
    they may be closed first."""

    _reads: _Reads

    def __init__(self) -> None:
        raise TypeError("perps: open a stream with Client.open_stream or Client.open_order_stream")

    @classmethod
    def _adopt(cls, ptr: c_void_p) -> Stream:
        self = cls.__new__(cls)
        self._handle = _Handle(ptr, _lib.perps_stream_free, "stream", Code.STREAM_CLOSED)
        self._reads = _Reads(functools.partial(_read_held, self._handle))  # every read goes through it
        return self

    @property
    def _closed(self) -> bool:
        """close() has run to its end (the stream freed, no read starts any more)."""
        return self._reads._closed

    def _holding(self, body: Callable[[Any], _R]) -> _R:
        """``body(ptr)`` with the stream held open (:func:`perps._calls._holding`);
        STREAM_CLOSED once closed."""
        handle = self._handle
        if handle is None:
            raise PerpsError(Code.STREAM_CLOSED, "the stream is closed")
        return _holding((handle,), body)

    # -- events ------------------------------------------------------------------------

    def next_text(self, timeout: Optional[float] = None) -> Optional[str]:
        """The next event as the library's exact JSON text, waiting up to ``timeout``
        seconds (0: do not wait; None: until an event comes or the stream is closed). None
        when the time passes first. Raises ``STREAM_CLOSED`` after :meth:`close` (also when
        it wakes this call) or once a stream that ended (its ``failed`` event) has given all
        its events."""
        limit_ms = None if timeout is None else _timeout_ms(timeout)
        main = threading.current_thread() is threading.main_thread()
        return self._reads.next(limit_ms, main, _timeout_ms(_ASYNC_SLICE_S))

    def next(self, timeout: Optional[float] = None) -> Optional[Event]:
        """The next event as a dict (see :meth:`next_text` for the waiting); None when
        ``timeout`` seconds pass first."""
        text = self.next_text(timeout)
        return None if text is None else _decode(text)

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        """Blocks until the next event; the iteration ends (StopIteration) when the stream is
        closed or has ended (after its ``failed`` status event)."""
        try:
            event = self.next()
        except PerpsError as e:
            if e.code == Code.STREAM_CLOSED:
                raise StopIteration from None
            raise
        assert event is not None  # no timeout: next() waited for one
        return event

    # -- order entry (order stream only) -----------------------------------------------

    def new_order(self, order: JsonObject) -> Dict[str, Any]:
        """Validate the order (JSON text, or a dict whose ``qty``/``price`` may be Decimals) as
        :meth:`Client.new_order` does (the symbol rules too, with the client option
        ``symbol_rules``), sign it and write the ``order:new`` frame. Returns
        ``{"request_id", "cl_ord_id"}`` once written, without waiting for the venue: its
        replies come as ``order_response`` events with that ``request_id`` (the "accepted"
        ack with ``final`` False, then the outcome with ``final`` True). Never retried:
        any error with ``may_have_reached_venue`` (``TRANSPORT``, ``TIMEOUT`` when the venue
        does not read the frame within ``read_timeout_ms``, ``STREAM_CLOSED`` when
        :meth:`close` cut a begun write short) means the write may have left: look the order
        up by its ``cl_ord_id`` before sending it again."""
        return self._send(_lib.perps_stream_new_order, _json_text("order", order))

    def cancel_order(self, params: JsonObject) -> Dict[str, Any]:
        """``order:cancel`` with ``{"order_id": int}`` and/or ``{"cl_ord_id": str}`` (a dict or
        JSON text; a float is refused). Returns ``{"request_id", …}`` once the frame is
        written; replies as for :meth:`new_order`."""
        _refuse_floats("params", params)
        return self._send(_lib.perps_stream_cancel_order, _json_text("params", params))

    def _send(self, export: Any, text: str) -> Dict[str, Any]:
        """Pass one JSON text to an order-stream export; its JSON answer, decoded."""
        answer: Dict[str, Any] = json.loads(self._holding(lambda ptr: _call_str(export, ptr, text)))
        return answer

    async def anew_order(self, order: JsonObject) -> Dict[str, Any]:
        """:meth:`new_order` for asyncio: the same order, result and errors, without blocking
        the event loop (a rules read with ``symbol_rules`` on can take up to the client's
        ``total_timeout_ms``). The order is serialised at the call: a dict changed while the
        call waits changes nothing. Calls awaited one after another are sent in that order;
        calls awaited at once (from several tasks) run side by side, in no set order.

        Cancelled (``task.cancel()``, ``asyncio.wait_for``), it raises CancelledError at once,
        but the call cannot be recalled: before the executor started it, nothing is sent;
        once started, it goes on, and the order may be sent after the cancellation. Which
        happened cannot be told here, so the outcome is unknown: look the order up by its
        ``cl_ord_id`` (:meth:`Client.query_order`, or the ``order_response`` / account events
        that name it) before sending it again. Give the order its own ``cl_ord_id`` for that:
        the dict that would name a generated one is lost with the cancelled call."""
        return await self._asend(_lib.perps_stream_new_order, _json_text("order", order))

    async def acancel_order(self, params: JsonObject) -> Dict[str, Any]:
        """:meth:`cancel_order` for asyncio (same parameters, result and errors). Cancelled,
        as :meth:`anew_order`: the cancel may still be sent; its replies come as events."""
        _refuse_floats("params", params)
        return await self._asend(_lib.perps_stream_cancel_order, _json_text("params", params))

    async def _asend(self, export: Any, text: str) -> Dict[str, Any]:
        # The loop's default executor, not the stream's own worker: that worker runs anext's
        # slices (up to 250 ms each) back to back while a reader waits, so an order queued
        # behind one would wait for it. The default executor is shared, though (its threads,
        # min(32, CPUs + 4), also run aopen_*, aclose, the loop's name look-ups and the
        # caller's to_thread): an order may wait there for a free thread — a program that
        # opens many streams at once may give the loop an executor of its own size. Not shielded: a call the executor has not started when the task is
        # cancelled is dropped unsent; one already running goes on, its answer dropped (a
        # dict: nothing to free; an error is not logged).
        return await asyncio.get_running_loop().run_in_executor(None, self._send, export, text)

    # -- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the stream from any thread: a ``next`` blocked in another thread returns at
        once (``STREAM_CLOSED``); then wait for the calls in flight and free the stream (the
        library waits at most about 2 s for its I/O thread). Idempotent; after a close an
        exception interrupted, the next one frees the stream."""
        handle = self._handle
        if handle is None:
            return
        try:
            # perps_stream_close: wakes the calls blocked in perps_stream_next, ends the I/O
            # thread. STREAM_CLOSED once the handle's pointer is taken (closed already).
            self._holding(_lib.perps_stream_close)
        except PerpsError:
            pass
        handle.close()  # waits for the calls in flight (returning at once now), then frees: once
        self._reads.close()  # the worker's read in progress has returned STREAM_CLOSED

    # -- asyncio -----------------------------------------------------------------------

    async def anext(self, timeout: Optional[float] = None) -> Optional[Event]:
        """:meth:`next` for asyncio: the next event, or None when ``timeout`` seconds pass
        first (None: wait until one comes). The event loop never blocks. Cancelling it
        returns at once; an event that arrives meanwhile goes to the next read (``anext`` or
        ``next``). Raises ``STREAM_CLOSED`` after :meth:`close`; RuntimeError when another
        ``anext`` is already waiting on this stream."""
        if timeout is not None:
            _timeout_ms(timeout)  # checks it
        text = await self._reads.anext(timeout, _timeout_ms(_ASYNC_SLICE_S))
        return None if text is None else _decode(text)

    async def aiter(self) -> AsyncIterator[Event]:
        """``async for event in stream.aiter():`` (or ``async for event in stream:``) — events
        until the stream is closed or has ended."""
        while True:
            try:
                event = await self.anext()
            except PerpsError as e:
                if e.code == Code.STREAM_CLOSED:
                    return
                raise
            if event is not None:
                yield event

    def __aiter__(self) -> AsyncIterator[Event]:
        return self.aiter()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop (it runs in the loop's executor).
        Cancelled, it raises CancelledError at once and the close still completes there."""
        # Shielded: unshielded, a cancel while the close waits in the executor's queue would
        # drop it, and the stream would stay open until collected.
        await asyncio.shield(asyncio.get_running_loop().run_in_executor(None, self.close))

    async def __aenter__(self) -> Stream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# -- opening from asyncio (Client.aopen_stream, Client.aopen_order_stream) --------------------


class _Handover:
    """A stream open running off the event loop, and who gets the stream: the coroutine that
    awaits it, or — once that has given up (cancelled) — nobody, and then it is closed, on
    whichever side finds it: the open's thread when it finishes after the give-up, or the
    coroutine when the open had finished and only its result was still on the way."""

    __slots__ = ("_lock", "_abandoned", "_opened")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._abandoned = False
        self._opened: Optional[Stream] = None  # opened and handed over, not yet taken

    def run(self, open_stream: Callable[[], Stream]) -> Optional[Stream]:
        """On the executor's thread: the open, unless given up before it began."""
        if self._abandoned:
            return None  # no connection made at all
        stream = open_stream()
        with self._lock:
            if not self._abandoned:
                self._opened = stream
                return stream
        stream.close()  # given up while it opened: closed here, off the loop
        return None

    def abandon(self) -> Optional[Stream]:
        """On the loop, when the awaiting coroutine will not return the stream: from now on
        the open closes what it makes. The stream when it was already made (the caller must
        close it), else None."""
        with self._lock:
            self._abandoned = True
            stream, self._opened = self._opened, None
        return stream


def _close_off_loop(stream: Stream) -> None:
    """``stream.close()`` (up to about 2 s) on a thread of its own, not the event loop's; a
    non-daemon one, so an interpreter ending meanwhile waits for the close."""
    try:
        threading.Thread(target=stream.close, name="perps-stream-close").start()
    except Exception:  # interpreter shutdown: no new threads
        stream.close()


async def _aopened(open_stream: Callable[[], Stream]) -> Stream:
    """``open_stream()`` (a blocking open: connect, TLS, auth, subscribe) for asyncio: run in
    the loop's default executor (the stream has no worker of its own yet, and ``asyncio.run``
    waits for that executor as it ends, so an open still running then is closed, not cut
    off), the loop running meanwhile. Its errors are raised as they are.

    The awaiting task cancelled (``asyncio.wait_for`` too), CancelledError comes at once and
    no stream is left open (:class:`_Handover`): an open not yet started never starts (the
    executor drops it, or ``run`` sees the give-up), one in progress closes its stream as it
    returns, and one that had just returned has its stream closed on a thread here. Not
    shielded, so that cancelling the await cancels an open the executor has not started."""
    handover = _Handover()
    job = asyncio.get_running_loop().run_in_executor(None, handover.run, open_stream)
    try:
        stream = await job
    except BaseException:  # cancelled, or the open failed (then nothing was opened)
        opened = handover.abandon()
        if opened is not None:
            _close_off_loop(opened)
        raise
    assert stream is not None  # None only once abandoned, and then the await raised
    return stream
