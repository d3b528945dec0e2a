//! The REST transport's name resolution: the venue's host, looked up with a lookup function
//! given at construction (the system's `getaddrinfo`, or a test's: no test needs real DNS).
//! A call waits for a lookup within ureq's resolve limit, which the transport sets to
//! `connect_timeout_ms`, and what is left of the call's total (`timeout` in `resolve`).

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use ureq::config::IpFamily;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// A host's addresses: the system's (`system`), or a test's.
pub(super) type Lookup = fn(&str, u16) -> io::Result<Vec<SocketAddr>>;

/// The system resolver (`getaddrinfo`).
pub(super) fn system(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    (host, port).to_socket_addrs().map(Iterator::collect)
}

/// How long a host's resolved addresses are reused (Java's default DNS cache time is 30 s).
const RESOLVED_ADDRESSES_TTL: Duration = Duration::from_secs(10);

/// How long a host's last resolved addresses stand in when a fresh lookup fails or does not
/// answer in time (RFC 8767's "serve stale"; a name server's outage is usually shorter, and
/// a venue rarely moves its addresses within it). TLS still checks the venue's certificate
/// against the host name, so a stale address cannot be impersonated; at worst it no longer
/// answers, as without it.
const LAST_ADDRESSES_USABLE_FOR: Duration = Duration::from_secs(10 * 60);

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
    /// The addresses the last successful lookup gave, and when.
    known: Option<(Instant, ResolvedSocketAddrs)>,
    /// When the lookup still running started (`None`: none runs).
    running: Option<Instant>,
    /// Lookups ended so far: a waiter sees its lookup's end by this changing.
    ended: u64,
    /// Why the last lookup that ended failed, and when (`None`: it succeeded, or none ended).
    failure: Option<(Instant, Failure)>,
}

/// A failed lookup, kept for the calls that waited for it (ureq's error is not `Clone`).
#[derive(Debug)]
enum Failure {
    Io(io::ErrorKind, String),
    NoAddress,
}

impl Failure {
    fn of(error: ureq::Error) -> Failure {
        match error {
            ureq::Error::Io(e) => Failure::Io(e.kind(), e.to_string()),
            _ => Failure::NoAddress,
        }
    }

    fn error(&self) -> ureq::Error {
        match self {
            Failure::Io(kind, text) => ureq::Error::Io(io::Error::new(*kind, text.as_str())),
            Failure::NoAddress => ureq::Error::HostNotFound,
        }
    }
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
        let last = |entry: &Host| {
            entry.known.as_ref().filter(|(at, _)| at.elapsed() < LAST_ADDRESSES_USABLE_FOR).map(|(_, a)| a.clone())
        };
        let entry = &mut hosts[index];
        if entry.running.is_none() {
            if let Some((failed_at, _)) = &entry.failure
                && failed_at.elapsed() < RETRY_FAILED_LOOKUP_AFTER
                && let Some(addrs) = last(entry)
            {
                return Ok(addrs);
            }
            match self.start(index, host, port, config) {
                Ok(()) => entry.running = Some(Instant::now()),
                Err(e) => return last(entry).ok_or(e),
            }
        }
        let seen = entry.ended;
        loop {
            let entry = &hosts[index];
            if entry.ended != seen {
                return match (&entry.failure, &entry.known) {
                    (None, Some((_, addrs))) => Ok(addrs.clone()),
                    (Some((_, failure)), _) => last(entry).ok_or_else(|| failure.error()),
                    (None, None) => Err(ureq::Error::HostNotFound),
                };
            }
            let last = last(entry);
            // With the last addresses to fall back on, a lookup is waited for only until it
            // has run for the resolve limit.
            let lookup_limit = match (&last, entry.running, config.timeouts().resolve) {
                (Some(_), Some(started), Some(limit)) => started.checked_add(limit),
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

    /// Start a lookup of entry `index`'s host on a thread of its own, which records its
    /// outcome in the entry and wakes the calls waiting for it.
    fn start(&self, index: usize, host: &str, port: u16, config: &ureq::config::Config) -> Result<(), ureq::Error> {
        let (shared, lookup, name, family) =
            (Arc::clone(&self.shared), self.lookup, host.to_owned(), config.ip_family());
        std::thread::Builder::new().name("perps-resolve".into()).spawn(move || {
            // A lookup that panicked is a failed one: its entry must not stay "running".
            let found = std::panic::catch_unwind(|| lookup(&name, port))
                .unwrap_or_else(|_| Err(io::Error::other("the name lookup failed")));
            let outcome = found.map_err(ureq::Error::Io).and_then(|found| wanted(found, family));
            let mut hosts = shared.hosts.lock().unwrap_or_else(PoisonError::into_inner);
            let entry = &mut hosts[index];
            entry.running = None;
            entry.ended += 1;
            match outcome {
                Ok(addrs) => {
                    entry.known = Some((Instant::now(), addrs));
                    entry.failure = None;
                }
                Err(error) => entry.failure = Some((Instant::now(), Failure::of(error))),
            }
            drop(hosts);
            shared.lookup_ended.notify_all();
        })?;
        Ok(())
    }
}

/// The addresses of the configured IP family, at most as many as ureq keeps; `HostNotFound`
/// when none is left.
fn wanted(found: Vec<SocketAddr>, family: IpFamily) -> Result<ResolvedSocketAddrs, ureq::Error> {
    let mut addrs = ResolvedSocketAddrs::from_fn(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    for addr in family.keep_wanted(found.into_iter()) {
        if addrs.try_push(addr).is_err() {
            break;
        }
    }
    if addrs.is_empty() { Err(ureq::Error::HostNotFound) } else { Ok(addrs) }
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
            && let Some((at, addrs)) = &hosts[index].known
            && at.elapsed() < RESOLVED_ADDRESSES_TTL
        {
            return Ok(addrs.clone());
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
            hosts.push(Host { scheme, authority, known: None, running: None, ended: 0, failure: None });
            hosts.len() - 1
        });
        let host = uri.host().unwrap_or_default();
        // An IPv6 address keeps its brackets in a URL, not in a lookup.
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        match host.parse::<IpAddr>() {
            // An address needs no lookup.
            Ok(ip) => {
                let addrs = wanted(vec![SocketAddr::new(ip, port)], config.ip_family())?;
                hosts[index].known = Some((Instant::now(), addrs.clone()));
                Ok(addrs)
            }
            Err(_) => self.refresh(hosts, index, (host, port), config, timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use ureq::Timeout;

    /// A name server a test controls: it counts its lookups and holds each until the test
    /// opens it (at most a minute: a failed test leaves no thread behind for long).
    struct Gate {
        calls: AtomicUsize,
        open: Mutex<bool>,
        opened: Condvar,
    }

    impl Gate {
        const fn new() -> Gate {
            Gate { calls: AtomicUsize::new(0), open: Mutex::new(false), opened: Condvar::new() }
        }

        fn pass(&self, port: u16) -> io::Result<Vec<SocketAddr>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let open = self.open.lock().unwrap();
            let (open, _) = self.opened.wait_timeout_while(open, Duration::from_secs(60), |open| !*open).unwrap();
            if *open { Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))]) } else { Err(io::Error::other("no answer")) }
        }

        fn open(&self) {
            *self.open.lock().unwrap() = true;
            self.opened.notify_all();
        }

        fn calls(&self) -> usize {
            self.calls.load(Ordering::SeqCst)
        }
    }

    fn uri(text: &str) -> ureq::http::Uri {
        text.parse().unwrap()
    }

    fn config() -> ureq::config::Config {
        ureq::Agent::config_builder().build()
    }

    /// A call's time for the lookup, as ureq gives it.
    fn within(ms: u64) -> NextTimeout {
        NextTimeout { after: Duration::from_millis(ms).into(), reason: Timeout::Resolve, ..NextTimeout::default() }
    }

    static SINGLE: Gate = Gate::new();

    #[test]
    fn calls_share_the_one_running_lookup_and_the_next_call_reuses_one_given_up_on() {
        let resolver = RememberingResolver::new(|_, port| SINGLE.pass(port));
        let (uri, config) = (uri("https://venue.test/api/new_order"), config());
        std::thread::scope(|s| {
            let calls: Vec<_> = (0..4).map(|_| s.spawn(|| resolver.resolve(&uri, &config, within(200)))).collect();
            for call in calls {
                // The name server does not answer: each call gives up at its own time.
                assert!(matches!(call.join().unwrap(), Err(ureq::Error::Timeout(Timeout::Resolve))));
            }
        });
        assert_eq!(SINGLE.calls(), 1, "one lookup for the four calls");
        // The lookup given up on still runs: the next call waits for it, starts none.
        assert!(matches!(resolver.resolve(&uri, &config, within(200)), Err(ureq::Error::Timeout(Timeout::Resolve))));
        assert_eq!(SINGLE.calls(), 1);
        SINGLE.open();
        let addrs = resolver.resolve(&uri, &config, within(30_000)).unwrap();
        assert_eq!(&addrs[..], [SocketAddr::from(([127, 0, 0, 1], 443))]);
        assert_eq!(SINGLE.calls(), 1, "its answer served the call that found it");
        // Remembered: the next call needs no lookup.
        assert_eq!(&resolver.resolve(&uri, &config, within(0)).unwrap()[..], &addrs[..]);
        assert_eq!(SINGLE.calls(), 1);
    }

    static FAILING_CALLS: AtomicUsize = AtomicUsize::new(0);

    fn failing(_: &str, _: u16) -> io::Result<Vec<SocketAddr>> {
        FAILING_CALLS.fetch_add(1, Ordering::SeqCst);
        Err(io::Error::new(io::ErrorKind::NotFound, "no such host"))
    }

    #[test]
    fn an_address_needs_no_lookup_and_a_failure_is_never_remembered() {
        let resolver = RememberingResolver::new(failing);
        let config = config();
        let v4 = resolver.resolve(&uri("http://127.0.0.1:8080/x"), &config, within(1_000)).unwrap();
        assert_eq!(&v4[..], [SocketAddr::from(([127, 0, 0, 1], 8080))]);
        let v6 = resolver.resolve(&uri("https://[::1]/x"), &config, within(1_000)).unwrap();
        assert_eq!(v6[0].to_string(), "[::1]:443");
        assert_eq!(FAILING_CALLS.load(Ordering::SeqCst), 0);
        for calls in 1..=2 {
            let error = resolver.resolve(&uri("https://venue.test/x"), &config, within(30_000)).unwrap_err();
            assert!(matches!(&error, ureq::Error::Io(e) if e.to_string() == "no such host"), "{error}");
            assert_eq!(FAILING_CALLS.load(Ordering::SeqCst), calls, "each call asks again");
        }
    }

    static ANSWERING_CALLS: AtomicUsize = AtomicUsize::new(0);

    fn answering(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        ANSWERING_CALLS.fetch_add(1, Ordering::SeqCst);
        Ok(vec![SocketAddr::from(([127, 0, 0, 2], port))])
    }

    static FAILING_LATER_CALLS: AtomicUsize = AtomicUsize::new(0);

    fn failing_later(_: &str, _: u16) -> io::Result<Vec<SocketAddr>> {
        FAILING_LATER_CALLS.fetch_add(1, Ordering::SeqCst);
        Err(io::Error::new(io::ErrorKind::NotFound, "no such host"))
    }

    /// Move every time the resolver remembers `by` into the past (as if that long went by).
    fn age(resolver: &RememberingResolver, by: Duration) {
        let back = |at: &mut Instant| *at = at.checked_sub(by).unwrap();
        for host in resolver.hosts().iter_mut() {
            host.known.iter_mut().for_each(|(at, _)| back(at));
            host.running.iter_mut().for_each(back);
            host.failure.iter_mut().for_each(|(at, _)| back(at));
        }
    }

    #[test]
    fn the_last_addresses_serve_while_lookups_fail_for_ten_minutes() {
        let mut resolver = RememberingResolver::new(answering);
        let (uri, config) = (uri("https://venue.test/api/new_order"), config());
        let addrs = resolver.resolve(&uri, &config, within(30_000)).unwrap();
        assert_eq!(ANSWERING_CALLS.load(Ordering::SeqCst), 1);
        // The name server fails from now on.
        resolver.lookup = failing_later;
        age(&resolver, RESOLVED_ADDRESSES_TTL);
        let failures = || FAILING_LATER_CALLS.load(Ordering::SeqCst);
        assert_eq!(&resolver.resolve(&uri, &config, within(30_000)).unwrap()[..], &addrs[..]);
        assert_eq!(failures(), 1, "a fresh lookup was asked for first");
        // Just failed: not asked again at once.
        assert_eq!(&resolver.resolve(&uri, &config, within(30_000)).unwrap()[..], &addrs[..]);
        assert_eq!(failures(), 1);
        age(&resolver, RETRY_FAILED_LOOKUP_AFTER);
        assert_eq!(&resolver.resolve(&uri, &config, within(30_000)).unwrap()[..], &addrs[..]);
        assert_eq!(failures(), 2);
        // Ten minutes after they resolved, the last addresses no longer serve.
        age(&resolver, LAST_ADDRESSES_USABLE_FOR - RESOLVED_ADDRESSES_TTL - RETRY_FAILED_LOOKUP_AFTER);
        for calls in 3..=4 {
            let error = resolver.resolve(&uri, &config, within(30_000)).unwrap_err();
            assert!(matches!(&error, ureq::Error::Io(e) if e.to_string() == "no such host"), "{error}");
            assert_eq!(failures(), calls, "each call asks again");
        }
        assert_eq!(ANSWERING_CALLS.load(Ordering::SeqCst), 1);
    }

    static SLOW: Gate = Gate::new();

    #[test]
    fn a_lookup_that_has_not_answered_within_the_resolve_limit_gives_way_to_the_last_addresses() {
        let mut resolver = RememberingResolver::new(|_, port| Ok(vec![SocketAddr::from(([127, 0, 0, 3], port))]));
        let uri = uri("https://venue.test/api/new_order");
        let config = ureq::Agent::config_builder().timeout_resolve(Some(Duration::from_millis(200))).build();
        let addrs = resolver.resolve(&uri, &config, within(200)).unwrap();
        // The name server stops answering.
        resolver.lookup = |_, port| SLOW.pass(port);
        age(&resolver, RESOLVED_ADDRESSES_TTL);
        // Each call has 5 s, but a lookup is waited for only until it has run 200 ms.
        for _ in 0..3 {
            assert_eq!(&resolver.resolve(&uri, &config, within(5_000)).unwrap()[..], &addrs[..]);
            assert_eq!(SLOW.calls(), 1, "the one lookup still runs: none other started");
        }
        // A client that never resolved the host has nothing to fall back on: it fails as before.
        let never = RememberingResolver::new(|_, port| SLOW.pass(port));
        assert!(matches!(never.resolve(&uri, &config, within(200)), Err(ureq::Error::Timeout(Timeout::Resolve))));
        SLOW.open();
    }
}
