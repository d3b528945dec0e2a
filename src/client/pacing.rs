//! Pacing account requests to the venue's credit bucket (client option `rate_limit`). The
//! venue's other limit, per IP, is `per_ip_limit`; `request_pacing` applies both.
//!
//! The venue charges each request of an account 45 credits from a bucket that refills at
//! 1,000 credits/s up to 900 (`venue-api.md` §3.2): a burst of 20 requests, then one every
//! 45 ms. Over budget, it answers 429. This module keeps the same bucket on the client's
//! side as GCRA (the generic cell rate algorithm) on one atomic: the bucket's whole state is
//! the "theoretical arrival time" of the next request, so admitting a request is a load, a
//! comparison and a compare-and-swap — no lock, no allocation.
//!
//! Our bucket holds 2 requests fewer than the venue's (18 in a burst): the venue measures
//! arrivals, we measure departures, and the slack absorbs up to 90 ms of difference in the
//! network's delay from one request to the next.
//!
//! One bucket per account (the wallet address after sign-in; for an API credential, its
//! request key id), shared by every thread, session and client of the process that sends for
//! that account to the same `perps_url`: a process-wide registry hands out the buckets, and
//! each client keeps the ones it has used. A bucket lives as long as the process (8 bytes
//! per account), so a client holds a plain reference to it: no reference count to touch per
//! request.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

/// Credits a request costs, credits refilled per second, and the bucket's size (venue).
pub const COST_CREDITS: u64 = 45;
pub const REFILL_PER_SECOND: u64 = 1000;
pub const BURST_CREDITS: u64 = 900;
/// Requests of the venue's burst kept in reserve (see the module doc).
const RESERVE_REQUESTS: u64 = 2;
/// The longest a venue 429 pauses the bucket, whatever its `Retry-After` says. The bucket
/// is shared by every client of the process that sends for the account, cancels included:
/// a `Retry-After` of a year (a proxy's mistake, a hostile answer) must not stop them all
/// for a year. The venue's own bucket refills completely in under a second, so 10 s is
/// ample; the error of the 429 still reports the `Retry-After` as the venue sent it.
pub const MAX_RETRY_AFTER_PAUSE: Duration = Duration::from_secs(10);

/// Time one request's credits take to refill: 45 ms.
const INTERVAL_NS: u64 = COST_CREDITS * 1_000_000_000 / REFILL_PER_SECOND;
/// How far ahead of now the next arrival time may run: a burst of 18 requests.
const TOLERANCE_NS: u64 = (BURST_CREDITS / COST_CREDITS - 1 - RESERVE_REQUESTS) * INTERVAL_NS;

/// Nanoseconds since the first use of pacing in this process (monotonic clock).
pub(super) fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// One account's bucket.
#[derive(Debug, Default)]
pub struct Bucket {
    /// When the bucket would be exactly empty again (ns on `now_ns`'s clock).
    next_free_ns: AtomicU64,
}

impl Bucket {
    /// Take one request's credits, waiting at most `max_wait`. `Ok(wait)`: the credits are
    /// taken; send after `wait` (zero when there was room). `Err(wait)`: nothing taken;
    /// `wait` is how long until a request would be admitted.
    pub fn admit(&self, max_wait: Duration) -> Result<Duration, Duration> {
        self.admit_at(now_ns(), max_wait)
    }

    /// `admit` at a given instant of `now_ns`'s clock: the time a request's pacing read once
    /// for both of its limits (and tests' own clock, so that a slow machine cannot change the
    /// arithmetic they check).
    pub(super) fn admit_at(&self, now: u64, max_wait: Duration) -> Result<Duration, Duration> {
        let max_wait = max_wait.as_nanos().min(u128::from(u64::MAX)) as u64;
        let mut current = self.next_free_ns.load(Ordering::Relaxed);
        loop {
            let start = current.max(now);
            let wait = (start - now).saturating_sub(TOLERANCE_NS);
            if wait > max_wait {
                return Err(Duration::from_nanos(wait));
            }
            match self.next_free_ns.compare_exchange_weak(
                current,
                start + INTERVAL_NS,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(Duration::from_nanos(wait)),
                Err(seen) => current = seen,
            }
        }
    }

    /// Give back the credits of a request `admit` took that will not be sent (another limit
    /// refused it): the requests admitted after it keep their places.
    pub fn give_back(&self) {
        let _ = self
            .next_free_ns
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |next| Some(next.saturating_sub(INTERVAL_NS)));
    }

    /// The venue said 429: treat the bucket as empty for `retry_after`, at most
    /// [`MAX_RETRY_AFTER_PAUSE`] (without one: for one request's refill), whatever our count
    /// said.
    pub fn exhausted(&self, retry_after: Option<Duration>) {
        self.exhausted_at(now_ns(), retry_after);
    }

    /// `exhausted` at a given instant of `now_ns`'s clock.
    fn exhausted_at(&self, now: u64, retry_after: Option<Duration>) {
        let pause = retry_after.map_or(INTERVAL_NS, |d| d.min(MAX_RETRY_AFTER_PAUSE).as_nanos() as u64);
        self.next_free_ns.fetch_max(now + TOLERANCE_NS + pause, Ordering::Relaxed);
    }
}

/// Buckets of every account this process sends for, by `perps_url` and account.
fn registry() -> &'static Mutex<Vec<(String, &'static Bucket)>> {
    static REGISTRY: Mutex<Vec<(String, &'static Bucket)>> = Mutex::new(Vec::new());
    &REGISTRY
}

/// A client's view of the registry: the buckets it has used, found without the global lock.
#[derive(Debug, Default)]
pub struct Buckets {
    known: RwLock<Vec<(String, &'static Bucket)>>,
}

impl Buckets {
    /// The bucket of `account` at `perps_url`, shared process-wide.
    pub fn of(&self, perps_url: &str, account: &str) -> &'static Bucket {
        if let Some((_, bucket)) =
            self.known.read().unwrap_or_else(PoisonError::into_inner).iter().find(|(a, _)| a == account)
        {
            return bucket;
        }
        let key = format!("{perps_url}\n{account}");
        let bucket = {
            let mut all = registry().lock().unwrap_or_else(PoisonError::into_inner);
            match all.iter().find(|(k, _)| *k == key) {
                Some((_, bucket)) => *bucket,
                None => {
                    let bucket: &'static Bucket = Box::leak(Box::default());
                    all.push((key, bucket));
                    bucket
                }
            }
        };
        self.known.write().unwrap_or_else(PoisonError::into_inner).push((account.to_owned(), bucket));
        bucket
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_eighteen_then_one_per_interval() {
        let bucket = Bucket::default();
        // A fixed instant, far from the clock's start: the bucket is full.
        let now = 10_000_000_000;
        let admitted = (0..25).filter(|_| bucket.admit_at(now, Duration::ZERO).is_ok()).count();
        assert_eq!(admitted, 18, "the venue's 20 less the reserve of 2");
        let wait = bucket.admit_at(now, Duration::ZERO).unwrap_err();
        assert_eq!(wait, Duration::from_millis(45), "the next request's credits refill in one interval");
        // Waiting is a reservation: queued requests are spaced one interval apart.
        let first = bucket.admit_at(now, Duration::from_secs(1)).unwrap();
        let second = bucket.admit_at(now, Duration::from_secs(1)).unwrap();
        assert_eq!((first, second), (Duration::from_millis(45), Duration::from_millis(90)));
        // Time refills the bucket: one interval later, one more request goes at once.
        let later = now + 3 * INTERVAL_NS;
        assert_eq!(bucket.admit_at(later, Duration::ZERO), Ok(Duration::ZERO));
        assert!(bucket.admit_at(later, Duration::ZERO).is_err());
    }

    #[test]
    fn credits_given_back_are_taken_again() {
        let bucket = Bucket::default();
        let now = 10_000_000_000;
        assert_eq!((0..18).filter(|_| bucket.admit_at(now, Duration::ZERO).is_ok()).count(), 18);
        assert!(bucket.admit_at(now, Duration::ZERO).is_err());
        bucket.give_back();
        assert_eq!(bucket.admit_at(now, Duration::ZERO), Ok(Duration::ZERO));
        assert!(bucket.admit_at(now, Duration::ZERO).is_err());
    }

    #[test]
    fn a_venue_429_empties_the_bucket() {
        let bucket = Bucket::default();
        assert!(bucket.admit(Duration::ZERO).is_ok());
        bucket.exhausted(Some(Duration::from_secs(2)));
        let wait = bucket.admit(Duration::ZERO).unwrap_err();
        assert!(wait > Duration::from_millis(1900), "{wait:?}");
    }

    #[test]
    fn a_huge_retry_after_pauses_the_bucket_for_the_cap_only() {
        let now = 10_000_000_000;
        for retry_after in [Duration::from_secs(31_536_000), Duration::MAX] {
            let bucket = Bucket::default();
            bucket.exhausted_at(now, Some(retry_after));
            assert_eq!(bucket.admit_at(now, Duration::ZERO), Err(MAX_RETRY_AFTER_PAUSE));
            let after_the_cap = now + MAX_RETRY_AFTER_PAUSE.as_nanos() as u64;
            assert_eq!(bucket.admit_at(after_the_cap, Duration::ZERO), Ok(Duration::ZERO));
        }
    }

    #[test]
    fn clients_of_the_same_account_and_venue_share_a_bucket() {
        let (a, b) = (Buckets::default(), Buckets::default());
        let one = a.of("http://venue-a", "0xabc");
        assert!(std::ptr::eq(one, b.of("http://venue-a", "0xabc")));
        assert!(std::ptr::eq(one, a.of("http://venue-a", "0xabc")));
        assert!(!std::ptr::eq(one, b.of("http://venue-a", "0xdef")));
        assert!(!std::ptr::eq(one, Buckets::default().of("http://venue-b", "0xabc")));
    }
}
