//! Shared by the stream tests: a client pointed at the test venue, a session, and waiting
//! for events.
#![allow(dead_code)]

use perps::client::Client;
use perps::client::options::ClientOptions;
use perps::session::Session;
use perps::stream::Stream;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const TOKEN: &str = "ws-test-token-3Kd9Qz";
/// RFC 8032 test 1 seed (base58); its public key verifies the order frames' signatures.
pub const SEED_B58: &str = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
pub const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"alo","reduce_only":false}"#;

/// Fast timers for tests; `extra` adds or overrides options (a JSON object's fields).
pub fn client(perps_url: &str, extra: &str) -> Arc<Client> {
    let mut options: serde_json::Map<String, Value> = serde_json::from_str(
        r#"{"stream_reconnect_min_ms":5,"stream_reconnect_max_ms":50,"stream_connects_per_minute":100000,
            "stream_max_connections":1000,"connect_timeout_ms":2000,"read_timeout_ms":2000}"#,
    )
    .unwrap();
    options.extend(serde_json::from_str::<serde_json::Map<String, Value>>(extra).unwrap());
    let options = ClientOptions::parse(Some(&Value::Object(options).to_string())).unwrap();
    Arc::new(Client::new(perps_url, perps_url, options).unwrap())
}

pub fn session() -> Arc<Session> {
    Arc::new(Session::from_api_key(TOKEN, SEED_B58).unwrap())
}

/// Events until one satisfies `pred` (returned with those before it); panics after `limit`.
pub fn until(stream: &Stream, limit: Duration, what: &str, pred: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
    let deadline = Instant::now() + limit;
    let mut before = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = stream.next(Some(left)).unwrap_or_else(|e| panic!("waiting for {what}: {e} (after {before:?})"));
        let Some(event) = event else { panic!("timed out waiting for {what}; saw {before:#?}") };
        let event: Value = serde_json::from_str(&event).unwrap();
        if pred(&event) {
            return (event, before);
        }
        before.push(event);
    }
}

pub fn is_status(state: &'static str) -> impl Fn(&Value) -> bool {
    move |e| e["channel"] == "status" && e["state"] == state
}

pub fn is_channel(channel: &'static str) -> impl Fn(&Value) -> bool {
    move |e| e["channel"] == channel
}

/// Every event available within `quiet` of the previous one.
pub fn drain(stream: &Stream, quiet: Duration) -> Vec<Value> {
    std::iter::from_fn(|| stream.next(Some(quiet)).unwrap()).map(|e| serde_json::from_str(&e).unwrap()).collect()
}

pub const SECOND: Duration = Duration::from_secs(1);
pub const LONG: Duration = Duration::from_secs(10);
