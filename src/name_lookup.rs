//! What the two name resolvers share: the REST transport's (`client/resolve.rs`: one per
//! client, its lookups shared by the calls that wait on a `Condvar`) and the streams'
//! (`stream/resolve.rs`: one per stream, waited for in `poll` beside the close signal). The
//! waiting differs; the lookup, how long the last addresses serve, and when a lookup that
//! does not return is left behind for another are the same on both sides, and defined here
//! so they cannot drift apart.

use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
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

#[cfg(test)]
mod tests {
    use super::*;

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
