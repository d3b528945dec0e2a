//! The whole flow over TLS, as against a real venue: sign-in, login and orders through the C
//! ABI to `https://127.0.0.1`, where a TLS front (rustls, with the test certificate in
//! `tests/tls/`) passes each decrypted request to the sandbox venue and its answer back.
//!
//! The sandbox verifies the wallet signature and every body signature over the exact bytes
//! it receives, so an accepted order proves that the request went through the library's
//! transport chain (TLS, then sent-tracking, then write coalescing) intact. Also asserted:
//! trust comes from `ca_bundle_path` alone (without it the handshake fails and nothing is
//! sent, and the message says so in words, not rustls's), the orders share one TLS
//! connection, and a plaintext answer on a TLS connection is a TLS failure after the order
//! was sent (it may have reached the venue).
//!
//! The fixtures (test-only, valid until 2126): `ca.pem`, a P-256 CA made with
//! `openssl req -x509` whose key was discarded; `server.pem` / `server.key`, a leaf it signed
//! for IP 127.0.0.1 and DNS localhost (serverAuth, CA:FALSE).

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;
#[path = "common/tls_fixture.rs"]
mod tls_fixture;

use common::abi::{Client, Session, new_order, signin};
use perps::ffi::error::perps_code::PERPS_TRANSPORT;
use perps_sandbox::{Sandbox, SandboxConfig};
use rogue_server::{Message, read_message};
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tls_fixture::fixture;

const BSC_KEY: &str = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;

/// A TLS front for the sandbox on 127.0.0.1; counts the TLS connections it accepted.
struct TlsFront {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl TlsFront {
    fn start(backend_port: u16) -> TlsFront {
        let config = tls_fixture::server_config();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        std::thread::spawn(move || {
            for tcp in listener.incoming() {
                let Ok(tcp) = tcp else { return };
                count.fetch_add(1, Ordering::SeqCst);
                let config = config.clone();
                std::thread::spawn(move || {
                    let tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config).unwrap(), tcp);
                    let backend = TcpStream::connect(("127.0.0.1", backend_port)).unwrap();
                    relay(tls, backend);
                });
            }
        });
        TlsFront { port, connections }
    }
}

/// Pass HTTP/1.1 messages one at a time: a request from the client, then the backend's
/// answer (both with a Content-Length body or none), until either side closes.
fn relay(mut tls: rustls::StreamOwned<rustls::ServerConnection, TcpStream>, mut backend: TcpStream) {
    let (mut from_client, mut from_backend) = (Vec::new(), Vec::new());
    while let Some(request) = read_message(&mut tls, &mut from_client) {
        assert_content_length_only(&request);
        if backend.write_all(&request.raw).is_err() {
            return;
        }
        let Some(answer) = read_message(&mut backend, &mut from_backend) else { return };
        assert_content_length_only(&answer);
        if tls.write_all(&answer.raw).and_then(|()| tls.flush()).is_err() {
            return;
        }
    }
}

fn assert_content_length_only(message: &Message) {
    let chunked = message.headers.iter().any(|(name, _)| name == "transfer-encoding");
    assert!(!chunked, "the relay handles Content-Length bodies only: {}", message.start_line);
}

/// The venue's two base URLs through the TLS front.
fn https_urls(venue: &Sandbox, front: &TlsFront) -> (String, String) {
    let local = format!("http://127.0.0.1:{}", venue.port());
    let remote = format!("https://127.0.0.1:{}", front.port);
    (venue.base_url().replace(&local, &remote), venue.perps_url().replace(&local, &remote))
}

#[test]
fn signin_and_orders_over_tls_are_verified_by_the_venue() {
    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox starts");
    let front = TlsFront::start(venue.port());
    let (base, perps) = https_urls(&venue, &front);
    let options = serde_json::json!({ "ca_bundle_path": fixture("ca.pem") }).to_string();
    let client = Client::new(&base, &perps, Some(&options)).expect("client");
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 3600).expect("sign-in over TLS");
    for _ in 0..3 {
        let answer = new_order(&client, &session, ORDER).expect("order over TLS");
        assert!(answer.contains("\"code\":0"), "{answer}");
    }
    let stats = venue.stats();
    assert_eq!(stats.orders_accepted, 3, "every order's body signature verified by the venue");
    assert_eq!(front.connections.load(Ordering::SeqCst), 1, "sign-in and orders share one TLS connection");
}

#[test]
fn without_the_ca_bundle_the_certificate_is_refused_and_nothing_is_sent() {
    let venue = Sandbox::start(SandboxConfig::default()).expect("sandbox starts");
    let front = TlsFront::start(venue.port());
    let (base, perps) = https_urls(&venue, &front);
    let client = Client::new(&base, &perps, None).expect("client");
    let session = Session::new();
    let failure = signin(&client, &session, "bsc", BSC_KEY, 3600).expect_err("an untrusted certificate");
    assert_eq!(failure.code, PERPS_TRANSPORT, "{failure:?}");
    assert!(!failure.may_have_reached_venue, "{failure:?}");
    // Said in words a caller can act on (where a private CA goes), not rustls's type names.
    assert!(
        failure.message.contains("TLS failure: the venue's certificate is not issued by a trusted authority"),
        "{failure:?}"
    );
    assert!(failure.message.contains("ca_bundle_path") && !failure.message.contains("UnknownIssuer"), "{failure:?}");
    assert_eq!(venue.stats().orders_received, 0);
}

/// The sandbox's own TLS mode: the CA file it names is what the client's `ca_bundle_path`
/// takes, and the root URL serves both hosts.
#[test]
fn the_sandbox_tls_mode_ca_file_is_a_ca_bundle() {
    let venue = Sandbox::start(SandboxConfig { tls: true, ..Default::default() }).expect("sandbox starts");
    let ca = venue.ca_file().expect("TLS mode names its CA file").to_str().unwrap().to_owned();
    let options = serde_json::json!({ "ca_bundle_path": ca }).to_string();
    let client = Client::new(&venue.url(), &venue.url(), Some(&options)).expect("client");
    let session = Session::new();
    signin(&client, &session, "bsc", BSC_KEY, 3600).expect("sign-in over the sandbox's TLS");
    let answer = new_order(&client, &session, ORDER).expect("order over the sandbox's TLS");
    assert!(answer.contains("\"code\":0"), "{answer}");
    assert_eq!(venue.stats().orders_accepted, 1);
}

/// After the handshake and the order, the venue answers in plaintext on the TLS connection
/// (a broken front end): rustls refuses the record. The order went out, so it may have
/// reached the venue, and the message names a TLS failure of the session, not the handshake.
#[test]
fn a_plaintext_answer_on_a_tls_connection_is_a_tls_failure_after_the_order_was_sent() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let orders = Arc::new(AtomicUsize::new(0));
    let read = orders.clone();
    let server = std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        let mut tls =
            rustls::StreamOwned::new(rustls::ServerConnection::new(tls_fixture::server_config()).unwrap(), tcp);
        if read_message(&mut tls, &mut Vec::new()).is_some() {
            read.fetch_add(1, Ordering::SeqCst);
        }
        let _ = tls.sock.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"code\":0}");
        // Keep the connection until the client has read and refused the plaintext.
        let _ = std::io::Read::read(&mut tls.sock, &mut [0u8; 64]);
    });
    let url = format!("https://127.0.0.1:{port}");
    let options = serde_json::json!({ "ca_bundle_path": fixture("ca.pem") }).to_string();
    let client = Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(&options)).expect("client");
    let session = Session::from_api_key("tls-api-token", &bs58::encode([1u8; 32]).into_string()).unwrap();
    let failure = new_order(&client, &session, ORDER).expect_err("a plaintext answer");
    assert_eq!(failure.code, PERPS_TRANSPORT, "{failure:?}");
    assert!(failure.may_have_reached_venue, "{failure:?}");
    assert!(failure.message.contains("TLS failure: the venue's TLS data was not valid"), "{failure:?}");
    assert!(failure.message.contains("may have received it"), "{failure:?}");
    drop(client);
    server.join().unwrap();
    assert_eq!(orders.load(Ordering::SeqCst), 1, "the order reached the venue once");
}
