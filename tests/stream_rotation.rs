//! The order stream's rotation (`stream_rotate_after_ms`, shortened here) against a test venue
//! that answers orders late: an outcome the venue sends on the old connection after the
//! rotation began is delivered, never reported `unanswered`; one that never comes is listed,
//! after a bounded grace, however much the venue still sends.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "common/ws_server.rs"]
mod ws_server;

use helpers::*;
use perps::stream::Stream;
use serde_json::Value;
use std::time::{Duration, Instant};
use ws_server::{Config, Out, WsServer, raw_frame};

/// Rotation 300 ms after the connection is served; the venue's outcomes come 600 ms after
/// the order (its ack at once), so on the old connection, after the rotation began.
const ROTATE: &str = r#"{"stream_rotate_after_ms":300}"#;

fn sent_request_id(stream: &Stream) -> Value {
    let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
    sent["request_id"].clone()
}

#[test]
fn an_outcome_sent_on_the_old_connection_after_the_rotation_began_is_delivered_not_unanswered() {
    let server = WsServer::start(Config { outcome_delay: Duration::from_millis(600), ..Config::default() });
    let stream = Stream::open_orders(client(&server.perps_url(), ROTATE), session()).unwrap();
    until(&stream, LONG, "connected", is_status("connected"));
    let request_id = sent_request_id(&stream);
    let (down, before) = until(&stream, LONG, "the rotation", is_status("disconnected"));
    assert_eq!(down["rotation"], true, "{down}");
    let outcome = before.iter().find(|e| e["request_id"] == request_id && e["final"] == true);
    assert!(outcome.is_some(), "the outcome comes before the old connection's end: {before:#?} then {down}");
    assert_eq!(outcome.unwrap()["matched"], true);
    assert_eq!(down["unanswered"], serde_json::json!([]), "{down}");
    // The old connection was written to once (its login and the order), then closed.
    let first = &server.conns()[0];
    server.wait_for(LONG, "the old connection closed", |_| first.closed.load(std::sync::atomic::Ordering::SeqCst));
    until(&stream, LONG, "the new connection", is_status("reconnected"));
}

#[test]
fn an_outcome_that_never_comes_is_listed_unanswered_after_a_bounded_grace() {
    // The venue answers no order; the grace is the read timeout at most (5 s, the longest
    // grace there is: src/stream/rotation.rs), long so that waiting it again stands out below.
    let server = WsServer::start(Config { silent_orders: true, ..Config::default() });
    let options = r#"{"stream_rotate_after_ms":300,"read_timeout_ms":5000}"#;
    let stream = Stream::open_orders(client(&server.perps_url(), options), session()).unwrap();
    until(&stream, LONG, "connected", is_status("connected"));
    let sent_at = Instant::now();
    let request_id = sent_request_id(&stream);
    let (down, _) = until(&stream, Duration::from_secs(30), "the rotation", is_status("disconnected"));
    let took = sent_at.elapsed();
    assert_eq!(down["rotation"], true, "{down}");
    assert_eq!(down["unanswered"], serde_json::json!([request_id]), "{down}");
    // An unbounded grace never ends against this venue (`until` fails at 30 s); the grace
    // (5 s), after the rotation (300 ms), with seconds of slack for a loaded machine.
    assert!(took < Duration::from_secs(10), "the old connection was read for {took:?} (grace: 5 s)");
    // Sent on an earlier connection: not waited for again at the next rotation. Waiting for
    // it is the grace again: a timed wait of 5 s that never ends early, so 4.5 s still
    // catches it and leaves a loaded machine over 4 s for a reconnection and 300 ms.
    let rotated_at = Instant::now();
    until(&stream, LONG, "the new connection", is_status("reconnected"));
    let (down, _) = until(&stream, LONG, "the next rotation", is_status("disconnected"));
    assert!(rotated_at.elapsed() < Duration::from_millis(4500), "{:?}", rotated_at.elapsed());
    // Nor listed again: its fate was reported unknown once, at the first rotation.
    assert_eq!(down["unanswered"], serde_json::json!([]), "{down}");
}

#[test]
fn the_grace_holds_while_the_venue_floods_the_old_connection() {
    // The venue answers no order and keeps the socket full of small frames: the old
    // connection always has more to read, and the grace must still end the read-out.
    let server = WsServer::start(Config { silent_orders: true, ..Config::default() });
    let stream = Stream::open_orders(client(&server.perps_url(), ROTATE), session()).unwrap();
    until(&stream, LONG, "connected", is_status("connected"));
    let first = server.conns()[0].clone();
    let chunk: Vec<u8> = (0..8192).flat_map(|_| raw_frame(true, 0x1, br#"{"x":1}"#)).collect();
    let flooding = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(40);
        while Instant::now() < until && !first.closed.load(std::sync::atomic::Ordering::SeqCst) {
            if first.backlog() < 2 {
                first.send(Out::Raw(chunk.clone()));
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    });
    let sent_at = Instant::now();
    let request_id = sent_request_id(&stream);
    let (down, _) = until(&stream, Duration::from_secs(60), "the rotation", is_status("disconnected"));
    let took = sent_at.elapsed();
    assert_eq!(down["rotation"], true, "{down}");
    assert_eq!(down["unanswered"], serde_json::json!([request_id]), "{down}");
    // A read-out the flood holds open lasts as long as the flood (40 s); the grace (2 s)
    // leaves a loaded machine 8 s more.
    assert!(took < Duration::from_secs(10), "the flooded old connection was read for {took:?} (grace: 2 s)");
    flooding.join().unwrap();
}
