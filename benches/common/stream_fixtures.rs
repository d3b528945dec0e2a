//! What the stream benchmarks share (`benches/streams.rs`, `benches/stream_callgrind_driver.rs`):
//! the order, the `depth_book` push, and the floor of the order-entry target.
#![allow(dead_code)]

use perps::client::Client;
use perps::client::options::ClientOptions;
use perps::order::OrderBody;
use perps::session::Session;
use std::sync::Arc;

pub const SEED_B58: &str = "BbMQkQYZspmkytduTWvXEtc4mMURjsekJDvty2WtKeSb";
pub const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"alo","reduce_only":false,"cl_ord_id":"bench-1"}"#;
/// Many connections allowed: the benchmarks open several, quickly.
pub const CLIENT_OPTIONS: &str = r#"{"stream_connects_per_minute":100000,"stream_max_connections":1000}"#;

/// A `depth_book` push of 20 asks and 20 bids, unsorted (as the venue sends them), prices
/// and quantities as strings.
pub fn depth_frame(seq: u64) -> String {
    let mut asks: Vec<String> =
        (0..20).map(|i| format!("[\"{}.{}\",\"{}.{:03}\"]", 65010 + (i * 7) % 20, i % 10, i + 1, i)).collect();
    let mut bids: Vec<String> =
        (0..20).map(|i| format!("[\"{}.{}\",\"{}.{:03}\"]", 64990 - (i * 7) % 20, i % 10, i + 1, i)).collect();
    asks.rotate_left(7);
    bids.rotate_left(3);
    format!(
        r#"{{"seq":{seq},"channel":"depth_book","symbol":"BTC-USD","data":{{"asks":[{}],"bids":[{}],"symbol":"BTC-USD"}}}}"#,
        asks.join(","),
        bids.join(",")
    )
}

pub fn client(perps_url: &str) -> Arc<Client> {
    let options = ClientOptions::parse(Some(CLIENT_OPTIONS)).unwrap();
    Arc::new(Client::new(perps_url, perps_url, options).unwrap())
}

/// The floor's frame: the body signature of the validated params, in an `order:new` frame of
/// the library's shape and size (fixed ids), written the plain way (`format!`, serde_json).
pub fn floor_order_frame(session: &Session, body: &OrderBody) -> String {
    let signature = session.sign_body_now(body.as_str().as_bytes(), 1_700_000_000_000).unwrap();
    format!(
        r#"{{"session_id":"00000000-0000-4000-8000-000000000000","request_id":"00000000-0000-4000-8000-000000000001","method":"order:new","header":{{"x-request-id":"{}","x-request-timestamp":"{}","x-request-signature":"{}","x-request-sign-version":"v1"}},"params":{}}}"#,
        signature.request_id(),
        signature.timestamp(),
        signature.signature(),
        serde_json::to_string(body.as_str()).unwrap()
    )
}

/// A token of the venue's shape and size (a JWT: three base64url parts, about 420 characters).
pub fn bench_token() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut part = |n: usize| -> String {
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                ALPHABET[(state % 64) as usize] as char
            })
            .collect()
    };
    format!("eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.{}.{}", part(290), part(86))
}
