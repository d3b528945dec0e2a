//! The session's token echoed by a hostile venue inside pushes on the market stream's known
//! channels (a venue on 127.0.0.1 that is not ours): an account push (`order`, `position`,
//! `balance`, `trade`) and a public push (`price`, `depth_book`, read by the single-pass
//! scanner or by the serde paths) are redacted as every frame that quotes the venue is, the
//! token written plainly or JSON-escaped; a push that quotes no secret is passed as sent, byte
//! for byte. And the venue's data is never taken for a secret: numbers and ids that happen to
//! spell 8 bytes of the API key's hex form come through as sent, on both streams.

#[path = "streams/helpers.rs"]
mod helpers;
#[path = "streams/scripted_venue.rs"]
mod scripted_venue;

use helpers::*;
use perps::stream::Stream;
use scripted_venue::*;
use serde_json::{Value, json};
use std::time::Duration;

const SUBSCRIPTIONS: &str = r#"[{"channel":"order"},{"channel":"balance"},{"channel":"price","symbol":"BTC-USD"},{"channel":"depth_book","symbol":"BTC-USD"}]"#;

/// Each character of `TOKEN` as a JSON escape.
fn escaped_token() -> String {
    TOKEN.chars().map(|c| format!("\\u{:04x}", c as u32)).collect()
}

#[test]
fn a_push_that_echoes_the_token_is_redacted_whatever_its_channel() {
    let escaped = escaped_token();
    let order_push = json!({ "seq": 2, "channel": "order", "data": {
        "id": 7, "cl_ord_id": "c-1", "symbol": "BTC-USD", "status": "open", "remark": format!("by {TOKEN}") } })
    .to_string();
    let balance_push =
        format!(r#"{{"seq":3,"channel":"balance","data":{{"token":"DUSD","free":"1","note":"session {escaped}"}}}}"#);
    let price_push = json!({ "seq": 4, "channel": "price", "symbol": "BTC-USD", "data": {
        "symbol": "BTC-USD", "mark_price": "65000.1", "note": format!("for {TOKEN}") } })
    .to_string();
    let plain_order =
        json!({ "seq": 5, "channel": "order", "data": { "id": 8, "cl_ord_id": "c-2", "status": "filled" } })
            .to_string();
    // A book quoting the token beside its levels: compact (the scanner's), then escaped (the
    // serde paths').
    let book_push = format!(
        r#"{{"seq":6,"channel":"depth_book","symbol":"BTC-USD","data":{{"asks":[["2","1"],["1","1"]],"bids":[],"note":"{TOKEN}"}}}}"#
    );
    let escaped_book = format!(
        r#"{{"seq":7,"channel":"depth_book","symbol":"BTC-USD","data":{{"asks":[],"bids":[["1","1"],["2","1"]],"note":"{escaped}"}}}}"#
    );
    let plain_price =
        r#"{"seq":8,"channel":"price","symbol":"BTC-USD","data":{"symbol":"BTC-USD","mark_price":"65000.2"}}"#;
    let frames =
        vec![order_push, balance_push, price_push, plain_order, book_push, escaped_book, plain_price.to_owned()];
    let url = venue(move |_, mut ws| {
        read_json(&mut ws);
        send(&mut ws, r#"{"seq":1,"channel":"auth","data":{"code":0,"msg":"success"}}"#);
        read_json(&mut ws); // the price subscription
        read_json(&mut ws); // the book's
        for frame in &frames {
            send(&mut ws, frame);
        }
        hold(ws, Duration::from_secs(3));
    });
    let stream = Stream::open_market(client(&url, "{}"), Some(session()), SUBSCRIPTIONS).unwrap();
    let mut pushes: Vec<Value> = Vec::new();
    let mut texts: Vec<String> = Vec::new();
    let deadline = std::time::Instant::now() + LONG;
    while pushes.len() < 7 {
        assert!(std::time::Instant::now() < deadline, "{pushes:#?}");
        let Some(text) = stream.next(Some(SECOND)).unwrap() else { continue };
        let event: Value = serde_json::from_str(&text).unwrap();
        if event["channel"] != "status" {
            pushes.push(event);
            texts.push(text);
        }
    }
    let channels: Vec<&str> = pushes.iter().map(|e| e["channel"].as_str().unwrap()).collect();
    assert_eq!(
        channels,
        ["order", "balance", "price", "order", "depth_book", "depth_book", "price"],
        "nothing withheld or reordered: {pushes:#?}"
    );
    assert_eq!(pushes[0]["data"]["remark"], "by <redacted>", "{}", pushes[0]);
    assert_eq!(pushes[0]["data"]["cl_ord_id"], "c-1", "the rest of the push as sent");
    assert_eq!(pushes[1]["data"]["note"], "session <redacted>", "{}", pushes[1]);
    assert_eq!(pushes[1]["data"]["token"], "DUSD");
    assert_eq!(pushes[2]["data"]["note"], "for <redacted>", "{}", pushes[2]);
    assert_eq!(pushes[2]["data"]["mark_price"], "65000.1");
    assert_eq!(pushes[4]["data"], json!({ "asks": [["1", "1"], ["2", "1"]], "bids": [], "note": "<redacted>" }));
    assert_eq!(pushes[5]["data"], json!({ "asks": [], "bids": [["2", "1"], ["1", "1"]], "note": "<redacted>" }));
    for text in &texts {
        assert!(!text.contains(&TOKEN[..8]) && !text.contains(&escaped_token()[..24]), "{text}");
    }
    // A push with no secret in it is untouched, byte for byte.
    assert_eq!(pushes[3]["data"], json!({ "id": 8, "cl_ord_id": "c-2", "status": "filled" }));
    let data = &plain_price[plain_price.find(r#""data":"#).unwrap() + 7..plain_price.len() - 1];
    assert!(texts[6].contains(&format!(r#""data":{data},"#)), "{}", texts[6]);
}

/// An API credential whose key's hex form is "1212…12": every run of 8 bytes of it is 8
/// decimal digits, as about two keys in three have at least one.
fn digit_key_session() -> std::sync::Arc<perps::session::Session> {
    let key = bs58::encode([0x12u8; 32]).into_string();
    std::sync::Arc::new(perps::session::Session::from_api_key(TOKEN, &key).unwrap())
}

#[test]
fn numbers_that_spell_part_of_the_keys_hex_form_are_the_venues_data_not_a_secret() {
    // An order push whose id, quantity and text hold "12121212" (a run of the key's hex form).
    let push = r#"{"seq":2,"channel":"order","data":{"id":1212121212,"qty":"0.12121212","cl_ord_id":"c-12121212","status":"open"}}"#;
    let url = venue(move |_, mut ws| {
        read_json(&mut ws);
        send(&mut ws, r#"{"seq":1,"channel":"auth","data":{"code":0,"msg":"success"}}"#);
        send(&mut ws, push);
        hold(ws, Duration::from_secs(3));
    });
    let stream =
        Stream::open_market(client(&url, "{}"), Some(digit_key_session()), r#"[{"channel":"order"}]"#).unwrap();
    let (event, before) = until(&stream, LONG, "the push", is_channel("order"));
    assert!(!before.iter().any(|e| e["state"] == "error"), "not withheld: {before:#?}");
    let sent: Value = serde_json::from_str(push).unwrap();
    assert_eq!(event["data"], sent["data"], "{event}");

    // An order's outcome on the order stream, its order id spelling the same run.
    let reply = r#"{"code":0,"message":"success","request_id":"RID","order_id":1212121212}"#.to_owned();
    let url = order_venue(logged_in, vec![reply]);
    let stream = Stream::open_orders(client(&url, "{}"), digit_key_session()).unwrap();
    stream.new_order(ORDER).unwrap();
    let (outcome, before) = until(&stream, LONG, "the outcome", is_channel("order_response"));
    assert!(!before.iter().any(|e| e["state"] == "error"), "not withheld: {before:#?}");
    assert_eq!(outcome["frame"]["order_id"], 1212121212_i64, "{outcome}");
    assert_eq!(outcome["success"], true, "{outcome}");
}
