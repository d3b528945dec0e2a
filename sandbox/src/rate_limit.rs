//! Per-account request credits, the venue's published limit: each request costs 45 credits,
//! credits refill at 1,000 per second up to a burst of 900 (20 requests at once, about 22
//! requests per second sustained). Measured on the monotonic clock, not the sandbox clock,
//! so a clock offset cannot change the rate.

use std::time::Instant;

const COST: f64 = 45.0;
const REFILL_PER_SEC: f64 = 1000.0;
const BURST: f64 = 900.0;

pub(crate) struct Bucket {
    credits: f64,
    last: Instant,
}

impl Bucket {
    pub(crate) fn new(now: Instant) -> Bucket {
        Bucket { credits: BURST, last: now }
    }

    /// Takes one request's credits; false (and nothing taken) when there are too few.
    pub(crate) fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.credits = (self.credits + elapsed * REFILL_PER_SEC).min(BURST);
        self.last = now;
        if self.credits >= COST {
            self.credits -= COST;
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
        let mut b = Bucket::new(t0);
        assert_eq!((0..25).filter(|_| b.take(t0)).count(), 20);
        assert!(!b.take(t0 + Duration::from_millis(40)));
        assert!(b.take(t0 + Duration::from_millis(50)));
    }
}
