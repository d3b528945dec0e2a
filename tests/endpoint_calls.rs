//! The fifteen endpoint calls through the C ABI against purpose-built servers on 127.0.0.1
//! (tests/common/rogue_server.rs), for what the sandbox cannot produce on demand: the exact
//! request each call sends (method, path, percent-encoded query, body, headers, a body
//! signature that verifies over the bytes received), answers in every documented shape
//! (both `cancel_orders` answers, numbers for decimals, bare arrays and envelopes, an
//! unsorted depth book whose string order differs from its numeric order). Every request is
//! seen exactly once: nothing is retried. The error mapping with the ids a failure carries,
//! and how a `code` is read: `tests/endpoint_outcomes.rs`. Symbol rules and pacing:
//! `tests/rules_and_pacing.rs`.

mod common;
#[path = "endpoint_calls/helpers.rs"]
mod helpers;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Session, c, call, expect, new_order, request};
use helpers::*;
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, json};
use serde_json::Value;

/// (export, params_json, documented method, target under /perps, body sent).
type Example = (&'static str, Option<String>, &'static str, String, Option<String>);

fn examples() -> Vec<Example> {
    let awkward = serde_json::to_string(AWKWARD).unwrap();
    vec![
        (
            "cancel_order",
            Some(format!(r#"{{"cl_ord_id":{awkward},"order_id":4294967297}}"#)),
            "POST",
            "/api/cancel_order".into(),
            Some(format!(r#"{{"order_id":4294967297,"cl_ord_id":{awkward}}}"#)),
        ),
        (
            "cancel_orders",
            Some(r#"{ "cl_ord_id_list": ["x", "y"], "order_id_list": [9223372036854775807, 1] }"#.into()),
            "POST",
            "/api/cancel_orders".into(),
            Some(r#"{"order_id_list":[9223372036854775807,1],"cl_ord_id_list":["x","y"]}"#.into()),
        ),
        (
            "change_leverage",
            Some(r#"{"leverage":20,"symbol":"BTC-USD"}"#.into()),
            "POST",
            "/api/change_leverage".into(),
            Some(r#"{"symbol":"BTC-USD","leverage":20}"#.into()),
        ),
        (
            "change_margin_mode",
            Some(r#"{"margin_mode":"isolated","symbol":"ETH-USD"}"#.into()),
            "POST",
            "/api/change_margin_mode".into(),
            Some(r#"{"symbol":"ETH-USD","margin_mode":"isolated"}"#.into()),
        ),
        (
            "query_order",
            Some(format!(r#"{{"cl_ord_id":{awkward}}}"#)),
            "GET",
            "/api/query_order?cl_ord_id=a%26b%3Dc%23d%2Be%25f%2Fg%3Fh%3Bi%2Cj%3Ak%40l%5Bm%5Dn%7Bo%7Dp%7Cq~r%27%24".into(),
            None,
        ),
        (
            "query_orders",
            Some(
                r#"{"limit":500,"start":"2026-01-02T11:04:05.5+08:00","symbol":"BTC-USD","status":"canceled",
                    "last_id":4294967297,"end":"2026-01-03T00:00:00Z","order_type":"limit"}"#
                    .into(),
            ),
            "GET",
            "/api/query_orders?symbol=BTC-USD&status=canceled&order_type=limit&start=2026-01-02T11%3A04%3A05.5%2B08%3A00\
             &end=2026-01-03T00%3A00%3A00Z&last_id=4294967297&limit=500"
                .into(),
            None,
        ),
        ("query_open_orders", Some(r#"{"symbol":"XAG-USD"}"#.into()), "GET", "/api/query_open_orders?symbol=XAG-USD".into(), None),
        ("query_trades", Some(r#"{"limit":1,"side":"sell"}"#.into()), "GET", "/api/query_trades?side=sell&limit=1".into(), None),
        (
            "query_funding_history",
            Some(
                r#"{"limit":500,"last_id":30000000005,"end":"2026-01-03T00:00:00Z","symbol":"BTC-USD","start":"2026-01-02T11:04:05+08:00"}"#
                    .into(),
            ),
            "GET",
            "/api/query_funding_history?symbol=BTC-USD&start=2026-01-02T11%3A04%3A05%2B08%3A00&end=2026-01-03T00%3A00%3A00Z\
             &last_id=30000000005&limit=500"
                .into(),
            None,
        ),
        ("query_positions", None, "GET", "/api/query_positions".into(), None),
        ("query_balance", Some("{}".into()), "GET", "/api/query_balance".into(), None),
        ("query_position_config", Some(r#"{"symbol":"BTC-USD"}"#.into()), "GET", "/api/query_position_config?symbol=BTC-USD".into(), None),
        ("query_symbol_info", None, "GET", "/api/query_symbol_info".into(), None),
        ("query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#.into()), "GET", "/api/query_symbol_price?symbol=BTC-USD".into(), None),
        (
            "query_depth_book",
            Some(r#"{"symbol":"BTC-USD","limit":5}"#.into()),
            "GET",
            "/api/query_depth_book?symbol=BTC-USD&limit=5".into(),
            None,
        ),
    ]
}

const PUBLIC: [&str; 3] = ["query_symbol_info", "query_symbol_price", "query_depth_book"];

#[test]
fn every_endpoint_sends_its_documented_request() {
    let rogue = Rogue::start(|seen, _| {
        if seen.path().ends_with("query_depth_book") {
            json(200, r#"{"asks":[],"bids":[],"symbol":"BTC-USD"}"#)
        } else {
            json(200, r#"{"code":0,"message":"success","request_id":"r-1"}"#)
        }
    });
    let client = client_at(&rogue.url(), FAST);
    let session = api_session(SEED);
    let (sid, vault) = (c("ws-7"), c("cv_vault_1"));
    common::abi::code(|e| perps::ffi::session::perps_session_set_session_id(session.0, sid.as_ptr(), e)).unwrap();
    common::abi::code(|e| perps::ffi::session::perps_session_set_impersonate(session.0, vault.as_ptr(), e)).unwrap();
    let examples = examples();
    assert_eq!(examples.len(), 15);
    for (i, (name, params, method, target, body)) in examples.iter().enumerate() {
        let public = PUBLIC.contains(name);
        // The public three are called without a session, as a market-data thread would.
        let answer = call(&client, (!public).then_some(&session), name, params.as_deref())
            .unwrap_or_else(|f| panic!("{name}: {f:?}"));
        assert!(!answer.is_empty());
        let seen = &rogue.seen()[i];
        assert_eq!(seen.method, *method, "{name}");
        assert_eq!(seen.target, format!("/perps{target}"), "{name}: the query string");
        if let Some(params) = params.as_deref().filter(|_| *method == "GET") {
            // The query, decoded independently, holds exactly the caller's values.
            let given: serde_json::Map<String, Value> = serde_json::from_str(params).unwrap();
            let decoded = decode_query(&seen.target);
            assert_eq!(decoded.len(), given.len(), "{name}");
            for (k, v) in decoded {
                let expected = match &given[&k] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                assert_eq!(v, expected, "{name}: {k}");
            }
        }
        match body {
            Some(body) => {
                assert_eq!(String::from_utf8(seen.body.clone()).unwrap(), *body, "{name}: the body, compact, in order");
                assert_eq!(seen.header("content-type"), Some("application/json"));
                assert_signed(seen, SEED);
            }
            None => {
                assert!(seen.body.is_empty(), "{name}: a GET has no body");
                assert!(seen.header("x-request-signature").is_none(), "{name}: GETs are not signed");
            }
        }
        if public {
            for header in ["authorization", "x-session-id", "x-impersonate"] {
                assert!(seen.header(header).is_none(), "{name}: a public call sends no {header}");
            }
        } else {
            assert_eq!(seen.header("authorization"), Some(format!("Bearer {API_TOKEN}").as_str()), "{name}");
            // Order entry only: the venue pushes the result of a request that carries it to
            // the order stream of that session id.
            let order_entry = ["cancel_order", "cancel_orders"].contains(name);
            assert_eq!(seen.header("x-session-id"), order_entry.then_some("ws-7"), "{name}");
            assert_eq!(seen.header("x-impersonate"), Some("cv_vault_1"), "{name}");
        }
    }
    assert_eq!(rogue.seen().len(), 15, "one request per call");
    // A session without a token is refused before sending on an account endpoint, and is no
    // obstacle on a public one.
    let fresh = Session::new();
    let f = expect(call(&client, Some(&fresh), "query_balance", None), PERPS_INVALID_STATE, false);
    assert!(f.message.contains("no access token"));
    call(&client, Some(&fresh), "query_symbol_info", None).unwrap();
    assert_eq!(rogue.seen().len(), 16);
    assert!(rogue.seen()[15].header("authorization").is_none());
    // A cl_ord_id with a quote or a backslash is refused, nothing sent: the venue's JSON would
    // give it back escaped, and a look-up by the id would miss the order.
    for (name, params) in [
        ("cancel_order", r#"{"cl_ord_id":"mm\"q"}"#),
        ("query_order", r#"{"cl_ord_id":"mm\\b"}"#),
        ("cancel_orders", r#"{"cl_ord_id_list":["ok","mm\u005cb"]}"#),
    ] {
        let f = expect(call(&client, Some(&session), name, Some(params)), PERPS_INVALID_ARGUMENT, false);
        assert!(f.message.contains("contains a quote or a backslash"), "{name}: {f:?}");
    }
    assert_eq!(rogue.seen().len(), 16);
}

#[test]
fn the_session_id_goes_with_order_entry_only() {
    let rogue = Rogue::start(|_, _| json(200, r#"{"code":0,"message":"success","request_id":"r-1"}"#));
    let client = client_at(&rogue.url(), FAST);
    let session = api_session(SEED);
    let (sid, vault) = (c("ws-9"), c("cv_vault_2"));
    common::abi::code(|e| perps::ffi::session::perps_session_set_session_id(session.0, sid.as_ptr(), e)).unwrap();
    common::abi::code(|e| perps::ffi::session::perps_session_set_impersonate(session.0, vault.as_ptr(), e)).unwrap();
    new_order(&client, &session, ORDER).unwrap();
    call(&client, Some(&session), "cancel_order", Some(r#"{"order_id":7}"#)).unwrap();
    call(&client, Some(&session), "cancel_orders", Some(r#"{"order_id_list":[7,8]}"#)).unwrap();
    request(&client, &session, "POST", "/api/cancel_order", Some(r#"{"cl_ord_id":"x"}"#)).unwrap();
    call(&client, Some(&session), "query_open_orders", None).unwrap();
    call(&client, Some(&session), "query_order", Some(r#"{"order_id":7}"#)).unwrap();
    call(&client, Some(&session), "change_leverage", Some(r#"{"symbol":"BTC-USD","leverage":5}"#)).unwrap();
    request(&client, &session, "GET", "/api/query_positions", None).unwrap();
    request(&client, &session, "GET", "/api/new_order", None).unwrap();
    let seen = rogue.seen();
    let sent: Vec<(&str, &str, Option<&str>)> =
        seen.iter().map(|s| (s.method.as_str(), s.path(), s.header("x-session-id"))).collect();
    assert_eq!(
        sent,
        [
            ("POST", "/perps/api/new_order", Some("ws-9")),
            ("POST", "/perps/api/cancel_order", Some("ws-9")),
            ("POST", "/perps/api/cancel_orders", Some("ws-9")),
            ("POST", "/perps/api/cancel_order", Some("ws-9")),
            ("GET", "/perps/api/query_open_orders", None),
            ("GET", "/perps/api/query_order", None),
            ("POST", "/perps/api/change_leverage", None),
            ("GET", "/perps/api/query_positions", None),
            ("GET", "/perps/api/new_order", None),
        ]
    );
    // x-impersonate is every account request's.
    assert!(seen.iter().all(|s| s.header("x-impersonate") == Some("cv_vault_2")));
}

#[test]
fn answers_come_back_as_the_venue_sent_them() {
    let answers: Vec<(&str, Option<&str>, &str)> = vec![
        // cancel_orders: both documented answers.
        ("cancel_orders", Some(r#"{"order_id_list":[1]}"#), "[]"),
        ("cancel_orders", Some(r#"{"cl_ord_id_list":["a"]}"#), r#"{"code":0,"message":"success","request_id":"x"}"#),
        // Lists: an envelope with code/message, a bare array, the documented envelope.
        (
            "query_open_orders",
            None,
            r#"{"code":0,"message":"success","page_size":1,"result":[{"id":4294967297,"qty":"1"}],"total":1}"#,
        ),
        ("query_open_orders", None, r#"[{"id":4294967297,"price":65000.5,"qty":0.01,"extra":{"deep":[1,2]}}]"#),
        ("query_orders", None, r#"{"page_size":0,"result":[],"total":0}"#),
        ("query_trades", None, r#"[ ]"#),
        // Funding history: the live bare array (no transact_time, funding_fee), the
        // documents' row (transact_time, "funding"), and the envelope of the other lists.
        (
            "query_funding_history",
            None,
            r#"[{"id":30000000002,"user":"bsc_0xabc","asset":"DUSD","symbol":"BTC-USD","qty":"-0.081263125","txn_type":"funding_fee","created_at":"2026-01-02T08:00:00.000001Z","updated_at":"2026-01-02T08:00:00.000001Z"}]"#,
        ),
        (
            "query_funding_history",
            Some(r#"{"symbol":"BTC-USD","limit":1}"#),
            r#"[{"id":1,"user":"u","asset":"DUSD","symbol":"BTC-USD","qty":0.5,"txn_type":"funding","transact_time":"2026-01-02T08:00:00Z","created_at":"2026-01-02T08:00:00Z","updated_at":"2026-01-02T08:00:00Z"}]"#,
        ),
        (
            "query_funding_history",
            Some(r#"{"last_id":30000000002}"#),
            r#"{"code":0,"message":"success","page_size":1,"result":[{"id":30000000001,"qty":"0.162526250","txn_type":"funding_fee"}],"total":2}"#,
        ),
        ("query_funding_history", None, r#"{"page_size":0,"result":[],"total":0}"#),
        // Decimals as numbers, extra fields, odd spacing: the text is returned as is.
        (
            "query_positions",
            None,
            r#"[{"symbol":"BTC-USD","qty":-0.5,"entry_price":65000.25,"upnl":"-1.5","required_margin":"10"}]"#,
        ),
        ("query_balance", None, "{\n  \"balance\": 1000.10, \"equity\": \"1000.1\", \"pnl_24h\": 0\n}"),
        (
            "query_order",
            Some(r#"{"order_id":1}"#),
            r#"{"id":1,"status":"open","fill_qty":0,"created_at":"2026-01-02T03:04:05.123456789Z"}"#,
        ),
        (
            "query_symbol_price",
            Some(r#"{"symbol":"BTC-USD"}"#),
            r#"{"mark_price":65000.1,"last_price":null,"spread_bid":null}"#,
        ),
        ("query_symbol_info", None, r#"{"code":0,"result":[{"symbol":"BTC-USD","price_tick_decimals":2}]}"#),
    ];
    for (name, params, answer) in answers {
        let text = answer.to_owned();
        let rogue = Rogue::start(move |_, _| json(200, &text));
        let client = client_at(&rogue.url(), FAST);
        let got = call(&client, Some(&api_session(SEED)), name, params).unwrap_or_else(|f| panic!("{name}: {f:?}"));
        assert_eq!(got, answer, "{name}");
        assert_eq!(rogue.seen().len(), 1);
    }
    // `null` from an endpoint documented to answer a bare array is its empty list (Go
    // encodes an empty slice as null); from any other, an answer of the wrong shape.
    for name in [
        "query_positions",
        "query_funding_history",
        "query_symbol_info",
        "query_open_orders",
        "query_orders",
        "query_trades",
    ] {
        let rogue = Rogue::start(|_, _| json(200, " null\n"));
        let client = client_at(&rogue.url(), FAST);
        assert_eq!(call(&client, Some(&api_session(SEED)), name, None).unwrap(), "[]", "{name}");
    }
    // So is a page envelope's `"result": null`: written `[]`, every other byte as sent; a
    // `result` that is a list, or a `null` elsewhere, is left alone.
    let page = |result: &str| format!(r#"{{ "code":0,"page_size":0,"result" :{result},"total":0,"next":null}}"#);
    for name in ["query_open_orders", "query_orders", "query_trades"] {
        for (answer, returned) in
            [(page("null"), page("[]")), (page("[]"), page("[]")), (page("[{\"id\":1}]"), page("[{\"id\":1}]"))]
        {
            let text = answer.clone();
            let rogue = Rogue::start(move |_, _| json(200, &text));
            let client = client_at(&rogue.url(), FAST);
            assert_eq!(call(&client, Some(&api_session(SEED)), name, None).unwrap(), returned, "{name}: {answer}");
        }
    }
    for (name, params) in [
        ("query_balance", None),
        ("query_position_config", Some(r#"{"symbol":"BTC-USD"}"#)),
        ("cancel_orders", Some(r#"{"order_id_list":[1]}"#)),
    ] {
        let rogue = Rogue::start(|_, _| json(200, "null"));
        let client = client_at(&rogue.url(), FAST);
        let f = expect(call(&client, Some(&api_session(SEED)), name, params), PERPS_BAD_RESPONSE, true);
        assert!(f.message.contains("neither a JSON object nor an array"), "{name}: {f:?}");
    }
}

#[test]
fn depth_levels_are_sorted_by_exact_decimal_value() {
    // String order differs from numeric order ("9.5" > "10.25" as text), some prices are
    // numbers, one in exponent form, two are equal in value but not in text.
    let book = r#"{"asks":[["10.25","1"],["9.5","2"],[9.75,"3"],["100","4"],["9.50","5"],["1.0001e1","6"]],
        "bids":[["8.99999","1"],["9","2"],[8.5,"3"],["10","4"],["0.5","5"]],"symbol":"BTC-USD","time":1767323045}"#;
    let text = book.to_owned();
    let rogue = Rogue::start(move |_, _| json(200, &text));
    let client = client_at(&rogue.url(), FAST);
    let sorted = call(&client, None, "query_depth_book", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap();
    assert_eq!(
        sorted,
        r#"{"asks":[["9.5","2"],["9.50","5"],[9.75,"3"],["1.0001e1","6"],["10.25","1"],["100","4"]],"bids":[["10","4"],["9","2"],["8.99999","1"],[8.5,"3"],["0.5","5"]],"symbol":"BTC-USD","time":1767323045}"#
    );
    // Thousands of levels in random order come back ordered, every level kept.
    let mut state = 0x2545f4914f6cdd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let levels: Vec<String> =
        (0..2000).map(|_| format!(r#"["{}.{:03}","1"]"#, next() % 100_000, next() % 1000)).collect();
    let big = format!(r#"{{"bids":[{}],"asks":[{}]}}"#, levels.join(","), levels.join(","));
    let rogue = Rogue::start(move |_, _| json(200, &big));
    let client = client_at(&rogue.url(), FAST);
    let sorted: Value =
        serde_json::from_str(&call(&client, None, "query_depth_book", Some(r#"{"symbol":"X"}"#)).unwrap()).unwrap();
    let prices = |side: &str| -> Vec<f64> {
        sorted[side].as_array().unwrap().iter().map(|l| l[0].as_str().unwrap().parse().unwrap()).collect()
    };
    let (bids, asks) = (prices("bids"), prices("asks"));
    assert_eq!((bids.len(), asks.len()), (2000, 2000));
    assert!(bids.windows(2).all(|w| w[0] >= w[1]), "bids high to low");
    assert!(asks.windows(2).all(|w| w[0] <= w[1]), "asks low to high");
    // A book that cannot be sorted is a bad response, not a guess.
    // A book with one side is refused naming the missing one, as the stream refuses such a
    // `depth_book` push (the documented book has both; an empty side is `[]` or null).
    for (bad, words) in [
        (r#"{"asks":[["abc","1"]],"bids":[]}"#, "price \"abc\""),
        (r#"{"asks":"none","bids":[]}"#, "array of levels"),
        (r#"{"symbol":"X"}"#, "no \"bids\" or \"asks\""),
        (r#"{"asks":[["1","1"]],"symbol":"X"}"#, "the book has no \"bids\""),
        (r#"{"bids":[["1","1"]],"symbol":"X"}"#, "the book has no \"asks\""),
        (r#"{"code":0,"data":{"bids":[],"symbol":"X"}}"#, "the book has no \"asks\""),
    ] {
        let text = bad.to_owned();
        let rogue = Rogue::start(move |_, _| json(200, &text));
        let client = client_at(&rogue.url(), FAST);
        let f = expect(call(&client, None, "query_depth_book", Some(r#"{"symbol":"X"}"#)), PERPS_BAD_RESPONSE, true);
        assert_eq!(f.body.as_deref(), Some(bad));
        assert!(f.message.starts_with("query_depth_book: "), "{f:?}");
        assert!(f.message.contains(words), "{bad}: {f:?}");
    }
    // Empty sides, as `[]` or null, are a book.
    for empty in [r#"{"asks":[],"bids":null,"symbol":"X"}"#, r#"{"data":{"asks":null,"bids":[["1","1"]]}}"#] {
        let text = empty.to_owned();
        let rogue = Rogue::start(move |_, _| json(200, &text));
        let client = client_at(&rogue.url(), FAST);
        assert!(call(&client, None, "query_depth_book", Some(r#"{"symbol":"X"}"#)).is_ok(), "{empty}");
    }
}

#[test]
fn query_orders_takes_every_status_the_venue_and_its_clients_use_and_sends_cancelled_as_canceled() {
    let rogue = Rogue::start(|_, _| json(200, r#"{"page_size":0,"result":[],"total":0}"#));
    let client = client_at(&rogue.url(), FAST);
    let session = api_session(SEED);
    let statuses =
        ["open", "new", "canceled", "filled", "rejected", "untriggered", "partially_filled", "expired", "cancelled"];
    for status in statuses {
        call(&client, Some(&session), "query_orders", Some(&format!(r#"{{"status":"{status}"}}"#))).unwrap();
    }
    // Each sent as written, but the British `cancelled`: sent as the reference's `canceled`,
    // the spelling the venue filters on (one that matched nothing would answer an empty page).
    let sent: Vec<String> = rogue.seen().iter().map(|s| s.target.clone()).collect();
    let expected: Vec<String> = statuses
        .iter()
        .map(|s| format!("/perps/api/query_orders?status={}", if *s == "cancelled" { "canceled" } else { s }))
        .collect();
    assert_eq!(sent, expected);
    for wrong in ["OPEN", "canceld", ""] {
        let params = format!(r#"{{"status":"{wrong}"}}"#);
        let f = expect(call(&client, Some(&session), "query_orders", Some(&params)), PERPS_INVALID_ARGUMENT, false);
        assert!(f.message.contains("\"partially_filled\", \"expired\", \"cancelled\""), "{f:?}");
    }
    assert_eq!(rogue.seen().len(), statuses.len(), "nothing sent for a refused status");
}

#[test]
fn times_in_any_iso_8601_form_are_sent_in_rfc_3339() {
    let rogue = Rogue::start(|_, _| json(200, r#"{"page_size":0,"result":[],"total":0}"#));
    let client = client_at(&rogue.url(), FAST);
    let session = api_session(SEED);
    let forms = [
        // RFC 3339 already: sent as given.
        ("2026-01-02T03:04:05Z", "2026-01-02T03:04:05Z"),
        ("2026-01-02T11:04:05.123456789+08:00", "2026-01-02T11:04:05.123456789+08:00"),
        // No offset: UTC (never the machine's local time).
        ("2026-01-02T03:04:05", "2026-01-02T03:04:05Z"),
        ("2026-01-02T03:04:05.5", "2026-01-02T03:04:05.5Z"),
        // A date alone: midnight UTC.
        ("2026-01-02", "2026-01-02T00:00:00Z"),
        // Basic and hour-only offsets.
        ("2026-01-02T11:04:05+0800", "2026-01-02T11:04:05+08:00"),
        ("2026-01-01T22:04:05-0500", "2026-01-01T22:04:05-05:00"),
        ("2026-01-02T11:04:05+08", "2026-01-02T11:04:05+08:00"),
    ];
    for (i, (given, sent)) in forms.iter().enumerate() {
        for name in ["query_orders", "query_trades"] {
            call(&client, Some(&session), name, Some(&format!(r#"{{"start":"{given}","end":"2026-01-03"}}"#))).unwrap();
            let seen = rogue.seen();
            let query = decode_query(&seen.last().unwrap().target);
            let expected =
                [("start".to_owned(), sent.to_string()), ("end".to_owned(), "2026-01-03T00:00:00Z".to_owned())];
            assert_eq!(query, expected, "{name} {given} (form {i})");
        }
    }
    // start and end are compared as instants, whatever their forms; the message shows them
    // as they were read (and would be sent).
    let f = expect(
        call(&client, Some(&session), "query_orders", Some(r#"{"start":"2026-01-02T00:00:01","end":"2026-01-02"}"#)),
        PERPS_INVALID_ARGUMENT,
        false,
    );
    assert!(f.message.contains(r#""start" (2026-01-02T00:00:01Z) is after "end" (2026-01-02T00:00:00Z)"#), "{f:?}");
    call(&client, Some(&session), "query_orders", Some(r#"{"start":"2026-01-02T08:00:00+0800","end":"2026-01-02"}"#))
        .unwrap();
    // What is refused says why, and shows the forms taken; nothing is sent.
    let sent = rogue.seen().len();
    for (given, why) in [
        ("2026-01-02 03:04:05", "the time of day is not THH:MM:SS after the date"),
        ("2026-02-30", "the date is not a day of the calendar"),
        ("2026-01-02T03:04:05.1234567890Z", "the fraction of a second has no digit or more than 9"),
        ("2026-01-02T03:04:05+8:00", "the offset is not Z, ±HH:MM, ±HHMM or ±HH"),
    ] {
        let params = format!(r#"{{"end":"{given}"}}"#);
        let f = expect(call(&client, Some(&session), "query_trades", Some(&params)), PERPS_INVALID_ARGUMENT, false);
        assert!(f.message.contains(why) && f.message.contains(r#""2026-01-02" (midnight UTC)"#), "{f:?}");
    }
    assert_eq!(rogue.seen().len(), sent);
}
