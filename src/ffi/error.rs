//! `perps_error`: one failure handed to the caller, with accessors and a `_free`.

use crate::error::{Code, Error};
use crate::ffi::handles::{free_handle, into_handle};
use std::ffi::{CString, c_char};

/// Result codes. The numbers are stable and never reused.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum perps_code {
    /// Success.
    PERPS_OK = 0,
    /// An argument is NULL, not UTF-8, or malformed.
    PERPS_INVALID_ARGUMENT = 1,
    /// A private key could not be parsed, or a keypair's halves do not match.
    PERPS_INVALID_KEY = 2,
    /// The order is invalid: a field is missing, unknown, of the wrong type or out of range.
    PERPS_INVALID_ORDER = 3,
    /// A signature or a challenge claim did not verify.
    PERPS_VERIFICATION_FAILED = 4,
    /// Not allowed in the session's current state (e.g. login before prepare-signin).
    PERPS_INVALID_STATE = 5,
    /// The connection failed; see `perps_error_may_have_reached_venue`.
    PERPS_TRANSPORT = 6,
    /// A time limit was reached; see `perps_error_may_have_reached_venue`.
    PERPS_TIMEOUT = 7,
    /// The venue answered a non-2xx HTTP status; see `perps_error_http_status` and `_body`.
    PERPS_HTTP_STATUS = 8,
    /// The venue answered 2xx but refused (`success: false`, or a `code` other than 0 or
    /// 200); see `_body`.
    PERPS_API_ERROR = 9,
    /// The venue's answer is not JSON, has the wrong shape, or is too large.
    PERPS_BAD_RESPONSE = 10,
    /// The session's access token has expired; nothing was sent.
    PERPS_TOKEN_EXPIRED = 11,
    /// The operating system's random number generator failed.
    PERPS_RNG = 12,
    /// The venue's HTTP 404 from one of the endpoint calls (`perps_cancel_order`,
    /// `perps_query_order`, …): "order not found" — already gone, or not visible yet (a new
    /// order can stay unknown for up to ~10 s). On positive evidence only: the 404's reason
    /// (`message`, `msg`, `error`, `detail`, or a text's first line) names an order, outside
    /// any path, and says it is missing ("order not found", "unknown order", "no such
    /// order"), or its JSON `code` is 404 with no words. Any other 404 — an empty body, a bare
    /// "Not Found", a path echoed back,
    /// an HTML page, a gateway's words that no route matched (a proxy's or web server's
    /// answer, e.g. for a wrong URL or path prefix, or during a deployment) — says nothing
    /// about the order, which may be live, and is `PERPS_HTTP_STATUS`. Also the venue's
    /// `code` 404 in an HTTP 200 answer of those calls.
    /// `perps_new_order` and `perps_request` report every 404 as `PERPS_HTTP_STATUS`.
    PERPS_NOT_FOUND = 13,
    /// Refused locally by the client's rate limiter (option `rate_limit`); nothing was sent.
    /// `perps_error_retry_after_ms` says when a request would be allowed. The venue's own
    /// HTTP 429 is `PERPS_HTTP_STATUS` with status 429.
    PERPS_RATE_LIMITED = 14,
    /// The stream was closed by `perps_stream_close`, or has ended for good (e.g. an expired
    /// token): `perps_stream_next` gives it after the terminal
    /// `{"channel":"status","state":"failed"}` event; a request, as soon as the stream is
    /// ending (its `disconnected` and `failed` events are still to be read).
    PERPS_STREAM_CLOSED = 15,
    /// Opening a WebSocket would break the venue's connection limits (10 open per IP, 30
    /// new per minute, counted across this process per venue host); nothing was sent.
    PERPS_STREAM_LIMIT = 16,
    /// A panic was caught inside the library (a bug; please report it). What the call sent
    /// before it is unknown: `perps_error_may_have_reached_venue` is true.
    PERPS_PANIC = 99,
}

impl From<Code> for perps_code {
    fn from(code: Code) -> Self {
        match code {
            Code::InvalidArgument => perps_code::PERPS_INVALID_ARGUMENT,
            Code::InvalidKey => perps_code::PERPS_INVALID_KEY,
            Code::InvalidOrder => perps_code::PERPS_INVALID_ORDER,
            Code::VerificationFailed => perps_code::PERPS_VERIFICATION_FAILED,
            Code::InvalidState => perps_code::PERPS_INVALID_STATE,
            Code::Transport => perps_code::PERPS_TRANSPORT,
            Code::Timeout => perps_code::PERPS_TIMEOUT,
            Code::HttpStatus => perps_code::PERPS_HTTP_STATUS,
            Code::ApiError => perps_code::PERPS_API_ERROR,
            Code::BadResponse => perps_code::PERPS_BAD_RESPONSE,
            Code::TokenExpired => perps_code::PERPS_TOKEN_EXPIRED,
            Code::Rng => perps_code::PERPS_RNG,
            Code::NotFound => perps_code::PERPS_NOT_FOUND,
            Code::RateLimited => perps_code::PERPS_RATE_LIMITED,
            Code::StreamClosed => perps_code::PERPS_STREAM_CLOSED,
            Code::StreamLimit => perps_code::PERPS_STREAM_LIMIT,
            Code::Panic => perps_code::PERPS_PANIC,
        }
    }
}

/// One failure: a code, a message, and where it applies the HTTP status, the venue's
/// response body, and whether the request may have reached the venue.
///
/// Returned through the `perps_error **err` out-parameter of a failing call (only when
/// `err` is not NULL). Owned by the caller: free it with `perps_error_free`. Strings
/// returned by its accessors live as long as the error object.
pub struct perps_error {
    error: Error,
    message: CString,
    body: Option<CString>,
    cl_ord_id: Option<CString>,
    request_id: Option<CString>,
    stream_request_id: Option<CString>,
}

impl crate::ffi::handles::Handle for perps_error {
    const TAG: u64 = u64::from_le_bytes(*b"perps:er");
    const KIND: &'static str = "perps_error";
}

impl perps_error {
    /// A new live error, stored in the caller's variable at address `slot`.
    fn new_raw(error: Error, slot: usize) -> *mut perps_error {
        let message = c_text(error.message());
        let body = error.body().map(c_text);
        let cl_ord_id = error.cl_ord_id().map(c_text);
        let request_id = error.request_id().map(c_text);
        let stream_request_id = error.stream_request_id().map(c_text);
        let raw = into_handle(perps_error { error, message, body, cl_ord_id, request_id, stream_request_id });
        live_errors().insert(raw as usize, slot);
        raw
    }

    /// Store a new error in the caller's `*err`. The error this library stored in that same
    /// variable, if it is still there and nobody freed it, is freed first (a caller who
    /// reuses `err` without freeing would otherwise leak it). Anything else found there is
    /// only overwritten, never read through nor freed: a freed or foreign pointer, garbage,
    /// and also a stale copy whose address the allocator has since given to a new error
    /// stored in *another* variable — that error belongs to someone else.
    ///
    /// # Safety
    /// `err` is NULL or points to a writable `perps_error *` (the header's contract).
    pub(crate) unsafe fn store(err: *mut *mut perps_error, error: Error) {
        if err.is_null() {
            return;
        }
        let slot = err as usize;
        // SAFETY: `err` points to a caller-owned `perps_error *` (contract); only its value
        // is read here.
        let earlier = unsafe { err.read() } as usize;
        let stored_here = earlier != 0 && {
            let mut live = live_errors();
            let here = live.get(&earlier) == Some(&slot);
            if here {
                live.remove(&earlier);
            }
            here
        };
        if stored_here {
            free_handle(earlier as *mut perps_error);
        }
        // SAFETY: as above.
        unsafe { err.write(perps_error::new_raw(error, slot)) };
    }
}

/// Every `perps_error` this library made and that is not freed yet, by address, with the
/// address of the caller's variable it was stored in: the one way to tell a live error from
/// a dangling pointer without reading through it (and, by the variable, a live error from a
/// stale copy of a freed one whose address was reused). Errors are the failure path only,
/// so a lock here costs the fast path nothing.
fn live_errors() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<usize, usize>> {
    static LIVE: std::sync::Mutex<std::collections::BTreeMap<usize, usize>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    LIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Whether `e` is an error this library made and nobody freed.
fn is_live(e: *const perps_error) -> bool {
    !e.is_null() && live_errors().contains_key(&(e as usize))
}

/// Text with any NUL bytes made visible, so it always fits a C string.
fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', "\\0")).unwrap_or_default()
}

/// Read a live error; NULL, or a pointer that is not a live error of this library (already
/// freed, or never one), reads as no error instead of through a dangling pointer.
fn with_error<T>(e: *const perps_error, absent: T, read: impl FnOnce(&perps_error) -> T) -> T {
    if !is_live(e) {
        return absent;
    }
    // A live error came from `new_raw` and is not freed yet: its tag is an error's.
    match crate::ffi::handles::borrow_or_null(e, "e") {
        Ok(Some(e)) => read(e),
        _ => absent,
    }
}

/// The error's code. `PERPS_INVALID_ARGUMENT` when `e` is NULL.
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_code(e: *const perps_error) -> perps_code {
    with_error(e, perps_code::PERPS_INVALID_ARGUMENT, |e| e.error.code().into())
}

/// The error's message (UTF-8, never NULL, never contains a secret). Borrowed: valid until
/// `perps_error_free(e)`. A static text when `e` is NULL.
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_message(e: *const perps_error) -> *const c_char {
    with_error(e, c"no error object (NULL)".as_ptr(), |e| e.message.as_ptr())
}

/// The HTTP status of the venue's answer, or 0 when there was none (or `e` is NULL).
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_http_status(e: *const perps_error) -> u16 {
    with_error(e, 0, |e| e.error.http_status())
}

/// The venue's response body, or NULL when there was none. Borrowed: valid until
/// `perps_error_free(e)`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_body(e: *const perps_error) -> *const c_char {
    with_error(e, std::ptr::null(), |e| e.body.as_ref().map_or(std::ptr::null(), |b| b.as_ptr()))
}

/// Whether the request may have been received and acted on by the venue. When true for an
/// order, do not resend it blindly: query the venue first (the library never retries).
/// True after `PERPS_PANIC`: what the call sent before the bug is unknown.
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_may_have_reached_venue(e: *const perps_error) -> bool {
    with_error(e, false, |e| e.error.may_have_reached_venue())
}

/// The `cl_ord_id` of the order a failed `perps_new_order` or `perps_stream_new_order` was
/// placing — the caller's, or the one the library generated — so the order can be looked up
/// (`perps_query_order` with `{"cl_ord_id":…}`) before deciding to send it again; for a
/// failed `perps_stream_cancel_order`, the `cl_ord_id` its params named; for a failed
/// `perps_request` POST to `/api/new_order`, the `cl_ord_id` string its body names (none is
/// made up for a body without one). NULL for other calls, when the call failed before the
/// order's id was decided (a NULL argument, no usable token, invalid JSON or fields), or
/// when `e` is NULL.
/// Borrowed: valid until `perps_error_free(e)`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_cl_ord_id(e: *const perps_error) -> *const c_char {
    with_error(e, std::ptr::null(), |e| e.cl_ord_id.as_ref().map_or(std::ptr::null(), |v| v.as_ptr()))
}

/// The `x-request-id` header value sent with the failed request (body-signed requests:
/// `perps_new_order`, the POST endpoint calls, `perps_request` with a body; over the order
/// stream, the `x-request-id` of a frame that may have been partly written — not the
/// frame's envelope `request_id`: that is `perps_error_stream_request_id`). NULL when no
/// request bytes were sent, for unsigned requests (GET), or when `e` is NULL.
/// Borrowed: valid until `perps_error_free(e)`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_request_id(e: *const perps_error) -> *const c_char {
    with_error(e, std::ptr::null(), |e| e.request_id.as_ref().map_or(std::ptr::null(), |v| v.as_ptr()))
}

/// The envelope `request_id` of an order-stream request (`perps_stream_new_order`,
/// `perps_stream_cancel_order`) whose frame may have been partly written when the write
/// failed: the id the stream's `order_response` events and the `unanswered` list of its next
/// `{"channel":"status","state":"disconnected"}` event name (none follows when the write was
/// cut short by `perps_stream_close`), so the caller can match the request's fate (its
/// `cl_ord_id`: `perps_error_cl_ord_id`). Such an error also says
/// `perps_error_may_have_reached_venue`. Not the `x-request-id` (`perps_error_request_id`).
/// NULL for every other error — a request refused before any of its frame was written, an
/// error of any other call — or when `e` is NULL.
/// Borrowed: valid until `perps_error_free(e)`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_stream_request_id(e: *const perps_error) -> *const c_char {
    with_error(e, std::ptr::null(), |e| e.stream_request_id.as_ref().map_or(std::ptr::null(), |v| v.as_ptr()))
}

/// How long to wait before asking again, in milliseconds: from the `Retry-After` header of a
/// venue's HTTP 429 or 503 (seconds or an HTTP date; a REST answer, or the answer to a
/// stream's WebSocket upgrade at open), or from the local rate limiter
/// (`PERPS_RATE_LIMITED`). -1 when unknown (or `e` is NULL). A `Retry-After` too long to
/// count in milliseconds (over `INT64_MAX` / 1000 seconds) gives `INT64_MAX`, the longest
/// wait: cap the value before converting it to a duration or adding it to a time, where it
/// would overflow (the library's own waits on it are capped).
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_retry_after_ms(e: *const perps_error) -> i64 {
    with_error(e, -1, |e| e.error.retry_after_ms().unwrap_or(-1))
}

/// Free an error. NULL is a no-op, and so is a pointer that is not a live error of this
/// library (one already freed: a second free does nothing — unless the allocator has since
/// given its address to a newer error, which a second free would free: never free twice).
#[unsafe(no_mangle)]
pub extern "C" fn perps_error_free(e: *mut perps_error) {
    if !e.is_null() && live_errors().remove(&(e as usize)).is_some() {
        free_handle(e);
    }
}
