//! The venue's Close frame as the venue sent it, against venues that are not ours (each a
//! short script on 127.0.0.1): the documented 408 body (venue-api §2.1) sent as the whole
//! payload, with no 2-byte status code, and after a raw code 408 — both invalid status codes
//! for which tungstenite substitutes its own `1002 "Protocol violation"`, which must never be
//! reported as the venue's. Over TLS too: the frame is read again from the decrypted bytes
//! (and the WebSocket handshake, ours, runs over TLS).

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;
#[path = "common/tls_fixture.rs"]
mod tls_fixture;
#[path = "common/ws_server.rs"]
mod ws_server;

use helpers::*;
use perps::stream::Stream;
use scripted_venue::*;
use std::io::Write;
use std::time::Duration;
use tls_fixture::fixture;
use tungstenite::Message;

const PRICE: &str = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;
const BODY: &str = r#"{"code":408,"message":"disconnecting due to not receive Pong within 5 minute period"}"#;

/// The `disconnected` event of a market stream whose venue, after the subscription, sends a
/// Close frame with `payload` (raw bytes) and keeps the socket open.
fn disconnected_after_close(payload: Vec<u8>) -> serde_json::Value {
    let url = venue(move |i, mut ws| {
        read_json(&mut ws);
        if i > 0 {
            return hold(ws, Duration::from_secs(3));
        }
        ws.get_mut().write_all(&ws_server::raw_frame(true, 0x8, &payload)).unwrap();
        std::thread::sleep(Duration::from_secs(3));
    });
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    until(&stream, LONG, "disconnected", is_status("disconnected")).0
}

#[test]
fn the_documented_408_body_without_a_status_code_is_reported_as_sent() {
    let down = disconnected_after_close(BODY.as_bytes().to_vec());
    assert_eq!(down["close_code"], serde_json::Value::Null, "{down}");
    assert_eq!(down["close_reason"], BODY, "{down}");
    assert!(down["reason"].as_str().unwrap().contains("not receive Pong"), "{down}");
}

#[test]
fn a_raw_invalid_code_408_is_reported_with_its_words() {
    let down = disconnected_after_close([&408u16.to_be_bytes()[..], b"no pong for 5 minutes"].concat());
    assert_eq!(down["close_code"], 408, "{down}");
    assert_eq!(down["close_reason"], "no pong for 5 minutes", "{down}");
}

/// A venue over TLS (the test certificate of `tests/tls/`, see `tests/tls.rs`): its first
/// connection sends a push, then the documented 408 body as a Close payload with no code.
/// Its URL, and the client options that trust its certificate.
fn tls_venue() -> (String, String) {
    let config = tls_fixture::server_config();
    let port = tls_fixture::serve_connections(move |i, tcp| {
        let tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config.clone()).unwrap(), tcp);
        let Ok(mut ws) = tungstenite::accept(tls) else { return };
        let _ = ws.read();
        if i > 0 {
            std::thread::sleep(Duration::from_secs(3));
            return;
        }
        ws.send(Message::text(r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{}}"#)).unwrap();
        ws.get_mut().write_all(&ws_server::raw_frame(true, 0x8, BODY.as_bytes())).unwrap();
        ws.get_mut().flush().unwrap();
        std::thread::sleep(Duration::from_secs(3));
    });
    let ca = serde_json::json!({ "ca_bundle_path": fixture("ca.pem") }).to_string();
    (format!("https://127.0.0.1:{port}"), ca)
}

#[test]
fn over_tls_the_handshake_works_and_the_close_is_read_from_the_decrypted_bytes() {
    let (url, options) = tls_venue();
    let stream = Stream::open_market(client(&url, &options), None, PRICE).unwrap();
    let (connected, _) = until(&stream, LONG, "connected", is_status("connected"));
    assert!(connected["url"].as_str().unwrap().starts_with("wss://"), "{connected}");
    until(&stream, LONG, "price", is_channel("price"));
    let (down, _) = until(&stream, LONG, "disconnected", is_status("disconnected"));
    assert_eq!(down["close_code"], serde_json::Value::Null, "{down}");
    assert_eq!(down["close_reason"], BODY, "{down}");
}
