"""The reads of one stream (``perps_stream_next``) from every place at once: ``next`` on the
main thread or any other, ``anext`` on any event loop, one after another or side by side.
What a caller sees is in ``perps._stream``'s docstring; how it is kept:

- At most one library read of a stream runs at a time: the stream's *read*, a future in
  ``_Reads._read``, put there under the lock by the caller that found none (the caller
  *claims* it). A caller that finds a read running waits for it, never reads beside it.
- A read runs either in its caller's thread (a *direct* read: its caller takes its event
  and gives the read up as it returns) or on the stream's worker thread (a *kept* read: the
  main thread's, whose wait a signal's exception may interrupt, and asyncio's, whose wait a
  cancel may end). A kept read's result stays in ``_read`` until a caller takes it, whichever
  caller, whichever way it reads (or ``close()`` drops it); only then may another read start. So the event a read
  brings comes out before any later one: none overtakes another, none is lost or handed out
  twice.
- The lock is never held across a wait: a caller waits for a read by its future, up to its own
  timeout (a read left running stays the stream's), in steps of at most ``_WAKE_S``. A
  ``close()`` wakes the running read in the library, and its end wakes every waiter.

An exception a signal handler raises (KeyboardInterrupt) can come at any point of this code
where CPython runs handlers (a function's entry, a backward jump, the end of a call;
tests/test_interrupts.py): each change to ``_read`` is a plain store after the calls that
could be interrupted, and a claimed direct read is given up in a ``finally`` whose first
statement frees the slot, so none leaves the slot claimed by a read that no longer runs.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
import time
import weakref
from typing import Any, Callable, Optional, Tuple

from ._errors import Code, PerpsError

#: How often at least a caller waiting for a read looks at the slot again. A read's end wakes
#: its waiters at once; this bounds the wait should that wake-up itself be cut short (a direct
#: read's caller interrupted between freeing the slot and completing its future).
_WAKE_S = 0.25

_FREE, _BUSY, _TAKEN = "free", "busy", "taken"

_ReadFuture = concurrent.futures.Future  # of Optional[str]: the event's text, or None


class _Reads:
    """The reads of one stream. ``read_here(wait_ms)`` is the library read itself, in the
    calling thread: the event's text, or None once ``wait_ms`` passed (None: no limit);
    raises ``PerpsError``. It must not refer to the Stream (a worker's read would keep it
    alive, and a cycle would delay its finaliser)."""

    __slots__ = ("_read_here", "_lock", "_read", "_worker", "_closed", "_awaiting", "_wake")

    def __init__(self, read_here: Callable[[Optional[int]], Optional[str]]) -> None:
        self._read_here = read_here
        self._lock = threading.Lock()  # guards the fields below; never held across a wait
        self._read: Optional[_ReadFuture] = None  # the read running, or done and not yet taken
        self._worker: Optional[concurrent.futures.ThreadPoolExecutor] = None
        self._closed = False
        self._awaiting = False  # an anext is running (one at a time)
        self._wake = _LoopWake()  # wakes that anext when the read it waits for ends

    # -- under the lock ----------------------------------------------------------------

    def _turn(self) -> Tuple[str, Any]:
        """One look at the slot, holding the lock: (_FREE, None) when no read runs (the caller
        may claim it); (_BUSY, read) while one runs; (_TAKEN, text) once one is done, taken
        here (text None: it found nothing), or its error raised. The slot is freed only after
        the result is in hand: an interrupt before leaves the result for the next caller.
        Once closed, what a read left is dropped, as the library drops the events it held:
        any call on a closed stream raises STREAM_CLOSED."""
        read = self._read
        if read is None:
            return _FREE, None
        if not read.done():
            return _BUSY, read
        if self._closed:
            self._read = None
            raise PerpsError(Code.STREAM_CLOSED, "the stream is closed")
        if read.cancelled():  # dropped before the worker began it (_start): it read nothing
            self._read = None
            return _TAKEN, None
        error = read.exception()
        if error is not None:
            self._read = None
            raise error
        text = read.result()
        self._read = None
        return _TAKEN, text

    def _start(self, wait_ms: int) -> _ReadFuture:
        """Claim the slot (free: see _turn) for a kept read of up to ``wait_ms`` on the
        stream's worker (one thread per stream, made at its first kept read, so that streams
        never starve an event loop's default executor)."""
        if self._closed:
            raise PerpsError(Code.STREAM_CLOSED, "the stream is closed")
        if self._worker is None:
            self._worker = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="perps-stream")
        read: _ReadFuture = concurrent.futures.Future()
        self._read = read  # claimed before it is submitted: whatever interrupts, it is in the slot
        try:
            self._worker.submit(self._run, read, wait_ms)
        except BaseException:
            read.cancel()  # not begun: the worker drops it, and the slot takes it as empty
            raise
        return read

    def _run(self, read: _ReadFuture, wait_ms: int) -> None:
        """On the worker: the kept read, its result left in its future for whoever takes it."""
        if not read.set_running_or_notify_cancel():
            return
        try:
            text = self._read_here(wait_ms)
        except BaseException as e:
            read.set_exception(e)
        else:
            read.set_result(text)

    # -- the two ways to read ----------------------------------------------------------

    def next(self, limit_ms: Optional[int], main: bool, kept_ms: int) -> Optional[str]:
        """The next event's text, waiting up to ``limit_ms`` (None: no limit); None when that
        time passes first. Off the main thread, a direct read. On the main thread, where
        signal handlers run, a direct read that does not wait (an event already queued is
        taken without the worker's round trip), then kept reads of up to ``kept_ms`` on the
        worker while this thread waits for them: an exception a handler raises interrupts
        only that wait, and the read goes on, its event the next caller's."""
        deadline = None if limit_ms is None else time.monotonic() + limit_ms / 1000
        looked = False  # the main thread has read directly (without waiting) once
        own = None  # the last kept read this call started
        while True:
            left = None if deadline is None else max(0, math.ceil((deadline - time.monotonic()) * 1000))
            mine: Optional[_ReadFuture] = None  # the direct read this turn claimed
            try:
                with self._lock:
                    state, value = self._turn()
                    if state is _FREE:
                        if main and looked and left != 0:
                            value = own = self._start(kept_ms if left is None else min(kept_ms, left))
                            state = _BUSY
                        else:
                            mine = concurrent.futures.Future()
                            self._read = mine
                if mine is not None:
                    text = self._read_here(0 if main else left)
                    if text is not None or left == 0:
                        return text
                    looked = True
                    continue
            finally:
                if mine is not None:
                    if self._read is mine:
                        self._read = None  # first: the slot is free whatever interrupts below
                    mine.set_result(None)  # wakes the callers waiting for it
            if state is _TAKEN:
                if value is not None:
                    return value
                continue  # that read found nothing: look again (or give up, time passed)
            if value is not own and left == 0:
                return None  # another caller's read runs: it keeps what it brings
            # This call's own kept read ends within its time (it was sized to it): waited for.
            _wait(value, None if value is own else left)

    async def anext(self, timeout: Optional[float], kept_ms: int) -> Optional[str]:
        """``next`` for asyncio: every read a kept read on the worker (the loop never
        blocks), of up to ``kept_ms`` or the time left; cancelled, the read goes on, its event
        the next caller's. RuntimeError when another anext is running on this stream."""
        claimed = False
        try:
            with self._lock:  # the check and the mark are one step
                if self._awaiting:
                    raise RuntimeError("perps: anext() called while another coroutine is already waiting on this stream")
                self._awaiting = claimed = True
            loop = asyncio.get_running_loop()
            deadline = None if timeout is None else loop.time() + timeout
            own = None
            while True:
                left = None if deadline is None else max(0.0, deadline - loop.time())
                with self._lock:
                    state, value = self._turn()
                    if state is _FREE:
                        value = own = self._start(kept_ms if left is None else min(kept_ms, math.ceil(left * 1000)))
                        state = _BUSY
                if state is _TAKEN:
                    if value is not None:
                        return value  # type: ignore[no-any-return]
                    if left == 0 and own is not None:
                        return None
                    continue
                if value is not own and left == 0:
                    return None
                await _woken(self._wake, value, None if value is own else left)
        finally:
            if claimed:
                self._awaiting = False

    def close(self) -> None:
        """After the library's close (which ends the running read at once): no read starts
        on the worker any more, and the worker ends once its read has."""
        with self._lock:
            self._closed = True
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.shutdown(wait=False)


def _wait(read: _ReadFuture, left_ms: Optional[int]) -> None:
    """Wait (this thread) until ``read`` is done, or ``left_ms`` passed, or _WAKE_S."""
    seconds = _WAKE_S if left_ms is None else min(_WAKE_S, left_ms / 1000)
    concurrent.futures.wait((read,), seconds)


async def _woken(wake: _LoopWake, read: _ReadFuture, left: Optional[float]) -> None:
    """Wait (the loop running) until ``read`` is done, or ``left`` seconds passed, or
    _WAKE_S. Not through ``asyncio.wrap_future``: cancelling what it makes cancels the read,
    and once the loop has closed, a read ending later would report a failed callback."""
    woken = wake.arm(read, asyncio.get_running_loop())
    try:
        await asyncio.wait((woken,), timeout=_WAKE_S if left is None else min(_WAKE_S, left))
    finally:
        wake.disarm(woken)


class _LoopWake:
    """Wakes the anext waiting on its loop (one at a time per stream) when the read in the
    slot ends, with one done-callback per read however often it is waited for. A read can run
    for as long as its caller's timeout (a direct ``next()`` on another thread: without
    limit), and a ``concurrent.futures.Future`` cannot take a callback back: one added at each
    wait (every _WAKE_S, every anext call) would pile up on it, each holding a loop future,
    until the read ends. Holds no read (a weak reference) and no loop once the wait is over."""

    __slots__ = ("_lock", "_hooked", "_waiting")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._hooked: Optional[weakref.ref[_ReadFuture]] = None  # the read given the callback
        self._waiting: Optional[Tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = None

    def arm(self, read: _ReadFuture, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future of ``loop`` done once ``read`` is (or sooner: a wake-up may be early)."""
        woken: asyncio.Future[None] = loop.create_future()
        with self._lock:
            self._waiting = (loop, woken)
            hooked = self._hooked is not None and self._hooked() is read
        if not hooked:
            read.add_done_callback(self._ended)  # called at once if it is done already
            # Recorded once added: an interrupt between the two adds it again at worst.
            self._hooked = weakref.ref(read)
        elif read.done():  # it ended since it was hooked, maybe before this wait was armed
            woken.set_result(None)
        return woken

    def disarm(self, woken: asyncio.Future[None]) -> None:
        with self._lock:
            if self._waiting is not None and self._waiting[1] is woken:
                self._waiting = None

    def _ended(self, _read: _ReadFuture) -> None:
        """A read ended (on the thread that ended it): wake the anext waiting, if any."""
        with self._lock:
            waiting, self._waiting = self._waiting, None
        if waiting is None:
            return
        loop, woken = waiting
        try:
            loop.call_soon_threadsafe(_settle, woken)
        except RuntimeError:  # the loop has closed: nothing waits on it any more
            pass


def _settle(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)
