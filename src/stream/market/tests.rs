//! Unit tests of the market stream's protocol: the auth frame, pushes read on each decoding path, seq checks.

use super::*;

#[test]
fn the_auth_frame_is_what_serde_json_wrote() {
    let sub = |channel, symbol: Option<&str>| Subscription { channel, symbol: symbol.map(str::to_owned) };
    for vault in [None, Some("0xVault")] {
        let subs = vec![sub("order", None), sub("price", Some("BTC-USD")), sub("balance", None)];
        let market = Market::new(subs, vault.map(str::to_owned));
        let streams = json!([{ "channel": "order" }, { "channel": "balance" }]);
        let mut auth = json!({ "token": "tok\"en", "streams": streams });
        if let Some(vault) = vault {
            auth["impersonate"] = vault.into();
        }
        assert_eq!(market.auth_frame("tok\"en").as_str(), json!({ "auth": auth }).to_string());
    }
    let market = Market::new(vec![sub("price", Some("BTC-USD"))], None);
    assert_eq!(market.auth_frame("t").as_str(), r#"{"auth":{"streams":[],"token":"t"}}"#);
}

#[test]
fn pushes_become_events_with_sorted_books_and_seq_checks() {
    let queue = Queue::default();
    let mut market = Market::new(vec![], None);
    let frame = r#"{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["2","1"],["1","1"]],"bids":[["1","1"],["2","1"]]}}"#;
    market.on_text(frame, 7, &queue);
    market.on_text(r#"{"seq":4,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#, 8, &queue);
    market.on_text(r#"{"seq":9,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"2"}}"#, 8, &queue);
    market.on_text(r#"{"seq":1,"channel":"status","state":"connected"}"#, 9, &queue);
    market.on_text("not json", 10, &queue);
    let got: Vec<Value> = std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
        .map(|e| serde_json::from_str(&e).unwrap())
        .collect();
    assert_eq!(got[0]["data"]["asks"], json!([["1", "1"], ["2", "1"]]));
    assert_eq!(got[0]["data"]["bids"], json!([["2", "1"], ["1", "1"]]));
    assert_eq!((got[0]["seq"].as_i64(), got[0]["received_ns"].as_i64()), (Some(3), Some(7)));
    assert_eq!(got[1]["channel"], "price");
    assert_eq!(got[2]["state"], "gap");
    assert_eq!((got[2]["expected"].as_i64(), got[2]["received"].as_i64()), (Some(5), Some(9)));
    assert_eq!(got[3]["channel"], "price");
    assert_eq!(got[4]["channel"], "unrecognized", "a venue frame can never pose as a status event");
    assert_eq!(got[4]["frame"]["state"], "connected");
    assert_eq!((got[5]["channel"].as_str(), got[5]["state"].as_str()), (Some("status"), Some("error")));
    assert_eq!(got.len(), 6);
}

#[test]
fn the_seq_of_a_frame_of_no_known_channel_counts_on_either_path() {
    for mut market in [Market::new(vec![], None), Market::new(vec![], None).without_scanner()] {
        let queue = Queue::default();
        market.on_text(r#"{"seq":1,"channel":"price","symbol":"X","data":{}}"#, 1, &queue);
        market.on_text(r#"{"seq":2,"channel":"kline","symbol":"X","data":{}}"#, 2, &queue);
        market.on_text(r#"{"seq":3,"channel":"price","symbol":"X","data":{}}"#, 3, &queue);
        let got: Vec<Value> = std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
            .map(|e| serde_json::from_str(&e).unwrap())
            .collect();
        let channels: Vec<&str> = got.iter().map(|e| e["channel"].as_str().unwrap()).collect();
        assert_eq!(channels, ["price", "unrecognized", "price"], "no gap: {got:?}");
    }
}

#[test]
fn a_public_push_without_an_envelope_symbol_is_named_and_counted_by_its_datas() {
    for mut market in [Market::new(vec![], None), Market::new(vec![], None).without_scanner()] {
        let queue = Queue::default();
        for frame in [
            r#"{"seq":10,"channel":"depth_book","data":{"symbol":"BTC-USD","asks":[],"bids":[]}}"#,
            r#"{"seq":3,"channel":"depth_book","data":{"asks":[],"symbol":"ETH-USD","bids":[]}}"#,
            r#"{"seq":11,"channel":"depth_book","data":{"symbol":"BTC-USD","asks":[],"bids":[]}}"#,
            r#"{"seq":5,"channel":"public_trade","data":{"symbol":"BTC-USD"}}"#,
            r#"{"seq":4,"channel":"public_trade","data":{"symbol":"ETH-USD"}}"#,
            r#"{"seq":6,"channel":"public_trade","data":{"symbol":5}}"#,
            r#"{"seq":2,"channel":"position","data":{"symbol":"BTC-USD"}}"#,
        ] {
            market.on_text(frame, 1, &queue);
        }
        let got: Vec<Value> = std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
            .map(|e| serde_json::from_str(&e).unwrap())
            .collect();
        let named: Vec<(&str, Option<&str>)> =
            got.iter().map(|e| (e["channel"].as_str().unwrap(), e["symbol"].as_str())).collect();
        assert_eq!(
            named,
            [
                ("depth_book", Some("BTC-USD")),
                ("depth_book", Some("ETH-USD")),
                ("depth_book", Some("BTC-USD")),
                ("public_trade", Some("BTC-USD")),
                ("public_trade", Some("ETH-USD")),
                ("public_trade", None),
                ("position", None),
            ],
            "no seq_regression, and account pushes are not named from their data: {got:?}"
        );
    }
}

/// Events of one frame: data events as their text, status events without their own
/// clock reading.
fn events_of(market: &mut Market, frame: &str, queue: &Queue) -> Vec<Value> {
    market.on_text(frame, 42, queue);
    std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
        .map(|e| {
            if !e.starts_with(r#"{"channel":"status""#) {
                return Value::String(e);
            }
            let mut event: Value = serde_json::from_str(&e).unwrap();
            event.as_object_mut().unwrap().remove("received_ns");
            event
        })
        .collect()
}

#[test]
fn the_scanner_the_one_pass_serde_path_and_the_general_path_give_the_same_events() {
    let bases = [
        r#"{"seq":3,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["65010.3","1.5"],["65009.10","2"],["65011","0.1"]],"bids":[["64990.5","1"],[64991,"2"],["64990.50","3"]],"symbol":"BTC-USD"}}"#,
        r#"{"seq":4,"channel":"depth_book","symbol":"ETH-USD","data":{"bids":[["1e3","1"],["-2","1"],["0.0001","5"]],"t":1700000000,"asks":[]}}"#,
        r#"{"seq":5,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["abc","1"]],"bids":[["1.2.3","1"]]}}"#,
        r#" { "seq" : 6 , "channel" : "price" , "symbol" : "BTC-USD" , "data" : { "mark_price" : "65000.1" , "x" : [ 1 , { "y" : null } ] } } "#,
        r#"{"seq":8,"channel":"order","data":{"order_id":4294967297,"status":"open"},"ts":-1.5e-3}"#,
        r#"{"channel":"public_trade","symbol":"BTC-USD","data":[{"price":"1","qty":"2"}]}"#,
        r#"{"seq":9,"channel":"depth_book","symbol":"BTC-USD"}"#,
        r#"{"seq":10,"channel":"depth_book","data":{"t":[1],"symbol":"ETH-USD","asks":[["2","1"],["1","1"]],"bids":[],"symbol":"X"}}"#,
        r#"{"seq":11,"channel":"price","data":{"mark_price":"1","symbol":"BTC-USD","x":{"symbol":"Y"}}}"#,
        r#"{"seq":12,"channel":"order","data":{"symbol":"BTC-USD"}}"#,
        r#"{"seq":13,"channel":"price","symbol":"BTC-USD","data":{"symbol":"ETH-USD","mark_price":"3000"}}"#,
        r#"{"seq":14,"channel":"price","symbol":"BTC-USD","symbol":"ETH-USD","data":{}}"#,
        r#"{"seq":15,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[["1","NaN"],["2",null],["3"]],"bids":[["9","-1"]]}}"#,
        r#"{"seq":16,"channel":"depth_book","symbol":"BTC-USD","data":{"asks":[{"price":"1","qty":"2"}],"bids":[["\u0031","1"]]}}"#,
        r#"{"seq":9223372036854775808,"channel":"trade","symbol":"BTC-USD","data":{"id":1,"symbol":"BTC-USD"}}"#,
        r#"{"seq":1.5,"channel":"price","symbol":7,"data":{"symbol":"X"}}"#,
    ];
    let alphabet = b"\"\\,:{}[]0159 \t\n-.eEtrufalsn";
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let queues = [Queue::default(), Queue::default(), Queue::default()];
    let mut markets = [
        Market::new(vec![], None),
        Market::new(vec![], None).without_scanner(),
        Market::new(vec![], None).general_only(),
    ];
    let mut read_by_scanner = 0;
    for round in 0..40_000 {
        let base = bases[round % bases.len()];
        let mut bytes = base.as_bytes().to_vec();
        // The bases as they are, then with one or two byte edits.
        let edits = if round < bases.len() { 0 } else { 1 + random(2) };
        for _ in 0..edits {
            let at = random(bytes.len());
            match random(3) {
                0 => bytes.insert(at, alphabet[random(alphabet.len())]),
                1 => {
                    bytes.remove(at);
                }
                _ => bytes[at] = alphabet[random(alphabet.len())],
            }
        }
        let Ok(frame) = String::from_utf8(bytes) else { continue };
        if push_scan::push(&frame, &mut push_scan::Book::default()).is_some() {
            read_by_scanner += 1;
        }
        let [a, b, c] = [0, 1, 2].map(|i| events_of(&mut markets[i], &frame, &queues[i]));
        assert_eq!(a, b, "the scanner and the serde paths: {frame}");
        assert_eq!(b, c, "the serde paths and the general path alone: {frame}");
    }
    assert!(read_by_scanner > 5_000, "the scanner read {read_by_scanner} of the frames");
}

#[test]
fn pushes_stop_looking_their_subscription_up_once_every_public_one_has_been_heard() {
    let sub = |channel, symbol: Option<&str>| Subscription { channel, symbol: symbol.map(str::to_owned) };
    let subs = vec![sub("price", Some("BTC-USD")), sub("order", None), sub("depth_book", Some("ETH-USD"))];
    let queue = Queue::default();
    let mut market = Market::new(subs, None);
    assert_eq!(market.awaited, 2, "the two public subscriptions");
    market.on_text(r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#, 1, &queue);
    assert_eq!(market.awaited, 1);
    let refusal = r#"{"seq":2,"channel":"error","data":{"code":400,"msg":"invalid symbol ETH-USD"}}"#;
    market.on_text(refusal, 2, &queue);
    // The account channel, quiet (no order placed), keeps no public push scanning the list.
    assert_eq!(market.awaited, 0);
    market.on_text(r#"{"seq":3,"channel":"order","data":{"order_id":1}}"#, 3, &queue);
    assert_eq!(market.awaited, 0);
    let events: Vec<Value> = std::iter::from_fn(|| queue.pop(Some(std::time::Duration::ZERO), None).unwrap())
        .map(|e| serde_json::from_str(&e).unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{events:#?}");
    assert_eq!((events[1]["refused"].as_bool(), &events[1]["subscription"]["symbol"]), (Some(true), &json!("ETH-USD")));
}

#[test]
fn a_bare_refusal_answers_a_subscribe_only_soon_after_it() {
    let sub = |channel, symbol: &str| Subscription { channel, symbol: Some(symbol.to_owned()) };
    let bare = r#"{"channel":"error","data":{"code":500,"msg":"internal error"}}"#;
    let state = |events: &[Value]| (events.len(), events[0]["state"].clone(), events[0]["refused"].clone());
    // Just subscribed, one subscription still awaited (public_trade of a quiet symbol): the
    // bare refusal is taken for its answer.
    let queue = Queue::default();
    let mut market = Market::new(vec![sub("price", "BTC-USD"), sub("public_trade", "XYZ-USD")], None);
    market.subscribed_at = Some(Instant::now());
    market.on_text(r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#, 1, &queue);
    let events = events_of(&mut market, bare, &queue);
    assert_eq!(state(&events[1..]), (1, json!("error"), json!(true)), "{events:#?}");
    // The same, the subscribe frames sent longer ago than a venue takes to answer them: the
    // quiet subscription is not blamed for an error that came later; passed on as it came.
    let mut market = Market::new(vec![sub("price", "BTC-USD"), sub("public_trade", "XYZ-USD")], None);
    market.subscribed_at = Instant::now().checked_sub(refusals::BARE_REFUSAL_WINDOW);
    market.on_text(r#"{"seq":1,"channel":"price","symbol":"BTC-USD","data":{"mark_price":"1"}}"#, 1, &queue);
    let events = events_of(&mut market, bare, &queue);
    assert_eq!(events.len(), 2, "{events:#?}");
    let passed_on: Value = serde_json::from_str(events[1].as_str().unwrap()).unwrap();
    assert_eq!(passed_on["channel"], "unrecognized", "{passed_on}");
    assert_eq!(market.heard[1], Heard::Awaited);
}
