//! The venue's answers to an authentication (the market stream's auth frame, the order
//! stream's `auth:login`) against venues that are not ours, each a short script on 127.0.0.1:
//! success in every form the sources show (codes as strings, no code, the code at the top
//! level, a login answer without its request_id), refusals in forms other than a numeric
//! code, "not now" (5xx, 408, 429) retried like a failed handshake, and a login answered
//! first by an "accepted" ack, then by its outcome (venue-api.md §2.3: two frames per
//! request): the ack lets the open return, and the later frame with the login's `request_id`
//! is judged as the login's answer — a refusal ends the stream as a refused login does, "not
//! now" replaces the connection, success is silent.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/no_more_connections.rs"]
mod no_more_connections;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use helpers::*;
use no_more_connections::assert_no_connection_beyond;
use perps::Code;
use perps::stream::Stream;
use scripted_venue::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tungstenite::Message;

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
        // The stream has ended: not "reconnecting", which would make an engine wait for it.
        assert_eq!(refused.code(), Code::StreamClosed, "{refused}");
        assert!(refused.message().contains("invalid token") && refused.message().contains("not sent"), "{refused}");
        assert_no_connection_beyond(1, || connections.load(Ordering::SeqCst), "no reconnect loop");
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
    assert_no_connection_beyond(2, || connections.load(Ordering::SeqCst), "the second login's success is silent");
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

#[test]
fn auth_answers_in_every_form_the_sources_show_are_accepted() {
    for answer in [
        r#"{"seq":1,"channel":"auth","data":{"code":"200","msg":"success"}}"#,
        r#"{"seq":"1","channel":"auth","data":{"code":0,"msg":"success"}}"#,
        r#"{"seq":1.0,"channel":"auth","data":{"code":200}}"#,
        r#"{"seq":1,"channel":"auth","code":200,"msg":"success"}"#,
        r#"{"seq":1,"channel":"auth","data":{"msg":"success"}}"#,
    ] {
        let url = venue(move |_, mut ws| {
            read_json(&mut ws);
            ws.send(Message::text(answer)).unwrap();
            hold(ws, Duration::from_secs(3));
        });
        let stream = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#);
        assert!(stream.is_ok(), "{answer}: {:?}", stream.err());
    }
    let refused = venue(|_, mut ws| {
        read_json(&mut ws);
        ws.send(Message::text(r#"{"channel":"auth","data":{"code":"401","msg":"invalid token"}}"#)).unwrap();
        hold(ws, Duration::from_secs(3));
    });
    let error = Stream::open_market(client(&refused, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap_err();
    assert_eq!(error.code(), Code::ApiError);
    assert!(error.message().contains("code 401") && error.message().contains("invalid token"), "{}", error.message());

    for login in [
        |id: &str| json!({ "code": "0", "message": "success", "request_id": id }).to_string(),
        |_: &str| json!({ "code": 0, "message": "success" }).to_string(),
        |_: &str| json!({ "code": 200, "message": "success", "request_id": null }).to_string(),
    ] {
        let url = order_venue(login, vec![]);
        let stream = Stream::open_orders(client(&url, "{}"), session());
        assert!(stream.is_ok(), "{}: {:?}", login("ID"), stream.err());
    }
}

/// A market stream whose connection `i` gets the auth answer `answers(i)`; the first is
/// dropped 200 ms after it is answered, the others held.
fn market_answering(answers: impl Fn(usize) -> String + Send + Sync + 'static) -> Stream {
    let url = venue(move |i, mut ws| {
        read_json(&mut ws);
        send(&mut ws, &answers(i));
        if i == 0 {
            std::thread::sleep(Duration::from_millis(200));
            return;
        }
        hold(ws, Duration::from_secs(5));
    });
    Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap()
}

#[test]
fn an_auth_answer_that_says_try_later_is_retried_like_a_failed_handshake() {
    // 5xx, 408 and 429 on the reconnections (the venue's gateway in turbulence), then success.
    let codes = [200, 500, 502, 503, 408, 429];
    let stream = market_answering(move |i| {
        let code = codes.get(i).copied().unwrap_or(200);
        json!({ "seq": 1, "channel": "auth", "data": { "code": code, "msg": if code == 200 { "success" } else { "try later" } } })
            .to_string()
    });
    let (_, before) = until(&stream, LONG, "reconnected", is_status("reconnected"));
    let failures: Vec<&Value> = before.iter().filter(|e| e["state"] == "reconnect_failed").collect();
    assert_eq!(failures.len(), 5, "{before:#?}");
    for (failure, code) in failures.iter().zip(&codes[1..]) {
        let message = failure["message"].as_str().unwrap();
        assert_eq!(failure["code_name"], "PERPS_API_ERROR", "{failure}");
        assert!(message.contains(&format!("code {code}")) && message.contains("try later"), "{message}");
    }

    // The order stream's login answered 503, then 429, on reconnections.
    let url = venue(|i, mut ws| {
        let login = read_json(&mut ws);
        let id = login["request_id"].as_str().unwrap();
        let code = [0, 503, 429].get(i).copied().unwrap_or(0);
        send(&mut ws, &json!({ "code": code, "message": "service unavailable", "request_id": id }).to_string());
        if i == 0 {
            std::thread::sleep(Duration::from_millis(200));
            return;
        }
        hold(ws, Duration::from_secs(5));
    });
    let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
    let (_, before) = until(&stream, LONG, "reconnected", is_status("reconnected"));
    assert_eq!(before.iter().filter(|e| e["state"] == "reconnect_failed").count(), 2, "{before:#?}");

    // On the first connection the open reports it, as any failure to set up.
    let url = venue(|_, mut ws| {
        read_json(&mut ws);
        send(&mut ws, r#"{"seq":1,"channel":"auth","data":{"code":503,"msg":"service unavailable"}}"#);
        hold(ws, Duration::from_secs(3));
    });
    let error = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap_err();
    assert_eq!(error.code(), Code::ApiError);
    assert!(error.message().contains("code 503") && error.message().contains("service unavailable"), "{error}");
}

#[test]
fn a_4xx_auth_answer_on_reconnection_still_ends_the_stream() {
    let stream = market_answering(|i| {
        let code = if i == 0 { 200 } else { 403 };
        json!({ "seq": 1, "channel": "auth", "data": { "code": code, "msg": "forbidden" } }).to_string()
    });
    let (failed, _) = until(&stream, LONG, "failed", is_status("failed"));
    assert!(failed["message"].as_str().unwrap().contains("code 403"), "{failed}");
    assert_eq!(stream.next(Some(SECOND)).unwrap_err().code(), Code::StreamClosed);
}

#[test]
fn auth_refusals_in_forms_other_than_a_numeric_code_fail_the_open() {
    for (answer, words) in [
        (r#"{"seq":1,"channel":"auth","data":{"code":"unauthorized"}}"#, "unauthorized"),
        (r#"{"seq":1,"channel":"auth","data":{"code":"401 Unauthorized"}}"#, "401 Unauthorized"),
        (r#"{"seq":1,"channel":"auth","data":{"code":401.5}}"#, "401.5"),
        (r#"{"seq":1,"channel":"auth","data":{"status":"error","error":"invalid token"}}"#, "invalid token"),
        (r#"{"seq":1,"channel":"auth","data":{"success":false,"error":"jwt expired"}}"#, "jwt expired"),
        (r#"{"seq":1,"channel":"auth","data":{"success":false}}"#, "refused"),
    ] {
        let url = venue(move |_, mut ws| {
            read_json(&mut ws);
            send(&mut ws, answer);
            hold(ws, Duration::from_secs(3));
        });
        let opened = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#);
        let error = opened.err().unwrap_or_else(|| panic!("{answer} was taken as success"));
        assert_eq!(error.code(), Code::ApiError, "{answer}: {error}");
        assert!(error.message().contains(words), "{answer}: {error}");
    }
    for (login, words) in [
        (|id: &str| json!({ "request_id": id, "code": "E_AUTH" }).to_string()) as fn(&str) -> String,
        |id: &str| json!({ "request_id": id, "status": "rejected" }).to_string(),
        |id: &str| json!({ "request_id": id, "status": "unauthorized", "error": "invalid token" }).to_string(),
    ]
    .into_iter()
    .zip(["E_AUTH", "rejected", "invalid token"])
    {
        let url = order_venue(login, vec![]);
        let opened = Stream::open_orders(client(&url, "{}"), session());
        let error = opened.err().unwrap_or_else(|| panic!("{} was taken as success", login("ID")));
        assert_eq!(error.code(), Code::ApiError, "{error}");
        assert!(error.message().contains(words), "{error}");
    }
}

/// The auth answers' codes written otherwise than as plain integers, however whole their
/// value: JSON readers do not agree on them (`1e-400` is 0 to serde_json, an error to
/// others), so none is a login — read as REST reads codes (`venue_code`).
const CODES_NOT_PLAIN: [&str; 5] = ["1e-400", "0.0", "-0", r#""-0""#, "200.0"];

#[test]
fn an_auth_code_not_written_as_a_plain_integer_is_no_login_and_no_reconnect_loop() {
    for code in CODES_NOT_PLAIN {
        // The first connection: the open fails, as on any refusal.
        let answer = format!(r#"{{"seq":1,"channel":"auth","data":{{"code":{code},"msg":"success"}}}}"#);
        let url = venue(move |_, mut ws| {
            read_json(&mut ws);
            send(&mut ws, &answer);
            hold(ws, Duration::from_secs(3));
        });
        let opened = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#);
        let error = opened.err().unwrap_or_else(|| panic!("code {code} was taken for a login"));
        assert_eq!(error.code(), Code::ApiError, "{code}: {error}");
        assert!(error.message().contains("refused"), "{code}: {error}");

        let login = move |id: &str| format!(r#"{{"code":{code},"message":"success","request_id":"{id}"}}"#);
        let opened = Stream::open_orders(client(&order_venue(login, vec![]), "{}"), session());
        let error = opened.err().unwrap_or_else(|| panic!("login code {code} was taken for a login"));
        assert_eq!(error.code(), Code::ApiError, "{code}: {error}");
    }

    // On a reconnection: the stream fails (a refusal), neither reconnected nor retried.
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    let stream = market_answering(move |i| {
        counted.fetch_add(1, Ordering::SeqCst);
        let code = if i == 0 { "200" } else { "1e-400" };
        format!(r#"{{"seq":1,"channel":"auth","data":{{"code":{code},"msg":"success"}}}}"#)
    });
    let (failed, before) = until(&stream, LONG, "failed", is_status("failed"));
    assert!(!before.iter().any(is_status("reconnected")), "{before:#?}");
    assert!(failed["message"].as_str().unwrap().contains("refused"), "{failed}");
    assert_no_connection_beyond(2, || connections.load(Ordering::SeqCst), "no reconnect loop");

    // A login acked, then answered with such a code: the stream ends as on a refusal.
    let outcome = |_, id: &str| format!(r#"{{"code":-0,"message":"success","request_id":"{id}"}}"#);
    let (url, connections) = acking_venue(Duration::from_millis(300), outcome, vec![]);
    let stream = Stream::open_orders(client(&url, "{}"), session()).expect("the ack lets the open return");
    let (failed, _) = until(&stream, LONG, "failed", is_status("failed"));
    assert!(failed["message"].as_str().unwrap().contains("auth:login"), "{failed}");
    assert_no_connection_beyond(1, || connections.load(Ordering::SeqCst), "no reconnect loop");
}

/// The events of an order stream whose login is acked, then answered `after` later by `frame`
/// (no request_id); with `order_first`, an order is sent (and left unanswered) before that.
fn acked_then(frame: Value, order_first: bool) -> (Stream, Arc<AtomicUsize>) {
    let frame = frame.to_string();
    let (url, connections) = acking_venue(Duration::from_millis(400), move |_, _| frame.clone(), vec![]);
    let stream = Stream::open_orders(client(&url, "{}"), session()).expect("the ack lets the open return");
    if order_first {
        stream.new_order(ORDER).unwrap();
    }
    (stream, connections)
}

#[test]
fn a_login_acked_then_refused_without_its_request_id_ends_the_stream() {
    // Nothing else awaits an answer: a refusal that names no request is the login's.
    for (refusal, words) in [
        (json!({ "code": 401, "message": "invalid token" }), "invalid token"),
        (json!({ "code": 403, "message": "forbidden" }), "forbidden"),
        (json!({ "message": "Invalid signature" }), "Invalid signature"),
    ] {
        let (stream, connections) = acked_then(refusal.clone(), false);
        let (failed, before) = until(&stream, LONG, "failed", is_status("failed"));
        assert_eq!(failed["code_name"], "PERPS_API_ERROR", "{refusal}: {failed}");
        let message = failed["message"].as_str().unwrap();
        assert!(message.contains("auth:login") && message.contains(words), "{refusal}: {message}");
        let states: Vec<&Value> = before.iter().map(|e| &e["state"]).collect();
        assert_eq!(states, ["connected", "disconnected"], "{refusal}: {before:#?}");
        let error = stream.next(Some(SECOND)).unwrap_err();
        assert_eq!(error.code(), Code::StreamClosed, "{refusal}");
        assert!(error.message().contains(words), "{refusal}: {error}");
        assert_eq!(connections.load(Ordering::SeqCst), 1, "{refusal}: no reconnect loop");
    }
}

#[test]
fn while_an_order_awaits_only_a_refusal_of_the_token_is_taken_for_the_logins() {
    // A 403 or a "signature" refusal may be the order's (orders are body-signed): passed on,
    // and the stream goes on.
    for frame in [json!({ "code": 403, "message": "forbidden" }), json!({ "message": "Invalid signature" })] {
        let (stream, connections) = acked_then(frame.clone(), true);
        let (passed, before) = until(&stream, LONG, "the frame", is_channel("unrecognized"));
        assert_eq!(passed["frame"], frame);
        assert!(!before.iter().any(|e| e["state"] == "disconnected"), "{before:#?}");
        assert!(drain(&stream, Duration::from_millis(300)).is_empty(), "the stream goes on");
        stream.new_order(ORDER).expect("orders go on");
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    }
    // Code 401 (missing or invalid token) or words about the token answer only the login.
    for frame in [json!({ "code": 401, "message": "unauthorized" }), json!({ "error": "invalid token" })] {
        let (stream, _) = acked_then(frame.clone(), true);
        let (failed, before) = until(&stream, LONG, "failed", is_status("failed"));
        assert!(failed["message"].as_str().unwrap().contains("auth:login"), "{frame}: {failed}");
        assert!(!before.iter().any(is_channel("unrecognized")), "{frame}: {before:#?}");
        assert_eq!(stream.next(Some(SECOND)).unwrap_err().code(), Code::StreamClosed, "{frame}");
    }
}

#[test]
fn a_late_answer_to_an_earlier_connections_login_is_no_order_response() {
    // Connection 0: the login acked, then the connection lost; on connection 1 (logged in),
    // the outcome of connection 0's login arrives.
    let first_login = Arc::new(std::sync::Mutex::new(String::new()));
    let kept = first_login.clone();
    let url = venue(move |i, mut ws| {
        let id = read_json(&mut ws)["request_id"].as_str().unwrap().to_owned();
        if i == 0 {
            send(&mut ws, &ack(&id));
            *kept.lock().unwrap() = id;
            std::thread::sleep(Duration::from_millis(200));
            return;
        }
        send(&mut ws, &answer(&id, 0, "success"));
        std::thread::sleep(Duration::from_millis(100));
        let earlier = kept.lock().unwrap().clone();
        send(&mut ws, &answer(&earlier, 0, "success"));
        send(&mut ws, &answer(&earlier, 401, "invalid token"));
        hold(ws, Duration::from_secs(5));
    });
    let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
    until(&stream, LONG, "reconnected", is_status("reconnected"));
    let earlier = first_login.lock().unwrap().clone();
    for words in ["success", "invalid token"] {
        let (event, before) = until(&stream, LONG, "the late answer", |e| e["channel"] != "status");
        assert!(before.is_empty(), "{before:#?}");
        assert_eq!(event["channel"], "unrecognized", "not an order's answer: {event}");
        assert_eq!(event["answers"], "auth:login", "{event}");
        assert_eq!(
            (event["frame"]["request_id"].as_str(), event["frame"]["message"].as_str()),
            (Some(&*earlier), Some(words))
        );
    }
    assert!(drain(&stream, Duration::from_millis(300)).is_empty(), "the stream goes on");
}

#[test]
fn an_account_push_sent_before_the_auth_answer_comes_after_the_status_event() {
    // Each connection: an account push, then the auth answer (success; a refusal on the
    // third); the first two drop after a moment.
    let url = venue(|i, mut ws| {
        read_json(&mut ws);
        send(&mut ws, &json!({ "seq": 1, "channel": "order", "data": { "connection": i } }).to_string());
        let code = if i < 2 { 200 } else { 401 };
        send(
            &mut ws,
            &json!({ "seq": 2, "channel": "auth", "data": { "code": code, "msg": "invalid token" } }).to_string(),
        );
        std::thread::sleep(Duration::from_millis(200));
    });
    let stream = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap();
    let (_, events) = until(&stream, LONG, "failed", is_status("failed"));
    let names: Vec<String> = events
        .iter()
        .filter(|e| {
            e["channel"] == "order" || ["connected", "reconnected"].contains(&e["state"].as_str().unwrap_or(""))
        })
        .map(|e| match e["state"].as_str() {
            Some(state) => state.to_owned(),
            None => format!("push {}", e["data"]["connection"]),
        })
        .collect();
    // The refused connection's push is delivered too, before `failed`.
    assert_eq!(names, ["connected", "push 0", "reconnected", "push 1", "push 2"], "{events:#?}");
}
