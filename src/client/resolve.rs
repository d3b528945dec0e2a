//! The REST transport's name resolution: the venue's host, looked up with a lookup function
//! given at construction (the system's `getaddrinfo`, or a test's: no test needs real DNS).
//! A call waits for a lookup within ureq's resolve limit, which the transport sets to
//! `connect_timeout_ms`, and what is left of the call's total (`timeout` in `resolve`).

use crate::name_lookup::{self, LAST_ADDRESSES_USABLE_FOR, Lookup, Next, Running};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use ureq::config::IpFamily;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// How long a host's resolved addresses are reused (Java's default DNS cache time is 30 s).
const RESOLVED_ADDRESSES_TTL: Duration = Duration::from_secs(10);

/// While the last addresses stand in, a lookup that failed is not tried again for this long:
/// a name server that fails at once would otherwise cost a lookup (a thread and a
/// `getaddrinfo`) per call.
const RETRY_FAILED_LOOKUP_AFTER: Duration = Duration::from_secs(1);

/// ureq resolves the host before it looks for a pooled connection, on every request, and
/// with a time limit set (we always set one) it resolves on a new thread each time: a
/// thread spawn and a `getaddrinfo` per order, ~30–50 µs of CPU on a kept-alive
/// connection that needs no address at all. This resolver remembers each host's addresses
/// for [`RESOLVED_ADDRESSES_TTL`]: a reused connection costs no lookup, and a new connection
/// within that time uses the addresses just resolved. A failure never answers a call from
/// memory: a call with no last addresses to fall back on always has a lookup asked.
///
/// When a fresh lookup fails or does not answer in time, the last addresses that resolved
/// serve, for [`LAST_ADDRESSES_USABLE_FOR`]: a venue whose addresses were known minutes ago
/// stays reachable, on its kept-alive connections and new ones, through a name server's
/// outage. "In time" is the resolve limit (`connect_timeout_ms`) counted from the lookup's
/// start: the call that starts it waits that long at most, the calls after it no longer once
/// it has run that long. A client that has never resolved the host waits for the lookup as
/// long as its own time allows, and fails as before.
///
/// One lookup per host at a time, per client (single flight): `getaddrinfo` cannot be
/// interrupted, and a slow or dead name server holds it for tens of seconds, so a lookup per
/// call, each given up on at the call's timeout, would pile up threads by the hundred at a
/// market maker's pace. The calls that need the host's addresses wait for the one running
/// lookup, each within its own time; one given up on goes on, and serves the calls that come
/// after. Per client rather than per process: the addresses it remembers are the client's
/// already, a dropped client takes them along, and no lock is shared between clients on the
/// path of every request; a process has one or a few clients, so at most as many lookups.
///
/// A lookup that never returns (an NSS module stuck on a dead daemon) would hold that single
/// flight for ever: once it has run `name_lookup::presumed_stuck_after`, it is left behind
/// and a new one starts beside it, up to `name_lookup::MAX_RUNNING_LOOKUPS` per host; past
/// that, a call with no last addresses fails at once, saying the lookups are not returning.
/// A late answer still counts when no newer lookup's has come.
#[derive(Debug)]
pub(super) struct RememberingResolver {
    lookup: Lookup,
    /// For a URL that is not http(s) (none of ours): its error.
    inner: DefaultResolver,
    /// Shared with the lookups' threads, which outlive the calls that gave up on them.
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// One entry per (scheme, authority), never removed (a client talks to one or two hosts,
    /// those of its two URLs): a lookup's thread finds its entry by its index.
    hosts: Mutex<Vec<Host>>,
    /// Notified whenever a lookup ends.
    lookup_ended: Condvar,
}

#[derive(Debug)]
struct Host {
    scheme: String,
    authority: String,
    /// The addresses the newest lookup that succeeded gave, and when.
    known: Option<Known>,
    /// The lookups still running, by id (ids grow with each lookup started).
    running: Running<u64>,
    /// The id of the next lookup.
    next_id: u64,
    /// Why the newest lookup that ended failed, when, and its id (`None`: a newer one
    /// succeeded, or none ended).
    failure: Option<(Instant, u64, Failure)>,
}

#[derive(Debug)]
struct Known {
    at: Instant,
    /// The lookup that gave them: an older one's late answer does not replace them.
    id: u64,
    addrs: ResolvedSocketAddrs,
}

/// A failed lookup, kept for the calls that waited for it (ureq's error is not `Clone`).
#[derive(Debug)]
struct Failure {
    kind: io::ErrorKind,
    reason: String,
}

impl Failure {
    fn error(&self, host: &str) -> ureq::Error {
        lookup_failed(host, self.kind, self.reason.clone())
    }
}

/// Why the venue's host could not be resolved, carried to `transport::map_error` inside
/// ureq's I/O error (the resolver can return no error of its own).
#[derive(Debug)]
pub(super) struct LookupFailed {
    host: String,
    reason: String,
}

impl std::fmt::Display for LookupFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the venue's host \"{}\" could not be resolved: {}", crate::error::excerpt(&self.host), self.reason)
    }
}

impl std::error::Error for LookupFailed {}

fn lookup_failed(host: &str, kind: io::ErrorKind, reason: String) -> ureq::Error {
    ureq::Error::Io(io::Error::new(kind, LookupFailed { host: host.to_owned(), reason }))
}

impl RememberingResolver {
    pub(super) fn new(lookup: Lookup) -> RememberingResolver {
        RememberingResolver { lookup, inner: DefaultResolver::default(), shared: Default::default() }
    }

    fn hosts(&self) -> MutexGuard<'_, Vec<Host>> {
        self.shared.hosts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The addresses of the host of entry `index`, whose remembered ones are not fresh: the
    /// running lookup's, or a new one's, waited for until `timeout` passes; the last ones
    /// (when not too old) if it fails, or has not answered within the resolve limit.
    fn refresh(
        &self,
        mut hosts: MutexGuard<'_, Vec<Host>>,
        index: usize,
        (host, port): (&str, u16),
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let deadline =
            (!timeout.after.is_not_happening()).then(|| Instant::now().checked_add(*timeout.after)).flatten();
        let resolve_limit = config.timeouts().resolve;
        let last = |entry: &Host| {
            entry.known.as_ref().filter(|k| k.at.elapsed() < LAST_ADDRESSES_USABLE_FOR).map(|k| k.addrs.clone())
        };
        let entry = &mut hosts[index];
        let waited = match entry.running.next(resolve_limit.unwrap_or_default()) {
            Next::Wait(_, &id) => id,
            Next::NotReturning => {
                let reason = name_lookup::not_returning(entry.running.len(), resolve_limit.unwrap_or_default());
                return last(entry).ok_or_else(|| lookup_failed(host, io::ErrorKind::Other, reason));
            }
            Next::Start => {
                if let Some((failed_at, ..)) = &entry.failure
                    && failed_at.elapsed() < RETRY_FAILED_LOOKUP_AFTER
                    && let Some(addrs) = last(entry)
                {
                    return Ok(addrs);
                }
                let id = entry.next_id;
                match self.start(index, id, host, port, config) {
                    Ok(()) => {
                        entry.next_id += 1;
                        entry.running.started(Instant::now(), id);
                        id
                    }
                    Err(e) => return last(entry).ok_or(e),
                }
            }
        };
        loop {
            let entry = &hosts[index];
            let Some(started) = entry.running.iter().find(|(_, id)| *id == waited).map(|(at, _)| *at) else {
                // Ended: its answer, or that of a newer lookup that ended before it.
                return match (&entry.known, &entry.failure) {
                    (Some(known), _) if known.id >= waited => Ok(known.addrs.clone()),
                    (_, Some((_, id, failure))) if *id >= waited => last(entry).ok_or_else(|| failure.error(host)),
                    _ => last(entry).ok_or(ureq::Error::HostNotFound),
                };
            };
            let last = last(entry);
            // With the last addresses to fall back on, a lookup is waited for only until it
            // has run for the resolve limit.
            let lookup_limit = match (&last, resolve_limit) {
                (Some(_), Some(limit)) => started.checked_add(limit),
                _ => None,
            };
            let until = match (deadline, lookup_limit) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            hosts = match until {
                None => self.shared.lookup_ended.wait(hosts).unwrap_or_else(PoisonError::into_inner),
                Some(until) => {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return last.ok_or(ureq::Error::Timeout(timeout.reason));
                    }
                    self.shared.lookup_ended.wait_timeout(hosts, left).unwrap_or_else(PoisonError::into_inner).0
                }
            };
        }
    }

    /// Start lookup `id` of entry `index`'s host on a thread of its own, which records its
    /// outcome in the entry (unless a newer lookup's is there) and wakes the calls waiting.
    fn start(
        &self,
        index: usize,
        id: u64,
        host: &str,
        port: u16,
        config: &ureq::config::Config,
    ) -> Result<(), ureq::Error> {
        // Counted process-wide until it returns: past the process's cap of stuck lookups of
        // this host, none starts (the caller serves the last addresses, or fails saying so).
        let in_flight =
            name_lookup::InFlight::begin(host).map_err(|why| lookup_failed(host, io::ErrorKind::Other, why))?;
        let (shared, lookup, name, family) =
            (Arc::clone(&self.shared), self.lookup, host.to_owned(), config.ip_family());
        std::thread::Builder::new().name("perps-resolve".into()).spawn(move || {
            // A lookup that panicked is a failed one: its entry must not stay "running".
            let found = std::panic::catch_unwind(|| lookup(&name, port))
                .unwrap_or_else(|_| Err(io::Error::other("the name lookup failed")));
            drop(in_flight);
            let outcome = match found {
                Ok(found) => wanted(found, family),
                Err(e) => Err(Failure { kind: e.kind(), reason: e.to_string() }),
            };
            let mut hosts = shared.hosts.lock().unwrap_or_else(PoisonError::into_inner);
            let entry = &mut hosts[index];
            entry.running.retain(|_, &running| running != id);
            let newer_known = entry.known.as_ref().is_some_and(|k| k.id > id);
            match outcome {
                Ok(addrs) if !newer_known => {
                    entry.known = Some(Known { at: Instant::now(), id, addrs });
                    entry.failure.take_if(|(_, failed, _)| *failed < id);
                }
                Err(failure) if !newer_known && entry.failure.as_ref().is_none_or(|(_, failed, _)| *failed < id) => {
                    entry.failure = Some((Instant::now(), id, failure));
                }
                // A late answer: a newer lookup's is there already.
                _ => {}
            }
            drop(hosts);
            shared.lookup_ended.notify_all();
        })?;
        Ok(())
    }
}

/// The addresses of the configured IP family, at most as many as ureq keeps; why not when
/// none is left.
fn wanted(found: Vec<SocketAddr>, family: IpFamily) -> Result<ResolvedSocketAddrs, Failure> {
    let none = if found.is_empty() { "the lookup gave no address" } else { "no address of the IP family in use" };
    let mut addrs = ResolvedSocketAddrs::from_fn(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    for addr in family.keep_wanted(found.into_iter()) {
        if addrs.try_push(addr).is_err() {
            break;
        }
    }
    if addrs.is_empty() { Err(Failure { kind: io::ErrorKind::NotFound, reason: none.to_owned() }) } else { Ok(addrs) }
}

impl Resolver for RememberingResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return self.inner.resolve(uri, config, timeout);
        };
        // The path of every request: one lock, one search of one or two entries, one copy.
        let mut hosts = self.hosts();
        let index = hosts.iter().position(|h| h.scheme == scheme && h.authority == authority.as_str());
        if let Some(index) = index
            && let Some(known) = &hosts[index].known
            && known.at.elapsed() < RESOLVED_ADDRESSES_TTL
        {
            return Ok(known.addrs.clone());
        }
        let port = match (authority.port_u16(), scheme) {
            (Some(port), "http" | "https") => port,
            (None, "http") => 80,
            (None, "https") => 443,
            _ => {
                drop(hosts);
                return self.inner.resolve(uri, config, timeout);
            }
        };
        let authority = authority.as_str();
        let index = index.unwrap_or_else(|| {
            let (scheme, authority) = (scheme.to_owned(), authority.to_owned());
            let (known, running, failure) = (None, Running::default(), None);
            hosts.push(Host { scheme, authority, known, running, next_id: 0, failure });
            hosts.len() - 1
        });
        let host = uri.host().unwrap_or_default();
        // An IPv6 address keeps its brackets in a URL, not in a lookup.
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        match host.parse::<IpAddr>() {
            // An address needs no lookup.
            Ok(ip) => {
                let addrs = wanted(vec![SocketAddr::new(ip, port)], config.ip_family())
                    .map_err(|_| ureq::Error::HostNotFound)?;
                // Never looked up: no lookup's answer is newer.
                hosts[index].known = Some(Known { at: Instant::now(), id: u64::MAX, addrs: addrs.clone() });
                Ok(addrs)
            }
            Err(_) => self.refresh(hosts, index, (host, port), config, timeout),
        }
    }
}

#[cfg(test)]
mod tests;
