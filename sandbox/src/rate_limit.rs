//! The venue's published request limits (venue-api.md §3.2), as token buckets:
//! - per account: each request costs 45 credits, credits refill at 1,000 per second up to a
//!   burst of 900 (20 requests at once, about 22 requests per second sustained);
//! - per IP address: 50 requests per second (a burst of 50, refilled at 50 per second).
//!
//! Measured on the monotonic clock, not the sandbox clock, so a clock offset cannot change
//! the rate.

use std::collections::HashMap;
use std::hash::Hash;
use std::time::Instant;

/// One bucket's rule: what a request costs, the refill per second and the most it holds.
#[derive(Clone, Copy)]
pub(crate) struct Limit {
    cost: f64,
    refill_per_sec: f64,
    burst: f64,
}

pub(crate) const PER_ACCOUNT: Limit = Limit { cost: 45.0, refill_per_sec: 1000.0, burst: 900.0 };
pub(crate) const PER_IP: Limit = Limit { cost: 1.0, refill_per_sec: 50.0, burst: 50.0 };

/// The buckets of one rule, one per key (an account, an IP address); a key's bucket starts
/// full when the key is first seen.
pub(crate) struct Buckets<K> {
    limit: Limit,
    by_key: HashMap<K, Bucket>,
}

struct Bucket {
    credits: f64,
    last: Instant,
}

impl<K: Eq + Hash> Buckets<K> {
    pub(crate) fn new(limit: Limit) -> Buckets<K> {
        Buckets { limit, by_key: HashMap::new() }
    }

    /// Takes one request's credits from `key`'s bucket; false (and nothing taken) when there
    /// are too few.
    pub(crate) fn take(&mut self, key: K, now: Instant) -> bool {
        let limit = self.limit;
        let bucket = self.by_key.entry(key).or_insert(Bucket { credits: limit.burst, last: now });
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        bucket.credits = (bucket.credits + elapsed * limit.refill_per_sec).min(limit.burst);
        bucket.last = now;
        if bucket.credits >= limit.cost {
            bucket.credits -= limit.cost;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn burst_of_twenty_then_refill() {
        let t0 = Instant::now();
        let mut b = Buckets::new(PER_ACCOUNT);
        assert_eq!((0..25).filter(|_| b.take("a", t0)).count(), 20);
        assert!(!b.take("a", t0 + Duration::from_millis(40)));
        assert!(b.take("a", t0 + Duration::from_millis(50)));
        assert!(b.take("b", t0 + Duration::from_millis(50)), "another account has its own bucket");
    }

    #[test]
    fn fifty_per_second_per_ip() {
        let t0 = Instant::now();
        let mut b = Buckets::new(PER_IP);
        assert_eq!((0..60).filter(|_| b.take(1, t0)).count(), 50);
        // One request's worth comes back every 20 ms.
        assert!(!b.take(1, t0 + Duration::from_millis(15)));
        assert!(b.take(1, t0 + Duration::from_millis(21)));
        // A second later, the whole burst again.
        let later = t0 + Duration::from_secs(2);
        assert_eq!((0..60).filter(|_| b.take(1, later)).count(), 50);
    }
}
