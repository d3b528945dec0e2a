//! Frames passed on as they are: valid JSON of no known channel, or of a shape the push paths
//! do not read, becomes an `unrecognized` event (never dropped, never guessed at; its escapes
//! written out, for redaction); a text frame that is not JSON becomes an `error` status event
//! quoting an excerpt.
//!
//! On the market stream such a frame's `seq`, when it is an integer, still counts on the
//! connection: a venue that numbers its frames across the connection numbered this one too,
//! and leaving it out would make the next push look like a lost message (a false `gap`);
//! under connection-wide counting it is checked as any frame is (`seq.rs`).

use super::events::{self, Kind, Queue};
use super::seq::SeqTracker;
use crate::error::Error;
use serde_json::Value;

/// A market stream frame the push paths did not take: passed on, its `seq` observed — unless
/// it names `seq` twice (JSON readers keeping the first or the last copy disagree on it: the
/// frame is counted nowhere, rather than by a number that may not be the venue's).
pub fn pass_on(text: &str, received_ns: i64, queue: &Queue, seq: &mut SeqTracker) {
    match serde_json::from_str::<crate::endpoints::answer::Entries<'_>>(text) {
        Ok(fields) => {
            let mut named = fields.0.into_iter().filter(|(key, _)| key == "seq").map(|(_, value)| value);
            if let (Some(value), None) = (named.next(), named.next())
                && let Some(number) = super::json::lenient_int(serde_json::from_str::<Value>(value.get()).ok().as_ref())
            {
                seq.report_unsubscribed(number, queue);
            }
        }
        // Valid JSON of another kind than an object (`[1,2]`) is passed on too.
        Err(_) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() => return not_json(text, queue),
        Err(_) => {}
    }
    queue.push_quoting_venue(event(text, received_ns));
}

/// A text frame that is not JSON: an `error` status event (the connection goes on).
pub fn not_json(text: &str, queue: &Queue) {
    let error = Error::bad_response("the venue sent a text frame that is not JSON");
    queue.push(Kind::Notice, events::bad_frame(&error, text));
}

/// `{"channel":"unrecognized","frame":…,"received_ns":…}` for a frame that is valid JSON,
/// byte for byte as sent. Its redaction (`Queue::push_quoting_venue`, `Secrets::redact`)
/// writes escapes out before it looks for a secret, and re-serialises the event only when
/// that reveals one: a token the venue escaped is hidden from the caller's JSON reader too,
/// and every other frame keeps its key order and its numbers as written.
pub fn event(frame: &str, received_ns: i64) -> String {
    format!("{{\"channel\":\"unrecognized\",\"frame\":{frame},\"received_ns\":{received_ns}}}")
}

/// As `event`, for a frame that answers a request of ours that is no order (`what`, e.g. a
/// late answer to the `auth:login` of an earlier connection): `"answers":what` says so, and
/// the frame still passes byte for byte.
pub fn answering(frame: &str, what: &str, received_ns: i64) -> String {
    let mut event = String::with_capacity(frame.len() + what.len() + 80);
    event.push_str("{\"channel\":\"unrecognized\",\"frame\":");
    event.push_str(frame);
    event.push_str(",\"answers\":");
    super::json::push_str(&mut event, what);
    event.push_str(&format!(",\"received_ns\":{received_ns}}}"));
    event
}
