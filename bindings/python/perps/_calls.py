"""Conversions of Python arguments, calls into the library and their results, and the
lifetime of the library's handles, shared by ``perps`` and ``perps._stream``."""

from __future__ import annotations

import concurrent.futures
import decimal
import json
import threading
import weakref
import _thread
from collections.abc import Mapping
from ctypes import byref, c_char_p, c_void_p
from typing import Any, Callable, List, Literal, Optional, Set, Tuple, TypeVar

from ._errors import Code, PerpsError
from ._native import Disowned, OwnedError, _lib


# ------------------------------------------------------------------------------------------
# Conversions
# ------------------------------------------------------------------------------------------


def _arg(name: str, value: Any, optional: bool = False) -> Any:
    """A str argument as NUL-terminated UTF-8 bytes (None → NULL when optional). Typed Any:
    the methods rebind their ``str`` parameters to the ``bytes`` these helpers return."""
    if value is None and optional:
        return None
    if isinstance(value, str):
        value = value.encode("utf-8")
    elif not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"perps: {name} must be str, not {type(value).__name__}")
    value = bytes(value)
    if b"\0" in value:
        raise PerpsError(Code.INVALID_ARGUMENT, f"{name} contains a NUL character")
    return value


def _i64(name: str, value: Any) -> int:
    """An int64_t argument: ctypes would silently wrap a larger int, so refuse it."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"perps: {name} must be int, not {type(value).__name__}")
    if not -(2**63) <= value < 2**63:
        raise PerpsError(Code.INVALID_ARGUMENT, f"{name} {value} does not fit in 64 bits")
    return value


def _decimal_text(name: str, value: decimal.Decimal) -> str:
    """A Decimal as the venue's decimal string: plain notation, never an exponent
    (``Decimal("1E+3")`` → ``"1000"``, ``Decimal("1E-8")`` → ``"0.00000001"``), digits kept as
    given (``Decimal("0.010")`` → ``"0.010"``). NaN and infinities are refused. Every place
    that takes a decimal string converts a Decimal through here."""
    if not value.is_finite():
        raise PerpsError(Code.INVALID_ARGUMENT, f"{name} is {value}, not a finite decimal")
    return format(value, "f")


def _decimal_arg(name: str, value: Any, optional: bool = False) -> Any:
    """A decimal-string argument: ``str`` (passed as it is: the library validates it) or
    :class:`decimal.Decimal` (see :func:`_decimal_text`)."""
    if isinstance(value, decimal.Decimal):
        value = _decimal_text(name, value)
    return _arg(name, value, optional)


def _decimals_as_text(name: str, value: Any) -> Any:
    """``value`` with every Decimal in it (at any depth) replaced by its decimal string;
    ``name`` is its place ("order.price"), for the message when one is not finite."""
    if isinstance(value, decimal.Decimal):
        return _decimal_text(name, value)
    if isinstance(value, Mapping):
        return {key: _decimals_as_text(f"{name}.{key}", item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_decimals_as_text(f"{name}[{i}]", item) for i, item in enumerate(value)]
    return value


def _json_text(name: str, value: Any, optional: bool = False) -> Any:
    """A JSON object argument: text (``str``/bytes, passed as it is) or a mapping, serialised
    with its Decimal values as decimal strings."""
    if isinstance(value, Mapping):
        value = json.dumps(_decimals_as_text(name, value))
    return _arg(name, value, optional)


def _subscriptions_text(value: Any) -> Any:
    """Stream subscriptions: JSON text (passed as it is: the library checks it strictly) or a
    list of mappings, serialised."""
    if isinstance(value, (list, tuple)):
        value = json.dumps(list(value))
    return _arg("subscriptions", value)


def _refuse_floats(name: str, value: Any) -> None:
    """Endpoint parameters: a float anywhere in ``value`` is refused (``INVALID_ARGUMENT``,
    naming its place) rather than written as a JSON number, which cannot say which decimal
    it means: decimals are str or Decimal, ids and counts int."""
    if isinstance(value, float):
        raise PerpsError(
            Code.INVALID_ARGUMENT,
            f"{name} is a float ({value!r}): pass a decimal as str or decimal.Decimal, an id or count as int",
        )
    if isinstance(value, Mapping):
        for key, item in value.items():
            _refuse_floats(f"{name}.{key}", item)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _refuse_floats(f"{name}[{i}]", item)


def _take_error(err: c_void_p) -> PerpsError:
    """Turn the perps_error a failing call stored in ``err`` into a PerpsError, and free it.
    Disowned, then freed, with no point between where a signal handler could run (see
    :class:`_native.Owned`); interrupted before, ``err`` frees it when collected."""
    if not err.value:
        err.__class__ = Disowned
        return PerpsError(Code.PANIC, "libperps reported a failure without an error object")

    def text(borrowed):
        return None if borrowed is None else borrowed.decode("utf-8", "replace")

    try:
        return PerpsError(
            _lib.perps_error_code(err),
            text(_lib.perps_error_message(err)),
            _lib.perps_error_http_status(err),
            text(_lib.perps_error_body(err)),
            bool(_lib.perps_error_may_have_reached_venue(err)),
            text(_lib.perps_error_cl_ord_id(err)),
            text(_lib.perps_error_request_id(err)),
            _lib.perps_error_retry_after_ms(err),
            text(_lib.perps_error_stream_request_id(err)),
        )
    finally:
        err.__class__ = Disowned
        _lib.perps_error_free(err)


def _take_string(ptr: c_void_p) -> str:
    """Copy an owned char* into a str and free it with perps_string_free (which wipes it).
    Read through ``c_char_p.from_buffer`` (all in C: no Python frame, unlike
    ``ctypes.string_at``); disowned, then freed, with no point between (see
    :class:`_native.Owned`)."""
    try:
        data = c_char_p.from_buffer(ptr).value
    finally:
        ptr.__class__ = Disowned
        _lib.perps_string_free(ptr)
    assert data is not None  # not NULL: the callers checked
    return data.decode("utf-8")


def _call_str(fn, *args) -> str:
    """``fn(*args, &err)`` for an export that returns an owned string: the string, or the
    error raised. Whatever interrupts it, the string and the error are freed (see
    :class:`_native.Owned`): each is disowned only as it is freed, or when it is NULL."""
    err: c_void_p = OwnedError()
    ptr = fn(*args, byref(err))
    if not ptr:
        ptr.__class__ = Disowned
        raise _take_error(err)
    err.__class__ = Disowned
    return _take_string(ptr)


def _call_code(fn, *args) -> None:
    err: c_void_p = OwnedError()
    if fn(*args, byref(err)) != Code.OK:
        raise _take_error(err)
    err.__class__ = Disowned


def _call_handle(fn, *args) -> c_void_p:
    """``fn(*args, &err)`` for an export that returns a handle: the handle, still owned (an
    ``Owned`` that frees it if collected untaken), for a :class:`_Handle` to keep; or the
    error raised."""
    err: c_void_p = OwnedError()
    ptr = fn(*args, byref(err))
    if not ptr:
        ptr.__class__ = Disowned
        raise _take_error(err)
    err.__class__ = Disowned
    return ptr


_T = TypeVar("_T")
_opener: Optional[concurrent.futures.ThreadPoolExecutor] = None
_opener_lock = threading.Lock()


def _opened_off_main(open_stream: Callable[[], _T], discard: Callable[[_T], None]) -> _T:
    """``open_stream()``, run on a helper thread when called from the main thread, where
    signal handlers run: an exception one raises (KeyboardInterrupt, a SIGTERM handler's) then
    interrupts only the main thread's wait, and ``discard`` closes what the call still opens.
    Waiting in the library itself, the exception would come as the call returned, and the
    stream it opened (a live, subscribed connection counting against the venue's limit of
    connections per IP) would be left open with nothing to close it."""
    global _opener
    if threading.current_thread() is not threading.main_thread():
        return open_stream()
    with _opener_lock:
        if _opener is None:
            _opener = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="perps-open")
        job = _opener.submit(open_stream)
    try:
        return job.result()
    except BaseException:
        if not job.done() or job.exception() is None:  # interrupted: the opened stream is closed

            def discard_opened(done: concurrent.futures.Future[_T]) -> None:
                if done.exception() is None:
                    discard(done.result())

            job.add_done_callback(discard_opened)
        raise


class _InFlight:
    """One call's hold on the handles it uses, for as long as it holds its ``mark``, as
    :func:`_holding` (the one place a call takes it) does::

        call = _InFlight(handles)
        with call.mark:
            ptr_a, ptr_b = call.pointers()   # counted in: a close() now waits for the call
            ...                              # the library call

    Why a lock, and this shape: an exception a signal handler raises (Ctrl-C's
    KeyboardInterrupt) can come at a function's entry, after a call returns or at a backward
    jump, never inside a C function. The mark is a lock written in C (``_thread.RLock``):
    the ``with`` statement takes it and gives it back through the lock's own C ``__enter__``
    and ``__exit__``, so no such exception can come between the end of the call and the
    release of its mark, as one could at the entry of a context manager's Python
    ``__exit__`` (leaving the call counted for ever and close() waiting). ``pointers()`` runs
    inside the ``with``: an exception anywhere in it, or later, still releases the mark.
    tests/test_interrupts.py tries every such point in turn."""

    __slots__ = ("mark", "_handles", "__weakref__")

    def __init__(self, handles: Tuple[_Handle, ...]) -> None:
        self.mark = _thread.RLock()
        self._handles = handles

    def pointers(self) -> List[Any]:
        """The handles' pointers, in order, once the call is counted in on each; the handle's
        ``closed_code`` error when one is closed. Call it holding ``mark``."""
        return [handle._enter(self) for handle in self._handles]


_R = TypeVar("_R")


def _holding(handles: Tuple[_Handle, ...], body: Callable[..., _R]) -> _R:
    """``body(*pointers)``, the handles' pointers in order, with the call counted in on each
    (:class:`_InFlight`): a close() waits for it. The handle's ``closed_code`` error when one
    is closed."""
    call = _InFlight(handles)
    with call.mark:
        return body(*call.pointers())


_PRUNE_AT = 16  # a handle forgets its collected calls once it has noted this many


class _Handle:
    """One C handle's lifetime: the calls in flight (each an :class:`_InFlight`, its mark held
    while it runs); close() takes the pointer away, waits for those calls, then frees it exactly
    once. The pointer is the ``Owned`` the library's call returned, kept as it came: until
    close() disowns and frees it, it frees itself if dropped (an interrupt between the call
    and this handle, say)."""

    __slots__ = ("_ptr", "_free", "_kind", "_lock", "_calls", "_closing", "_closed_code")

    def __init__(self, ptr, free, kind, closed_code=Code.INVALID_ARGUMENT):
        self._ptr = ptr
        self._free = free
        self._kind = kind
        self._lock = threading.Lock()
        # Weak references to the calls that entered: one whose call is still alive is in
        # flight only while its mark is held. Plain references without a callback, pruned
        # as calls enter: a weakref callback (as in a WeakSet) runs Python code wherever a
        # call is collected, and an exception a signal handler raised there would be printed
        # and dropped (a Ctrl-C lost).
        self._calls: Set[weakref.ref[_InFlight]] = set()
        self._closing = None  # the pointer close() took away and has not freed yet
        self._closed_code = closed_code  # raised by a call after close()

    def _enter(self, call: _InFlight) -> Any:
        with self._lock:
            if self._ptr is None:
                raise PerpsError(self._closed_code, f"the {self._kind} is closed")
            if len(self._calls) >= _PRUNE_AT:
                self._calls = {ref for ref in self._calls if ref() is not None}
            self._calls.add(weakref.ref(call))
            return self._ptr

    def close(self):
        """Take the pointer away (calls entering from now on are refused), wait for the calls
        in flight, then free it. An exception that interrupts the wait (Ctrl-C) leaves the
        free to the next close(). A close() on a thread that is itself inside a call on this
        handle (a signal handler's, say) cannot wait for that call and must not free the
        handle under it: it returns, and the next close() (or the finaliser) frees it."""
        with self._lock:
            ptr, self._ptr = self._ptr, None
            if ptr is not None:
                self._closing = ptr
            calls = [call for call in (ref() for ref in self._calls) if call is not None]
        for call in calls:
            mark = call.mark
            if mark._is_owned():
                return
            try:
                mark.acquire()  # returns once the call has released it: the call is over
            finally:
                try:
                    mark.release()
                except RuntimeError:  # not acquired: interrupted first
                    pass
        with self._lock:
            # Freed under the lock: between taking the pointer and the free, nothing can
            # interrupt (a later close() finds nothing left to free).
            ptr, self._closing = self._closing, None
            if ptr is not None:
                ptr.__class__ = Disowned  # then freed: nothing can interrupt between (Owned)
                self._free(ptr)


_Self = TypeVar("_Self", bound="_Owner")


class _Owner:
    """Shared close and context-manager behaviour of Client and Session. No finaliser: one
    never closed is freed when collected by its handle's ``Owned`` pointer (a call in flight
    holds that pointer, so none can be). A finaliser here would run Python code at every
    collection, closed or not, where a signal handler's exception is printed and dropped (a
    Ctrl-C lost); a closed one now runs none. Stream too: one never closed is closed and
    freed by its ``OwnedStream``'s finaliser (``perps._stream._collected``)."""

    _handle: Optional[_Handle] = None

    def close(self) -> None:
        """Free the handle after the calls in flight return. Idempotent."""
        if self._handle is not None:
            self._handle.close()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:  # never swallows an exception
        self.close()
        return False
