//! The two WebSocket streams against the test venue (`tests/common/ws_server.rs`) on
//! 127.0.0.1: subscriptions and auth, events and their order, `seq` checks, sorted books,
//! misbehaving servers, supervision (half-open connections, rotation, expired tokens,
//! refused auth), and close from another thread. Order entry on the order stream, with its
//! two-frame replies: `tests/stream_order_entry.rs`.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/market.rs"]
mod market;
#[path = "streams/no_more_connections.rs"]
mod no_more_connections;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;
#[path = "common/ws_server.rs"]
mod ws_server;

use helpers::*;
use market::{SUBS, market};
use no_more_connections::assert_no_connection_beyond;
use perps::Code;
use perps::session::{Login, Session};
use perps::stream::Stream;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use ws_server::{Config, Out, WsServer, raw_frame};

#[test]
fn public_channels_are_subscribed_and_pushes_become_events_with_sorted_books() {
    let server = WsServer::start(Config::default());
    let stream = market(&server, None, SUBS);
    let (connected, _) = until(&stream, LONG, "connected", is_status("connected"));
    assert_eq!(connected["stream"], "market");
    server.wait_for(LONG, "two subscriptions", |c| c.len() == 1 && c[0].subscriptions.lock().unwrap().len() == 2);
    let frames = server.conns()[0].frames();
    assert_eq!(frames[0], json!({ "subscribe": { "channel": "depth_book", "symbol": "BTC-USD" } }));
    assert!(frames.iter().all(|f| f.get("auth").is_none()), "no auth frame without a session");

    let book = json!({ "asks": [["65010.5", "1"], ["65001", "2"], ["65001.25", "3"]], "bids": [["64990", "1"], ["64999.5", "2"]], "symbol": "BTC-USD" });
    let before = Instant::now();
    assert_eq!(server.push("depth_book", Some("BTC-USD"), book), 1);
    let (event, _) = until(&stream, LONG, "depth_book", is_channel("depth_book"));
    assert_eq!(event["data"]["asks"], json!([["65001", "2"], ["65001.25", "3"], ["65010.5", "1"]]));
    assert_eq!(event["data"]["bids"], json!([["64999.5", "2"], ["64990", "1"]]));
    assert_eq!(event["data"]["symbol"], "BTC-USD");
    assert_eq!((event["symbol"].as_str(), event["seq"].as_i64()), (Some("BTC-USD"), Some(1)));
    let received = event["received_ns"].as_i64().unwrap();
    let wall = |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as i64;
    let pushed_at = wall(std::time::SystemTime::now()) - before.elapsed().as_nanos() as i64;
    assert!(
        received >= pushed_at - 1_000_000 && received <= wall(std::time::SystemTime::now()),
        "received_ns {received}"
    );

    server.push("price", Some("BTC-USD"), json!({ "mark_price": "65000.1" }));
    let (price, _) = until(&stream, LONG, "price", is_channel("price"));
    assert_eq!((price["seq"].as_i64(), price["data"]["mark_price"].as_str()), (Some(2), Some("65000.1")));
}

#[test]
fn seq_gaps_and_regressions_are_status_events_never_hidden() {
    let server = WsServer::start(Config::default());
    let stream = market(&server, None, SUBS);
    server.wait_for(LONG, "subscriptions", |c| c.len() == 1 && c[0].subscriptions.lock().unwrap().len() == 2);
    let conn = server.conns()[0].clone();
    server.push("price", Some("BTC-USD"), json!({}));
    server.push("price", Some("BTC-USD"), json!({}));
    conn.shift_seq(3);
    server.push("price", Some("BTC-USD"), json!({}));
    let (gap, _) = until(&stream, LONG, "gap", is_status("gap"));
    assert_eq!(gap["subscription"], json!({ "channel": "price", "symbol": "BTC-USD" }));
    assert_eq!((gap["expected"].as_i64(), gap["received"].as_i64()), (Some(3), Some(6)));
    let (after, _) = until(&stream, LONG, "the push after the gap", is_channel("price"));
    assert_eq!(after["seq"], 6, "the event itself is still delivered");
    conn.shift_seq(-2);
    server.push("price", Some("BTC-USD"), json!({}));
    let (regression, _) = until(&stream, LONG, "regression", is_status("seq_regression"));
    assert_eq!((regression["last"].as_i64(), regression["received"].as_i64()), (Some(6), Some(5)));
    until(&stream, LONG, "the regressed push", is_channel("price"));
}

#[test]
fn auth_answered_with_200_or_0_subscribes_account_channels_in_the_auth_frame() {
    for code in [200, 0] {
        let server = WsServer::start(Config { auth_code: code, ..Config::default() });
        let subs = r#"[{"channel":"price","symbol":"ETH-USD"},{"channel":"order"},{"channel":"position"}]"#;
        let stream = market(&server, Some(session()), subs);
        until(&stream, LONG, "connected", is_status("connected"));
        server.wait_for(LONG, "subscriptions", |c| c.len() == 1 && c[0].subscriptions.lock().unwrap().len() == 3);
        let frames = server.conns()[0].frames();
        assert_eq!(
            frames[0],
            json!({ "auth": { "token": TOKEN, "streams": [{ "channel": "order" }, { "channel": "position" }] } }),
            "code {code}"
        );
        assert_eq!(
            frames[1],
            json!({ "subscribe": { "channel": "price", "symbol": "ETH-USD" } }),
            "after the auth answer"
        );
        server.push("order", None, json!({ "id": 4294967297u64, "status": "open" }));
        let (order, _) = until(&stream, LONG, "order push", is_channel("order"));
        assert_eq!(order["data"]["id"], 4294967297u64);
        assert!(order.get("symbol").is_none());
    }
}

#[test]
fn a_refused_auth_fails_the_open_with_the_venues_message() {
    let server = WsServer::start(Config { refuse_auth: Some("invalid token".into()), ..Config::default() });
    let e = Stream::open_market(client(&server.perps_url(), "{}"), Some(session()), r#"[{"channel":"order"}]"#)
        .unwrap_err();
    assert_eq!(e.code(), Code::ApiError, "{e}");
    assert!(e.message().contains("invalid token") && e.message().contains("401"), "{e}");
    let e = Stream::open_orders(client(&server.perps_url(), "{}"), session()).unwrap_err();
    assert_eq!(e.code(), Code::ApiError, "{e}");
    assert!(e.message().contains("auth:login") && e.message().contains("invalid token"), "{e}");
    assert_no_connection_beyond(2, || server.accepted(), "no retry after a refusal");
}

#[test]
fn an_expired_token_is_refused_before_connecting() {
    let server = WsServer::start(Config::default());
    let session = session();
    session.complete_login(Login {
        token: TOKEN.to_owned().into(),
        chain: None,
        address: None,
        alias: None,
        expires_at: Some(1),
    });
    let e = Stream::open_orders(client(&server.perps_url(), "{}"), session.clone()).unwrap_err();
    assert_eq!(e.code(), Code::TokenExpired, "{e}");
    let no_token = Arc::new(Session::new().unwrap());
    let e = Stream::open_orders(client(&server.perps_url(), "{}"), no_token).unwrap_err();
    assert_eq!(e.code(), Code::InvalidState, "{e}");
    assert_eq!(server.accepted(), 0);
}

#[test]
fn malformed_frames_give_error_events_and_the_stream_goes_on() {
    let server = WsServer::start(Config::default());
    let stream = market(&server, None, SUBS);
    server.wait_for(LONG, "subscriptions", |c| c.len() == 1 && c[0].subscriptions.lock().unwrap().len() == 2);
    server.send_all(true, Out::Binary(vec![1, 2, 3]));
    server.send_all(true, Out::Text("{not json".into()));
    server.send_all(true, Out::Text(r#"{"seq":1,"channel":"kline","data":{}}"#.into()));
    server.send_all(
        true,
        Out::Text(
            r#"{"seq":2,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["x","1"]],"bids":[]}}"#.into(),
        ),
    );
    server.send_all(true, Out::Text(r#"{"seq":"three","channel":"price"}"#.into()));
    server.push("price", Some("BTC-USD"), json!({ "mark_price": "1" }));
    let (price, before) = until(&stream, LONG, "the good push after the bad ones", is_channel("price"));
    assert_eq!(price["data"]["mark_price"], "1");
    let errors: Vec<&Value> = before.iter().filter(|e| e["state"] == "error").collect();
    assert_eq!(errors.len(), 4, "{before:#?}");
    assert!(errors[0]["message"].as_str().unwrap().contains("binary frame of 3 bytes"));
    assert!(errors[1]["message"].as_str().unwrap().contains("not JSON") && errors[1]["frame"] == "{not json");
    assert!(errors[2]["message"].as_str().unwrap().contains("not a decimal"));
    assert_eq!(errors[2]["subscription"], json!({ "channel": "depth_book", "symbol": "BTC-USD" }));
    // A push of a known channel whose seq cannot be read: an error naming its channel.
    assert!(errors[3]["message"].as_str().unwrap().contains("\"seq\""), "{}", errors[3]);
    assert_eq!(errors[3]["subscription"], json!({ "channel": "price", "symbol": null }));
    assert!(errors.iter().all(|e| e["code_name"] == "PERPS_BAD_RESPONSE"));
    let passed: Vec<&Value> = before.iter().filter(|e| e["channel"] == "unrecognized").collect();
    assert_eq!(passed.len(), 1, "the unknown channel is passed through: {before:#?}");
    assert!(!before.iter().any(|e| e["state"] == "disconnected"));
}

#[test]
fn oversized_frames_and_a_close_in_mid_message_end_the_connection_which_is_replaced() {
    let server = WsServer::start(Config::default());
    let stream = Stream::open_market(client(&server.perps_url(), r#"{"max_frame_bytes":4096}"#), None, SUBS).unwrap();
    until(&stream, LONG, "connected", is_status("connected"));
    server.wait_for(LONG, "subscriptions", |c| c.len() == 1 && c[0].subscriptions.lock().unwrap().len() == 2);
    server.send_all(true, Out::Text(format!("{{\"pad\":\"{}\"}}", "a".repeat(8192))));
    let (down, _) = until(&stream, LONG, "disconnected", is_status("disconnected"));
    assert!(down["reason"].as_str().unwrap().contains("max_frame_bytes"), "{down}");
    until(&stream, LONG, "reconnected", is_status("reconnected"));
    server.wait_for(LONG, "the second connection", |c| c.len() == 2);

    let mut half = raw_frame(false, 0x1, b"{\"seq\":1,\"chan");
    half.extend(raw_frame(true, 0x8, &[0x03, 0xe8]));
    server.send_all(true, Out::Raw(half));
    let (down, _) = until(&stream, LONG, "disconnected", is_status("disconnected"));
    assert!(down["reason"].as_str().unwrap().contains("closed"), "{down}");
    until(&stream, LONG, "reconnected", is_status("reconnected"));
    server.wait_for(LONG, "resubscribed", |c| c.len() == 3 && c[2].subscriptions.lock().unwrap().len() == 2);
    server.push("price", Some("BTC-USD"), json!({}));
    until(&stream, LONG, "a push on the new connection", is_channel("price"));
}

#[test]
fn pings_are_answered_and_a_half_open_connection_is_detected_and_replaced() {
    let server = WsServer::start(Config { ping_every: Some(Duration::from_millis(40)), ..Config::default() });
    let stream =
        Stream::open_market(client(&server.perps_url(), r#"{"stream_idle_timeout_ms":300}"#), None, SUBS).unwrap();
    until(&stream, LONG, "connected", is_status("connected"));
    // Pings alone keep it alive well past the idle timeout.
    let quiet = drain(&stream, Duration::from_millis(900));
    assert!(quiet.iter().all(|e| e["state"] != "disconnected"), "{quiet:#?}");
    server.stall_all();
    let started = Instant::now();
    let (down, _) = until(&stream, LONG, "disconnected", is_status("disconnected"));
    assert!(down["reason"].as_str().unwrap().contains("half-open"), "{down}");
    // Idle timeout 300 ms; without detection it would never come (`until` fails at 10 s). The
    // bound only has to separate the timer (300 ms) from a detection left to a later wake-up,
    // so it leaves a loaded machine seconds.
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    let (up, _) = until(&stream, LONG, "reconnected", is_status("reconnected"));
    assert_eq!(up["connection"], 2);
    server.wait_for(LONG, "resubscribed", |c| c.len() == 2 && c[1].subscriptions.lock().unwrap().len() == 2);
}

#[test]
fn connections_are_rotated_before_the_cap_without_backoff() {
    let server = WsServer::start(Config::default());
    let stream = Stream::open_market(
        client(
            &server.perps_url(),
            r#"{"stream_rotate_after_ms":300,"stream_reconnect_min_ms":30000,"stream_reconnect_max_ms":30000}"#,
        ),
        Some(session()),
        r#"[{"channel":"order"}]"#,
    )
    .unwrap();
    let (down, _) = until(&stream, LONG, "rotation", is_status("disconnected"));
    assert_eq!(down["rotation"], true);
    let started = Instant::now();
    until(&stream, LONG, "reconnected", is_status("reconnected"));
    // A rotation that waited the backoff would take 30 s (`until` fails at 10 s); a healthy
    // one takes one connection's set-up, so the bound leaves a loaded machine seconds.
    assert!(started.elapsed() < Duration::from_secs(8), "rotation waited a backoff (30 s)");
    server.wait_for(LONG, "re-auth", |c| c.len() == 2 && c[1].authed.load(std::sync::atomic::Ordering::SeqCst));
}

#[test]
fn an_auth_refused_on_reconnection_ends_the_stream_without_a_reconnect_loop() {
    let server = WsServer::start(Config::default());
    let stream = market(&server, Some(session()), r#"[{"channel":"balance"}]"#);
    until(&stream, LONG, "connected", is_status("connected"));
    server.set(|c| c.refuse_auth = Some("token revoked".into()));
    server.drop_all();
    let (failed, _) = until(&stream, LONG, "failed", is_status("failed"));
    assert_eq!(failed["code_name"], "PERPS_API_ERROR");
    assert!(failed["message"].as_str().unwrap().contains("token revoked"));
    let e = stream.next(Some(SECOND)).unwrap_err();
    assert_eq!(e.code(), Code::StreamClosed);
    assert!(e.message().contains("token revoked"), "{e}");
    assert_no_connection_beyond(2, || server.accepted(), "no reconnect loop");
}

#[test]
fn a_token_that_expires_ends_the_stream_at_the_next_reconnection() {
    let server = WsServer::start(Config::default());
    let session = session();
    let expires_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64 + 1;
    session.complete_login(Login {
        token: TOKEN.to_owned().into(),
        chain: None,
        address: None,
        alias: None,
        expires_at: Some(expires_at),
    });
    let stream = Stream::open_orders(client(&server.perps_url(), "{}"), session).unwrap();
    until(&stream, LONG, "connected", is_status("connected"));
    std::thread::sleep(Duration::from_millis(2100));
    server.drop_all();
    let (failed, _) = until(&stream, LONG, "failed", is_status("failed"));
    assert_eq!(failed["code_name"], "PERPS_TOKEN_EXPIRED");
    assert_eq!(stream.next(Some(SECOND)).unwrap_err().code(), Code::StreamClosed);
    assert_eq!(server.accepted(), 1);
}

#[test]
fn close_from_another_thread_wakes_next_at_once_and_drop_is_quick() {
    let server = WsServer::start(Config::default());
    // A read timeout (20 s) far beyond the bound below: a next() left to the I/O thread's next
    // timer would take that long, and fail it.
    let options = r#"{"read_timeout_ms":20000}"#;
    let stream = Arc::new(Stream::open_market(client(&server.perps_url(), options), None, SUBS).unwrap());
    until(&stream, LONG, "connected", is_status("connected"));
    let (returned, result) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn({
        let stream = stream.clone();
        move || returned.send(stream.next(None)).unwrap()
    });
    std::thread::sleep(Duration::from_millis(100));
    let closed_at = Instant::now();
    stream.close();
    // Without the wake-up, next(None) would never return: the wait fails the test at 30 s
    // instead of hanging it. The bound separates a wake-up from one left to the I/O thread's
    // next timer (the read timeout, 20 s here; this venue does not ping); a loaded machine
    // gets 5 s.
    let result = result.recv_timeout(Duration::from_secs(30)).expect("next(None) never returned after close");
    waiter.join().unwrap();
    assert!(closed_at.elapsed() < Duration::from_secs(5), "next took {:?} to return", closed_at.elapsed());
    assert_eq!(result.unwrap_err().code(), Code::StreamClosed);
    let started = Instant::now();
    drop(Arc::try_unwrap(stream).unwrap());
    // Drop waits for the I/O thread at most FREE_WAIT (2 s, src/stream/mod.rs), a timed wait
    // that never ends early: an I/O thread that close did not end makes drop take 2 s or
    // more. The bound is as wide as that allows (the thread was told to close above).
    assert!(started.elapsed() < Duration::from_millis(1950), "drop took {:?}", started.elapsed());
    server.wait_for(LONG, "the connection closed", |c| {
        !c.is_empty() && c[0].closed.load(std::sync::atomic::Ordering::SeqCst)
    });
}

#[test]
fn dropping_a_stream_that_is_reconnecting_or_stalled_is_quick() {
    let server = WsServer::start(Config::default());
    let stream = Stream::open_market(
        client(&server.perps_url(), r#"{"stream_reconnect_min_ms":60000,"stream_reconnect_max_ms":60000}"#),
        None,
        SUBS,
    )
    .unwrap();
    // The venue registers a connection just after its handshake answer: wait for it.
    server.wait_for(LONG, "the connection", |c| c.len() == 1);
    server.drop_all();
    until(&stream, LONG, "reconnecting", is_status("reconnecting"));
    let started = Instant::now();
    drop(stream);
    assert!(started.elapsed() < Duration::from_millis(1500), "drop took {:?}", started.elapsed());
}

#[test]
fn the_connection_limit_is_enforced_across_streams_of_the_process() {
    let server = WsServer::start(Config::default());
    let client = client(&server.perps_url(), r#"{"stream_max_connections":2}"#);
    let a = Stream::open_market(client.clone(), None, SUBS).unwrap();
    let b = Stream::open_orders(client.clone(), session()).unwrap();
    let e = Stream::open_market(client.clone(), None, SUBS).unwrap_err();
    assert_eq!(e.code(), Code::StreamLimit, "{e}");
    assert!(e.message().contains("2 WebSocket connections"), "{e}");
    assert_eq!(server.accepted(), 2, "nothing sent");
    drop(a);
    let c = Stream::open_market(client.clone(), None, SUBS).unwrap();
    drop((b, c));
    let limited = helpers::client(&server.perps_url(), r#"{"stream_connects_per_minute":3}"#);
    // Three new connections in the last minute already exist for this host (a, b, c).
    let e = Stream::open_market(limited, None, SUBS).unwrap_err();
    assert_eq!(e.code(), Code::StreamLimit);
    assert!(e.message().contains("in the last minute"), "{e}");
}

#[test]
fn a_server_that_refuses_the_handshake_or_is_absent_fails_the_open_clearly() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    let e = Stream::open_market(client(&format!("http://{closed}"), "{}"), None, SUBS).unwrap_err();
    assert_eq!(e.code(), Code::Transport, "{e}");
    // An HTTP server that is not a WebSocket.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut tcp, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let _ = tcp.read(&mut buf);
        let _ = tcp.write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 9\r\n\r\nnot found");
    });
    let e = Stream::open_market(client(&format!("http://{addr}"), "{}"), None, SUBS).unwrap_err();
    assert_eq!((e.code(), e.http_status()), (Code::HttpStatus, 404), "{e}");
}
