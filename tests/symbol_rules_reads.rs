//! How the symbol rules (client option `symbol_rules`) are read, against purpose-built
//! servers on 127.0.0.1: within the order's one `total_timeout_ms`, and once for calls that
//! arrive while a read is under way, its failure shared.

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, Session, new_order};
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, Step, json, ms};
use std::time::{Duration, Instant};

const ACCEPTED: &str = r#"{"code":0,"message":"success","request_id":"r"}"#;
const BTC: &str = r#"{"symbol":"BTC-USD","price_tick_decimals":2,"qty_tick_decimals":4,"min_order_qty":"0.0001","max_order_qty":"100","enabled":true}"#;

fn client_at(url: &str, options: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(options)).expect("client")
}

fn session() -> Session {
    Session::from_api_key("rogue-api-token-7f3a", &bs58::encode([3u8; 32]).into_string()).expect("api session")
}

fn order(symbol: &str, qty: &str) -> String {
    format!(
        r#"{{"symbol":"{symbol}","side":"buy","order_type":"limit","qty":"{qty}","price":"65000","time_in_force":"gtc","reduce_only":false}}"#
    )
}

fn targets(rogue: &Rogue) -> Vec<String> {
    rogue.seen().iter().map(|s| s.target.trim_start_matches("/perps/api/").to_owned()).collect()
}

#[test]
fn an_order_that_reads_the_symbol_rules_keeps_to_one_total_timeout() {
    // Every answer takes 1.5 s: the rules' read and the order cannot both finish in 2 s.
    let rogue = Rogue::start(|seen, _| {
        let answer = if seen.path().ends_with("/query_symbol_info") { format!("[{BTC}]") } else { ACCEPTED.into() };
        let mut steps = vec![ms(1500)];
        steps.extend(json(200, &answer));
        steps
    });
    let options = r#"{"connect_timeout_ms":1000,"read_timeout_ms":1900,"total_timeout_ms":2000,"symbol_rules":true}"#;
    let client = client_at(&rogue.url(), options);
    let started = Instant::now();
    let f = new_order(&client, &session(), &order("BTC-USD", "0.01")).unwrap_err();
    let took = started.elapsed();
    assert_eq!((f.code, f.may_have_reached_venue), (PERPS_TIMEOUT, true), "{f:?}");
    assert!(f.message.contains("total_timeout_ms (2000 ms)"), "{f:?}");
    assert!(took < Duration::from_millis(2600), "new_order took {took:?} with total_timeout_ms 2000");
    assert_eq!(targets(&rogue), ["query_symbol_info", "new_order"]);
}

#[test]
fn orders_waiting_for_a_read_share_its_failure() {
    // The symbol list never comes; six first orders arrive together.
    let rogue = Rogue::start(|seen, _| {
        if seen.path().ends_with("/query_symbol_info") {
            vec![Step::Sleep(Duration::from_secs(5))]
        } else {
            json(200, ACCEPTED)
        }
    });
    let options = r#"{"connect_timeout_ms":1000,"read_timeout_ms":1000,"total_timeout_ms":1000,"symbol_rules":true}"#;
    let client = client_at(&rogue.url(), options);
    let s = session();
    let start = std::sync::Barrier::new(6);
    let outcomes: Vec<(Duration, Result<String, Failure>)> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..6)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    let began = Instant::now();
                    let outcome = new_order(&client, &s, &order("BTC-USD", "0.01"));
                    (began.elapsed(), outcome)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!((rogue.count("/query_symbol_info"), rogue.count("/new_order")), (1, 0), "one read for all six");
    for (took, outcome) in outcomes {
        assert!(took < Duration::from_millis(1700), "an order returned after {took:?} with total_timeout_ms 1000");
        let f = outcome.unwrap_err();
        assert_eq!((f.code, f.may_have_reached_venue), (PERPS_TIMEOUT, false), "{f:?}");
        assert!(f.message.to_lowercase().contains("the order was not sent"), "{f:?}");
    }
}
