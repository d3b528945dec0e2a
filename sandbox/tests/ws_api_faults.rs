//! The order stream's faults (`Faults::ws_*`, `POST /_sandbox/faults`): an outcome frame
//! with code 503 for an order the engine placed, the same for an order it never saw, an
//! outcome sent twice, and an ack worded otherwise than "accepted" before a refusal. Each checks the frames and the engine's state, and that the fault is
//! used up after `times` orders.

mod common;

use std::time::Duration;

use common::ws::{Client, request, signed};
use common::{Trader, limit};
use perps_sandbox::{Faults, Sandbox};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);
const SESSION: &str = "0f3c6a2e-8d41-4b7a-9e55-6c2d1a0b9f37";

fn logged_in(sb: &Sandbox, t: &Trader) -> Client {
    let mut c = Client::connect(&sb.ws_api_url());
    c.send(&request(SESSION, "login", "auth:login", &json!({"token": t.token})));
    assert_eq!(c.next_json(WAIT).expect("the login answer")["code"], 0);
    c
}

/// Sends a resting buy (cl_ord_id `cl`, request_id `cl` too) and returns its ack and outcome.
fn order(c: &mut Client, t: &Trader, cl: &str) -> (Value, Value) {
    let params = limit("BTC-USD", "buy", "0.01", "64000", "gtc", cl).to_string();
    c.send(&signed(SESSION, cl, "order:new", &params, &t.key));
    let ack = c.next_json(WAIT).expect("the ack");
    let outcome = c.next_json(WAIT).expect("the outcome");
    (ack, outcome)
}

fn upstream_timeout(request_id: &str) -> Value {
    json!({"code": 503, "message": "upstream timeout", "request_id": request_id})
}

fn success(request_id: &str) -> Value {
    json!({"code": 0, "message": "success", "request_id": request_id})
}

/// Sets the faults over the admin endpoint, as a script would.
fn post_faults(sb: &Sandbox, body: &str) {
    let (status, answer) = common::exchange(&common::agent(), "POST", &format!("{}/faults", sb.admin_url()), &[], body);
    assert_eq!(status, 200, "{answer}");
}

#[test]
fn a_placed_order_whose_outcome_says_503() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    post_faults(&sb, r#"{"ws_outcome_code":503,"times":2}"#);
    for cl in ["placed-1", "placed-2"] {
        let (ack, outcome) = order(&mut c, &t, cl);
        assert_eq!((&ack["status"], &ack["request_id"]), (&json!("accepted"), &json!(cl)));
        assert_eq!(outcome, upstream_timeout(cl));
        assert_eq!(t.order_by_cl(cl)["status"], "open", "placed all the same");
    }
    assert_eq!(sb.faults(), Faults::default(), "used up after two orders");
    let (_, outcome) = order(&mut c, &t, "placed-3");
    assert_eq!(outcome, success("placed-3"));
    assert_eq!(c.next_json(Duration::from_millis(200)), None, "nothing more");
    assert_eq!(t.get("/api/query_open_orders").1["total"], 3);
}

#[test]
fn an_order_never_placed_whose_outcome_says_503() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    post_faults(&sb, r#"{"ws_outcome_code":503,"ws_not_placed":true,"times":1}"#);
    let (ack, outcome) = order(&mut c, &t, "lost-1");
    assert_eq!(ack["status"], "accepted");
    assert_eq!(outcome, upstream_timeout("lost-1"));
    let (status, answer) = t.get("/api/query_order?cl_ord_id=lost-1");
    assert_eq!(status, 404, "the engine never saw it: {answer}");
    assert_eq!(t.get("/api/query_open_orders").1["total"], 0);
    assert!(sb.events_since(0).iter().all(|e| e["data"]["cl_ord_id"] != "lost-1"), "no account event either");
    let (_, outcome) = order(&mut c, &t, "lost-2");
    assert_eq!(outcome, success("lost-2"), "one order only");
    assert_eq!(t.order_by_cl("lost-2")["status"], "open");
}

#[test]
fn an_outcome_sent_twice() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    post_faults(&sb, r#"{"ws_repeat_outcome":true,"times":1}"#);
    let (ack, outcome) = order(&mut c, &t, "twice-1");
    assert_eq!(ack["status"], "accepted");
    assert_eq!(outcome, success("twice-1"));
    assert_eq!(c.next_json(WAIT), Some(success("twice-1")), "the same outcome again");
    let (_, outcome) = order(&mut c, &t, "twice-2");
    assert_eq!(outcome, success("twice-2"));
    assert_eq!(c.next_json(Duration::from_millis(200)), None, "used up: said once");
    assert_eq!(t.get("/api/query_open_orders").1["total"], 2, "each order placed once");
}

#[test]
fn an_ack_worded_otherwise_then_a_refusal_of_an_order_never_placed() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    post_faults(&sb, r#"{"ws_ack_word":"received","ws_outcome_code":400,"ws_not_placed":true,"times":1}"#);
    let (ack, outcome) = order(&mut c, &t, "worded-1");
    assert_eq!(ack, json!({"code": 0, "status": "received", "request_id": "worded-1"}), "the word replaced only");
    assert_eq!(outcome, json!({"code": 400, "message": "request rejected", "request_id": "worded-1"}));
    assert_eq!(t.get("/api/query_order?cl_ord_id=worded-1").0, 404, "never placed");
    assert_eq!(sb.faults(), Faults::default(), "used up");
    let (ack, outcome) = order(&mut c, &t, "worded-2");
    assert_eq!(ack["status"], "accepted", "one order only");
    assert_eq!(outcome, success("worded-2"));

    for word in ["", "accepted\n", &"x".repeat(65)] {
        let body = json!({"ws_ack_word": word}).to_string();
        let (status, answer) =
            common::exchange(&common::agent(), "POST", &format!("{}/faults", sb.admin_url()), &[], &body);
        assert_eq!(status, 400, "{word:?}: {answer}");
        assert!(answer["message"].as_str().unwrap().contains("ws_ack_word"), "{answer}");
    }
}

#[test]
fn a_cancel_under_its_own_entry_and_a_set_the_order_stream_cannot_honour() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    // The top-level switches act on order:new only; this entry on order:cancel.
    post_faults(&sb, r#"{"per_endpoint":{"order:cancel":{"ws_outcome_code":408,"ws_repeat_outcome":true,"times":1}}}"#);
    assert_eq!(order(&mut c, &t, "c-1").1, success("c-1"));
    c.send(&signed(SESSION, "cancel-1", "order:cancel", &json!({"cl_ord_id": "c-1"}).to_string(), &t.key));
    assert_eq!(c.next_json(WAIT).expect("the ack")["status"], "accepted");
    let timeout = json!({"code": 408, "message": "upstream timeout", "request_id": "cancel-1"});
    assert_eq!(c.next_json(WAIT), Some(timeout.clone()));
    assert_eq!(c.next_json(WAIT), Some(timeout));
    assert_eq!(t.order_by_cl("c-1")["status"], "canceled", "cancelled all the same");

    let (status, answer) = common::exchange(
        &common::agent(),
        "POST",
        &format!("{}/faults", sb.admin_url()),
        &[],
        r#"{"per_endpoint":{"order:new":{"status":503}}}"#,
    );
    assert_eq!(status, 400, "{answer}");
    assert!(answer["message"].as_str().unwrap().contains("only the ws_* switches"), "{answer}");
}

#[test]
fn an_accepted_order_whose_outcome_is_never_sent() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = logged_in(&sb, &t);
    post_faults(&sb, r#"{"ws_no_outcome":true,"times":1}"#);
    let params = limit("BTC-USD", "buy", "0.01", "64000", "gtc", "mute-1").to_string();
    c.send(&signed(SESSION, "mute-1", "order:new", &params, &t.key));
    let ack = c.next_json(WAIT).expect("the ack");
    assert_eq!(ack["status"], "accepted");
    assert_eq!(c.next_json(Duration::from_millis(300)), None, "no outcome");
    assert_eq!(t.order_by_cl("mute-1")["status"], "open", "placed all the same");
    let (_, outcome) = order(&mut c, &t, "mute-2");
    assert_eq!(outcome, success("mute-2"), "used up");
    for refused in
        [r#"{"ws_no_outcome":true,"ws_outcome_code":503}"#, r#"{"ws_no_outcome":true,"ws_repeat_outcome":true}"#]
    {
        let (status, answer) =
            common::exchange(&common::agent(), "POST", &format!("{}/faults", sb.admin_url()), &[], refused);
        assert_eq!(status, 400, "{refused}: {answer}");
    }
}
