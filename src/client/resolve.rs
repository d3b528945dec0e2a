//! The REST transport's name resolution: the venue's host, looked up with a lookup function
//! given at construction (the system's `getaddrinfo`, or a test's: no test needs real DNS).

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::mpsc;
use std::time::{Duration, Instant};
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

/// ureq resolves the host before it looks for a pooled connection, on every request, and
/// with a time limit set (we always set one) it resolves on a new thread each time: a
/// thread spawn and a `getaddrinfo` per order, ~30–50 µs of CPU on a kept-alive
/// connection that needs no address at all. This resolver remembers each host's addresses
/// for [`RESOLVED_ADDRESSES_TTL`]: a reused connection costs no lookup, and a new connection
/// within that time uses the addresses just resolved. Failures are never remembered.
#[derive(Debug)]
pub(super) struct RememberingResolver {
    lookup: Lookup,
    /// For a URL that is not http(s) (none of ours): its error.
    inner: DefaultResolver,
    /// (scheme, authority) → when resolved, addresses. A client talks to one or two hosts.
    known: std::sync::Mutex<Vec<(String, String, Instant, ResolvedSocketAddrs)>>,
}

impl RememberingResolver {
    pub(super) fn new(lookup: Lookup) -> RememberingResolver {
        RememberingResolver { lookup, inner: DefaultResolver::default(), known: Default::default() }
    }

    /// A lookup on a thread of its own, given up on when `timeout` passes (ureq's way).
    fn look_up(
        &self,
        host: &str,
        port: u16,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let found = if timeout.after.is_not_happening() {
            (self.lookup)(host, port)?
        } else {
            let (tx, rx) = mpsc::sync_channel(1);
            let (lookup, name) = (self.lookup, host.to_owned());
            std::thread::spawn(move || tx.send(lookup(&name, port)).ok());
            match rx.recv_timeout(*timeout.after) {
                Ok(found) => found?,
                Err(_) => return Err(ureq::Error::Timeout(timeout.reason)),
            }
        };
        wanted(found, config)
    }
}

/// The addresses of the configured IP family, at most as many as ureq keeps; `HostNotFound`
/// when none is left.
fn wanted(found: Vec<SocketAddr>, config: &ureq::config::Config) -> Result<ResolvedSocketAddrs, ureq::Error> {
    let mut addrs = ResolvedSocketAddrs::from_fn(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    for addr in config.ip_family().keep_wanted(found.into_iter()) {
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
        let port = match (authority.port_u16(), scheme) {
            (Some(port), "http" | "https") => port,
            (None, "http") => 80,
            (None, "https") => 443,
            _ => return self.inner.resolve(uri, config, timeout),
        };
        let authority = authority.as_str();
        let lock = || self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((.., at, addrs)) = lock().iter().find(|(s, a, ..)| s == scheme && a == authority)
            && at.elapsed() < RESOLVED_ADDRESSES_TTL
        {
            return Ok(addrs.clone());
        }
        let host = uri.host().unwrap_or_default();
        // An IPv6 address keeps its brackets in a URL, not in a lookup.
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        let addrs = match host.parse::<IpAddr>() {
            Ok(ip) => wanted(vec![SocketAddr::new(ip, port)], config)?,
            Err(_) => self.look_up(host, port, config, timeout)?,
        };
        let mut known = lock();
        known.retain(|(s, a, ..)| !(s == scheme && a == authority));
        known.push((scheme.to_owned(), authority.to_owned(), Instant::now(), addrs.clone()));
        Ok(addrs)
    }
}
