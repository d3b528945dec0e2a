//! Matching against the synthetic market, checked from the outside: the book is read with
//! `query_depth_book` (and sorted here, as a client must), orders are sent signed by hand,
//! and the fills, order states, trades, positions and balance are checked against what
//! that book implies.

mod common;

use common::{Trader, close, limit, num, sandbox};
use serde_json::{Value, json};

/// (price, qty) levels of one side.
type Levels = Vec<(f64, f64)>;

/// The served book of `symbol`, sorted here: (asks low → high, bids high → low), as f64 pairs.
fn book(t: &Trader, symbol: &str) -> (Levels, Levels) {
    let (status, depth) = t.get(&format!("/api/query_depth_book?symbol={symbol}"));
    assert_eq!(status, 200, "{depth}");
    let side = |k: &str| -> Levels { depth[k].as_array().unwrap().iter().map(|l| (num(&l[0]), num(&l[1]))).collect() };
    let (mut asks, mut bids) = (side("asks"), side("bids"));
    asks.sort_by(|a, b| a.0.total_cmp(&b.0));
    bids.sort_by(|a, b| b.0.total_cmp(&a.0));
    (asks, bids)
}

fn trades(t: &Trader, query: &str) -> Vec<Value> {
    let (status, page) = t.get(&format!("/api/query_trades?{query}"));
    assert_eq!(status, 200, "{page}");
    page["result"].as_array().unwrap().clone()
}

fn open_cl_ids(t: &Trader) -> Vec<String> {
    let (status, page) = t.get("/api/query_open_orders");
    assert_eq!(status, 200, "{page}");
    page["result"].as_array().unwrap().iter().map(|o| o["cl_ord_id"].as_str().unwrap().to_owned()).collect()
}

fn fmt4(x: f64) -> String {
    format!("{x:.4}")
}

#[test]
fn a_crossing_limit_walks_the_levels_and_rests_the_rest() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let (asks, _) = book(&t, "BTC-USD");
    let (a1, a2) = (asks[0], asks[1]);
    assert!(a1.0 > 65000.0, "an order at the mark does not cross: best ask {}", a1.0);

    // All of level 1 and half of level 2, limit at level 2: filled, two trades.
    let half = (a2.1 / 2.0 * 10_000.0).floor() / 10_000.0;
    let qty = a1.1 + half;
    t.order(limit("BTC-USD", "buy", &fmt4(qty), &format!("{:.2}", a2.0), "gtc", "walk-1"));
    let o = t.order_by_cl("walk-1");
    assert_eq!(o["status"], "filled");
    assert!(close(num(&o["fill_qty"]), qty), "{o}");
    let avg = (a1.0 * a1.1 + a2.0 * half) / qty;
    assert!((num(&o["fill_avg_price"]) - avg).abs() < 0.01, "{o} vs {avg}");
    let fills = trades(&t, "symbol=BTC-USD");
    assert_eq!(fills.len(), 2);
    // Newest first: level 2 then level 1; taker fee 4 bp of the value.
    for (fill, (price, q)) in fills.iter().zip([(a2.0, half), (a1.0, a1.1)]) {
        assert!(num(&fill["price"]) == price && close(num(&fill["qty"]), q), "{fill}");
        assert_eq!(fill["order_id"], o["id"]);
        assert!(close(num(&fill["fee_qty"]), price * q * 0.0004), "{fill}");
        assert_eq!(fill["fee_asset"], "DUSD");
    }
    let (asks_after, _) = book(&t, "BTC-USD");
    assert_eq!(asks_after[0].0, a2.0, "level 1 was taken");
    assert!(close(asks_after[0].1, a2.1 - half));

    // The rest of level 2 and one lot more: a partial fill that rests (open, fill_qty > 0).
    let qty = a2.1 - half + 0.0001;
    t.order(limit("BTC-USD", "buy", &fmt4(qty), &format!("{:.2}", a2.0), "gtc", "walk-2"));
    let o = t.order_by_cl("walk-2");
    assert_eq!(o["status"], "open");
    assert!(close(num(&o["fill_qty"]), a2.1 - half), "{o}");
    assert!(open_cl_ids(&t).contains(&"walk-2".to_owned()));
    let p = t.position("BTC-USD").unwrap();
    assert!(close(num(&p["qty"]), a1.1 + a2.1), "{p}");
}

#[test]
fn alo_that_would_cross_is_accepted_then_rejected() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let (asks, bids) = book(&t, "ETH-USD");
    let answer = t.order(limit("ETH-USD", "buy", "0.5", &format!("{:.2}", asks[0].0), "alo", "alo-cross"));
    assert_eq!(answer["message"], "success", "REST accepts: the rejection comes from matching");
    let o = t.order_by_cl("alo-cross");
    assert_eq!((o["status"].as_str(), o["remark"].as_str()), (Some("rejected"), Some("alo order rejected")));
    assert_eq!(num(&o["fill_qty"]), 0.0);
    // An alo that does not cross rests.
    t.order(limit("ETH-USD", "sell", "0.5", &format!("{:.2}", asks[0].0), "alo", "alo-rest"));
    t.order(limit("ETH-USD", "buy", "0.5", &format!("{:.2}", bids[0].0), "alo", "alo-bid"));
    assert_eq!(open_cl_ids(&t), ["alo-bid", "alo-rest"]);
    assert!(trades(&t, "").is_empty());
}

#[test]
fn ioc_fills_what_crosses_and_cancels_the_rest() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let (_, bids) = book(&t, "BTC-USD");
    let qty = bids[0].1 + 0.5;
    t.order(limit("BTC-USD", "sell", &fmt4(qty), &format!("{:.2}", bids[0].0), "ioc", "ioc-1"));
    let o = t.order_by_cl("ioc-1");
    assert_eq!(o["status"], "canceled");
    assert!(close(num(&o["fill_qty"]), bids[0].1), "{o}");
    // Not crossing at all: canceled, nothing filled; never resting.
    t.order(limit("BTC-USD", "sell", "0.01", "70000", "ioc", "ioc-2"));
    let o = t.order_by_cl("ioc-2");
    assert_eq!((o["status"].as_str(), num(&o["fill_qty"])), (Some("canceled"), 0.0));
    assert!(open_cl_ids(&t).is_empty());
    let p = t.position("BTC-USD").unwrap();
    assert!(close(num(&p["qty"]), -bids[0].1), "short what was sold: {p}");
}

#[test]
fn market_orders_fill_at_the_book_and_never_rest() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let (_, bids) = book(&t, "XAG-USD");
    let qty = bids[0].1 + bids[1].1 + bids[2].1 / 2.0;
    let qty = (qty * 100.0).floor() / 100.0;
    // Without time_in_force, as a live client sent it.
    let body = json!({"symbol":"XAG-USD","side":"sell","order_type":"market","qty":format!("{qty:.2}"),
                      "reduce_only":false,"cl_ord_id":"mkt-1"});
    t.order(body);
    let o = t.order_by_cl("mkt-1");
    assert_eq!(
        (o["status"].as_str(), o["time_in_force"].as_str(), o["order_type"].as_str()),
        (Some("filled"), Some("ioc"), Some("market"))
    );
    let prices: Vec<f64> = trades(&t, "symbol=XAG-USD").iter().rev().map(|f| num(&f["price"])).collect();
    assert_eq!(prices, [bids[0].0, bids[1].0, bids[2].0], "best bid first, three levels");
    // A market order bigger than the whole book fills the book and cancels the rest.
    let (asks, _) = book(&t, "XAG-USD");
    let book_qty: f64 = asks.iter().map(|l| l.1).sum();
    t.order(json!({"symbol":"XAG-USD","side":"buy","order_type":"market","qty":"9999","time_in_force":"ioc",
                   "reduce_only":false,"cl_ord_id":"mkt-2"}));
    let o = t.order_by_cl("mkt-2");
    assert_eq!(o["status"], "canceled");
    assert!(close(num(&o["fill_qty"]), book_qty), "{o}");
    assert!(open_cl_ids(&t).is_empty());
}

#[test]
fn resting_orders_fill_when_the_mark_reaches_them() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.01", "64990", "gtc", "bid"));
    t.order(limit("BTC-USD", "sell", "0.02", "65010.50", "gtc", "ask"));
    sb.set_mark("BTC-USD", "64995").unwrap();
    assert_eq!(t.order_by_cl("bid")["status"], "open", "not reached yet");
    sb.set_mark("BTC-USD", "64990").unwrap();
    let bid = t.order_by_cl("bid");
    assert_eq!((bid["status"].as_str(), num(&bid["fill_avg_price"])), (Some("filled"), 64990.0));
    let fill = &trades(&t, "")[0];
    assert!(close(num(&fill["fee_qty"]), 64990.0 * 0.01 * 0.0001), "maker fee 1 bp: {fill}");
    // Over HTTP, as a rehearsal would move it.
    let admin = format!("{}/mark", sb.admin_url());
    let (status, _) = common::exchange(&t.agent, "POST", &admin, &[], r#"{"symbol":"BTC-USD","price":"65011"}"#);
    assert_eq!(status, 200);
    assert_eq!(t.order_by_cl("ask")["status"], "filled");
    let p = t.position("BTC-USD").unwrap();
    assert!(close(num(&p["qty"]), -0.01), "{p}");
    assert!(sb.set_mark("BTC-USD", "65011.001").unwrap_err().contains("not follow price tick"));
    assert!(sb.set_mark("DOGE-USD", "1").unwrap_err().contains("invalid symbol"));
}

#[test]
fn positions_pnl_fees_and_balance_follow_the_fills() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    assert!(t.position("BTC-USD").is_none());
    assert_eq!(t.balance()["balance"], "100000.000000000");
    // Long 0.1 at 64000 (maker fill when the mark reaches it).
    t.order(limit("BTC-USD", "buy", "0.1", "64000", "gtc", "open-long"));
    sb.set_mark("BTC-USD", "64000").unwrap();
    sb.set_mark("BTC-USD", "65000").unwrap();
    let p = t.position("BTC-USD").unwrap();
    assert_eq!((num(&p["qty"]), num(&p["entry_price"]), num(&p["mark_price"])), (0.1, 64000.0, 65000.0));
    assert!(close(num(&p["upnl"]), 100.0) && close(num(&p["position_value"]), 6500.0), "{p}");
    assert_eq!((p["leverage"].as_str(), p["margin_mode"].as_str()), (Some("10"), Some("cross")));
    let fee1 = 6400.0 * 0.0001;
    let b = t.balance();
    assert!(close(num(&b["balance"]), 100_000.0 - fee1), "{b}");
    assert!(close(num(&b["upnl"]), 100.0) && close(num(&b["equity"]), 100_100.0 - fee1), "{b}");
    assert!(close(num(&b["cross_margin"]), 650.0), "{b}");
    assert!(close(num(&b["cross_available"]), 100_000.0 - fee1 - 650.0 + 100.0), "{b}");

    // Sell 0.04 at 66000: realises 0.04 × 2000 = 80.
    t.order(limit("BTC-USD", "sell", "0.04", "66000", "gtc", "reduce"));
    sb.set_mark("BTC-USD", "66000").unwrap();
    let fill = &trades(&t, "side=sell")[0];
    assert!(close(num(&fill["pnl"]), 80.0) && close(num(&fill["value"]), 2640.0), "{fill}");
    // Sell 0.1 more at 66000 (a touch fill): closes 0.06 (+120) and opens a short of 0.04.
    t.order(limit("BTC-USD", "sell", "0.1", "66000", "gtc", "flip"));
    sb.set_mark("BTC-USD", "66000").unwrap();
    let p = t.position("BTC-USD").unwrap();
    assert_eq!((num(&p["qty"]), num(&p["entry_price"])), (-0.04, 66000.0));
    assert!(close(num(&p["realized_pnl"]), 200.0), "{p}");
    sb.set_mark("BTC-USD", "65500").unwrap();
    assert!(close(num(&t.position("BTC-USD").unwrap()["upnl"]), 20.0), "a short gains when the mark falls");
    let fees = fee1 + 2640.0 * 0.0001 + 6600.0 * 0.0001;
    let b = t.balance();
    assert!(close(num(&b["balance"]), 100_000.0 + 200.0 - fees), "{b}");
    assert!(close(num(&b["pnl_freeze"]), 200.0), "{b}");
    // Trades and positions are per account.
    let other = Trader::with_api_key(&sb);
    assert!(other.position("BTC-USD").is_none() && trades(&other, "").is_empty());
    assert_eq!(other.balance()["balance"], "100000.000000000");
}

#[test]
fn lists_page_newest_first_toward_older_rows() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let start = common::now_ms();
    for i in 0..7 {
        t.order(limit("ETH-USD", "buy", "0.01", &format!("29{i}0"), "gtc", &format!("p-{i}")));
    }
    t.order(limit("BTC-USD", "buy", "0.01", "60000", "gtc", "p-btc"));
    let page = |q: &str| {
        let (status, page) = t.get(&format!("/api/query_orders?{q}"));
        assert_eq!(status, 200, "{page}");
        assert_eq!((&page["code"], &page["message"]), (&json!(0), &json!("success")));
        page
    };
    let first = page("symbol=ETH-USD&limit=3");
    assert_eq!((&first["page_size"], &first["total"]), (&json!(3), &json!(7)));
    let ids: Vec<u64> = first["result"].as_array().unwrap().iter().map(|o| o["id"].as_u64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    assert_eq!(first["result"][0]["cl_ord_id"], "p-6");
    let second = page(&format!("symbol=ETH-USD&limit=3&last_id={}", ids[2]));
    assert_eq!(second["result"][0]["cl_ord_id"], "p-3");
    let third = page(&format!("symbol=ETH-USD&limit=3&last_id={}", second["result"][2]["id"]));
    assert_eq!((&third["page_size"], &third["result"][0]["cl_ord_id"]), (&json!(1), &json!("p-0")));
    assert_eq!(page("limit=500")["total"], 8);
    assert_eq!(page("status=filled")["total"], 0);
    assert_eq!(page("status=open&order_type=limit")["total"], 8);
    assert_eq!(page("order_type=market")["total"], 0);
    let iso = |ms: u128| {
        let secs = (ms / 1000) as i64;
        // Seconds precision, as [WJ] sends start/end.
        let (days, sod) = (secs / 86_400, secs % 86_400);
        let (y, m, d) = civil(days);
        format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", sod / 3600, sod / 60 % 60, sod % 60)
    };
    assert_eq!(page(&format!("start={}", iso(start - 2000)))["total"], 8);
    assert_eq!(page(&format!("end={}", iso(start - 2000)))["total"], 0);
    let (status, open) = t.get("/api/query_open_orders?symbol=ETH-USD&limit=2");
    assert_eq!((status, &open["page_size"], &open["total"]), (200, &json!(2), &json!(7)));
    // Trades page the same way: the mark falls through 2960, 2950, 2940 (three fills).
    for i in 0..3 {
        sb.set_mark("ETH-USD", &format!("29{}0", 6 - i)).unwrap();
    }
    let (_, trades) = t.get("/api/query_trades?limit=2");
    assert_eq!((&trades["page_size"], &trades["total"]), (&json!(2), &json!(3)));
    let last = &trades["result"][1]["id"];
    let (_, older) = t.get(&format!("/api/query_trades?limit=500&last_id={last}"));
    assert_eq!(older["page_size"], 1);
    assert_eq!(num(&older["result"][0]["price"]), 2960.0, "the oldest fill");
    assert!(older["result"].as_array().unwrap().iter().all(|r| r["id"].as_u64() < last.as_u64()));
}

/// Days since 1970-01-01 → civil date (for ISO 8601 query values built by hand).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let (era, doe) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let (d, m) = (doy - (153 * mp + 2) / 5 + 1, if mp < 10 { mp + 3 } else { mp - 9 });
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[test]
fn reduce_only_leverage_and_margin_mode() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let reduce = |side: &str, qty: &str| {
        let body = json!({"symbol":"BTC-USD","side":side,"order_type":"limit","qty":qty,"price":"70000",
                          "time_in_force":"gtc","reduce_only":true});
        t.post("/api/new_order", &body.to_string())
    };
    let (status, answer) = reduce("sell", "0.01");
    assert_eq!(status, 400, "no position to reduce: {answer}");
    t.order(limit("BTC-USD", "buy", "0.05", "64000", "gtc", "long"));
    sb.set_mark("BTC-USD", "64000").unwrap();
    assert_eq!(reduce("sell", "0.03").0, 200);
    let (status, answer) = reduce("sell", "0.03");
    assert_eq!(status, 400, "0.05 held, 0.03 already pending: {answer}");
    assert_eq!(reduce("buy", "0.01").0, 400, "a buy does not reduce a long");

    let (status, config) = t.get("/api/query_position_config?symbol=BTC-USD");
    assert_eq!((status, config), (200, json!({"symbol":"BTC-USD","leverage":10,"margin_mode":"cross"})));
    assert_eq!(t.post("/api/change_leverage", r#"{"symbol":"BTC-USD","leverage":20}"#).0, 200);
    assert_eq!(t.get("/api/query_position_config?symbol=BTC-USD").1["leverage"], 20);
    assert_eq!(t.position("BTC-USD").unwrap()["leverage"], "20");
    let (status, answer) = t.post("/api/change_leverage", r#"{"symbol":"BTC-USD","leverage":41}"#);
    assert!(status == 400 && answer["message"].as_str().unwrap().contains("between 1 and 40"), "{answer}");
    let mut order = limit("BTC-USD", "buy", "0.01", "60000", "gtc", "lev");
    order["leverage"] = json!(10);
    let (status, answer) = t.post("/api/new_order", &order.to_string());
    assert!(status == 400 && answer["message"].as_str().unwrap().contains("does not match"), "{answer}");
    order["leverage"] = json!(20);
    assert_eq!(t.post("/api/new_order", &order.to_string()).0, 200);
    let (status, answer) = t.post("/api/change_margin_mode", r#"{"symbol":"BTC-USD","margin_mode":"isolated"}"#);
    assert_eq!(status, 400, "a position is open: {answer}");
    assert_eq!(t.post("/api/change_margin_mode", r#"{"symbol":"ETH-USD","margin_mode":"isolated"}"#).0, 200);
    assert_eq!(t.get("/api/query_position_config?symbol=ETH-USD").1["margin_mode"], "isolated");
    // An isolated position's margin moves from the cross balance to the isolated one.
    t.order(limit("ETH-USD", "buy", "1", "2900", "gtc", "iso"));
    sb.set_mark("ETH-USD", "2900").unwrap();
    let b = t.balance();
    assert!(close(num(&b["isolated_balance"]), 290.0), "{b}");
    assert!(close(num(&b["cross_balance"]) + num(&b["isolated_balance"]), num(&b["balance"])), "{b}");
}
