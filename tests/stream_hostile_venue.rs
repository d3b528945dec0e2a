//! The streams against venues that are not ours: answers in the other forms the sources show
//! (codes as strings, `seq` as a string, an empty book side as null), and hostile ones (a
//! venue that echoes the session's token, floods error frames, trickles its handshake, or
//! never pings). Each venue is a short script on 127.0.0.1. Auth answers in their every
//! form: `tests/stream_auth_answers.rs`.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;
#[path = "common/ws_server.rs"]
mod ws_server;

use helpers::*;
use perps::Code;
use perps::stream::Stream;
use scripted_venue::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tungstenite::Message;

const PRICE: &str = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;

#[test]
fn an_ack_whose_code_is_a_string_is_still_the_ack_and_the_outcome_is_matched() {
    let url = order_venue(
        logged_in,
        vec![
            r#"{"code":"0","status":"accepted","request_id":"RID"}"#.into(),
            r#"{"code":"0","message":"success","request_id":"RID"}"#.into(),
        ],
    );
    let stream = Stream::open_orders(client(&url, "{}"), session()).unwrap();
    let sent: Value = serde_json::from_str(&stream.new_order(ORDER).unwrap()).unwrap();
    let (ack, _) = until(&stream, LONG, "ack", is_channel("order_response"));
    assert_eq!((ack["final"].as_bool(), ack["matched"].as_bool()), (Some(false), Some(true)), "{ack}");
    let (outcome, _) = until(&stream, LONG, "outcome", is_channel("order_response"));
    assert_eq!((outcome["final"].as_bool(), outcome["matched"].as_bool()), (Some(true), Some(true)), "{outcome}");
    assert_eq!(outcome["cl_ord_id"], sent["cl_ord_id"]);
}

#[test]
fn pushes_with_a_string_seq_or_a_null_book_side_are_delivered_on_their_channel() {
    let url = venue(|_, mut ws| {
        read_json(&mut ws);
        for frame in [
            r#"{"seq":"5","channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#,
            r#"{"seq":6,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["2","1"],["1","1"]],"bids":null}}"#,
            r#"{"seq":"seven","channel":"price","symbol":"BTC-USD","data":{}}"#,
        ] {
            ws.send(Message::text(frame)).unwrap();
        }
        hold(ws, Duration::from_secs(3));
    });
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    let (price, _) = until(&stream, LONG, "price", is_channel("price"));
    assert_eq!(price["seq"], 5);
    let (book, skipped) = until(&stream, LONG, "depth_book", is_channel("depth_book"));
    assert!(skipped.iter().all(|e| e["state"] != "error" && e["state"] != "gap"), "{skipped:#?}");
    assert_eq!(book["data"], json!({ "asks": [["1", "1"], ["2", "1"]], "bids": [] }));
    // A seq that is no number is never guessed: an error naming the push's subscription
    // (once passed on as `unrecognized`, out of its channel).
    let (odd, _) = until(&stream, LONG, "the frame with a seq of words", is_status("error"));
    assert_eq!(odd["subscription"], json!({ "channel": "price", "symbol": "BTC-USD" }), "{odd}");
    assert!(odd["message"].as_str().unwrap().contains("seven"), "{odd}");
}

#[test]
fn a_token_the_venue_echoes_never_reaches_an_error_or_an_event() {
    let market = venue(|_, mut ws| {
        let auth = read_json(&mut ws);
        let token = auth["auth"]["token"].as_str().unwrap().to_owned();
        let refusal = json!({ "channel": "auth", "data": { "code": 401, "msg": format!("bad token {token}") } });
        ws.send(Message::text(refusal.to_string())).unwrap();
        hold(ws, Duration::from_secs(3));
    });
    let error = Stream::open_market(client(&market, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap_err();
    assert!(!error.message().contains(&TOKEN[..8]), "{}", error.message());
    assert!(error.message().contains("<redacted>"), "{}", error.message());

    let login = order_venue(
        |id| json!({ "code": 401, "message": format!("{TOKEN} is not valid"), "request_id": id }).to_string(),
        vec![],
    );
    let error = Stream::open_orders(client(&login, "{}"), session()).unwrap_err();
    assert!(!error.message().contains(&TOKEN[..8]) && error.message().contains("<redacted>"), "{}", error.message());

    let replies = order_venue(
        logged_in,
        vec![
            format!(r#"{{"code":400,"message":"token {TOKEN} may not trade","request_id":"RID"}}"#),
            format!(r#"{{"notice":"session {TOKEN}"}}"#),
            format!(r#"{{"code":"x","message":"{TOKEN}"#),
        ],
    );
    let stream = Stream::open_orders(client(&replies, "{}"), session()).unwrap();
    stream.new_order(ORDER).unwrap();
    let (reply, _) = until(&stream, LONG, "the reply", is_channel("order_response"));
    let (unknown, _) = until(&stream, LONG, "the notice", is_channel("unrecognized"));
    let (broken, _) = until(&stream, LONG, "the broken frame", is_status("error"));
    for event in [&reply, &unknown, &broken] {
        let text = event.to_string();
        assert!(!text.contains(&TOKEN[..8]), "{text}");
    }
    assert_eq!(reply["message"], "token <redacted> may not trade");
    assert_eq!(reply["final"], true);
}

#[test]
fn a_token_replaced_between_connections_is_redacted_on_the_next_one_too() {
    const NEXT: &str = "ws-next-token-Jq84Lm";
    let (signed_in_again, wait) = std::sync::mpsc::channel::<()>();
    let wait = std::sync::Mutex::new(wait);
    let market = venue(move |connection, mut ws| {
        let auth = read_json(&mut ws);
        let token = auth["auth"]["token"].as_str().unwrap().to_owned();
        send(&mut ws, r#"{"channel":"auth","data":{"code":0,"msg":"success"}}"#);
        if connection == 0 {
            // Until the session has signed in again; then the connection drops.
            let _ = wait.lock().unwrap().recv_timeout(LONG);
            return;
        }
        // Both the token this connection was sent and the one of the connection before.
        send(&mut ws, &json!({ "notice": format!("session of {TOKEN} ended; now {token}") }).to_string());
        hold(ws, Duration::from_secs(3));
    });
    let session = session();
    let stream = Stream::open_market(client(&market, "{}"), Some(session.clone()), r#"[{"channel":"order"}]"#).unwrap();
    let token = zeroize::Zeroizing::new(NEXT.to_owned());
    session.complete_login(perps::session::Login { token, chain: None, address: None, alias: None, expires_at: None });
    signed_in_again.send(()).unwrap();
    let (notice, before) = until(&stream, LONG, "the notice", is_channel("unrecognized"));
    assert!(before.iter().any(|e| e["state"] == "reconnected"), "{before:#?}");
    let text = notice.to_string();
    assert!(!text.contains(&TOKEN[..8]) && !text.contains(&NEXT[..8]), "{text}");
    assert_eq!(notice["frame"]["notice"], "session of <redacted> ended; now <redacted>", "{text}");
}

#[test]
fn a_flood_of_bad_frames_is_bounded_and_marked_as_overflow() {
    let (flood_read, flood_was_read) = std::sync::mpsc::channel();
    let flood_read = std::sync::Mutex::new(flood_read);
    let url = venue(move |i, mut ws| {
        read_json(&mut ws);
        if i > 0 {
            // Only the first connection floods: a slow drain that outlives the hold must not
            // meet a second flood on the reconnection.
            return hold(ws, LONG);
        }
        let mut burst = Vec::new();
        for _ in 0..70_000 {
            burst.extend_from_slice(&ws_server::raw_frame(true, 0x2, b"x"));
        }
        ws.get_mut().write_all(&burst).unwrap();
        // The pong to a ping sent behind the burst comes once the client has read every
        // frame of it (TCP keeps the order; the stream's I/O thread reads in order).
        ws.send(Message::Ping(b"flood".to_vec().into())).unwrap();
        loop {
            match ws.read() {
                Ok(Message::Pong(payload)) if payload.as_ref() == b"flood" => break,
                Ok(_) => {}
                Err(e) => panic!("the client went away: {e}"),
            }
        }
        flood_read.lock().unwrap().send(()).unwrap();
        hold(ws, Duration::from_secs(10));
    });
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    // The caller does not read while the venue floods: not until the stream has read it all.
    flood_was_read.recv_timeout(Duration::from_secs(60)).expect("the client reads the flood");
    let events = drain(&stream, Duration::from_millis(300));
    let errors = events.iter().filter(|e| e["state"] == "error").count();
    let overflow: Vec<&Value> = events.iter().filter(|e| e["state"] == "overflow").collect();
    assert!(errors < 70_000 && errors > 60_000, "{errors} error events");
    assert_eq!(overflow.len(), 1);
    assert_eq!(overflow[0]["dropped"].as_u64().unwrap() as usize + errors, 70_000, "every frame counted");
}

#[test]
fn a_venue_that_trickles_its_handshake_cannot_hold_a_reconnect() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for (i, tcp) in listener.incoming().enumerate() {
            let Ok(mut tcp) = tcp else { break };
            std::thread::spawn(move || {
                if i == 0 {
                    // The first connection works, then drops.
                    let mut ws = tungstenite::accept(tcp).unwrap();
                    read_json(&mut ws);
                    std::thread::sleep(Duration::from_millis(200));
                    return;
                }
                // Later ones answer one byte every 300 ms, forever.
                let _ = tcp.read(&mut [0u8; 4096]);
                for byte in b"HTTP/1.1 101 Switching Protocols\r\n".iter().cycle() {
                    if tcp.write_all(&[*byte]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(300));
                }
            });
        }
    });
    // Each read waits at most 2 s; the whole handshake may take no more than that either.
    let stream = Stream::open_market(client(&url, r#"{"read_timeout_ms":1000}"#), None, PRICE).unwrap();
    until(&stream, LONG, "disconnected", is_status("disconnected"));
    let started = Instant::now();
    let (failed, _) = until(&stream, LONG, "reconnect_failed", is_status("reconnect_failed"));
    // A trickle that holds the handshake never ends (`until` fails at LONG, 10 s); the
    // handshake's deadline (the read timeout, 1 s) after a backoff of 5-50 ms, with seconds of
    // slack for a loaded machine.
    assert!(started.elapsed() < Duration::from_secs(7), "{:?}", started.elapsed());
    assert_eq!(failed["code_name"], "PERPS_TIMEOUT", "{failed}");
}

#[test]
fn a_venue_that_never_pings_keeps_a_quiet_connection_through_the_clients_pings() {
    let pings = Arc::new(AtomicUsize::new(0));
    let seen = pings.clone();
    let url = venue(move |_, mut ws| {
        read_json(&mut ws);
        let _ = ws.get_mut().set_read_timeout(Some(Duration::from_millis(10)));
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            match ws.read() {
                Ok(Message::Ping(_)) => {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
                Ok(_) | Err(tungstenite::Error::Io(_)) => {}
                Err(_) => return,
            }
            let _ = ws.flush(); // the pong
        }
    });
    let stream = Stream::open_market(client(&url, r#"{"stream_idle_timeout_ms":600}"#), None, PRICE).unwrap();
    let mut events = Vec::new();
    let until = Instant::now() + Duration::from_secs(2);
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        if let Some(event) = stream.next(Some(left)).unwrap() {
            events.push(serde_json::from_str::<Value>(&event).unwrap());
        }
    }
    assert!(events.iter().all(|e| e["state"] != "disconnected"), "{events:#?}");
    assert!(pings.load(Ordering::SeqCst) >= 3, "{} pings", pings.load(Ordering::SeqCst));
}

#[test]
fn a_json_ping_is_answered_with_a_json_pong_and_still_passed_on() {
    let (tx, rx) = std::sync::mpsc::channel();
    let url = venue(move |_, mut ws| {
        read_json(&mut ws);
        ws.send(Message::text(r#"{"ping":1764000000}"#)).unwrap();
        tx.send(read_json(&mut ws)).unwrap();
        // Beside other keys too, as public clients answer it; a ping that is no number or
        // string is not answered (the next frame the venue reads is the next pong).
        ws.send(Message::text(r#"{"ping":[1]}"#)).unwrap();
        ws.send(Message::text(r#"{"ping":"p-2","time":"2026-11-29T00:00:00Z"}"#)).unwrap();
        tx.send(read_json(&mut ws)).unwrap();
        hold(ws, Duration::from_secs(3));
    });
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    let (event, _) = until(&stream, LONG, "the ping frame", is_channel("unrecognized"));
    assert_eq!(event["frame"], json!({ "ping": 1764000000 }));
    assert_eq!(rx.recv_timeout(LONG).unwrap(), json!({ "pong": 1764000000 }));
    assert_eq!(rx.recv_timeout(LONG).unwrap(), json!({ "pong": "p-2" }));
}

#[test]
fn the_seq_of_a_frame_passed_on_as_unrecognized_counts_on_the_connection() {
    let url = venue(|_, mut ws| {
        read_json(&mut ws);
        for frame in [
            r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#,
            // A channel the library does not know (e.g. the answer to a refused subscribe).
            r#"{"seq":2,"channel":"error","data":{"code":400,"msg":"unknown symbol NOPE-USD"}}"#,
            r#"{"seq":3,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"2"}}"#,
            // A known channel whose symbol is no string (an error event, its seq counted on
            // the connection), and a seq as a string.
            r#"{"seq":4,"channel":"price","symbol":7,"data":{}}"#,
            r#"{"seq":"5","channel":"notice","data":{}}"#,
            r#"{"seq":6,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"3"}}"#,
            // A real skip is still one.
            r#"{"seq":8,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"4"}}"#,
        ] {
            send(&mut ws, frame);
        }
        hold(ws, Duration::from_secs(3));
    });
    let stream = Stream::open_market(client(&url, "{}"), None, PRICE).unwrap();
    let (_, events) = until(&stream, LONG, "the last price", |e| e["data"]["mark_price"] == "4");
    assert_eq!(events.iter().filter(|e| e["channel"] == "unrecognized").count(), 2, "{events:#?}");
    let errors: Vec<&Value> = events.iter().filter(|e| e["state"] == "error").collect();
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert_eq!((errors[0]["subscription"]["channel"].as_str(), errors[0]["seq"].as_i64()), (Some("price"), Some(4)));
    let gaps: Vec<&Value> = events.iter().filter(|e| e["state"] == "gap").collect();
    assert_eq!(gaps.len(), 1, "{events:#?}");
    assert_eq!((gaps[0]["expected"].as_i64(), gaps[0]["received"].as_i64()), (Some(7), Some(8)));
}

/// The token with every seventh character written as a JSON escape: no run of 8 bytes of it is
/// left as it is, yet a JSON reader gets the token back.
fn partly_escaped_token() -> String {
    TOKEN
        .char_indices()
        .map(|(i, c)| if i > 0 && i % 7 == 0 { format!("\\u{:04x}", c as u32) } else { c.to_string() })
        .collect()
}

/// No trace of the token in `text`, even once JSON escapes in it are written out.
fn assert_no_token(text: &str) {
    let unescaped = text.replace("\\\\", "\\").replace("\\\"", "\"");
    let decoded: String = serde_json::from_str(&format!("\"{}\"", unescaped.replace('"', "\\\""))).unwrap_or_default();
    for seen in [text, unescaped.as_str(), decoded.as_str()] {
        assert!(!seen.contains(TOKEN) && !seen.contains("token-"), "{text}");
    }
}

#[test]
fn a_frame_with_escapes_but_no_secret_is_passed_on_byte_for_byte() {
    // Keys out of order, an integer beyond 64 bits, escapes that hide no secret: a JSON
    // reader of the event sees what the venue sent, and so does one that keeps the text.
    let frame = r#"{"zeta":1,"big":123456789012345678901234567890,"alpha":"\u0041\"b\\","seq":"x"}"#;
    let stream = Stream::open_orders(client(&order_venue(logged_in, vec![frame.to_owned()]), "{}"), session()).unwrap();
    stream.new_order(ORDER).unwrap();
    let deadline = std::time::Instant::now() + LONG;
    let raw = loop {
        assert!(std::time::Instant::now() < deadline, "no unrecognized event");
        let Some(text) = stream.next(Some(SECOND)).unwrap() else { continue };
        if text.starts_with(r#"{"channel":"unrecognized""#) {
            break text;
        }
    };
    assert!(raw.contains(&format!(r#""frame":{frame},"#)), "{raw}");
}

#[test]
fn a_token_the_venue_escapes_is_redacted_once_its_escapes_are_written_out() {
    let wholly: String = TOKEN.chars().map(|c| format!("\\u{:04x}", c as u32)).collect();
    let partly = partly_escaped_token();
    // Order stream: frames of no known channel.
    let frames =
        vec![format!(r#"{{"notice":"your session {wholly}"}}"#), format!(r#"{{"notice":"session {partly}"}}"#)];
    let stream = Stream::open_orders(client(&order_venue(logged_in, frames), "{}"), session()).unwrap();
    stream.new_order(ORDER).unwrap();
    for _ in 0..2 {
        let (event, _) = until(&stream, LONG, "the notice", is_channel("unrecognized"));
        assert!(event["frame"]["notice"].as_str().unwrap().ends_with("<redacted>"), "{event}");
        assert_no_token(&event.to_string());
    }

    // Market stream: a frame of no known channel, a bad book whose excerpt would quote the
    // token, then a close frame whose reason holds it.
    let (market_partly, excerpt_partly, close_partly) = (partly.clone(), partly.clone(), partly.clone());
    let url = venue(move |_, mut ws| {
        read_json(&mut ws);
        send(&mut ws, r#"{"seq":1,"channel":"auth","data":{"code":0,"msg":"success"}}"#);
        send(&mut ws, &format!(r#"{{"seq":2,"channel":"notice","data":"session {market_partly}"}}"#));
        send(&mut ws, &format!(r#"{{"a":"{excerpt_partly}","channel":"depth_book","data":{{"asks":[["x","1"]]}}}}"#));
        let reason = format!(r#"{{"message":"{close_partly}"}}"#);
        let close = tungstenite::protocol::CloseFrame { code: 4008.into(), reason: reason.into() };
        let _ = ws.close(Some(close));
        let _ = ws.flush();
        std::thread::sleep(Duration::from_millis(100));
    });
    let stream = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap();
    let (event, _) = until(&stream, LONG, "the notice", is_channel("unrecognized"));
    assert_eq!(event["frame"]["data"], "session <redacted>", "{event}");
    let (error, _) = until(&stream, LONG, "the bad book", is_status("error"));
    assert_no_token(&error.to_string());
    let (closed, _) = until(&stream, LONG, "the close", is_status("disconnected"));
    assert!(closed["reason"].as_str().unwrap().contains("<redacted>"), "{closed}");
    assert_no_token(&closed.to_string());

    // The body of an HTTP answer to the handshake.
    let body = format!(r#"{{"message":"bad token {partly}"}}"#);
    let url = raw_venue(move |_, mut tcp| {
        let _ = tcp.read(&mut [0u8; 4096]);
        let answer = format!("HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        let _ = tcp.write_all(answer.as_bytes());
        std::thread::sleep(Duration::from_millis(200));
    });
    let error = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"order"}]"#).unwrap_err();
    assert_eq!(error.http_status(), 401, "{error}");
    let body = error.body().unwrap_or_default();
    assert!(body.contains("<redacted>"), "{body}");
    assert_no_token(body);
}

/// An order venue whose first connection, 100 ms after the login, sends a Close frame (status
/// 4008, the documented 408 body) and then keeps the TCP connection open, reading nothing.
fn venue_that_closes_and_keeps_the_socket() -> String {
    venue(|i, mut ws| {
        let login = read_json(&mut ws);
        send(&mut ws, &logged_in(login["request_id"].as_str().unwrap()));
        if i > 0 {
            return hold(ws, Duration::from_secs(5));
        }
        std::thread::sleep(Duration::from_millis(100));
        let reason = br#"{"code":408,"message":"disconnecting due to not receive Pong within 5 minute period"}"#;
        let payload = [&4008u16.to_be_bytes()[..], reason].concat();
        ws.get_mut().write_all(&ws_server::raw_frame(true, 0x8, &payload)).unwrap();
        std::thread::sleep(Duration::from_secs(8));
    })
}

#[test]
fn a_close_frame_ends_the_connection_at_once_though_the_venue_keeps_the_socket() {
    let url = venue_that_closes_and_keeps_the_socket();
    let opened = Instant::now();
    // An idle timeout (30 s) beyond the venue's hold (8 s): a client that ignored the frame
    // would notice only when the venue drops the socket, at 8 s (and with another reason).
    let stream = Stream::open_orders(client(&url, r#"{"stream_idle_timeout_ms":30000}"#), session()).unwrap();
    let (down, _) = until(&stream, LONG, "disconnected", is_status("disconnected"));
    // The frame comes 100 ms after the login: seconds of slack for a loaded machine, still
    // short of the 8 s the venue keeps the socket.
    assert!(opened.elapsed() < Duration::from_secs(6), "noticed after {:?}: {down}", opened.elapsed());
    let reason = down["reason"].as_str().unwrap();
    assert!(reason.contains("code 4008") && reason.contains("not receive Pong"), "{reason}");
    // The frame itself, as sent: an engine reads the venue's JSON in it.
    assert_eq!(down["close_code"], 4008, "{down}");
    let venue_said: serde_json::Value = serde_json::from_str(down["close_reason"].as_str().unwrap()).unwrap();
    assert_eq!(venue_said["code"], 408, "{down}");
    until(&stream, LONG, "reconnected", is_status("reconnected"));
}

#[test]
fn an_order_after_the_venues_close_frame_is_reported_as_not_sent() {
    let url = venue_that_closes_and_keeps_the_socket();
    // The next connection after a backoff of 2 s: the order comes while there is none.
    let options = r#"{"stream_idle_timeout_ms":3000,"stream_reconnect_min_ms":2000,"stream_reconnect_max_ms":2000}"#;
    let stream = Stream::open_orders(client(&url, options), session()).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let error = stream.new_order(ORDER).unwrap_err();
    assert_eq!(error.code(), Code::Transport, "{error}");
    assert!(!error.may_have_reached_venue(), "nothing was written: {error}");
    assert!(error.message().contains("not sent"), "{error}");
}

#[test]
fn public_pushes_with_the_symbol_only_in_data_are_counted_and_named_per_symbol() {
    let url = venue(|_, mut ws| {
        read_json(&mut ws);
        read_json(&mut ws);
        read_json(&mut ws);
        // seq counted per (channel, symbol), the envelope without `symbol` (it is optional):
        // read in one pass, then with an escape (the other decoding paths).
        for frame in [
            r#"{"seq":10,"channel":"depth_book","data":{"symbol":"BTC-USD","asks":[["2","1"],["1","1"]],"bids":[]}}"#,
            r#"{"seq":3,"channel":"depth_book","data":{"symbol":"ETH-USD","asks":[],"bids":[]}}"#,
            r#"{"seq":7,"channel":"price","data":{"mark_price":"1","symbol":"BTC-USD"}}"#,
            r#"{"seq":11,"channel":"depth_book","data":{"symbol":"BTC-USD","asks":[],"bids":[]}}"#,
            r#"{"seq":4,"channel":"depth_book","data":{"symbol":"ETH-USD","asks":[],"bids":[],"t":"\u0031"}}"#,
            r#"{"seq":8,"channel":"price","data":{"mark_price":"\u0032","symbol":"BTC-USD"}}"#,
            r#"{"seq":12,"data":{"symbol":"BTC-USD","asks":[],"bids":[]},"channel":"depth_book"}"#,
        ] {
            send(&mut ws, frame);
        }
        hold(ws, Duration::from_secs(3));
    });
    let subs = r#"[{"channel":"depth_book","symbol":"BTC-USD"},{"channel":"depth_book","symbol":"ETH-USD"},{"channel":"price","symbol":"BTC-USD"}]"#;
    let stream = Stream::open_market(client(&url, "{}"), None, subs).unwrap();
    let (last, mut events) = until(&stream, LONG, "the last book", |e| e["seq"] == 12);
    events.push(last);
    assert!(events.iter().all(|e| e["channel"] != "status" || e["state"] == "connected"), "{events:#?}");
    let pushes: Vec<(i64, &str)> = events
        .iter()
        .filter(|e| e["channel"] != "status")
        .map(|e| (e["seq"].as_i64().unwrap(), e["symbol"].as_str().unwrap_or("none")))
        .collect();
    let expected = [
        (10, "BTC-USD"),
        (3, "ETH-USD"),
        (7, "BTC-USD"),
        (11, "BTC-USD"),
        (4, "ETH-USD"),
        (8, "BTC-USD"),
        (12, "BTC-USD"),
    ];
    assert_eq!(pushes, expected);
    assert_eq!(events[1]["data"]["asks"], json!([["1", "1"], ["2", "1"]]), "the book is still sorted");
}

#[test]
fn account_pushes_numbered_per_symbol_raise_no_false_alarm() {
    // A venue that numbers `position` per symbol, the symbol only in `data`: each symbol's
    // pushes count from 1. Read in one pass, then with an escape (the other decoding paths).
    let url = venue(|_, mut ws| {
        read_json(&mut ws);
        send(&mut ws, r#"{"channel":"auth","data":{"code":0,"msg":"success"}}"#);
        for frame in [
            r#"{"seq":1,"channel":"position","data":{"symbol":"BTC-USD","qty":"0.1"}}"#,
            r#"{"seq":1,"channel":"position","data":{"symbol":"ETH-USD","qty":"2"}}"#,
            r#"{"seq":2,"channel":"position","data":{"symbol":"BTC-USD","qty":"0.2"}}"#,
            r#"{"seq":2,"channel":"position","data":{"qty":"\u0033","symbol":"ETH-USD"}}"#,
            r#"{"seq":3,"channel":"position","data":{"symbol":"BTC-USD","qty":"\u0030"}}"#,
        ] {
            send(&mut ws, frame);
        }
        hold(ws, Duration::from_secs(3));
    });
    let stream = Stream::open_market(client(&url, "{}"), Some(session()), r#"[{"channel":"position"}]"#).unwrap();
    let (last, mut events) = until(&stream, LONG, "the last push", |e| e["seq"] == 3);
    events.push(last);
    assert!(events.iter().all(|e| e["channel"] != "status" || e["state"] == "connected"), "{events:#?}");
    let pushes: Vec<(i64, &str)> = events
        .iter()
        .filter(|e| e["channel"] == "position")
        .map(|e| (e["seq"].as_i64().unwrap(), e["data"]["symbol"].as_str().unwrap()))
        .collect();
    assert_eq!(pushes, [(1, "BTC-USD"), (1, "ETH-USD"), (2, "BTC-USD"), (2, "ETH-USD"), (3, "BTC-USD")]);
    // An account push keeps its envelope: no symbol added to the event.
    assert!(events.iter().filter(|e| e["channel"] == "position").all(|e| e.get("symbol").is_none()), "{events:#?}");
}
