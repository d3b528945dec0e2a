//! The requests of one `cancel_all` run: paced by the run itself, counted, and sorted into
//! failures that end the run and failures of one request.
//!
//! Paced even when the client's `rate_limit` is off: a run against an account with many
//! orders makes many requests in a loop, and the venue allows an account about 22 a second
//! (45 credits a request, 1000 a second, a burst of 900: venue-api.md §3.2). Unpaced, the
//! confirmation alone went past 200 a second — every one beyond the limit a 429, and the
//! account's credits gone for the engine's own requests while the run lasts.

use super::super::Client;
use crate::endpoints::Endpoint;
use crate::error::{Code, Error, Result};
use crate::redact::CallSecrets;
use crate::session::Session;
use serde_json::Value;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The run's own pace: one request per `INTERVAL` (20 a second) after a burst of `BURST`.
const INTERVAL: Duration = Duration::from_millis(50);
const BURST: u32 = 10;
/// The longest pause for a rate refusal; a `Retry-After` asking for more is cut to it (the
/// deadline still bounds the run).
const MAX_RATE_PAUSE_MS: i64 = 10_000;
/// The pause after a rate refusal that gives no `Retry-After`.
const RATE_PAUSE_MS: i64 = 1_000;
/// The most bytes the open-orders listing may answer, or the client's `max_response_bytes`
/// when larger. The listing is the one answer of the run that grows with the account: the
/// venue's order row (§1.4: 25 fields) is ~0.6 KiB written compactly with a 64-byte
/// `cl_ord_id`, and 1200 rows (its `limit`) pass the default 1 MiB from 874 bytes a row — a
/// `remark` or `payload` of a few hundred bytes, or indented JSON, is enough. A run that fails
/// on its listing cancels nothing, just when the engine needs everything cancelled. 16 MiB
/// leaves 14 KiB a row.
const LISTING_MAX_BYTES: u64 = 16 << 20;

/// What one run sent, for its report.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counts {
    pub cancel_requests: u64,
    /// Cancel requests that failed, for whatever reason (with `confirm_ms` 0, the only sign
    /// of a batch the venue may not have received).
    pub failed_cancel_requests: u64,
    pub queries: u64,
}

/// One run: its requests and their counts. Shared by the confirmation's workers (`confirm`):
/// what they change is under one lock, never held across a request.
pub(super) struct Run<'a> {
    client: &'a Client,
    session: &'a Session,
    secrets: &'a CallSecrets<'a>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    counts: Counts,
    /// Set when a request was refused for the rate (the venue's 429, or the client's pacing):
    /// how long to pause before the next one. Asking on at once would only be refused again,
    /// and spend the account's credits that the engine's own requests need. Until it is
    /// taken, no request of the run starts (workers in flight finish theirs).
    pause: Option<Duration>,
    /// Set when a request ended the run (`ends_the_run`): no other request starts.
    ended: bool,
    pace: Pace,
}

/// The run's pace: when it allows the next request (a theoretical arrival time: a request
/// ahead of it by up to `BURST - 1` intervals goes at once).
#[derive(Default)]
struct Pace {
    next_slot: Option<Instant>,
}

impl Pace {
    /// How long a request arriving at `now` waits; its slot is taken.
    fn wait(&mut self, now: Instant) -> Duration {
        let slot = self.next_slot.map_or(now, |slot| slot.max(now));
        self.next_slot = Some(slot + INTERVAL);
        slot.saturating_duration_since(now).saturating_sub(INTERVAL * (BURST - 1))
    }

    /// Give back a slot `wait` took (the request was not sent). With requests of several
    /// workers waiting, the next request takes the latest slot taken, no earlier one: it goes
    /// no sooner than one of them would have, so the pace holds.
    fn give_back(&mut self) {
        self.next_slot = self.next_slot.map(|slot| slot - INTERVAL);
    }
}

impl State {
    fn halted(&self) -> bool {
        self.pause.is_some() || self.ended
    }
}

/// Whether a request was refused for the rate — the venue's 429, the client's pacing — or
/// left unsent by the run's halt (which `send` words as a rate refusal): the venue said
/// nothing of what it asked.
pub(super) fn refused_for_the_rate(e: &Error) -> bool {
    e.code() == Code::RateLimited || e.http_status() == 429
}

impl<'a> Run<'a> {
    pub(super) fn new(client: &'a Client, session: &'a Session, secrets: &'a CallSecrets<'a>) -> Run<'a> {
        Run { client, session, secrets, state: Mutex::default() }
    }

    /// The state, also after a worker panicked holding it (the counts stay true).
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn counts(&self) -> Counts {
        self.state().counts
    }

    /// The pause a rate refusal asked for, taken (the caller waits it out); requests start
    /// again.
    pub(super) fn take_pause(&self) -> Option<Duration> {
        self.state().pause.take()
    }

    /// Whether no request may start until the pause is taken (a rate refusal), or at all (the
    /// run ended).
    pub(super) fn halted(&self) -> bool {
        self.state().halted()
    }

    /// Send one request, paced, with `deadline` as its own (the client's `total_timeout_ms`
    /// without one). The outer error ends the run: the session is refused (every later request
    /// would be too), with what was already sent in its message. The inner one is a failure
    /// of this request alone — nothing sent when the pace would take it past `deadline`
    /// (`PERPS_TIMEOUT`) or when the run was halted while it waited for its turn.
    pub(super) fn send(&self, endpoint: Endpoint, params: &Value, deadline: Option<Instant>) -> Result<Result<String>> {
        let cancel = matches!(endpoint, Endpoint::CancelOrder | Endpoint::CancelOrders);
        if let Err(unsent) = self.wait_for_the_pace(deadline) {
            return Ok(Err(unsent));
        }
        {
            // Counted with the check above: a request counted is one that started.
            let mut state = self.state();
            if state.halted() {
                state.pace.give_back();
                // Nothing sent: the target is asked for again after the pause (or never: the
                // run has ended).
                return Ok(Err(Error::new(Code::RateLimited, "cancel_all: the run is halted (nothing sent)")));
            }
            let counts = &mut state.counts;
            if cancel {
                counts.cancel_requests += 1;
            } else if endpoint == Endpoint::QueryOrder {
                counts.queries += 1;
            }
        }
        let params = params.to_string();
        // The run lists once: the listing's own bound.
        let larger_answer = (endpoint == Endpoint::QueryOpenOrders).then_some(LISTING_MAX_BYTES);
        let answer = self.client.endpoint_answer(
            endpoint,
            Some(self.session),
            Some(&params),
            self.secrets,
            deadline,
            larger_answer,
        );
        match answer {
            Err(e) if ends_the_run(&e) => {
                let mut state = self.state();
                state.ended = true;
                // The cancels sent by now, by any worker, this one's not included: no request
                // starts once the run has ended.
                let sent = state.counts.cancel_requests - u64::from(cancel);
                Err(if sent > 0 {
                    e.with_message_prefix(&format!(
                        "cancel_all stopped after {sent} cancel request(s) were sent (orders may have been \
                         cancelled; look them up): "
                    ))
                    .reached_venue(true)
                } else {
                    e
                })
            }
            Err(e) => {
                let mut state = self.state();
                state.counts.failed_cancel_requests += u64::from(cancel);
                if refused_for_the_rate(&e) {
                    let ms = e.retry_after_ms().unwrap_or(RATE_PAUSE_MS).clamp(0, MAX_RATE_PAUSE_MS);
                    let pause = Duration::from_millis(ms.unsigned_abs());
                    // Refusals of several workers: the longest pause asked for.
                    state.pause = Some(state.pause.map_or(pause, |p| p.max(pause)));
                }
                Ok(Err(e))
            }
            answer => Ok(answer),
        }
    }

    /// Sleep until the pace allows a request (the lock is not held while sleeping); a
    /// `PERPS_TIMEOUT` (no sleep, no slot taken) when that is past `deadline`.
    fn wait_for_the_pace(&self, deadline: Option<Instant>) -> Result<()> {
        let wait = {
            let mut state = self.state();
            let now = Instant::now();
            let wait = state.pace.wait(now);
            if deadline.is_some_and(|deadline| now + wait >= deadline) {
                state.pace.give_back();
                return Err(Error::new(Code::Timeout, "cancel_all: the confirmation's time ran out (nothing sent)"));
            }
            wait
        };
        std::thread::sleep(wait);
        Ok(())
    }
}

/// A failure no later request can escape: the session's token is refused, expired or gone
/// (HTTP 401; 403: the venue refused the signature or its time), or the session cannot sign.
fn ends_the_run(e: &Error) -> bool {
    matches!(e.code(), Code::TokenExpired | Code::InvalidState | Code::InvalidArgument | Code::InvalidKey)
        || matches!(e.http_status(), 401 | 403)
}

/// Whether a cancel that failed is worth sending again as it was (cancels are safe to
/// repeat): its effect is unknown (it may have reached the venue), it never got there for
/// want of a connection (refused, timed out: a venue restarting, when a cancel_all is most
/// needed), or it was refused for the rate — not when the venue or the library refused it
/// for what it says.
pub(super) fn worth_sending_again(e: &Error) -> bool {
    e.may_have_reached_venue() || refused_for_the_rate(e) || matches!(e.code(), Code::Transport | Code::Timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_is_sent_again_unless_refused_for_what_it_says() {
        let not_reached = |code, message: &str| Error::new(code, message).reached_venue(false);
        for again in [
            not_reached(Code::Transport, "connection refused"),
            not_reached(Code::Timeout, "connect timed out"),
            Error::new(Code::Transport, "connection reset").reached_venue(true),
            Error::new(Code::HttpStatus, "HTTP 503").with_status(503).reached_venue(true),
            not_reached(Code::HttpStatus, "HTTP 429").with_status(429),
            not_reached(Code::RateLimited, "the client's pacing"),
        ] {
            assert!(worth_sending_again(&again), "{again:?}");
        }
        for not_again in [
            not_reached(Code::ApiError, "order not found"),
            not_reached(Code::HttpStatus, "HTTP 400").with_status(400),
            not_reached(Code::TokenExpired, "expired"),
            not_reached(Code::InvalidArgument, "bad params"),
        ] {
            assert!(!worth_sending_again(&not_again), "{not_again:?}");
        }
    }

    #[test]
    fn the_pace_lets_a_burst_through_then_one_request_per_interval() {
        let (mut pace, start) = (Pace::default(), Instant::now());
        let waits: Vec<Duration> = (0..14).map(|_| pace.wait(start)).collect();
        assert!(waits[..BURST as usize].iter().all(Duration::is_zero), "{waits:?}");
        assert_eq!(waits[BURST as usize..], [INTERVAL, INTERVAL * 2, INTERVAL * 3, INTERVAL * 4]);
        // A slot given back is taken by the next request.
        pace.give_back();
        assert_eq!(pace.wait(start), INTERVAL * 4);
        // After a quiet second the burst is there again.
        let later = start + Duration::from_secs(2);
        assert!((0..BURST).all(|_| pace.wait(later).is_zero()));
        assert_eq!(pace.wait(later), INTERVAL);
    }
}
