//! Pacing (client option `rate_limit`) against purpose-built servers on 127.0.0.1: a
//! `"wait"` that would leave the request too little of `total_timeout_ms` refused instead of
//! sent to time out.

mod common;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, Session, new_order};
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, json, ms};

const ACCEPTED: &str = r#"{"code":0,"message":"success","request_id":"r"}"#;
const ORDER: &str = r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"65000","time_in_force":"gtc","reduce_only":false}"#;

fn client_at(url: &str, options: &str) -> Client {
    Client::new(&format!("{url}/auth"), &format!("{url}/perps"), Some(options)).expect("client")
}

fn session(seed: u8) -> Session {
    Session::from_api_key("rogue-api-token-7f3a", &bs58::encode([seed; 32]).into_string()).expect("api session")
}

#[test]
fn a_wait_that_would_leave_the_request_too_little_time_is_refused() {
    // The venue answers in 150 ms; the call has 1000 ms in all.
    let rogue = Rogue::start(|_, _| {
        let mut steps = vec![ms(150)];
        steps.extend(json(200, ACCEPTED));
        steps
    });
    let options = r#"{"connect_timeout_ms":1000,"read_timeout_ms":1000,"total_timeout_ms":1000,"rate_limit":"wait"}"#;
    let client = client_at(&rogue.url(), options);
    let s = session(42);
    // 40 orders at once from one account: 18 go at once, the others queue 45 ms apart, the
    // last ones behind waits of 850 to 990 ms.
    let start = std::sync::Barrier::new(40);
    let outcomes: Vec<Result<String, Failure>> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..40)
            .map(|_| {
                scope.spawn(|| {
                    start.wait();
                    new_order(&client, &s, ORDER)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let sent = outcomes.iter().filter(|o| o.is_ok()).count();
    let refused: Vec<&Failure> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    for f in &refused {
        // Never sent with too little time left to hear the answer (a TIMEOUT of unknown fate).
        assert_eq!((f.code, f.may_have_reached_venue), (PERPS_RATE_LIMITED, false), "{f:?}");
        assert!(f.message.contains("less than half of total_timeout_ms (1000 ms)"), "{f:?}");
    }
    assert!(!refused.is_empty(), "the waits beyond 500 ms are refused");
    assert!(sent >= 18 + 8, "waits of up to 500 ms are accepted: {sent} sent");
    assert_eq!(rogue.count("/new_order"), sent);
}
