//! Pacing every REST request to a venue host to the venue's per-IP limit (client option
//! `rate_limit`): 50 requests/s from one IP address, answered with 429 beyond it
//! (`venue-api.md` §3.2). The account's credit bucket (`pacing`) is a separate, per-account
//! limit; a request passes both.
//!
//! The documents do not say how the venue counts 50 requests/s: a bucket refilled at 50/s,
//! or a count over the last second. Ours satisfies both: at most `REQUESTS` (48) requests in
//! any `WINDOW` (1.1 s), a sliding log of the last 48 send times. It keeps 2 requests and
//! 100 ms in reserve because the venue counts arrivals and we count departures: the slack
//! absorbs up to 100 ms of difference in the network's delay from one request to another.
//! Sustained, that is 43.6 requests/s; a burst of 48 goes at once.
//!
//! Why the log holds: request k is sent at least `WINDOW` after request k−48 (in the order
//! they were admitted), so among any 49 requests two were admitted a multiple of 48 apart
//! and are sent at least `WINDOW` apart — whatever order their sends end up in (a request
//! may be admitted for a later send, after its account's wait).
//!
//! One log per venue host (host and port), shared by every client, session and account of
//! the process that sends to it: the venue sees one IP. A log lives as long as the process
//! (about 800 bytes per host); a client looks up its hosts' logs once, when it is made, so
//! a request takes one short, uncontended lock and allocates nothing.
//!
//! Clients whose `rate_limit` is `"off"` are in the log too ([`HostWindow::record`]): they
//! never wait and are never refused, but the requests they send take their places in it, so
//! that the pacing clients of the same host leave room for them.
//!
//! A venue 429 to any request of the host (a pacing client's or not) pauses the host's log
//! ([`HostWindow::exhausted`]): the venue's limit is per IP, so every client of the process
//! that paces waits (or is refused) until the pause has passed — the answer's `Retry-After`,
//! at most `pacing::MAX_RETRY_AFTER_PAUSE`, one `WINDOW` without one; at most one `WINDOW`
//! after an account's request (`request_pacing::Limits::venue_429`) — instead of collecting
//! 429s of its own; a request that was already waiting for its place looks again when its wait
//! ends (`request_pacing`). The pause is one atomic beside the lock: admitting a request
//! reads it once.

use super::pacing::{MAX_RETRY_AFTER_PAUSE, now_ns};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Requests allowed in any `WINDOW`: the venue's 50 less a reserve of 2.
pub(crate) const REQUESTS: usize = 48;
/// The venue's second and 100 ms for the network's jitter.
pub(crate) const WINDOW: Duration = Duration::from_millis(1100);
const WINDOW_NS: u64 = WINDOW.as_nanos() as u64;

/// The send times of one venue host's last `REQUESTS` requests.
#[derive(Debug)]
pub struct HostWindow {
    sends: Mutex<SendLog>,
    /// No request is sent before this (ns on `now_ns`'s clock): the end of the pause a
    /// venue 429 asked for; 0 when there was none.
    paused_until_ns: AtomicU64,
}

#[derive(Debug)]
struct SendLog {
    /// When each of the last `REQUESTS` admitted requests is sent (ns on `now_ns`'s clock),
    /// in the order they were admitted, as a ring; `None`: no request yet.
    sent_ns: [Option<u64>; REQUESTS],
    /// The ring's oldest admission: the one this admission must follow by `WINDOW`.
    oldest: usize,
}

impl Default for HostWindow {
    fn default() -> Self {
        HostWindow {
            sends: Mutex::new(SendLog { sent_ns: [None; REQUESTS], oldest: 0 }),
            paused_until_ns: AtomicU64::new(0),
        }
    }
}

impl HostWindow {
    /// Admit one request to be sent no earlier than `earliest` from now (its account's
    /// wait), waiting at most `max_wait` in all. `Ok(wait)`: admitted; send after `wait`
    /// (at least `earliest`). `Err(wait)`: nothing taken; `wait` is how long until a
    /// request would be admitted.
    pub fn admit(&self, earliest: Duration, max_wait: Duration) -> Result<Duration, Duration> {
        self.admit_at(now_ns(), earliest, max_wait)
    }

    /// `admit` at a given instant of `now_ns`'s clock (the time a request's pacing read once
    /// for both of its limits; tests pass their own clock).
    pub(super) fn admit_at(&self, now: u64, earliest: Duration, max_wait: Duration) -> Result<Duration, Duration> {
        let earliest = now
            .saturating_add(earliest.as_nanos().min(u128::from(u64::MAX)) as u64)
            .max(self.paused_until_ns.load(Ordering::Relaxed));
        let mut log = self.sends.lock().unwrap_or_else(PoisonError::into_inner);
        let oldest = log.oldest;
        let send_at = match log.sent_ns[oldest] {
            Some(sent) => earliest.max(sent.saturating_add(WINDOW_NS)),
            None => earliest,
        };
        let wait = Duration::from_nanos(send_at - now);
        if wait > max_wait {
            return Err(wait);
        }
        log.sent_ns[oldest] = Some(send_at);
        log.oldest = (oldest + 1) % REQUESTS;
        Ok(wait)
    }

    /// Note a request sent now without pacing (a client whose `rate_limit` is `"off"`): it
    /// takes its place in the log, never waits and is never refused.
    pub fn record(&self) {
        self.record_at(now_ns());
    }

    /// `record` at a given instant of `now_ns`'s clock.
    pub(super) fn record_at(&self, now: u64) {
        let mut log = self.sends.lock().unwrap_or_else(PoisonError::into_inner);
        let oldest = log.oldest;
        log.sent_ns[oldest] = Some(now);
        log.oldest = (oldest + 1) % REQUESTS;
    }

    /// How much of a venue 429's pause is left now (zero: none).
    pub fn pause_left(&self) -> Duration {
        Duration::from_nanos(self.paused_until_ns.load(Ordering::Relaxed).saturating_sub(now_ns()))
    }

    /// The venue answered 429: send nothing more to this host for `retry_after`, at most
    /// [`MAX_RETRY_AFTER_PAUSE`] (without one: for one `WINDOW`), whatever the log says.
    pub fn exhausted(&self, retry_after: Option<Duration>) {
        self.exhausted_at(now_ns(), retry_after);
    }

    /// `exhausted` at a given instant of `now_ns`'s clock.
    pub(super) fn exhausted_at(&self, now: u64, retry_after: Option<Duration>) {
        let pause = retry_after.map_or(WINDOW_NS, |d| d.min(MAX_RETRY_AFTER_PAUSE).as_nanos() as u64);
        self.paused_until_ns.fetch_max(now.saturating_add(pause), Ordering::Relaxed);
    }
}

/// The log of one venue host, shared process-wide. `host` is the host and port as the
/// venue's URL names them (`url::BaseUrl`); called when a client is made, never per request.
pub fn for_host(host: &str) -> &'static HostWindow {
    static REGISTRY: Mutex<Vec<(String, &'static HostWindow)>> = Mutex::new(Vec::new());
    let mut all = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, window)) = all.iter().find(|(h, _)| h == host) {
        return window;
    }
    let window: &'static HostWindow = Box::leak(Box::default());
    all.push((host.to_owned(), window));
    window
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 10_000_000_000;

    #[test]
    fn a_burst_of_forty_eight_then_the_window_slides() {
        let window = HostWindow::default();
        let admitted = (0..60).filter(|_| window.admit_at(NOW, Duration::ZERO, Duration::ZERO).is_ok()).count();
        assert_eq!(admitted, 48, "the venue's 50, less the reserve of 2");
        assert_eq!(window.admit_at(NOW, Duration::ZERO, Duration::ZERO), Err(WINDOW));
        // Waiting is a reservation: the 49th request goes when the first leaves the window.
        assert_eq!(window.admit_at(NOW, Duration::ZERO, Duration::from_secs(2)), Ok(WINDOW));
        let later = NOW + WINDOW_NS;
        assert!(window.admit_at(later, Duration::ZERO, Duration::ZERO).is_ok(), "the second send left the window");
    }

    #[test]
    fn an_accounts_wait_is_kept_and_no_window_holds_more_than_forty_eight() {
        let window = HostWindow::default();
        // Requests admitted for sends out of order (some behind their account's wait).
        let mut sends = Vec::new();
        for i in 0..500u64 {
            let earliest = Duration::from_millis((i * 37) % 700);
            let now = NOW + i * 3_000_000;
            let wait = window.admit_at(now, earliest, Duration::from_secs(60)).unwrap();
            assert!(wait >= earliest);
            sends.push(now + wait.as_nanos() as u64);
        }
        sends.sort_unstable();
        for (i, first) in sends.iter().enumerate() {
            let within = sends[i..].iter().take_while(|t| **t < first + WINDOW_NS).count();
            assert!(within <= REQUESTS, "{within} sends within {WINDOW:?} of {first}");
        }
    }

    #[test]
    fn a_venue_429_pauses_the_host_for_its_retry_after_or_one_window() {
        let window = HostWindow::default();
        window.exhausted_at(NOW, Some(Duration::from_secs(2)));
        assert_eq!(window.admit_at(NOW, Duration::ZERO, Duration::ZERO), Err(Duration::from_secs(2)));
        // Waiting is a reservation behind the pause; an account's longer wait is kept.
        assert_eq!(window.admit_at(NOW, Duration::ZERO, Duration::from_secs(5)), Ok(Duration::from_secs(2)));
        assert_eq!(window.admit_at(NOW, Duration::from_secs(3), Duration::from_secs(5)), Ok(Duration::from_secs(3)));
        assert!(window.admit_at(NOW + 2_000_000_000, Duration::ZERO, Duration::ZERO).is_ok(), "the pause is over");
        // A shorter pause never shortens a longer one; none given: one window.
        let window = HostWindow::default();
        window.exhausted_at(NOW, None);
        window.exhausted_at(NOW, Some(Duration::from_millis(10)));
        assert_eq!(window.admit_at(NOW, Duration::ZERO, Duration::ZERO), Err(WINDOW));
        // A year (a proxy's mistake, a hostile answer) pauses for the cap only.
        let window = HostWindow::default();
        window.exhausted_at(NOW, Some(Duration::MAX));
        assert_eq!(window.admit_at(NOW, Duration::ZERO, Duration::ZERO), Err(MAX_RETRY_AFTER_PAUSE));
    }

    #[test]
    fn requests_recorded_without_pacing_take_their_places() {
        let window = HostWindow::default();
        for _ in 0..40 {
            window.record_at(NOW);
        }
        let admitted = (0..20).filter(|_| window.admit_at(NOW, Duration::ZERO, Duration::ZERO).is_ok()).count();
        assert_eq!(admitted, 8, "48 in the window, 40 of them sent unpaced");
        // Recording never waits, even with the window full.
        for _ in 0..100 {
            window.record_at(NOW);
        }
        assert_eq!(window.admit_at(NOW, Duration::ZERO, Duration::ZERO), Err(WINDOW));
    }

    #[test]
    fn clients_of_the_same_host_share_a_window() {
        assert!(std::ptr::eq(for_host("perps.example:443"), for_host("perps.example:443")));
        assert!(!std::ptr::eq(for_host("perps.example:443"), for_host("perps.example:8443")));
    }
}
