//! Every REST endpoint of the trading loop: the documented shapes (venue-api.md §1), the
//! venue's refusals and status codes, and the query-parameter checks.

mod common;

use common::{Trader, exchange, limit, num, sandbox};
use perps_sandbox::{CancelOrdersAnswer, Sandbox, SandboxConfig, SymbolSpec};
use serde_json::{Value, json};

fn public(sb: &Sandbox, path: &str) -> (u16, Value) {
    exchange(&common::agent(), "GET", &format!("{}{path}", sb.url()), &[], "")
}

fn message(answer: &Value) -> &str {
    answer["message"].as_str().unwrap_or_else(|| panic!("no message: {answer}"))
}

#[test]
fn public_market_data_needs_no_token() {
    let sb = sandbox();
    let (status, all) = public(&sb, "/api/query_symbol_info");
    assert_eq!(status, 200);
    let names: Vec<&str> = all.as_array().unwrap().iter().map(|s| s["symbol"].as_str().unwrap()).collect();
    assert_eq!(names, ["BTC-USD", "ETH-USD", "XAG-USD"]);
    let (_, one) = public(&sb, "/api/query_symbol_info?symbol=BTC-USD");
    let btc = &one[0];
    assert_eq!(one.as_array().unwrap().len(), 1);
    assert_eq!((&btc["price_tick_decimals"], &btc["qty_tick_decimals"]), (&json!(2), &json!(4)));
    assert_eq!(
        (&btc["min_order_qty"], &btc["max_open_orders"], &btc["quote_asset"]),
        (&json!("0.0001"), &json!("100"), &json!("DUSD"))
    );
    assert_eq!(
        (&btc["enabled"], &btc["status"], &btc["maker_fee"], &btc["taker_fee"]),
        (&json!(true), &json!("trading"), &json!("0.0001"), &json!("0.0004"))
    );
    assert!(btc["created_at"].as_str().unwrap().ends_with('Z') && btc.get("sandbox").is_none());
    let (status, answer) = public(&sb, "/api/query_symbol_info?symbol=DOGE-USD");
    assert!(status == 400 && message(&answer).contains("invalid symbol"), "{answer}");

    let (status, price) = public(&sb, "/api/query_symbol_price?symbol=BTC-USD");
    assert_eq!(status, 200);
    assert_eq!(
        (&price["mark_price"], &price["index_price"], &price["last_price"]),
        (&json!("65000.00"), &json!("65000.00"), &Value::Null)
    );
    assert_eq!(
        (&price["spread_bid"], &price["spread_ask"], &price["mid_price"]),
        (&json!("64999.75"), &json!("65000.25"), &json!("65000.00"))
    );
    assert_eq!((&price["base"], &price["quote"]), (&json!("BTC"), &json!("DUSD")));
    let (status, answer) = public(&sb, "/api/query_symbol_price");
    assert!(status == 400 && message(&answer).contains("symbol"), "{answer}");

    let (status, time) = public(&sb, "/api/kline/time");
    assert!(status == 200 && time.as_i64().is_some(), "a bare integer: {time}");
    assert_eq!(public(&sb, "/api/health"), (200, json!("OK")));
    // The prefixed layout of earlier versions still answers.
    assert_eq!(public(&sb, "/perps/api/query_symbol_price?symbol=ETH-USD").1["mark_price"], "3000.00");
}

#[test]
fn the_depth_book_is_served_unsorted_with_string_levels() {
    let sb = sandbox();
    let (status, depth) = public(&sb, "/api/query_depth_book?symbol=XAG-USD");
    assert_eq!((status, &depth["symbol"]), (200, &json!("XAG-USD")));
    for side in ["asks", "bids"] {
        let levels = depth[side].as_array().unwrap();
        assert_eq!(levels.len(), 10);
        assert!(levels.iter().all(|l| l[0].is_string() && l[1].is_string()), "{side}: [price, qty] strings");
        let prices: Vec<f64> = levels.iter().map(|l| num(&l[0])).collect();
        let (mut up, mut down) = (prices.clone(), prices.clone());
        up.sort_by(f64::total_cmp);
        down.sort_by(|a, b| b.total_cmp(a));
        assert!(prices != up && prices != down, "{side} must not come sorted: {prices:?}");
    }
    // The bids straddle 100: sorting the strings is not sorting the prices.
    let bids: Vec<String> =
        depth["bids"].as_array().unwrap().iter().map(|l| l[0].as_str().unwrap().to_owned()).collect();
    let mut by_text = bids.clone();
    by_text.sort();
    let mut by_value = bids.clone();
    by_value.sort_by(|a, b| a.parse::<f64>().unwrap().total_cmp(&b.parse().unwrap()));
    assert_ne!(by_text, by_value, "{bids:?}");
    assert!(bids.contains(&"99.95".to_owned()) && bids.contains(&"100.04".to_owned()));
    // `limit` is sent by live clients (undocumented): accepted, levels per side.
    let (status, five) = public(&sb, "/api/query_depth_book?symbol=BTC-USD&limit=5");
    assert_eq!((status, five["asks"].as_array().unwrap().len()), (200, 5));
    // An unknown parameter is ignored (strict mode names it: tests/documented_venue.rs).
    let (status, ten) = public(&sb, "/api/query_depth_book?symbol=BTC-USD&depth=5");
    assert_eq!((status, ten["asks"].as_array().unwrap().len()), (200, 10), "{ten}");
    // A user's resting order shows in the book.
    let t = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.25", "65000", "gtc", "in-book"));
    let (_, depth) = public(&sb, "/api/query_depth_book?symbol=BTC-USD");
    assert!(depth["bids"].as_array().unwrap().contains(&json!(["65000.00", "0.2500"])), "{depth}");
}

#[test]
fn the_order_object_has_the_documented_shape() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.01", "65000", "gtc", "shape-1"));
    let o = t.order_by_cl("shape-1");
    let id = o["id"].as_u64().unwrap();
    assert!(id > 1 << 32, "venue ids exceed 2^32: {id}");
    for (field, value) in [
        ("symbol", "BTC-USD"),
        ("side", "buy"),
        ("order_type", "limit"),
        ("time_in_force", "gtc"),
        ("status", "open"),
        ("price", "65000.00"),
        ("qty", "0.0100"),
        ("fill_qty", "0.0000"),
        ("leverage", "10"),
        ("source", "user"),
        ("cl_ord_id", "shape-1"),
    ] {
        assert_eq!(o[field], value, "{field}: {o}");
    }
    for field in ["fill_avg_price", "margin", "avail_locked", "remark", "user"] {
        assert!(o[field].is_string(), "{field}: {o}");
    }
    assert_eq!(
        (&o["reduce_only"], &o["payload"], &o["created_block"], &o["liq_id"]),
        (&json!(false), &Value::Null, &json!(-1), &json!(0))
    );
    assert!(o["position_id"].is_u64() && o.get("order_id").is_none());
    let created = o["created_at"].as_str().unwrap();
    assert!(created.len() == 27 && created.ends_with('Z') && &created[10..11] == "T", "µs ISO 8601: {created}");
    assert!(o["user"].as_str().unwrap().starts_with("apikey_"));
    let (status, by_id) = t.get(&format!("/api/query_order?order_id={id}"));
    assert_eq!((status, &by_id), (200, &o));
    // Without cl_ord_id the venue generates a ULID-like one (26 characters).
    t.order(json!({"symbol":"ETH-USD","side":"sell","order_type":"limit","qty":"0.1","price":"3100","time_in_force":"gtc","reduce_only":false}));
    let (_, open) = t.get("/api/query_open_orders?symbol=ETH-USD");
    let generated = open["result"][0]["cl_ord_id"].as_str().unwrap();
    assert!(generated.len() == 26 && generated.bytes().all(|b| b.is_ascii_alphanumeric()), "{generated}");
}

#[test]
fn orders_breaking_the_symbol_rules_are_refused() {
    let mut symbols = SymbolSpec::defaults();
    symbols[1].enabled = false;
    let sb = Sandbox::start(SandboxConfig { symbols, ..Default::default() }).unwrap();
    let t = Trader::with_api_key(&sb);
    let cases = [
        (limit("DOGE-USD", "buy", "1", "1", "gtc", "x"), "invalid symbol DOGE-USD"),
        (limit("ETH-USD", "buy", "1", "3000", "gtc", "x"), "symbol ETH-USD is disabled"),
        (limit("BTC-USD", "buy", "0.01", "65000.005", "gtc", "x"), "not follow price tick"),
        (limit("BTC-USD", "buy", "0.01", "65000.0000000000001", "gtc", "x"), "not follow price tick"),
        (limit("BTC-USD", "buy", "0.00015", "65000", "gtc", "x"), "invalid order qty"),
        (limit("BTC-USD", "buy", "0.00001", "65000", "gtc", "x"), "invalid order qty"),
        (limit("BTC-USD", "buy", "100.0001", "65000", "gtc", "x"), "invalid order qty"),
        (limit("XAG-USD", "buy", "0.05", "100", "gtc", "x"), "invalid order qty 0.05: below the minimum 0.1"),
        (
            json!({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":0.01,"price":"65000","time_in_force":"gtc","reduce_only":false}),
            "qty",
        ),
        (
            json!({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","reduce_only":false}),
            "time_in_force is required",
        ),
        (
            json!({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false,"postOnly":true}),
            "unknown field postOnly",
        ),
    ];
    for (order, expected) in cases {
        let (status, answer) = t.post("/api/new_order", &order.to_string());
        assert_eq!(status, 400, "{order}: {answer}");
        assert!(message(&answer).contains(expected), "{order}: {answer} lacks {expected:?}");
    }
    let stats = sb.stats();
    assert_eq!((stats.orders_received, stats.orders_accepted), (11, 0));
    let (_, all) = t.get("/api/query_orders");
    assert_eq!(all["total"], 0, "a refused order leaves no trace");
}

#[test]
fn cancels_by_id_and_client_id_and_404_for_gone_orders() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.01", "64000", "gtc", "c-1"));
    t.order(limit("BTC-USD", "buy", "0.01", "64001", "gtc", "c-2"));
    let id1 = t.order_by_cl("c-1")["id"].as_u64().unwrap();
    let (status, answer) = t.post("/api/cancel_order", &json!({"order_id": id1}).to_string());
    assert_eq!((status, &answer["code"], &answer["message"]), (200, &json!(0), &json!("success")));
    assert!(answer["request_id"].is_string());
    assert_eq!(t.order_by_cl("c-1")["status"], "canceled");
    let (status, answer) = t.post("/api/cancel_order", &json!({"order_id": id1}).to_string());
    assert_eq!((status, message(&answer)), (404, "order not found"));
    assert_eq!(t.post("/api/cancel_order", r#"{"cl_ord_id":"c-2"}"#).0, 200);
    assert_eq!(t.post("/api/cancel_order", r#"{"cl_ord_id":"c-2"}"#).0, 404);
    assert_eq!(t.post("/api/cancel_order", r#"{"order_id":1}"#).0, 404);
    // A filled order is gone too; another account's order is not found.
    t.order(limit("BTC-USD", "buy", "0.01", "65001", "gtc", "filled"));
    assert_eq!(t.order_by_cl("filled")["status"], "filled");
    assert_eq!(t.post("/api/cancel_order", r#"{"cl_ord_id":"filled"}"#).0, 404);
    let other = Trader::with_api_key(&sb);
    t.order(limit("BTC-USD", "buy", "0.01", "64000", "gtc", "mine"));
    assert_eq!(other.post("/api/cancel_order", r#"{"cl_ord_id":"mine"}"#).0, 404);
    assert_eq!(other.get("/api/query_order?cl_ord_id=mine").0, 404);
    for bad in [r#"{}"#, r#"{"order_id":"12"}"#, r#"{"order_id":-1}"#, r#"{"id":1}"#] {
        assert_eq!(t.post("/api/cancel_order", bad).0, 400, "{bad}");
    }
    let (status, answer) = t.get("/api/query_order?order_id=12345678901");
    assert_eq!((status, message(&answer)), (404, "order not found"));
    assert_eq!(t.get("/api/query_order").0, 400);
    assert_eq!(t.get("/api/query_order?order_id=abc").0, 400);
}

#[test]
fn cancel_orders_gives_either_documented_answer() {
    for (answer_kind, expected) in
        [(CancelOrdersAnswer::Envelope, None), (CancelOrdersAnswer::EmptyArray, Some(json!([])))]
    {
        let sb = Sandbox::start(SandboxConfig { cancel_orders_answer: answer_kind, ..Default::default() }).unwrap();
        let t = Trader::with_api_key(&sb);
        for i in 0..4 {
            t.order(limit("ETH-USD", "buy", "0.01", &format!("290{i}"), "gtc", &format!("b-{i}")));
        }
        let id0 = t.order_by_cl("b-0")["id"].clone();
        let body = json!({"order_id_list": [id0, 1], "cl_ord_id_list": ["b-1", "b-2", "nope"]}).to_string();
        let (status, answer) = t.post("/api/cancel_orders", &body);
        assert_eq!(status, 200);
        match &expected {
            Some(array) => assert_eq!(&answer, array),
            None => assert_eq!((&answer["code"], &answer["message"]), (&json!(0), &json!("success"))),
        }
        let (_, open) = t.get("/api/query_open_orders");
        assert_eq!((&open["total"], &open["result"][0]["cl_ord_id"]), (&json!(1), &json!("b-3")));
        for i in 0..3 {
            assert_eq!(t.order_by_cl(&format!("b-{i}"))["status"], "canceled");
        }
        assert_eq!(t.post("/api/cancel_orders", r#"{}"#).0, 400);
        assert_eq!(t.post("/api/cancel_orders", r#"{"order_id_list":["1"]}"#).0, 400);
    }
}

#[test]
fn query_parameters_are_checked_by_name() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let cases = [
        ("/api/query_orders?limit=501", "limit"),
        ("/api/query_orders?limit=0", "limit"),
        ("/api/query_orders?status=cancelled", "status"),
        ("/api/query_orders?start=yesterday", "start"),
        ("/api/query_orders?last_id=-5", "last_id"),
        ("/api/query_open_orders?limit=1201", "limit"),
        ("/api/query_trades?side=BUY", "side"),
        ("/api/query_trades?end=2025-13-01T00:00:00Z", "end"),
        ("/api/query_position_config", "symbol"),
        ("/api/query_orders?symbol=BTC-USD&symbol=ETH-USD", "repeated"),
        ("/api/query_orders?symbol=DOGE-USD", "invalid symbol"),
    ];
    for (path, named) in cases {
        let (status, answer) = t.get(path);
        assert_eq!(status, 400, "{path}: {answer}");
        assert!(message(&answer).contains(named), "{path}: {answer} does not name {named}");
    }
    for ok in [
        "/api/query_orders?limit=500&start=2025-08-11T03:35:25.559151Z&end=2099-01-01T00:00:00%2B00:00",
        "/api/query_open_orders?limit=1200&symbol=",
        "/api/query_trades?symbol=XAG-USD&side=sell&limit=1",
        "/api/query_positions",
        "/api/query_balance",
        // Unknown parameters are ignored (strict mode refuses them: tests/documented_venue.rs).
        "/api/query_orders?symbol=BTC-USD&from=2025-01-01T00:00:00Z",
        "/api/query_positions?symbol=BTC-USD&side=long",
        "/api/query_balance?currency=DUSD",
    ] {
        assert_eq!(t.get(ok).0, 200, "{ok}");
    }
    let (_, balance) = t.get("/api/query_balance");
    for field in [
        "isolated_balance",
        "isolated_upnl",
        "cross_balance",
        "cross_margin",
        "cross_upnl",
        "locked",
        "cross_available",
        "balance",
        "upnl",
        "equity",
        "pnl_freeze",
        "pnl_24h",
    ] {
        assert!(balance[field].is_string(), "{field}: {balance}");
    }
    assert_eq!(t.get("/api/query_positions").1, json!([]));
}

#[test]
fn tokens_methods_and_unknown_paths() {
    let sb = sandbox();
    for path in ["/api/query_open_orders", "/api/query_balance", "/api/query_positions"] {
        let (status, answer) = public(&sb, path);
        assert!(status == 401 && message(&answer).contains("bearer"), "{path}: {answer}");
    }
    let agent = common::agent();
    let bogus = [("Authorization".to_owned(), "Bearer not-a-token".to_owned())];
    assert_eq!(exchange(&agent, "GET", &format!("{}/api/query_balance", sb.url()), &bogus, "").0, 401);
    assert_eq!(exchange(&agent, "POST", &format!("{}/api/query_balance", sb.url()), &[], "{}").0, 405);
    assert_eq!(exchange(&agent, "GET", &format!("{}/api/new_order", sb.url()), &[], "").0, 405);
    assert_eq!(public(&sb, "/api/cancel_all").0, 404, "an endpoint the venue does not have");
    assert_eq!(public(&sb, "/perps/v1/offchain/certs").0, 404);
    assert_eq!(public(&sb, "/v1/offchain/certs").0, 200);
    assert_eq!(public(&sb, "/auth/v1/offchain/certs").0, 200);
    // A token that expired is refused with 401, on the venue clock.
    let credential = sb.issue_api_key(Some(60)).unwrap();
    let bearer = [("Authorization".to_owned(), format!("Bearer {}", credential.token))];
    let url = format!("{}/api/query_balance", sb.url());
    assert_eq!(exchange(&agent, "GET", &url, &bearer, "").0, 200);
    sb.set_clock_offset_ms(61_000);
    let (status, answer) = exchange(&agent, "GET", &url, &bearer, "");
    assert!(status == 401 && message(&answer).contains("expired"), "{answer}");
}

#[test]
fn the_rate_limit_is_per_account_and_counted() {
    let sb = Sandbox::start(SandboxConfig { rate_limit: true, ..Default::default() }).unwrap();
    let (a, b) = (Trader::with_api_key(&sb), Trader::with_api_key(&sb));
    let started = std::time::Instant::now();
    let statuses: Vec<u16> = (0..30).map(|_| a.get("/api/query_open_orders").0).collect();
    let limited = statuses.iter().filter(|s| **s == 429).count();
    // Burst 900 / 45 = 20 at once; then 1,000 credits/s refill one request every 45 ms.
    assert!(statuses[..20].iter().all(|s| *s == 200), "{statuses:?}");
    assert!(limited <= 10, "{statuses:?}");
    if started.elapsed() < std::time::Duration::from_millis(200) {
        assert!(limited >= 5, "30 requests in under 200 ms: {statuses:?}");
    }
    assert_eq!(sb.stats().rate_limited, limited as u64);
    assert_eq!(b.get("/api/query_open_orders").0, 200, "another account has its own bucket");
    let (status, answer) = a.post("/api/new_order", &limit("BTC-USD", "buy", "0.01", "60000", "gtc", "x").to_string());
    assert!(status == 429 || status == 200, "{answer}");
    assert_eq!(public(&sb, "/api/query_symbol_price?symbol=BTC-USD").0, 200, "public endpoints take no credits");
}

#[test]
fn the_rate_limit_is_fifty_requests_a_second_per_ip_on_every_endpoint() {
    let sb = Sandbox::start(SandboxConfig { rate_limit: true, ..Default::default() }).unwrap();
    let trader = Trader::with_api_key(&sb);
    let started = std::time::Instant::now();
    let statuses: Vec<u16> = (0..120).map(|_| public(&sb, "/api/query_symbol_price?symbol=BTC-USD").0).collect();
    let elapsed = started.elapsed().as_secs_f64();
    let passed = statuses.iter().filter(|s| **s == 200).count();
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(passed + limited, 120, "{statuses:?}");
    // A burst of 50, then one more every 20 ms.
    assert!(statuses[..50].iter().all(|s| *s == 200), "{statuses:?}");
    assert!(passed as f64 <= 51.0 + 50.0 * elapsed, "{passed} passed in {elapsed} s: {statuses:?}");
    if elapsed < 1.0 {
        assert!(limited >= 10, "120 requests in {elapsed} s: {statuses:?}");
    }
    let stats = sb.stats();
    assert_eq!((stats.rate_limited_by_ip, stats.rate_limited), (limited as u64, 0));
    // Account endpoints and sign-in count too: a burst of each meets the address's limit
    // (one request comes back every 20 ms, so a single request right after the spend could
    // pass on a slow machine); the answer says which limit.
    let refused_by_ip =
        |answers: &[(u16, Value)]| answers.iter().any(|(s, a)| *s == 429 && message(a).contains("IP address"));
    let account: Vec<_> = (0..60).map(|_| trader.get("/api/query_open_orders")).collect();
    assert!(refused_by_ip(&account), "{account:?}");
    let certs = format!("{}/v1/offchain/certs", sb.url());
    let sign_in: Vec<_> = (0..60).map(|_| exchange(&common::agent(), "GET", &certs, &[], "")).collect();
    assert!(refused_by_ip(&sign_in), "{sign_in:?}");
    // Refilled after a second.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(trader.get("/api/query_open_orders").0, 200);
    // Without `rate_limit`, no limit at all.
    let open = sandbox();
    assert!((0..120).all(|_| public(&open, "/api/query_symbol_price?symbol=BTC-USD").0 == 200));
    assert_eq!(open.stats().rate_limited_by_ip, 0);
}
