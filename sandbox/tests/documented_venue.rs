//! Where the sandbox was stricter than the documented venue (review of issue 17's
//! follow-up): unknown query parameters, zone-less ISO times, badly formed signatures (403,
//! not 400), JSON `null` for optional body fields. Each lenient answer here, and strict
//! mode's refusal where the sandbox keeps one.

mod common;

use common::ws::{Client, request, signed};
use common::{ORDER, Trader, message, now_ms, sandbox, signature_headers, strict};
use serde_json::json;

#[test]
fn unknown_query_parameters_are_ignored_and_logged() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    for path in [
        "/api/query_balance?limit=10",
        "/api/query_open_orders?page=2&limit=5",
        "/api/query_orders?page=1",
        "/api/query_positions?symbol=BTC-USD&page=1&page=2",
        "/api/query_trades?symbol=BTC-USD&offset=0",
        "/api/query_position_config?symbol=BTC-USD&x=1",
        "/api/query_symbol_price?symbol=BTC-USD&limit=1",
    ] {
        let (status, answer) = t.get(path);
        assert_eq!(status, 200, "{path}: {answer}");
    }
    let logged = sb.requests(20);
    assert!(logged.iter().any(|r| r["path"] == "/api/query_balance" && r["query"] == "limit=10"), "{logged:?}");
    // A known parameter is still checked.
    let (status, answer) = t.get("/api/query_orders?limit=abc&page=1");
    assert!(status == 400 && message(&answer).contains("limit"), "{answer}");

    let sb = strict();
    let t = Trader::with_api_key(&sb);
    let (status, answer) = t.get("/api/query_balance?limit=10");
    assert_eq!(status, 400, "{answer}");
    assert!(message(&answer).starts_with("unknown query parameter \"limit\""), "{answer}");
    assert!(message(&answer).ends_with("(strict mode)"), "{answer}");
    assert_eq!(t.get("/api/query_open_orders?page=2").0, 400);
}

#[test]
fn times_without_a_zone_are_utc() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    t.order(json!({"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.001","reduce_only":false}));
    let (status, all) = t.get("/api/query_trades?start=2020-01-01T00:00:00&end=2099-01-01T00:00:00.5");
    assert_eq!((status, &all["total"]), (200, &json!(1)), "{all}");
    let (status, none) = t.get("/api/query_orders?end=2020-01-01T00:00:00");
    assert_eq!((status, &none["total"]), (200, &json!(0)), "{none}");
    let (status, answer) = t.get("/api/query_trades?start=2020-01-01");
    assert!(status == 400 && message(&answer).contains("start"), "a date alone is still refused: {answer}");

    let sb = strict();
    let t = Trader::with_api_key(&sb);
    let (status, answer) = t.get("/api/query_trades?start=2020-01-01T00:00:00");
    assert!(status == 400 && message(&answer).contains("ISO 8601"), "{answer}");
    assert_eq!(t.get("/api/query_trades?start=2020-01-01T00:00:00Z").0, 200);
}

#[test]
fn a_badly_formed_signature_is_403_and_a_missing_one_400() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let send = |signature: Option<&str>| {
        let (id, ts) = (uuid::Uuid::new_v4().to_string(), now_ms().to_string());
        let mut headers = signature_headers(&t.key, &id, &ts, ORDER);
        headers.retain(|(k, _)| k != "x-request-signature");
        if let Some(s) = signature {
            headers.push(("x-request-signature".into(), s.into()));
        }
        headers.push(t.bearer());
        headers.push(("Content-Type".into(), "application/json".into()));
        common::exchange(&t.agent, "POST", &format!("{}/api/new_order", sb.url()), &headers, ORDER)
    };
    for bad in ["not base64!", "AAAA", "-_-_", &"A".repeat(88)] {
        let (status, answer) = send(Some(bad));
        assert_eq!(status, 403, "{bad}: {answer}");
        assert!(message(&answer).starts_with("invalid signature: "), "{answer}");
    }
    let (status, answer) = send(None);
    assert_eq!((status, message(&answer)), (400, "missing header x-request-signature".into()));

    // The ws-api answers the same.
    let mut c = Client::connect(&sb.ws_api_url());
    c.send(&request("s", "login", "auth:login", &json!({"token": t.token})));
    assert_eq!(c.next_json(std::time::Duration::from_secs(5)).unwrap()["code"], 0);
    let mut frame = signed("s", "bad-b64", "order:new", ORDER, &t.key);
    frame["header"]["x-request-signature"] = json!("not base64!");
    c.send(&frame);
    let answer = c.next_json(std::time::Duration::from_secs(5)).unwrap();
    assert_eq!(answer["code"], 403, "{answer}");
    assert!(message(&answer).starts_with("invalid signature: "), "{answer}");
}

#[test]
fn null_optional_fields_count_as_absent() {
    let sb = sandbox();
    let t = Trader::with_api_key(&sb);
    let market = json!({"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.001","price":null,
        "time_in_force":null,"reduce_only":false,"cl_ord_id":null,"leverage":null,"margin_mode":null,
        "tp_price":null,"sl_price":null});
    t.order(market.clone());
    let resting = json!({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.001","price":"60000",
        "time_in_force":"gtc","reduce_only":false,"cl_ord_id":"n1","leverage":null,"tp_price":null});
    t.order(resting);
    let (status, answer) = t.post("/api/cancel_order", &json!({"order_id": null, "cl_ord_id": "n1"}).to_string());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(t.order_by_cl("n1")["status"], "canceled");
    t.order(json!({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.001","price":"60000",
        "time_in_force":"gtc","reduce_only":false,"cl_ord_id":"n2"}));
    let n2 = t.order_by_cl("n2")["id"].as_u64().unwrap();
    let (status, answer) = t.post("/api/cancel_order", &json!({"order_id": n2, "cl_ord_id": null}).to_string());
    assert_eq!(status, 200, "{answer}");
    t.order(json!({"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.001","price":"60000",
        "time_in_force":"gtc","reduce_only":false,"cl_ord_id":"n3"}));
    let body = json!({"order_id_list": null, "cl_ord_id_list": ["n3"]}).to_string();
    assert_eq!(t.post("/api/cancel_orders", &body).0, 200);
    assert_eq!(t.order_by_cl("n3")["status"], "canceled");
    assert_eq!(t.get("/api/query_open_orders").1["total"], 0);
    // Null for a required field is a missing field.
    let (status, answer) = t.post("/api/new_order", &ORDER.replace(r#""price":"64000""#, r#""price":null"#));
    assert!(status == 400 && message(&answer).contains("price is required"), "{answer}");
    let (status, _) = t.post("/api/cancel_orders", r#"{"order_id_list":null,"cl_ord_id_list":null}"#);
    assert_eq!(status, 400, "neither list");

    let sb = strict();
    let t = Trader::with_api_key(&sb);
    let (status, answer) = t.post("/api/new_order", &market.to_string());
    assert_eq!(status, 400, "{answer}");
    let (status, _) = t.post("/api/cancel_order", r#"{"order_id":null,"cl_ord_id":"x"}"#);
    assert_eq!(status, 400);
    let (status, _) = t.post("/api/cancel_orders", r#"{"order_id_list":null,"cl_ord_id_list":["x"]}"#);
    assert_eq!(status, 400);
}

#[test]
fn recent_trades_and_funding_endpoints() {
    let sb = sandbox();
    let get = |path: &str| common::exchange(&common::agent(), "GET", &format!("{}{path}", sb.url()), &[], "");
    assert_eq!(get("/api/query_recent_trades?symbol=BTC-USD"), (200, json!([])));
    let t = Trader::with_api_key(&sb);
    // A market buy takes the ask (the user is the buyer and the taker).
    t.order(json!({"symbol":"BTC-USD","side":"buy","order_type":"market","qty":"0.001","time_in_force":"ioc","reduce_only":false}));
    // A resting buy filled by the mark falling: the user is the maker, the seller took it.
    t.order(common::limit("BTC-USD", "buy", "0.002", "64990", "gtc", "maker"));
    sb.set_mark("BTC-USD", "64980").unwrap();
    assert_eq!(t.order_by_cl("maker")["status"], "filled");
    let other = Trader::with_api_key(&sb);
    other.order(json!({"symbol":"ETH-USD","side":"sell","order_type":"market","qty":"0.01","reduce_only":false}));

    let (status, prints) = get("/api/query_recent_trades?symbol=BTC-USD");
    assert_eq!(status, 200, "{prints}");
    let prints = prints.as_array().unwrap();
    assert_eq!(prints.len(), 2, "{prints:?}");
    let newest = &prints[0];
    let keys: Vec<&str> = newest.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["is_buyer_taker", "price", "qty", "quote_qty", "symbol", "time"]);
    assert_eq!(
        (&newest["is_buyer_taker"], &newest["price"], &newest["qty"]),
        (&json!(false), &json!("64990.00"), &json!("0.0020"))
    );
    assert!((common::num(&newest["quote_qty"]) - 129.98).abs() < 1e-9, "{newest}");
    assert_eq!((&prints[1]["is_buyer_taker"], &prints[1]["symbol"]), (&json!(true), &json!("BTC-USD")));
    assert!(newest["time"].as_str().unwrap() >= prints[1]["time"].as_str().unwrap());
    let (_, one) = get("/api/query_recent_trades?symbol=BTC-USD&limit=1");
    assert_eq!(one, json!([newest]));
    let (_, eth) = get("/api/query_recent_trades?symbol=ETH-USD");
    assert_eq!((eth.as_array().unwrap().len(), &eth[0]["is_buyer_taker"]), (1, &json!(false)));
    let (status, answer) = get("/api/query_recent_trades");
    assert!(status == 400 && message(&answer).contains("symbol"), "{answer}");
    assert_eq!(get("/api/query_recent_trades?symbol=DOGE-USD").0, 400);
    assert_eq!(get("/api/query_recent_trades?symbol=BTC-USD&limit=0").0, 400);

    // Funding: the live venue's public rates are empty; the history is empty until a
    // settlement (tests/funding.rs).
    assert_eq!(get("/api/query_funding_rates?symbol=BTC-USD&start_time=1&end_time=2"), (200, json!([])));
    assert_eq!(get("/api/query_funding_rates").0, 200);
    assert_eq!(get("/api/query_funding_history").0, 401, "an account read");
    assert_eq!(
        t.get("/api/query_funding_history?symbol=BTC-USD&start=2025-01-01T00:00:00Z&limit=10"),
        (200, json!([]))
    );
    assert_eq!(t.get("/api/query_funding_history?symbol=DOGE-USD").0, 400);
}
