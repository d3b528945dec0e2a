//! Lost pushes under the venue's connection-wide `seq` (its examples: auth 1, …, order 35,
//! position 36): once the counting is seen to be connection-wide, a loss is reported whatever
//! frame reveals it — the first push of a new symbol (an account fill), a frame the library
//! does not know — as a gap of the connection, not of the subscription that revealed it; and
//! a venue that counts per channel still raises no alarm. Scripted venues on 127.0.0.1.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use helpers::*;
use perps::stream::Stream;
use scripted_venue::*;
use serde_json::Value;
use std::time::Duration;

const SUBS: &str =
    r#"[{"channel":"price","symbol":"BTC-USD"},{"channel":"depth_book","symbol":"BTC-USD"},{"channel":"order"}]"#;

/// A venue that answers the auth frame, then sends `frames` and keeps the connection.
fn venue_sending(frames: &'static [&'static str]) -> String {
    venue(move |_, mut ws| {
        read_json(&mut ws);
        send(&mut ws, r#"{"channel":"auth","data":{"code":0,"msg":"success"}}"#);
        for frame in frames {
            send(&mut ws, frame);
        }
        hold(ws, Duration::from_secs(3));
    })
}

fn open(url: &str) -> Stream {
    Stream::open_market(client(url, "{}"), Some(session()), SUBS).unwrap()
}

fn alarms_until_last(url: &str, last_seq: i64) -> Vec<Value> {
    let stream = open(url);
    let (_, events) = until(&stream, LONG, "the last push", |e| e["seq"] == last_seq);
    events.into_iter().filter(|e| e["state"] == "gap" || e["state"] == "seq_regression").collect()
}

#[test]
fn a_loss_revealed_by_a_new_symbols_first_push_or_an_unknown_frame_is_a_gap_of_the_connection() {
    let url = venue_sending(&[
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#,
        r#"{"seq":2,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        r#"{"seq":3,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"2"}}"#,
        r#"{"seq":4,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        // 5 lost (a fill of BTC-USD, say); the next frame is the first order push of ETH-USD.
        r#"{"seq":6,"channel":"order","data":{"symbol":"ETH-USD","status":"open"}}"#,
        // 7 lost; the next frame is of a channel the library does not know.
        r#"{"seq":8,"channel":"notice","data":{}}"#,
        r#"{"seq":9,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"3"}}"#,
    ]);
    let alarms = alarms_until_last(&url, 9);
    let seen: Vec<(&str, i64, i64, &str)> = alarms
        .iter()
        .map(|e| {
            (
                e["state"].as_str().unwrap(),
                e["expected"].as_i64().unwrap(),
                e["received"].as_i64().unwrap(),
                e["scope"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [("gap", 5, 6, "connection"), ("gap", 7, 8, "connection")], "{alarms:#?}");
    assert_eq!(alarms[0]["subscription"]["channel"], "order", "the frame that revealed it: {alarms:#?}");
    assert_eq!(alarms[1]["subscription"], Value::Null, "a frame of no subscription revealed it");
}

#[test]
fn a_connection_wide_count_that_restarts_is_followed_from_its_new_number() {
    let url = venue_sending(&[
        r#"{"seq":10,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#,
        r#"{"seq":11,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        r#"{"seq":12,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"2"}}"#,
        r#"{"seq":13,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"3"}}"#,
        r#"{"seq":2,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        r#"{"seq":4,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"4"}}"#,
    ]);
    let alarms = alarms_until_last(&url, 4);
    let states: Vec<(&str, &str)> =
        alarms.iter().map(|e| (e["state"].as_str().unwrap(), e["scope"].as_str().unwrap())).collect();
    assert_eq!(states, [("seq_regression", "connection"), ("gap", "connection")], "{alarms:#?}");
    assert_eq!((alarms[1]["expected"].as_i64(), alarms[1]["received"].as_i64()), (Some(3), Some(4)));
}

#[test]
fn per_channel_counting_raises_no_alarm_and_a_skip_on_the_leading_channel_is_its_own() {
    let url = venue_sending(&[
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#,
        r#"{"seq":1,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        r#"{"seq":2,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        r#"{"seq":1,"channel":"order","data":{"symbol":"ETH-USD","status":"open"}}"#,
        r#"{"seq":2,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"2"}}"#,
        r#"{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#,
        r#"{"seq":3,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"3"}}"#,
    ]);
    let stream = open(&url);
    let (_, events) = until(&stream, LONG, "the last price", |e| e["data"]["mark_price"] == "3");
    let alarms: Vec<&Value> = events.iter().filter(|e| e["state"] == "gap" || e["state"] == "seq_regression").collect();
    assert_eq!(alarms.len(), 1, "{alarms:#?}");
    assert_eq!(
        (alarms[0]["scope"].as_str(), alarms[0]["subscription"]["channel"].as_str()),
        (Some("subscription"), Some("depth_book"))
    );
}

#[test]
fn a_venue_that_fills_the_seq_table_with_made_up_symbols_cannot_hide_a_regression_of_a_subscription() {
    // 1100 made-up symbols, more than the table of pairs holds, before the first push of a
    // subscription; then that subscription's count goes back.
    let mut frames: Vec<&'static str> = (0..1100)
        .map(|n| &*format!(r#"{{"seq":1,"channel":"price","symbol":"X{n}-USD","data":{{"mark_price":"1"}}}}"#).leak())
        .collect();
    frames.push(r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#);
    frames.push(r#"{"seq":4,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]}}"#);
    let alarms = alarms_until_last(&venue_sending(frames.leak()), 4);
    assert_eq!(alarms.len(), 1, "{alarms:#?}");
    assert_eq!(
        (alarms[0]["state"].as_str(), alarms[0]["scope"].as_str(), alarms[0]["subscription"]["channel"].as_str()),
        (Some("seq_regression"), Some("subscription"), Some("depth_book")),
        "{alarms:#?}"
    );
}
