//! `ws-api/v1` against a hand-written tungstenite client: `auth:login`, signed `order:new` and
//! `order:cancel` (a wrong signature, an expired timestamp, no version header), the two
//! reply frames in each ack style, an alo rejection after its ack, the account event before
//! the ack when configured, `x-session-id` routing of REST results, malformed requests.

mod common;

use std::time::Duration;

use common::ws::{Client, request, signed, signed_with};
use common::{Trader, limit};
use ed25519_dalek::SigningKey;
use perps_sandbox::{AckStyle, Sandbox, SandboxConfig};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);
const SESSION: &str = "5d1e0a3c-2f4b-4c8e-9a77-1b2c3d4e5f60";

/// A ws-api connection logged in as `t`.
fn logged_in(sb: &Sandbox, t: &Trader) -> Client {
    let mut c = Client::connect(&sb.ws_api_url());
    c.send(&request(SESSION, "login-1", "auth:login", &json!({"token": t.token})));
    let answer = c.next_json(WAIT).expect("the login answer");
    assert_eq!(answer, json!({"code": 0, "message": "success", "request_id": "login-1"}));
    c
}

fn order_params(cl: &str, price: &str, tif: &str) -> String {
    limit("BTC-USD", "buy", "0.01", price, tif, cl).to_string()
}

/// The two frames of one request.
fn two_frames(c: &mut Client) -> (Value, Value) {
    let ack = c.next_json(WAIT).expect("the ack");
    let outcome = c.next_json(WAIT).expect("the outcome");
    (ack, outcome)
}

#[test]
fn order_new_and_cancel_give_an_ack_then_the_outcome() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    c.send(&signed(SESSION, "new-1", "order:new", &order_params("ws-1", "64000", "gtc"), &t.key));
    let (ack, outcome) = two_frames(&mut c);
    assert_eq!(ack, json!({"code": 0, "status": "accepted", "request_id": "new-1"}));
    assert_eq!(outcome, json!({"code": 0, "message": "success", "request_id": "new-1"}));
    let order = t.order_by_cl("ws-1");
    assert_eq!((&order["status"], &order["price"]), (&json!("open"), &json!("64000.00")));

    c.send(&signed(SESSION, "cancel-1", "order:cancel", &json!({"cl_ord_id": "ws-1"}).to_string(), &t.key));
    let (ack, outcome) = two_frames(&mut c);
    assert_eq!((&ack["status"], &ack["request_id"]), (&json!("accepted"), &json!("cancel-1")));
    assert_eq!(outcome, json!({"code": 0, "message": "success", "request_id": "cancel-1"}));
    assert_eq!(t.order_by_cl("ws-1")["status"], "canceled");
    // The order is gone: the engine's refusal comes after the ack, as a rejection.
    c.send(&signed(SESSION, "cancel-2", "order:cancel", &json!({"cl_ord_id": "ws-1"}).to_string(), &t.key));
    let (ack, outcome) = two_frames(&mut c);
    assert_eq!(ack["status"], "accepted");
    assert_eq!(outcome, json!({"code": 404, "message": "order not found", "request_id": "cancel-2"}));
    let listed = &sb.ws_connections()[0];
    assert_eq!((listed.endpoint, listed.session_id.as_deref(), listed.authenticated), ("ws-api", Some(SESSION), true));
}

#[test]
fn an_alo_order_that_would_cross_is_rejected_after_its_ack() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    c.send(&signed(SESSION, "alo-1", "order:new", &order_params("alo-cross", "65001", "alo"), &t.key));
    let (ack, outcome) = two_frames(&mut c);
    assert_eq!(ack["status"], "accepted");
    assert_eq!(outcome, json!({"code": 400, "message": "alo order rejected", "request_id": "alo-1"}));
    assert_eq!(t.order_by_cl("alo-cross")["status"], "rejected");
}

#[test]
fn signatures_are_checked_like_rest_and_a_refusal_is_one_frame() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    let params = order_params("sig", "64000", "gtc");
    // Signed by another key.
    let stranger = SigningKey::from_bytes(&[7u8; 32]);
    c.send(&signed(SESSION, "bad-sig", "order:new", &params, &stranger));
    assert_eq!(
        c.next_json(WAIT).unwrap(),
        json!({"code": 403, "message": "invalid signature", "request_id": "bad-sig"})
    );
    // Signed over other bytes than the params string sent (a space added after signing).
    let mut tampered = signed(SESSION, "tampered", "order:new", &params, &t.key);
    tampered["params"] = json!(params.replacen(':', ": ", 1));
    c.send(&tampered);
    assert_eq!(c.next_json(WAIT).unwrap()["code"], 403);
    // An old timestamp.
    let old = (common::now_ms() - 120_000).to_string();
    c.send(&signed_with(SESSION, "old", "order:new", &params, &t.key, "id-old", &old, true));
    let expired = c.next_json(WAIT).unwrap();
    assert_eq!((&expired["code"], &expired["request_id"]), (&json!(403), &json!("old")));
    assert!(expired["message"].as_str().unwrap().starts_with("signature has expired"), "{expired}");
    // A missing header.
    let mut no_header = signed(SESSION, "no-header", "order:new", &params, &t.key);
    no_header.as_object_mut().unwrap().remove("header");
    c.send(&no_header);
    assert_eq!(c.next_json(WAIT).unwrap()["code"], 400);
    // A refused body (an unknown field): one frame, as REST refuses it.
    let bad_body = json!({"symbol": "BTC-USD", "side": "buy", "order_type": "limit", "qty": "0.01", "price": "1", "time_in_force": "gtc", "reduce_only": false, "colour": "red"}).to_string();
    c.send(&signed(SESSION, "bad-body", "order:new", &bad_body, &t.key));
    assert_eq!(
        c.next_json(WAIT).unwrap(),
        json!({"code": 400, "message": "unknown field colour", "request_id": "bad-body"})
    );
    assert!(c.next_json(Duration::from_millis(200)).is_none(), "no second frame after a refusal");
    assert_eq!(t.get("/api/query_open_orders").1["total"], 0, "nothing was placed");
    // Without x-request-sign-version (the docs' example omits it): taken as v1.
    let now = common::now_ms().to_string();
    c.send(&signed_with(SESSION, "no-version", "order:new", &params, &t.key, "id-nv", &now, false));
    let (ack, outcome) = two_frames(&mut c);
    assert_eq!((&ack["status"], &outcome["message"]), (&json!("accepted"), &json!("success")));
}

#[test]
fn orders_need_auth_login_first() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = Client::connect(&sb.ws_api_url());
    c.send(&signed(SESSION, "early", "order:new", &order_params("early", "64000", "gtc"), &t.key));
    let refused = c.next_json(WAIT).unwrap();
    assert_eq!((&refused["code"], &refused["request_id"]), (&json!(401), &json!("early")));
    c.send(&request(SESSION, "login-bad", "auth:login", &json!({"token": "nope"})));
    assert_eq!(c.next_json(WAIT).unwrap(), json!({"code": 401, "message": "unknown token", "request_id": "login-bad"}));
    assert!(!sb.ws_connections()[0].authenticated);
}

#[test]
fn the_ack_says_accepted_under_message_or_alternates_when_configured() {
    let sb = Sandbox::start(SandboxConfig { ws_ack_style: AckStyle::Message, ..Default::default() }).unwrap();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    c.send(&signed(SESSION, "m-1", "order:new", &order_params("m-1", "64000", "gtc"), &t.key));
    let (ack, outcome) = two_frames(&mut c);
    assert_eq!(ack, json!({"code": 0, "message": "accepted", "request_id": "m-1"}));
    assert_eq!(outcome["message"], "success");

    let sb = Sandbox::start(SandboxConfig { ws_ack_style: AckStyle::Alternate, ..Default::default() }).unwrap();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    let mut keys = Vec::new();
    for i in 0..4 {
        let id = format!("alt-{i}");
        c.send(&signed(SESSION, &id, "order:new", &order_params(&id, "64000", "gtc"), &t.key));
        let (ack, _) = two_frames(&mut c);
        keys.push(if ack.get("status").is_some() { "status" } else { "message" });
        assert_eq!(ack.as_object().unwrap().len(), 3, "{ack}");
    }
    assert_eq!(keys, ["status", "message", "status", "message"]);
}

#[test]
fn pipelined_orders_are_answered_in_order() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    for i in 0..50 {
        let id = format!("p-{i}");
        c.send(&signed(SESSION, &id, "order:new", &order_params(&id, "64000", "gtc"), &t.key));
    }
    for i in 0..50 {
        let (ack, outcome) = two_frames(&mut c);
        let id = format!("p-{i}");
        assert_eq!((&ack["request_id"], &outcome["request_id"], &outcome["code"]), (&json!(id), &json!(id), &json!(0)));
    }
    assert_eq!(t.get("/api/query_open_orders").1["total"], 50);
}

/// An account stream for `t` with the `order` channel.
fn order_stream(sb: &Sandbox, t: &Trader) -> Client {
    let mut s = Client::connect(&sb.ws_stream_url());
    s.send(&json!({"auth": {"token": t.token, "streams": [{"channel": "order"}]}}));
    s.expect(WAIT, "auth", |v| v["channel"] == "auth");
    while !sb.ws_connections().iter().any(|c| c.subscriptions.len() == 1) {
        std::thread::sleep(Duration::from_millis(5));
    }
    s
}

#[test]
fn the_account_event_comes_before_the_ack_when_configured() {
    let sb = Sandbox::start(SandboxConfig { ws_event_before_ack: true, ..Default::default() }).unwrap();
    let t = Trader::with_api_key(&sb);
    let mut stream = order_stream(&sb, &t);
    let mut api = logged_in(&sb, &t);
    for i in 0..5 {
        let id = format!("first-{i}");
        api.send(&signed(SESSION, &id, "order:new", &order_params(&id, "64000", "gtc"), &t.key));
        let ack = api.next_json(WAIT).expect("the ack");
        assert_eq!((&ack["status"], &ack["request_id"]), (&json!("accepted"), &json!(id)));
        // The event was written before the ack: it is already here, no waiting needed.
        let event = stream.ready_json().expect("the order event, already received");
        assert_eq!((&event["channel"], &event["data"]["cl_ord_id"]), (&json!("order"), &json!(id)));
        assert_eq!(api.next_json(WAIT).unwrap()["message"], "success");
    }
}

#[test]
fn rest_orders_with_x_session_id_report_on_that_ws_api_session() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut api = logged_in(&sb, &t);
    let mut elsewhere = Client::connect(&sb.ws_api_url());
    elsewhere.send(&request("another-session", "login-2", "auth:login", &json!({"token": t.token})));
    elsewhere.next_json(WAIT).unwrap();

    let post = |body: &Value, session: Option<&str>, id: &str| {
        let text = body.to_string();
        let mut headers = common::signature_headers(&t.key, id, &common::now_ms().to_string(), &text);
        headers.push(t.bearer());
        headers.push(("Content-Type".into(), "application/json".into()));
        if let Some(s) = session {
            headers.push(("x-session-id".into(), s.into()));
        }
        common::exchange(&t.agent, "POST", &format!("{}/api/new_order", sb.url()), &headers, &text)
    };
    let (status, answer) = post(&limit("BTC-USD", "buy", "0.01", "64000", "gtc", "rest-s"), Some(SESSION), "rest-id-1");
    assert_eq!((status, &answer["request_id"]), (200, &json!("rest-id-1")));
    let (ack, outcome) = two_frames(&mut api);
    assert_eq!(ack, json!({"code": 0, "status": "accepted", "request_id": "rest-id-1"}));
    assert_eq!(outcome, json!({"code": 0, "message": "success", "request_id": "rest-id-1"}));
    // An alo that would cross: REST says success (submitted); the session hears the rejection.
    post(&limit("BTC-USD", "buy", "0.01", "65001", "alo", "rest-alo"), Some(SESSION), "rest-id-2");
    let (ack, outcome) = two_frames(&mut api);
    assert_eq!(ack["request_id"], "rest-id-2");
    assert_eq!(outcome, json!({"code": 400, "message": "alo order rejected", "request_id": "rest-id-2"}));
    // Without the header, or with an unknown session: nothing on the stream.
    post(&limit("BTC-USD", "buy", "0.01", "64000", "gtc", "rest-plain"), None, "rest-id-3");
    post(&limit("BTC-USD", "buy", "0.01", "64000", "gtc", "rest-nobody"), Some("nobody"), "rest-id-4");
    assert!(api.next_json(Duration::from_millis(300)).is_none());
    assert!(elsewhere.next_json(Duration::from_millis(10)).is_none(), "other sessions hear nothing");
    // A REST cancel with the header.
    let text = json!({"cl_ord_id": "rest-s"}).to_string();
    let mut headers = common::signature_headers(&t.key, "rest-id-5", &common::now_ms().to_string(), &text);
    headers.extend([
        t.bearer(),
        ("Content-Type".into(), "application/json".into()),
        ("x-session-id".into(), SESSION.into()),
    ]);
    let (status, _) = common::exchange(&t.agent, "POST", &format!("{}/api/cancel_order", sb.url()), &headers, &text);
    assert_eq!(status, 200);
    let (ack, outcome) = two_frames(&mut api);
    assert_eq!((&ack["request_id"], &outcome["message"]), (&json!("rest-id-5"), &json!("success")));
}

#[test]
fn malformed_requests_get_an_error_frame_and_the_connection_lives_on() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = Client::connect(&sb.ws_api_url());
    c.ws.send(tungstenite::Message::binary(vec![0u8; 8])).unwrap();
    let binary = c.next_json(WAIT).unwrap();
    assert_eq!((&binary["code"], &binary["request_id"]), (&json!(400), &Value::Null));
    c.send_text("{\"request_id\":");
    let invalid = c.next_json(WAIT).unwrap();
    assert!(invalid["message"].as_str().unwrap().starts_with("invalid JSON"), "{invalid}");
    c.send(&request(SESSION, "r-1", "order:amend", &json!({})));
    let unknown = c.next_json(WAIT).unwrap();
    assert_eq!((&unknown["code"], &unknown["request_id"]), (&json!(400), &json!("r-1")));
    assert!(unknown["message"].as_str().unwrap().contains("unknown method"), "{unknown}");
    c.send(&json!({"session_id": SESSION, "request_id": "r-2", "method": "auth:login", "params": {"token": t.token}}));
    let object = c.next_json(WAIT).unwrap();
    assert!(object["message"].as_str().unwrap().contains("params must be a JSON string"), "{object}");
    c.send(&json!({"request_id": "r-3", "method": "auth:login", "params": "{}"}));
    assert!(c.next_json(WAIT).unwrap()["message"].as_str().unwrap().contains("session_id is required"));
    c.send(&json!({"session_id": SESSION, "method": "auth:login", "params": "{}"}));
    assert_eq!(c.next_json(WAIT).unwrap()["request_id"], Value::Null);
    c.send(&request(SESSION, "r-4", "auth:login", &json!({"token": t.token})));
    assert_eq!(c.next_json(WAIT).unwrap(), json!({"code": 0, "message": "success", "request_id": "r-4"}));
}

#[test]
fn both_endpoints_answer_under_perps_and_refuse_plain_http() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = Client::connect(&format!("{}/perps/ws-api/v1", sb.url().replace("http", "ws")));
    c.send(&request(SESSION, "p-1", "auth:login", &json!({"token": t.token})));
    assert_eq!(c.next_json(WAIT).unwrap()["code"], 0);
    let mut s = Client::connect(&format!("{}/perps/ws-stream/v1", sb.url().replace("http", "ws")));
    s.send(&json!({"subscribe": {"channel": "price", "symbol": "ETH-USD"}}));
    assert_eq!(s.next_json(WAIT).unwrap()["data"]["mark_price"], "3000.00");
    let paths: Vec<String> = sb.ws_connections().into_iter().map(|c| c.path).collect();
    assert_eq!(paths, ["/perps/ws-api/v1", "/perps/ws-stream/v1"]);
    // A plain GET is told to upgrade.
    let (status, answer) = common::exchange(&common::agent(), "GET", &format!("{}/ws-stream/v1", sb.url()), &[], "");
    assert_eq!((status, &answer["code"]), (426, &json!(426)));
}
