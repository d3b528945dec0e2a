"""libperps for Python: wallet sign-in to a perpetual-futures venue, Ed25519 body
signatures and orders, through the library's C ABI (ctypes).

    with perps.Client(base_url, perps_url) as client, perps.Session() as session:
        client.signin(session, "bsc", wallet_key, 3600)
        answer = client.new_order(session, order)          # raises perps.PerpsError
        client.cancel_order(session, {"cl_ord_id": json.loads(answer)["cl_ord_id"]})

Which library is loaded (:data:`library`), the first that applies:

1. ``$PERPS_LIB``, a path (nothing else is tried);
2. ``libperps.so`` inside the package (the wheel, ``pip install perps-*.whl``, bundles it);
3. ``target/release/libperps.so`` of the repository this package sits in (a source checkout:
   ``bindings/python/../../target/release``, built by ``make lib``);
4. the installed library by its SONAME (``libperps.so.0.<minor>``), through the dynamic
   loader's search (``ldconfig``'s cache, ``LD_LIBRARY_PATH``): ``pip install
   bindings/python`` installs the Python code only, for a system-installed library.

Conventions:

* A failing call raises :class:`PerpsError` (``code`` as a :class:`Code`, ``message``,
  ``http_status``, ``body``, ``may_have_reached_venue``, ``cl_ord_id``, ``x_request_id``,
  ``retry_after_ms``, ``stream_request_id``), read from the error object the C call hands back through its own
  out-parameter, then freed: there is no "last error" state, so threads need no care.
* :class:`Client` and :class:`Session` are context managers; ``close()`` is idempotent and
  waits for calls in flight on other threads; a handle never closed is freed when garbage
  collected (a safety net only). A call on a closed handle raises ``INVALID_ARGUMENT``.
  Both are safe to share between threads (ctypes releases the GIL during each call).
* Every string the library returns is copied into Python and freed with
  ``perps_string_free`` at once (which overwrites it). Strings passed in are UTF-8; one
  holding a NUL character is refused (C would silently cut it short).
* Venue answers and the sign-in payload are returned as the library's exact JSON text
  (``str``); session info and signature headers, which the library builds, as ``dict``.
* :class:`Stream` (:meth:`Client.open_stream`, :meth:`Client.open_order_stream`): the venue's
  WebSockets; events are library-built objects, so ``dict``; an iterator, a context manager,
  and usable from asyncio without blocking the loop (see ``perps._stream``).
* Decimals: wherever the venue takes a decimal string (an order's ``qty``, ``price``...),
  a :class:`decimal.Decimal` is accepted too and written in plain notation (``Decimal("1E-8")``
  is sent as ``"0.00000001"``), never through a float. Floats are not converted: in an order
  the library refuses them (``INVALID_ORDER``, naming the field); in the parameters of the
  endpoint methods (a mapping, or JSON text) they are refused here (``INVALID_ARGUMENT``,
  naming their place).
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import ctypes.util
import decimal
import json
import os
import pathlib
import threading
from collections.abc import Mapping, Sequence
from ctypes import POINTER, Structure, byref, c_bool, c_char, c_char_p, c_int, c_int64, c_size_t, c_uint16, c_void_p
from enum import IntEnum
from typing import Any, Callable, Dict, Literal, Optional, TypeVar, Union

__version__ = "0.1.0"  # the libperps version this binding is made for (Cargo.toml's)

#: An order (or other request object): JSON text, or a mapping that is serialised to JSON
#: (its :class:`decimal.Decimal` values as decimal strings).
JsonObject = Union[str, bytes, Mapping[str, Any]]
#: Text the library takes: ``str`` (sent as UTF-8) or bytes.
Text = Union[str, bytes]
#: Stream subscriptions: a list of ``{"channel": …, "symbol": …}`` mappings, or that list as
#: JSON text.
Subscriptions = Union[str, bytes, Sequence[Mapping[str, Any]]]

__all__ = [
    "BodySignature",
    "Client",
    "Code",
    "PerpsError",
    "Session",
    "Stream",
    "challenge_verify",
    "library",
    "order_serialize",
    "version",
    "wallet_address",
    "wallet_sign",
    "wallet_wrap_solana_signature",
]


class Code(IntEnum):
    """libperps result codes (stable numbers, never reused)."""

    OK = 0
    INVALID_ARGUMENT = 1
    INVALID_KEY = 2
    INVALID_ORDER = 3
    VERIFICATION_FAILED = 4
    INVALID_STATE = 5
    TRANSPORT = 6
    TIMEOUT = 7
    HTTP_STATUS = 8
    API_ERROR = 9
    BAD_RESPONSE = 10
    TOKEN_EXPIRED = 11
    RNG = 12
    NOT_FOUND = 13  # the venue's HTTP 404 from an endpoint call: the order is gone (or not visible yet)
    RATE_LIMITED = 14  # refused by the client's rate limiter (option rate_limit); nothing sent
    STREAM_CLOSED = 15  # the stream was closed (Stream.close), or ended after its "failed" event
    STREAM_LIMIT = 16  # a new WebSocket would break the venue's connection limits; nothing sent
    PANIC = 99


class PerpsError(Exception):
    """One libperps failure.

    ``http_status`` is 0 and ``body`` None when the venue did not answer.
    ``may_have_reached_venue``: for an order, query the venue before sending it again
    (the library never retries).
    ``cl_ord_id``: the cl_ord_id of the order a failed ``new_order`` (of a client or a
    stream) was placing (yours, or the one the library generated): look it up with
    ``query_order`` before resending; for a failed :meth:`Stream.cancel_order`, the one its
    params named; for a ``request`` POST to ``/api/new_order``, the one its body names. None
    for other calls.
    ``x_request_id``: the ``x-request-id`` header sent with the failed request (body-signed
    requests), None when nothing was sent. Not the session's request key id
    (:attr:`Session.request_id`), nor the venue's ``request_id`` field.
    ``retry_after_ms``: how long to wait before asking again (the ``Retry-After`` of a 429 or
    503, or the client's rate limiter for ``RATE_LIMITED``), in milliseconds; -1 when unknown.
    ``stream_request_id``: the envelope ``request_id`` of an order-stream request
    (:meth:`Stream.new_order`, :meth:`Stream.cancel_order`) whose frame may have been partly
    written when the write failed — the id its ``order_response`` events and the
    ``unanswered`` list of the next ``disconnected`` status event name; None for every other
    error. Not the ``x-request-id``.
    """

    code: Union[Code, int]
    message: str
    http_status: int
    body: Optional[str]
    may_have_reached_venue: bool
    cl_ord_id: Optional[str]
    x_request_id: Optional[str]
    retry_after_ms: int
    stream_request_id: Optional[str]

    def __init__(
        self,
        code: Union[Code, int],
        message: str,
        http_status: int = 0,
        body: Optional[str] = None,
        may_have_reached_venue: bool = False,
        cl_ord_id: Optional[str] = None,
        x_request_id: Optional[str] = None,
        retry_after_ms: int = -1,
        stream_request_id: Optional[str] = None,
    ) -> None:
        try:
            code = Code(code)
        except ValueError:  # a code newer than this binding: keep the number
            code = int(code)
        self.code = code
        self.message = message
        self.http_status = http_status
        self.body = body
        self.may_have_reached_venue = may_have_reached_venue
        self.cl_ord_id = cl_ord_id
        self.x_request_id = x_request_id
        self.retry_after_ms = retry_after_ms
        self.stream_request_id = stream_request_id
        name = code.name if isinstance(code, Code) else str(code)
        status = f" (HTTP {http_status})" if http_status else ""
        super().__init__(f"PERPS_{name}{status}: {message}")


# ------------------------------------------------------------------------------------------
# The C library
# ------------------------------------------------------------------------------------------

SIGN_VERSION_SIZE = 4
REQUEST_ID_SIZE = 40
TIMESTAMP_SIZE = 24
SIGNATURE_SIZE = 96


class BodySignature(Structure):
    """``perps_body_signature``: the four header values in fixed-size fields, filled in place
    by :meth:`Session.sign_body_into`. Fields read as ``bytes``; :meth:`headers` gives ``str``."""

    _fields_ = [
        ("version", c_char * SIGN_VERSION_SIZE),
        ("request_id", c_char * REQUEST_ID_SIZE),
        ("timestamp", c_char * TIMESTAMP_SIZE),
        ("signature", c_char * SIGNATURE_SIZE),
    ]

    def headers(self) -> Dict[str, str]:
        """The four headers by name, as ``str``."""
        return {
            "x-request-sign-version": self.version.decode("ascii"),
            "x-request-id": self.request_id.decode("ascii"),
            "x-request-timestamp": self.timestamp.decode("ascii"),
            "x-request-signature": self.signature.decode("ascii"),
        }


def _soname(version: str) -> str:
    """The SONAME of the library this binding is made for: ``libperps.so.0.<minor>`` while
    the version is 0.x (each 0.x minor may change the ABI), ``libperps.so.<major>`` after."""
    major, minor = version.split(".")[:2]
    return f"libperps.so.0.{minor}" if major == "0" else f"libperps.so.{major}"


SONAME = _soname(__version__)


def _open_library() -> tuple[ctypes.CDLL, str]:
    """Load the library (the order is in the module's docstring); returns it and what was
    loaded (a path, or the SONAME when the dynamic loader found it)."""
    env = os.environ.get("PERPS_LIB")
    here = pathlib.Path(__file__).resolve().parent
    if env:
        paths = [pathlib.Path(env)]
    else:
        paths = [p for p in [here / "libperps.so"] if p.is_file()]  # bundled by the wheel
        if len(here.parents) > 2 and (here.parents[2] / "Cargo.toml").is_file():  # a source checkout
            paths += [p for p in [here.parents[2] / "target" / "release" / "libperps.so"] if p.is_file()]
    for path in paths[:1]:  # the first that exists; if it does not load, say so
        try:
            return ctypes.CDLL(str(path)), str(path)
        except OSError as e:
            raise ImportError(f"perps: cannot load {path} ({e}); build it with `make lib` or set PERPS_LIB") from None
    try:
        return ctypes.CDLL(SONAME), SONAME
    except OSError as e:
        found = ctypes.util.find_library("perps")
        other = f"; the system has {found}, another ABI version" if found and found != SONAME else ""
        raise ImportError(
            f"perps: no libperps found: this binding needs {SONAME} ({e}){other}. Install the "
            "wheel (it bundles the library), install libperps (make install; ldconfig), "
            "or set PERPS_LIB to a libperps.so"
        ) from None


def _load() -> tuple[ctypes.CDLL, str]:
    lib, path = _open_library()

    err = POINTER(c_void_p)  # perps_error **
    owned = c_void_p  # an owned char*: never c_char_p, which would convert it and leak it
    code = c_int  # enum perps_code

    def decl(name, restype, *argtypes):
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = list(argtypes)

    decl("perps_version", c_char_p)  # static
    decl("perps_string_free", None, c_void_p)

    decl("perps_error_code", code, c_void_p)
    decl("perps_error_message", c_char_p, c_void_p)  # borrowed from the error
    decl("perps_error_http_status", c_uint16, c_void_p)
    decl("perps_error_body", c_char_p, c_void_p)  # borrowed from the error
    decl("perps_error_may_have_reached_venue", c_bool, c_void_p)
    decl("perps_error_cl_ord_id", c_char_p, c_void_p)  # borrowed from the error
    decl("perps_error_request_id", c_char_p, c_void_p)  # borrowed from the error
    decl("perps_error_retry_after_ms", c_int64, c_void_p)
    decl("perps_error_stream_request_id", c_char_p, c_void_p)  # borrowed from the error
    decl("perps_error_free", None, c_void_p)

    decl("perps_client_new", c_void_p, c_char_p, c_char_p, c_char_p, err)
    decl("perps_client_free", None, c_void_p)
    decl("perps_client_sync_time", code, c_void_p, POINTER(c_int64), err)
    decl("perps_prepare_signin", owned, c_void_p, c_void_p, c_char_p, c_char_p, err)
    decl("perps_login", owned, c_void_p, c_void_p, c_char_p, c_int64, err)
    decl("perps_signin", owned, c_void_p, c_void_p, c_char_p, c_char_p, c_int64, err)
    decl("perps_new_order", owned, c_void_p, c_void_p, c_char_p, err)
    decl("perps_request", owned, c_void_p, c_void_p, c_char_p, c_char_p, c_char_p, err)
    # The endpoint exports ("the trading loop"), all of one shape:
    # (client, session or NULL, params_json or NULL, err) -> owned char*.
    for name in (
        "perps_cancel_order",
        "perps_cancel_orders",
        "perps_change_leverage",
        "perps_change_margin_mode",
        "perps_query_order",
        "perps_query_orders",
        "perps_query_open_orders",
        "perps_query_trades",
        "perps_query_funding_history",
        "perps_query_positions",
        "perps_query_balance",
        "perps_query_position_config",
        "perps_query_symbol_info",
        "perps_query_symbol_price",
        "perps_query_depth_book",
    ):
        decl(name, owned, c_void_p, c_void_p, c_char_p, err)

    decl("perps_session_new", c_void_p, err)
    decl("perps_session_from_api_key", c_void_p, c_char_p, c_char_p, err)
    decl("perps_session_request_id", owned, c_void_p, err)
    decl("perps_session_token", owned, c_void_p, err)
    decl("perps_session_info", owned, c_void_p, err)
    decl("perps_session_logout", code, c_void_p, err)
    decl("perps_session_set_session_id", code, c_void_p, c_char_p, err)
    decl("perps_session_set_impersonate", code, c_void_p, c_char_p, err)
    decl("perps_session_free", None, c_void_p)

    decl("perps_sign_body", owned, c_void_p, c_char_p, err)
    decl("perps_sign_body_at", owned, c_void_p, c_char_p, c_char_p, c_int64, err)
    # const uint8_t *body, size_t len: c_char_p passes a bytes object's buffer without a copy
    decl("perps_sign_body_into", code, c_void_p, c_char_p, c_size_t, POINTER(BodySignature))

    decl("perps_wallet_address", owned, c_char_p, c_char_p, err)
    decl("perps_wallet_sign", owned, c_char_p, c_char_p, c_char_p, err)
    decl("perps_wallet_wrap_solana_signature", owned, c_char_p, c_char_p, c_char_p, c_size_t, err)
    decl("perps_challenge_verify", owned, c_char_p, c_char_p, c_char_p, c_char_p, c_char_p, c_int64, err)
    decl("perps_order_serialize", owned, c_char_p, err)

    # Streams: perps_stream_next blocks (up to its timeout) with the GIL released, as every
    # ctypes call does; perps_stream_close may run on any thread while it blocks.
    decl("perps_stream_open", c_void_p, c_void_p, c_void_p, c_char_p, err)
    decl("perps_order_stream_open", c_void_p, c_void_p, c_void_p, err)
    decl("perps_stream_next", owned, c_void_p, c_int64, err)
    decl("perps_stream_new_order", owned, c_void_p, c_char_p, err)
    decl("perps_stream_cancel_order", owned, c_void_p, c_char_p, err)
    decl("perps_stream_close", None, c_void_p)
    decl("perps_stream_free", None, c_void_p)
    return lib, path


#: What was loaded: the library's path, or its SONAME when the dynamic loader found it.
library: str
_lib, library = _load()


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


def _take_error(err):
    """Turn the perps_error a failing call stored in ``err`` into a PerpsError, and free it."""
    if not err.value:
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
        _lib.perps_error_free(err)


def _take_string(ptr):
    """Copy an owned char* into a str and free it with perps_string_free."""
    try:
        return ctypes.string_at(ptr).decode("utf-8")
    finally:
        _lib.perps_string_free(ptr)


def _call_str(fn, *args):
    err = c_void_p()
    ptr = fn(*args, byref(err))
    if not ptr:
        raise _take_error(err)
    return _take_string(ptr)


def _call_code(fn, *args):
    err = c_void_p()
    if fn(*args, byref(err)) != Code.OK:
        raise _take_error(err)


def _call_handle(fn, *args):
    err = c_void_p()
    ptr = fn(*args, byref(err))
    if not ptr:
        raise _take_error(err)
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


class _Handle:
    """One C handle's lifetime: calls count themselves in and out; close() takes the pointer
    away, waits for the calls in flight, then frees it exactly once."""

    __slots__ = ("_ptr", "_free", "_kind", "_cond", "_users", "_closed_code")

    def __init__(self, ptr, free, kind, closed_code=Code.INVALID_ARGUMENT):
        self._ptr = ptr
        self._free = free
        self._kind = kind
        self._cond = threading.Condition(threading.Lock())
        self._users = 0
        self._closed_code = closed_code  # raised by a call after close()

    def acquire(self):
        with self._cond:
            if self._ptr is None:
                raise PerpsError(self._closed_code, f"the {self._kind} is closed")
            self._users += 1
            return self._ptr

    def release(self):
        with self._cond:
            self._users -= 1
            if self._users == 0:
                self._cond.notify_all()

    def close(self):
        with self._cond:
            ptr, self._ptr = self._ptr, None
            while self._users:
                self._cond.wait()
        if ptr is not None:
            self._free(ptr)


class _Using:
    """``with _Using(a, b) as (pa, pb):`` holds the handles open for one call."""

    def __init__(self, *owners):
        self._handles = []
        for owner in owners:
            if not isinstance(owner, (Client, Session)):
                raise TypeError(f"perps: expected a Client or Session, not {type(owner).__name__}")
            self._handles.append(owner._handle)

    def __enter__(self):
        ptrs = []
        try:
            for h in self._handles:
                ptrs.append(h.acquire())
        except BaseException:
            for h in self._handles[: len(ptrs)]:
                h.release()
            raise
        return ptrs

    def __exit__(self, *exc):
        for h in self._handles:
            h.release()
        return False


_Self = TypeVar("_Self", bound="_Owner")


class _Owner:
    """Shared close / context-manager / finaliser behaviour of Client and Session (Stream
    has its own finaliser: it closes the stream and frees it on a thread of its own)."""

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

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing left to report to
            pass


# ------------------------------------------------------------------------------------------
# Client and Session
# ------------------------------------------------------------------------------------------


class Session(_Owner):
    """One identity: the Ed25519 request-signing key (a fresh temporary one), the chain and
    wallet address, the pending challenge and the access token. Thread-safe."""

    def __init__(self) -> None:
        self._handle = _Handle(_call_handle(_lib.perps_session_new), _lib.perps_session_free, "session")

    @classmethod
    def from_api_key(cls, api_token: Text, ed25519_private_key: Text) -> Session:
        """A session for a web-site API credential (token and Ed25519 key: base58 seed or
        keypair, or hex); it can place orders at once."""
        self = cls.__new__(cls)
        ptr = _call_handle(
            _lib.perps_session_from_api_key,
            _arg("api_token", api_token),
            _arg("ed25519_private_key", ed25519_private_key),
        )
        self._handle = _Handle(ptr, _lib.perps_session_free, "session")
        return self

    @property
    def request_id(self) -> str:
        """The request key id: base58 of the session's Ed25519 public key, sent as
        ``requestId`` at sign-in. Not the x-request-id (a fresh UUID per signed request) nor
        the venue's ``request_id`` (a field of its answers)."""
        with _Using(self) as (s,):
            return _call_str(_lib.perps_session_request_id, s)

    def token(self) -> str:
        """The access token (a secret). ``INVALID_STATE`` when the session has none."""
        with _Using(self) as (s,):
            return _call_str(_lib.perps_session_token, s)

    def info(self) -> Dict[str, Any]:
        """The session's state without secrets, as a dict (request_id, has_token, chain,
        address, alias, token_expires_at, pending_signin, challenge_expires_at)."""
        with _Using(self) as (s,):
            return json.loads(_call_str(_lib.perps_session_info, s))

    def logout(self) -> None:
        """Forget the token and any pending challenge; the key is kept."""
        with _Using(self) as (s,):
            _call_code(_lib.perps_session_logout, s)

    def set_session_id(self, value: Optional[Text]) -> None:
        """Set the ``x-session-id`` header of order entry (new_order, cancel_order,
        cancel_orders); None clears it."""
        value = _arg("value", value, optional=True)
        with _Using(self) as (s,):
            _call_code(_lib.perps_session_set_session_id, s, value)

    def set_impersonate(self, value: Optional[Text]) -> None:
        """Set the ``x-impersonate`` header (a vault id the account owns); None clears it."""
        value = _arg("value", value, optional=True)
        with _Using(self) as (s,):
            _call_code(_lib.perps_session_set_impersonate, s, value)

    def sign_body(self, body: Text) -> Dict[str, str]:
        """Sign ``body`` (str or bytes, byte for byte) with a fresh UUID v4 and the local
        clock; returns the four ``x-request-*`` headers as a dict. No network."""
        body = _arg("body", body)
        with _Using(self) as (s,):
            return json.loads(_call_str(_lib.perps_sign_body, s, body))

    def sign_body_at(self, body: Text, request_id: Text, timestamp_ms: int) -> Dict[str, str]:
        """``sign_body`` with a caller-chosen x-request-id (hyphenated UUID) and timestamp (ms)."""
        body, request_id = _arg("body", body), _arg("request_id", request_id)
        timestamp_ms = _i64("timestamp_ms", timestamp_ms)
        with _Using(self) as (s,):
            return json.loads(_call_str(_lib.perps_sign_body_at, s, body, request_id, timestamp_ms))

    def sign_body_into(self, body: Union[Text, bytearray, memoryview], out: Optional[BodySignature] = None) -> BodySignature:
        """The hot path: sign ``body`` (bytes, may hold any byte; str is encoded) into a
        :class:`BodySignature` (``out``, reused when given) without allocating in the
        library. Returns ``out``."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif not isinstance(body, bytes):
            body = bytes(body)
        if out is None:
            out = BodySignature()
        with _Using(self) as (s,):
            code = _lib.perps_sign_body_into(s, body, len(body), byref(out))
        if code != Code.OK:
            raise PerpsError(code, "perps_sign_body_into failed (NULL pointer, non-UTF-8 body, or RNG)")
        return out


class Client(_Owner):
    """The venue's two base URLs, HTTP settings, one keep-alive connection pool, the cached
    certificates and the clock offset. Share one client between sessions and threads.

    ``options``: None, a dict, or a JSON object text of the client options in the README's
    "Client options" (connect_timeout_ms, total_timeout_ms, rate_limit, symbol_rules,
    cl_ord_id_prefix, the stream options, …).
    """

    def __init__(self, base_url: Text, perps_url: Text, options: Optional[JsonObject] = None) -> None:
        ptr = _call_handle(
            _lib.perps_client_new,
            _arg("base_url", base_url),
            _arg("perps_url", perps_url),
            _json_text("options", options, optional=True),
        )
        self._handle = _Handle(ptr, _lib.perps_client_free, "client")

    def sync_time(self) -> int:
        """Read the venue's clock and keep the offset; returns venue minus local, in ms."""
        offset = c_int64()
        with _Using(self) as (c,):
            _call_code(_lib.perps_client_sync_time, c, byref(offset))
        return offset.value

    def prepare_signin(self, session: Session, chain: Text, address: Text) -> str:
        """POST prepare-signin, verify the challenge, keep it in the session. Returns the
        sign-in payload JSON text: pass it unchanged to the wallet (:func:`wallet_sign`)."""
        chain, address = _arg("chain", chain), _arg("address", address)
        with _Using(self, session) as (c, s):
            return _call_str(_lib.perps_prepare_signin, c, s, chain, address)

    def login(self, session: Session, signature: Text, expires_seconds: int = 0) -> str:
        """POST login with the pending challenge and the wallet's signature; keep the token.
        ``expires_seconds <= 0``: the venue default. Returns the login result JSON text."""
        signature, expires_seconds = _arg("signature", signature), _i64("expires_seconds", expires_seconds)
        with _Using(self, session) as (c, s):
            return _call_str(_lib.perps_login, c, s, signature, expires_seconds)

    def signin(self, session: Session, chain: Text, wallet_key: Text, expires_seconds: int = 0) -> str:
        """All of sign-in with a wallet key held in-process. Returns the login result JSON text."""
        chain, wallet_key = _arg("chain", chain), _arg("wallet_key", wallet_key)
        expires_seconds = _i64("expires_seconds", expires_seconds)
        with _Using(self, session) as (c, s):
            return _call_str(_lib.perps_signin, c, s, chain, wallet_key, expires_seconds)

    def new_order(self, session: Session, order: JsonObject) -> str:
        """Validate the order (JSON text, or a dict whose ``qty``/``price`` may be Decimals),
        serialise it once, sign and POST it. Returns the venue's JSON text, which carries the
        order's ``cl_ord_id`` (generated when the order has none). Never retried: on a
        PerpsError with ``may_have_reached_venue``, look the order up by its ``cl_ord_id``
        (:meth:`query_order`) before sending again."""
        order = _json_text("order", order)
        with _Using(self, session) as (c, s):
            return _call_str(_lib.perps_new_order, c, s, order)

    def request(self, session: Session, method: Text, path: Text, body: Optional[Text] = None) -> str:
        """Any other endpoint under perps_url (method GET/POST/PUT/DELETE, path from "/");
        a body is signed and sent byte for byte. Never retried. Returns the answer text."""
        method, path, body = _arg("method", method), _arg("path", path), _arg("body", body, optional=True)
        with _Using(self, session) as (c, s):
            return _call_str(_lib.perps_request, c, s, method, path, body)

    # -- The trading loop: one method per venue endpoint --------------------------------
    # ``params``: a dict or JSON object text of the endpoint's parameters (see perps.h;
    # checked before anything is sent: INVALID_ARGUMENT names the parameter), or None for
    # none. Each returns the venue's JSON text and is never retried. An order already gone
    # (or not visible yet) raises NOT_FOUND. The three public endpoints take session=None.

    def _endpoint(self, fn: Any, session: Optional[Session], params: Optional[JsonObject], public: bool = False) -> str:
        _refuse_floats("params", params)
        params = _json_text("params", params, optional=True)
        if public and session is None:
            with _Using(self) as (c,):
                return _call_str(fn, c, None, params)
        with _Using(self, session) as (c, s):
            return _call_str(fn, c, s, params)

    def cancel_order(self, session: Session, params: JsonObject) -> str:
        """POST /api/cancel_order: ``{"order_id": int}`` or ``{"cl_ord_id": str}``."""
        return self._endpoint(_lib.perps_cancel_order, session, params)

    def cancel_orders(self, session: Session, params: JsonObject) -> str:
        """POST /api/cancel_orders: ``order_id_list`` and/or ``cl_ord_id_list``."""
        return self._endpoint(_lib.perps_cancel_orders, session, params)

    def change_leverage(self, session: Session, params: JsonObject) -> str:
        """POST /api/change_leverage: ``{"symbol": "BTC-USD", "leverage": int}``."""
        return self._endpoint(_lib.perps_change_leverage, session, params)

    def change_margin_mode(self, session: Session, params: JsonObject) -> str:
        """POST /api/change_margin_mode: ``{"symbol": …, "margin_mode": "cross" | "isolated"}``."""
        return self._endpoint(_lib.perps_change_margin_mode, session, params)

    def query_order(self, session: Session, params: JsonObject) -> str:
        """GET /api/query_order: ``{"order_id": int}`` or ``{"cl_ord_id": str}``."""
        return self._endpoint(_lib.perps_query_order, session, params)

    def query_orders(self, session: Session, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_orders (history): symbol, status, order_type, start, end, last_id, limit."""
        return self._endpoint(_lib.perps_query_orders, session, params)

    def query_open_orders(self, session: Session, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_open_orders: symbol, limit."""
        return self._endpoint(_lib.perps_query_open_orders, session, params)

    def query_trades(self, session: Session, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_trades (the account's fills): symbol, side, start, end, last_id, limit."""
        return self._endpoint(_lib.perps_query_trades, session, params)

    def query_funding_history(self, session: Session, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_funding_history (the account's funding payments, ``qty`` negative =
        paid): symbol, start, end, last_id, limit (1..500). The venue's JSON as sent: a bare
        array of rows, newest first (live), or the {page_size, result, total} envelope."""
        return self._endpoint(_lib.perps_query_funding_history, session, params)

    def query_positions(self, session: Session, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_positions: symbol (optional); ``qty`` is signed (negative: short)."""
        return self._endpoint(_lib.perps_query_positions, session, params)

    def query_balance(self, session: Session, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_balance (no parameters)."""
        return self._endpoint(_lib.perps_query_balance, session, params)

    def query_position_config(self, session: Session, params: JsonObject) -> str:
        """GET /api/query_position_config: ``{"symbol": "BTC-USD"}``."""
        return self._endpoint(_lib.perps_query_position_config, session, params)

    def query_symbol_info(self, session: Optional[Session] = None, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_symbol_info (public): symbol (optional: every symbol without it)."""
        return self._endpoint(_lib.perps_query_symbol_info, session, params, public=True)

    def query_symbol_price(self, session: Optional[Session] = None, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_symbol_price (public): ``{"symbol": "BTC-USD"}``."""
        return self._endpoint(_lib.perps_query_symbol_price, session, params, public=True)

    def query_depth_book(self, session: Optional[Session] = None, params: Optional[JsonObject] = None) -> str:
        """GET /api/query_depth_book (public): ``{"symbol": "BTC-USD"}``; levels sorted best
        first (bids high to low, asks low to high)."""
        return self._endpoint(_lib.perps_query_depth_book, session, params, public=True)

    # -- Streams: the venue's two WebSockets (see perps._stream) -------------------------

    def open_stream(self, session: Optional[Session], subscriptions: Subscriptions) -> Stream:
        """Open the market + account stream (``ws-stream``). ``subscriptions``: a list of
        ``{"channel": C, "symbol": S}`` (C one of price, depth_book, public_trade) and, with a
        session, ``{"channel": C}`` (C one of order, position, balance, trade), or that list
        as JSON text. ``session=None``: public channels only. Returns once connected,
        authenticated and subscribed (blocking: from asyncio, run it in an executor). In the
        main thread the open runs on a helper thread: an exception a signal handler raises
        (Ctrl-C) interrupts it at once, and the stream it still opens is closed."""
        subscriptions = _subscriptions_text(subscriptions)
        owners = (self,) if session is None else (self, session)

        def open_stream() -> Stream:
            with _Using(*owners) as ptrs:
                c, s = ptrs[0], (ptrs[1] if session is not None else None)
                return Stream._adopt(_call_handle(_lib.perps_stream_open, c, s, subscriptions))

        return _opened_off_main(open_stream, Stream.close)

    def open_order_stream(self, session: Session) -> Stream:
        """Open the order stream (``ws-api``) and log in with the session's token. Its
        ``session_id`` is the session's ``x-session-id`` when set (REST orders sent with it
        then report here). Returns once logged in (blocking, as :meth:`open_stream`)."""
        def open_stream() -> Stream:
            with _Using(self, session) as (c, s):
                return Stream._adopt(_call_handle(_lib.perps_order_stream_open, c, s))

        return _opened_off_main(open_stream, Stream.close)


# ------------------------------------------------------------------------------------------
# Functions without a handle
# ------------------------------------------------------------------------------------------


def version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.perps_version().decode("ascii")


def wallet_address(chain: Text, private_key: Text) -> str:
    """The address ``private_key`` controls on ``chain`` ("bsc": EIP-55; "solana": base58)."""
    return _call_str(_lib.perps_wallet_address, _arg("chain", chain), _arg("private_key", private_key))


def wallet_sign(chain: Text, private_key: Text, payload_json: Text) -> str:
    """The login signature for a sign-in payload (:meth:`Client.prepare_signin`'s text)."""
    return _call_str(
        _lib.perps_wallet_sign, _arg("chain", chain), _arg("private_key", private_key), _arg("payload_json", payload_json)
    )


def wallet_wrap_solana_signature(payload_json: Text, address: Text, signature: Union[bytes, bytearray]) -> str:
    """Wrap a raw 64-byte Ed25519 signature of the payload's message, made elsewhere by the
    Solana wallet ``address``, into the login signature format (verified first)."""
    signature = bytes(signature)
    return _call_str(
        _lib.perps_wallet_wrap_solana_signature,
        _arg("payload_json", payload_json),
        _arg("address", address),
        signature,
        len(signature),
    )


def challenge_verify(
    signed_data: Text, certs_json: Text, request_id: Text, chain: Text, address: Text, now_unix_secs: int = 0
) -> str:
    """Check a sign-in challenge without the network; returns the decoded payload JSON text."""
    return _call_str(
        _lib.perps_challenge_verify,
        _arg("signed_data", signed_data),
        _arg("certs_json", certs_json),
        _arg("request_id", request_id),
        _arg("chain", chain),
        _arg("address", address),
        _i64("now_unix_secs", now_unix_secs),
    )


def order_serialize(order: JsonObject) -> str:
    """Validate an order (JSON text, or a dict whose values may be Decimals); returns the
    exact body new_order would send."""
    return _call_str(_lib.perps_order_serialize, _json_text("order", order))


# The stream class lives in its own module; it uses the helpers above.
from ._stream import Stream  # noqa: E402  (after the helpers it imports)
