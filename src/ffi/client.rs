//! `perps_client` and the network flows: sign-in, login, orders, other requests, time sync.

use crate::client::Client;
use crate::client::options::ClientOptions;
use crate::ffi::error::{perps_code, perps_error};
use crate::ffi::handles::{borrow, free_handle, into_handle};
use crate::ffi::session::perps_session;
use crate::ffi::strings::{arg_opt_str, arg_str, to_c_string};
use crate::session::Session;
use crate::wallet::Chain;
use std::ffi::c_char;

/// The venue's two base URLs, HTTP settings, one keep-alive connection pool, the cached
/// certificate set and the clock offset. Shared by any number of sessions and threads.
///
/// Made by `perps_client_new`; owned by the caller; freed by `perps_client_free` (after
/// every call using it has returned).
pub struct perps_client {
    pub(crate) inner: std::sync::Arc<Client>,
}

impl crate::ffi::handles::Handle for perps_client {
    const TAG: u64 = u64::from_le_bytes(*b"perps:cl");
    const KIND: &'static str = "perps_client";
}

/// A new client. `base_url` serves sign-in and certs (e.g. "https://api.example"),
/// `perps_url` serves trading; both are required (there is no default venue). A URL is used
/// exactly as written or refused with `PERPS_INVALID_ARGUMENT` (a port out of range, no
/// host, user info, a query or fragment, spaces, non-ASCII, an IPv6 address without
/// brackets, an IPv4 address not in four decimal parts…). Plain `http://` is refused unless
/// the host is loopback or `allow_insecure_http` is set.
/// `options_json` may be NULL or a JSON object with any of: `connect_timeout_ms` (5000),
/// `read_timeout_ms` (10000), `total_timeout_ms` (15000: bounds every phase of a call, the
/// upload of its body included; for an order, reading the symbol rules and waiting for the
/// rate limit too), `max_response_bytes` (1048576), `user_agent`
/// ("libperps/<version>"), `ca_bundle_path` (PEM file of CAs to trust instead of the
/// built-in WebPKI roots), `allow_insecure_http` (false), `certs_ttl_ms` (3600000: how long
/// the venue's key set is trusted before it is fetched again; 0 = for every sign-in),
/// `expected_domain` and `expected_uri` (none; set, the sign-in message's domain and URI must
/// be exactly these; unset, they must name `base_url`'s site — its host or a parent domain of
/// it — unless `base_url` is loopback), `rate_limit` ("off"; "wait" paces account requests to the venue's credit
/// bucket — 45 credits a request, 1,000/s, burst 900 — and every request to the venue's host
/// to its per-IP limit — at most 48 in any 1.1 s for 50/s — waiting only as long as the
/// request keeps at least half of `total_timeout_ms`; "refuse" fails with
/// `PERPS_RATE_LIMITED` instead of sending; one bucket per account and `perps_url`, one
/// per-IP limit per host, shared by every client and session of the process, where the
/// requests of "off" clients are counted too, though they never wait; a venue 429 —
/// an HTTP status or a `code` — empties the account's bucket of a pacing client for its
/// `Retry-After`, at most 10 s, and pauses the host's per-IP limit, whatever the client's
/// mode, for as long after a request of no account, for at most 1.1 s after an account's),
/// `symbol_rules` (false; true checks orders against the venue's symbol list — tick, lot,
/// min/max qty, unknown or disabled symbol — and refuses them locally with
/// `PERPS_INVALID_ORDER`),
/// `symbol_rules_max_age_ms` (60000: a rule read longer ago is read again before it refuses
/// an order), `cl_ord_id_prefix` ("": up to 16 letters, digits, '-' or '_' put before every
/// generated `cl_ord_id`), and the stream options `stream_url`, `order_stream_url`,
/// `max_frame_bytes`, `stream_idle_timeout_ms`, `stream_rotate_after_ms`,
/// `stream_reconnect_min_ms`, `stream_reconnect_max_ms`, `stream_max_connections`,
/// `stream_connects_per_minute` and `stream_request_timeout_ms` (10000: an order-stream
/// request with no outcome that long after it was written is reported by a `request_timeout`
/// status event, its fate unknown; 0: never) (README "Client options"). Unknown options are
/// refused.
#[unsafe(no_mangle)]
pub extern "C" fn perps_client_new(
    base_url: *const c_char,
    perps_url: *const c_char,
    options_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut perps_client {
    ffi_boundary!(err, {
        let base_url = arg_str(base_url, "base_url")?;
        let perps_url = arg_str(perps_url, "perps_url")?;
        let options = ClientOptions::parse(arg_opt_str(options_json, "options_json")?)?;
        Ok(into_handle(perps_client { inner: std::sync::Arc::new(Client::new(base_url, perps_url, options)?) }))
    })
}

/// The two handles every network flow takes, borrowed for the call.
fn client_and_session<'a>(c: *const perps_client, s: *const perps_session) -> crate::Result<(&'a Client, &'a Session)> {
    Ok((&borrow(c, "client")?.inner, &borrow(s, "session")?.inner))
}

/// Free a client. NULL is a no-op; must not be called twice, nor while a call is using it.
#[unsafe(no_mangle)]
pub extern "C" fn perps_client_free(c: *mut perps_client) {
    free_handle(c);
}

/// POST prepare-signin for `chain` ("bsc" or "solana") and wallet `address` with the
/// session's request key id as `requestId`; verify the returned challenge (ES256 signature
/// against the venue's certs — cached for `certs_ttl_ms`, refetched once on an unknown key
/// id or a key that does not verify — no member name twice, `exp`, `iat`, `requestId`, `address`, and a `message` that
/// parses as EIP-4361 text (the Solana wording for solana) whose domain, address, statement,
/// URI, version, chain ID, nonce, issued-at and request ID equal the claims, and the pinned
/// `expected_domain` / `expected_uri`); keep it in the session (with the challenges of other
/// sign-ins under way on it: up to 8, the oldest pushed out). Returns the decoded sign-in
/// payload JSON (its `message` is what the wallet signs). `success: false` →
/// `PERPS_API_ERROR` with the venue's body; a challenge that does not verify →
/// `PERPS_VERIFICATION_FAILED`. An `address` of the wrong shape for its chain — bsc: `0x` and
/// 40 hex digits; solana: base58 of 32 bytes that are a point of Ed25519 (a wallet's public
/// key; about half of the seeds a caller could pass by mistake are none) — is
/// `PERPS_INVALID_ARGUMENT`, nothing sent, and never quoted whole (it may be a key).
#[unsafe(no_mangle)]
pub extern "C" fn perps_prepare_signin(
    c: *const perps_client,
    s: *const perps_session,
    chain: *const c_char,
    address: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let (client, session) = client_and_session(c, s)?;
        let chain = Chain::parse(arg_str(chain, "chain")?)?;
        to_c_string(client.prepare_signin(session, chain, arg_str(address, "address")?)?)
    })
}

/// POST login with the session's verified challenge and the wallet's `signature` (see
/// `perps_wallet_sign`); check the answer's chain and address; keep the token and its
/// expiry. `expires_seconds <= 0` asks for the venue default (604800 s); more than 10 years
/// is `PERPS_INVALID_ARGUMENT`. Without a pending challenge → `PERPS_INVALID_STATE`. With
/// several pending (sign-ins under way at once on the session), the one whose message
/// `signature` signs by its wallet is sent, and only it is then forgotten; a signature of
/// none of them (or one this library cannot check, a contract wallet's) is
/// `PERPS_INVALID_ARGUMENT`, nothing sent.
/// Returns the venue's login result JSON (it contains the token: free it with
/// `perps_string_free`, which overwrites it). A refused login's error quotes the venue's
/// reason but never carries its answer (it may hold a token).
#[unsafe(no_mangle)]
pub extern "C" fn perps_login(
    c: *const perps_client,
    s: *const perps_session,
    signature: *const c_char,
    expires_seconds: i64,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let (client, session) = client_and_session(c, s)?;
        to_c_string(client.login(session, arg_str(signature, "signature")?, expires_seconds)?)
    })
}

/// Sign in with a wallet key held in-process: address from the key, prepare-signin,
/// challenge verification, wallet signature, login — one call, with the challenge it
/// verified (never kept in the session, so sign-ins on one session may run at once).
/// Returns the login result JSON (free with `perps_string_free`).
#[unsafe(no_mangle)]
pub extern "C" fn perps_signin(
    c: *const perps_client,
    s: *const perps_session,
    chain: *const c_char,
    wallet_private_key: *const c_char,
    expires_seconds: i64,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let (client, session) = client_and_session(c, s)?;
        let chain = Chain::parse(arg_str(chain, "chain")?)?;
        let key = arg_str(wallet_private_key, "wallet_private_key")?;
        to_c_string(client.signin(session, chain, key, expires_seconds)?)
    })
}

/// Place an order: validate `order_json`, generate a `cl_ord_id` when it has none (the
/// client's `cl_ord_id_prefix` + 26 characters of Crockford base32: 48-bit milliseconds,
/// 40-bit per-process random number, 40-bit counter — unique across threads and processes),
/// check the symbol rules when that option is on, serialise once, sign exactly those bytes,
/// POST `/api/new_order` with the bearer token and the four signature headers (plus the
/// session's `x-session-id` / `x-impersonate` if set). Returns the venue's JSON object with
/// the order's `cl_ord_id` added (`{"code":0,"message":"success","request_id":…,
/// "cl_ord_id":…}` = submitted). **Never retried**: on `PERPS_TIMEOUT`/`PERPS_TRANSPORT`
/// check `perps_error_may_have_reached_venue`, and look the order up by
/// `perps_error_cl_ord_id(e)` (`perps_query_order`) before sending again. HTTP 200 with a
/// `code` other than 0, 200 or 202 → `PERPS_API_ERROR` (5xx or 408: may have reached the
/// venue), and so is `"success": false` with no code; a `code` that is not an integer written
/// plainly (`0.0`, `1e-400`, `-0`) or is 202 ("accepted": no outcome stated), a success code
/// beside `"success": false`, no code beside words other than "success" or "ok"
/// (`{"message":"alo order rejected"}`), or a `cl_ord_id` other than the one sent →
/// `PERPS_BAD_RESPONSE`, may have reached the venue.
#[unsafe(no_mangle)]
pub extern "C" fn perps_new_order(
    c: *const perps_client,
    s: *const perps_session,
    order_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let (client, session) = client_and_session(c, s)?;
        to_c_string(client.new_order(session, arg_str(order_json, "order_json")?)?)
    })
}

/// Call any other venue endpoint under `perps_url`: `method` is "GET", "POST", "PUT" or
/// "DELETE"; `path` starts with '/' (e.g. "/api/cancel_order", "/api/query_open_orders?symbol=BTC-USD");
/// `body` may be NULL or "" for none. The bearer token is always sent; a body is signed and
/// sent byte for byte. Never retried, but a GET that found its kept-alive connection closed
/// by the venue before any answer is sent once more on another connection (README "The
/// keep-alive race"). Returns the venue's answer as it sent it (free with
/// `perps_string_free`): any JSON — an object whose `code`, when present, is a success
/// (else `PERPS_API_ERROR`), or an array, as funding history and `cancel_orders` answer —
/// or, to a GET, plain text (`/api/health` answers `OK`). A web page, or a POST, PUT or
/// DELETE answered with no JSON (its effect unknown), is `PERPS_BAD_RESPONSE` with
/// `perps_error_may_have_reached_venue` true.
#[unsafe(no_mangle)]
pub extern "C" fn perps_request(
    c: *const perps_client,
    s: *const perps_session,
    method: *const c_char,
    path: *const c_char,
    body: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let (client, session) = client_and_session(c, s)?;
        let method = arg_str(method, "method")?;
        let path = arg_str(path, "path")?;
        to_c_string(client.request(session, method, path, arg_opt_str(body, "body")?)?)
    })
}

/// Read the venue's clock (`GET {perps_url}/api/kline/time`) and keep the offset in the
/// client: every later `x-request-timestamp` of requests sent through this client uses
/// it (`perps_sign_body*` without a client keep the local clock). Writes the offset (venue
/// minus local, milliseconds) to `*offset_ms` when it is not NULL. The answer is Unix
/// seconds: an integer (taken as the middle of that second), a decimal with a fraction, or
/// either inside a JSON string; anything else (an exponent, a sign, a year after 9999) is
/// `PERPS_BAD_RESPONSE` and the offset in use is kept, and so is a time more than 24 h from
/// the local clock either way (no clock is that wrong: the answer, or the local clock, is
/// broken; taken, it would make every sign-in and order fail).
#[unsafe(no_mangle)]
pub extern "C" fn perps_client_sync_time(
    c: *const perps_client,
    offset_ms: *mut i64,
    err: *mut *mut perps_error,
) -> perps_code {
    ffi_boundary!(err, {
        let offset = borrow(c, "client")?.inner.sync_time()?;
        if !offset_ms.is_null() {
            // SAFETY: non-NULL `offset_ms` points to a caller-owned int64_t (contract).
            unsafe { offset_ms.write(offset) };
        }
        Ok(perps_code::PERPS_OK)
    })
}
