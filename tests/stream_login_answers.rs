//! The order stream's `auth:login` answered first by an "accepted" ack, then by its outcome
//! (venue-api.md §2.3: two frames per request): the ack lets the open return, and the later
//! frame with the login's `request_id` is judged as the login's answer — a refusal ends the
//! stream as a refused login does, "not now" replaces the connection, success is silent.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use helpers::*;
use perps::Code;
use perps::stream::Stream;
use scripted_venue::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn ack(id: &str) -> String {
    json!({ "code": 0, "status": "accepted", "request_id": id }).to_string()
}

fn answer(id: &str, code: i64, message: &str) -> String {
    json!({ "code": code, "message": message, "request_id": id }).to_string()
}

/// An order venue whose login gets an ack, then after `delay` the outcome `outcome(i, id)`
/// on connection `i`; it counts its connections.
fn acking_venue(
    delay: Duration,
    outcome: impl Fn(usize, &str) -> String + Send + Sync + 'static,
    replies: Vec<String>,
) -> (String, Arc<AtomicUsize>) {
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    let url = order_venue_answering(
        move |i, id| {
            counted.fetch_add(1, Ordering::SeqCst);
            vec![(Duration::ZERO, ack(id)), (delay, outcome(i, id))]
        },
        replies,
    );
    (url, connections)
}

#[test]
fn a_login_acked_then_refused_ends_the_stream_as_a_refused_login() {
    // The refusal in the same burst as the ack, and a while after the open returned.
    for delay in [Duration::ZERO, Duration::from_millis(300)] {
        let (url, connections) = acking_venue(delay, |_, id| answer(id, 401, "invalid token"), vec![]);
        let stream = Stream::open_orders(client(&url, "{}"), session()).expect("the ack lets the open return");
        let (failed, before) = until(&stream, LONG, "failed", is_status("failed"));
        assert_eq!(failed["code_name"], "PERPS_API_ERROR", "{failed}");
        let message = failed["message"].as_str().unwrap();
        assert!(message.contains("auth:login") && message.contains("code 401") && message.contains("invalid token"));
        assert!(!before.iter().any(is_channel("order_response")), "the refusal is no order's answer: {before:#?}");
        let states: Vec<&Value> = before.iter().map(|e| &e["state"]).collect();
        assert_eq!(states, ["connected", "disconnected"], "{before:#?}");
        let error = stream.next(Some(SECOND)).unwrap_err();
        assert_eq!(error.code(), Code::StreamClosed);
        assert!(error.message().contains("invalid token"), "{error}");
        let refused = stream.new_order(ORDER).unwrap_err();
        assert!(!refused.may_have_reached_venue(), "{refused}");
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(connections.load(Ordering::SeqCst), 1, "no reconnect loop");
    }
}

#[test]
fn a_login_acked_then_answered_success_gives_no_event_and_orders_go_on() {
    let replies = vec![ack("RID"), answer("RID", 0, "success")];
    let (url, connections) = acking_venue(Duration::from_millis(100), |_, id| answer(id, 0, "success"), replies);
    let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let events = drain(&stream, Duration::from_millis(200));
    let states: Vec<&Value> = events.iter().map(|e| &e["state"]).collect();
    assert_eq!(states, ["connected"], "nothing but the connection: {events:#?}");
    let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
    let (first, _) = until(&stream, LONG, "the order's ack", is_channel("order_response"));
    let (outcome, between) = until(&stream, LONG, "the order's outcome", is_channel("order_response"));
    assert!(between.is_empty(), "{between:#?}");
    for (event, last) in [(&first, false), (&outcome, true)] {
        assert_eq!(event["request_id"], sent["request_id"], "{event}");
        assert_eq!((event["final"].as_bool(), event["matched"].as_bool()), (Some(last), Some(true)), "{event}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[test]
fn a_login_acked_then_answered_not_now_replaces_the_connection_after_a_backoff() {
    // Connection 0: ack, then 503; connection 1: ack, then success.
    let (url, connections) = acking_venue(
        Duration::from_millis(100),
        |i, id| if i == 0 { answer(id, 503, "service unavailable") } else { answer(id, 0, "success") },
        vec![],
    );
    let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
    let (reconnected, before) = until(&stream, LONG, "reconnected", is_status("reconnected"));
    assert_eq!(reconnected["connection"], 2, "{reconnected}");
    let states: Vec<&Value> = before.iter().map(|e| &e["state"]).collect();
    assert_eq!(states, ["connected", "disconnected", "reconnecting"], "{before:#?}");
    let reason = before[1]["reason"].as_str().unwrap();
    assert!(reason.contains("code 503") && reason.contains("service unavailable"), "{reason}");
    assert!(before[2]["delay_ms"].is_u64(), "{}", before[2]);
    std::thread::sleep(Duration::from_millis(300));
    let after = drain(&stream, Duration::from_millis(200));
    assert!(after.is_empty(), "the second login's success is silent: {after:#?}");
    assert_eq!(connections.load(Ordering::SeqCst), 2);
}

#[test]
fn frames_of_other_requests_are_not_taken_for_the_logins_answer() {
    // While the login's outcome is awaited, a refusal of another request is an order_response.
    let (url, _) = acking_venue(
        Duration::from_millis(300),
        |_, id| answer(id, 0, "success"),
        vec![answer("RID", 401, "signature invalid")],
    );
    let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
    let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
    let (response, _) = until(&stream, LONG, "order_response", is_channel("order_response"));
    assert_eq!(response["request_id"], sent["request_id"]);
    assert_eq!((response["final"].as_bool(), response["matched"].as_bool()), (Some(true), Some(true)));
    std::thread::sleep(Duration::from_millis(400));
    assert!(drain(&stream, Duration::from_millis(200)).is_empty(), "the stream goes on");
}
