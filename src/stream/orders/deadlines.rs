//! The order stream's per-request deadline (client option `stream_request_timeout_ms`): a
//! request whose outcome has not come that long after its frame was written is reported once,
//! by a `request_timeout` status event, as of unknown fate — an engine must not wait for an
//! outcome that may never come (a venue that lost the request, or acked it and went quiet)
//! until the connection ends, up to the 24 h rotation. The request stays awaited: a late
//! outcome is still matched to it.
//!
//! Deadlines are kept in the order the requests were sent, which is the order they fall due
//! (one timeout for all), so the next one due is always the first: no scan, no per-order
//! timer. Entries of requests answered in time stay until they fall due (or a compaction), and
//! are then dropped unreported.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

#[derive(Default)]
pub(super) struct Deadlines {
    /// `None`: requests have no deadline (`stream_request_timeout_ms` 0).
    timeout: Option<Duration>,
    /// (when it falls due, the request's key), oldest first.
    due: VecDeque<(Instant, u128)>,
}

impl Deadlines {
    pub(super) fn new(timeout: Option<Duration>) -> Deadlines {
        Deadlines { timeout, due: VecDeque::new() }
    }

    pub(super) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// A request sent at `now`. True when its deadline is the only one waiting: the I/O
    /// thread, which schedules its wake-ups by the first deadline, may then be asleep past it
    /// and must be woken. Otherwise an earlier deadline wakes it in time to see this one.
    pub(super) fn start(&mut self, key: u128, now: Instant) -> bool {
        let Some(timeout) = self.timeout else { return false };
        let only = self.due.is_empty();
        self.due.push_back((now + timeout, key));
        only
    }

    /// The key of the next request fallen due by `now`, taken out.
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<u128> {
        match self.due.front() {
            Some(&(at, key)) if at <= now => {
                self.due.pop_front();
                Some(key)
            }
            _ => None,
        }
    }

    /// When the next deadline falls due.
    pub(super) fn next(&self) -> Option<Instant> {
        self.due.front().map(|&(at, _)| at)
    }

    /// Drop the entries of requests no longer awaited once they are most of the queue (a fast
    /// stream answered in time would otherwise keep a timeout's worth of them).
    pub(super) fn compact(&mut self, awaited: usize, is_awaited: impl Fn(u128) -> bool) {
        if self.due.len() > 2 * awaited + 1024 {
            self.due.retain(|&(_, key)| is_awaited(key));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_fall_due_in_the_order_requests_were_sent() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(Some(Duration::from_millis(100)));
        assert!(d.start(1, t0), "the only deadline: the I/O thread is woken");
        assert!(!d.start(2, t0 + Duration::from_millis(10)), "an earlier one wakes it in time");
        assert_eq!(d.next(), Some(t0 + Duration::from_millis(100)));
        assert_eq!(d.pop_due(t0 + Duration::from_millis(99)), None);
        assert_eq!(d.pop_due(t0 + Duration::from_millis(100)), Some(1));
        assert_eq!(d.pop_due(t0 + Duration::from_millis(100)), None);
        assert_eq!(d.next(), Some(t0 + Duration::from_millis(110)));
        assert_eq!(d.pop_due(t0 + Duration::from_secs(1)), Some(2));
        assert_eq!((d.next(), d.pop_due(t0 + Duration::from_secs(9))), (None, None));
        assert!(d.start(3, t0), "the only one again");
    }

    #[test]
    fn without_a_timeout_nothing_falls_due() {
        let mut d = Deadlines::new(None);
        assert!(!d.start(1, Instant::now()));
        assert_eq!((d.next(), d.pop_due(Instant::now() + Duration::from_secs(86_400))), (None, None));
    }

    #[test]
    fn compaction_keeps_the_awaited_requests_in_order() {
        let t0 = Instant::now();
        let mut d = Deadlines::new(Some(Duration::from_secs(1)));
        for key in 0..3000u128 {
            d.start(key, t0);
        }
        d.compact(3000, |_| false);
        assert_eq!(d.due.len(), 3000, "not while the queue is not mostly answered requests");
        d.compact(10, |key| key % 300 == 7);
        assert_eq!(
            d.due.iter().map(|&(_, key)| key).collect::<Vec<_>>(),
            (0..10).map(|i| i * 300 + 7).collect::<Vec<_>>()
        );
    }
}
