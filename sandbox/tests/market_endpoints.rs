//! The market-wide endpoints (venue-api.md §1.5): `query_symbol_market`,
//! `query_market_overview` and `kline/history`. Every expected value is computed here from
//! what the test itself traded, read back through the account endpoints (`query_trades`,
//! `query_positions`).

mod common;

use common::{Trader, exchange, message, num, sandbox};
use perps_sandbox::Sandbox;
use serde_json::{Value, json};

fn public(sb: &Sandbox, path: &str) -> (u16, Value) {
    exchange(&common::agent(), "GET", &format!("{}{path}", sb.url()), &[], "")
}

fn ok(sb: &Sandbox, path: &str) -> Value {
    let (status, answer) = public(sb, path);
    assert_eq!(status, 200, "{path}: {answer}");
    answer
}

fn market(symbol: &str, side: &str, qty: &str) -> Value {
    json!({"symbol": symbol, "side": side, "order_type": "market", "qty": qty, "time_in_force": "ioc",
           "reduce_only": false})
}

fn keys(v: &Value) -> Vec<String> {
    let mut keys: Vec<String> = v.as_object().unwrap_or_else(|| panic!("an object: {v}")).keys().cloned().collect();
    keys.sort();
    keys
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    names.sort();
    names
}

/// Unix seconds of an ISO 8601 UTC time (`2025-08-11T08:00:00Z`, fraction allowed), by hand.
fn unix_seconds(iso: &str) -> f64 {
    let n = |range: std::ops::Range<usize>| iso[range].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from civil (proleptic Gregorian), H. Hinnant's algorithm.
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let seconds: f64 = iso[17..iso.len() - 1].parse().unwrap();
    (days * 86_400 + n(11..13) * 3600 + n(14..16) * 60) as f64 + seconds
}

/// Every fill of `symbol` by these traders, oldest first.
fn fills(traders: &[&Trader], symbol: &str) -> Vec<Value> {
    let mut rows: Vec<Value> = traders
        .iter()
        .flat_map(|t| {
            let (status, page) = t.get(&format!("/api/query_trades?symbol={symbol}&limit=500"));
            assert_eq!(status, 200, "{page}");
            page["result"].as_array().unwrap().clone()
        })
        .collect();
    rows.sort_by_key(|r| (r["created_at"].as_str().unwrap().to_owned(), r["id"].as_u64().unwrap()));
    rows
}

/// One side of the traders' open positions: the larger of the long and the short totals.
fn open_interest(traders: &[&Trader], symbol: &str) -> f64 {
    let (mut longs, mut shorts) = (0.0, 0.0);
    for t in traders {
        if let Some(p) = t.position(symbol) {
            let qty = num(&p["qty"]);
            if qty > 0.0 { longs += qty } else { shorts -= qty }
        }
    }
    f64::max(longs, shorts)
}

const SYMBOL_MARKET_FIELDS: &[&str] = &[
    "base",
    "quote",
    "symbol",
    "funding_rate",
    "next_funding_time",
    "index_price",
    "mark_price",
    "last_price",
    "mid_price",
    "spread",
    "high_price_24h",
    "low_price_24h",
    "volume_24h",
    "open_interest",
    "time",
];

#[test]
fn symbol_market_before_any_trade_has_prices_from_the_book_and_no_funding() {
    let sb = sandbox();
    let m = ok(&sb, "/api/query_symbol_market?symbol=BTC-USD");
    assert_eq!(keys(&m), sorted(SYMBOL_MARKET_FIELDS), "{m}");
    let price = ok(&sb, "/api/query_symbol_price?symbol=BTC-USD");
    for field in ["base", "quote", "symbol", "index_price", "mark_price", "mid_price", "last_price"] {
        assert_eq!(m[field], price[field], "{field}: {m} vs {price}");
    }
    assert_eq!(m["spread"], json!([price["spread_bid"], price["spread_ask"]]), "{m}");
    assert_eq!((&m["mark_price"], &m["spread"]), (&json!("65000.00"), &json!(["64999.75", "65000.25"])));
    // Nothing traded: no last, high or low price, zero volume and open interest.
    assert_eq!(
        (&m["last_price"], &m["high_price_24h"], &m["low_price_24h"]),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    assert_eq!((&m["volume_24h"], &m["open_interest"]), (&json!("0.0000"), &json!("0.0000")));
    // No funding: a zero rate, and the next (zero) funding on the 8-hour grid within 8 hours.
    assert_eq!(m["funding_rate"], "0");
    let next = m["next_funding_time"].as_str().unwrap();
    assert!(next.len() == 20 && next.ends_with(":00:00Z"), "the docs' form, to the second: {next}");
    assert!(["00", "08", "16"].contains(&&next[11..13]), "{next}");
    let (next_s, now_s) = (unix_seconds(next), unix_seconds(m["time"].as_str().unwrap()));
    assert!(now_s < next_s && next_s <= now_s + 8.0 * 3600.0, "{next} after {}", m["time"]);
    assert!(m["time"].as_str().unwrap().len() == 27, "µs like query_symbol_price: {m}");

    // Refused exactly as query_symbol_price refuses.
    for query in ["?symbol=DOGE-USD", "", "?symbol="] {
        let (status, answer) = public(&sb, &format!("/api/query_symbol_market{query}"));
        let (price_status, price_answer) = public(&sb, &format!("/api/query_symbol_price{query}"));
        assert_eq!((status, &answer), (price_status, &price_answer), "{query}");
        assert_eq!(status, 400, "{query}: {answer}");
    }
    assert_eq!(message(&public(&sb, "/api/query_symbol_market?symbol=DOGE-USD").1), "invalid symbol DOGE-USD");
    assert_eq!(message(&public(&sb, "/api/query_symbol_market").1), "query parameter symbol is required");
}

#[test]
fn symbol_market_counts_the_last_days_fills_and_one_side_of_the_positions() {
    let sb = sandbox();
    let (a, b) = (Trader::with_api_key(&sb), Trader::with_api_key(&sb));
    // A lone short: the synthetic market holds the long side, so the open interest is its size.
    b.order(market("BTC-USD", "sell", "0.003"));
    let m = ok(&sb, "/api/query_symbol_market?symbol=BTC-USD");
    assert_eq!(m["open_interest"], "0.0030", "{m}");
    a.order(market("BTC-USD", "buy", "0.01"));
    sb.set_mark("BTC-USD", "65100").unwrap();
    a.order(market("BTC-USD", "buy", "0.002"));

    let rows = fills(&[&a, &b], "BTC-USD");
    assert_eq!(rows.len(), 3, "{rows:?}");
    let prices: Vec<f64> = rows.iter().map(|r| num(&r["price"])).collect();
    let volume: f64 = rows.iter().map(|r| num(&r["qty"])).sum();
    let m = ok(&sb, "/api/query_symbol_market?symbol=BTC-USD");
    assert!(common::close(num(&m["last_price"]), *prices.last().unwrap()), "{m} {prices:?}");
    assert!(common::close(num(&m["high_price_24h"]), prices.iter().copied().fold(f64::MIN, f64::max)), "{m}");
    assert!(common::close(num(&m["low_price_24h"]), prices.iter().copied().fold(f64::MAX, f64::min)), "{m}");
    assert!(common::close(num(&m["volume_24h"]), volume), "{m}: {volume}");
    assert_eq!(m["volume_24h"], "0.0150", "0.003 + 0.01 + 0.002, with the symbol's four decimals");
    let oi = open_interest(&[&a, &b], "BTC-USD");
    assert!(common::close(num(&m["open_interest"]), oi) && oi == 0.012, "{m}: {oi}");
    assert_eq!(m["mark_price"], "65100.00");
    // Another symbol's trading does not count here.
    assert_eq!(ok(&sb, "/api/query_symbol_market?symbol=ETH-USD")["volume_24h"], "0.000");

    // A day later the fills have left the 24 h window; the last price and the positions stay.
    sb.set_clock_offset_ms(25 * 3600 * 1000);
    let later = ok(&sb, "/api/query_symbol_market?symbol=BTC-USD");
    assert_eq!(
        (&later["high_price_24h"], &later["low_price_24h"], &later["volume_24h"]),
        (&Value::Null, &Value::Null, &json!("0.0000")),
        "{later}"
    );
    assert_eq!((&later["last_price"], &later["open_interest"]), (&m["last_price"], &m["open_interest"]));
}

#[test]
fn market_overview_lists_every_symbol_with_totals() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let empty = ok(&sb, "/api/query_market_overview");
    assert_eq!(keys(&empty), ["summary", "symbols"]);
    assert_eq!(keys(&empty["summary"]), ["open_interest_notional", "symbol_count", "volume_quote_24h"]);
    assert_eq!(empty["summary"]["symbol_count"], 3);
    assert_eq!(
        (&empty["summary"]["open_interest_notional"], &empty["summary"]["volume_quote_24h"]),
        (&json!("0.000000000"), &json!("0.000000000"))
    );
    let names: Vec<&str> = empty["symbols"].as_array().unwrap().iter().map(|s| s["symbol"].as_str().unwrap()).collect();
    assert_eq!(names, ["BTC-USD", "ETH-USD", "XAG-USD"], "the symbols query_symbol_info lists");

    // BTC: a buy, the mark up, another buy higher; ETH: a short.
    t.order(market("BTC-USD", "buy", "0.01"));
    sb.set_mark("BTC-USD", "65100").unwrap();
    t.order(market("BTC-USD", "buy", "0.002"));
    t.order(market("ETH-USD", "sell", "0.5"));
    let overview = ok(&sb, "/api/query_market_overview");
    let rows = overview["symbols"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let (mut notional_total, mut quote_total) = (0.0, 0.0);
    for row in rows {
        let symbol = row["symbol"].as_str().unwrap();
        assert_eq!(
            keys(row),
            sorted(&[
                "symbol",
                "base",
                "quote",
                "last_price",
                "mark_price",
                "funding_rate",
                "open_interest",
                "open_interest_notional",
                "price_change_pct",
                "volume_24h",
                "volume_quote_24h",
                "time",
            ]),
            "{row}"
        );
        assert!(row["price_change_pct"].is_f64(), "a float, as documented: {row}");
        assert_eq!(row["funding_rate"], "0");
        for field in ["mark_price", "open_interest", "open_interest_notional", "volume_24h", "volume_quote_24h"] {
            assert!(row[field].is_string(), "{field}: {row}");
        }
        let price = ok(&sb, &format!("/api/query_symbol_price?symbol={symbol}"));
        assert_eq!((&row["mark_price"], &row["last_price"]), (&price["mark_price"], &price["last_price"]));
        let fills = fills(&[&t], symbol);
        let quote: f64 = fills.iter().map(|r| num(&r["value"])).sum();
        let volume: f64 = fills.iter().map(|r| num(&r["qty"])).sum();
        assert!(common::close(num(&row["volume_quote_24h"]), quote), "{row}: {quote}");
        assert!(common::close(num(&row["volume_24h"]), volume), "{row}: {volume}");
        let oi = open_interest(&[&t], symbol);
        assert!(common::close(num(&row["open_interest"]), oi), "{row}: {oi}");
        let notional = oi * num(&row["mark_price"]);
        assert!(common::close(num(&row["open_interest_notional"]), notional), "{row}: {notional}");
        let change = match (fills.first(), fills.last()) {
            (Some(first), Some(last)) => (num(&last["price"]) - num(&first["price"])) / num(&first["price"]) * 100.0,
            _ => 0.0,
        };
        assert!((row["price_change_pct"].as_f64().unwrap() - change).abs() < 1e-9, "{row}: {change}");
        notional_total += notional;
        quote_total += quote;
    }
    assert!(rows[0]["price_change_pct"].as_f64().unwrap() > 0.15, "BTC rose by 100 from about 65000: {overview}");
    assert_eq!((&rows[2]["last_price"], &rows[2]["volume_24h"]), (&Value::Null, &json!("0.00")), "XAG: no trade");
    assert_eq!(rows[1]["open_interest"], "0.500", "ETH: the lone short");
    let summary = &overview["summary"];
    assert!(common::close(num(&summary["open_interest_notional"]), notional_total), "{summary}: {notional_total}");
    assert!(common::close(num(&summary["volume_quote_24h"]), quote_total), "{summary}: {quote_total}");
    assert!(quote_total > 1000.0, "both symbols' trades count: {quote_total}");
    // No parameters are documented; an unknown one is ignored (it filters nothing).
    let ignored = ok(&sb, "/api/query_market_overview?symbol=BTC-USD");
    assert_eq!((&ignored["summary"], ignored["symbols"].as_array().unwrap().len()), (summary, 3));
}

/// A market order signed on the venue clock, which `offset_ms` has moved away from ours.
fn market_at(t: &Trader, offset_ms: i64, symbol: &str, side: &str, qty: &str) {
    let body = market(symbol, side, qty).to_string();
    let (id, ts) = (uuid::Uuid::new_v4().to_string(), (common::now_ms() as i64 + offset_ms).to_string());
    let (status, answer) = t.post_signed("/api/new_order", &body, &id, &ts);
    assert_eq!((status, &answer["code"]), (200, &json!(0)), "{answer}");
}

/// (start, open, high, low, close, volume)
type Bar = (i64, f64, f64, f64, f64, f64);

/// Names the start (Unix seconds) of the bar that holds a fill row.
type BarStart<'a> = &'a dyn Fn(&Value) -> i64;

/// The bars these fills (oldest first) make when `start_of` names each second's bar; with
/// `tick`, one bar per fill.
fn expected_bars(rows: &[Value], start_of: BarStart<'_>, tick: bool) -> Vec<Bar> {
    let mut bars: Vec<Bar> = Vec::new();
    for row in rows {
        let (start, price, qty) = (start_of(row), num(&row["price"]), num(&row["qty"]));
        match bars.last_mut() {
            Some(bar) if bar.0 == start && !tick => {
                bar.2 = bar.2.max(price);
                bar.3 = bar.3.min(price);
                bar.4 = price;
                bar.5 += qty;
            }
            _ => bars.push((start, price, price, price, price, qty)),
        }
    }
    bars
}

/// The bars of a `{"s":"ok",…}` answer, checking the column shape and the JSON types.
fn answered_bars(answer: &Value) -> Vec<Bar> {
    assert_eq!((keys(answer), &answer["s"]), (sorted(&["s", "t", "o", "h", "l", "c", "v"]), &json!("ok")), "{answer}");
    let column = |k: &str| answer[k].as_array().unwrap_or_else(|| panic!("{k}: {answer}")).clone();
    let t = column("t");
    assert!(t.iter().all(Value::is_i64), "t in whole seconds: {answer}");
    let numbers: Vec<Vec<f64>> = ["o", "h", "l", "c", "v"]
        .iter()
        .map(|k| {
            let values = column(k);
            assert_eq!(values.len(), t.len(), "{k}: {answer}");
            values.iter().map(|v| v.as_f64().unwrap_or_else(|| panic!("{k}: JSON numbers: {answer}"))).collect()
        })
        .collect();
    (0..t.len())
        .map(|i| (t[i].as_i64().unwrap(), numbers[0][i], numbers[1][i], numbers[2][i], numbers[3][i], numbers[4][i]))
        .collect()
}

fn same_bars(got: &[Bar], expected: &[Bar]) -> bool {
    got.len() == expected.len()
        && got
            .iter()
            .zip(expected)
            .all(|(g, e)| (g.0, g.1, g.2, g.3, g.4) == (e.0, e.1, e.2, e.3, e.4) && (g.5 - e.5).abs() < 1e-9)
}

/// 2100-01-01T00:00:00Z: after every fill of the test.
const LATER: i64 = 4_102_444_800;

#[test]
fn kline_history_builds_bars_from_the_fills() {
    let sb = sandbox();
    let (a, b) = (Trader::with_api_key(&sb), Trader::with_api_key(&sb));
    let history = |query: &str| public(&sb, &format!("/api/kline/history?{query}"));
    assert_eq!(history(&format!("symbol=BTC-USD&resolution=1&from=0&to={LATER}")), (200, json!({"s": "no_data"})));

    // Two accounts' fills over two minutes and two days, at three prices at least.
    a.order(market("BTC-USD", "buy", "0.01"));
    b.order(market("BTC-USD", "sell", "0.004"));
    sb.set_mark("BTC-USD", "65100").unwrap();
    a.order(market("BTC-USD", "buy", "0.002"));
    sb.set_clock_offset_ms(120_000);
    market_at(&a, 120_000, "BTC-USD", "sell", "0.003");
    let two_days = 2 * 86_400_000 + 120_000;
    sb.set_clock_offset_ms(two_days);
    market_at(&b, two_days, "BTC-USD", "buy", "0.001");
    let rows = fills(&[&a, &b], "BTC-USD");
    assert_eq!(rows.len(), 5, "{rows:?}");
    let second = |row: &Value| unix_seconds(row["created_at"].as_str().unwrap()).floor() as i64;
    let every = |width: i64| move |row: &Value| second(row) - second(row) % width;

    // 1970-01-05 was a Monday; a month starts on its first day.
    let monday = |row: &Value| second(row) - (second(row) - 4 * 86_400) % (7 * 86_400);
    let month =
        |row: &Value| unix_seconds(&format!("{}-01T00:00:00Z", &row["created_at"].as_str().unwrap()[..7])) as i64;
    let cases: [(&str, BarStart<'_>); 9] = [
        ("1T", &second),
        ("3S", &every(3)),
        ("1", &every(60)),
        ("5", &every(300)),
        ("15", &every(900)),
        ("60", &every(3600)),
        ("1D", &every(86_400)),
        ("1W", &monday),
        ("1M", &month),
    ];
    for (resolution, start_of) in cases {
        let (status, answer) = history(&format!("symbol=BTC-USD&resolution={resolution}&from=0&to={LATER}"));
        assert_eq!(status, 200, "{resolution}: {answer}");
        let expected = expected_bars(&rows, start_of, resolution == "1T");
        let got = answered_bars(&answer);
        assert!(same_bars(&got, &expected), "{resolution}: {got:?} != {expected:?}");
    }
    let minutes = expected_bars(&rows, &every(60), false);
    assert!(minutes.len() >= 3 && minutes.iter().any(|b| b.2 != b.3), "bars, one with several prices: {minutes:?}");
    let days = answered_bars(&history(&format!("symbol=BTC-USD&resolution=1D&from=0&to={LATER}")).1);
    assert!(days.len() >= 2, "fills two days apart: {days:?}");
    // Another symbol's bars are its own.
    assert_eq!(history(&format!("symbol=ETH-USD&resolution=1&from=0&to={LATER}")).1, json!({"s": "no_data"}));

    // The range: `from` included, `to` excluded, by bar start; countback ignores `from`.
    let range = |from: i64, to: i64, countback: &str| {
        let (status, answer) = history(&format!("symbol=BTC-USD&resolution=1&from={from}&to={to}{countback}"));
        assert_eq!(status, 200, "{answer}");
        answer
    };
    let (first, last) = (minutes[0].0, minutes.last().unwrap().0);
    assert!(same_bars(&answered_bars(&range(first, first + 60, "")), &minutes[..1]));
    assert!(same_bars(&answered_bars(&range(first + 1, LATER, "")), &minutes[1..]), "from after the first bar's start");
    assert_eq!(range(0, first, ""), json!({"s": "no_data"}), "to is excluded");
    assert_eq!(range(last + 1, LATER, ""), json!({"s": "no_data"}), "UDF's answer for an empty range");
    assert!(same_bars(&answered_bars(&range(LATER, LATER, "&countback=1")), &minutes[minutes.len() - 1..]));
    assert!(same_bars(&answered_bars(&range(last, last + 1, "&countback=2")), &minutes[minutes.len() - 2..]));
    assert!(same_bars(&answered_bars(&range(0, LATER, "&countback=99999999")), &minutes), "capped, not refused");
}

#[test]
fn kline_history_refuses_bad_parameters_by_name() {
    let sb = sandbox();
    let cases = [
        ("resolution=1&from=0&to=10", "query parameter symbol is required"),
        ("symbol=DOGE-USD&resolution=1&from=0&to=10", "invalid symbol DOGE-USD"),
        ("symbol=BTC-USD&from=0&to=10", "query parameter resolution is required"),
        (
            "symbol=BTC-USD&resolution=30&from=0&to=10",
            "query parameter resolution must be one of 1T, 3S, 1, 5, 15, 60, 1D, 1W, 1M, not \"30\"",
        ),
        (
            "symbol=BTC-USD&resolution=1m&from=0&to=10",
            "query parameter resolution must be one of 1T, 3S, 1, 5, 15, 60, 1D, 1W, 1M, not \"1m\"",
        ),
        ("symbol=BTC-USD&resolution=1&to=10", "query parameter from is required"),
        ("symbol=BTC-USD&resolution=1&from=0", "query parameter to is required"),
        ("symbol=BTC-USD&resolution=1&from=abc&to=10", "query parameter from must be an integer, not \"abc\""),
        ("symbol=BTC-USD&resolution=1&from=-5&to=10", "query parameter from must be an integer, not \"-5\""),
        ("symbol=BTC-USD&resolution=1&from=1.5&to=10", "query parameter from must be an integer, not \"1.5\""),
        ("symbol=BTC-USD&resolution=1&from=20&to=10", "query parameter from (20) is after to (10)"),
        ("symbol=BTC-USD&resolution=1&from=0&to=10&countback=0", "query parameter countback must be an integer from 1"),
        (
            "symbol=BTC-USD&resolution=1&from=0&to=10&countback=x",
            "query parameter countback must be an integer, not \"x\"",
        ),
    ];
    for (query, expected) in cases {
        let (status, answer) = public(&sb, &format!("/api/kline/history?{query}"));
        assert_eq!((status, message(&answer)), (400, expected.to_owned()), "{query}: {answer}");
    }
    // Equal bounds are an empty range, not an error.
    assert_eq!(public(&sb, "/api/kline/history?symbol=BTC-USD&resolution=1D&from=10&to=10").0, 200);
}
