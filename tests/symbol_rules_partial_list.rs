//! Symbol rules (client option `symbol_rules`) from a venue whose symbol list leaves symbols
//! out (`[]`: it reads `symbol` as a filter), against purpose-built servers on 127.0.0.1:
//! first orders of many symbols at once are each checked against their own rules, none
//! refused as unlisted; and after the venue refuses an order for its tick, each symbol's
//! rules are read again at its next order, not only the next order's symbol.

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Session, new_order};
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, Step, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ACCEPTED: &str = r#"{"code":0,"message":"success","request_id":"r"}"#;

fn client_at(url: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(r#"{"symbol_rules":true}"#)).expect("client")
}

fn session() -> Session {
    Session::from_api_key("rogue-api-token-7f3a", &bs58::encode([3u8; 32]).into_string()).expect("api session")
}

fn order(symbol: &str, price: &str) -> String {
    format!(
        r#"{{"symbol":"{symbol}","side":"buy","order_type":"limit","qty":"0.01","price":"{price}","time_in_force":"gtc","reduce_only":false}}"#
    )
}

/// The rules of `symbol`, prices stepping by 10^-`price_decimals`.
fn rules(symbol: &str, price_decimals: u32) -> String {
    format!(
        r#"[{{"symbol":"{symbol}","price_tick_decimals":{price_decimals},"qty_tick_decimals":2,"min_order_qty":"0.01","max_order_qty":"100","enabled":true}}]"#
    )
}

/// A venue that answers `query_symbol_info` with `rules_read(the symbol asked for, if any)`
/// and accepts orders, but refuses the next one for its tick once the returned flag is set.
fn tick_refusing_venue(
    rules_read: impl Fn(Option<&str>) -> Vec<Step> + Send + Sync + 'static,
) -> (Rogue, Arc<AtomicBool>) {
    let tick_refusal = Arc::new(AtomicBool::new(false));
    let refusing = tick_refusal.clone();
    let rogue = Rogue::start(move |seen, _| {
        if seen.path().ends_with("/query_symbol_info") {
            return rules_read(seen.target.split_once("symbol=").map(|(_, symbol)| symbol));
        }
        if refusing.swap(false, Ordering::SeqCst) {
            return json(400, r#"{"code":400,"message":"price not follow price tick"}"#);
        }
        json(200, ACCEPTED)
    });
    (rogue, tick_refusal)
}

fn targets(rogue: &Rogue) -> Vec<String> {
    rogue.seen().iter().map(|s| s.target.trim_start_matches("/perps/api/").to_owned()).collect()
}

#[test]
fn first_orders_of_many_symbols_at_once_are_each_read_alone_and_none_refused() {
    // The list comes late and empty, so that every order waits for it; then each thread reads
    // its symbol alone, the first to find one switching the venue to per-symbol reads. A
    // thread must decide from its own reads, not from that switch (it would refuse its order
    // as unlisted without asking). The race is narrow: rounds of eight threads.
    for round in 0..20 {
        let rogue = Rogue::start(|seen, _| {
            if !seen.path().ends_with("/query_symbol_info") {
                return json(200, ACCEPTED);
            }
            match seen.target.split_once("symbol=") {
                None => {
                    let mut steps = vec![Step::Sleep(Duration::from_millis(150))];
                    steps.extend(json(200, "[]"));
                    steps
                }
                Some((_, symbol)) => json(200, &rules(symbol, 2)),
            }
        });
        let client = client_at(&rogue.url());
        let s = session();
        let start = std::sync::Barrier::new(8);
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8)
                .map(|n| {
                    let (client, s, start) = (&client, &s, &start);
                    scope.spawn(move || {
                        start.wait();
                        new_order(client, s, &order(&format!("S{n}-USD"), "1.25"))
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (n, outcome) in outcomes.into_iter().enumerate() {
            outcome.unwrap_or_else(|f| panic!("round {round}: S{n}-USD refused: {f:?}"));
        }
        assert_eq!(rogue.count("/new_order"), 8);
        let alone = targets(&rogue).iter().filter(|t| t.starts_with("query_symbol_info?symbol=")).count();
        assert_eq!(alone, 8, "one read per symbol: {:?}", targets(&rogue));
    }
}

#[test]
fn after_a_tick_refusal_each_symbols_rules_are_read_again_at_its_next_order() {
    // Read symbol by symbol (the list is `[]`). BTC-USD's tick becomes coarser; the venue
    // refuses an order for it; the next orders of ETH-USD and of BTC-USD each read their
    // symbol again first, and the BTC-USD order off the new tick is refused locally.
    let btc_decimals = Arc::new(Mutex::new(2u32));
    let decimals = btc_decimals.clone();
    let (rogue, tick_refusal) = tick_refusing_venue(move |asked| match asked {
        None => json(200, "[]"),
        Some("BTC-USD") => json(200, &rules("BTC-USD", *decimals.lock().unwrap())),
        Some(symbol) => json(200, &rules(symbol, 2)),
    });
    let client = client_at(&rogue.url());
    let s = session();
    new_order(&client, &s, &order("ETH-USD", "3000.25")).unwrap();
    new_order(&client, &s, &order("BTC-USD", "65000.50")).unwrap();
    assert_eq!(
        targets(&rogue),
        [
            "query_symbol_info",
            "query_symbol_info?symbol=ETH-USD",
            "new_order",
            "query_symbol_info?symbol=BTC-USD",
            "new_order"
        ]
    );
    *btc_decimals.lock().unwrap() = 0;
    tick_refusal.store(true, Ordering::SeqCst);
    let f = new_order(&client, &s, &order("BTC-USD", "65000.5")).unwrap_err();
    assert_eq!(f.code, PERPS_HTTP_STATUS, "the venue's refusal: {f:?}");
    new_order(&client, &s, &order("ETH-USD", "3000.25")).unwrap();
    let f = new_order(&client, &s, &order("BTC-USD", "65000.5")).unwrap_err();
    assert_eq!(f.code, PERPS_INVALID_ORDER, "refused on BTC-USD's rules read again: {f:?}");
    assert!(f.message.contains("off the price tick of BTC-USD"), "{f:?}");
    assert_eq!(
        targets(&rogue)[5..],
        ["new_order", "query_symbol_info?symbol=ETH-USD", "new_order", "query_symbol_info?symbol=BTC-USD"]
    );
    // Read again once each: the next orders cost no read.
    new_order(&client, &s, &order("BTC-USD", "65001")).unwrap();
    new_order(&client, &s, &order("ETH-USD", "3000.25")).unwrap();
    assert_eq!(rogue.count("/query_symbol_info"), 5, "{:?}", targets(&rogue));
}

#[test]
fn a_stale_symbol_its_own_read_no_longer_lists_is_refused_as_unlisted_not_on_its_old_rules() {
    // Read symbol by symbol; BTC-USD's tick refusal makes its rules stale; read again, the
    // venue lists it no more (`[]`, or a 404 "symbol not found"): the order is refused as
    // unlisted (its old rules are dropped, not kept stale and read again at every order).
    for delisted in [json(200, "[]"), json(404, r#"{"code":404,"message":"symbol not found"}"#)] {
        let listed = Arc::new(AtomicBool::new(true));
        let listing = listed.clone();
        let answer = delisted.clone();
        let (rogue, tick_refusal) = tick_refusing_venue(move |asked| match asked {
            Some("BTC-USD") if listing.load(Ordering::SeqCst) => json(200, &rules("BTC-USD", 2)),
            Some("BTC-USD") => answer.clone(),
            Some("ETH-USD") => json(200, &rules("ETH-USD", 2)),
            _ => json(200, "[]"),
        });
        let client = client_at(&rogue.url());
        let s = session();
        new_order(&client, &s, &order("ETH-USD", "3000.25")).unwrap();
        new_order(&client, &s, &order("BTC-USD", "65000.50")).unwrap();
        listed.store(false, Ordering::SeqCst);
        tick_refusal.store(true, Ordering::SeqCst);
        new_order(&client, &s, &order("BTC-USD", "65000.5")).unwrap_err();
        let reads = rogue.count("/query_symbol_info");
        for price in ["65000.505", "65001"] {
            let f = new_order(&client, &s, &order("BTC-USD", price)).unwrap_err();
            assert_eq!(f.code, PERPS_INVALID_ORDER, "{f:?}");
            assert!(f.message.contains("\"BTC-USD\" is not listed by the venue"), "{price}: {f:?}");
        }
        // One read per order, as for any symbol the rules lack; ETH-USD's rules are read again
        // once, as stale, then kept.
        assert_eq!(rogue.count("/query_symbol_info"), reads + 2, "{:?}", targets(&rogue));
        new_order(&client, &s, &order("ETH-USD", "3000.25")).unwrap();
        new_order(&client, &s, &order("ETH-USD", "3000.25")).unwrap();
        assert_eq!(rogue.count("/query_symbol_info"), reads + 3, "{:?}", targets(&rogue));
    }
}

#[test]
fn rules_whose_request_was_sent_before_a_tick_refusal_are_stale_though_they_land_after_it() {
    // The on-demand refresh (`perps_query_symbol_info` without a symbol) is slow; while it is
    // on its way the venue refuses an order for its tick. The list it brings was asked for
    // before the refusal: the next order reads the rules again.
    let slow_list = Arc::new(AtomicBool::new(false));
    let slow = slow_list.clone();
    let (rogue, tick_refusal) = tick_refusing_venue(move |_| {
        let mut steps = Vec::new();
        if slow.swap(false, Ordering::SeqCst) {
            steps.push(Step::Sleep(Duration::from_millis(400)));
        }
        steps.extend(json(200, &rules("BTC-USD", 2)));
        steps
    });
    let client = client_at(&rogue.url());
    let s = session();
    new_order(&client, &s, &order("BTC-USD", "65000.50")).unwrap();
    slow_list.store(true, Ordering::SeqCst);
    std::thread::scope(|scope| {
        let refresh = scope.spawn(|| common::abi::call(&client, None, "query_symbol_info", None));
        std::thread::sleep(Duration::from_millis(100));
        tick_refusal.store(true, Ordering::SeqCst);
        new_order(&client, &s, &order("BTC-USD", "65000.5")).unwrap_err();
        refresh.join().unwrap().expect("the refresh");
    });
    let reads = rogue.count("/query_symbol_info");
    new_order(&client, &s, &order("BTC-USD", "65000.5")).unwrap();
    assert_eq!(rogue.count("/query_symbol_info"), reads + 1, "read again: {:?}", targets(&rogue));
}
