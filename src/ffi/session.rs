//! `perps_session`: one identity (request-signing key, chain/wallet, pending challenge,
//! token). Safe to share between threads; calls on one session may run concurrently.

use crate::ffi::error::perps_error;
use crate::ffi::handles::{borrow, free_handle, into_handle};
use crate::ffi::strings::{arg_str, to_c_string};
use crate::session::Session;
use std::ffi::c_char;

/// One identity: an Ed25519 request-signing key (its base58 public key is the request key
/// id, sent as `requestId` at sign-in),
/// the chain and wallet address it signs in for, the verified challenge between
/// prepare-signin and login, and the access token with its expiry.
///
/// Made by `perps_session_new` or `perps_session_from_api_key`; owned by the caller; freed
/// (and its secrets zeroized) by `perps_session_free`. Thread-safe.
pub struct perps_session {
    pub(crate) inner: std::sync::Arc<Session>,
}

impl crate::ffi::handles::Handle for perps_session {
    const TAG: u64 = u64::from_le_bytes(*b"perps:se");
    const KIND: &'static str = "perps_session";
}

/// A new session with a fresh temporary Ed25519 key from the OS random number generator.
/// Returns NULL on failure (`PERPS_RNG`) with `*err` set when `err` is not NULL.
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_new(err: *mut *mut perps_error) -> *mut perps_session {
    ffi_boundary!(err, { Ok(into_handle(perps_session { inner: std::sync::Arc::new(Session::new()?) })) })
}

/// A session for a web-site API credential: its API token and Ed25519 private key (base58
/// 32-byte seed, base58 64-byte keypair, or hex of either). The session can place orders at
/// once. A keypair whose public half does not match its seed is `PERPS_INVALID_KEY`.
/// Neither secret is kept beyond the session (zeroized on free) or quoted in errors. A token
/// that is a JWT with an `exp` claim expires then, as a signed-in session's does (calls fail
/// with `PERPS_TOKEN_EXPIRED`, nothing sent; `perps_session_info` reports `token_expires_at`);
/// an opaque token has no expiry the library could know.
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_from_api_key(
    api_token: *const c_char,
    ed25519_private_key: *const c_char,
    err: *mut *mut perps_error,
) -> *mut perps_session {
    ffi_boundary!(err, {
        let token = arg_str(api_token, "api_token")?;
        let key = arg_str(ed25519_private_key, "ed25519_private_key")?;
        Ok(into_handle(perps_session { inner: std::sync::Arc::new(Session::from_api_key(token, key)?) }))
    })
}

/// The session's request key id: base58 of its Ed25519 public key, sent as `requestId` at
/// sign-in. Not the x-request-id (a fresh id per signed request, `perps_sign_body`) nor the
/// venue's `request_id` (a field of its answers). Free with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_request_id(s: *const perps_session, err: *mut *mut perps_error) -> *mut c_char {
    ffi_boundary!(err, { to_c_string(borrow(s, "session")?.inner.request_id().to_owned()) })
}

/// The session's access token (a secret: handle with care). `PERPS_INVALID_STATE` when the
/// session has none. Free with `perps_string_free` (which overwrites it).
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_token(s: *const perps_session, err: *mut *mut perps_error) -> *mut c_char {
    ffi_boundary!(err, {
        let login = borrow(s, "session")?
            .inner
            .login()
            .ok_or_else(|| crate::Error::invalid_state("the session has no access token"))?;
        to_c_string(login.token.to_string())
    })
}

/// The session's state as JSON, without secrets: `request_id` (the request key id, as
/// `perps_session_request_id`), `has_token`, `chain`,
/// `address`, `alias`, `token_expires_at` (Unix seconds or null), `pending_signin`,
/// `challenge_expires_at`, `session_id`, `impersonate`. Free with `perps_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_info(s: *const perps_session, err: *mut *mut perps_error) -> *mut c_char {
    ffi_boundary!(err, { to_c_string(borrow(s, "session")?.inner.info_json()) })
}

/// Forget the session's token and any pending challenge; later calls that need a token fail
/// with `PERPS_INVALID_STATE` until it signs in again. The key is kept.
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_logout(
    s: *const perps_session,
    err: *mut *mut perps_error,
) -> crate::ffi::error::perps_code {
    ffi_boundary!(err, {
        borrow(s, "session")?.inner.logout();
        Ok(crate::ffi::error::perps_code::PERPS_OK)
    })
}

/// Free a session, zeroizing its key and token. NULL is a no-op; must not be called twice,
/// nor while another thread is using the session.
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_free(s: *mut perps_session) {
    free_handle(s);
}

/// Set the `x-session-id` header sent with the session's order-entry requests — the POSTs of
/// `new_order`, `cancel_order` and `cancel_orders` (through their own calls or
/// `perps_request`) — so that their results are also pushed to the order stream
/// (`perps_order_stream_open`) whose `session_id` is the same; reads and the other calls go
/// without it, so that their results never arrive there unasked for. NULL clears it.
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_set_session_id(
    s: *const perps_session,
    value: *const c_char,
    err: *mut *mut perps_error,
) -> crate::ffi::error::perps_code {
    ffi_boundary!(err, {
        let session = &borrow(s, "session")?.inner;
        session.set_session_id(crate::ffi::strings::arg_opt_str(value, "value")?)?;
        Ok(crate::ffi::error::perps_code::PERPS_OK)
    })
}

/// Set the `x-impersonate` header (a vault id, `cv_…`, the account owns) sent with the
/// session's trading requests; NULL clears it.
#[unsafe(no_mangle)]
pub extern "C" fn perps_session_set_impersonate(
    s: *const perps_session,
    value: *const c_char,
    err: *mut *mut perps_error,
) -> crate::ffi::error::perps_code {
    ffi_boundary!(err, {
        let session = &borrow(s, "session")?.inner;
        session.set_impersonate(crate::ffi::strings::arg_opt_str(value, "value")?)?;
        Ok(crate::ffi::error::perps_code::PERPS_OK)
    })
}
