//! What the market stream makes of pushes whose shape does not say one thing (helper-28's
//! review): every frame decoded as the I/O thread decodes it (`PushDecoder`), by the
//! single-pass scanner with the serde paths behind it and by the serde paths alone, which
//! must agree.
//! - An envelope field (`seq`, `channel`, `symbol`, `data`) named twice, or `data` naming
//!   `symbol` twice: JSON readers keeping the first or the last copy disagree on what the push
//!   is, so it is passed on as `unrecognized` (its `seq` not counted), never delivered under
//!   one reading;
//! - an envelope and a `data` that name different symbols: an `error` event, not the data
//!   under the envelope's name, even beside a key serde_json cannot decode (a lone surrogate)
//!   or when the data's symbol holds one;
//! - an `error` about a push names its subscription and its `seq`, so an engine knows which
//!   book is stale;
//! - a `depth_book` push that is not a book (no `data`, a side missing or named twice, a level
//!   without a decimal price or with a quantity that is not a decimal of zero or more) is an
//!   `error`, not a data event; REST's `perps_query_depth_book` reads levels the same way;
//! - a `seq` beyond `i64` (a `u64` counter) is kept as the venue wrote it; a `seq` or a
//!   `symbol` that cannot be read is an `error` naming the channel, not `unrecognized`.

use perps::endpoints::answer::sort_depth_book;
use perps::stream::PushDecoder;
use serde_json::{Value, json};

/// The events of `frames` decoded in turn, by the scanner with the serde paths behind it and
/// by the serde paths alone: the same events (status events without their clock reading).
fn decode(frames: &[&str]) -> Vec<Value> {
    let (mut scanner, mut serde_path) = (PushDecoder::default(), PushDecoder::serde_only());
    let mut events = Vec::new();
    for frame in frames {
        let parse = |events: Vec<String>| -> Vec<Value> {
            events
                .iter()
                .map(|e| {
                    let mut event: Value = serde_json::from_str(e).unwrap();
                    if event["channel"] == "status" {
                        event.as_object_mut().unwrap().remove("received_ns");
                    }
                    event
                })
                .collect()
        };
        let a = parse(scanner.decode_all(frame, 1));
        let b = parse(serde_path.decode_all(frame, 1));
        assert_eq!(a, b, "the paths disagree on {frame}");
        events.extend(a);
    }
    events
}

fn channels(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e["channel"].as_str().unwrap() {
            "status" => format!("status:{}", e["state"].as_str().unwrap()),
            channel => channel.to_owned(),
        })
        .collect()
}

#[test]
fn a_push_naming_an_envelope_field_or_its_datas_symbol_twice_is_passed_on_as_unrecognized() {
    for frame in [
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","symbol":"ETH-USD","data":{}}"#,
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{},"symbol":"BTC-USD"}"#,
        r#"{"seq":1,"seq":2,"channel":"price","symbol":"BTC-USD","data":{}}"#,
        r#"{"seq":1,"channel":"price","channel":"price","symbol":"BTC-USD","data":{}}"#,
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"},"data":{"mark_price":"2"}}"#,
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","s\u0079mbol":"ETH-USD","data":{}}"#,
        r#"{"seq":1,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[]},"symbol":"ETH-USD"}"#,
        r#"{"seq":1,"channel":"order","data":{"id":1},"data":{"id":2}}"#,
        // `data` naming `symbol` twice, with or without an envelope symbol.
        r#"{"seq":1,"channel":"price","data":{"symbol":"BTC-USD","symbol":"ETH-USD","mark_price":"3000"}}"#,
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"symbol":"BTC-USD","symbol":"ETH-USD"}}"#,
        r#"{"seq":1,"channel":"depth_book","data":{"symbol":"BTC-USD","asks":[],"bids":[],"symbol":"ETH-USD"}}"#,
        r#"{"seq":1,"channel":"position","data":{"symbol":"BTC-USD","qty":"1","symb\u006fl":"ETH-USD"}}"#,
    ] {
        let events = decode(&[frame]);
        assert_eq!(channels(&events), ["unrecognized"], "{frame}: {events:#?}");
        let sent: Value = serde_json::from_str(frame).unwrap();
        assert_eq!(events[0]["frame"], sent, "passed on as sent");
    }
}

#[test]
fn a_seq_named_twice_is_counted_under_neither_copy() {
    // Connection-wide counting is learnt from the first three pushes; the fourth names seq
    // twice (4, then 900). Counting the last copy made up a gap 4..900 and then a regression;
    // neither copy is the venue's for sure: the next push shows the one loss there is, the
    // push passed on as `unrecognized` rather than on its channel.
    let events = decode(&[
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{}}"#,
        r#"{"seq":2,"channel":"price","symbol":"ETH-USD","data":{}}"#,
        r#"{"seq":3,"channel":"price","symbol":"BTC-USD","data":{}}"#,
        r#"{"seq":4,"seq":900,"channel":"price","symbol":"ETH-USD","data":{}}"#,
        r#"{"seq":5,"channel":"price","symbol":"BTC-USD","data":{}}"#,
    ]);
    assert_eq!(channels(&events), ["price", "price", "price", "unrecognized", "status:gap", "price"], "{events:#?}");
    assert_eq!((events[4]["expected"].as_i64(), events[4]["received"].as_i64()), (Some(4), Some(5)));
}

#[test]
fn envelope_and_data_that_name_different_symbols_give_an_error_not_data() {
    for (frame, channel) in [
        (r#"{"seq":7,"channel":"price","symbol":"BTC-USD","data":{"symbol":"ETH-USD","mark_price":"3000"}}"#, "price"),
        (
            r#"{"seq":7,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["3000","1"]],"bids":[],"symbol":"ETH-USD"}}"#,
            "depth_book",
        ),
        // With spaces and an escape: read by the serde paths.
        (
            r#"{ "seq" : 7 , "channel" : "depth_book" , "symbol" : "BTC-USD" , "data" : { "asks" : [ [ "3000" , "1" ] ] , "bids" : [ ] , "symbol" : "ETH\u002dUSD" } }"#,
            "depth_book",
        ),
        (r#"{"seq":7,"channel":"order","symbol":"BTC-USD","data":{"id":1,"symbol":"ETH-USD"}}"#, "order"),
    ] {
        let events = decode(&[frame]);
        assert_eq!(channels(&events), ["status:error"], "{frame}: {events:#?}");
        let error = &events[0];
        assert_eq!(error["subscription"], json!({ "channel": channel, "symbol": "BTC-USD" }), "{error}");
        assert_eq!(error["seq"], 7, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("\"BTC-USD\"") && message.contains("\"ETH-USD\""), "{message}");
    }
    // The same symbol in both, written with an escape or not, is one symbol; a symbol in a
    // nested object is not the data's.
    let events = decode(&[
        r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"symbol":"BTC\u002dUSD"}}"#,
        r#"{"seq":2,"channel":"price","symbol":"BTC-USD","data":{"x":{"symbol":"ETH-USD"},"symbol":"BTC-USD"}}"#,
    ]);
    assert_eq!(channels(&events), ["price", "price"], "{events:#?}");
}

#[test]
fn an_error_about_a_push_names_its_subscription_and_its_seq() {
    let events = decode(&[
        r#"{"seq":4,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["NaN","1"]],"bids":[]}}"#,
        // The symbol only in `data`: the error names it, as the event would have.
        r#"{"seq":5,"channel":"depth_book","data":{"asks":[["1","1"]],"bids":[["x","1"]],"symbol":"ETH-USD"}}"#,
        // Read by the serde paths (a space inside a level).
        r#"{"seq":6,"channel":"depth_book","symbol":"SOL-USD","data":{"asks":[["NaN", "1"]],"bids":[]}}"#,
    ]);
    assert_eq!(channels(&events), ["status:error"; 3], "{events:#?}");
    for (event, symbol, seq) in [(&events[0], "BTC-USD", 4), (&events[1], "ETH-USD", 5), (&events[2], "SOL-USD", 6)] {
        assert_eq!(event["subscription"], json!({ "channel": "depth_book", "symbol": symbol }), "{event}");
        assert_eq!(event["seq"], seq, "{event}");
        assert_eq!(event["code_name"], "PERPS_BAD_RESPONSE");
    }
    assert!(events[1]["message"].as_str().unwrap().contains(r#"level 0 of "bids": price "x" is not a decimal"#));
}

#[test]
fn a_depth_book_push_that_is_not_a_book_is_an_error_not_data() {
    for (frame, words) in [
        (r#"{"seq":1,"channel":"depth_book","symbol":"BTC-USD","data":null}"#, "\"data\" to be a JSON object"),
        (r#"{"seq":2,"channel":"depth_book","symbol":"BTC-USD"}"#, "no \"data\""),
        (r#"{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{}}"#, "the book has no \"asks\""),
        (r#"{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["1","1"]]}}"#, "no \"bids\""),
        (
            r#"{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{"bids":[["1","1"]]}}"#,
            "the book has no \"asks\"",
        ),
        (r#"{"seq":4,"channel":"depth_book","symbol":"BTC-USD","data":{"Asks":[["2","1"],["1","1"]]}}"#, "no \"asks\""),
        (
            r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["1","NaN"],["2",null],["3"]],"bids":[["9","-1"]]}}"#,
            r#"level 0 of "asks": quantity "NaN" is not a decimal of zero or more"#,
        ),
        (
            r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["2",null]],"bids":[]}}"#,
            r#"quantity "null""#,
        ),
        (r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["3"]],"bids":[]}}"#, "has no quantity"),
        (
            r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[["9","1"],["9","-1"]]}}"#,
            r#"level 1 of "bids": quantity "-1""#,
        ),
        (
            r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["1","x"],["y","1"]],"bids":[]}}"#,
            r#"level 0 of "asks": quantity "x""#,
        ),
        (
            r#"{"seq":6,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["2","1"]],"asks":[["1","1"]],"bids":[]}}"#,
            "\"asks\" is named twice",
        ),
        (r#"{"seq":7,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":{},"bids":[]}}"#, "an array of levels"),
        (r#"{"seq":8,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[[]],"bids":[]}}"#, "is empty"),
        (r#"{"seq":9,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":["1"],"bids":[]}}"#, "[price, qty]"),
    ] {
        let events = decode(&[frame]);
        assert_eq!(channels(&events), ["status:error"], "{frame}: {events:#?}");
        let message = events[0]["message"].as_str().unwrap();
        assert!(message.starts_with("depth_book push: ") && message.contains(words), "{frame}: {message}");
        assert_eq!(events[0]["subscription"], json!({ "channel": "depth_book", "symbol": "BTC-USD" }));
    }
    // Still books: a side sent as null (empty), a quantity of zero, elements after the
    // quantity, numbers for texts.
    let events = decode(&[
        r#"{"seq":1,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":null,"bids":[["1","0"],[2,3,"x"]]}}"#,
    ]);
    assert_eq!(channels(&events), ["depth_book"], "{events:#?}");
    assert_eq!(events[0]["data"], json!({ "asks": [], "bids": [[2, 3, "x"], ["1", "0"]] }));
}

#[test]
fn rest_and_the_stream_read_the_same_level_shapes() {
    for (book, sorted_asks) in [
        (r#"{"asks":[["2","1"],["1","1"]],"bids":[]}"#, Some(json!([["1", "1"], ["2", "1"]]))),
        // Objects with a price and a quantity (REST sorted them; the stream refused them).
        (
            r#"{"asks":[{"price":"2","qty":"1"},{"price":"1","qty":"2"}],"bids":[]}"#,
            Some(json!([{ "price": "1", "qty": "2" }, { "price": "2", "qty": "1" }])),
        ),
        (
            r#"{"asks":[{"px":2,"sz":"1"},{"px":"1.5","sz":1}],"bids":[]}"#,
            Some(json!([{ "px": "1.5", "sz": 1 }, { "px": 2, "sz": "1" }])),
        ),
        // A price written with an escape is that price to any JSON reader (REST refused it).
        (r#"{"asks":[["\u0032","1"],["1","1"]],"bids":[]}"#, Some(json!([["1", "1"], ["2", "1"]]))),
        // Refused by both.
        (r#"{"asks":[{"price":"1"}],"bids":[]}"#, None),
        (r#"{"asks":[{"price":"1","px":"2","qty":"1"}],"bids":[]}"#, None),
        (r#"{"asks":[["1","NaN"]],"bids":[]}"#, None),
        (r#"{"asks":[["1","-2"]],"bids":[]}"#, None),
        (r#"{"asks":[["1"]],"bids":[]}"#, None),
        (r#"{"asks":[["x","1"]],"bids":[]}"#, None),
        (r#"{"asks":[],"asks":[],"bids":[]}"#, None),
    ] {
        let frame = format!(r#"{{"seq":1,"channel":"depth_book","symbol":"BTC-USD","data":{book}}}"#);
        let events = decode(&[&frame]);
        let rest = sort_depth_book(book);
        match &sorted_asks {
            Some(asks) => {
                assert_eq!(channels(&events), ["depth_book"], "{book}: {events:#?}");
                assert_eq!(&events[0]["data"]["asks"], asks, "{book}");
                let rest: Value = serde_json::from_str(&rest.unwrap_or_else(|e| panic!("{book}: {e:?}"))).unwrap();
                assert_eq!(&rest["asks"], asks, "REST: {book}");
            }
            None => {
                assert_eq!(channels(&events), ["status:error"], "{book}: {events:#?}");
                assert!(rest.is_err(), "REST takes {book}: {rest:?}");
            }
        }
    }
}

#[test]
fn a_seq_beyond_i64_is_kept_as_written_and_an_unreadable_seq_or_symbol_is_an_error_of_its_channel() {
    let events = decode(&[
        r#"{"seq":18446744073709551615,"channel":"trade","data":{"id":1,"order_id":2}}"#,
        r#"{"seq":"9223372036854775808","channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#,
    ]);
    assert_eq!(channels(&events), ["trade", "price"], "{events:#?}");
    assert_eq!(events[0]["seq"].as_u64(), Some(u64::MAX), "{}", events[0]);
    assert_eq!(events[1]["seq"].as_u64(), Some(1 << 63), "{}", events[1]);
    for (frame, channel, symbol, seq, words) in [
        (
            r#"{"seq":1.5,"channel":"price","symbol":"BTC-USD","data":{}}"#,
            "price",
            json!("BTC-USD"),
            json!(null),
            "\"seq\"",
        ),
        (
            r#"{"seq":"seven","channel":"depth_book","symbol":"ETH-USD","data":{"asks":[],"bids":[]}}"#,
            "depth_book",
            json!("ETH-USD"),
            json!(null),
            "\"seq\"",
        ),
        (
            r#"{"seq":18446744073709551616,"channel":"order","data":{"id":1}}"#,
            "order",
            json!(null),
            json!(null),
            "\"seq\"",
        ),
        (
            r#"{"seq":3,"channel":"price","symbol":5,"data":{"mark_price":"1"}}"#,
            "price",
            json!(null),
            json!(3),
            "\"symbol\"",
        ),
        (
            r#"{"seq":3,"channel":"public_trade","symbol":["BTC-USD"],"data":{}}"#,
            "public_trade",
            json!(null),
            json!(3),
            "\"symbol\"",
        ),
        // A public push's data names the symbol the envelope cannot: the error names it.
        (
            r#"{"seq":true,"channel":"price","data":{"symbol":"SOL-USD"}}"#,
            "price",
            json!("SOL-USD"),
            json!(null),
            "\"seq\"",
        ),
    ] {
        let events = decode(&[frame]);
        assert_eq!(channels(&events), ["status:error"], "{frame}: {events:#?}");
        assert_eq!(events[0]["subscription"], json!({ "channel": channel, "symbol": symbol }), "{frame}");
        assert_eq!(events[0]["seq"], seq, "{frame}");
        assert!(events[0]["message"].as_str().unwrap().contains(words), "{}", events[0]);
    }
}

#[test]
fn a_key_no_reader_decodes_to_text_does_not_hide_the_datas_symbol() {
    // A lone surrogate (`\ud800`) is no character: serde_json refuses to decode such a key to
    // text, while other JSON readers (Python's, JavaScript's) read it, and the `symbol` beside
    // it. Reading the data's symbol stopped at that key, so these were delivered as data of
    // the envelope's symbol, or of none, whatever symbol the data named. The events hand on
    // the venue's text, lone surrogate included: they are looked at as text.
    for frame in [
        r#"{"seq":7,"channel":"price","symbol":"BTC-USD","data":{"\ud800":1,"symbol":"ETH-USD","mark_price":"3000"}}"#,
        r#"{"seq":7,"channel":"order","symbol":"BTC-USD","data":{"id":1,"symbol":"ETH-USD","x\udc00y":1}}"#,
    ] {
        let event = decode_as_text(frame);
        assert!(
            event.starts_with(r#"{"channel":"status""#) && event.contains(r#""state":"error""#),
            "{frame}: {event}"
        );
        assert!(event.contains(r#"its envelope names the symbol \"BTC-USD\" and its data \"ETH-USD\""#), "{event}");
    }
    // The symbol only in `data`: the event names it.
    let event = decode_as_text(r#"{"seq":7,"channel":"price","data":{"\ud800":1,"symbol":"ETH-USD"}}"#);
    assert!(event.starts_with(r#"{"channel":"price","seq":7,"symbol":"ETH-USD","data":"#), "{event}");
    // `symbol` named twice around such a key: passed on, not delivered under either.
    let event =
        decode_as_text(r#"{"seq":1,"channel":"price","data":{"symbol":"BTC-USD","\ud800":0,"symbol":"ETH-USD"}}"#);
    assert!(event.starts_with(r#"{"channel":"unrecognized","frame":"#), "{event}");
}

#[test]
fn a_datas_symbol_serde_json_cannot_decode_is_still_a_symbol_that_must_agree() {
    // `"ETH-USD\ud800"` (a lone surrogate) is a string to every JSON reader but serde_json,
    // which refuses to decode it: it was taken for a data naming no symbol, and ETH-USD's data
    // was delivered under the envelope's BTC-USD. Like a JSON reader that does read it, the
    // library now reads it with U+FFFD for the surrogate (as redaction does): another symbol.
    for frame in [
        r#"{"seq":7,"channel":"price","symbol":"BTC-USD","data":{"symbol":"ETH-USD\ud800","mark_price":"3000"}}"#,
        r#"{"seq":7,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[],"bids":[],"symbol":"ETH-USD\udc00"}}"#,
        r#"{"seq":7,"channel":"price","symbol":"BTC-USD","data":{"symbol":"BTC-USD\ud800"}}"#,
    ] {
        let event = decode_as_text(frame);
        assert!(
            event.starts_with(r#"{"channel":"status""#) && event.contains(r#""state":"error""#),
            "{frame}: {event}"
        );
        assert!(event.contains("its envelope names the symbol \\\"BTC-USD\\\" and its data"), "{event}");
    }
}

/// The one event of `frame`, as text (it may hand on text serde_json would not read: a lone
/// surrogate), the same from the scanner and from the serde paths (a status event's own clock
/// reading aside).
fn decode_as_text(frame: &str) -> String {
    let (mut scanner, mut serde_path) = (PushDecoder::default(), PushDecoder::serde_only());
    let clock = |events: Vec<String>| -> Vec<String> {
        let cut = |e: &str| match e.split_once(r#""received_ns":"#) {
            Some((head, tail)) if e.starts_with(r#"{"channel":"status""#) => {
                format!("{head}{}", tail.trim_start_matches(|c: char| c.is_ascii_digit()))
            }
            _ => e.to_owned(),
        };
        events.iter().map(|e| cut(e)).collect()
    };
    let events = clock(scanner.decode_all(frame, 1));
    assert_eq!(events, clock(serde_path.decode_all(frame, 1)), "the paths disagree on {frame}");
    assert_eq!(events.len(), 1, "{frame}: {events:?}");
    events.into_iter().next().unwrap()
}
