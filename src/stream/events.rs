//! The events a caller receives from `next`, one JSON object each (the queue between the I/O
//! thread and the caller is `queue.rs`).
//!
//! Shapes (fields may be added, never renamed):
//! - venue pushes: `{"channel","seq","symbol"?,"data","received_ns"}`;
//! - order-stream replies: `{"channel":"order_response","request_id","code","message","final",
//!   "matched","repeat","contradicts","outcome_unknown","method","cl_ord_id","order_id","frame",
//!   "received_ns"}` (`repeat`: an outcome the venue sent again for a request whose outcome was
//!   passed on, `contradicts` when it says otherwise than the first;
//!   `outcome_unknown`: an outcome whose code, 5xx or 408 or no plain integer, leaves the
//!   request's effect unknown — `orders.rs`);
//! - everything about the connection: `{"channel":"status","state",…,"received_ns"}`, and an
//!   order-stream request past its deadline: `"state":"request_timeout"` (`orders/deadlines.rs`);
//! - a push that could not be read: `"state":"error"` with `"subscription":{"channel","symbol"}`
//!   and `"seq"`; a subscription the venue refused the same, with `"refused":true` (no push
//!   will come on it until a reconnection subscribes again; `refusals.rs`).

pub use super::queue::{Kind, Queue, Tables};
use crate::error::Error;
use serde_json::{Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

/// Wall-clock time in nanoseconds since the Unix epoch (what `received_ns` carries).
pub fn now_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64)
}

/// A status event: `{"channel":"status","state":…, …fields, "received_ns":…}`.
pub fn status(state: &str, fields: Value) -> String {
    let mut event = json!({ "channel": "status", "state": state });
    if let (Value::Object(event), Value::Object(fields)) = (&mut event, fields) {
        event.extend(fields);
        event.insert("received_ns".into(), now_ns().into());
    }
    event.to_string()
}

/// A non-fatal problem with what the venue sent (the connection goes on).
pub fn error_status(error: &Error, frame_excerpt: Option<&str>) -> String {
    status("error", error_fields(error, frame_excerpt))
}

/// The fields of an `error` status event.
fn error_fields(error: &Error, frame_excerpt: Option<&str>) -> Value {
    json!({
        "code": error.code() as i32,
        "code_name": error.code().name(),
        "message": error.message(),
        "frame": frame_excerpt,
    })
}

/// An excerpt of a frame for an `error` event, its JSON escapes written out first
/// (`redact::unescaped`) so that redaction sees what a reader would.
fn frame_excerpt(frame: &str) -> String {
    crate::error::excerpt(&crate::redact::unescaped(frame))
}

/// A frame that could not be read: `error_status` with an excerpt of the frame.
pub fn bad_frame(error: &Error, frame: &str) -> String {
    error_status(error, Some(&frame_excerpt(frame)))
}

/// A push of a known channel that could not be read: `bad_frame`, naming the subscription it
/// came on — its channel, and the symbol its event would have named (or null) — and its `seq`
/// (or null), so that an engine knows which book or channel it may have missed.
pub fn bad_push(error: &Error, frame: &str, channel: &str, symbol: Option<&str>, seq: Value) -> String {
    let mut fields = error_fields(error, Some(&frame_excerpt(frame)));
    fields["subscription"] = json!({ "channel": channel, "symbol": symbol });
    fields["seq"] = seq;
    status("error", fields)
}

/// A subscription the venue refused (`refusals.rs`): `bad_push`'s event with `"refused":true`.
pub fn refused_subscription(error: &Error, frame: &str, channel: &str, symbol: Option<&str>, seq: Value) -> String {
    let mut fields = error_fields(error, Some(&frame_excerpt(frame)));
    fields["subscription"] = json!({ "channel": channel, "symbol": symbol });
    fields["seq"] = seq;
    fields["refused"] = true.into();
    status("error", fields)
}
