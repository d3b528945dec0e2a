//! What the two name resolvers share: the REST transport's (`client/resolve.rs`: one per
//! client, its lookups shared by the calls that wait on a `Condvar`) and the streams'
//! (`stream/resolve.rs`: one per stream, waited for in `poll` beside the close signal). The
//! waiting differs; the lookup, how long the last addresses serve, and when a lookup that
//! does not return is left behind for another are the same on both sides, and defined here
//! so they cannot drift apart.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A host's addresses: the system's (`system`), or a test's.
pub(crate) type Lookup = fn(&str, u16) -> io::Result<Vec<SocketAddr>>;

/// The system resolver (`getaddrinfo`).
pub(crate) fn system(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    (host, port).to_socket_addrs().map(Iterator::collect)
}

/// How long a host's last resolved addresses stand in when a fresh lookup fails or does not
/// answer in time (RFC 8767's "serve stale"; a name server's outage is usually shorter, and
/// a venue rarely moves its addresses within it). TLS still checks the venue's certificate
/// against the host name, so a stale address cannot be impersonated; at worst it no longer
/// answers, as without it.
pub(crate) const LAST_ADDRESSES_USABLE_FOR: Duration = Duration::from_secs(10 * 60);

/// The least time a lookup runs before it is presumed stuck. glibc's stub resolver gives up
/// after at most `timeout × attempts × servers` = 5 s × 2 × 3 = 30 s with resolv.conf(5)'s
/// defaults: a lookup still running at twice that is held by something that may never
/// return (an NSS module waiting on a dead daemon, a hung LDAP or mDNS backend), and waiting
/// on it alone would cut the host off for the life of the process.
const PRESUMED_STUCK_AFTER_AT_LEAST: Duration = Duration::from_secs(60);

/// The most lookups of one host that may run at once: the one waited for and those left
/// behind, presumed stuck. `getaddrinfo` cannot be interrupted, so each is a thread for as
/// long as it does not return; a resolver that never returns thus costs at most this many
/// threads per host (per client, per stream), not one per call. Four gives a resolver that
/// recovers three fresh chances, spread over minutes.
pub(crate) const MAX_RUNNING_LOOKUPS: usize = 4;

/// When a lookup is presumed stuck: it has run for twice the connect timeout (the time a
/// call gives a lookup), or `PRESUMED_STUCK_AFTER_AT_LEAST`, whichever is longer.
pub(crate) fn presumed_stuck_after(connect_timeout: Duration) -> Duration {
    connect_timeout.saturating_mul(2).max(PRESUMED_STUCK_AFTER_AT_LEAST)
}

/// A host's lookups still running, oldest first, each with its start and what its waiter
/// needs of it (`T`: an id, a channel). The newest is the one the host's callers wait for;
/// the older ones were presumed stuck and left behind, and are kept to be counted (and, on
/// the streams' side, for their late answer).
#[derive(Debug)]
pub(crate) struct Running<T> {
    lookups: Vec<(Instant, T)>,
}

/// What a caller that needs the host's addresses does about its running lookups.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next<'a, T> {
    /// None runs, or the newest is presumed stuck and there is room for one beside it.
    Start,
    /// Wait for the newest (it has not run long enough to be presumed stuck): this one, and
    /// when it started.
    Wait(Instant, &'a T),
    /// `MAX_RUNNING_LOOKUPS` run, all presumed stuck: the host's lookups are not returning.
    NotReturning,
}

impl<T> Default for Running<T> {
    fn default() -> Running<T> {
        Running { lookups: Vec::new() }
    }
}

impl<T> Running<T> {
    /// What to do, with `connect_timeout` the time a call gives a lookup.
    pub(crate) fn next(&self, connect_timeout: Duration) -> Next<'_, T> {
        match self.lookups.last() {
            None => Next::Start,
            Some((started, newest)) if started.elapsed() < presumed_stuck_after(connect_timeout) => {
                Next::Wait(*started, newest)
            }
            Some(_) if self.lookups.len() < MAX_RUNNING_LOOKUPS => Next::Start,
            Some(_) => Next::NotReturning,
        }
    }

    /// The lookup callers wait for, and when it started.
    pub(crate) fn newest(&self) -> Option<(Instant, &T)> {
        self.lookups.last().map(|(at, t)| (*at, t))
    }

    /// A lookup that just started: the newest now.
    pub(crate) fn started(&mut self, at: Instant, lookup: T) {
        self.lookups.push((at, lookup));
    }

    /// The newest lookup, no longer running (or no longer waited for).
    pub(crate) fn pop_newest(&mut self) -> Option<(Instant, T)> {
        self.lookups.pop()
    }

    /// The lookups, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(Instant, T)> {
        self.lookups.iter()
    }

    /// Keep only the lookups `keep` says (those that have not ended), in order.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(Instant, &T) -> bool) {
        self.lookups.retain(|(at, t)| keep(*at, t));
    }

    pub(crate) fn len(&self) -> usize {
        self.lookups.len()
    }

    /// Move every start `by` into the past (a test's clock: as if that long went by).
    #[cfg(test)]
    pub(crate) fn age(&mut self, by: Duration) {
        self.lookups.iter_mut().for_each(|(at, _)| *at = at.checked_sub(by).unwrap());
    }
}

/// Why a host cannot be resolved while `running` lookups of it are all presumed stuck.
pub(crate) fn not_returning(running: usize, connect_timeout: Duration) -> String {
    format!(
        "its name lookups are not returning ({running} lookups have run for more than {} s each \
         without an answer; the system's resolver or one of its NSS modules is stuck)",
        presumed_stuck_after(connect_timeout).as_secs()
    )
}

/// The most lookups of one host, presumed stuck, that the whole process keeps running. The cap
/// of `MAX_RUNNING_LOOKUPS` is per REST client and per stream: an engine whose watchdog closes
/// and reopens its streams while the resolver hangs would leave up to that many threads behind
/// with each stream, without end. Past this count, no new lookup of the host starts anywhere
/// in the process until one of them returns (callers serve the last addresses, or fail at
/// once saying the lookups are not returning). Lookups that have not run that long never
/// count: a mass reconnection of many streams with a healthy resolver is never refused.
pub(crate) const MAX_STUCK_LOOKUPS_PER_PROCESS: usize = 8;

/// Every lookup running in the process: its host and when it started.
static IN_FLIGHT: Mutex<Vec<(u64, String, Instant)>> = Mutex::new(Vec::new());

/// A lookup counted in `IN_FLIGHT` until dropped (moved into the lookup's thread, dropped when
/// `getaddrinfo` returns).
#[derive(Debug)]
pub(crate) struct InFlight(u64);

impl InFlight {
    /// Count a lookup of `host` that is about to start, unless `MAX_STUCK_LOOKUPS_PER_PROCESS`
    /// lookups of it have run longer than `PRESUMED_STUCK_AFTER_AT_LEAST`: then why not.
    pub(crate) fn begin(host: &str) -> Result<InFlight, String> {
        InFlight::begin_at(host, Instant::now())
    }

    pub(crate) fn begin_at(host: &str, now: Instant) -> Result<InFlight, String> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        let mut all = IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner);
        let stuck = all
            .iter()
            .filter(|(_, h, started)| {
                h == host && now.saturating_duration_since(*started) >= PRESUMED_STUCK_AFTER_AT_LEAST
            })
            .count();
        if stuck >= MAX_STUCK_LOOKUPS_PER_PROCESS {
            return Err(format!(
                "its name lookups are not returning ({stuck} lookups of it in this process have run for more \
                 than {} s each without an answer; the system's resolver or one of its NSS modules is stuck)",
                PRESUMED_STUCK_AFTER_AT_LEAST.as_secs()
            ));
        }
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        all.push((id, host.to_owned(), now));
        Ok(InFlight(id))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner).retain(|(id, ..)| *id != self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_keeps_at_most_its_cap_of_stuck_lookups_of_a_host_and_never_refuses_fresh_ones() {
        let host = "process-cap.test";
        let long_ago = Instant::now();
        // Many lookups at once that have not run long (a mass reconnection): all start.
        let fresh: Vec<InFlight> = (0..3 * MAX_STUCK_LOOKUPS_PER_PROCESS)
            .map(|_| InFlight::begin_at(host, long_ago).expect("a fresh lookup is never refused"))
            .collect();
        drop(fresh);
        let mut stuck: Vec<InFlight> =
            (0..MAX_STUCK_LOOKUPS_PER_PROCESS).map(|_| InFlight::begin_at(host, long_ago).unwrap()).collect();
        // Those have now run past the presumption: no more of that host, anywhere in the process.
        let later = long_ago + PRESUMED_STUCK_AFTER_AT_LEAST;
        let refused = InFlight::begin_at(host, later).unwrap_err();
        assert!(refused.contains("8 lookups of it in this process"), "{refused}");
        // Another host is not affected.
        drop(InFlight::begin_at("other-host.test", later).unwrap());
        // One returns: room for one more, the others still counted.
        stuck.pop();
        let replacement = InFlight::begin_at(host, later).expect("one returned: room for one");
        let after = later + PRESUMED_STUCK_AFTER_AT_LEAST;
        assert!(InFlight::begin_at(host, after).is_err(), "the replacement is stuck too by then");
        drop((stuck, replacement));
        assert!(InFlight::begin_at(host, after).is_ok());
    }

    #[test]
    fn a_stuck_lookup_gives_way_to_another_until_the_cap() {
        let connect = Duration::from_secs(5);
        let mut running = Running::default();
        assert_eq!(running.next(connect), Next::Start);
        running.started(Instant::now(), 0);
        assert!(matches!(running.next(connect), Next::Wait(_, 0)), "a lookup just started is waited for");
        for id in 1..MAX_RUNNING_LOOKUPS {
            running.age(PRESUMED_STUCK_AFTER_AT_LEAST);
            assert_eq!(running.next(connect), Next::Start, "presumed stuck: another beside it");
            running.started(Instant::now(), id);
            assert!(matches!(running.next(connect), Next::Wait(_, &waited) if waited == id));
        }
        running.age(PRESUMED_STUCK_AFTER_AT_LEAST);
        assert_eq!(running.next(connect), Next::NotReturning, "{MAX_RUNNING_LOOKUPS} stuck: no more");
        // One returns: room for a new one.
        running.retain(|_, &id| id != 1);
        assert_eq!(running.next(connect), Next::Start);
        assert_eq!(running.newest().map(|(_, &id)| id), Some(MAX_RUNNING_LOOKUPS - 1));
    }

    #[test]
    fn a_long_connect_timeout_lengthens_the_time_before_a_lookup_is_presumed_stuck() {
        assert_eq!(presumed_stuck_after(Duration::from_secs(5)), Duration::from_secs(60));
        assert_eq!(presumed_stuck_after(Duration::from_secs(45)), Duration::from_secs(90));
        let mut running = Running::default();
        running.started(Instant::now(), ());
        running.age(Duration::from_secs(61));
        assert!(matches!(running.next(Duration::from_secs(45)), Next::Wait(..)));
        assert_eq!(running.next(Duration::from_secs(5)), Next::Start);
    }
}
