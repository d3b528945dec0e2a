//! `perps_cancel_all` against a venue that refuses requests for the rate while it runs (the
//! account's credits are shared with the engine's other components): every order is still
//! asked for and cancelled in turn, and a pause left by one batch costs the next none of its
//! sends. Loopback venues scripted per request (helper-43's review found both defects).

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::cancel_all;
use rogue_server::{Rogue, Step, json as answer};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn row(id: i64, status: &str) -> Value {
    json!({ "id": id, "cl_ord_id": format!("mm-{id}"), "symbol": "BTC-USD", "status": status,
            "side": "buy", "order_type": "limit", "price": "60000", "qty": "0.01" })
}

fn listing(count: i64) -> Vec<Step> {
    let rows: Vec<Value> = (1..=count).map(|id| row(id, "open")).collect();
    answer(200, &json!({ "page_size": count, "result": rows, "total": count }).to_string())
}

fn client_of(rogue: &Rogue) -> (common::abi::Client, common::abi::Session) {
    let url = rogue.url();
    let client = common::abi::Client::new(&format!("{url}/auth"), &format!("{url}/perps"), None).unwrap();
    let session =
        common::abi::Session::from_api_key("rogue-api-token-7f3a", &bs58::encode([1u8; 32]).into_string()).unwrap();
    (client, session)
}

/// 20 orders; the batch cancel is accepted but lost. Orders 1–8 stay open whatever is sent;
/// a `cancel_order` ends 9–20. Look-ups take 200 ms, and every fifth request is refused with
/// a 429 (1 s pause). The first round's eight look-ups are out when a refusal halts the run:
/// the next round must start with the orders not yet asked for, not with those just answered
/// — before, it started again at the first, every round, and orders 9–20 were never looked
/// up nor cancelled (101 queries of orders 1–8, one cancel request in 15 s).
#[test]
fn a_rate_refusal_every_round_still_lets_every_order_be_asked_for_and_cancelled() {
    let open: Arc<Mutex<BTreeSet<i64>>> = Arc::new(Mutex::new((1..=20).collect()));
    let since_429 = Arc::new(Mutex::new(0u32));
    let asked: Arc<Mutex<BTreeMap<i64, u32>>> = Arc::default();
    let (o, s, a) = (open.clone(), since_429.clone(), asked.clone());
    let rogue = Rogue::start(move |seen, _| {
        let path = seen.path().to_owned();
        if path.ends_with("/api/query_open_orders") {
            return listing(20);
        }
        if path.ends_with("/api/cancel_orders") {
            return answer(200, r#"{"code":0,"message":"success","request_id":"r"}"#);
        }
        {
            let mut n = s.lock().unwrap();
            *n += 1;
            if *n == 5 {
                *n = 0;
                return answer(429, r#"{"code":429,"message":"too many requests"}"#);
            }
        }
        if path.ends_with("/api/query_order") {
            let id: i64 = seen.target.split("order_id=").nth(1).unwrap().parse().unwrap();
            *a.lock().unwrap().entry(id).or_default() += 1;
            let status = if o.lock().unwrap().contains(&id) { "open" } else { "canceled" };
            let mut steps = vec![Step::Sleep(Duration::from_millis(200))];
            steps.extend(answer(200, &row(id, status).to_string()));
            return steps;
        }
        if path.ends_with("/api/cancel_order") {
            let id = seen.json()["order_id"].as_i64().unwrap();
            if id > 8 {
                o.lock().unwrap().remove(&id);
            }
            return answer(200, r#"{"code":0,"message":"success","request_id":"r"}"#);
        }
        answer(404, "{}")
    });
    let (client, session) = client_of(&rogue);
    let report: Value =
        serde_json::from_str(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":15000}"#)).unwrap()).unwrap();
    let left: Vec<i64> = open.lock().unwrap().iter().copied().filter(|&id| id > 8).collect();
    assert!(left.is_empty(), "cancellable orders left open: {left:?}; asked {:?}; {report}", asked.lock().unwrap());
    let asked = asked.lock().unwrap();
    assert!((1..=20).all(|id| asked.contains_key(&id)), "every order looked up: {asked:?}");
    let confirmed: Vec<i64> = report["orders"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["confirmed"] == true)
        .map(|o| o["order_id"].as_i64().unwrap())
        .collect();
    // With 4 requests a second passing, the time may end before a look-up sees each of them
    // ended; none of the orders still open is ever reported ended.
    assert!(confirmed.iter().all(|id| (9..=20).contains(id)), "1–8 are still open: {report}");
    assert_eq!(report["complete"], false, "{report}");
}

/// The first batch is refused for the rate at all three of its sends; every later cancel
/// request fails with a 503. The pause the first batch's last refusal left must not cost the
/// second batch one of its three sends (before: the halted run refused it unsent, and counted
/// it): with `confirm_ms` 0 those sends are the only cancel its order gets.
#[test]
fn a_pause_left_by_one_batch_costs_the_next_batch_none_of_its_sends() {
    let batches = Arc::new(Mutex::new(0u32));
    let b = batches.clone();
    let rogue = Rogue::start(move |seen, _| {
        let path = seen.path().to_owned();
        if path.ends_with("/api/query_open_orders") {
            return listing(101);
        }
        if path.ends_with("/api/cancel_orders") {
            let mut n = b.lock().unwrap();
            *n += 1;
            return if *n <= 3 { answer(429, r#"{"code":429,"message":"slow down"}"#) } else { answer(503, "{}") };
        }
        answer(200, r#"{"code":0,"message":"success","request_id":"r"}"#)
    });
    let (client, session) = client_of(&rogue);
    let report: Value =
        serde_json::from_str(&cancel_all(&client, Some(&session), Some(r#"{"confirm_ms":0}"#)).unwrap()).unwrap();
    let sent: Vec<usize> = rogue
        .seen()
        .iter()
        .filter(|s| s.path().ends_with("/api/cancel_orders"))
        .map(|s| s.json()["order_id_list"].as_array().unwrap().len())
        .collect();
    assert_eq!(sent, [100, 100, 100, 1, 1, 1], "each batch sent three times: {report}");
    assert_eq!((&report["cancel_requests"], &report["failed_cancel_requests"]), (&json!(6), &json!(6)), "{report}");
}
