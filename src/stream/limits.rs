//! The venue's limits on WebSocket connections (10 open per IP, 30 new per minute), kept
//! process-wide per venue host so that every stream of every client in the process shares
//! them, and the jittered exponential backoff between reconnection attempts. The host is
//! keyed as the REST per-IP limit keys it (`StreamSettings::stream_host`).

use crate::error::{Code, Error};
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);

#[derive(Default)]
struct HostCount {
    open: usize,
    /// When each connection of the last minute was started.
    recent: VecDeque<Instant>,
}

fn hosts() -> &'static Mutex<HashMap<String, HostCount>> {
    static HOSTS: OnceLock<Mutex<HashMap<String, HostCount>>> = OnceLock::new();
    HOSTS.get_or_init(Default::default)
}

/// One counted open connection; dropping it frees its place.
#[derive(Debug)]
pub struct Permit {
    host: String,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut hosts = hosts().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = hosts.get_mut(&self.host) {
            count.open = count.open.saturating_sub(1);
        }
    }
}

/// What stops a new connection now.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `max_open` connections to this host are open: wait for one to close.
    TooManyOpen,
    /// `per_minute` connections were started in the last minute: the next one may start
    /// after this long.
    TooManyNew(Duration),
}

/// Take a place for a new connection to `host`, or say why not.
pub fn try_acquire(host: &str, max_open: usize, per_minute: usize) -> std::result::Result<Permit, Refusal> {
    let now = Instant::now();
    let mut hosts = hosts().lock().unwrap_or_else(PoisonError::into_inner);
    let count = hosts.entry(host.to_owned()).or_default();
    while count.recent.front().is_some_and(|t| now.duration_since(*t) >= WINDOW) {
        count.recent.pop_front();
    }
    if count.open >= max_open {
        return Err(Refusal::TooManyOpen);
    }
    if count.recent.len() >= per_minute {
        let oldest = count.recent[count.recent.len() - per_minute];
        return Err(Refusal::TooManyNew(WINDOW.saturating_sub(now.duration_since(oldest))));
    }
    count.open += 1;
    count.recent.push_back(now);
    Ok(Permit { host: host.to_owned() })
}

/// The refusal as the error `perps_stream_open` returns (nothing was sent).
pub fn refusal_error(refusal: &Refusal, max_open: usize, per_minute: usize) -> Error {
    match refusal {
        Refusal::TooManyOpen => Error::new(
            Code::StreamLimit,
            format!(
                "{max_open} WebSocket connections to this venue are already open (the venue's per-IP limit); close one first"
            ),
        ),
        Refusal::TooManyNew(wait) => Error::new(
            Code::StreamLimit,
            format!(
                "{per_minute} WebSocket connections to this venue were opened in the last minute (the venue's limit); \
                 the next is allowed in {} ms",
                wait.as_millis()
            ),
        ),
    }
}

/// Jittered exponential backoff: attempt n waits a uniformly random time between half and
/// all of `min · 2^n`, capped at `max`.
#[derive(Debug)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    attempt: u32,
}

impl Backoff {
    pub fn new(min: Duration, max: Duration) -> Backoff {
        Backoff { min, max, attempt: 0 }
    }

    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    pub fn next_delay(&mut self) -> Duration {
        let ceiling = self.min.saturating_mul(1u32 << self.attempt.min(20)).min(self.max);
        self.attempt = self.attempt.saturating_add(1);
        let half = ceiling / 2;
        half + half.mul_f64(random_unit())
    }
}

/// The longest `Retry-After` a reconnection waits: the venue's connection-limit window. A
/// venue that asks for more (or sends a date far ahead) is asked again after a minute rather
/// than left alone for hours, and the caller reads the whole ask in `reconnect_failed`.
const MAX_RETRY_AFTER_WAIT: Duration = WINDOW;

/// Whether a `Retry-After` of `ms` asks for more than a reconnection waits (it is capped).
pub fn retry_after_capped(ms: i64) -> bool {
    ms > MAX_RETRY_AFTER_WAIT.as_millis() as i64
}

/// After an upgrade refused with 429 or 503 and no `Retry-After`, or one asking for less (0,
/// a date past): the venue allows 30 new connections per minute per IP, so the next attempt
/// waits at least 60 s / 30.
pub(crate) const MIN_WAIT_AFTER_TOO_MANY: Duration = Duration::from_secs(2);

/// The wait before the next connection: the backoff's, or the venue's `Retry-After` (ms)
/// when that is longer (capped at [`MAX_RETRY_AFTER_WAIT`]).
pub fn retry_delay(backoff: Duration, retry_after_ms: Option<i64>) -> Duration {
    let asked = retry_after_ms.map_or(Duration::ZERO, |ms| Duration::from_millis(ms.max(0) as u64));
    backoff.max(asked.min(MAX_RETRY_AFTER_WAIT))
}

/// A uniform number in [0, 1) from the OS RNG (a fixed midpoint if it fails: the jitter only
/// spreads reconnections, it protects nothing).
fn random_unit() -> f64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_and_per_minute_limits_are_counted_per_host() {
        let host = "limits-test.invalid:1";
        let a = try_acquire(host, 2, 3).unwrap();
        let b = try_acquire(host, 2, 3).unwrap();
        assert_eq!(try_acquire(host, 2, 3).unwrap_err(), Refusal::TooManyOpen);
        assert!(try_acquire("other-host.invalid:1", 2, 3).is_ok(), "another host has its own count");
        drop(a);
        let c = try_acquire(host, 2, 3).unwrap();
        drop((b, c));
        match try_acquire(host, 2, 3) {
            Err(Refusal::TooManyNew(wait)) => assert!(wait > Duration::from_secs(59) && wait <= WINDOW),
            other => panic!("expected a per-minute refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_retry_after_lengthens_the_wait_up_to_the_cap_never_shortens_it() {
        let ms = Duration::from_millis;
        assert_eq!(retry_delay(ms(40), None), ms(40));
        assert_eq!(retry_delay(ms(40), Some(1000)), ms(1000));
        assert_eq!(retry_delay(ms(400), Some(100)), ms(400));
        assert_eq!(retry_delay(ms(40), Some(i64::MAX)), MAX_RETRY_AFTER_WAIT);
        assert!(retry_after_capped(i64::MAX) && retry_after_capped(60_001));
        assert!(!retry_after_capped(60_000) && !retry_after_capped(0));
    }

    #[test]
    fn backoff_grows_jittered_and_stays_under_the_ceiling() {
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_millis(1000));
        let delays: Vec<Duration> = (0..8).map(|_| backoff.next_delay()).collect();
        for (n, d) in delays.iter().enumerate() {
            let ceiling = Duration::from_millis((100u64 << n).min(1000));
            assert!(*d >= ceiling / 2 && *d <= ceiling, "attempt {n}: {d:?} outside [{:?}, {ceiling:?}]", ceiling / 2);
        }
        backoff.reset();
        assert!(backoff.next_delay() <= Duration::from_millis(100));
    }
}
