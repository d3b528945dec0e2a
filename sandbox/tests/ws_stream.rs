//! `ws-stream/v1` against a hand-written tungstenite client: the market channels, the auth
//! answer in both codes, the account pushes after a REST order, a fill by the mark and a
//! cancel, the seq counting, and malformed requests.

mod common;

use std::time::Duration;

use common::ws::Client;
use common::{Trader, limit};
use perps_sandbox::{Sandbox, SandboxConfig, SeqScope, WsTimers};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);

fn sandbox_with(config: SandboxConfig) -> Sandbox {
    Sandbox::start(config).expect("sandbox starts")
}

/// Fast market pushes, so that a test sees several in a few hundred ms.
fn fast() -> SandboxConfig {
    SandboxConfig {
        ws_timers: WsTimers { depth_book_interval_ms: 40, price_interval_ms: 60, ..WsTimers::default() },
        ..SandboxConfig::default()
    }
}

fn on(channel: &'static str) -> impl Fn(&Value) -> bool {
    move |v: &Value| v["channel"] == channel
}

fn num(v: &Value) -> f64 {
    v.as_str().unwrap_or_else(|| panic!("not a decimal string: {v}")).parse().unwrap()
}

#[test]
fn price_and_depth_book_at_their_cadence_unsorted_with_seq_per_channel() {
    let sb = sandbox_with(fast());
    let mut c = Client::connect(&sb.ws_stream_url());
    c.send(&json!({"subscribe": {"channel": "depth_book", "symbol": "XAG-USD"}}));
    c.send(&json!({"subscribe": {"channel": "price", "symbol": "XAG-USD"}}));
    let first = c.expect(WAIT, "depth_book", on("depth_book"));
    assert_eq!(
        (&first["seq"], &first["symbol"], &first["data"]["symbol"]),
        (&json!(1), &json!("XAG-USD"), &json!("XAG-USD"))
    );
    for side in ["asks", "bids"] {
        let levels = first["data"][side].as_array().unwrap();
        assert_eq!(levels.len(), 10, "ten levels a side");
        let prices: Vec<f64> = levels.iter().map(|l| num(&l[0])).collect();
        assert!(levels.iter().all(|l| l.as_array().unwrap().len() == 2 && l[1].is_string()));
        let ascending = prices.windows(2).all(|w| w[0] <= w[1]);
        let descending = prices.windows(2).all(|w| w[0] >= w[1]);
        assert!(!ascending && !descending, "{side} arrive unsorted, as the venue documents: {prices:?}");
    }
    let best_bid = first["data"]["bids"].as_array().unwrap().iter().map(|l| num(&l[0])).fold(0.0, f64::max);
    let best_ask = first["data"]["asks"].as_array().unwrap().iter().map(|l| num(&l[0])).fold(f64::MAX, f64::min);
    assert!(best_bid < 100.05 && 100.05 < best_ask, "the book straddles the mark: {best_bid} {best_ask}");

    let price = c.expect(WAIT, "price", on("price"));
    assert_eq!(price["seq"], 1, "seq counts per channel");
    let data = &price["data"];
    assert_eq!(
        (&data["mark_price"], &data["index_price"], &data["symbol"]),
        (&json!("100.05"), &json!("100.05"), &json!("XAG-USD"))
    );
    assert_eq!((&data["base"], &data["quote"]), (&json!("XAG"), &json!("DUSD")));
    assert_eq!(data["spread"].as_array().unwrap().len(), 2);
    assert!(data["time"].as_str().unwrap().len() == "2025-08-11T07:23:50.923602474Z".len(), "ns precision: {data}");
    for key in ["last_price", "mid_price"] {
        assert!(data.get(key).is_some(), "{key} in {data}");
    }
    // More pushes come at the cadence, each channel counting on.
    let second = c.expect(WAIT, "a second depth_book", on("depth_book"));
    assert_eq!(second["seq"], 2);
    let second_price = c.expect(WAIT, "a second price", on("price"));
    assert_eq!(second_price["seq"], 2);
    // The book follows the mark.
    sb.set_mark("XAG-USD", "101.00").unwrap();
    let moved =
        c.expect(WAIT, "a price at the new mark", |v| v["channel"] == "price" && v["data"]["mark_price"] == "101.00");
    assert!(moved["seq"].as_u64().unwrap() > 2);
    // Unsubscribed: no more depth_book (a frame already on its way may still arrive).
    c.send(&json!({"unsubscribe": {"channel": "depth_book", "symbol": "XAG-USD"}}));
    std::thread::sleep(Duration::from_millis(100));
    while c.next_json(Duration::from_millis(10)).is_some() {}
    let later: Vec<Value> = std::iter::from_fn(|| c.next_json(Duration::from_millis(300))).take(3).collect();
    assert!(later.iter().all(|v| v["channel"] == "price"), "{later:?}");
    let listed = sb.ws_connections();
    assert_eq!(listed.len(), 1);
    assert_eq!(json!(listed[0].subscriptions), json!([{"channel": "price", "symbol": "XAG-USD"}]));
}

#[test]
fn public_trade_prints_user_fills_with_the_takers_side() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let mut c = Client::connect(&sb.ws_stream_url());
    c.send(&json!({"subscribe": {"channel": "public_trade", "symbol": "BTC-USD"}}));
    assert!(c.next_json(Duration::from_millis(200)).is_none(), "no trade, no print");
    assert_eq!(sb.ws_connections()[0].subscriptions.len(), 1, "subscribed");
    // A buy through the best ask takes liquidity: a print on the buy side at the ask.
    t.order(limit("BTC-USD", "buy", "0.01", "65001", "gtc", "taker"));
    let print = c.expect(WAIT, "public_trade", on("public_trade"));
    assert_eq!((&print["seq"], &print["symbol"]), (&json!(1), &json!("BTC-USD")));
    let d = &print["data"];
    assert_eq!(
        (&d["side"], &d["price"], &d["qty"], &d["is_buyer_taker"]),
        (&json!("buy"), &json!("65000.25"), &json!("0.0100"), &json!(true))
    );
    assert!(d.get("order_id").is_none() && d.get("user").is_none(), "nothing of the account: {d}");
    // A resting buy filled by the mark: the user was the maker, the taker sold.
    t.order(limit("BTC-USD", "buy", "0.01", "64000", "gtc", "maker"));
    sb.set_mark("BTC-USD", "63990").unwrap();
    let print = c.expect(WAIT, "the maker fill's print", on("public_trade"));
    assert_eq!((&print["data"]["side"], &print["data"]["price"]), (&json!("sell"), &json!("64000.00")));
}

#[test]
fn auth_answers_200_by_default_and_0_when_configured_and_401_for_a_bad_token() {
    for (config, code) in
        [(SandboxConfig::default(), 200), (SandboxConfig { ws_auth_code: 0, ..Default::default() }, 0)]
    {
        let sb = sandbox_with(config);
        let t = Trader::with_api_key(&sb);
        let mut c = Client::connect(&sb.ws_stream_url());
        c.send(&json!({"auth": {"token": t.token}}));
        let answer = c.expect(WAIT, "auth", on("auth"));
        assert_eq!(answer, json!({"seq": 1, "channel": "auth", "data": {"code": code, "msg": "success"}}));
        assert!(sb.ws_connections()[0].authenticated);
    }
    let sb = common::sandbox();
    let mut c = Client::connect(&sb.ws_stream_url());
    c.send(&json!({"auth": {"token": "not-a-token"}}));
    let answer = c.expect(WAIT, "auth", on("auth"));
    assert_eq!(answer["data"], json!({"code": 401, "msg": "unknown token"}));
    let expired = sb.issue_api_key(Some(1)).unwrap();
    sb.set_clock_offset_ms(5_000);
    c.send(&json!({"auth": {"token": expired.token}}));
    assert_eq!(c.expect(WAIT, "auth", on("auth"))["data"], json!({"code": 401, "msg": "token expired"}));
    // Account channels need the auth first.
    c.send(&json!({"subscribe": {"channel": "order"}}));
    let refused = c.expect(WAIT, "error", on("error"));
    assert_eq!(refused["data"]["code"], 401, "{refused}");
    assert!(!sb.ws_connections()[0].authenticated);
}

/// The four account channels after `auth` with `streams`; returns the client.
fn account_stream(sb: &Sandbox, t: &Trader) -> Client {
    let mut c = Client::connect(&sb.ws_stream_url());
    let streams = json!([{"channel": "order"}, {"channel": "position"}, {"channel": "balance"}, {"channel": "trade"}]);
    c.send(&json!({"auth": {"token": t.token, "streams": streams}}));
    c.expect(WAIT, "auth", on("auth"));
    // The subscriptions are in place once the listing shows them.
    for _ in 0..100 {
        if sb.ws_connections().iter().any(|c| c.subscriptions.len() == 4) {
            return c;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("the auth streams were not subscribed: {:?}", sb.ws_connections());
}

#[test]
fn account_pushes_after_a_rest_order_a_fill_by_the_mark_and_a_cancel() {
    let sb = common::sandbox();
    let t = Trader::with_api_key(&sb);
    let other = Trader::with_api_key(&sb);
    let mut c = account_stream(&sb, &t);

    // A REST order that takes liquidity: the order created, its trade, the position, the
    // order filled, the balance.
    t.order(limit("BTC-USD", "buy", "0.01", "65001", "gtc", "rest-taker"));
    let frames = until_balance(&mut c);
    let channels: Vec<&str> = frames.iter().map(|v| v["channel"].as_str().unwrap()).collect();
    assert_eq!(channels, ["order", "trade", "position", "order", "balance"]);
    let seqs: Vec<u64> = frames.iter().map(|v| v["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 1, 1, 2, 1], "seq per channel");
    assert!(frames.iter().all(|v| v.get("symbol").is_none()), "account pushes carry no top-level symbol: {frames:?}");
    let rest = t.order_by_cl("rest-taker");
    assert_eq!((&frames[0]["data"]["status"], &frames[0]["data"]["id"]), (&json!("open"), &rest["id"]));
    assert_eq!(frames[3]["data"], rest, "the order push is the REST order object");
    let trade = &frames[1];
    assert_eq!((&trade["data"]["order_id"], &trade["data"]["side"]), (&rest["id"], &json!("buy")));
    assert!(trade["data"]["id"].as_u64().unwrap() > 20_000_000_000);
    let p = frames[2]["data"].as_object().unwrap();
    assert_eq!(p["qty"], "0.0100");
    for key in ["mark_price", "upnl", "side", "liq_price"] {
        assert!(!p.contains_key(key), "{key} is not in the position push: {p:?}");
    }
    for key in [
        "id",
        "entry_price",
        "entry_value",
        "initial_margin",
        "leverage",
        "margin_mode",
        "margin_asset",
        "realized_pnl",
        "user",
    ] {
        assert!(p.contains_key(key), "{key} in the position push: {p:?}");
    }
    let b = &frames[4]["data"];
    assert_eq!((&b["account_type"], &b["token"], &b["is_enabled"]), (&json!("perps"), &json!("DUSD"), &json!(true)));
    let rest_balance = t.balance();
    assert_eq!(num(&b["total"]), num(&rest_balance["balance"]));
    assert!(b.get("cross_available").is_none(), "not the unified REST balance: {b}");

    // A resting order, then a fill by the mark.
    t.order(limit("BTC-USD", "sell", "0.01", "66000", "gtc", "rest-maker"));
    let open =
        c.expect(WAIT, "the resting order", |v| v["channel"] == "order" && v["data"]["cl_ord_id"] == "rest-maker");
    assert_eq!(open["data"]["status"], "open");
    c.expect(WAIT, "its balance", on("balance"));
    sb.set_mark("BTC-USD", "66000").unwrap();
    let frames = until_balance(&mut c);
    let channels: Vec<&str> = frames.iter().map(|v| v["channel"].as_str().unwrap()).collect();
    assert_eq!(channels, ["trade", "order", "position", "balance"]);
    let (trade, filled, flat) = (&frames[0], &frames[1], &frames[2]);
    assert_eq!((&trade["data"]["price"], &trade["data"]["side"]), (&json!("66000.00"), &json!("sell")));
    assert_eq!((&filled["data"]["cl_ord_id"], &filled["data"]["status"]), (&json!("rest-maker"), &json!("filled")));
    assert_eq!((&flat["data"]["qty"], &flat["data"]["status"]), (&json!("0.0000"), &json!("closed")));

    // A cancel.
    t.order(limit("BTC-USD", "buy", "0.01", "60000", "gtc", "rest-cancel"));
    c.expect(WAIT, "the order to cancel", |v| v["channel"] == "order" && v["data"]["cl_ord_id"] == "rest-cancel");
    let (status, _) = t.post("/api/cancel_order", r#"{"cl_ord_id":"rest-cancel"}"#);
    assert_eq!(status, 200);
    let canceled = c.expect(WAIT, "the cancel", |v| v["channel"] == "order" && v["data"]["status"] == "canceled");
    assert_eq!(canceled["data"]["cl_ord_id"], "rest-cancel");

    // Another account's activity never shows up.
    other.order(limit("BTC-USD", "buy", "0.01", "70000", "gtc", "someone-else"));
    let someone = other.order_by_cl("someone-else")["user"].clone();
    while let Some(v) = c.next_json(Duration::from_millis(200)) {
        assert!(v["data"]["user"] != someone && v["data"]["id"] != someone, "{v}");
    }
}

/// The frames up to and including the next `balance` push.
fn until_balance(c: &mut Client) -> Vec<Value> {
    let mut frames = Vec::new();
    while !frames.last().is_some_and(|v: &Value| v["channel"] == "balance") {
        frames.push(c.next_json(WAIT).expect("the account's pushes, up to its balance"));
    }
    frames
}

#[test]
fn seq_counts_per_connection_when_configured() {
    let sb = sandbox_with(SandboxConfig { ws_seq_scope: SeqScope::Connection, ..fast() });
    let t = Trader::with_api_key(&sb);
    let mut c = Client::connect(&sb.ws_stream_url());
    c.send(&json!({"auth": {"token": t.token, "streams": [{"channel": "order"}]}}));
    c.send(&json!({"subscribe": {"channel": "price", "symbol": "ETH-USD"}}));
    let frames: Vec<Value> = (0..4).map(|_| c.next_json(WAIT).expect("a frame")).collect();
    let seqs: Vec<u64> = frames.iter().map(|f| f["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4], "{frames:?}");
    assert_eq!(frames[0]["channel"], "auth");
}

#[test]
fn malformed_requests_get_error_frames_and_the_connection_lives_on() {
    let sb = common::sandbox();
    let mut c = Client::connect(&sb.ws_stream_url());
    let cases: [(tungstenite::Message, &str); 7] = [
        (tungstenite::Message::binary(vec![1u8, 2, 3]), "binary frames are not supported"),
        (tungstenite::Message::text("{not json"), "invalid JSON"),
        (tungstenite::Message::text(r#"{"ping":1}"#), "unknown request"),
        (tungstenite::Message::text(r#"[1,2]"#), "unknown request"),
        (
            tungstenite::Message::text(r#"{"subscribe":{"channel":"kline","symbol":"BTC-USD"}}"#),
            "unknown channel kline",
        ),
        (
            tungstenite::Message::text(r#"{"subscribe":{"channel":"price","symbol":"DOGE-USD"}}"#),
            "invalid symbol DOGE-USD",
        ),
        (tungstenite::Message::text(r#"{"subscribe":{"channel":"price"}}"#), "needs a symbol"),
    ];
    for (i, (frame, wanted)) in cases.into_iter().enumerate() {
        c.ws.send(frame).unwrap();
        let error = c.expect(WAIT, "error", on("error"));
        assert_eq!((&error["seq"], &error["data"]["code"]), (&json!(i + 1), &json!(400)), "{error}");
        let msg = error["data"]["msg"].as_str().unwrap();
        assert!(msg.contains(wanted), "{msg:?} should say {wanted:?}");
    }
    c.send(&json!({"subscribe": {"channel": "price", "symbol": "BTC-USD"}}));
    assert_eq!(c.expect(WAIT, "price", on("price"))["data"]["mark_price"], "65000.00");
    assert_eq!(sb.stats().ws_frames_in, 8);
}
