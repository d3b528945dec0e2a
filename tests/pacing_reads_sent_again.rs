//! Pacing (client option `rate_limit`) of the read sent again after the race of HTTP
//! keep-alive (the venue closes a kept-alive connection as the request arrives), against
//! purpose-built servers on 127.0.0.1: it is paced like any request, counted in both the
//! venue's per-IP limit (50 requests/s) and the account's credit bucket, waiting only within
//! the call's time, not sent when they have no room. The other pacing tests:
//! `pacing_limits.rs`.

mod common;
#[path = "common/pacing.rs"]
mod pacing;
#[path = "common/rogue_server.rs"]
mod rogue_server;

use common::abi::{Client, Failure, call};
use pacing::{ACCEPTED, client_at, session, timed_venue};
use perps::ffi::error::perps_code::*;
use rogue_server::{Rogue, Step, json};
use std::time::{Duration, Instant};

/// A pacing client's calls until pacing refuses one (200 at most), against a venue that closes
/// its second request unanswered (the race of HTTP keep-alive: the venue closes a kept-alive
/// connection as the request arrives), so that the second call's read is sent again on a new
/// connection. Returns the venue, when the calls began and each request arrived, the refusal
/// and how long the calls took; `None` when pacing refused none of 200 calls (a machine so
/// slow that the limit refilled as fast as it was spent: the burst cannot be judged).
fn burst_with_a_read_sent_again(
    call: impl Fn(&Client) -> Result<String, Failure>,
) -> Option<(Rogue, Instant, Vec<Instant>, Failure, Duration)> {
    let (rogue, arrivals) = timed_venue(|index| if index == 1 { vec![Step::Close] } else { json(200, ACCEPTED) });
    let client = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
    let started = Instant::now();
    let refusal = std::iter::repeat_with(|| call(&client)).take(200).find_map(Result::err)?;
    let took = started.elapsed();
    assert_eq!(refusal.code, PERPS_RATE_LIMITED, "{refusal:?}");
    assert_eq!(rogue.accepted(), 2, "the read was sent again on a second connection");
    let arrivals = arrivals.lock().unwrap().clone();
    Some((rogue, started, arrivals, refusal, took))
}

#[test]
fn a_read_sent_again_after_the_keep_alive_race_takes_its_place_in_the_per_ip_limit() {
    // 48 in any 1.1 s: the venue sees 48 requests, the one sent again among them — not 49.
    // Judged only on a burst that fits in one window (1.1 s, a constant of the library): on
    // a loaded machine a burst may take longer (or never fill the window: 200 calls at most),
    // and is then tried again on a venue (a host, a window) of its own, a few times at most.
    let price = Some(r#"{"symbol":"BTC-USD"}"#);
    let mut tooks = Vec::new();
    for _ in 0..5 {
        let Some((rogue, _, _, refusal, took)) =
            burst_with_a_read_sent_again(|client| call(client, None, "query_symbol_price", price))
        else {
            tooks.push(None);
            continue;
        };
        assert!(refusal.message.contains("per-IP"), "{refusal:?}");
        if took < Duration::from_millis(1000) {
            assert_eq!(rogue.seen().len(), 48, "the venue saw no more than the limit");
            return;
        }
        tooks.push(Some(took));
    }
    panic!("no burst fitted in one window: {tooks:?}");
}

/// The account's bucket (18 at once, then one per 45 ms, as GCRA) sends its k-th request
/// (from 0) no earlier than (k − 17) × 45 ms after its first, whatever the machine's speed: so
/// the k-th request the venue saw, if each took its place, arrived no earlier than that after
/// `started` (before the first call). A slow machine only makes the arrivals later.
fn assert_each_arrival_had_its_place_in_the_bucket(started: Instant, arrivals: &[Instant]) {
    for (k, arrival) in arrivals.iter().enumerate() {
        let earliest = Duration::from_millis(45) * (k as u32).saturating_sub(17);
        let at = *arrival - started;
        assert!(at >= earliest, "request {k} of the account arrived {at:?} after the first call, before {earliest:?}");
    }
}

#[test]
fn a_read_sent_again_after_the_keep_alive_race_takes_its_place_in_the_accounts_bucket() {
    // A burst of 18 (then one per 45 ms): the venue sees no more of the account's requests
    // than the bucket had places for, the one sent again among them — 18 when the burst is
    // faster than one refill. Judged on every burst from when each request arrived (above),
    // however slow; a burst pacing never refused (200 calls) is tried again, a few times.
    let account = session(91);
    let mut judged = None;
    for _ in 0..5 {
        judged = burst_with_a_read_sent_again(|client| call(client, Some(&account), "query_open_orders", None));
        if judged.is_some() {
            break;
        }
    }
    let (rogue, started, arrivals, refusal, _) = judged.expect("pacing refused none of 200 calls, 5 times");
    assert!(refusal.message.contains("account"), "{refusal:?}");
    assert!(rogue.seen().len() >= 18, "the burst of 18 went: {}", rogue.seen().len());
    assert_each_arrival_had_its_place_in_the_bucket(started, &arrivals);
    // One read sent again is one interval (45 ms) of difference: only a burst faster than that
    // shows it. Every call's read sent again makes the difference grow with the calls: the
    // venue closes each call's first send on the kept-alive connection (odd indexes); 40 calls
    // that wait for their places are 79 requests, the last no earlier than 61 × 45 = 2745 ms
    // after the first call (990 ms if the reads sent again took no place): a defect shows
    // unless each call takes 70 ms or more.
    let (rogue, arrivals) = timed_venue(|index| if index % 2 == 1 { vec![Step::Close] } else { json(200, ACCEPTED) });
    let client = client_at(&rogue.url(), r#"{"rate_limit":"wait"}"#);
    let started = Instant::now();
    for _ in 0..40 {
        call(&client, Some(&account), "query_open_orders", None).unwrap();
    }
    let arrivals = arrivals.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 79, "each call but the first sent its read again");
    assert_each_arrival_had_its_place_in_the_bucket(started, &arrivals);
}

#[test]
fn a_read_pacing_has_no_room_for_is_not_sent_again() {
    // The 48th request of the window meets the race: sending it again would be the 49th. It is
    // not sent again; the call fails as the first send did (the venue may have read it).
    // Judged only on a burst that fits in one window (1.1 s, a constant of the library): on
    // a loaded machine a burst may take longer, and is then tried again on a venue (a host,
    // a window) of its own, a few times at most.
    let price = Some(r#"{"symbol":"BTC-USD"}"#);
    let mut tooks = Vec::new();
    for _ in 0..5 {
        let rogue = Rogue::start(|_, index| if index == 47 { vec![Step::Close] } else { json(200, ACCEPTED) });
        let client = client_at(&rogue.url(), r#"{"rate_limit":"refuse"}"#);
        let started = Instant::now();
        for _ in 0..47 {
            call(&client, None, "query_symbol_price", price).unwrap();
        }
        let f = call(&client, None, "query_symbol_price", price).unwrap_err();
        let took = started.elapsed();
        if took < Duration::from_millis(1000) {
            assert_eq!((f.code, f.may_have_reached_venue), (PERPS_TRANSPORT, true), "{f:?}");
            assert_eq!((rogue.seen().len(), rogue.accepted()), (48, 1), "not sent again");
            return;
        }
        tooks.push(took);
    }
    panic!("no burst fitted in one window: {tooks:?}");
}

#[test]
fn a_read_sent_again_waits_for_its_place_only_within_the_calls_time() {
    // "wait": the 48th request of the window meets the race; its second send, the 49th,
    // waits for the window to have room when that leaves it half of total_timeout_ms, and is
    // not sent otherwise. The window's room comes 1.1 s after the first request was sent: no
    // earlier than `started` (before the first call) + 1.1 s, and about the first's arrival
    // + 1.1 s. The library's decision is judged against those times, not against how long the
    // 47 calls before it took. Judged only on a burst whose 48th request arrived well inside
    // the window (a slower one leaves less or no wait to see), else tried again on a venue (a
    // host, a window) of its own, a few times at most.
    let window = Duration::from_millis(1100);
    let price = Some(r#"{"symbol":"BTC-USD"}"#);
    // 3000 ms: a wait of up to 1.5 s is accepted. 800 ms: at most 400 ms, less than the
    // window leaves when the 48th request's call began within 650 ms of the first (it is
    // refused when it began within 700 ms: the wait needed, first + 1100 − now, exceeds the
    // call's start + 400 − now).
    for (total_ms, sent_again, judged_within) in [(3000, true, 900), (800, false, 650)] {
        let mut bursts = Vec::new();
        loop {
            assert!(bursts.len() < 5, "total_timeout_ms {total_ms}: no burst fitted: {bursts:?}");
            let (rogue, arrivals) =
                timed_venue(|index| if index == 47 { vec![Step::Close] } else { json(200, ACCEPTED) });
            let options = format!(r#"{{"rate_limit":"wait","total_timeout_ms":{total_ms}}}"#);
            let client = client_at(&rogue.url(), &options);
            let started = Instant::now();
            for _ in 0..47 {
                call(&client, None, "query_symbol_price", price).unwrap();
            }
            let call_started = Instant::now();
            let outcome = call(&client, None, "query_symbol_price", price);
            let (ended, took) = (Instant::now(), call_started.elapsed());
            let arrivals = arrivals.lock().unwrap().clone();
            let burst = arrivals[47] - started;
            if burst >= Duration::from_millis(judged_within) {
                bursts.push(burst);
                continue;
            }
            if sent_again {
                outcome.expect("sent again once the window has room");
                assert_eq!(arrivals.len(), 49);
                // Never before its place; not much later (the scheduler's slack only).
                let after_start = arrivals[48] - started;
                assert!(after_start >= window, "it waited for its place: sent {after_start:?} after the burst began");
                let after_first = arrivals[48] - arrivals[0];
                let late = window + Duration::from_millis(600);
                assert!(after_first < late, "sent {after_first:?} after the first request, its place at {window:?}");
            } else {
                let f = outcome.unwrap_err();
                assert_eq!((f.code, f.may_have_reached_venue), (PERPS_TRANSPORT, true), "{f:?}");
                assert_eq!(arrivals.len(), 48, "not sent again");
                // Refused at once, not after waiting for a place it could not have.
                let before_place = ended < arrivals[0] + window;
                assert!(
                    before_place,
                    "no wait beyond what the call may take: {took:?}, ended {:?} after the first",
                    ended - arrivals[0]
                );
            }
            assert!(took < Duration::from_millis(total_ms), "{took:?}");
            break;
        }
    }
}
