//! ws-api reply frames, and the results of REST orders sent with `x-session-id`
//! (venue-api.md §2.3, §2.4).
//!
//! Every accepted order or cancel gets two frames keyed by its `request_id`: the gateway ack
//! `{"code":0,"status":"accepted",…}` (or `"message":"accepted"`, `ws_ack_style`), then the
//! outcome `{"code":0,"message":"success",…}` or a rejection (`{"code":400,"message":"alo
//! order rejected",…}`). A REST `new_order` / `cancel_order` carrying `x-session-id: S` that
//! the venue accepted sends the same two frames, keyed by the REST answer's `request_id`
//! (its `x-request-id`), to every ws-api connection whose requests carry `session_id` S; with
//! no such connection the results go nowhere (the venue documents nothing else).
//!
//! With `ws_event_before_ack`, the ack waits until the order's account events have been
//! written on the account's ws-stream connections (at most `EVENT_WAIT`; stalled or closed
//! connections are not waited for).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Conn, Out};
use crate::state::Shared;

/// The longest an ack waits for the account streams in `ws_event_before_ack` mode.
const EVENT_WAIT: Duration = Duration::from_secs(1);

/// What the engine made of an accepted order or cancel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Success,
    Rejected(u16, String),
}

/// `{"code","message","request_id"}`, the shape of every ws-api reply but the ack.
pub(crate) fn frame(code: i64, message: &str, request_id: Option<&str>) -> String {
    json!({"code": code, "message": message, "request_id": request_id}).to_string()
}

/// The gateway ack, in the connection's ack style.
pub(crate) fn ack(shared: &Shared, conn: &Conn, request_id: &str) -> String {
    worded_ack(shared, conn, request_id, ACCEPTED)
}

/// The documented word of the ack.
pub(crate) const ACCEPTED: &str = "accepted";

/// The gateway ack with `word` where the venue writes "accepted" (the `ws_ack_word` fault).
pub(crate) fn worded_ack(shared: &Shared, conn: &Conn, request_id: &str, word: &str) -> String {
    let key = conn.ack_key(shared.config.ws_ack_style);
    // By hand, in the documented key order.
    format!("{{\"code\":0,\"{key}\":{},\"request_id\":{}}}", json!(word), json!(request_id))
}

pub(crate) fn outcome_frame(outcome: &Outcome, request_id: &str) -> String {
    match outcome {
        Outcome::Success => frame(0, "success", Some(request_id)),
        Outcome::Rejected(code, message) => frame(i64::from(*code), message, Some(request_id)),
    }
}

/// `ws_event_before_ack`: waits until the account's ws-stream connections have written
/// every event queued on them so far.
pub(crate) fn wait_for_account_streams(shared: &Shared, account: &str) {
    let targets: Vec<_> = shared
        .ws
        .account_streams(account)
        .into_iter()
        .map(|c| {
            let delivered = c.delivered.load(Ordering::SeqCst);
            (c, delivered)
        })
        .collect();
    let deadline = Instant::now() + EVENT_WAIT;
    while Instant::now() < deadline && targets.iter().any(|(c, d)| !c.silent() && c.flushed.load(Ordering::SeqCst) < *d)
    {
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// A REST order or cancel with `x-session-id` was accepted: its two frames go to the ws-api
/// connections of that session.
pub(crate) fn route_rest_result(shared: &Shared, session_id: &str, request_id: &str, account: &str, outcome: &Outcome) {
    let targets = shared.ws.api_sessions(session_id);
    if targets.is_empty() {
        return;
    }
    if shared.config.ws_event_before_ack {
        wait_for_account_streams(shared, account);
    }
    let result = outcome_frame(outcome, request_id);
    for conn in targets {
        conn.push(Out::Frame(ack(shared, &conn, request_id)));
        conn.push(Out::Frame(result.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::{AckStyle, Conn, Endpoint};

    #[test]
    fn frames_in_the_documented_shapes() {
        assert_eq!(
            frame(400, "alo order rejected", Some("r")),
            r#"{"code":400,"message":"alo order rejected","request_id":"r"}"#
        );
        assert_eq!(frame(400, "invalid JSON", None), r#"{"code":400,"message":"invalid JSON","request_id":null}"#);
        assert_eq!(outcome_frame(&Outcome::Success, "r"), r#"{"code":0,"message":"success","request_id":"r"}"#);
        let (waker, _wakee) = crate::ws::wire::wake_pair().unwrap();
        let conn = Conn::new(1, Endpoint::Api, "/ws-api/v1".into(), "127.0.0.1:1".parse().unwrap(), waker);
        let keys: Vec<&str> = (0..3).map(|_| conn.ack_key(AckStyle::Alternate)).collect();
        assert_eq!(keys, ["status", "message", "status"]);
        assert_eq!(conn.ack_key(AckStyle::Message), "message");
    }
}
