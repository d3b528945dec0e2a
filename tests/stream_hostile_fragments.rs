//! A venue that begins a message and never finishes it: continuation frames, slowly, never the
//! last (FIN), with pings between them. The pings keep the connection "alive" for the idle
//! timeout while nothing is delivered; the stream bounds how long a message may stay
//! incomplete by the same timeout and replaces the connection. The venue is a short script
//! on 127.0.0.1.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use helpers::*;
use perps::stream::Stream;
use scripted_venue::*;
use std::time::{Duration, Instant};
use tungstenite::Message;
use tungstenite::protocol::frame::Frame;
use tungstenite::protocol::frame::coding::{Data, OpCode};

const PRICE: &str = r#"[{"channel":"price","symbol":"BTC-USD"}]"#;

#[test]
fn an_endless_fragmented_message_between_pings_ends_the_connection_which_is_replaced() {
    let url = venue(|i, mut ws| {
        read_json(&mut ws);
        if i > 0 {
            send(&mut ws, r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"2"}}"#);
            return hold(ws, Duration::from_secs(5));
        }
        let first = Frame::message(r#"{"seq":1,"channel":"price","data":{"p":""#, OpCode::Data(Data::Text), false);
        if ws.send(Message::Frame(first)).is_err() {
            return;
        }
        // Until the client leaves (or long past any bound the test waits for).
        let _ = ws.get_mut().set_read_timeout(Some(Duration::from_millis(20)));
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            let more = Frame::message("1", OpCode::Data(Data::Continue), false);
            if ws.send(Message::Ping(Default::default())).is_err() || ws.send(Message::Frame(more)).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
            match ws.read() {
                Ok(_) | Err(tungstenite::Error::Io(_)) => {}
                Err(_) => return,
            }
        }
    });
    // Idle timeout 600 ms: pings come every 100 ms, so only the bound on an incomplete
    // message can end the first connection; without it `until` fails after 10 s.
    let stream = Stream::open_market(client(&url, r#"{"stream_idle_timeout_ms":600}"#), None, PRICE).unwrap();
    let (down, before) = until(&stream, LONG, "disconnected", is_status("disconnected"));
    assert!(down["reason"].as_str().unwrap().contains("incomplete"), "{down}");
    assert!(before.iter().all(|e| e["channel"] != "price"), "{before:#?}");
    until(&stream, LONG, "reconnected", is_status("reconnected"));
    let (price, _) = until(&stream, LONG, "the new connection's push", is_channel("price"));
    assert_eq!(price["data"]["mark_price"], "2", "{price}");
}
