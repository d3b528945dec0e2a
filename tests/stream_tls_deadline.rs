//! The TLS handshake of a stream's reconnection, against `wss://` venues that are not ours
//! (each a short script on 127.0.0.1 with the test certificate of `tests/tls/`): one that
//! accepts the TCP connection and never answers the ClientHello, one that answers it one byte
//! at a time. Either must be given up within the reply timeout (`read_timeout_ms`), as the
//! plain `ws://` handshake is (`tests/stream_hostile_venue.rs`): the TLS handshake's reads
//! happen inside rustls, below the WebSocket handshake, and must keep the same deadline —
//! else the I/O thread waits forever and the stream silently stops delivering.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "common/tls_fixture.rs"]
mod tls_fixture;

use helpers::*;
use perps::stream::Stream;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use tls_fixture::fixture;

const PRICE: &str = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;

/// A `wss://` venue whose first connection works (its subscription read, then dropped) and
/// whose later ones run `later` on the raw TCP socket. Its URL and the client options that
/// trust its certificate (a reply timeout of 1 s).
fn venue_hostile_after_first(later: fn(TcpStream)) -> (String, String) {
    let config = tls_fixture::server_config();
    let port = tls_fixture::serve_connections(move |i, tcp| {
        if i > 0 {
            return later(tcp);
        }
        let tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config.clone()).unwrap(), tcp);
        let Ok(mut ws) = tungstenite::accept(tls) else { return };
        let _ = ws.read();
        std::thread::sleep(Duration::from_millis(200));
    });
    let options = serde_json::json!({ "ca_bundle_path": fixture("ca.pem"), "read_timeout_ms": 1000 }).to_string();
    (format!("https://127.0.0.1:{port}"), options)
}

/// After the first connection drops, the reconnection fails with a timeout within a few
/// reply timeouts (generous: a slow machine), and another attempt follows.
fn reconnection_times_out(url: &str, options: &str) {
    let stream = Stream::open_market(client(url, options), None, PRICE).unwrap();
    until(&stream, LONG, "disconnected", is_status("disconnected"));
    let started = Instant::now();
    let (failed, _) = until(&stream, LONG, "reconnect_failed", is_status("reconnect_failed"));
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    assert_eq!(failed["code_name"], "PERPS_TIMEOUT", "{failed}");
    until(&stream, LONG, "another attempt", is_status("reconnecting"));
}

#[test]
fn a_tls_venue_that_never_answers_the_client_hello_cannot_hold_a_reconnect() {
    let (url, options) = venue_hostile_after_first(|mut tcp| {
        // The ClientHello is read, and nothing ever answered.
        let _ = tcp.read(&mut [0u8; 4096]);
        std::thread::sleep(Duration::from_secs(60));
    });
    reconnection_times_out(&url, &options);
}

#[test]
fn a_tls_venue_that_trickles_its_server_hello_cannot_hold_a_reconnect() {
    let (url, options) = venue_hostile_after_first(|mut tcp| {
        // A real server's first flight (ServerHello, certificate…), one byte every 100 ms:
        // each read of the client's gets a byte well within the reply timeout.
        let mut server = rustls::ServerConnection::new(tls_fixture::server_config()).unwrap();
        let mut hello = [0u8; 4096];
        let Ok(n) = tcp.read(&mut hello) else { return };
        if server.read_tls(&mut &hello[..n]).is_err() || server.process_new_packets().is_err() {
            return;
        }
        let mut flight = Vec::new();
        while server.wants_write() {
            server.write_tls(&mut flight).unwrap();
        }
        for byte in flight {
            if tcp.write_all(&[byte]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    reconnection_times_out(&url, &options);
}
