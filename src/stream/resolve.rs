//! The stream host's name resolved within the connect timeout, and given up at once when the
//! stream is closed.
//!
//! `getaddrinfo` has no time limit of its own: a slow or dead name server holds it for as long
//! as the system's resolver retries (tens of seconds with several servers), and nothing can
//! interrupt it. So the lookup runs on a short-lived thread of its own while the I/O thread
//! waits, in `poll`, for the lookup's end, the stream's close signal or the deadline. A lookup
//! given up on is not abandoned to pile up: the stream keeps it (`Resolver::lookups`) and
//! its next attempt waits for that same lookup rather than starting another; the thread ends
//! when `getaddrinfo` returns, holding nothing of the stream's but its own end of the pipe
//! that says it is done. When a lookup fails or does not answer in time, the last addresses
//! that resolved (at most ten minutes old) serve instead, so a stream reconnects through a
//! name server's outage.
//!
//! A lookup that never returns (an NSS module stuck on a dead daemon) would hold the stream
//! off its host for ever: once it has run `name_lookup::presumed_stuck_after`, it is left
//! behind and the next attempt starts another beside it, up to
//! `name_lookup::MAX_RUNNING_LOOKUPS` per stream; past that, an attempt with no last addresses
//! fails at once, saying the lookups are not returning. A late answer of one left behind still
//! refreshes the last addresses, when no newer lookup's has come.
//!
//! REST does the same per client, its lookups shared by the calls that wait for them
//! (`client/resolve.rs`); what the two share is in `name_lookup.rs`.

use super::poll_close::{Woken, poll_with_close};
use crate::error::{Code, Error, Result};
use crate::name_lookup::{self, LAST_ADDRESSES_USABLE_FOR, Lookup, Next, Running};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How recent the answer of a lookup an earlier attempt gave up on must be to serve a later
/// attempt: one that came before the stream connected again, and stayed unread through hours
/// of a healthy connection, is not this attempt's answer (a failure would fail it while the
/// name server is fine again; a success would pass old addresses off as fresh).
const GIVEN_UP_ANSWER_SERVES_FOR: Duration = Duration::from_secs(10);

/// One stream's resolutions (owned by its I/O thread, the one that connects).
pub(super) struct Resolver {
    lookup: Lookup,
    /// `GIVEN_UP_ANSWER_SERVES_FOR` (a test's shorter time).
    given_up_answer_serves_for: Duration,
    /// The lookups given up on and not read yet, oldest first: the newest is the one the
    /// next attempt waits for, the older ones were presumed stuck and left behind.
    lookups: Running<Outstanding>,
    /// The last addresses that resolved.
    last: Option<Last>,
}

/// A lookup still running, given up on by the attempt that started it.
struct Outstanding {
    host: String,
    port: u16,
    /// Its answer, and when it came.
    result: mpsc::Receiver<(Instant, io::Result<Vec<SocketAddr>>)>,
    /// Readable (end of file) once the lookup's thread has sent its result and ended.
    done: UnixStream,
}

/// The host, port and addresses of the newest lookup that succeeded: when it started (an
/// older lookup's late answer does not replace them) and when they came.
struct Last {
    host: String,
    port: u16,
    started: Instant,
    at: Instant,
    addrs: Vec<SocketAddr>,
}

impl Resolver {
    pub(super) fn new(lookup: Lookup) -> Resolver {
        Resolver {
            lookup,
            given_up_answer_serves_for: GIVEN_UP_ANSWER_SERVES_FOR,
            lookups: Running::default(),
            last: None,
        }
    }

    /// The addresses of `host`, within `timeout`; a `Timeout` error once it passes, a
    /// `StreamClosed` one as soon as `closed_signal` is readable. An address needs no lookup.
    /// When the lookup fails or does not answer in time, the last addresses that resolved
    /// serve instead, for `LAST_ADDRESSES_USABLE_FOR`; while a lookup given up on still runs,
    /// they serve at once (the attempt that gave up on it waited already).
    pub(super) fn resolve(
        &mut self,
        host: &str,
        port: u16,
        timeout: Duration,
        closed_signal: RawFd,
    ) -> Result<Vec<SocketAddr>> {
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        self.read_late_answers();
        let stale = self
            .last
            .as_ref()
            .filter(|l| l.host == host && l.port == port && l.at.elapsed() < LAST_ADDRESSES_USABLE_FOR)
            .map(|l| l.addrs.clone());
        if let (Some(addrs), Some((_, earlier))) = (&stale, self.lookups.newest())
            && !finished(earlier)
            && !matches!(self.lookups.next(timeout), Next::Start)
        {
            return Ok(addrs.clone());
        }
        match (self.look_up(host, port, timeout, closed_signal), stale) {
            (Ok(addrs), _) => Ok(addrs),
            (Err(e), _) if e.code() == Code::StreamClosed => Err(e),
            (Err(_), Some(addrs)) => Ok(addrs),
            (Err(e), None) => Err(e),
        }
    }

    /// The lookups left behind that have ended since: each dropped, its addresses kept when
    /// it succeeded and no newer lookup's are kept.
    fn read_late_answers(&mut self) {
        let newest = self.lookups.len().saturating_sub(1);
        let mut late = Vec::new();
        let mut index = 0;
        self.lookups.retain(|started, lookup| {
            index += 1;
            if index > newest || !finished(lookup) {
                return true;
            }
            if let Ok((at, Ok(addrs))) = lookup.result.try_recv() {
                late.push((lookup.host.clone(), lookup.port, started, at, addrs));
            }
            false
        });
        for (host, port, started, at, addrs) in late {
            self.keep(Last { host, port, started, at, addrs });
        }
    }

    /// `answer` as the last addresses, unless a newer lookup's are there.
    fn keep(&mut self, answer: Last) {
        if self.last.as_ref().is_none_or(|last| last.started < answer.started) {
            self.last = Some(answer);
        }
    }

    /// A lookup of `host` (the one an earlier attempt gave up on, or a new one), waited for
    /// within `timeout` or until `closed_signal` is readable.
    fn look_up(&mut self, host: &str, port: u16, timeout: Duration, closed_signal: RawFd) -> Result<Vec<SocketAddr>> {
        let shown = crate::error::excerpt(host);
        let not_resolved = || Error::new(Code::Transport, format!("the stream host \"{shown}\" could not be resolved"));
        // The lookup an earlier attempt gave up on, ended: its answer is this attempt's too
        // when it came lately, and is newer than the last addresses' (it may be a lookup left
        // behind, older than one that answered since); an older one is dropped for a new lookup.
        let ended = self.lookups.newest().is_some_and(|(_, earlier)| finished(earlier));
        if ended
            && let Some((started, earlier)) = self.lookups.pop_newest()
            && let Ok((at, answer)) = earlier.result.try_recv()
            && earlier.host == host
            && earlier.port == port
            && self.last.as_ref().is_none_or(|last| last.started < started)
        {
            if let Ok(addrs) = &answer {
                self.keep(Last { host: host.to_owned(), port, started, at, addrs: addrs.clone() });
            }
            if at.elapsed() < self.given_up_answer_serves_for {
                return answer.map_err(|_| not_resolved());
            }
        }
        if let Some((_, other)) = self.lookups.newest()
            && (other.host != host || other.port != port)
        {
            // Never another host's lookup beside (a stream's host does not change: not expected).
            return Err(Error::new(
                Code::Transport,
                format!("resolving the stream host \"{shown}\": another lookup of this stream still runs"),
            ));
        }
        if let Next::NotReturning = self.lookups.next(timeout) {
            let why = name_lookup::not_returning(self.lookups.len(), timeout);
            return Err(Error::new(
                Code::Transport,
                format!("the stream host \"{shown}\" could not be resolved: {why}"),
            ));
        }
        if let Next::Start = self.lookups.next(timeout) {
            let lookup = self.start(host, port)?;
            self.lookups.started(Instant::now(), lookup);
        }
        let Next::Wait(started, waited) = self.lookups.next(timeout) else {
            // Not reached: a lookup just started has not run long enough to be presumed stuck.
            return Err(not_resolved());
        };
        let done = [(waited.done.as_raw_fd(), libc::POLLIN)];
        match poll_with_close(&done, closed_signal, Instant::now() + timeout) {
            Ok(Woken::Ready(_)) => {}
            Ok(Woken::Closed) => {
                return Err(Error::new(Code::StreamClosed, "the stream was closed while its host was resolved"));
            }
            Ok(Woken::TimedOut) => {
                return Err(Error::new(
                    Code::Timeout,
                    format!("resolving the stream host \"{shown}\" took longer than {} ms", timeout.as_millis()),
                ));
            }
            Err(e) => {
                let message = format!("resolving the stream host \"{shown}\": waiting for the lookup failed: {e}");
                return Err(Error::new(Code::Transport, message));
            }
        }
        let answer = waited.result.try_recv();
        self.lookups.pop_newest();
        match answer {
            Ok((at, Ok(addrs))) => {
                self.keep(Last { host: host.to_owned(), port, started, at, addrs: addrs.clone() });
                Ok(addrs)
            }
            // A failed lookup, or its thread gone without an answer (it panicked).
            Ok((_, Err(_))) | Err(_) => Err(not_resolved()),
        }
    }

    /// Start a lookup of `host` on a thread of its own.
    fn start(&self, host: &str, port: u16) -> Result<Outstanding> {
        // Counted process-wide until it returns (`name_lookup::MAX_STUCK_LOOKUPS_PER_PROCESS`).
        let in_flight = name_lookup::InFlight::begin(host).map_err(|why| {
            Error::new(
                Code::Transport,
                format!("the stream host \"{}\" could not be resolved: {why}", crate::error::excerpt(host)),
            )
        })?;
        let (done_tx, done) = UnixStream::pair()
            .map_err(|e| Error::new(Code::Transport, format!("cannot create a socket pair to resolve a host: {e}")))?;
        let (result_tx, result) = mpsc::channel();
        let lookup = self.lookup;
        let name = host.to_owned();
        std::thread::Builder::new()
            .name("perps-resolve".into())
            .spawn(move || {
                let answer = lookup(&name, port);
                drop(in_flight);
                let _ = result_tx.send((Instant::now(), answer));
                // The result is in the channel before `done` reads as ended.
                drop(done_tx);
            })
            .map_err(|e| Error::new(Code::Transport, format!("cannot start a thread to resolve a host: {e}")))?;
        Ok(Outstanding { host: host.to_owned(), port, result, done })
    }
}

/// Whether a lookup's thread has ended (never waits; a failing `poll` says not yet).
fn finished(outstanding: &Outstanding) -> bool {
    let done = [(outstanding.done.as_raw_fd(), libc::POLLIN)];
    matches!(poll_with_close(&done, -1, Instant::now()), Ok(Woken::Ready(_)))
}

#[cfg(test)]
mod tests;
