"""The C library: which one is loaded, and the signatures of its exports (ctypes)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import pathlib
import re
from ctypes import POINTER, Structure, c_bool, c_char, c_char_p, c_int, c_int64, c_size_t, c_uint16, c_void_p
from typing import Callable, Dict, Optional, Tuple

from . import __version__


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


class Owned(c_void_p):
    """Something the library handed over, as ctypes hands it to the binding (the restype of
    the export, or the ``err`` a call writes through): freed when it is collected untaken, by
    the ``_free`` of its kind (wiping it where the library wipes).

    Why: an exception a signal handler raises (Ctrl-C's KeyboardInterrupt) can come just as a
    call returns, before the binding's code has the result in hand. The result is then
    dropped unseen; as a plain address (an int) what it named was never freed: a string with
    a token in it never wiped, a session with its key. Taking it first makes it
    :class:`Disowned`, in a step no signal handler can interrupt (an assignment to
    ``__class__``, done in C), then frees it (``_calls._take_string``, ``_calls._take_error``,
    ``_calls._Handle.close``): on the normal path this ``__del__`` never runs. It must not:
    Python code in a finaliser can run a signal handler, whose exception is printed and
    dropped (a Ctrl-C lost). (A Python trace or profile function, a debugger's, runs between
    any two steps, and a handler with it: under one, an interrupt between the disown and the
    free can still leave one unfreed.)"""

    __slots__ = ()
    _free: Callable[[c_void_p], None]  # each kind's, set once the library is loaded

    def __del__(self) -> None:
        if self.value:
            self._free(self)


class OwnedString(Owned):
    """An owned ``char*``: ``perps_string_free``."""

    __slots__ = ()


class OwnedError(Owned):
    """An owned ``perps_error*``, as a call stores it through ``perps_error **err``:
    ``perps_error_free``. A call that succeeds leaves it NULL, and the caller disowns it then."""

    __slots__ = ()


class OwnedClient(Owned):
    """A ``perps_client*``: ``perps_client_free``."""

    __slots__ = ()


class OwnedSession(Owned):
    """A ``perps_session*``: ``perps_session_free`` (which wipes its key and token)."""

    __slots__ = ()


class OwnedStream(Owned):
    """A ``perps_stream*``. One collected untaken is a stream never closed: ``_collected``
    (``perps._stream._collected``) closes it at once and frees it on a thread of its own."""

    __slots__ = ()
    _collected: Callable[[c_void_p], None]  # set by perps._stream

    def __del__(self) -> None:
        if self.value:
            self._collected(self)


class Disowned(c_void_p):
    """What an :class:`Owned` becomes once taken: the same address, no finaliser."""

    __slots__ = ()


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


def _major_minor(version: str) -> Optional[Tuple[int, int]]:
    """MAJOR and MINOR of "MAJOR.MINOR.PATCH[-pre][+build]", or None."""
    m = re.fullmatch(r"(\d{1,9})\.(\d{1,9})\.\d{1,9}([-+].*)?", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def abi_compatible(binding: str, library: str) -> bool:
    """Whether a libperps of version ``library`` serves a binding made for ``binding``: the same
    0.minor while the version is 0.x (each 0.x minor may break the ABI, as the SONAME
    ``libperps.so.0.<minor>`` says), the same major and at least the binding's minor from 1.0
    on (minor releases only add)."""
    b, lib = _major_minor(binding), _major_minor(library)
    if b is None or lib is None or b[0] != lib[0]:
        return False
    return lib[1] == b[1] if b[0] == 0 else lib[1] >= b[1]


def abi_refusal(binding: str, library: str, loaded_from: str) -> Optional[str]:
    """Why a libperps of version ``library``, loaded from ``loaded_from``, cannot serve this
    binding (both versions, the file, what to do), or None when it can."""
    if abi_compatible(binding, library):
        return None
    b = _major_minor(binding)
    if b is None:
        needed = f"libperps {binding}"
    else:
        needed = f"libperps 0.{b[1]}.x" if b[0] == 0 else f"libperps {b[0]}.x, x >= {b[1]}"
    return (
        f"perps: libperps {library} was loaded (from {loaded_from}), but this binding is made for libperps "
        f"{binding} and needs {needed}: another version has another ABI. Set PERPS_LIB to a libperps.so of "
        f"{needed}, install the wheel (it carries its own), or remove or upgrade the one loaded."
    )


def _load() -> tuple[ctypes.CDLL, str]:
    lib, path = _open_library()
    # Before any other symbol is looked up: a PERPS_LIB path (or a stray copy) may be another
    # ABI version, which the SONAME would have kept out.
    lib.perps_version.restype = c_char_p
    lib.perps_version.argtypes = []
    version = (lib.perps_version() or b"?").decode("ascii", "replace")
    refusal = abi_refusal(__version__, version, path)
    if refusal is not None:
        raise ImportError(refusal)

    err = POINTER(c_void_p)  # perps_error **, passed as byref(OwnedError())
    owned = OwnedString  # an owned char*: never c_char_p, which would convert it and leak it
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

    decl("perps_client_new", OwnedClient, c_char_p, c_char_p, c_char_p, err)
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
        "perps_cancel_all",
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

    decl("perps_session_new", OwnedSession, err)
    decl("perps_session_from_api_key", OwnedSession, c_char_p, c_char_p, err)
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
    decl("perps_stream_open", OwnedStream, c_void_p, c_void_p, c_char_p, err)
    decl("perps_order_stream_open", OwnedStream, c_void_p, c_void_p, err)
    decl("perps_stream_next", owned, c_void_p, c_int64, err)
    decl("perps_stream_new_order", owned, c_void_p, c_char_p, err)
    decl("perps_stream_cancel_order", owned, c_void_p, c_char_p, err)
    decl("perps_stream_close", None, c_void_p)
    decl("perps_stream_free", None, c_void_p)
    OwnedString._free = lib.perps_string_free
    OwnedError._free = lib.perps_error_free
    OwnedClient._free = lib.perps_client_free
    OwnedSession._free = lib.perps_session_free
    return lib, path


#: What was loaded: the library's path, or its SONAME when the dynamic loader found it.
library: str
_lib, library = _load()
