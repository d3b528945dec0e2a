//! The venue's WebSocket connection limits, per client IP (venue-api.md §2.1, §3.2): at most
//! `max_open` connections open at once (both endpoints together) and `max_new` new ones in
//! any 60 s. The venue does not document how it refuses; the sandbox refuses the handshake
//! with HTTP 429 and a JSON body naming the limit, plus `Retry-After` (seconds) when waiting
//! helps (the per-minute limit). Only accepted connections count as new.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

#[derive(Default)]
pub(crate) struct Limits {
    open: HashMap<IpAddr, usize>,
    opened: HashMap<IpAddr, VecDeque<Instant>>,
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub message: String,
    /// Seconds until a new connection would be admitted, when waiting helps.
    pub retry_after_s: Option<u64>,
}

impl Limits {
    /// Admits a new connection from `ip` (counting it) or says why not. 0 = no limit.
    pub(crate) fn admit(&mut self, ip: IpAddr, now: Instant, max_open: usize, max_new: usize) -> Result<(), Refusal> {
        let open = self.open.get(&ip).copied().unwrap_or(0);
        if max_open > 0 && open >= max_open {
            return Err(Refusal {
                message: format!("too many WebSocket connections from {ip}: {open} open, the limit is {max_open}"),
                retry_after_s: None,
            });
        }
        let recent = self.opened.entry(ip).or_default();
        while recent.front().is_some_and(|t| now.duration_since(*t) >= WINDOW) {
            recent.pop_front();
        }
        if max_new > 0 && recent.len() >= max_new {
            let oldest = *recent.front().expect("at least max_new > 0 entries");
            let wait = WINDOW.saturating_sub(now.duration_since(oldest));
            return Err(Refusal {
                message: format!(
                    "too many new WebSocket connections from {ip}: {} in the last minute, the limit is {max_new}",
                    recent.len()
                ),
                retry_after_s: Some(wait.as_secs() + u64::from(wait.subsec_nanos() > 0)),
            });
        }
        recent.push_back(now);
        *self.open.entry(ip).or_default() += 1;
        Ok(())
    }

    /// A connection from `ip` ended.
    pub(crate) fn release(&mut self, ip: IpAddr) {
        if let Some(n) = self.open.get_mut(&ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.open.remove(&ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_and_per_minute_limits() {
        let mut l = Limits::default();
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        let other: IpAddr = "127.0.0.2".parse().unwrap();
        let t0 = Instant::now();
        assert!(l.admit(ip, t0, 2, 3).is_ok());
        assert!(l.admit(ip, t0, 2, 3).is_ok());
        let refused = l.admit(ip, t0, 2, 3).unwrap_err();
        assert!(refused.message.contains("2 open, the limit is 2") && refused.retry_after_s.is_none());
        assert!(l.admit(other, t0, 2, 3).is_ok(), "per IP");
        l.release(ip);
        assert!(l.admit(ip, t0 + Duration::from_secs(10), 2, 3).is_ok(), "third new one in the minute");
        l.release(ip);
        let refused = l.admit(ip, t0 + Duration::from_secs(20), 2, 3).unwrap_err();
        assert_eq!(refused.retry_after_s, Some(40), "{refused:?}");
        assert!(l.admit(ip, t0 + Duration::from_secs(60), 2, 3).is_ok(), "the first left the window");
        let mut unlimited = Limits::default();
        for _ in 0..100 {
            assert!(unlimited.admit(ip, t0, 0, 0).is_ok());
        }
    }
}
