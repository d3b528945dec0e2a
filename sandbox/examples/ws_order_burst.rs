//! Pipelined order entry on one ws-api connection against an in-process sandbox, next to
//! sequential REST orders: the sandbox's side of issue 14's "10,000 pipelined orders at ≥ 10×
//! the rate of sequential REST orders". A hand-written client (tungstenite, ed25519-dalek,
//! ureq), never the library.
//!
//! ```sh
//! cargo run --release -p perps-sandbox --example ws_order_burst            # 10000 and 1000
//! cargo run --release -p perps-sandbox --example ws_order_burst -- 20000 500
//! ```
//!
//! Every `order:new` is signed (v1 over the exact params string) and written without waiting;
//! the rate counts from the first frame written to the last outcome frame read. The REST
//! figure is one `new_order` after another on a kept-alive connection.

use std::net::TcpStream;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signer as _, SigningKey};
use perps_sandbox::{Sandbox, SandboxConfig};
use serde_json::{Value, json};
use tungstenite::Message;

fn now_ms() -> String {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis().to_string()
}

fn params(i: usize) -> String {
    json!({"symbol": "BTC-USD", "side": "buy", "order_type": "limit", "qty": "0.0001", "price": "64000",
           "time_in_force": "gtc", "reduce_only": false, "cl_ord_id": format!("burst-{i}")})
    .to_string()
}

/// `(x-request-id, timestamp, signature)` of the v1 body signature.
fn sign(key: &SigningKey, body: &str) -> (String, String, String) {
    let id = uuid::Uuid::new_v4().to_string();
    let ts = now_ms();
    let signature = key.sign(format!("v1,{id},{ts},{body}").as_bytes());
    (id, ts, STANDARD.encode(signature.to_bytes()))
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().expect("counts are integers"));
    let (ws_orders, rest_orders) = (args.next().unwrap_or(10_000), args.next().unwrap_or(1_000));
    let sandbox = Sandbox::start(SandboxConfig::default()).expect("the sandbox starts");
    let credential = sandbox.issue_api_key(None).expect("an API key");
    let seed: [u8; 32] = bs58::decode(&credential.private_key).into_vec().unwrap().try_into().unwrap();
    let key = SigningKey::from_bytes(&seed);

    // ws-api: log in, then write every order without waiting, then read every reply.
    let url = sandbox.ws_api_url();
    let tcp = TcpStream::connect(url.trim_start_matches("ws://").split('/').next().unwrap()).unwrap();
    tcp.set_nodelay(true).unwrap();
    let (mut ws, _) = tungstenite::client(url.as_str(), tcp).expect("the handshake");
    let session = uuid::Uuid::new_v4().to_string();
    let login = json!({"session_id": session, "request_id": "login", "method": "auth:login",
                       "params": json!({"token": credential.token}).to_string()});
    ws.send(Message::text(login.to_string())).unwrap();
    let answer = ws.read().unwrap();
    assert!(answer.to_text().unwrap().contains("\"code\":0"), "login: {answer}");
    let frames: Vec<String> = (0..ws_orders)
        .map(|i| {
            let body = params(i);
            let (id, ts, signature) = sign(&key, &body);
            json!({"session_id": session, "request_id": format!("r-{i}"), "method": "order:new",
                   "header": {"x-request-id": id, "x-request-timestamp": ts, "x-request-signature": signature},
                   "params": body})
            .to_string()
        })
        .collect();
    let started = Instant::now();
    for frame in frames {
        ws.write(Message::text(frame)).unwrap();
    }
    ws.flush().unwrap();
    let (mut acks, mut outcomes) = (0, 0);
    while outcomes < ws_orders {
        let reply: Value = serde_json::from_str(ws.read().unwrap().to_text().unwrap()).unwrap();
        if reply.get("status").is_some() || reply["message"] == "accepted" {
            acks += 1;
        } else {
            assert_eq!(reply["code"], 0, "{reply}");
            outcomes += 1;
        }
    }
    let ws_elapsed = started.elapsed();
    assert_eq!(acks, ws_orders);

    // REST: one new_order after another (signing included, as on the ws side it was not).
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let bodies: Vec<String> = (0..rest_orders).map(|i| params(ws_orders + i)).collect();
    let started = Instant::now();
    for body in &bodies {
        let (id, ts, signature) = sign(&key, body);
        let mut response = agent
            .post(format!("{}/api/new_order", sandbox.url()))
            .header("Authorization", format!("Bearer {}", credential.token))
            .header("Content-Type", "application/json")
            .header("x-request-sign-version", "v1")
            .header("x-request-id", id)
            .header("x-request-timestamp", ts)
            .header("x-request-signature", signature)
            .send(body.as_str())
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{}", response.body_mut().read_to_string().unwrap());
        let _ = response.body_mut().read_to_string();
    }
    let rest_elapsed = started.elapsed();

    let ws_rate = ws_orders as f64 / ws_elapsed.as_secs_f64();
    let rest_rate = rest_orders as f64 / rest_elapsed.as_secs_f64();
    println!(
        "ws-api pipelined: {ws_orders} orders in {:.3} s = {ws_rate:.0} orders/s (two frames each)",
        ws_elapsed.as_secs_f64()
    );
    println!("REST sequential:  {rest_orders} orders in {:.3} s = {rest_rate:.0} orders/s", rest_elapsed.as_secs_f64());
    println!("ratio: {:.1}x", ws_rate / rest_rate);
}
