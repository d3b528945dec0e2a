//! The client options of the trading loop against purpose-built servers on 127.0.0.1:
//! symbol rules (`symbol_rules`: orders refused locally, nothing sent; the list fetched
//! lazily, again for an unknown symbol, after a tick error and on demand) and pacing
//! (`rate_limit`: "refuse" sends nothing it refuses, "wait" spaces requests, a venue 429
//! empties the bucket, a wait never outlasts the call's timeout).

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, Session, call, expect, new_order};
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, Step, json, response};

const API_TOKEN: &str = "rogue-api-token-7f3a";
const SEED: [u8; 32] = [1u8; 32];
const FAST: &str = r#"{"connect_timeout_ms":1000,"read_timeout_ms":300,"total_timeout_ms":3000}"#;
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;

fn client_at(url: &str, options: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(options)).expect("client")
}

fn api_session(seed: [u8; 32]) -> Session {
    Session::from_api_key(API_TOKEN, &bs58::encode(seed).into_string()).expect("api session")
}

/// A venue serving `query_symbol_info` from a shared, replaceable answer and accepting
/// orders unless told to refuse them with a tick error.
struct RulesVenue {
    rogue: Rogue,
    symbols: std::sync::Arc<std::sync::Mutex<String>>,
    tick_error: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

const SYMBOLS: &str = r#"[{"symbol":"BTC-USD","price_tick_decimals":2,"qty_tick_decimals":4,"min_order_qty":"0.0001","max_order_qty":"10","enabled":true},
    {"symbol":"ETH-USD","price_tick_decimals":"2","qty_tick_decimals":"3","min_order_qty":0.001,"max_order_qty":1000,"enabled":true},
    {"symbol":"OLD-USD","price_tick_decimals":2,"qty_tick_decimals":2,"enabled":false}]"#;

impl RulesVenue {
    fn start() -> RulesVenue {
        use std::sync::atomic::Ordering;
        let symbols = std::sync::Arc::new(std::sync::Mutex::new(SYMBOLS.to_owned()));
        let tick_error = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s, t) = (symbols.clone(), tick_error.clone());
        let rogue = Rogue::start(move |seen, _| {
            if seen.path().ends_with("query_symbol_info") {
                json(200, &s.lock().unwrap())
            } else if t.load(Ordering::SeqCst) {
                json(400, r#"{"code":400,"message":"price not follow price tick"}"#)
            } else {
                json(200, r#"{"code":0,"message":"success","request_id":"v"}"#)
            }
        });
        RulesVenue { rogue, symbols, tick_error }
    }
    fn fetches(&self) -> usize {
        self.rogue.count("query_symbol_info")
    }
    fn orders(&self) -> usize {
        self.rogue.count("new_order")
    }
}

fn order(symbol: &str, qty: &str, price: &str) -> String {
    format!(
        r#"{{"symbol":"{symbol}","side":"buy","order_type":"limit","qty":"{qty}","price":"{price}","time_in_force":"alo","reduce_only":false}}"#
    )
}

#[test]
fn symbol_rules_refuse_locally_and_refresh_when_they_should() {
    use std::sync::atomic::Ordering;
    let venue = RulesVenue::start();
    let client = client_at(&venue.rogue.url(), r#"{"symbol_rules":true}"#);
    let session = api_session(SEED);
    assert_eq!(venue.fetches(), 0, "nothing is fetched before the first order");
    new_order(&client, &session, &order("BTC-USD", "0.0100", "65000.10")).unwrap();
    assert_eq!((venue.fetches(), venue.orders()), (1, 1), "fetched once, lazily, at the first order");
    new_order(&client, &session, &order("ETH-USD", "1.5", "3000")).unwrap();
    assert_eq!((venue.fetches(), venue.orders()), (1, 2), "the list is kept");

    let refused = |order: String, fragment: &str| {
        let f = expect(new_order(&client, &session, &order), PERPS_INVALID_ORDER, false);
        assert!(f.message.contains(fragment), "{order}: {f:?}");
        assert!(f.cl_ord_id.is_some() && f.request_id.is_none(), "{f:?}");
    };
    refused(order("BTC-USD", "0.01", "65000.105"), "off the price tick of BTC-USD: prices step by 0.01");
    refused(order("BTC-USD", "0.00015", "65000"), "off the lot of BTC-USD: quantities step by 0.0001");
    refused(order("BTC-USD", "10.0001", "65000"), "above the maximum order quantity of BTC-USD: 10");
    refused(order("ETH-USD", "0.0009", "3000"), "off the lot of ETH-USD: quantities step by 0.001");
    refused(order("OLD-USD", "1", "1"), "\"OLD-USD\" is disabled");
    assert_eq!((venue.fetches(), venue.orders()), (1, 2), "nothing sent for a refused order");

    // An unknown symbol: read once more (the symbol alone: this venue answers with its whole
    // list), then the order is refused.
    refused(order("SOL-USD", "1", "100"), "\"SOL-USD\" is not listed by the venue");
    assert_eq!((venue.fetches(), venue.orders()), (2, 2));
    // It is listed now: the next unknown-symbol fetch finds it.
    *venue.symbols.lock().unwrap() = SYMBOLS.replace(
        r#"{"symbol":"OLD-USD""#,
        r#"{"symbol":"SOL-USD","price_tick_decimals":3,"qty_tick_decimals":2,"min_order_qty":"0.01"},{"symbol":"OLD-USD""#,
    );
    new_order(&client, &session, &order("SOL-USD", "1", "100.125")).unwrap();
    assert_eq!((venue.fetches(), venue.orders()), (3, 3));

    // A tick error from the venue marks the list stale: the next order fetches it first.
    venue.tick_error.store(true, Ordering::SeqCst);
    let f = expect(new_order(&client, &session, &order("BTC-USD", "1", "65000")), PERPS_HTTP_STATUS, false);
    assert!(f.body.unwrap().contains("price tick"));
    venue.tick_error.store(false, Ordering::SeqCst);
    assert_eq!((venue.fetches(), venue.orders()), (3, 4));
    new_order(&client, &session, &order("BTC-USD", "1", "65000")).unwrap();
    assert_eq!((venue.fetches(), venue.orders()), (4, 5));

    // On demand: perps_query_symbol_info without a symbol replaces the list; with one, not.
    *venue.symbols.lock().unwrap() = SYMBOLS.replace(r#""max_order_qty":"10""#, r#""max_order_qty":"20""#);
    call(&client, None, "query_symbol_info", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap();
    refused(order("BTC-USD", "15", "65000"), "above the maximum order quantity of BTC-USD: 10");
    call(&client, None, "query_symbol_info", None).unwrap();
    new_order(&client, &session, &order("BTC-USD", "15", "65000")).unwrap();
    assert_eq!((venue.fetches(), venue.orders()), (6, 6));

    // Off by default: no fetch, the venue decides.
    let plain = client_at(&venue.rogue.url(), FAST);
    new_order(&plain, &session, &order("NEW-USD", "0.123456", "1.23456")).unwrap();
    assert_eq!((venue.fetches(), venue.orders()), (6, 7));
}

#[test]
fn concurrent_orders_share_one_fetch_of_the_symbol_list() {
    // A slow symbol list: every order of a burst arrives while the first fetch is running.
    let rogue = Rogue::start(|seen, _| {
        if seen.path().ends_with("query_symbol_info") {
            let mut steps = vec![Step::Sleep(std::time::Duration::from_millis(400))];
            steps.extend(json(200, SYMBOLS));
            steps
        } else {
            json(200, r#"{"code":0,"message":"success","request_id":"v"}"#)
        }
    });
    let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
    let session = api_session(SEED);
    let burst = |order: &str| -> Vec<Result<String, Failure>> {
        let start = std::sync::Barrier::new(6);
        std::thread::scope(|scope| {
            let threads: Vec<_> = (0..6)
                .map(|_| {
                    scope.spawn(|| {
                        start.wait();
                        new_order(&client, &session, order)
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        })
    };
    // The first orders: one fetch, whose list every order uses.
    for outcome in burst(&order("BTC-USD", "0.0100", "65000.10")) {
        outcome.unwrap();
    }
    assert_eq!((rogue.count("query_symbol_info"), rogue.count("new_order")), (1, 6));
    // Orders for a symbol the list lacks: read again (the symbol alone) once for all of
    // them, not once each.
    for outcome in burst(&order("SOL-USD", "1", "100")) {
        let f = expect(outcome, PERPS_INVALID_ORDER, false);
        assert!(f.message.contains("\"SOL-USD\" is not listed by the venue"), "{f:?}");
    }
    assert_eq!((rogue.count("query_symbol_info"), rogue.count("new_order")), (2, 6));
}

#[test]
fn symbol_rules_without_a_symbol_list_send_no_order() {
    let rogue = Rogue::start(|seen, _| {
        if seen.path().ends_with("query_symbol_info") {
            json(503, r#"{"message":"maintenance"}"#)
        } else {
            json(200, r#"{"code":0}"#)
        }
    });
    let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
    // Not PERPS_HTTP_STATUS: the 503 answered the rules request, not the order.
    let f = expect(new_order(&client, &api_session(SEED), ORDER), PERPS_BAD_RESPONSE, false);
    assert!(f.message.starts_with("symbol rules could not be fetched"), "{f:?}");
    assert!(f.message.contains("the order was NOT sent") && f.message.contains("maintenance"), "{f:?}");
    assert_eq!(f.http_status, 0, "{f:?}");
    assert_eq!((rogue.count("query_symbol_info"), rogue.count("new_order")), (1, 0));
    assert!(f.cl_ord_id.is_some() && f.request_id.is_none());
    // An answer that is not a symbol list: refused the same way.
    let rogue = Rogue::start(|_, _| json(200, r#"{"symbol":"BTC-USD"}"#));
    let client = client_at(&rogue.url(), r#"{"symbol_rules":true}"#);
    let f = expect(new_order(&client, &api_session(SEED), ORDER), PERPS_BAD_RESPONSE, false);
    assert!(f.message.contains("not a list of symbols"), "{f:?}");
    assert_eq!(rogue.count("new_order"), 0);
}

#[test]
fn pacing_refuse_sends_nothing_it_refuses_and_wait_spaces_requests() {
    let rogue = Rogue::start(|_, _| json(200, r#"{"code":0,"message":"success"}"#));
    let refuse = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
    // A fresh account (its own request key): a burst of 18 passes, the 19th is refused.
    let session = api_session([21u8; 32]);
    let started = std::time::Instant::now();
    let mut outcomes: Vec<Result<String, Failure>> = Vec::new();
    while outcomes.iter().filter(|o| o.is_err()).count() < 7 && outcomes.len() < 400 {
        outcomes.push(call(&refuse, Some(&session), "query_open_orders", None));
    }
    let elapsed = started.elapsed();
    let passed = outcomes.iter().take_while(|o| o.is_ok()).count();
    // The venue's burst of 20, less a reserve of 2; on a slow machine a refill (one per 45
    // ms) may come in before the burst is spent.
    let refills = (elapsed.as_millis() / 45) as usize;
    assert!((18..=18 + refills).contains(&passed), "{passed} passed in {elapsed:?}");
    let sent = outcomes.iter().filter(|o| o.is_ok()).count();
    for outcome in outcomes.iter().filter(|o| o.is_err()) {
        let f = outcome.as_ref().unwrap_err();
        assert_eq!(f.code, PERPS_RATE_LIMITED, "{f:?}");
        assert!((1..=45).contains(&f.retry_after_ms), "{f:?}");
        assert!(f.message.contains("nothing was sent") && f.message.contains("would be allowed in"), "{f:?}");
        assert!(!f.may_have_reached_venue && f.request_id.is_none() && f.http_status == 0);
    }
    assert_eq!(rogue.seen().len(), sent, "the refused requests were not sent");
    // Public market data is not an account request: never paced.
    call(&refuse, Some(&session), "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap();
    // Another account has its own bucket.
    call(&refuse, Some(&api_session([22u8; 32])), "query_open_orders", None).unwrap();
    assert_eq!(rogue.seen().len(), sent + 2);

    // "wait": 30 requests of a fresh account all go, the last 12 one refill apart.
    let wait = client_at(&rogue.url(), r#"{"rate_limit":"wait"}"#);
    let session = api_session([23u8; 32]);
    let started = std::time::Instant::now();
    for _ in 0..30 {
        call(&wait, Some(&session), "query_balance", None).unwrap();
    }
    let elapsed = started.elapsed();
    assert!(elapsed >= std::time::Duration::from_millis(12 * 45 - 20), "{elapsed:?}");
    assert_eq!(rogue.seen().len(), sent + 32);
}

#[test]
fn a_venue_429_empties_the_bucket_and_a_wait_never_outlasts_the_timeout() {
    let rogue = Rogue::start(|_, index| {
        if index == 0 { vec![Step::Write(response(429, &["Retry-After: 5"], b"{}"))] } else { json(200, "{}") }
    });
    let client = client_at(&rogue.url(), r#"{"rate_limit":"wait","total_timeout_ms":1000}"#);
    let session = api_session([24u8; 32]);
    let f = expect(call(&client, Some(&session), "query_balance", None), PERPS_HTTP_STATUS, false);
    assert_eq!((f.http_status, f.retry_after_ms), (429, 5000));
    // The venue asked for 5 s; waiting would outlast the call's 1 s: refused, not sent.
    let f = expect(call(&client, Some(&session), "query_balance", None), PERPS_RATE_LIMITED, false);
    assert!(f.message.contains("would leave the request less than half of total_timeout_ms (1000 ms)"), "{f:?}");
    assert!((4_000..=5_000).contains(&f.retry_after_ms), "{f:?}");
    // Orders share the account's bucket, and so does another client of the same venue.
    let other = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
    let f = expect(new_order(&other, &session, ORDER), PERPS_RATE_LIMITED, false);
    assert!(f.cl_ord_id.is_some() && f.request_id.is_none());
    assert_eq!(rogue.seen().len(), 1);
    // Pacing off (the default): the 429 is the venue's business, the next call goes out.
    let off = client_at(&rogue.url(), FAST);
    call(&off, Some(&session), "query_balance", None).unwrap();
}

#[test]
fn a_huge_retry_after_pauses_the_bucket_for_ten_seconds_at_most() {
    // A year: what a misbehaving proxy or a hostile answer may say.
    let rogue = Rogue::start(|_, index| {
        if index == 0 {
            vec![Step::Write(response(429, &["Retry-After: 31536000"], br#"{"code":429}"#))]
        } else {
            json(200, r#"{"code":0,"message":"success","request_id":"r"}"#)
        }
    });
    let client = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
    let session = api_session([25u8; 32]);
    let f = expect(call(&client, Some(&session), "query_balance", None), PERPS_HTTP_STATUS, false);
    assert_eq!((f.http_status, f.retry_after_ms), (429, 31_536_000_000), "the 429 reports what the venue said");
    // The account's bucket is paused for 10 s, not a year: a cancel, from this client or
    // a new one (the bucket is process-wide), is refused locally with a wait of 10 s at most.
    let fresh = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
    for c in [&client, &fresh] {
        let f = expect(call(c, Some(&session), "cancel_order", Some(r#"{"order_id":7}"#)), PERPS_RATE_LIMITED, false);
        assert!((9_000..=10_000).contains(&f.retry_after_ms), "{f:?}");
    }
    // "wait" waits the pause out when the call's timeout allows it (and leaves the request
    // half of it).
    let patient = client_at(&rogue.url(), r#"{"rate_limit":"wait","total_timeout_ms":25000}"#);
    let started = std::time::Instant::now();
    call(&patient, Some(&session), "cancel_order", Some(r#"{"order_id":7}"#)).unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(11), "{:?}", started.elapsed());
    assert_eq!(rogue.seen().len(), 2, "the 429, then the cancel after the pause");
}
