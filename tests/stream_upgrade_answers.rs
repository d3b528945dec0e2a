//! The venue's HTTP answer to the WebSocket upgrade, against venues that are not ours (each a
//! short script on 127.0.0.1): a refusal (401, 403) ends the stream, a "not now" (429, 503)
//! with `Retry-After` is waited out (without one, or with one asking for less — 0, a date past —
//! 2 s at least: the venue's connection rate; a huge one capped at a minute and said so),
//! and a 101 answer is held to RFC 6455 §4.1 — no extension
//! the client did not ask for, a `Connection` header that may be a token list. Lines may end
//! in a bare LF (RFC 9112 §2.2); a chunked refusal's body is quoted decoded.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use helpers::*;
use perps::Code;
use perps::stream::Stream;
use scripted_venue::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PRICE: &str = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;

/// Read the client's upgrade request (up to its blank line).
fn read_request(tcp: &mut TcpStream) -> String {
    let mut request = Vec::new();
    let mut byte = [0u8; 1];
    while !request.ends_with(b"\r\n\r\n") {
        match tcp.read(&mut byte) {
            Ok(1) => request.push(byte[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&request).into_owned()
}

/// Answer the upgrade with `status` and a JSON body (and `headers`, each ending in CRLF).
fn refuse(tcp: &mut TcpStream, status: &str, headers: &str, body: &str) {
    read_request(tcp);
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}\r\n{body}",
        body.len()
    );
    let _ = tcp.write_all(answer.as_bytes());
    std::thread::sleep(Duration::from_millis(200));
}

/// A venue whose first connection works for a moment (the open returns: an auth frame is
/// answered "success"), and whose later upgrades are answered by `later(tcp)`.
fn venue_refusing_later(later: impl Fn(&mut TcpStream) + Send + Sync + 'static) -> String {
    raw_venue(move |i, mut tcp| {
        if i > 0 {
            return later(&mut tcp);
        }
        let Ok(mut ws) = tungstenite::accept(tcp) else { return };
        if read_json(&mut ws).get("auth").is_some() {
            send(&mut ws, r#"{"seq":1,"channel":"auth","data":{"code":200,"msg":"success"}}"#);
        }
        std::thread::sleep(Duration::from_millis(200));
    })
}

#[test]
fn an_upgrade_refused_with_401_or_403_on_reconnection_ends_the_stream() {
    for status in ["401 Unauthorized", "403 Forbidden"] {
        // With a session (the token is what the venue refuses) and without one (public
        // channels only: retrying cannot help either).
        for with_session in [true, false] {
            let url =
                venue_refusing_later(move |tcp| refuse(tcp, status, "", r#"{"code":401,"message":"invalid token"}"#));
            let stream = if with_session {
                Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#)
            } else {
                Stream::open_market(client(&url, "{}"), None, PRICE)
            }
            .unwrap();
            let (failed, before) = until(&stream, LONG, "failed", is_status("failed"));
            assert!(before.iter().any(|e| e["state"] == "disconnected"), "{before:#?}");
            assert!(before.iter().all(|e| e["state"] != "reconnect_failed"), "{before:#?}");
            assert_eq!(failed["code_name"], "PERPS_HTTP_STATUS", "{failed}");
            assert!(failed["message"].as_str().unwrap().contains(&status[..3]), "{failed}");
            let error = stream.next(Some(SECOND)).unwrap_err();
            assert_eq!(error.code(), Code::StreamClosed, "{error}");
            assert!(error.message().contains(&status[..3]), "{error}");
        }
    }
}

#[test]
fn a_429_or_503_at_open_carries_its_retry_after_and_the_venues_reason() {
    for (status, retry_after, expected_ms) in
        [("429 Too Many Requests", "7", 7000), ("503 Service Unavailable", "Wed, 21 Oct 2015 07:28:00 GMT", 0)]
    {
        let url = raw_venue(move |_, mut tcp| {
            let headers = format!("Retry-After: {retry_after}\r\n");
            refuse(&mut tcp, status, &headers, r#"{"code":429,"message":"too many connections"}"#)
        });
        let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
        assert_eq!((error.code(), error.http_status()), (Code::HttpStatus, status[..3].parse().unwrap()), "{error}");
        assert_eq!(error.retry_after_ms(), Some(expected_ms), "{error}");
        assert!(error.message().contains("too many connections"), "{error}");
    }
}

/// A venue whose first connection drops after 200 ms, whose first reconnection is refused
/// with `status` (and `headers`, `body`), and which then serves every connection.
fn refused_once_on_reconnection(status: &'static str, headers: &'static str, body: &'static str) -> String {
    raw_venue(move |i, mut tcp| match i {
        0 => {
            let Ok(ws) = tungstenite::accept(tcp) else { return };
            std::thread::sleep(Duration::from_millis(200));
            drop(ws);
        }
        1 => refuse(&mut tcp, status, headers, body),
        _ => {
            if let Ok(ws) = tungstenite::accept(tcp) {
                hold(ws, Duration::from_secs(5));
            }
        }
    })
}

#[test]
fn a_retry_after_on_a_reconnection_is_waited_out_and_said() {
    let url =
        refused_once_on_reconnection("503 Service Unavailable", "Retry-After: 1\r\n", r#"{"message":"overloaded"}"#);
    // The backoff alone would wait at most 50 ms.
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    let (failed, _) = until(&stream, LONG, "reconnect_failed", is_status("reconnect_failed"));
    let refused_at = std::time::Instant::now();
    assert_eq!(failed["retry_after_ms"], 1000, "{failed}");
    assert!(failed["message"].as_str().unwrap().contains("overloaded"), "{failed}");
    let (waiting, _) = until(&stream, LONG, "reconnecting", is_status("reconnecting"));
    assert!(waiting["delay_ms"].as_u64().unwrap() >= 1000, "{waiting}");
    until(&stream, LONG, "reconnected", is_status("reconnected"));
    assert!(refused_at.elapsed() >= Duration::from_millis(950), "{:?}", refused_at.elapsed());
}

#[test]
fn a_429_without_retry_after_on_a_reconnection_waits_the_venues_connection_rate() {
    let url = refused_once_on_reconnection("429 Too Many Requests", "", r#"{"message":"too many connections"}"#);
    // The backoff alone would wait at most 50 ms; 30 connections per minute: 2 s apart.
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    let (failed, _) = until(&stream, LONG, "reconnect_failed", is_status("reconnect_failed"));
    let refused_at = std::time::Instant::now();
    assert!(failed.get("retry_after_ms").is_none(), "{failed}");
    assert_eq!(failed["min_wait_ms"], 2000, "{failed}");
    assert!(failed["delay_ms"].as_u64().unwrap() >= 2000, "{failed}");
    let (waiting, _) = until(&stream, LONG, "reconnecting", is_status("reconnecting"));
    assert!(waiting["delay_ms"].as_u64().unwrap() >= 2000, "{waiting}");
    until(&stream, LONG, "reconnected", is_status("reconnected"));
    assert!(refused_at.elapsed() >= Duration::from_millis(1950), "{:?}", refused_at.elapsed());
}

/// Answer the upgrade with a 101 carrying `headers` (the right `Sec-WebSocket-Accept` added)
/// and go on as the venue's WebSocket end.
fn switch(tcp: TcpStream, headers: &str) -> tungstenite::WebSocket<TcpStream> {
    switch_as(tcp, "HTTP/1.1 101 Switching Protocols", headers)
}

/// `switch` with another status line.
fn switch_as(tcp: TcpStream, status_line: &str, headers: &str) -> tungstenite::WebSocket<TcpStream> {
    switch_ending(tcp, status_line, headers, "\r\n")
}

/// `switch_as`, the accept header and the blank line ending in `eol` (`headers` end their own).
fn switch_ending(mut tcp: TcpStream, status_line: &str, headers: &str, eol: &str) -> tungstenite::WebSocket<TcpStream> {
    let request = read_request(&mut tcp);
    let key = request
        .lines()
        .find_map(|line| line.strip_prefix("Sec-WebSocket-Key: ").or_else(|| line.strip_prefix("sec-websocket-key: ")))
        .expect("the request's key")
        .trim()
        .to_owned();
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let answer = format!("{status_line}{eol}{headers}Sec-WebSocket-Accept: {accept}{eol}{eol}");
    tcp.write_all(answer.as_bytes()).unwrap();
    tungstenite::WebSocket::from_raw_socket(tcp, tungstenite::protocol::Role::Server, None)
}

/// A venue whose upgrade answer is `status_line`, `headers` and line ends `eol`, and which
/// then pushes one price (`seq` 1): the stream opens and delivers it.
fn a_price_comes_through(status_line: String, headers: &'static str, eol: &'static str) {
    let url = raw_venue(move |_, tcp| {
        let mut ws = switch_ending(tcp, &status_line, headers, eol);
        read_json(&mut ws);
        send(&mut ws, r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#);
        hold(ws, Duration::from_secs(3));
    });
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    let (price, _) = until(&stream, LONG, "price", is_channel("price"));
    assert_eq!(price["seq"], 1, "{price}");
}

#[test]
fn an_extension_the_client_did_not_ask_for_fails_the_handshake() {
    let url = raw_venue(|_, tcp| {
        let ws = switch(
            tcp,
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Extensions: permessage-deflate\r\n",
        );
        hold(ws, Duration::from_secs(3));
    });
    let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
    assert_eq!(error.code(), Code::Transport, "{error}");
    assert!(error.message().contains("permessage-deflate") && error.message().contains("did not ask"), "{error}");
}

#[test]
fn a_connection_header_with_a_token_list_is_accepted() {
    let switching = "HTTP/1.1 101 Switching Protocols".to_owned();
    a_price_comes_through(switching, "Upgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n", "\r\n");
}

#[test]
fn close_cuts_a_reconnection_handshake_short() {
    // Later upgrades are read and never answered; the reply timeout (10 s) would hold them.
    let url = venue_refusing_later(|tcp| {
        read_request(tcp);
        std::thread::sleep(Duration::from_secs(12));
    });
    let stream = Stream::open_market(client(&url, r#"{"read_timeout_ms":10000}"#), None, PRICE).unwrap();
    until(&stream, LONG, "reconnecting", is_status("reconnecting"));
    std::thread::sleep(Duration::from_millis(300));
    let closing = std::time::Instant::now();
    drop(stream); // closes, then waits (at most ~2 s) for the I/O thread
    assert!(closing.elapsed() < Duration::from_secs(1), "{:?}", closing.elapsed());
}

#[test]
fn a_token_the_venue_quotes_in_its_refusal_is_redacted_from_the_message_and_the_body() {
    // The token with its first letter JSON-escaped: the quoted reason has it written out.
    let escaped = format!("\\u{:04x}{}", TOKEN.as_bytes()[0], &TOKEN[1..]);
    let body = format!(r#"{{"message":"bad token {escaped}"}}"#);
    let url = raw_venue(move |_, mut tcp| refuse(&mut tcp, "401 Unauthorized", "", &body));
    let error = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap_err();
    assert!(error.message().contains("bad token <redacted>"), "{error}");
    assert!(!error.message().contains(&TOKEN[1..]), "{error}");
    assert!(!error.body().unwrap_or_default().contains(&TOKEN[1..]), "{:?}", error.body());
}

#[test]
fn a_101_answer_that_breaks_rfc_6455_fails_the_handshake_naming_why() {
    for (status_line, headers, words) in [
        ("HTTP/1.1 101 Switching Protocols", "Connection: Upgrade\r\n", "Upgrade: websocket"),
        ("HTTP/1.1 101 Switching Protocols", "Upgrade: websocket\r\nConnection: keep-alive\r\n", "Connection"),
        (
            "HTTP/1.1 101 Switching Protocols",
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: chat\r\n",
            "chat",
        ),
        ("HTTP/1.0 101 Switching Protocols", "Upgrade: websocket\r\nConnection: Upgrade\r\n", "HTTP/1.1"),
        // Sec-WebSocket-Accept twice, a wrong one before the right one (`switch_as` adds it):
        // the field must not appear more than once (RFC 6455 §11.3.3), and its value is then
        // not the key's answer.
        (
            "HTTP/1.1 101 Switching Protocols",
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n",
            "Sec-WebSocket-Accept",
        ),
    ] {
        let url = raw_venue(move |_, tcp| {
            let ws = switch_as(tcp, status_line, headers);
            hold(ws, Duration::from_secs(3));
        });
        let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
        assert_eq!(error.code(), Code::Transport, "{headers}: {error}");
        assert!(error.message().contains(words), "{headers}: {error}");
    }
    // A Sec-WebSocket-Accept that does not answer the key.
    let url = raw_venue(|_, mut tcp| {
        read_request(&mut tcp);
        let answer = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                      Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";
        tcp.write_all(answer.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(500));
    });
    let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
    assert!(error.message().contains("Sec-WebSocket-Accept"), "{error}");
}

#[test]
fn informational_answers_before_the_upgrade_are_read_past() {
    // 100 Continue and 103 Early Hints (a CDN's) before the 101, in one write and in the
    // same write as the 101: a client must read on to the real answer (RFC 9110 §15.2).
    let interim = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </app.js>; rel=preload\r\n\r\n";
    let status_line = format!("{interim}HTTP/1.1 101 Switching Protocols");
    a_price_comes_through(status_line, "Upgrade: websocket\r\nConnection: Upgrade\r\n", "\r\n");
    // Before a refusal: the refusal is what the error says.
    let url = raw_venue(move |_, mut tcp| {
        tcp.write_all(interim.as_bytes()).unwrap();
        refuse(&mut tcp, "401 Unauthorized", "", r#"{"message":"no"}"#)
    });
    let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
    assert_eq!((error.code(), error.http_status()), (Code::HttpStatus, 401), "{error}");
    // Without end: bounded, the ninth is taken for the answer.
    let url = raw_venue(|_, mut tcp| {
        read_request(&mut tcp);
        let _ = tcp.write_all("HTTP/1.1 103 Early Hints\r\n\r\n".repeat(1000).as_bytes());
        std::thread::sleep(Duration::from_millis(500));
    });
    let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
    assert_eq!((error.code(), error.http_status()), (Code::HttpStatus, 103), "{error}");
}

#[test]
fn an_answer_with_too_many_headers_or_too_large_a_head_is_refused_by_name() {
    let many: String = (0..200).map(|i| format!("X-H{i}: v\r\n")).collect();
    let big = format!("X-Big: {}\r\n", "a".repeat(20 * 1024));
    for (headers, words) in [(many, "more than 124 headers"), (big, "bytes of headers")] {
        let url = raw_venue(move |_, tcp| {
            let ws = switch(tcp, &format!("Upgrade: websocket\r\nConnection: Upgrade\r\n{headers}"));
            hold(ws, Duration::from_secs(3));
        });
        let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
        assert_eq!(error.code(), Code::BadResponse, "{error}");
        assert!(error.message().contains(words), "{error}");
    }
}

#[test]
fn an_answer_whose_lines_end_in_a_bare_lf_is_read_as_with_crlf() {
    // RFC 9112 §2.2: a recipient may take a bare LF for a line's end (a proxy's answer).
    // Before, the client looked only for CRLF CRLF and waited out the reply timeout.
    for (headers, eol) in [
        ("Upgrade: websocket\nConnection: Upgrade\n", "\n"),
        // Mixed: some lines end in CRLF, the blank line in a bare LF.
        ("Upgrade: websocket\r\nConnection: Upgrade\r\n", "\n"),
    ] {
        a_price_comes_through("HTTP/1.1 101 Switching Protocols".to_owned(), headers, eol);
    }
    // The header checks are the same: an extension not asked for still fails it.
    let url = raw_venue(|_, tcp| {
        let ws = switch_ending(
            tcp,
            "HTTP/1.1 101 Switching Protocols",
            "Upgrade: websocket\nConnection: Upgrade\nSec-WebSocket-Extensions: permessage-deflate\n",
            "\n",
        );
        hold(ws, Duration::from_secs(3));
    });
    let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
    assert_eq!(error.code(), Code::Transport, "{error}");
    assert!(error.message().contains("permessage-deflate"), "{error}");
    // A refusal: its status, its reason and its Retry-After, as with CRLF.
    let url = raw_venue(|_, mut tcp| {
        read_request(&mut tcp);
        let body = r#"{"code":429,"message":"too many connections"}"#;
        let answer =
            format!("HTTP/1.1 429 Too Many Requests\nRetry-After: 3\nContent-Length: {}\n\n{body}", body.len());
        let _ = tcp.write_all(answer.as_bytes());
        std::thread::sleep(Duration::from_millis(500));
    });
    let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
    assert_eq!((error.code(), error.http_status()), (Code::HttpStatus, 429), "{error}");
    assert_eq!(error.retry_after_ms(), Some(3000), "{error}");
    assert!(error.message().contains("too many connections"), "{error}");
}

/// A venue refusing the upgrade with a 503 whose body is `chunked` (sent in `parts`, 50 ms
/// apart), that keeps the connection open afterwards for `hold`.
fn refuse_chunked(parts: &'static [&'static str], hold: Duration) -> String {
    raw_venue(move |_, mut tcp| {
        read_request(&mut tcp);
        let _ = tcp.write_all(b"HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n");
        for part in parts {
            std::thread::sleep(Duration::from_millis(50));
            let _ = tcp.write_all(part.as_bytes());
        }
        std::thread::sleep(hold);
    })
}

#[test]
fn a_chunked_refusal_is_quoted_decoded() {
    // Two chunks (one with an extension), the last chunk and a trailer, in separate writes;
    // the venue then keeps the connection open: the body ends at the last chunk, not at the
    // reply timeout (30 s here).
    let url = refuse_chunked(
        &["e\r\n{\"message\":\"ov\r\n", "11;x=y\r\nerloaded, sorry\"}\r\n", "0\r\nX-Trailer: 1\r\n\r\n"],
        Duration::from_secs(40),
    );
    let started = std::time::Instant::now();
    let error = Stream::open_market(client(&url, r#"{"read_timeout_ms":30000}"#), None, PRICE).unwrap_err();
    assert_eq!((error.code(), error.http_status()), (Code::HttpStatus, 503), "{error}");
    assert!(error.message().contains("\"overloaded, sorry\""), "{error}");
    assert_eq!(error.body(), Some(r#"{"message":"overloaded, sorry"}"#), "{error}");
    assert!(started.elapsed() < Duration::from_secs(20), "{:?}", started.elapsed());
}

#[test]
fn a_refusal_whose_chunking_is_malformed_is_quoted_raw() {
    // Not hex, a size past any bound, a chunk not followed by its line end: the raw body, as
    // before, and the venue's close ends the read.
    for (raw, quoted) in [
        ("zz\r\nnot chunked\r\n", "zz"),
        ("fffffffffffffffffffff\r\nhuge\r\n", "fffffffffffffffffffff"),
        ("3\r\nabcdef\r\n0\r\n\r\n", "3"),
    ] {
        let url = refuse_chunked(Box::leak(Box::new([raw])), Duration::ZERO);
        let error = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap_err();
        assert_eq!((error.code(), error.http_status()), (Code::HttpStatus, 503), "{raw:?}: {error}");
        assert!(error.message().contains(&format!("\"{quoted}\"")), "{raw:?}: {error}");
        assert_eq!(error.body(), Some(raw), "{raw:?}: {error}");
    }
}

/// A venue whose first connection drops after a moment and which refuses every later upgrade
/// with a 429 and `headers`; when each refused attempt came, as the venue saw it.
fn refusing_every_reconnection(headers: &'static str) -> (String, Arc<Mutex<Vec<Instant>>>) {
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let seen = attempts.clone();
    let url = raw_venue(move |i, mut tcp| {
        if i == 0 {
            let Ok(ws) = tungstenite::accept(tcp) else { return };
            std::thread::sleep(Duration::from_millis(200));
            return drop(ws);
        }
        seen.lock().unwrap().push(Instant::now());
        refuse(&mut tcp, "429 Too Many Requests", headers, r#"{"message":"too many connections"}"#);
    });
    (url, attempts)
}

/// `Retry-After` values that ask for no wait (0, a date past, one that is no value): the next
/// attempt still waits the venue's connection rate (30 a minute: 2 s), as without one — never
/// only the backoff (50 ms at most here), which would spend the minute's allowance at once.
fn no_wait_asked_still_waits_the_connection_rate(header: &'static str) {
    let (url, attempts) = refusing_every_reconnection(header);
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    for n in 0..2 {
        let (failed, _) = until(&stream, LONG, "reconnect_failed", is_status("reconnect_failed"));
        assert_eq!(failed["min_wait_ms"], 2000, "{header} #{n}: {failed}");
        assert!(failed["delay_ms"].as_u64().unwrap() >= 2000, "{header} #{n}: {failed}");
        let (waiting, _) = until(&stream, LONG, "reconnecting", is_status("reconnecting"));
        assert!(waiting["delay_ms"].as_u64().unwrap() >= 2000, "{header} #{n}: {waiting}");
    }
    // Two refused attempts, as the venue saw them (both came before their events): 2 s apart
    // at least, however loaded the machine (a load only widens the gap).
    let seen = attempts.lock().unwrap().clone();
    assert!(seen.len() >= 2, "{header}: {seen:?}");
    assert!(seen[1] - seen[0] >= Duration::from_millis(1990), "{header}: {:?}", seen[1] - seen[0]);
}

#[test]
fn a_retry_after_of_zero_does_not_hurry_the_reconnection() {
    no_wait_asked_still_waits_the_connection_rate("Retry-After: 0\r\n");
}

#[test]
fn a_retry_after_date_in_the_past_does_not_hurry_the_reconnection() {
    no_wait_asked_still_waits_the_connection_rate("Retry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\n");
}

#[test]
fn a_negative_or_absent_retry_after_waits_the_connection_rate() {
    no_wait_asked_still_waits_the_connection_rate("Retry-After: -1\r\n");
    no_wait_asked_still_waits_the_connection_rate("");
}

#[test]
fn a_huge_retry_after_is_capped_at_a_minute_and_reported() {
    for (header, asked_ms) in
        [("Retry-After: 86400\r\n", 86_400_000i64), ("Retry-After: 9223372036854775\r\n", 9_223_372_036_854_775_000)]
    {
        let (url, _) = refusing_every_reconnection(header);
        let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
        let (failed, _) = until(&stream, LONG, "reconnect_failed", is_status("reconnect_failed"));
        assert_eq!(failed["retry_after_ms"], asked_ms, "{failed}");
        assert_eq!(failed["retry_after_capped"], true, "{failed}");
        assert_eq!(failed["delay_ms"], 60_000, "{failed}");
        let (waiting, _) = until(&stream, LONG, "reconnecting", is_status("reconnecting"));
        assert_eq!(waiting["delay_ms"], 60_000, "{waiting}");
    }
}
