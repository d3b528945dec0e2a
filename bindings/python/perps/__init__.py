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

Whichever it is, its ``perps_version()`` must be of this binding's ABI (``__version__``'s
0.minor while the version is 0.x): another is refused before any other symbol is used, with
an ``ImportError`` naming both versions and the file (``perps._native.abi_refusal``).

Conventions:

* A failing call raises :class:`PerpsError` (``code`` as a :class:`Code`, ``message``,
  ``http_status``, ``body``, ``may_have_reached_venue``, ``cl_ord_id``, ``x_request_id``,
  ``retry_after_ms``, ``stream_request_id``), read from the error object the C call hands back through its own
  out-parameter, then freed: there is no "last error" state, so threads need no care.
* :class:`Client` and :class:`Session` are context managers; ``close()`` is idempotent and
  waits for calls in flight on other threads; a handle never closed is freed when garbage
  collected (a safety net only). A call on a closed handle raises ``INVALID_ARGUMENT``.
  An exception a signal handler raises (Ctrl-C) never leaves a call counted in flight,
  wherever it lands; a ``close()`` it interrupts leaves the free to the next ``close()``,
  and one made by a signal handler while its own thread is inside a call on that handle
  returns at once and leaves the free to the next ``close()`` or the collector. What a
  call it interrupts had just handed over (a string, an error, a handle) is still freed:
  each comes as a ``perps._native.Owned``, freed if dropped untaken.
  Both are safe to share between threads (ctypes releases the GIL during each call).
* Every string the library returns is copied into Python and freed with
  ``perps_string_free`` at once (which overwrites it). Strings passed in are UTF-8; one
  holding a NUL character is refused (C would silently cut it short).
* Secrets (wallet keys, API tokens) may be passed as UTF-8 bytes instead of ``str``, which
  cannot be wiped: a ``bytearray`` (or ``memoryview``) that you wipe after the call, which
  only reads it. The binding copies every secret, whatever its form, into a ctypes buffer it
  overwrites with zeros once the call returned, failed calls included (``perps._secrets``).
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

import json
from collections.abc import Mapping, Sequence
from ctypes import byref, c_int64
from typing import Any, Callable, Dict, Optional, Tuple, TypeVar, Union

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

from ._errors import Code, PerpsError  # noqa: E402  (after __version__, which _native reads)
from ._native import (  # noqa: E402  ("X as X": names this module has always had, re-exported)
    REQUEST_ID_SIZE as REQUEST_ID_SIZE,
    SIGN_VERSION_SIZE as SIGN_VERSION_SIZE,
    SIGNATURE_SIZE as SIGNATURE_SIZE,
    SONAME as SONAME,
    TIMESTAMP_SIZE as TIMESTAMP_SIZE,
    BodySignature,
    _lib,
    library,
)
from ._secrets import Secret as Secret, _Secrets  # noqa: E402
from ._calls import (  # noqa: E402
    _Handle,
    _holding,
    _Owner,
    _arg,
    _call_code,
    _call_handle,
    _call_str,
    _i64,
    _json_text,
    _opened_off_main,
    _refuse_floats,
    _subscriptions_text,
)


_R = TypeVar("_R")


def _using(owners: Tuple[Any, ...], body: Callable[..., _R]) -> _R:
    """``body(*pointers)`` with the owners' handles held open (see :func:`perps._calls._holding`)."""
    for owner in owners:
        if not isinstance(owner, (Client, Session)):
            raise TypeError(f"perps: expected a Client or Session, not {type(owner).__name__}")
    return _holding(tuple(owner._handle for owner in owners), body)


# ------------------------------------------------------------------------------------------
# Client and Session
# ------------------------------------------------------------------------------------------


class Session(_Owner):
    """One identity: the Ed25519 request-signing key (a fresh temporary one), the chain and
    wallet address, the pending challenge and the access token. Thread-safe."""

    def __init__(self) -> None:
        self._handle = _Handle(_call_handle(_lib.perps_session_new), _lib.perps_session_free, "session")

    @classmethod
    def from_api_key(cls, api_token: Secret, ed25519_private_key: Secret) -> Session:
        """A session for a web-site API credential (token and Ed25519 key: base58 seed or
        keypair, or hex); it can place orders at once. Each secret may be a ``str`` or UTF-8
        bytes: a ``bytearray`` (or ``memoryview``) you wipe after the call, which only reads
        it; the binding's own copies are wiped before it returns (see ``perps._secrets``)."""
        self = cls.__new__(cls)
        secrets = _Secrets()
        try:  # the one shape of a call with secrets: see perps._secrets
            token, key = secrets.pack(("api_token", api_token), ("ed25519_private_key", ed25519_private_key))
            ptr = _call_handle(_lib.perps_session_from_api_key, token, key)
        finally:
            secrets.wipe()
        self._handle = _Handle(ptr, _lib.perps_session_free, "session")
        return self

    @property
    def request_id(self) -> str:
        """The request key id: base58 of the session's Ed25519 public key, sent as
        ``requestId`` at sign-in. Not the x-request-id (a fresh UUID per signed request) nor
        the venue's ``request_id`` (a field of its answers)."""
        return _using((self,), lambda s: _call_str(_lib.perps_session_request_id, s))

    def token(self) -> str:
        """The access token (a secret). ``INVALID_STATE`` when the session has none."""
        return _using((self,), lambda s: _call_str(_lib.perps_session_token, s))

    def info(self) -> Dict[str, Any]:
        """The session's state without secrets, as a dict (request_id, has_token, chain,
        address, alias, token_expires_at, pending_signin, challenge_expires_at)."""
        return _using((self,), lambda s: json.loads(_call_str(_lib.perps_session_info, s)))

    def logout(self) -> None:
        """Forget the token and any pending challenge; the key is kept."""
        _using((self,), lambda s: _call_code(_lib.perps_session_logout, s))

    def set_session_id(self, value: Optional[Text]) -> None:
        """Set the ``x-session-id`` header of order entry (new_order, cancel_order,
        cancel_orders); None clears it."""
        value = _arg("value", value, optional=True)
        _using((self,), lambda s: _call_code(_lib.perps_session_set_session_id, s, value))

    def set_impersonate(self, value: Optional[Text]) -> None:
        """Set the ``x-impersonate`` header (a vault id the account owns); None clears it."""
        value = _arg("value", value, optional=True)
        _using((self,), lambda s: _call_code(_lib.perps_session_set_impersonate, s, value))

    def sign_body(self, body: Text) -> Dict[str, str]:
        """Sign ``body`` (str or bytes, byte for byte) with a fresh UUID v4 and the local
        clock; returns the four ``x-request-*`` headers as a dict. No network."""
        body = _arg("body", body)
        return _using((self,), lambda s: json.loads(_call_str(_lib.perps_sign_body, s, body)))

    def sign_body_at(self, body: Text, request_id: Text, timestamp_ms: int) -> Dict[str, str]:
        """``sign_body`` with a caller-chosen x-request-id (hyphenated UUID) and timestamp (ms)."""
        body, request_id = _arg("body", body), _arg("request_id", request_id)
        timestamp_ms = _i64("timestamp_ms", timestamp_ms)
        signed = _using((self,), lambda s: _call_str(_lib.perps_sign_body_at, s, body, request_id, timestamp_ms))
        return json.loads(signed)

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
        code = _using((self,), lambda s: _lib.perps_sign_body_into(s, body, len(body), byref(out)))
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
        _using((self,), lambda c: _call_code(_lib.perps_client_sync_time, c, byref(offset)))
        return offset.value

    def prepare_signin(self, session: Session, chain: Text, address: Text) -> str:
        """POST prepare-signin, verify the challenge, keep it in the session. Returns the
        sign-in payload JSON text: pass it unchanged to the wallet (:func:`wallet_sign`)."""
        chain, address = _arg("chain", chain), _arg("address", address)
        return _using((self, session), lambda c, s: _call_str(_lib.perps_prepare_signin, c, s, chain, address))

    def login(self, session: Session, signature: Text, expires_seconds: int = 0) -> str:
        """POST login with the pending challenge and the wallet's signature; keep the token.
        ``expires_seconds <= 0``: the venue default. Returns the login result JSON text."""
        signature, expires_seconds = _arg("signature", signature), _i64("expires_seconds", expires_seconds)
        return _using((self, session), lambda c, s: _call_str(_lib.perps_login, c, s, signature, expires_seconds))

    def signin(self, session: Session, chain: Text, wallet_key: Secret, expires_seconds: int = 0) -> str:
        """All of sign-in with a wallet key held in-process. Returns the login result JSON text.
        ``wallet_key``: a ``str``, or UTF-8 bytes (a ``bytearray`` you wipe after the call,
        which only reads it); the binding's own copy is wiped before it returns."""
        chain, expires_seconds = _arg("chain", chain), _i64("expires_seconds", expires_seconds)
        secrets = _Secrets()
        try:  # the one shape of a call with secrets: see perps._secrets
            (key,) = secrets.pack(("wallet_key", wallet_key))
            return _using((self, session), lambda c, s: _call_str(_lib.perps_signin, c, s, chain, key, expires_seconds))
        finally:
            secrets.wipe()

    def new_order(self, session: Session, order: JsonObject) -> str:
        """Validate the order (JSON text, or a dict whose ``qty``/``price`` may be Decimals),
        serialise it once, sign and POST it. Returns the venue's JSON text, which carries the
        order's ``cl_ord_id`` (generated when the order has none). Never retried: on a
        PerpsError with ``may_have_reached_venue``, look the order up by its ``cl_ord_id``
        (:meth:`query_order`) before sending again."""
        order = _json_text("order", order)
        return _using((self, session), lambda c, s: _call_str(_lib.perps_new_order, c, s, order))

    def request(self, session: Session, method: Text, path: Text, body: Optional[Text] = None) -> str:
        """Any other endpoint under perps_url (method GET/POST/PUT/DELETE, path from "/");
        a body is signed and sent byte for byte. Never retried, but a GET that found its
        kept-alive connection closed before any answer is sent once more (README "The
        keep-alive race"). Returns the answer text."""
        method, path, body = _arg("method", method), _arg("path", path), _arg("body", body, optional=True)
        return _using((self, session), lambda c, s: _call_str(_lib.perps_request, c, s, method, path, body))

    # -- The trading loop: one method per venue endpoint --------------------------------
    # ``params``: a dict or JSON object text of the endpoint's parameters (see perps.h;
    # checked before anything is sent: INVALID_ARGUMENT names the parameter), or None for
    # none. Each returns the venue's JSON text and is never retried (but a GET query that
    # found its kept-alive connection closed before any answer is sent once more: README
    # "The keep-alive race"). An order already gone (or not visible yet) raises NOT_FOUND. The three public endpoints take session=None.

    def _endpoint(self, fn: Any, session: Optional[Session], params: Optional[JsonObject], public: bool = False) -> str:
        _refuse_floats("params", params)
        params = _json_text("params", params, optional=True)
        if public and session is None:
            return _using((self,), lambda c: _call_str(fn, c, None, params))
        return _using((self, session), lambda c, s: _call_str(fn, c, s, params))

    def cancel_order(self, session: Session, params: JsonObject) -> str:
        """POST /api/cancel_order: ``{"order_id": int}`` or ``{"cl_ord_id": str}``."""
        return self._endpoint(_lib.perps_cancel_order, session, params)

    def cancel_orders(self, session: Session, params: JsonObject) -> str:
        """POST /api/cancel_orders: ``order_id_list`` and/or ``cl_ord_id_list``."""
        return self._endpoint(_lib.perps_cancel_orders, session, params)

    def cancel_all(self, session: Session, params: Optional[JsonObject] = None) -> str:
        """Cancel every open order ``params`` selects (``symbol``, ``cl_ord_id_prefix``; None
        for all), and the named ``cl_ord_id_list`` orders the venue may not list yet (a list
        alone: only those), then confirm each ended with query_order for up to ``confirm_ms`` (default 15000; 0: no
        confirmation). Returns the report JSON ``{"complete", "orders": [{"order_id",
        "cl_ord_id", "symbol", "status", "confirmed"}], "cancel_requests",
        "failed_cancel_requests", "queries", "listing_truncated"}`` (perps.h: perps_cancel_all)."""
        return self._endpoint(_lib.perps_cancel_all, session, params)

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
        authenticated and subscribed (blocking: from asyncio, :meth:`aopen_stream`). In the
        main thread the open runs on a helper thread: an exception a signal handler raises
        (Ctrl-C) interrupts it at once, and the stream it still opens is closed."""
        subscriptions = _subscriptions_text(subscriptions)
        owners = (self,) if session is None else (self, session)

        def open_stream() -> Stream:
            def opened(c: Any, s: Any = None) -> Stream:  # s: None without a session
                return Stream._adopt(_call_handle(_lib.perps_stream_open, c, s, subscriptions))

            return _using(owners, opened)

        return _opened_off_main(open_stream, Stream.close)

    def open_order_stream(self, session: Session) -> Stream:
        """Open the order stream (``ws-api``) and log in with the session's token. Its
        ``session_id`` is the session's ``x-session-id`` when set (REST orders sent with it
        then report here). Returns once logged in (blocking, as :meth:`open_stream`)."""
        def open_stream() -> Stream:
            return _using((self, session), lambda c, s: Stream._adopt(_call_handle(_lib.perps_order_stream_open, c, s)))

        return _opened_off_main(open_stream, Stream.close)

    async def aopen_stream(self, session: Optional[Session], subscriptions: Subscriptions) -> Stream:
        """:meth:`open_stream` for asyncio: the open runs in the loop's default executor,
        the loop running meanwhile; same parameters, result and errors (subscriptions are
        serialised at the call). Cancelled (``task.cancel()``, ``asyncio.wait_for``), it
        raises CancelledError at once and leaves no stream open: the one its open still makes
        is closed."""
        text = _subscriptions_text(subscriptions)
        return await _aopened(lambda: self.open_stream(session, text))

    async def aopen_order_stream(self, session: Session) -> Stream:
        """:meth:`open_order_stream` for asyncio, as :meth:`aopen_stream`."""
        return await _aopened(lambda: self.open_order_stream(session))


# ------------------------------------------------------------------------------------------
# Functions without a handle
# ------------------------------------------------------------------------------------------


def version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.perps_version().decode("ascii")


def wallet_address(chain: Text, private_key: Secret) -> str:
    """The address ``private_key`` controls on ``chain`` ("bsc": EIP-55; "solana": base58).
    ``private_key``: a ``str``, or UTF-8 bytes (a ``bytearray`` you wipe after the call, which
    only reads it); the binding's own copy is wiped before it returns."""
    chain = _arg("chain", chain)
    secrets = _Secrets()
    try:  # the one shape of a call with secrets: see perps._secrets
        (key,) = secrets.pack(("private_key", private_key))
        return _call_str(_lib.perps_wallet_address, chain, key)
    finally:
        secrets.wipe()


def wallet_sign(chain: Text, private_key: Secret, payload_json: Text) -> str:
    """The login signature for a sign-in payload (:meth:`Client.prepare_signin`'s text).
    ``private_key``: as for :func:`wallet_address`."""
    chain, payload_json = _arg("chain", chain), _arg("payload_json", payload_json)
    secrets = _Secrets()
    try:  # the one shape of a call with secrets: see perps._secrets
        (key,) = secrets.pack(("private_key", private_key))
        return _call_str(_lib.perps_wallet_sign, chain, key, payload_json)
    finally:
        secrets.wipe()


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
from ._stream import Stream, _aopened  # noqa: E402  (after the helpers it imports)
