//! Pacing (client option `rate_limit`) against purpose-built servers on 127.0.0.1: the
//! venue's per-IP limit (50 requests/s), kept by every request of the process to one venue
//! host whatever its account (public calls too, and the requests of clients that do not
//! pace), paused for every pacing client of the host by a venue 429, and a `"wait"` that
//! would leave the request too little of `total_timeout_ms` refused instead of sent to time
//! out. The read sent again after the keep-alive race: `pacing_reads_sent_again.rs`.

mod common;
#[path = "common/pacing.rs"]
mod pacing;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Failure, Session, call, new_order};
use pacing::{ACCEPTED, ORDER, client_at, session, timed_venue};
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, Step, json, ms, response};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A venue that answers 429 to any request beyond 50 in the last second, whoever sends it:
/// the per-IP limit as a count over a sliding second (the stricter reading of "50
/// requests/s"). Returns the server and how many requests it refused.
fn per_ip_limited_venue() -> (Rogue, Arc<Mutex<usize>>) {
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let refused: Arc<Mutex<usize>> = Arc::default();
    let counted = refused.clone();
    let rogue = Rogue::start(move |_, _| {
        let now = Instant::now();
        let mut last_second = arrivals.lock().unwrap();
        last_second.retain(|t| now.duration_since(*t) < Duration::from_secs(1));
        last_second.push(now);
        if last_second.len() > 50 {
            *counted.lock().unwrap() += 1;
            json(429, r#"{"code":429,"message":"too many requests from this IP"}"#)
        } else {
            json(200, ACCEPTED)
        }
    });
    (rogue, refused)
}

#[test]
fn accounts_of_one_process_keep_to_the_per_ip_limit_together() {
    let (rogue, refused) = per_ip_limited_venue();
    // Three accounts, each with a client of its own and within its own credit bucket (18 at
    // once, then one per 45 ms): together 54 at once, over the venue's 50 a second from one IP.
    let sessions: Vec<Session> = (0..3).map(|i| session(60 + i)).collect();
    let outcomes: Vec<Result<String, Failure>> = std::thread::scope(|scope| {
        let threads: Vec<_> = sessions
            .iter()
            .map(|s| {
                let client = client_at(&rogue.url(), r#"{"rate_limit":"wait"}"#);
                scope.spawn(move || (0..20).map(|_| new_order(&client, s, ORDER)).collect::<Vec<_>>())
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(*refused.lock().unwrap(), 0, "no request met the venue's per-IP limit");
    for outcome in outcomes {
        outcome.unwrap();
    }
    assert_eq!(rogue.count("/new_order"), 60);
}

#[test]
fn public_calls_count_against_the_per_ip_limit_and_refuse_sends_nothing() {
    let (rogue, venue_refused) = per_ip_limited_venue();
    let client = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
    let mut outcomes: Vec<Result<String, Failure>> = Vec::new();
    while outcomes.iter().filter(|o| o.is_err()).count() < 3 && outcomes.len() < 300 {
        outcomes.push(call(&client, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)));
    }
    let passed = outcomes.iter().take_while(|o| o.is_ok()).count();
    assert!(passed >= 48, "a burst of 48 passes: {passed}");
    let refusals: Vec<&Failure> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert_eq!(refusals.len(), 3, "public calls are paced too");
    for f in refusals {
        assert_eq!((f.code, f.may_have_reached_venue, f.http_status), (PERPS_RATE_LIMITED, false, 0), "{f:?}");
        assert!(f.message.contains("per-IP request budget") && f.message.contains("nothing was sent"), "{f:?}");
        assert!((1..=1100).contains(&f.retry_after_ms), "{f:?}");
    }
    assert_eq!(rogue.seen().len(), outcomes.iter().filter(|o| o.is_ok()).count(), "refused calls were not sent");
    assert_eq!(*venue_refused.lock().unwrap(), 0);
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

/// A venue that answers `first` to the first request and accepts every later one; when each
/// request arrived.
fn venue_refusing_the_first(first: Vec<Step>) -> (Rogue, Arc<Mutex<Vec<Instant>>>) {
    timed_venue(move |index| if index == 0 { first.clone() } else { json(200, ACCEPTED) })
}

#[test]
fn a_venue_429_pauses_the_per_ip_limit_for_every_pacing_client_of_the_host() {
    const TOO_MANY: &[u8] = br#"{"code":429,"message":"too many requests"}"#;
    // The venue's 429 as an HTTP status with a Retry-After of 1 s, and as the code of an
    // HTTP 200 answer (whose headers the client does not read): a pause of the per-IP
    // limit's own window, 1.1 s.
    // The client that meets the 429 paces, or does not ("off": it goes on sending, but the
    // pacing clients of its host are paused all the same).
    let forms = [("HTTP 429", 429, "Retry-After: 1", 1000), ("code 429 under HTTP 200", 200, "X-Ignored: 1", -1)];
    for ((form, status, header, retry_after_ms), first_mode) in
        forms.iter().flat_map(|form| ["wait", "off"].map(|mode| (*form, mode)))
    {
        let form = format!("{form}, met by a client with rate_limit {first_mode}");
        let first = vec![Step::Write(response(status, &["Content-Type: application/json", header], TOO_MANY))];
        let (rogue, arrivals) = venue_refusing_the_first(first);
        let client = client_at(&rogue.url(), &format!(r#"{{"rate_limit":"{first_mode}"}}"#));
        let f = call(&client, Some(&session(80)), "query_balance", None).unwrap_err();
        assert_eq!((f.http_status, f.retry_after_ms), (status, retry_after_ms), "{form}: {f:?}");
        // Other accounts, other clients: their own buckets are full, but the venue's limit
        // is per IP. "refuse" sends nothing until the Retry-After has passed.
        let refuse = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
        let account = call(&refuse, Some(&session(81)), "query_balance", None);
        let public = call(&refuse, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#));
        for outcome in [account, public] {
            let f = outcome.unwrap_err();
            assert_eq!((f.code, f.may_have_reached_venue), (PERPS_RATE_LIMITED, false), "{form}: {f:?}");
            assert!(f.message.contains("per-IP request budget"), "{form}: {f:?}");
            assert!((1..=1100).contains(&f.retry_after_ms), "{form}: {f:?}");
        }
        assert_eq!(rogue.seen().len(), 1, "{form}: nothing sent during the pause");
        // "wait" sends once the pause is over.
        let wait = client_at(&rogue.url(), r#"{"rate_limit":"wait"}"#);
        call(&wait, Some(&session(82)), "query_balance", None).unwrap();
        let arrivals = arrivals.lock().unwrap();
        assert_eq!(arrivals.len(), 2, "{form}");
        let gap = arrivals[1] - arrivals[0];
        assert!(gap >= Duration::from_millis(950), "{form}: the next request arrived {gap:?} after the 429");
    }
}

#[test]
fn requests_of_a_client_that_does_not_pace_count_against_the_per_ip_limit() {
    // "off" sends 48 requests at once: never paced, never refused… Judged only on a burst
    // that fits well in one window (1.1 s, a constant of the library): a slower one has
    // partly left it. On a loaded machine a burst may take longer, and is then tried again
    // on a venue (a host, a window) of its own, a few times at most.
    let mut bursts = Vec::new();
    let (rogue, venue_refused, off, started) = loop {
        assert!(bursts.len() < 5, "no burst of 48 fitted in 900 ms: {bursts:?}");
        let (rogue, venue_refused) = per_ip_limited_venue();
        let off = client_at(&rogue.url(), r#"{"rate_limit":"off"}"#);
        let started = Instant::now();
        for _ in 0..48 {
            call(&off, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap();
        }
        let burst = started.elapsed();
        if burst < Duration::from_millis(900) {
            break (rogue, venue_refused, off, started);
        }
        bursts.push(burst);
    };
    // …but they fill the host's window: a pacing client of the host finds no room.
    let refuse = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
    let f = call(&refuse, Some(&session(90)), "query_balance", None).unwrap_err();
    assert_eq!((f.code, f.may_have_reached_venue), (PERPS_RATE_LIMITED, false), "{f:?}");
    assert!(f.message.contains("per-IP request budget"), "{f:?}");
    // "wait" sends when the first of the 48 has left the window (1.1 s).
    let wait = client_at(&rogue.url(), r#"{"rate_limit":"wait"}"#);
    call(&wait, Some(&session(91)), "query_balance", None).unwrap();
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(1050), "the paced request went {waited:?} after the burst began");
    assert_eq!(rogue.seen().len(), 49);
    assert_eq!(*venue_refused.lock().unwrap(), 0, "no request met the venue's per-IP limit");
    // The client that does not pace still never waits and is never refused.
    call(&off, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap();
}

/// The host's window filled by a client that does not pace, a `"wait"` client's request
/// waiting for its place (1.1 s), and meanwhile a venue 429 with `Retry-After: 3` to a public
/// request of the unpaced client (so the per-IP limit's, paused for all of it): the waiting
/// request's outcome, and when each request reached the venue.
fn a_429_during_a_wait(total_timeout_ms: u64) -> (Result<String, Failure>, Vec<(String, Instant)>) {
    let arrivals: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let kept = arrivals.clone();
    let rogue = Rogue::start(move |seen, _| {
        kept.lock().unwrap().push((seen.path().rsplit('/').next().unwrap_or("").to_owned(), Instant::now()));
        if seen.path().ends_with("/query_depth_book") {
            let body = br#"{"code":429,"message":"too many requests"}"#;
            vec![Step::Write(response(429, &["Content-Type: application/json", "Retry-After: 3"], body))]
        } else {
            json(200, ACCEPTED)
        }
    });
    let off = client_at(&rogue.url(), r#"{"rate_limit":"off"}"#);
    for _ in 0..48 {
        call(&off, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap();
    }
    let options = format!(r#"{{"rate_limit":"wait","total_timeout_ms":{total_timeout_ms}}}"#);
    let paced = client_at(&rogue.url(), &options);
    let outcome = std::thread::scope(|scope| {
        let waiting = scope.spawn(|| call(&paced, Some(&session(95)), "query_balance", None));
        std::thread::sleep(Duration::from_millis(300));
        let f = call(&off, None, "query_depth_book", Some(r#"{"symbol":"BTC-USD"}"#)).unwrap_err();
        assert_eq!(f.http_status, 429, "{f:?}");
        waiting.join().unwrap()
    });
    let arrivals = arrivals.lock().unwrap().clone();
    (outcome, arrivals)
}

#[test]
fn a_request_waiting_for_its_place_when_a_429_comes_waits_for_the_pause_too() {
    // Time enough (a wait may take up to half of 10 s): it goes once the pause is over.
    let (outcome, arrivals) = a_429_during_a_wait(10_000);
    outcome.unwrap();
    let at = |path: &str| arrivals.iter().find(|(p, _)| p == path).map(|(_, t)| *t).unwrap();
    let gap = at("query_balance") - at("query_depth_book");
    assert!(gap >= Duration::from_millis(2900), "sent {gap:?} after the 429 asked for 3 s");
    // Not enough (up to half of 4 s): refused, nothing sent.
    let (outcome, arrivals) = a_429_during_a_wait(4_000);
    let f = outcome.unwrap_err();
    assert_eq!((f.code, f.may_have_reached_venue), (PERPS_RATE_LIMITED, false), "{f:?}");
    assert!(f.message.contains("per-IP request budget"), "{f:?}");
    assert!(!arrivals.iter().any(|(p, _)| p == "query_balance"), "{arrivals:?}");
}

#[test]
fn an_accounts_429_holds_the_other_accounts_for_one_window_at_most() {
    // An account's 429 may be its own budget or the IP's: the account waits for all of its
    // Retry-After (5 s), the host's other requests for the per-IP limit's window (1.1 s).
    let (rogue, arrivals) = venue_refusing_the_first(vec![Step::Write(response(
        429,
        &["Content-Type: application/json", "Retry-After: 5"],
        br#"{"code":429,"message":"too many requests"}"#,
    ))]);
    let refuse = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
    let (spent, other) = (session(97), session(98));
    let f = call(&refuse, Some(&spent), "query_balance", None).unwrap_err();
    assert_eq!(f.http_status, 429, "{f:?}");
    let price = Some(r#"{"symbol":"BTC-USD"}"#);
    for outcome in
        [call(&refuse, Some(&other), "query_balance", None), call(&refuse, None, "query_symbol_price", price)]
    {
        let f = outcome.unwrap_err();
        assert_eq!(f.code, PERPS_RATE_LIMITED, "{f:?}");
        assert!(f.message.contains("per-IP") && (1..=1100).contains(&f.retry_after_ms), "{f:?}");
    }
    std::thread::sleep(Duration::from_millis(1150));
    call(&refuse, Some(&other), "query_balance", None).expect("another account, after one window");
    call(&refuse, None, "query_symbol_price", Some(r#"{"symbol":"BTC-USD"}"#)).expect("public, after one window");
    let f = call(&refuse, Some(&spent), "query_balance", None).unwrap_err();
    assert_eq!(f.code, PERPS_RATE_LIMITED, "{f:?}");
    assert!(f.message.contains("account") && f.retry_after_ms > 3000, "the account waits out its 5 s: {f:?}");
    assert_eq!(arrivals.lock().unwrap().len(), 3);
}
