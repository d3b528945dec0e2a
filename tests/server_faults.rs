//! Server faults, through the C ABI: a misbehaving server on 127.0.0.1 (tests/common/
//! rogue_server.rs) or the sandbox venue does one bad thing at a time, and each test asserts
//! the documented `perps_code` and `may_have_reached_venue` (README, "Network error mapping").
//! For every order the server's own count proves the order reached it at most once: the
//! library never retries.
//!
//! Here: connection set-up, connections lost after the request, time limits, and 2xx answers
//! the client cannot use. HTTP status answers, redirects and kept-alive connections:
//! `tests/server_faults_http_status.rs`; sign-in against a scripted venue:
//! `tests/server_faults_signin.rs`.

mod common;
#[path = "server_faults/helpers.rs"]
mod helpers;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Session, call, expect, new_order, prepare};
use helpers::*;
use perps::ffi::error::perps_code::*;
use rogue_server::{OnAccept, Rogue, Seen, Step, chunk, chunked_head, head_only, json, ms, response};
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

// ---- connection set-up: nothing was sent ----

#[test]
fn refused_connection_is_transport_and_not_sent() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = client_at(&format!("http://127.0.0.1:{port}"), FAST);
    let f = expect(new_order(&client, &api_session(), ORDER), PERPS_TRANSPORT, false);
    assert!(f.message.contains("request not sent"), "{f:?}");
    expect(prepare(&client, &Session::new(), "bsc", BSC_ADDRESS), PERPS_TRANSPORT, false);
}

#[test]
fn connect_timeout_when_the_accept_queue_is_full_is_not_sent() {
    use std::os::fd::AsRawFd;
    // A listener that never accepts, with its backlog lowered to 0: once one connection
    // waits in its queue, the kernel drops further SYNs and connect() hangs.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // SAFETY: listen() on our own listening socket only changes its backlog.
    assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
    let addr = listener.local_addr().unwrap();
    let mut queued = Vec::new();
    for _ in 0..4 {
        if let Ok(s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) {
            queued.push(s);
        }
    }
    // A total limit (30 s) far beyond the connect timeout (300 ms): a connect left to it, or
    // to the kernel's SYN retries (minutes), fails the bound, which leaves a loaded machine
    // seconds.
    let client = client_at(&format!("http://{addr}"), r#"{"connect_timeout_ms":300,"total_timeout_ms":30000}"#);
    let started = std::time::Instant::now();
    let f = expect(new_order(&client, &api_session(), ORDER), PERPS_TIMEOUT, false);
    assert!(f.message.contains("request not sent"), "{f:?}");
    assert!(started.elapsed() < Duration::from_secs(6), "the connect timeout bounds the wait");
}

#[test]
fn tls_handshake_failure_is_transport_and_not_sent() {
    // An https URL to a server that answers the TLS ClientHello with plain HTTP.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let hellos = Arc::new(AtomicUsize::new(0));
    let seen = hellos.clone();
    let server = std::thread::spawn(move || {
        for _ in 0..2 {
            let Ok((mut stream, _)) = listener.accept() else { return };
            let mut buf = [0u8; 2048];
            if matches!(stream.read(&mut buf), Ok(n) if n > 0 && buf[0] == 0x16) {
                seen.fetch_add(1, Ordering::SeqCst); // a TLS handshake record, never HTTP
            }
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let url = format!("https://{addr}");
    let client = Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(FAST)).unwrap();
    let f = expect(new_order(&client, &api_session(), ORDER), PERPS_TRANSPORT, false);
    assert!(f.message.contains("not sent"), "{f:?}");
    // A TLS failure, named so (not "a network error" quoting rustls's `InvalidContentType`).
    assert!(f.message.contains("TLS failure: the TLS handshake failed"), "{f:?}");
    assert!(!f.message.contains("InvalidContentType"), "{f:?}");
    expect(prepare(&client, &Session::new(), "bsc", BSC_ADDRESS), PERPS_TRANSPORT, false);
    server.join().unwrap();
    assert_eq!(hellos.load(Ordering::SeqCst), 2, "only TLS handshakes arrived, no HTTP request");
}

// ---- the connection is lost after the request was sent ----

#[test]
fn accept_then_close_may_have_reached() {
    // The server closes without reading: the client cannot tell it did not read the order.
    let rogue = Rogue::start_with(OnAccept::Close, |_, _| vec![]);
    let f = order_against_server(&rogue, FAST, PERPS_TRANSPORT, true, 0);
    assert!(f.message.contains("may have received it"), "{f:?}");
    assert_eq!(rogue.accepted(), 1, "one connection, no retry on another");
}

#[test]
fn accept_then_reset_may_have_reached() {
    let rogue = Rogue::start_with(OnAccept::Reset, |_, _| vec![]);
    order_against_server(&rogue, FAST, PERPS_TRANSPORT, true, 0);
    assert_eq!(rogue.accepted(), 1);
}

#[test]
fn request_read_then_closed_without_an_answer() {
    let f = order_against(|_, _| vec![Step::Close], FAST, PERPS_TRANSPORT, true, 1);
    assert!(f.message.contains("may have received it"), "{f:?}");
}

#[test]
fn request_read_then_reset_without_an_answer() {
    order_against(|_, _| vec![ms(20), Step::Reset], FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn reset_in_the_middle_of_the_headers() {
    let partial = b"HTTP/1.1 200 OK\r\nContent-Type: appli".to_vec();
    order_against(move |_, _| reset_after(partial.clone()), FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn reset_in_the_middle_of_the_body() {
    let mut partial = head_only(200, 64);
    partial.extend_from_slice(br#"{"code":0,"mess"#);
    order_against(move |_, _| reset_after(partial.clone()), FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn body_shorter_than_its_content_length_then_closed() {
    let mut partial = head_only(200, 64);
    partial.extend_from_slice(br#"{"code":0}"#);
    let f = order_against(move |_, _| vec![Step::Write(partial.clone()), Step::Close], FAST, PERPS_TRANSPORT, true, 1);
    assert_eq!(f.http_status, 200, "the status line had arrived: {f:?}");
}

#[test]
fn chunked_body_truncated() {
    let mut partial = chunked_head(200);
    partial.extend(chunk(br#"{"code":0,"#));
    // No terminating zero-length chunk: the connection just ends.
    order_against(move |_, _| vec![Step::Write(partial.clone()), Step::Close], FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn chunked_body_malformed() {
    let mut bad = chunked_head(200);
    bad.extend_from_slice(b"zz\r\n{\"code\":0}\r\n0\r\n\r\n");
    order_against(move |_, _| vec![Step::Write(bad.clone()), Step::Close], FAST, PERPS_TRANSPORT, true, 1);
}

#[test]
fn an_answer_that_is_not_http() {
    order_against(
        |_, _| vec![Step::Write(b"SSH-2.0-OpenSSH_9.2\r\n\r\n".to_vec()), Step::Close],
        FAST,
        PERPS_TRANSPORT,
        true,
        1,
    );
}

// ---- time limits after the request was sent ----

#[test]
fn slow_headers_beyond_the_read_timeout() {
    let f = order_against(|_, _| [vec![ms(1200)], json(200, r#"{"code":0}"#)].concat(), FAST, PERPS_TIMEOUT, true, 1);
    assert!(f.message.contains("may have received it"), "{f:?}");
}

#[test]
fn slow_body_beyond_the_read_timeout() {
    let body = br#"{"code":0,"message":"success"}"#;
    let head = head_only(200, body.len());
    let f = order_against(
        move |_, _| {
            vec![
                Step::Write(head.clone()),
                Step::Write(body[..10].to_vec()),
                ms(1200),
                Step::Write(body[10..].to_vec()),
            ]
        },
        FAST,
        PERPS_TIMEOUT,
        true,
        1,
    );
    assert!(f.message.contains("may have received it"), "{f:?}");
}

#[test]
fn body_trickling_past_the_total_timeout() {
    // Every byte comes within the read timeout, but the whole answer takes too long: 500
    // bytes 60 ms apart, 30 s, where the total timeout is 900 ms.
    let body = format!(r#"{{"code":0,"message":"success","padding":"{}"}}"#, ".".repeat(450)).into_bytes();
    let head = head_only(200, body.len());
    let script = move |_: &Seen, _| {
        let mut steps = vec![Step::Write(head.clone())];
        for b in body.iter() {
            steps.push(Step::Write(vec![*b]));
            steps.push(ms(60));
        }
        steps
    };
    let started = std::time::Instant::now();
    order_against(script, r#"{"read_timeout_ms":400,"total_timeout_ms":900}"#, PERPS_TIMEOUT, true, 1);
    // Without the total limit, the trickle's 30 s; with it, 900 ms and seconds of slack for a
    // loaded machine.
    assert!(started.elapsed() < Duration::from_secs(6), "the total timeout bounds the exchange");
}

// ---- 2xx answers the client cannot use: BAD_RESPONSE, may have reached ----

#[test]
fn body_over_the_size_cap() {
    let big = format!(r#"{{"code":0,"message":"{}"}}"#, "x".repeat(4096));
    let options = r#"{"read_timeout_ms":2000,"max_response_bytes":1024}"#;
    let with_length = big.clone();
    let f = order_against(move |_, _| json(200, &with_length), options, PERPS_BAD_RESPONSE, true, 1);
    assert!(f.message.contains("larger than max_response_bytes"), "{f:?}");
    // The same with a chunked body (no Content-Length to refuse up front).
    let f = order_against(
        move |_, _| {
            let mut all = chunked_head(200);
            for piece in big.as_bytes().chunks(500) {
                all.extend(chunk(piece));
            }
            all.extend_from_slice(b"0\r\n\r\n");
            vec![Step::Write(all)]
        },
        options,
        PERPS_BAD_RESPONSE,
        true,
        1,
    );
    assert!(f.message.contains("larger than max_response_bytes"), "{f:?}");
}

#[test]
fn body_not_utf8() {
    let f = order_against(
        |_, _| {
            vec![Step::Write(response(200, &["Content-Type: application/json"], b"{\"code\":0,\"m\":\"\xff\xfe\"}"))]
        },
        FAST,
        PERPS_BAD_RESPONSE,
        true,
        1,
    );
    assert!(f.message.contains("not UTF-8"), "{f:?}");
}

#[test]
fn non_json_and_empty_answers() {
    for body in ["<html>502 Bad Gateway</html>", "", "OK", "{\"code\":0", "{\"code\":0}{\"code\":0}"] {
        let text = body.to_owned();
        let f = order_against(move |_, _| json(200, &text), FAST, PERPS_BAD_RESPONSE, true, 1);
        assert_eq!(f.http_status, 200);
        assert_eq!(f.body.as_deref(), Some(body), "the venue's body is attached verbatim");
    }
    // 204 No Content: nothing to read as a venue answer.
    order_against(
        |_, _| vec![Step::Write(b"HTTP/1.1 204 No Content\r\n\r\n".to_vec())],
        FAST,
        PERPS_BAD_RESPONSE,
        true,
        1,
    );
}

#[test]
fn json_of_the_wrong_shape() {
    // Valid JSON, but not the venue's answer object, or a `code` that is neither an integer
    // written plainly nor a string of digits: the client cannot tell whether the order was
    // accepted.
    for body in [
        "[]",
        "[{\"code\":0}]",
        "\"success\"",
        "0",
        "null",
        r#"{"code":"0.0"}"#,
        r#"{"code":"success"}"#,
        r#"{"code":true}"#,
        r#"{"code":0.5}"#,
        r#"{"code":[0]}"#,
        // Not written as a plain integer: 0 to a reader that rounds 1e-400, not to others.
        r#"{"code":1e-400,"message":"success"}"#,
        r#"{"code":-0,"message":"success"}"#,
        r#"{"code":0.0,"message":"success"}"#,
        r#"{"code":"-0","message":"success"}"#,
    ] {
        let text = body.to_owned();
        let f = order_against(move |_, _| json(200, &text), FAST, PERPS_BAD_RESPONSE, true, 1);
        assert_eq!(f.body.as_deref(), Some(body), "{f:?}");
    }
}

#[test]
fn code_nonzero_under_200_is_an_api_error_not_reached() {
    let f = order_against(
        |_, _| json(200, r#"{"code":10001,"message":"insufficient margin"}"#),
        FAST,
        PERPS_API_ERROR,
        false,
        1,
    );
    assert!(f.message.contains("insufficient margin"), "{f:?}");
    // And the shapes of success (a code of 0 however written, or none): the venue's text,
    // with the order's generated cl_ord_id (the one the venue received) added at the end of
    // the object.
    for body in [
        r#"{"code":0,"message":"success"}"#,
        r#"{"code":"0","message":"success"}"#,
        r#"{"code":null,"message":"success"}"#,
        r#"{"code":200,"message":"success"}"#,
        r#"{"code":"200","message":"success"}"#,
        r#"{"result":{"order_id":1}}"#,
        "{}",
    ] {
        let text = body.to_owned();
        let rogue = Rogue::start(move |_, _| json(200, &text));
        let client = client_at(&rogue.url(), FAST);
        let answer = new_order(&client, &api_session(), ORDER).unwrap();
        assert_eq!(rogue.count(NEW_ORDER), 1);
        let sent = rogue.seen()[0].json()["cl_ord_id"].as_str().unwrap().to_owned();
        let separator = if body == "{}" { "" } else { "," };
        assert_eq!(answer, format!("{}{separator}\"cl_ord_id\":\"{sent}\"}}", &body[..body.len() - 1]));
    }
    // A venue answer that names the order's cl_ord_id itself is returned unchanged.
    let rogue = Rogue::start(|seen, _| {
        let sent = seen.json()["cl_ord_id"].as_str().unwrap().to_owned();
        json(200, &format!(r#"{{"code":0,"cl_ord_id":"{sent}"}}"#))
    });
    let client = client_at(&rogue.url(), FAST);
    let answer = new_order(&client, &api_session(), ORDER).unwrap();
    let sent = rogue.seen()[0].json()["cl_ord_id"].as_str().unwrap().to_owned();
    assert_eq!(answer, format!(r#"{{"code":0,"cl_ord_id":"{sent}"}}"#));
}

#[test]
fn a_server_error_code_under_200_may_have_reached() {
    // venue-api.md §3.1: a 200 can carry a non-zero code, and the venue's codes include 408
    // and 500. A server error or a timeout behind the gateway leaves the order's fate unknown,
    // as an HTTP 5xx does: "not reached" would have the engine place it again.
    for code in [500, 502, 503, 504, 408] {
        let body = format!(r#"{{"code":{code},"message":"internal error"}}"#);
        let answer = move |_: &Seen, _| json(200, &body);
        let f = order_against(answer.clone(), FAST, PERPS_API_ERROR, true, 1);
        assert!(f.cl_ord_id.is_some() && f.request_id.is_some(), "{code}: {f:?}");
        // A cancel (endpoint call or perps_request) alike: its effect is unknown.
        let rogue = Rogue::start(answer);
        let client = client_at(&rogue.url(), FAST);
        let session = api_session();
        expect(call(&client, Some(&session), "cancel_order", Some(r#"{"order_id":1}"#)), PERPS_API_ERROR, true);
        expect(
            common::abi::request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"order_id":1}"#)),
            PERPS_API_ERROR,
            true,
        );
    }
    // The venue's refusals stay refusals: nothing was placed or cancelled.
    for code in [400, 401, 403, 429] {
        let body = format!(r#"{{"code":{code},"message":"refused"}}"#);
        order_against(move |_, _| json(200, &body), FAST, PERPS_API_ERROR, false, 1);
    }
}

#[test]
fn a_byte_order_mark_before_the_json_is_dropped() {
    // RFC 8259 §8.1 lets a reader ignore it; kept, it would make an accepted order look like a
    // bad answer (its fate unknown) and every read unreadable to the caller's JSON parser.
    let rogue = Rogue::start(|seen, _| {
        let body = if seen.path().ends_with("/new_order") {
            r#"{"code":0,"message":"success"}"#
        } else {
            r#"{"page_size":0,"result":[],"total":0}"#
        };
        json(200, &format!("\u{feff}{body}"))
    });
    let client = client_at(&rogue.url(), FAST);
    let answer = new_order(&client, &api_session(), ORDER).unwrap();
    let sent = rogue.seen()[0].json()["cl_ord_id"].as_str().unwrap().to_owned();
    assert_eq!(answer, format!(r#"{{"code":0,"message":"success","cl_ord_id":"{sent}"}}"#));
    let open = call(&client, Some(&api_session()), "query_open_orders", None).unwrap();
    assert_eq!(open, r#"{"page_size":0,"result":[],"total":0}"#);
}

/// A venue that answers the first request of a connection and closes the connection when
/// the second arrives on it, unanswered: the race of HTTP keep-alive, where the venue closes
/// a kept-alive connection as the client writes its next request on it. (One client sending
/// one request at a time: the even requests open connections, the odd ones are their second.)
fn closes_as_the_next_request_arrives(how: Step) -> Rogue {
    Rogue::start(move |_, index| {
        if index % 2 == 1 {
            return vec![how.clone()];
        }
        json(200, r#"{"code":0,"message":"success","page_size":0,"result":[],"total":0}"#)
    })
}

#[test]
fn a_read_on_a_kept_alive_connection_the_venue_closed_is_sent_again_once() {
    for how in [Step::Close, Step::Reset] {
        let rogue = closes_as_the_next_request_arrives(how.clone());
        let client = client_at(&rogue.url(), FAST);
        call(&client, Some(&api_session()), "query_open_orders", None).unwrap();
        // The second read goes out on the kept-alive connection, which the venue closes: sent
        // again on a new connection, and answered.
        call(&client, Some(&api_session()), "query_open_orders", None).expect("read again on a new connection");
        assert_eq!(rogue.count("/query_open_orders"), 3, "{how:?}");
        assert_eq!(rogue.accepted(), 2, "{how:?}");
        // An order is never sent again: the venue may have read it.
        let f = new_order(&client, &api_session(), ORDER).unwrap_err();
        assert!(f.may_have_reached_venue && f.code == PERPS_TRANSPORT, "{how:?}: {f:?}");
        assert_eq!(rogue.count(NEW_ORDER), 1, "{how:?}");
    }
}
