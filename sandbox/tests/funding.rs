//! Funding (venue-api.md §1.4 `query_funding_history`, §1.7, §6.10): the admin control
//! `POST /_sandbox/funding` settles a rate, every open position pays or receives
//! `qty × mark × rate`, the wallet moves by it, and the rows come back as the live venue
//! sends them — a bare array, newest first, `last_id` paging toward older rows.
//!
//! The payments are checked against this file's own exact decimal arithmetic on the
//! positions' `qty` and `mark_price` as `query_positions` reports them.

mod common;

use common::{Trader, exchange, sandbox};
use perps_sandbox::Sandbox;
use serde_json::{Value, json};

fn market(symbol: &str, side: &str, qty: &str) -> Value {
    json!({"symbol": symbol, "side": side, "order_type": "market", "qty": qty, "time_in_force": "ioc",
           "reduce_only": false})
}

/// `POST /_sandbox/funding`: status and answer.
fn settle(sb: &Sandbox, body: Value) -> (u16, Value) {
    let headers = [("Content-Type".to_owned(), "application/json".to_owned())];
    exchange(&common::agent(), "POST", &format!("{}/funding", sb.admin_url()), &headers, &body.to_string())
}

/// A decimal string as an integer count of 10^-`places` (exact; at most `places` decimals).
fn scaled(text: &str, places: u32) -> i128 {
    let (negative, digits) = text.strip_prefix('-').map_or((false, text), |rest| (true, rest));
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    assert!(fraction.len() <= places as usize, "{text} has more than {places} decimals");
    let padded = format!("{fraction:0<width$}", width = places as usize);
    let n = whole.parse::<i128>().unwrap() * 10i128.pow(places) + padded.parse::<i128>().unwrap_or(0);
    if negative { -n } else { n }
}

/// The payment of a position, in 10^-9 DUSD: −qty × mark × rate, rounded half away from
/// zero to nine decimals (computed with four decimals each, so exactly, then rounded).
fn payment(qty: &str, mark: &str, rate: &str) -> i128 {
    let exact = -scaled(qty, 4) * scaled(mark, 4) * scaled(rate, 8); // 10^-16
    let unit = 10i128.pow(7);
    let rounded = (exact.abs() + unit / 2) / unit;
    if exact < 0 { -rounded } else { rounded }
}

fn history(t: &Trader, query: &str) -> Vec<Value> {
    let (status, rows) = t.get(&format!("/api/query_funding_history{query}"));
    assert_eq!(status, 200, "{rows}");
    rows.as_array().unwrap_or_else(|| panic!("a bare array: {rows}")).clone()
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field].as_str().unwrap_or_else(|| panic!("{field} in {v}"))
}

#[test]
fn settled_funding_moves_the_balance_and_is_listed_newest_first() {
    let sb = sandbox();
    let (a, b) = (Trader::with_api_key(&sb), Trader::with_api_key(&sb));
    a.order(market("BTC-USD", "buy", "0.0100"));
    a.order(market("ETH-USD", "sell", "1"));
    b.order(market("BTC-USD", "sell", "0.0200"));
    let idle = Trader::with_api_key(&sb);
    assert_eq!(history(&a, ""), Vec::<Value>::new(), "nothing settled yet");
    // The mark moves off the entry price, so the mark (not the entry) is what counts.
    sb.set_mark("BTC-USD", "65010.50").unwrap();

    let positions = |t: &Trader| {
        let (status, list) = t.get("/api/query_positions");
        assert_eq!(status, 200);
        list.as_array().unwrap().clone()
    };
    let (pa, pb) = (positions(&a), positions(&b));
    assert_eq!(pa.len(), 2);
    let (balance_a, balance_b) = (a.balance(), b.balance());

    let (status, answer) = settle(&sb, json!({"rate": "0.000125"}));
    assert_eq!((status, answer), (200, json!({"symbol": null, "rate": "0.000125", "rows": 3})));

    // Each of a's positions has one row, newest first; qty = −qty × mark × rate.
    let rows = history(&a, "");
    assert_eq!(rows.len(), 2, "{rows:?}");
    let mut total = 0;
    for row in &rows {
        let mut keys: Vec<&str> = row.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        // The live shape: no transact_time ([WJ], venue-api.md §6.10).
        assert_eq!(keys, ["asset", "created_at", "id", "qty", "symbol", "txn_type", "updated_at", "user"]);
        assert_eq!((&row["asset"], &row["txn_type"]), (&json!("DUSD"), &json!("funding_fee")));
        let p = pa.iter().find(|p| p["symbol"] == row["symbol"]).unwrap();
        assert_eq!(row["user"], p["user"]);
        let expected = payment(str_of(p, "qty"), str_of(p, "mark_price"), "0.000125");
        assert_eq!(scaled(str_of(row, "qty"), 9), expected, "{row} for {p}");
        total += expected;
    }
    assert!(rows[0]["id"].as_u64().unwrap() > rows[1]["id"].as_u64().unwrap(), "newest first");
    // The long pays, the short receives: 0.01 × 65010.50 × 0.000125 = 0.0812631250.
    let btc = rows.iter().find(|r| r["symbol"] == "BTC-USD").unwrap();
    assert_eq!(btc["qty"], "-0.081263125");
    let eth = rows.iter().find(|r| r["symbol"] == "ETH-USD").unwrap();
    assert!(!str_of(eth, "qty").starts_with('-'), "a short receives at a positive rate: {eth}");
    let moved =
        |before: &Value, after: &Value| scaled(str_of(after, "balance"), 9) - scaled(str_of(before, "balance"), 9);
    assert_eq!(moved(&balance_a, &a.balance()), total, "the balance moved by the rows");

    // b, short 0.02 BTC: one row, received.
    let rows_b = history(&b, "");
    assert_eq!(rows_b.len(), 1);
    let expected_b = payment(str_of(&pb[0], "qty"), str_of(&pb[0], "mark_price"), "0.000125");
    assert_eq!((scaled(str_of(&rows_b[0], "qty"), 9), expected_b), (162_526_250, 162_526_250));
    assert_eq!(moved(&balance_b, &b.balance()), expected_b);
    assert_eq!(history(&idle, ""), Vec::<Value>::new(), "no position, no row");

    // A negative rate on one symbol: shorts pay, longs receive, the other symbol untouched.
    let balance_before = a.balance();
    let (status, answer) = settle(&sb, json!({"symbol": "BTC-USD", "rate": "-0.0001"}));
    assert_eq!((status, &answer["rows"]), (200, &json!(2)), "{answer}");
    let rows = history(&a, "");
    assert_eq!(rows.len(), 3);
    assert_eq!((&rows[0]["symbol"], &rows[0]["qty"]), (&json!("BTC-USD"), &json!("0.065010500")));
    assert_eq!(moved(&balance_before, &a.balance()), 65_010_500);
    assert_eq!(history(&b, "")[0]["qty"], "-0.130021000");

    // Filters: symbol, and the time window around the settlements.
    let eth_rows = history(&a, "?symbol=ETH-USD");
    let expected: Vec<Value> = rows.iter().filter(|r| r["symbol"] == "ETH-USD").cloned().collect();
    assert_eq!((eth_rows.len(), eth_rows), (1, expected));
    let newest = str_of(&rows[0], "created_at").to_owned();
    assert_eq!(history(&a, &format!("?start={newest}")), vec![rows[0].clone()]);
    let oldest = str_of(&rows[2], "created_at").to_owned();
    assert_eq!(history(&a, &format!("?end={oldest}")).len(), 2, "the first settlement's two rows");
    assert_eq!(history(&a, "?start=2099-01-01T00:00:00Z"), Vec::<Value>::new());
}

#[test]
fn last_id_pages_toward_older_rows() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(market("BTC-USD", "buy", "0.0010"));
    for rate in ["0.0001", "0.0002", "-0.0003", "0.0004", "0.0005"] {
        assert_eq!(settle(&sb, json!({"symbol": "BTC-USD", "rate": rate})).0, 200);
    }
    let all = history(&t, "");
    assert_eq!(all.len(), 5);
    let ids: Vec<u64> = all.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    // The newest row is the last rate's: 0.001 × 65000.50 (the ask taken) × 0.0005, paid.
    assert!(str_of(&all[0], "qty").starts_with('-'));
    assert!(!str_of(&all[2], "qty").starts_with('-'), "the negative rate was received");
    let mut paged = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = history(&t, &format!("?limit=2{cursor}"));
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 2);
        cursor = format!("&last_id={}", page.last().unwrap()["id"]);
        paged.extend(page);
    }
    assert_eq!(paged, all, "the pages, in order, are the whole list");
    assert_eq!(history(&t, &format!("?last_id={}", ids[4])), Vec::<Value>::new());
    assert_eq!(history(&t, "?limit=500").len(), 5);
}

#[test]
fn refusals() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    for query in ["?limit=0", "?limit=501", "?symbol=DOGE-USD", "?last_id=x", "?start=yesterday"] {
        let (status, answer) = t.get(&format!("/api/query_funding_history{query}"));
        assert_eq!(status, 400, "{query}: {answer}");
    }
    let get = exchange(&common::agent(), "GET", &format!("{}/api/query_funding_history", sb.url()), &[], "");
    assert_eq!(get.0, 401, "an account read");
    for body in [
        json!({"rate": "x"}),
        json!({"rate": "0.1", "symbol": "DOGE-USD"}),
        json!({"symbol": "BTC-USD"}),
        json!({"rate": "0.1", "when": 1}),
    ] {
        let (status, answer) = settle(&sb, body.clone());
        assert_eq!(status, 400, "{body}: {answer}");
    }
    let (status, _) = exchange(&common::agent(), "GET", &format!("{}/funding", sb.admin_url()), &[], "");
    assert_eq!(status, 405);
    // Nothing open: a settlement writes nothing and moves nothing.
    let before = t.balance();
    assert_eq!(sb.settle_funding(None, "0.01"), Ok(0));
    assert_eq!((t.balance(), history(&t, "")), (before, Vec::new()));
}
