//! Order entry on the order stream against the WebSocket test venue
//! (`tests/common/ws_server.rs`) on 127.0.0.1: orders signed and sent at once, replies in
//! two frames in either ack style, late, repeated and unknown frames passed through, the
//! session's x-session-id, an account event that comes before the ack, orders refused before
//! sending, an order unanswered at a disconnect (listed, never resent, its late outcome
//! matched on the next connection; a rejection of it without request_id before the new
//! login's answer does not end the stream), and stream requests not paced by `rate_limit`. Split
//! from `tests/streams.rs` (subscriptions, events, supervision) because order entry is its
//! own concern; `scripts/test.sh` runs it on one CPU with the other stream tests.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/market.rs"]
mod market;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;
#[path = "common/ws_server.rs"]
mod ws_server;

use base64::Engine as _;
use ed25519_dalek::{Signature, Verifier};
use helpers::*;
use market::{SUBS, market};
use perps::Code;
use perps::stream::Stream;
use scripted_venue::{logged_in, order_venue};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use ws_server::{AckStyle, Config, Out, WsServer};

fn verify_order_frame(frame: &Value) -> Value {
    let params = frame["params"].as_str().expect("params is a JSON string");
    let header = &frame["header"];
    let (id, ts, sig) = (
        header["x-request-id"].as_str().unwrap(),
        header["x-request-timestamp"].as_str().unwrap(),
        header["x-request-signature"].as_str().unwrap(),
    );
    assert_eq!(header["x-request-sign-version"], "v1");
    assert_ne!(frame["request_id"].as_str().unwrap(), id, "envelope request_id differs from x-request-id");
    let key = ed25519_dalek::SigningKey::from_bytes(&bs58::decode(SEED_B58).into_vec().unwrap().try_into().unwrap());
    let message = format!("v1,{id},{ts},{params}");
    let signature = Signature::from_slice(&base64::engine::general_purpose::STANDARD.decode(sig).unwrap()).unwrap();
    key.verifying_key()
        .verify(message.as_bytes(), &signature)
        .expect("the body signature verifies over the exact params");
    serde_json::from_str(params).unwrap()
}

#[test]
fn orders_are_signed_sent_at_once_and_replies_come_in_two_frames_either_ack_style() {
    for (ack, reject) in [(AckStyle::Status, None), (AckStyle::Message, Some("alo order rejected"))] {
        let server = WsServer::start(Config { ack, reject: reject.map(str::to_owned), ..Config::default() });
        let session = session();
        let stream = Stream::open_orders(client(&server.perps_url(), "{}"), session.clone()).unwrap();
        let (connected, _) = until(&stream, LONG, "connected", is_status("connected"));
        let session_id = connected["session_id"].as_str().unwrap().to_owned();
        assert_eq!(connected["session_id_from_session"], false);
        let login = &server.conns()[0].frames()[0];
        assert_eq!(login["method"], "auth:login");
        assert_eq!(login["session_id"], session_id.as_str());
        assert_eq!(
            serde_json::from_str::<Value>(login["params"].as_str().unwrap()).unwrap(),
            json!({ "token": TOKEN })
        );

        let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
        let request_id = sent["request_id"].as_str().unwrap().to_owned();
        let cl_ord_id = sent["cl_ord_id"].as_str().unwrap().to_owned();
        assert!(!cl_ord_id.is_empty());
        let (ack_event, _) = until(&stream, LONG, "ack", is_channel("order_response"));
        assert_eq!(
            (ack_event["request_id"].as_str(), ack_event["final"].as_bool()),
            (Some(request_id.as_str()), Some(false))
        );
        assert_eq!((ack_event["message"].as_str(), ack_event["matched"].as_bool()), (Some("accepted"), Some(true)));
        assert_eq!(ack_event["success"], false, "an ack is no outcome");
        let (outcome, _) = until(&stream, LONG, "outcome", is_channel("order_response"));
        assert_eq!(
            (outcome["request_id"].as_str(), outcome["final"].as_bool()),
            (Some(request_id.as_str()), Some(true))
        );
        assert_eq!(outcome["cl_ord_id"], cl_ord_id.as_str());
        match reject {
            None => assert_eq!((outcome["code"].as_i64(), outcome["message"].as_str()), (Some(0), Some("success"))),
            Some(m) => assert_eq!((outcome["code"].as_i64(), outcome["message"].as_str()), (Some(400), Some(m))),
        }
        assert_eq!(outcome["success"], reject.is_none(), "{outcome}");
        assert_eq!(outcome["outcome_unknown"], false, "{outcome}");

        let frame = server.conns()[0].frames()[1].clone();
        assert_eq!(
            (frame["method"].as_str(), frame["session_id"].as_str()),
            (Some("order:new"), Some(session_id.as_str()))
        );
        assert_eq!(frame["request_id"], request_id.as_str());
        let params = verify_order_frame(&frame);
        assert_eq!(params["cl_ord_id"], cl_ord_id.as_str());
        assert_eq!(params["time_in_force"], "alo");

        let cancel: Value = serde_json::from_str(&stream.cancel_order(r#"{"order_id":4294967299}"#).unwrap()).unwrap();
        until(&stream, LONG, "cancel outcome", |e| e["request_id"] == cancel["request_id"] && e["final"] == true);
        let frame = server.conns()[0].frames()[2].clone();
        assert_eq!(frame["method"], "order:cancel");
        assert_eq!(verify_order_frame(&frame), json!({ "order_id": 4294967299u64 }));
        assert_eq!(frame["params"], r#"{"order_id":4294967299}"#);
    }
}

#[test]
fn new_order_returns_before_the_venue_answers_and_late_or_unknown_frames_pass_through() {
    // The venue answers 6 s late; the call must return long before: a call that waited for
    // the outcome would take 6 s, and the bound leaves a loaded machine 4 s for a write.
    let server = WsServer::start(Config { outcome_delay: Duration::from_millis(6000), ..Config::default() });
    let stream = Stream::open_orders(client(&server.perps_url(), "{}"), session()).unwrap();
    let given = r#"{"symbol":"BTC-USD","side":"sell","order_type":"limit","qty":"1","price":"70000","time_in_force":"gtc","reduce_only":false,"cl_ord_id":"mine-1"}"#;
    let started = Instant::now();
    let sent: Value = serde_json::from_str(&stream.new_order(given).unwrap()).unwrap();
    assert!(started.elapsed() < Duration::from_secs(4), "new_order waited for the venue");
    assert_eq!(sent["cl_ord_id"], "mine-1");
    until(&stream, Duration::from_secs(30), "outcome", |e| e["request_id"] == sent["request_id"] && e["final"] == true);
    server.send_all(
        false,
        Out::Text(json!({ "code": 0, "message": "accepted", "request_id": sent["request_id"] }).to_string()),
    );
    server.send_all(false, Out::Text(r#"{"code":0,"message":"success","request_id":"from-rest-1"}"#.into()));
    server.send_all(false, Out::Text(r#"{"notice":"maintenance"}"#.into()));
    let (late, _) = until(&stream, LONG, "late ack", is_channel("order_response"));
    assert_eq!((late["matched"].as_bool(), late["final"].as_bool()), (Some(false), Some(false)));
    let (rest, _) = until(&stream, LONG, "REST result", is_channel("order_response"));
    assert_eq!((rest["request_id"].as_str(), rest["matched"].as_bool()), (Some("from-rest-1"), Some(false)));
    let (other, _) = until(&stream, LONG, "notice", is_channel("unrecognized"));
    assert_eq!(other["frame"]["notice"], "maintenance");
    // The order's outcome sent twice: passed on, marked as a repeat, never as its outcome.
    // A venue outcome under 503 leaves the request's fate unknown, and says so.
    server.send_all(
        false,
        Out::Text(json!({ "code": 0, "message": "success", "request_id": sent["request_id"] }).to_string()),
    );
    server.send_all(false, Out::Text(r#"{"code":503,"message":"busy","request_id":"from-rest-2"}"#.into()));
    let (again, _) = until(&stream, LONG, "the outcome again", is_channel("order_response"));
    assert_eq!(again["request_id"], sent["request_id"]);
    let flags = |e: &Value| ["final", "matched", "repeat", "outcome_unknown"].map(|k| e[k].as_bool());
    assert_eq!(flags(&again), [Some(true), Some(false), Some(true), Some(false)], "{again}");
    let (busy, _) = until(&stream, LONG, "a 503 outcome", is_channel("order_response"));
    assert_eq!(flags(&busy), [Some(true), Some(false), Some(false), Some(true)], "{busy}");
}

#[test]
fn the_session_id_is_the_sessions_x_session_id_when_set() {
    let server = WsServer::start(Config::default());
    let session = session();
    session.set_session_id(Some("engine-7")).unwrap();
    let stream = Stream::open_orders(client(&server.perps_url(), "{}"), session).unwrap();
    let (connected, _) = until(&stream, LONG, "connected", is_status("connected"));
    assert_eq!(
        (connected["session_id"].as_str(), connected["session_id_from_session"].as_bool()),
        (Some("engine-7"), Some(true))
    );
    stream.new_order(ORDER).unwrap();
    server.wait_for(LONG, "the order frame", |c| c[0].frames().len() == 2);
    assert!(server.conns()[0].frames().iter().all(|f| f["session_id"] == "engine-7"));
}

#[test]
fn the_account_event_may_come_before_the_ack_and_both_are_delivered() {
    let server = WsServer::start(Config { account_event_before_ack: true, ..Config::default() });
    let session = session();
    let account = market(&server, Some(session.clone()), r#"[{"channel":"order"}]"#);
    let orders = Stream::open_orders(client(&server.perps_url(), "{}"), session).unwrap();
    until(&orders, LONG, "connected", is_status("connected"));
    let sent: Value = serde_json::from_str(&orders.new_order(ORDER).unwrap()).unwrap();
    let (event, _) = until(&account, LONG, "account order event", is_channel("order"));
    let pushed_at = event["received_ns"].as_i64().unwrap();
    assert_eq!(event["data"]["cl_ord_id"], sent["cl_ord_id"]);
    let (ack, _) = until(&orders, LONG, "ack", is_channel("order_response"));
    assert_eq!(ack["final"], false);
    assert!(ack["received_ns"].as_i64().unwrap() > pushed_at, "the account event came first");
    until(&orders, LONG, "outcome", |e| e["final"] == true);
}

#[test]
fn orders_on_a_market_stream_or_a_closed_stream_or_invalid_are_refused_before_sending() {
    let server = WsServer::start(Config::default());
    let stream = market(&server, None, SUBS);
    assert_eq!(stream.new_order(ORDER).unwrap_err().code(), Code::InvalidState);
    let orders = Stream::open_orders(client(&server.perps_url(), "{}"), session()).unwrap();
    let e = orders.new_order(r#"{"symbol":"BTC-USD"}"#).unwrap_err();
    assert_eq!(e.code(), Code::InvalidOrder);
    assert_eq!(orders.cancel_order("{}").unwrap_err().code(), Code::InvalidArgument);
    orders.close();
    assert_eq!(orders.new_order(ORDER).unwrap_err().code(), Code::StreamClosed);
    std::thread::sleep(Duration::from_millis(50));
    let conns = server.conns();
    let order_conn = conns.iter().find(|c| !c.is_market()).unwrap();
    assert_eq!(order_conn.frames().len(), 1, "only the login went out");
}

#[test]
fn order_stream_requests_are_not_paced_by_rate_limit() {
    // README "Pacing": the account's REST bucket allows a burst of 18; with "refuse" a 19th
    // REST order would fail with RATE_LIMITED. Stream requests are not paced: 40 orders and
    // 40 cancels in a burst are all written.
    let server = WsServer::start(Config { silent_orders: true, ..Config::default() });
    let stream = Stream::open_orders(client(&server.perps_url(), r#"{"rate_limit":"refuse"}"#), session()).unwrap();
    until(&stream, LONG, "connected", is_status("connected"));
    for _ in 0..40 {
        stream.new_order(ORDER).unwrap();
        stream.cancel_order(r#"{"order_id":4294967299}"#).unwrap();
    }
    let written = |method: &str| server.conns()[0].frames().iter().filter(|f| f["method"] == method).count();
    server.wait_for(LONG, "80 request frames", |_| written("order:new") == 40 && written("order:cancel") == 40);
}

#[test]
fn an_order_unanswered_at_a_disconnect_is_listed_never_resent_and_its_late_outcome_matched() {
    let server = WsServer::start(Config { silent_orders: true, ..Config::default() });
    let stream = Stream::open_orders(client(&server.perps_url(), "{}"), session()).unwrap();
    until(&stream, LONG, "connected", is_status("connected"));
    let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
    let order_frames = || -> usize {
        let frames = server.conns().iter().flat_map(|c| c.frames()).collect::<Vec<_>>();
        frames.iter().filter(|f| f["method"] == "order:new").count()
    };
    server.wait_for(LONG, "the order frame", |_| order_frames() == 1);
    server.drop_all();
    let (gone, _) = until(&stream, LONG, "disconnected", is_status("disconnected"));
    assert_eq!(gone["unanswered"], json!([sent["request_id"]]), "{gone}");
    until(&stream, LONG, "reconnected", is_status("reconnected"));
    // The venue pushes the outcome by session_id: on the new connection.
    server.send_all(
        false,
        Out::Text(json!({ "code": 0, "message": "success", "request_id": sent["request_id"] }).to_string()),
    );
    let (outcome, _) = until(&stream, LONG, "late outcome", is_channel("order_response"));
    assert_eq!((outcome["final"].as_bool(), outcome["matched"].as_bool()), (Some(true), Some(true)), "{outcome}");
    assert_eq!(outcome["cl_ord_id"], sent["cl_ord_id"]);
    // A request sent after the outcome, awaited at the venue: the connection's frames arrive
    // in the order written, so an order sent again on the reconnection would be there before
    // it, however slow the machine (a fixed wait passed wrongly when slower than the send).
    let cancel: Value = serde_json::from_str(&stream.cancel_order(r#"{"order_id":4294967299}"#).unwrap()).unwrap();
    let cancel_seen = || {
        let conns = server.conns();
        conns.iter().flat_map(|c| c.frames()).any(|f| f["request_id"] == cancel["request_id"])
    };
    server.wait_for(LONG, "the later cancel frame", |_| cancel_seen());
    assert_eq!(order_frames(), 1, "the library never sends an unanswered order again");
}

#[test]
fn an_ack_in_words_not_known_then_the_refusal_is_a_repeat_that_contradicts_and_names_the_order() {
    // The venue acks in words that are not the documented "accepted" (taken for the outcome,
    // a success), then refuses: the refusal comes as a repeat, and says it contradicts.
    let url = scripted_venue::order_venue(
        scripted_venue::logged_in,
        vec![
            r#"{"code":0,"message":"received","request_id":"RID"}"#.into(),
            r#"{"code":400,"message":"alo order rejected","request_id":"RID"}"#.into(),
        ],
    );
    let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
    let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
    let (first, _) = until(&stream, LONG, "the first reply", is_channel("order_response"));
    assert_eq!((first["final"].as_bool(), first["matched"].as_bool()), (Some(true), Some(true)), "{first}");
    assert_eq!(first["contradicts"], false);
    let (second, _) = until(&stream, LONG, "the refusal", is_channel("order_response"));
    assert_eq!(second["repeat"], true, "{second}");
    assert_eq!(second["contradicts"], true, "{second}");
    assert_eq!(second["matched"], false, "{second}");
    assert_eq!(second["outcome_unknown"], false, "{second}");
    assert_eq!(second["cl_ord_id"], sent["cl_ord_id"], "the order to look up");
    assert_eq!(second["method"], "order:new");
}

#[test]
fn a_late_order_rejection_without_request_id_before_the_new_login_is_answered_keeps_the_stream() {
    // The order of the first connection is answered on the second (same session_id), before
    // its login's answer, by a rejection that leaves its request_id out. Taken for the login's
    // refusal, it ended the stream for good (`failed`) though the login then succeeded.
    let order_id = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let url = scripted_venue::venue({
        let order_id = order_id.clone();
        move |i, mut ws| {
            let login = scripted_venue::read_json(&mut ws);
            let login_id = login["request_id"].as_str().unwrap().to_owned();
            if i == 0 {
                scripted_venue::send(&mut ws, &scripted_venue::logged_in(&login_id));
                let order = scripted_venue::read_json(&mut ws);
                *order_id.lock().unwrap() = order["request_id"].as_str().unwrap().to_owned();
                return; // dropped unanswered
            }
            scripted_venue::send(&mut ws, r#"{"code":400,"message":"alo order rejected"}"#);
            scripted_venue::send(&mut ws, &scripted_venue::logged_in(&login_id));
            let outcome = json!({"code":0,"message":"success","request_id":*order_id.lock().unwrap()});
            scripted_venue::send(&mut ws, &outcome.to_string());
            scripted_venue::hold(ws, LONG);
        }
    });
    let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
    let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
    let (gone, _) = until(&stream, LONG, "disconnected", is_status("disconnected"));
    assert_eq!(gone["unanswered"], json!([sent["request_id"]]), "{gone}");
    let (back, seen) = until(&stream, LONG, "reconnected", |e| is_status("reconnected")(e) || is_status("failed")(e));
    assert_eq!(back["state"], "reconnected", "{back} after {seen:?}");
    let (passed_on, _) = until(&stream, LONG, "the rejection passed on", is_channel("unrecognized"));
    assert_eq!(passed_on["frame"]["message"], "alo order rejected");
    let (outcome, _) = until(&stream, LONG, "the late outcome", is_channel("order_response"));
    assert_eq!(outcome["request_id"], sent["request_id"]);
    assert_eq!((outcome["final"].as_bool(), outcome["matched"].as_bool()), (Some(true), Some(true)), "{outcome}");
}

#[test]
fn replies_echoing_the_request_id_in_upper_case_are_matched_and_name_the_id_as_given() {
    // RFC 9562: a UUID's hex is case-insensitive. The login's answer in upper case too must
    // still be the login's (else the open waits out its deadline and fails).
    for login_upper in [false, true] {
        let url = order_venue(
            move |id| logged_in(&if login_upper { id.to_uppercase() } else { id.to_owned() }),
            vec![
                r#"{"code":0,"status":"accepted","request_id":"RID_UPPER"}"#.into(),
                r#"{"code":0,"message":"success","request_id":"RID_UPPER"}"#.into(),
            ],
        );
        let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
        let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
        let given = sent["request_id"].as_str().unwrap();
        for what in ["ack", "outcome"] {
            let (reply, _) = until(&stream, LONG, what, is_channel("order_response"));
            assert_eq!(reply["matched"], true, "{what}: {reply}");
            assert_eq!(reply["request_id"], given, "{what}: {reply}");
            assert_eq!(reply["cl_ord_id"], sent["cl_ord_id"], "{what}: {reply}");
            // The frame as the venue sent it.
            assert_eq!(reply["frame"]["request_id"], given.to_uppercase(), "{what}: {reply}");
        }
    }
}
