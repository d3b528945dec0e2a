//! Body signatures through the C ABI: JSON out, caller-chosen id/time, and the
//! allocation-free hot path writing into a caller-owned struct.

use crate::body_sign::{self, BodySignature};
use crate::error::{Error, Result};
use crate::ffi::error::{perps_code, perps_error};
use crate::ffi::handles::borrow;
use crate::ffi::session::perps_session;
use crate::ffi::strings::{arg_bytes, arg_str, to_c_string};
use std::ffi::c_char;

/// Size of `perps_body_signature.version` ("v1" and its NUL, padded).
pub const PERPS_SIGN_VERSION_SIZE: usize = 4;
/// Size of `perps_body_signature.request_id` (a 36-character UUID and its NUL, padded).
pub const PERPS_REQUEST_ID_SIZE: usize = 40;
/// Size of `perps_body_signature.timestamp` (up to 19 digits and its NUL, padded).
pub const PERPS_TIMESTAMP_SIZE: usize = 24;
/// Size of `perps_body_signature.signature` (88 base64 characters and its NUL, padded).
pub const PERPS_SIGNATURE_SIZE: usize = 96;

/// The four header values of a signed body, as NUL-terminated strings in fixed-size fields
/// owned by the caller (typically on its stack). Filled by `perps_sign_body_into`.
///
/// Send them as `x-request-sign-version`, `x-request-id`, `x-request-timestamp` and
/// `x-request-signature`, with exactly the body bytes that were signed.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct perps_body_signature {
    /// `x-request-sign-version`: "v1".
    pub version: [c_char; PERPS_SIGN_VERSION_SIZE],
    /// `x-request-id`: a fresh UUID v4, lower case, hyphenated (the per-request id; not the
    /// session's request key id, nor the venue's `request_id`).
    pub request_id: [c_char; PERPS_REQUEST_ID_SIZE],
    /// `x-request-timestamp`: milliseconds since the Unix epoch, decimal.
    pub timestamp: [c_char; PERPS_TIMESTAMP_SIZE],
    /// `x-request-signature`: standard padded base64 of the 64-byte Ed25519 signature.
    pub signature: [c_char; PERPS_SIGNATURE_SIZE],
}

fn fill<const N: usize>(field: &mut [c_char; N], text: &str) {
    // Every value is shorter than its field (sizes above), so the NUL always fits.
    for (dst, src) in field.iter_mut().zip(text.bytes()) {
        *dst = src as c_char;
    }
    field[text.len().min(N - 1)] = 0;
}

impl From<&BodySignature> for perps_body_signature {
    fn from(sig: &BodySignature) -> Self {
        let mut out = perps_body_signature {
            version: [0; PERPS_SIGN_VERSION_SIZE],
            request_id: [0; PERPS_REQUEST_ID_SIZE],
            timestamp: [0; PERPS_TIMESTAMP_SIZE],
            signature: [0; PERPS_SIGNATURE_SIZE],
        };
        fill(&mut out.version, sig.version());
        fill(&mut out.request_id, sig.request_id());
        fill(&mut out.timestamp, sig.timestamp());
        fill(&mut out.signature, sig.signature());
        out
    }
}

fn body_text(body: &[u8]) -> Result<&[u8]> {
    // A request body is JSON, so UTF-8; refusing other bytes catches a wrong buffer early.
    std::str::from_utf8(body).map(str::as_bytes).map_err(|e| {
        Error::invalid_argument(format!("body is not valid UTF-8 (bad byte at offset {})", e.valid_up_to()))
    })
}

/// Sign `body` (NUL-terminated UTF-8, signed byte for byte) with a fresh UUID v4 and the
/// local clock. Returns JSON of the four headers:
/// `{"x-request-sign-version":"v1","x-request-id":…,"x-request-timestamp":…,"x-request-signature":…}`.
/// The signature is hedged: its nonce also mixes in fresh randomness, so no two signatures
/// share one (a valid Ed25519 signature for every verifier). No network. Free the result with
/// `perps_string_free`. A signature that fails its checks before release (a fault while
/// signing) is withheld: `PERPS_VERIFICATION_FAILED` (README, "The signer").
#[unsafe(no_mangle)]
pub extern "C" fn perps_sign_body(
    s: *const perps_session,
    body: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let session = borrow(s, "session")?;
        let body = arg_str(body, "body")?;
        to_c_string(session.inner.sign_body_now(body.as_bytes(), body_sign::now_ms())?.to_headers_json())
    })
}

/// Like `perps_sign_body` with a caller-chosen `request_id` (the x-request-id: a hyphenated
/// UUID, used exactly as given) and `timestamp_ms` (milliseconds since the Unix epoch, ≥ 0),
/// and RFC 8032's deterministic signature (the same every time, R computed by the reference
/// code): for test vectors. A logged fresh request is checked by verifying its signature,
/// since fresh signatures are hedged. Free the result with `perps_string_free`. Each signature
/// is verified before release; one that fails (a fault while signing) is withheld:
/// `PERPS_VERIFICATION_FAILED`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_sign_body_at(
    s: *const perps_session,
    body: *const c_char,
    request_id: *const c_char,
    timestamp_ms: i64,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let session = borrow(s, "session")?;
        let body = arg_str(body, "body")?;
        let request_id = arg_str(request_id, "request_id")?;
        to_c_string(session.inner.sign_body_at(body.as_bytes(), request_id, timestamp_ms)?.to_headers_json())
    })
}

/// The hot path: sign `len` bytes at `body` (UTF-8; need not be NUL-terminated; NULL only
/// with `len` 0) with a fresh UUID v4 and the local clock (a hedged signature, as
/// `perps_sign_body`), and write the four header values into `*out`. Allocates nothing. Returns `PERPS_OK`, or a code (`PERPS_INVALID_ARGUMENT`
/// for a NULL pointer or non-UTF-8 body, `PERPS_RNG`, `PERPS_VERIFICATION_FAILED` for a signature
/// withheld by its checks); `*out` is written only on success.
#[unsafe(no_mangle)]
pub extern "C" fn perps_sign_body_into(
    s: *const perps_session,
    body: *const u8,
    len: usize,
    out: *mut perps_body_signature,
) -> perps_code {
    ffi_boundary!({
        let session = borrow(s, "session")?;
        let body = body_text(arg_bytes(body, len, "body")?)?;
        if out.is_null() {
            return Err(Error::invalid_argument("out is NULL"));
        }
        let signed = perps_body_signature::from(&session.inner.sign_body_now(body, body_sign::now_ms())?);
        // SAFETY: `out` is non-NULL and points to a caller-owned struct (contract).
        unsafe { out.write(signed) };
        Ok(perps_code::PERPS_OK)
    })
}
