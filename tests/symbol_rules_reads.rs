//! How the symbol rules (client option `symbol_rules`) are read, against purpose-built
//! servers on 127.0.0.1: from a venue that requires `symbol` (symbol by symbol, remembered),
//! again when a rule older than `symbol_rules_max_age_ms` would refuse an order, within the
//! order's one `total_timeout_ms`, and once for calls that arrive while a read is under way,
//! its failure shared.

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, Session, new_order};
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, Step, json, ms};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const ACCEPTED: &str = r#"{"code":0,"message":"success","request_id":"r"}"#;
const BTC: &str = r#"{"symbol":"BTC-USD","price_tick_decimals":2,"qty_tick_decimals":4,"min_order_qty":"0.0001","max_order_qty":"100","enabled":true}"#;
const ETH: &str = r#"{"symbol":"ETH-USD","price_tick_decimals":2,"qty_tick_decimals":3,"min_order_qty":"0.001","max_order_qty":"1000","enabled":true}"#;

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

/// A venue that requires `symbol` in `query_symbol_info`: the whole list is answered by
/// `list_refusal`, BTC-USD and ETH-USD by their rules, any other symbol by an empty list;
/// every other request is accepted.
fn requiring_symbol(list_refusal: impl Fn() -> Vec<Step> + Send + Sync + 'static) -> Rogue {
    Rogue::start(move |seen, _| {
        if !seen.path().ends_with("/query_symbol_info") {
            return json(200, ACCEPTED);
        }
        match seen.target.split_once("symbol=").map(|(_, s)| s) {
            None => list_refusal(),
            Some("BTC-USD") => json(200, &format!("[{BTC}]")),
            Some("ETH-USD") => json(200, &format!("[{ETH}]")),
            Some(_) => json(200, "[]"),
        }
    })
}

fn targets(rogue: &Rogue) -> Vec<String> {
    rogue.seen().iter().map(|s| s.target.trim_start_matches("/perps/api/").to_owned()).collect()
}

#[test]
fn a_venue_that_requires_symbol_is_read_symbol_by_symbol() {
    // As the documents describe it: `symbol` is required, and the answer lists that symbol.
    let rogue = requiring_symbol(|| json(400, r#"{"code":400,"message":"symbol is required"}"#));
    let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
    let s = session();
    new_order(&client, &s, &order("BTC-USD", "0.01")).expect("the order is checked and sent");
    assert_eq!(targets(&rogue), ["query_symbol_info", "query_symbol_info?symbol=BTC-USD", "new_order"]);
    new_order(&client, &s, &order("BTC-USD", "0.02")).unwrap();
    // Another symbol: read on its own; the whole list is not asked for again.
    new_order(&client, &s, &order("ETH-USD", "1.5")).unwrap();
    assert_eq!(targets(&rogue)[3..], ["new_order", "query_symbol_info?symbol=ETH-USD", "new_order"]);
    // The rules read symbol by symbol refuse what they should, without a read or a send.
    let f = new_order(&client, &s, &order("ETH-USD", "1.0005")).unwrap_err();
    assert_eq!(f.code, PERPS_INVALID_ORDER, "{f:?}");
    assert!(f.message.contains("off the lot of ETH-USD: quantities step by 0.001"), "{f:?}");
    let f = new_order(&client, &s, &order("SOL-USD", "1")).unwrap_err();
    assert_eq!(f.code, PERPS_INVALID_ORDER, "{f:?}");
    assert!(f.message.contains("\"SOL-USD\" is not listed by the venue"), "{f:?}");
    assert_eq!(rogue.count("/query_symbol_info"), 4, "{:?}", targets(&rogue));
    assert_eq!(rogue.count("/new_order"), 3);
}

#[test]
fn a_symbol_the_list_leaves_out_is_asked_for_on_its_own_before_an_order_is_refused() {
    // The documents call `symbol` required: a venue may read it as a filter and answer the
    // whole list with `[]`, or list some symbols only.
    for list in ["[]".to_owned(), format!("[{BTC}]")] {
        let answer = list.clone();
        let rogue = requiring_symbol(move || json(200, &answer));
        let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
        let s = session();
        new_order(&client, &s, &order("ETH-USD", "1.5")).expect("ETH-USD's own rules allow it");
        assert_eq!(targets(&rogue), ["query_symbol_info", "query_symbol_info?symbol=ETH-USD", "new_order"], "{list}");
        // The list is not the whole one: BTC-USD (listed or not) and every other symbol are
        // read alone from now on, never the list again.
        new_order(&client, &s, &order("BTC-USD", "0.01")).unwrap();
        assert_eq!(
            targets(&rogue)[3..],
            ["query_symbol_info?symbol=BTC-USD", "new_order"][usize::from(list != "[]")..]
        );
        let read = rogue.seen().len();
        // Its rules are kept and refuse what they should, with no read and no send.
        let f = new_order(&client, &s, &order("ETH-USD", "1.0005")).unwrap_err();
        assert_eq!(f.code, PERPS_INVALID_ORDER, "{f:?}");
        assert!(f.message.contains("off the lot of ETH-USD: quantities step by 0.001"), "{f:?}");
        assert_eq!(rogue.seen().len(), read, "{list}: {:?}", targets(&rogue));
        // A symbol neither read lists: refused, unsent, naming both reads.
        let f = new_order(&client, &s, &order("SOL-USD", "1")).unwrap_err();
        assert_eq!(f.code, PERPS_INVALID_ORDER, "{f:?}");
        assert!(f.message.contains("\"SOL-USD\" is not listed by the venue"), "{f:?}");
        assert!(f.message.contains("query_symbol_info for \"SOL-USD\" lists no such symbol"), "{f:?}");
        assert_eq!(targets(&rogue)[read..], ["query_symbol_info?symbol=SOL-USD"], "{list}");
        assert_eq!(rogue.count("/new_order"), 2);
        // Orders alternating between the symbols read cost no read at all.
        let reads = rogue.count("/query_symbol_info");
        for _ in 0..3 {
            new_order(&client, &s, &order("ETH-USD", "1.5")).unwrap();
            new_order(&client, &s, &order("BTC-USD", "0.01")).unwrap();
        }
        assert_eq!(rogue.count("/query_symbol_info"), reads, "{list}: {:?}", targets(&rogue));
        assert_eq!(rogue.count("/new_order"), 8);
    }

    // The symbol's own read refused with a 4xx: the venue has no such symbol.
    let rogue = Rogue::start(|seen, _| match seen.target.split_once("symbol=") {
        _ if !seen.path().ends_with("/query_symbol_info") => json(200, ACCEPTED),
        None => json(200, &format!("[{BTC}]")),
        Some(_) => json(404, r#"{"code":404,"message":"symbol not found"}"#),
    });
    let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
    let f = new_order(&client, &session(), &order("SOL-USD", "1")).unwrap_err();
    assert_eq!(f.code, PERPS_INVALID_ORDER, "{f:?}");
    assert!(f.message.contains("\"SOL-USD\" is not listed") && f.message.contains("symbol not found"), "{f:?}");
    // Refused otherwise (a 5xx): the rules could not be fetched, and nothing was sent.
    let rogue = Rogue::start(|seen, _| match seen.target.split_once("symbol=") {
        _ if !seen.path().ends_with("/query_symbol_info") => json(200, ACCEPTED),
        None => json(200, "[]"),
        Some(_) => json(503, r#"{"message":"maintenance"}"#),
    });
    let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
    let f = new_order(&client, &session(), &order("BTC-USD", "1")).unwrap_err();
    assert_eq!(f.code, PERPS_BAD_RESPONSE, "{f:?}");
    assert!(!f.may_have_reached_venue && f.message.contains("NOT sent") && f.message.contains("\"BTC-USD\""), "{f:?}");
    assert_eq!(rogue.count("/new_order"), 0);
}

#[test]
fn a_list_refused_with_a_4xx_code_under_http_200_is_read_symbol_by_symbol() {
    // The same refusal as above, sent the other way the venue refuses: HTTP 200 with a code
    // (a number or a string of digits).
    for refusal in [r#"{"code":400,"message":"symbol is required"}"#, r#"{"code":"422","message":"no symbol"}"#] {
        let rogue = requiring_symbol(move || json(200, refusal));
        let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
        let s = session();
        new_order(&client, &s, &order("BTC-USD", "0.01")).expect("the order is checked and sent");
        assert_eq!(targets(&rogue), ["query_symbol_info", "query_symbol_info?symbol=BTC-USD", "new_order"]);
        new_order(&client, &s, &order("ETH-USD", "1.5")).unwrap();
        assert_eq!(targets(&rogue)[3..], ["query_symbol_info?symbol=ETH-USD", "new_order"], "{refusal}");
    }
}

#[test]
fn a_list_answered_with_a_code_that_says_later_is_not_read_symbol_by_symbol() {
    // 408, 429 and 5xx say "not now", not "not like this": the list is asked for again at
    // the next order, and no symbol is read on its own.
    for code in [408, 429, 500, 503] {
        let rogue = Rogue::start(move |seen, _| {
            if !seen.path().ends_with("/query_symbol_info") {
                json(200, ACCEPTED)
            } else if seen.target.contains("symbol=") {
                json(200, &format!("[{BTC}]"))
            } else {
                json(200, &format!(r#"{{"code":{code},"message":"try later"}}"#))
            }
        });
        let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
        for _ in 0..2 {
            let f = new_order(&client, &session(), &order("BTC-USD", "0.01")).unwrap_err();
            assert_eq!((f.code, f.http_status, f.may_have_reached_venue), (PERPS_BAD_RESPONSE, 0, false), "{f:?}");
            assert!(f.message.contains("the venue's symbol list") && f.message.contains("try later"), "{f:?}");
        }
        assert_eq!(targets(&rogue), ["query_symbol_info", "query_symbol_info"], "code {code}");
    }
}

#[test]
fn rules_that_cannot_be_fetched_say_so_and_send_no_order() {
    let rogue = Rogue::start(|seen, _| {
        if seen.path().ends_with("/query_symbol_info") {
            json(400, r#"{"code":400,"message":"symbol is required"}"#)
        } else {
            json(200, ACCEPTED)
        }
    });
    let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
    let f = new_order(&client, &session(), &order("BTC-USD", "0.01")).unwrap_err();
    // Not PERPS_HTTP_STATUS with the rules request's 400: that would read as the venue
    // refusing the order.
    assert_eq!((f.code, f.http_status, f.may_have_reached_venue), (PERPS_BAD_RESPONSE, 0, false), "{f:?}");
    assert!(f.message.starts_with("symbol rules could not be fetched"), "{f:?}");
    assert!(f.message.contains("the order was NOT sent"), "{f:?}");
    assert!(f.message.contains("read one symbol at a time") && f.message.contains("symbol is required"), "{f:?}");
    assert!(f.cl_ord_id.is_some() && f.request_id.is_none(), "{f:?}");
    assert_eq!(targets(&rogue), ["query_symbol_info", "query_symbol_info?symbol=BTC-USD"]);
}

#[test]
fn a_rule_older_than_the_max_age_is_read_again_before_it_refuses() {
    // BTC-USD's rules as one version of the documents gives them (qty decimals 3, minimum
    // 0.001), then as the next one does (4 and 0.0001).
    let loosened = Arc::new(AtomicBool::new(false));
    let flag = loosened.clone();
    let rogue = Rogue::start(move |seen, _| {
        if !seen.path().ends_with("/query_symbol_info") {
            json(200, ACCEPTED)
        } else if flag.load(Ordering::SeqCst) {
            json(200, &format!("[{BTC}]"))
        } else {
            json(200, &format!("[{}]", BTC.replace(r#""qty_tick_decimals":4"#, r#""qty_tick_decimals":3"#)))
        }
    });
    let client = client_at(&rogue.url(), r#"{"symbol_rules":true,"symbol_rules_max_age_ms":1000}"#);
    let s = session();
    let small = order("BTC-USD", "0.0005");
    let refused = |expected_reads: usize| {
        let f = new_order(&client, &s, &small).unwrap_err();
        assert_eq!(f.code, PERPS_INVALID_ORDER, "{f:?}");
        assert!(f.message.contains("quantities step by 0.001"), "{f:?}");
        assert_eq!(rogue.count("/query_symbol_info"), expected_reads);
    };
    refused(1);
    loosened.store(true, Ordering::SeqCst);
    refused(1); // Rules younger than the max age refuse without a read.
    std::thread::sleep(Duration::from_millis(1100));
    new_order(&client, &s, &small).expect("the old rule is read again before it refuses, and has changed");
    assert_eq!((rogue.count("/query_symbol_info"), rogue.count("/new_order")), (2, 1));
    // An order the rules allow costs no read, however old they are.
    std::thread::sleep(Duration::from_millis(1100));
    new_order(&client, &s, &order("BTC-USD", "0.01")).unwrap();
    assert_eq!((rogue.count("/query_symbol_info"), rogue.count("/new_order")), (2, 2));
    // A refusal on old rules that still hold: read once, then refused on the fresh rules.
    let f = new_order(&client, &s, &order("BTC-USD", "0.00005")).unwrap_err();
    assert!(f.message.contains("quantities step by 0.0001"), "{f:?}");
    assert_eq!((rogue.count("/query_symbol_info"), rogue.count("/new_order")), (3, 2));
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
        assert!(f.message.starts_with("symbol rules could not be fetched"), "{f:?}");
    }
}
