//! A `wss://` connection the venue resets must not end the host process with SIGPIPE.
//!
//! A Rust program ignores SIGPIPE from its start; a C, C++, Go, Java, C# or Python host of
//! the library may keep its default action, which ends the process. rustls writes its
//! records with `write_vectored` (a plain `writev` on a socket), and after a reset the stream
//! writes once more (its polite Close): without `stream::no_sigpipe` this test's process
//! dies of signal 13 (found by helper-22's review, reproduced with this test). Its own test
//! binary, so that the default action applies to nothing else.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "common/tls_fixture.rs"]
mod tls_fixture;

use helpers::*;
use perps::stream::Stream;
use std::net::TcpListener;
use std::time::Duration;

/// A TLS venue that reads the subscription, then resets the connection (RST, by an abortive
/// close); every connection alike.
fn resetting_venue() -> u16 {
    let config = tls_fixture::server_config();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { return };
            let config = config.clone();
            std::thread::spawn(move || {
                abortive_close_on_drop(&tcp);
                let tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config).unwrap(), tcp);
                let Ok(mut ws) = tungstenite::accept(tls) else { return };
                let _ = ws.read();
                std::thread::sleep(Duration::from_millis(200));
                drop(ws);
            });
        }
    });
    port
}

/// SO_LINGER with a zero time: closing the socket sends RST, not FIN.
fn abortive_close_on_drop(tcp: &std::net::TcpStream) {
    use std::os::fd::AsRawFd;
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    let size = std::mem::size_of::<libc::linger>() as libc::socklen_t;
    // SAFETY: a valid socket and a `linger` of the size given.
    let set = unsafe {
        libc::setsockopt(tcp.as_raw_fd(), libc::SOL_SOCKET, libc::SO_LINGER, (&raw const linger).cast(), size)
    };
    assert_eq!(set, 0, "SO_LINGER");
}

#[test]
fn a_reset_wss_connection_is_a_reconnection_not_a_signal() {
    // SIGPIPE's default action, as in a C host.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let port = resetting_venue();
    let ca = serde_json::json!({ "ca_bundle_path": tls_fixture::fixture("ca.pem") }).to_string();
    let stream = Stream::open_market(
        client(&format!("https://127.0.0.1:{port}"), &ca),
        None,
        r#"[{"channel":"price","symbol":"BTC-USD"}]"#,
    )
    .unwrap();
    // Twice: each reset is followed by the stream's own writes on the dead connection.
    for round in 0..2 {
        let (down, _) = until(&stream, LONG, "disconnected", is_status("disconnected"));
        assert_eq!(down["state"], "disconnected", "round {round}: {down}");
        until(&stream, LONG, "reconnected", is_status("reconnected"));
    }
}
