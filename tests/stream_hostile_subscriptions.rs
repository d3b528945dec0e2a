//! A venue that refuses subscriptions, in every form the sources suggest a refusal could take
//! (venue-api.md §2.2, §6b: whether a subscribe is answered is undocumented): each refusal that
//! names a subscription, or answers the only one still awaited, is an `error` event naming it
//! (`"refused":true`), so that an engine does not wait for a book that will never come; any
//! other stays `unrecognized`. The venue is a short script on 127.0.0.1; the sandbox's own
//! refusal (`invalid symbol …`) is in `tests/streams.rs`.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use helpers::*;
use perps::stream::Stream;
use scripted_venue::*;
use serde_json::{Value, json};
use std::time::Duration;

/// The venue reads one subscribe per subscription, sends `frames`, then a price push on
/// BTC-USD (with no `seq`, to leave the count alone) that ends the script's part; the events up to that push are returned.
fn answered(subscriptions: &str, frames: &'static [&'static str]) -> Vec<Value> {
    let count = serde_json::from_str::<Vec<Value>>(subscriptions).unwrap().len();
    let url = venue(move |_, mut ws| {
        for _ in 0..count {
            read_json(&mut ws);
        }
        for frame in frames {
            send(&mut ws, frame);
        }
        send(&mut ws, r#"{"channel":"price","symbol":"BTC-USD","data":{"mark_price":"closing"}}"#);
        hold(ws, Duration::from_secs(5));
    });
    let stream = Stream::open_market(client(&url, "{}"), None, subscriptions).unwrap();
    let (_, before) = until(&stream, LONG, "the closing price push", |e| e["data"]["mark_price"] == "closing");
    before.into_iter().filter(|e| e["state"] != "connected").collect()
}

fn refused(event: &Value, channel: &str, symbol: &str) {
    assert_eq!(
        (&event["channel"], &event["state"], &event["refused"]),
        (&json!("status"), &json!("error"), &json!(true)),
        "{event}"
    );
    assert_eq!(event["subscription"], json!({ "channel": channel, "symbol": symbol }), "{event}");
    assert_eq!(event["code_name"], "PERPS_API_ERROR", "{event}");
}

#[test]
fn refusals_naming_a_subscription_are_errors_naming_it_and_others_stay_unrecognized() {
    let subs = r#"[{"channel":"price","symbol":"BTC-USD"},{"channel":"depth_book","symbol":"BTC-USD"},
        {"channel":"depth_book","symbol":"XYZ-USD"},{"channel":"price","symbol":"XYZ-USD"},
        {"channel":"public_trade","symbol":"SOL-USD"},{"channel":"price","symbol":"ETH-USD"}]"#;
    let events = answered(
        subs,
        &[
            // The sandbox's form, naming the symbol in words: its two subscriptions in turn.
            r#"{"seq":1,"channel":"error","data":{"code":400,"msg":"invalid symbol XYZ-USD"}}"#,
            // Nothing named while several are awaited: not guessed at.
            r#"{"seq":2,"channel":"error","data":{"code":400,"msg":"bad request"}}"#,
            r#"{"seq":3,"channel":"error","data":{"code":400,"msg":"invalid symbol XYZ-USD"}}"#,
            // Named in fields; the order stream's flat form with the request echoed; an answer
            // on the `subscribe` channel as the auth frame's comes on `auth`.
            r#"{"seq":4,"channel":"error","symbol":"ETH-USD","data":{"code":404,"channel":"price","msg":"no price"}}"#,
            r#"{"code":403,"message":"not allowed","subscribe":{"channel":"public_trade","symbol":"SOL-USD"}}"#,
            r#"{"channel":"subscribe","data":{"code":400,"msg":"depth unavailable","channel":"depth_book","symbol":"BTC-USD"}}"#,
            // Not ours to tie: another symbol, an ack.
            r#"{"seq":5,"channel":"error","data":{"code":400,"msg":"invalid symbol DOGE-USD"}}"#,
            r#"{"channel":"subscribe","data":{"code":0,"msg":"success"}}"#,
        ],
    );
    assert_eq!(events.len(), 8, "{events:#?}");
    refused(&events[0], "depth_book", "XYZ-USD");
    assert!(events[0]["message"].as_str().unwrap().contains("invalid symbol XYZ-USD"), "{}", events[0]);
    assert_eq!(events[0]["seq"], 1);
    assert_eq!(events[1]["channel"], "unrecognized", "{}", events[1]);
    refused(&events[2], "price", "XYZ-USD");
    refused(&events[3], "price", "ETH-USD");
    refused(&events[4], "public_trade", "SOL-USD");
    refused(&events[5], "depth_book", "BTC-USD");
    for event in &events[6..] {
        assert_eq!(event["channel"], "unrecognized", "{event}");
    }
    // The refusals' seqs counted on the connection: no false gap reported.
    assert!(events.iter().all(|e| e["state"] != "gap"), "{events:#?}");
}

#[test]
fn a_refusal_naming_nothing_is_tied_to_the_only_subscription_still_awaited() {
    let subs = r#"[{"channel":"price","symbol":"BTC-USD"},{"channel":"depth_book","symbol":"ABC-USD"}]"#;
    let events = answered(
        subs,
        &[
            r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#,
            r#"{"seq":2,"channel":"error","data":{"code":400,"msg":"bad request"}}"#,
            // Once refused, no subscription is awaited: a second such refusal is not guessed at.
            r#"{"seq":3,"channel":"error","data":{"code":400,"msg":"bad request"}}"#,
        ],
    );
    assert_eq!(events.len(), 3, "{events:#?}");
    refused(&events[1], "depth_book", "ABC-USD");
    assert_eq!(events[2]["channel"], "unrecognized", "{}", events[2]);
}

#[test]
fn a_bare_refusal_is_not_blamed_on_a_quiet_account_channel() {
    // With a session: `order` is asked for in the auth frame (answered), the book by the one
    // subscribe frame after it. The book pushes; no order is placed, so `order` stays quiet.
    let url = venue(|_, mut ws| {
        read_json(&mut ws);
        send(&mut ws, r#"{"channel":"auth","data":{"code":200,"msg":"success"}}"#);
        read_json(&mut ws);
        send(&mut ws, r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#);
        send(&mut ws, r#"{"seq":2,"channel":"error","data":{"code":500,"msg":"internal error"}}"#);
        send(&mut ws, r#"{"channel":"price","symbol":"BTC-USD","data":{"mark_price":"closing"}}"#);
        hold(ws, Duration::from_secs(5));
    });
    let subs = r#"[{"channel":"price","symbol":"BTC-USD"},{"channel":"order"}]"#;
    let stream = Stream::open_market(client(&url, "{}"), Some(session()), subs).unwrap();
    let (_, before) = until(&stream, LONG, "the closing price push", |e| e["data"]["mark_price"] == "closing");
    let events: Vec<Value> = before.into_iter().filter(|e| e["state"] != "connected").collect();
    assert_eq!(events.len(), 2, "{events:#?}");
    assert_eq!(events[0]["channel"], "price", "{}", events[0]);
    // Not `"refused":true` on `order`: an engine would take its order channel for dead.
    assert_eq!(events[1]["channel"], "unrecognized", "{}", events[1]);
}
