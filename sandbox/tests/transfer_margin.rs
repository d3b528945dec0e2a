//! `POST /api/transfer_margin` (venue-api.md §1.3): margin moved into an isolated position
//! and taken out with a negative amount; its effect on `query_positions`, `query_balance` and
//! the account stream; every refusal with its status and message; the body signature.

mod common;

use std::time::Duration;

use common::ws::Client;
use common::{Trader, close, exchange, message, num, sandbox, signature_headers};
use ed25519_dalek::SigningKey;
use perps_sandbox::Sandbox;
use serde_json::{Value, json};

fn transfer(t: &Trader, symbol: &str, amount: &str) -> (u16, Value) {
    t.post("/api/transfer_margin", &json!({"symbol": symbol, "amount_in": amount}).to_string())
}

fn market(symbol: &str, side: &str, qty: &str) -> Value {
    json!({"symbol": symbol, "side": side, "order_type": "market", "qty": qty, "time_in_force": "ioc",
           "reduce_only": false})
}

/// A trader with an isolated long of 1 ETH-USD (bought at the best ask, 3000.05).
fn isolated_long(sb: &Sandbox) -> Trader {
    let t = Trader::with_api_key(sb);
    let (status, answer) = t.post("/api/change_margin_mode", r#"{"symbol":"ETH-USD","margin_mode":"isolated"}"#);
    assert_eq!(status, 200, "{answer}");
    t.order(market("ETH-USD", "buy", "1"));
    let p = t.position("ETH-USD").unwrap();
    assert_eq!(
        (&p["qty"], &p["margin_mode"], &p["entry_price"]),
        (&json!("1.000"), &json!("isolated"), &json!("3000.05"))
    );
    t
}

/// `after[field] − before[field]` for decimal-string fields.
fn moved(before: &Value, after: &Value, field: &str) -> f64 {
    num(&after[field]) - num(&before[field])
}

#[test]
fn margin_moves_into_the_position_and_back_out() {
    let sb = sandbox();
    let t = isolated_long(&sb);
    let (p0, b0) = (t.position("ETH-USD").unwrap(), t.balance());
    assert!(close(num(&p0["initial_margin"]), 300.005), "entry value / leverage 10: {p0}");

    // In: the answer of every signed endpoint, keyed by this request's x-request-id.
    let id = uuid::Uuid::new_v4().to_string();
    let body = r#"{"symbol":"ETH-USD","amount_in":"100"}"#;
    let (status, answer) = t.post_signed("/api/transfer_margin", body, &id, &common::now_ms().to_string());
    assert_eq!((status, answer), (200, json!({"code": 0, "message": "success", "request_id": id})));
    let (p1, b1) = (t.position("ETH-USD").unwrap(), t.balance());
    assert!(close(moved(&p0, &p1, "initial_margin"), 100.0), "{p0}\n{p1}");
    assert!(close(moved(&p0, &p1, "holding_margin"), 100.0), "{p1}");
    assert_eq!((&p1["required_margin"], &p1["qty"], &p1["id"]), (&p0["required_margin"], &p0["qty"], &p0["id"]));
    // A long is bankrupt when the loss eats its margin: entry − margin / qty; liquidated when
    // what is left is the maintenance margin (at the entry price): + entry / (2 × 25). Both
    // rounded to the 0.01 tick.
    let bankruptcy = 3000.05 - num(&p1["initial_margin"]);
    assert!((num(&p1["bankruptcy_price"]) - bankruptcy).abs() < 0.0051, "{p1}: {bankruptcy}");
    assert!((num(&p1["liq_price"]) - (bankruptcy + 3000.05 / 50.0)).abs() < 0.0051, "{p1}");
    assert!(num(&p1["liq_price"]) < num(&p0["liq_price"]) - 99.0, "more margin, further away: {p0}\n{p1}");
    assert!(close(moved(&b0, &b1, "isolated_balance"), 100.0), "{b0}\n{b1}");
    assert!(close(moved(&b0, &b1, "cross_balance"), -100.0), "{b1}");
    assert!(close(moved(&b0, &b1, "cross_available"), -100.0), "{b1}");
    for unchanged in ["balance", "equity", "upnl", "cross_margin", "locked"] {
        assert_eq!(b1[unchanged], b0[unchanged], "{unchanged}: {b0}\n{b1}");
    }

    // Out: a negative amount.
    assert_eq!(transfer(&t, "ETH-USD", "-40").0, 200);
    let (p2, b2) = (t.position("ETH-USD").unwrap(), t.balance());
    assert!(close(moved(&p0, &p2, "initial_margin"), 60.0), "{p2}");
    assert!(close(moved(&b0, &b2, "cross_available"), -60.0), "{b2}");
    assert_eq!(b2["balance"], b0["balance"]);

    // Not below the maintenance margin, the unrealised loss taken off: at most
    // margin + loss − maintenance can come out.
    let loss = num(&p2["upnl"]).min(0.0);
    let most = num(&p2["initial_margin"]) + loss - num(&p2["maint_margin"]);
    assert!(close(most, 360.005 - 0.05 - 60.0), "mark 3000, 2 % maintenance: {p2}");
    let (status, answer) = transfer(&t, "ETH-USD", &format!("-{}", most.ceil() + 1.0));
    assert_eq!(status, 400, "{answer}");
    assert!(message(&answer).starts_with("withdrawing 301 would leave the ETH-USD position's margin at"), "{answer}");
    assert!(message(&answer).ends_with("below its maintenance margin 60.000000000"), "{answer}");
    assert_eq!(t.position("ETH-USD").unwrap()["initial_margin"], p2["initial_margin"], "a refusal changes nothing");
    assert_eq!(transfer(&t, "ETH-USD", &format!("-{}", most.floor() - 1.0)).0, 200);
    let p3 = t.position("ETH-USD").unwrap();
    assert!(close(num(&p3["initial_margin"]), 360.005 - 298.0), "{p3}");
    // An unrealised profit does not count: it is not in the wallet yet.
    sb.set_mark("ETH-USD", "3100").unwrap();
    let p4 = t.position("ETH-USD").unwrap();
    assert!(num(&p4["upnl"]) > 99.0 && num(&p4["holding_margin"]) - num(&p4["maint_margin"]) > 90.0, "{p4}");
    let (status, answer) = transfer(&t, "ETH-USD", "-1");
    assert!(status == 400 && message(&answer).contains("below its maintenance margin 62.000000000"), "{answer}");

    // In: no more than the available balance.
    let available = num(&t.balance()["cross_available"]);
    let (status, answer) = transfer(&t, "ETH-USD", &format!("{}", available.floor() + 1.0));
    assert_eq!(status, 400, "{answer}");
    assert!(message(&answer).starts_with("insufficient available balance: "), "{answer}");
    assert!(message(&answer).ends_with(&format!("{} available", t.balance()["cross_available"].as_str().unwrap())));

    // Closing the position gives its margin, transfers included, back to the cross balance.
    t.order(market("ETH-USD", "sell", "1"));
    assert!(t.position("ETH-USD").is_none());
    let b5 = t.balance();
    assert_eq!(b5["isolated_balance"], "0.000000000", "{b5}");
    assert_eq!(b5["cross_balance"], b5["balance"], "{b5}");
    // A new position starts with no transferred margin.
    t.order(market("ETH-USD", "buy", "1"));
    let p6 = t.position("ETH-USD").unwrap();
    assert_eq!(p6["initial_margin"], p6["required_margin"], "{p6}");
}

#[test]
fn refusals_name_the_problem() {
    let sb = sandbox();
    let t = isolated_long(&sb);
    t.order(market("BTC-USD", "buy", "0.01"));
    // What the refusals must leave alone (a position's `time` is the time of the query).
    let margins = |t: &Trader| {
        let mut position = t.position("ETH-USD").unwrap();
        position.as_object_mut().unwrap().remove("time");
        (t.balance(), position)
    };
    let before = margins(&t);
    let cases = [
        (r#"{"symbol":"DOGE-USD","amount_in":"10"}"#, "invalid symbol DOGE-USD"),
        (
            r#"{"symbol":"XAG-USD","amount_in":"10"}"#,
            "no open position on XAG-USD: transfer_margin moves an isolated position's margin",
        ),
        (
            r#"{"symbol":"BTC-USD","amount_in":"10"}"#,
            "the BTC-USD position is cross margin: only an isolated position has margin of its own",
        ),
        (r#"{"symbol":"ETH-USD","amount_in":"0"}"#, "amount_in must not be zero, not \"0\""),
        (r#"{"symbol":"ETH-USD","amount_in":"-0.000"}"#, "amount_in must not be zero, not \"-0.000\""),
        (
            r#"{"symbol":"ETH-USD","amount_in":"ten"}"#,
            "amount_in must be a decimal string (\"100.5\" moves margin in, \"-100.5\" takes it out), not \"ten\"",
        ),
        (
            r#"{"symbol":"ETH-USD","amount_in":"1e3"}"#,
            "amount_in must be a decimal string (\"100.5\" moves margin in, \"-100.5\" takes it out), not \"1e3\"",
        ),
        (
            r#"{"symbol":"ETH-USD","amount_in":"0.0000000000001"}"#,
            "amount_in 0.0000000000001 has more than twelve decimals",
        ),
        (
            r#"{"symbol":"ETH-USD","amount_in":10}"#,
            "transfer_margin needs symbol (string) and amount_in (decimal string)",
        ),
        (r#"{"symbol":"ETH-USD"}"#, "transfer_margin needs symbol (string) and amount_in (decimal string)"),
        (r#"{"amount_in":"10"}"#, "transfer_margin needs symbol (string) and amount_in (decimal string)"),
        (r#"{"symbol":"ETH-USD","amount_in":"10","asset":"DUSD"}"#, "unknown field asset"),
    ];
    for (body, expected) in cases {
        let (status, answer) = t.post("/api/transfer_margin", body);
        assert_eq!((status, message(&answer)), (400, expected.to_owned()), "{body}: {answer}");
        assert_eq!(answer["code"], 400, "{answer}");
    }
    // An isolated mode without a position is still no position.
    let fresh = Trader::with_api_key(&sb);
    assert_eq!(fresh.post("/api/change_margin_mode", r#"{"symbol":"XAG-USD","margin_mode":"isolated"}"#).0, 200);
    let (status, answer) = transfer(&fresh, "XAG-USD", "10");
    assert!(status == 400 && message(&answer).starts_with("no open position on XAG-USD"), "{answer}");

    // Signed like every trading POST: a body signed by another key is 403, no token 401.
    let body = r#"{"symbol":"ETH-USD","amount_in":"10"}"#;
    let stranger = SigningKey::from_bytes(&[7; 32]);
    let mut headers =
        signature_headers(&stranger, &uuid::Uuid::new_v4().to_string(), &common::now_ms().to_string(), body);
    headers.push(t.bearer());
    headers.push(("Content-Type".into(), "application/json".into()));
    let url = format!("{}/api/transfer_margin", sb.url());
    let (status, answer) = exchange(&t.agent, "POST", &url, &headers, body);
    assert_eq!((status, message(&answer)), (403, "invalid signature".to_owned()), "{answer}");
    // The same body, tampered with after signing.
    let mut headers = signature_headers(&t.key, &uuid::Uuid::new_v4().to_string(), &common::now_ms().to_string(), body);
    headers.push(t.bearer());
    headers.push(("Content-Type".into(), "application/json".into()));
    let tampered = body.replace("\"10\"", "\"1000\"");
    assert_eq!(exchange(&t.agent, "POST", &url, &headers, &tampered).0, 403);
    headers.retain(|(k, _)| k != "Authorization");
    assert_eq!(exchange(&t.agent, "POST", &url, &headers, body).0, 401);
    assert_eq!(exchange(&t.agent, "GET", &url, &[t.bearer()], "").0, 405);
    assert_eq!(margins(&t), before, "no refusal moved any margin");
}

#[test]
fn a_transfer_pushes_the_position_and_the_balance() {
    let sb = sandbox();
    let t = isolated_long(&sb);
    let mut c = Client::connect(&sb.ws_stream_url());
    c.send(&json!({"auth": {"token": t.token, "streams": [{"channel": "position"}, {"channel": "balance"}]}}));
    let wait = Duration::from_secs(5);
    c.expect(wait, "auth", |v| v["channel"] == "auth");
    // The subscriptions are in place once the listing shows them.
    for _ in 0..100 {
        if sb.ws_connections().iter().any(|c| c.subscriptions.len() == 2) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let before = t.position("ETH-USD").unwrap();
    assert_eq!(transfer(&t, "ETH-USD", "250.5").0, 200);
    let position = c.next_json(wait).expect("a position push");
    let balance = c.next_json(wait).expect("a balance push");
    assert_eq!((&position["channel"], &balance["channel"]), (&json!("position"), &json!("balance")));
    let rest = t.position("ETH-USD").unwrap();
    assert_eq!(position["data"]["initial_margin"], rest["initial_margin"], "{position}");
    assert!(close(num(&position["data"]["initial_margin"]) - num(&before["initial_margin"]), 250.5), "{position}");
    let unified = t.balance();
    assert_eq!(num(&balance["data"]["total"]), num(&unified["balance"]), "the wallet does not change: {balance}");
    // The wallet record's `occupied` holds the positions' margin (cross margin + isolated).
    let occupied = num(&unified["cross_margin"]) + num(&unified["isolated_balance"]);
    assert!(close(num(&balance["data"]["occupied"]), occupied) && occupied > 550.0, "{balance}");
    // A refused transfer pushes nothing.
    assert_eq!(transfer(&t, "ETH-USD", "-100000").0, 400);
    assert_eq!(c.next_json(Duration::from_millis(300)), None);
}
