//! `perps_stream`: the venue's two WebSockets through a poll model.

use crate::ffi::client::perps_client;
use crate::ffi::error::perps_error;
use crate::ffi::handles::{borrow, borrow_or_null, free_handle, into_handle};
use crate::ffi::session::perps_session;
use crate::ffi::strings::{arg_str, public_to_c_string, to_c_string};
use crate::stream::Stream;
use std::ffi::c_char;
use std::time::Duration;

/// One open WebSocket stream: the market + account stream (`perps_stream_open`) or the order
/// stream (`perps_order_stream_open`), served by a background I/O thread of the library that
/// never runs caller code. Read its events with `perps_stream_next`.
///
/// Thread safety: `perps_stream_next`, `perps_stream_new_order`, `perps_stream_cancel_order`
/// and `perps_stream_close` may be called from any threads at once. The stream keeps what it
/// needs of its client and session alive itself: they may be freed before it.
///
/// Owned by the caller; `perps_stream_free` closes it and frees it (after every other call
/// on it has returned: call `perps_stream_close` first to wake a blocked `perps_stream_next`).
pub struct perps_stream {
    inner: Stream,
}

impl crate::ffi::handles::Handle for perps_stream {
    const TAG: u64 = u64::from_le_bytes(*b"perps:st");
    const KIND: &'static str = "perps_stream";
}

/// Open the market + account stream (`ws-stream`; URL: client option `stream_url`, default
/// `wss://<perps_url host and path>/ws-stream/v1`). `subscriptions_json` is a JSON array of
/// `{"channel":C,"symbol":S}` with C one of "price", "depth_book", "public_trade" (S
/// required) and, with a session, `{"channel":C}` with C one of "order", "position",
/// "balance", "trade". `s` may be NULL for public channels only; with a session the auth
/// frame (`{"auth":{"token":…,"streams":[account channels]}}`) is sent and its answer (code
/// 0 or 200) awaited. Returns once connected, authenticated and subscribed; the first
/// event is `{"channel":"status","state":"connected",…}`. Errors: `PERPS_INVALID_ARGUMENT`
/// (bad subscriptions, naming the entry), `PERPS_INVALID_STATE` (session without token),
/// `PERPS_TOKEN_EXPIRED`, `PERPS_TRANSPORT`/`PERPS_TIMEOUT`, `PERPS_HTTP_STATUS` (handshake
/// refused: the status, body and, for a 429 or 503, `perps_error_retry_after_ms`),
/// `PERPS_API_ERROR` (auth refused, on channel `auth` or plainly on another: README; or
/// answered with a code that says "not now", 5xx, 408 or 429, which on a later
/// reconnection is retried instead), `PERPS_STREAM_LIMIT`.
/// Free with `perps_stream_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_stream_open(
    c: *const perps_client,
    s: *const perps_session,
    subscriptions_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut perps_stream {
    ffi_boundary!(err, {
        let client = borrow(c, "client")?.inner.clone();
        let session = borrow_or_null(s, "session")?.map(|s| s.inner.clone());
        let subscriptions = arg_str(subscriptions_json, "subscriptions_json")?;
        Ok(into_handle(perps_stream { inner: Stream::open_market(client, session, subscriptions)? }))
    })
}

/// Open the order stream (`ws-api`; URL: client option `order_stream_url`, default
/// `wss://<perps_url host and path>/ws-api/v1`) and log in (`auth:login` with the session's
/// token; code 0 or 200 is success). Its `session_id` is the session's `x-session-id`
/// (`perps_session_set_session_id`, set before opening) when one is set — REST orders sent
/// with it then report on this stream — or else a fresh UUID; the `connected` event
/// carries it. Errors as `perps_stream_open`. Free with `perps_stream_free`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_order_stream_open(
    c: *const perps_client,
    s: *const perps_session,
    err: *mut *mut perps_error,
) -> *mut perps_stream {
    ffi_boundary!(err, {
        let client = borrow(c, "client")?.inner.clone();
        let session = borrow(s, "session")?.inner.clone();
        Ok(into_handle(perps_stream { inner: Stream::open_orders(client, session)? }))
    })
}

/// The next event as a JSON object (free with `perps_string_free`), waiting up to
/// `timeout_ms` milliseconds (0: do not wait; negative: no limit). Returns NULL with `*err`
/// left NULL when the time passes first. Events: venue pushes `{"channel","seq","symbol"?,
/// "data","received_ns"}` (depth_book levels sorted: bids high to low, asks low to high);
/// order replies `{"channel":"order_response","request_id","code","message","final",
/// "matched","repeat","contradicts","outcome_unknown","success",…}` (`final` false for the
/// "accepted" ack; `matched` false for a frame of no request of this stream awaiting its
/// outcome; `repeat` true for an outcome the venue sent again for a request whose outcome was
/// already given — never that request's outcome, never `outcome_unknown`, and naming that
/// request's `method`, `cl_ord_id` and `order_id`; `contradicts` true for a repeat whose
/// verdict (a success, a refusal, or an unknown effect) differs from the first copy's: the
/// venue said two things, so query the order; `outcome_unknown` true for an outcome (not a
/// repeat) whose `code` is 5xx or 408, or not an integer written plainly, or absent beside
/// words other than "success" or "ok": the order or cancel may have been acted on, so query
/// it before sending it again; `success` true for an outcome whose code says success — 0 or
/// 200, as a number or a string of digits, or no code with no word, "success" or "ok" — and
/// false for an ack, a refusal and an unknown outcome: read it rather than the code); frames
/// of no known channel
/// `{"channel":"unrecognized","frame",…}` (with `"answers":"auth:login"` for a late answer
/// to a login of an earlier connection); and
/// `{"channel":"status","state":S,…}` with S one of connected, disconnected, reconnecting,
/// reconnect_failed, reconnected, gap, seq_regression, error (with `"refused":true` and
/// `subscription` for a subscription the venue refused), overflow, failed, and on the
/// order stream request_timeout (a request with no outcome `stream_request_timeout_ms` after
/// it was written: its fate unknown).
/// `received_ns` is the receive time in nanoseconds since the Unix epoch. After
/// `perps_stream_close` (which wakes a blocked call at once), or once a stream that
/// ended (`failed` event) has given all its events: NULL with `PERPS_STREAM_CLOSED`.
#[unsafe(no_mangle)]
pub extern "C" fn perps_stream_next(
    st: *const perps_stream,
    timeout_ms: i64,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let stream = &borrow(st, "stream")?.inner;
        let timeout = (timeout_ms >= 0).then(|| Duration::from_millis(timeout_ms as u64));
        match stream.next(timeout)? {
            // Events hold venue data and status, none of the library's secrets.
            Some(event) => public_to_c_string(event),
            None => Ok(std::ptr::null_mut()),
        }
    })
}

/// Order stream only: validate `order_json` (as `perps_new_order`), generate a `cl_ord_id`
/// when it has none, check it against the symbol rules when the client option
/// `symbol_rules` is on (as `perps_new_order`: a rules read it needs blocks the call; a
/// refusal about a tick or an order qty in its outcome marks the rules to be read again),
/// sign the exact params text, and write the `order:new` frame. Returns
/// `{"request_id":…,"cl_ord_id":…}` as soon as the frame is written, without waiting for
/// the venue: its replies arrive as `order_response` events with that `request_id` (an
/// "accepted" ack with `final` false, then the outcome with `final` true). Errors:
/// `PERPS_INVALID_ORDER` (the order, or the symbol rules, refuse it: nothing sent),
/// `PERPS_INVALID_STATE` (a market stream; or 100,000 requests of
/// the stream already awaiting their outcome, none yet listed `unanswered` nor reported by a
/// `request_timeout` event: nothing sent),
/// `PERPS_STREAM_CLOSED` (closed, or ended or ending for good: nothing sent; the message
/// names the cause; `perps_stream_next` still gives the `disconnected` and `failed` events
/// of the end, the `unanswered` list included — but when `perps_stream_close` cut short a
/// write the socket had taken part of, `perps_error_may_have_reached_venue` is true),
/// `PERPS_TRANSPORT` (not connected, or the connection closing,
/// e.g. after the venue's Close frame: nothing sent; or the write failed:
/// `perps_error_may_have_reached_venue` is true, and the message names the frame's
/// `request_id`, the one the `unanswered` list of the `disconnected` event names),
/// `PERPS_TIMEOUT` (the frame could not be written out within `read_timeout_ms`, "the venue
/// is not reading": `perps_error_may_have_reached_venue` true, the `request_id` named); with
/// `symbol_rules`, a read of the rules that fails ends the call as in `perps_new_order`
/// (`PERPS_TIMEOUT`, `PERPS_TRANSPORT`, `PERPS_RATE_LIMITED` or `PERPS_BAD_RESPONSE`, the
/// message starting "symbol rules could not be fetched": nothing sent). Never retried.
/// Not paced by the client option `rate_limit`: the venue's documents do not say whether
/// order-stream requests draw on the REST credit bucket (README "Pacing"); a refusal for
/// the rate, if the venue sends one, is the request's outcome like any other refusal.
#[unsafe(no_mangle)]
pub extern "C" fn perps_stream_new_order(
    st: *const perps_stream,
    order_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let stream = &borrow(st, "stream")?.inner;
        to_c_string(stream.new_order(arg_str(order_json, "order_json")?)?)
    })
}

/// Order stream only: `order:cancel` with `params_json` `{"order_id":N}` and/or
/// `{"cl_ord_id":"…"}` (as REST `cancel_order`), signed. Returns `{"request_id":…,
/// "order_id"?,"cl_ord_id"?}` once the frame is written; replies and errors as for
/// `perps_stream_new_order`, except that bad params are `PERPS_INVALID_ARGUMENT` (naming
/// the field) and no symbol rules are read.
#[unsafe(no_mangle)]
pub extern "C" fn perps_stream_cancel_order(
    st: *const perps_stream,
    params_json: *const c_char,
    err: *mut *mut perps_error,
) -> *mut c_char {
    ffi_boundary!(err, {
        let stream = &borrow(st, "stream")?.inner;
        to_c_string(stream.cancel_order(arg_str(params_json, "params_json")?)?)
    })
}

/// Close the stream from any thread: a `perps_stream_next` blocked in another thread returns
/// at once (NULL, `PERPS_STREAM_CLOSED`), and so does every later call. The handle stays
/// valid until `perps_stream_free`. NULL is a no-op; closing twice is harmless.
#[unsafe(no_mangle)]
pub extern "C" fn perps_stream_close(st: *const perps_stream) {
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // NULL, or not a live stream: nothing to close.
        if let Ok(Some(stream)) = borrow_or_null(st, "stream") {
            stream.inner.close();
        }
    }));
}

/// Close and free a stream; waits at most about 2 s for its I/O thread (one still busy
/// after that finishes alone; a name lookup, TCP connect or handshake under way is cut short
/// by the close). NULL is a no-op; must not be called twice,
/// nor while another call on the stream is running.
#[unsafe(no_mangle)]
pub extern "C" fn perps_stream_free(st: *mut perps_stream) {
    free_handle(st);
}
