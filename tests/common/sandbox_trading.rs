//! The sandbox venue as the trading tests drive it: started in-process, its admin endpoints
//! (`/_sandbox/*`) over HTTP as a test in another language would call them, a signed-in
//! client, resting orders and what the venue holds. Shared by `trading_flows.rs` and
//! `cancel_all.rs` (included with `#[path]`: only the tests that trade on the sandbox build it).
#![allow(dead_code)]

use super::common::abi::{Client, Failure, Session, call, new_order, signin};
use perps_sandbox::{Sandbox, SandboxConfig};
use serde_json::{Value, json};

pub const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

pub fn venue(config: SandboxConfig) -> Sandbox {
    Sandbox::start(config).expect("sandbox starts")
}

pub fn admin(venue: &Sandbox) -> String {
    format!("http://127.0.0.1:{}/_sandbox", venue.port())
}

pub fn admin_get(venue: &Sandbox, what: &str) -> Value {
    let mut answer = ureq::get(&format!("{}/{what}", admin(venue))).call().expect("admin GET");
    serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap()
}

pub fn admin_post(venue: &Sandbox, what: &str, body: Value) -> Value {
    let mut answer = ureq::post(&format!("{}/{what}", admin(venue)))
        .header("content-type", "application/json")
        .send(body.to_string())
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap()
}

/// The venue's request log, newest last.
pub fn requests(venue: &Sandbox, last: usize) -> Vec<Value> {
    admin_get(venue, &format!("requests?last={last}")).as_array().cloned().expect("the request log is an array")
}

pub fn signed_in(venue: &Sandbox, options: Option<&str>) -> (Client, Session) {
    let client = Client::new(&venue.base_url(), &venue.perps_url(), options).expect("client");
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 3600).expect("sign-in");
    (client, session)
}

pub fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A list answer: a bare array or the `result` of an envelope.
pub fn list(answer: &Value) -> Vec<Value> {
    match answer {
        Value::Array(items) => items.clone(),
        other => other["result"].as_array().cloned().unwrap_or_default(),
    }
}

/// A decimal field the venue may write as a string or a number.
pub fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) => s.parse().unwrap(),
        other => other.as_f64().unwrap(),
    }
}

pub fn limit_order(side: &str, price: &str, qty: &str, extra: &str) -> String {
    format!(
        r#"{{"symbol":"BTC-USD","side":"{side}","order_type":"limit","qty":"{qty}","price":"{price}","time_in_force":"gtc","reduce_only":false{extra}}}"#
    )
}

pub fn expect(result: Result<String, Failure>, code: perps::ffi::error::perps_code) -> Failure {
    let f = result.expect_err("expected a failure");
    assert_eq!(f.code, code, "{f:?}");
    f
}

/// A resting buy of `symbol` 5 % under its mark, with `cl_ord_id` `cl`; returns its order id.
pub fn resting(client: &Client, session: &Session, symbol: &str, cl: &str) -> i64 {
    let params = json!({ "symbol": symbol }).to_string();
    let mark = num(&parse(&call(client, None, "query_symbol_price", Some(&params)).unwrap())["mark_price"]);
    let order = limit_order("buy", &format!("{:.2}", mark * 0.95), "0.01", &format!(r#","cl_ord_id":"{cl}""#))
        .replace("BTC-USD", symbol);
    new_order(client, session, &order).unwrap_or_else(|f| panic!("{cl}: {f:?}"));
    order_of(client, session, cl)["id"].as_i64().unwrap()
}

/// The venue's word on the order with `cl_ord_id` `cl` (`query_order`).
pub fn order_of(client: &Client, session: &Session, cl: &str) -> Value {
    let params = json!({ "cl_ord_id": cl }).to_string();
    parse(&call(client, Some(session), "query_order", Some(&params)).unwrap_or_else(|f| panic!("{cl}: {f:?}")))
}

/// The bodies of the requests the venue logged to `path` (e.g. "/api/cancel_order").
pub fn bodies_to(venue: &Sandbox, path: &str) -> Vec<Value> {
    let log = requests(venue, 500);
    log.iter()
        .filter(|r| r["path"].as_str().is_some_and(|p| p.ends_with(path)))
        .map(|r| parse(r["body"].as_str().unwrap()))
        .collect()
}
