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
        let (done_tx, done) = UnixStream::pair()
            .map_err(|e| Error::new(Code::Transport, format!("cannot create a socket pair to resolve a host: {e}")))?;
        let (result_tx, result) = mpsc::channel();
        let lookup = self.lookup;
        let name = host.to_owned();
        std::thread::Builder::new()
            .name("perps-resolve".into())
            .spawn(move || {
                let answer = lookup(&name, port);
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
mod tests {
    use super::*;

    /// The stream's lookups as if `by` had gone by since they started.
    fn age(resolver: &mut Resolver, by: Duration) {
        resolver.lookups.age(by);
    }
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Condvar, Mutex};

    /// Lookups started by `gated`, and the gate that holds them until a test opens it (at
    /// most a minute: a failed test leaves no thread behind for long).
    static GATED_CALLS: AtomicUsize = AtomicUsize::new(0);
    static GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

    fn gated(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        GATED_CALLS.fetch_add(1, Ordering::SeqCst);
        let open = GATE.0.lock().unwrap();
        let _open = GATE.1.wait_timeout_while(open, Duration::from_secs(60), |open| !*open).unwrap();
        Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
    }

    static SLOW_CALLS: AtomicUsize = AtomicUsize::new(0);

    /// A name server that does not answer for a minute.
    fn slow(_: &str, _: u16) -> io::Result<Vec<SocketAddr>> {
        SLOW_CALLS.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_secs(60));
        Err(io::Error::other("no answer"))
    }

    static FAILING_CALLS: AtomicUsize = AtomicUsize::new(0);

    fn failing(_: &str, _: u16) -> io::Result<Vec<SocketAddr>> {
        FAILING_CALLS.fetch_add(1, Ordering::SeqCst);
        Err(io::Error::other("no such host"))
    }

    #[test]
    fn a_slow_lookup_is_given_up_at_the_timeout_and_never_runs_twice_at_once() {
        let (_closed_tx, closed_rx) = UnixStream::pair().unwrap();
        let closed = closed_rx.as_raw_fd();
        let mut resolver = Resolver::new(gated);
        for attempt in 0..2 {
            let error = resolver.resolve("venue.example", 443, Duration::from_millis(200), closed).unwrap_err();
            assert_eq!(error.code(), Code::Timeout, "{error}");
            assert!(
                error.message().contains("resolving the stream host \"venue.example\" took longer than 200 ms"),
                "{error}"
            );
            // The second attempt waited for the first one's lookup: no other was started.
            assert_eq!(GATED_CALLS.load(Ordering::SeqCst), 1, "attempt {attempt}");
        }
        *GATE.0.lock().unwrap() = true;
        GATE.1.notify_all();
        // The answer of the lookup given up on serves the attempt that finds it.
        let addrs = resolver.resolve("venue.example", 443, Duration::from_secs(30), closed).unwrap();
        assert_eq!(addrs, [SocketAddr::from(([127, 0, 0, 1], 443))]);
        assert_eq!(GATED_CALLS.load(Ordering::SeqCst), 1);
        // Used once: the next attempt looks the name up again.
        resolver.resolve("venue.example", 443, Duration::from_secs(30), closed).unwrap();
        assert_eq!(GATED_CALLS.load(Ordering::SeqCst), 2);
    }

    static FLAKY_MODE: AtomicUsize = AtomicUsize::new(0);
    static FLAKY_CALLS: AtomicUsize = AtomicUsize::new(0);

    /// A name server that answers (mode 0), fails at once (1), or does not answer (2).
    fn flaky(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        FLAKY_CALLS.fetch_add(1, Ordering::SeqCst);
        match FLAKY_MODE.load(Ordering::SeqCst) {
            0 => Ok(vec![SocketAddr::from(([127, 0, 0, 2], port))]),
            1 => Err(io::Error::other("name server down")),
            _ => {
                std::thread::sleep(Duration::from_secs(60));
                Err(io::Error::other("no answer"))
            }
        }
    }

    #[test]
    fn the_last_addresses_serve_while_the_name_server_fails_or_does_not_answer() {
        let (_closed_tx, closed_rx) = UnixStream::pair().unwrap();
        let closed = closed_rx.as_raw_fd();
        let mut resolver = Resolver::new(flaky);
        let long = Duration::from_secs(30);
        let known = [SocketAddr::from(([127, 0, 0, 2], 443))];
        assert_eq!(resolver.resolve("venue.example", 443, long, closed).unwrap(), known);
        // Failing at once: the last addresses, each attempt asking again.
        FLAKY_MODE.store(1, Ordering::SeqCst);
        for calls in 2..=3 {
            assert_eq!(resolver.resolve("venue.example", 443, long, closed).unwrap(), known);
            assert_eq!(FLAKY_CALLS.load(Ordering::SeqCst), calls);
        }
        // Another host, or another port, has no last addresses: its failure is reported.
        for (host, port) in [("other.example", 443), ("venue.example", 8443)] {
            let error = resolver.resolve(host, port, long, closed).unwrap_err();
            assert!(error.message().contains(&format!("\"{host}\" could not be resolved")), "{error}");
        }
        // Not answering: the last addresses once the lookup has had its time; then at once,
        // without another lookup, while it still runs.
        FLAKY_MODE.store(2, Ordering::SeqCst);
        assert_eq!(resolver.resolve("venue.example", 443, Duration::from_millis(200), closed).unwrap(), known);
        let calls = FLAKY_CALLS.load(Ordering::SeqCst);
        let started = Instant::now();
        assert_eq!(resolver.resolve("venue.example", 443, long, closed).unwrap(), known);
        assert!(started.elapsed() < Duration::from_secs(20), "waited {:?}", started.elapsed());
        assert_eq!(FLAKY_CALLS.load(Ordering::SeqCst), calls, "no second lookup while one runs");
    }

    static LATE_CALLS: AtomicUsize = AtomicUsize::new(0);

    /// A name server that answers after 300 ms: a failure the first time, addresses after.
    fn late(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        let call = LATE_CALLS.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(300));
        if call == 0 {
            Err(io::Error::other("name server down"))
        } else {
            Ok(vec![SocketAddr::from(([127, 0, 0, 3], port))])
        }
    }

    #[test]
    fn an_old_answer_of_a_lookup_given_up_on_is_not_taken_for_a_fresh_one() {
        let (_closed_tx, closed_rx) = UnixStream::pair().unwrap();
        let closed = closed_rx.as_raw_fd();
        let mut resolver = Resolver::new(late);
        resolver.given_up_answer_serves_for = Duration::from_millis(100);
        // Given up on at 50 ms; its failure comes at 300 ms, and nobody reads it.
        let error = resolver.resolve("venue.example", 443, Duration::from_millis(50), closed).unwrap_err();
        assert_eq!(error.code(), Code::Timeout, "{error}");
        std::thread::sleep(Duration::from_secs(2));
        // Long after it came, that failure is not this attempt's answer: a new lookup is made.
        let addrs = resolver.resolve("venue.example", 443, Duration::from_secs(30), closed).unwrap();
        assert_eq!(addrs, [SocketAddr::from(([127, 0, 0, 3], 443))]);
        assert_eq!(LATE_CALLS.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn close_ends_the_wait_for_a_lookup_at_once() {
        let (closed_tx, closed_rx) = UnixStream::pair().unwrap();
        let closer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            (&closed_tx).write_all(&[1]).unwrap();
            closed_tx
        });
        let mut resolver = Resolver::new(slow);
        let started = Instant::now();
        let error =
            resolver.resolve("venue.example", 443, Duration::from_secs(120), closed_rx.as_raw_fd()).unwrap_err();
        // Neither the lookup's failure (after a minute) nor the timeout (two): the close.
        assert_eq!(error.code(), Code::StreamClosed, "{error}");
        assert!(started.elapsed() < Duration::from_secs(50), "{:?}", started.elapsed());
        let _closed_tx = closer.join().unwrap();
        // Closed already: the next attempt ends at once too, and starts no other lookup.
        let error =
            resolver.resolve("venue.example", 443, Duration::from_secs(120), closed_rx.as_raw_fd()).unwrap_err();
        assert_eq!(error.code(), Code::StreamClosed, "{error}");
        assert_eq!(SLOW_CALLS.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_address_needs_no_lookup_and_a_failed_lookup_says_which_host() {
        let (_closed_tx, closed_rx) = UnixStream::pair().unwrap();
        let closed = closed_rx.as_raw_fd();
        let mut resolver = Resolver::new(failing);
        let second = Duration::from_secs(30);
        assert_eq!(
            resolver.resolve("127.0.0.1", 80, second, closed).unwrap(),
            [SocketAddr::from(([127, 0, 0, 1], 80))]
        );
        assert_eq!(resolver.resolve("::1", 443, second, closed).unwrap()[0].to_string(), "[::1]:443");
        assert_eq!(FAILING_CALLS.load(Ordering::SeqCst), 0);
        for calls in 1..=2 {
            let error = resolver.resolve("venue.example", 443, second, closed).unwrap_err();
            assert_eq!(error.code(), Code::Transport, "{error}");
            assert!(error.message().contains("\"venue.example\" could not be resolved"), "{error}");
            // A failure is never kept: each attempt asks again.
            assert_eq!(FAILING_CALLS.load(Ordering::SeqCst), calls);
        }
    }

    /// Lookups started by `stuck`, which answer only when the test opens `STUCK_GATE`.
    static STUCK_CALLS: AtomicUsize = AtomicUsize::new(0);
    static STUCK_GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

    fn stuck(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        STUCK_CALLS.fetch_add(1, Ordering::SeqCst);
        let open = STUCK_GATE.0.lock().unwrap();
        let _open = STUCK_GATE.1.wait_timeout_while(open, Duration::from_secs(60), |open| !*open).unwrap();
        Ok(vec![SocketAddr::from(([127, 0, 0, 4], port))])
    }

    #[test]
    fn a_lookup_that_never_returns_gives_way_to_another_up_to_a_cap_and_then_says_so() {
        let (_closed_tx, closed_rx) = UnixStream::pair().unwrap();
        let closed = closed_rx.as_raw_fd();
        let mut resolver = Resolver::new(stuck);
        let brief = Duration::from_millis(100);
        let calls = || STUCK_CALLS.load(Ordering::SeqCst);
        assert_eq!(resolver.resolve("venue.example", 443, brief, closed).unwrap_err().code(), Code::Timeout);
        assert_eq!(calls(), 1);
        for started in 2..=4 {
            // The newest lookup has run a minute and more: another starts beside it.
            age(&mut resolver, Duration::from_secs(61));
            assert_eq!(resolver.resolve("venue.example", 443, brief, closed).unwrap_err().code(), Code::Timeout);
            assert_eq!(calls(), started, "a lookup beside the stuck one");
            // Not yet presumed stuck: waited for, none other started.
            age(&mut resolver, Duration::from_secs(30));
            assert_eq!(resolver.resolve("venue.example", 443, brief, closed).unwrap_err().code(), Code::Timeout);
            assert_eq!(calls(), started);
        }
        // Four stuck: no fifth thread, and the error says why, at once.
        age(&mut resolver, Duration::from_secs(31));
        let error = resolver.resolve("venue.example", 443, Duration::from_secs(30), closed).unwrap_err();
        assert_eq!(error.code(), Code::Transport, "{error}");
        assert!(
            error.message().contains("\"venue.example\"") && error.message().contains("name lookups are not returning"),
            "{error}"
        );
        assert_eq!(calls(), 4);
        // They return at last: the host resolves again.
        *STUCK_GATE.0.lock().unwrap() = true;
        STUCK_GATE.1.notify_all();
        let ended = Instant::now() + Duration::from_secs(60);
        while !resolver.lookups.iter().all(|(_, lookup)| finished(lookup)) && Instant::now() < ended {
            std::thread::sleep(Duration::from_millis(10));
        }
        let addrs = resolver.resolve("venue.example", 443, Duration::from_secs(30), closed).unwrap();
        assert_eq!(addrs, [SocketAddr::from(([127, 0, 0, 4], 443))]);
    }

    static ORDERED_CALLS: AtomicUsize = AtomicUsize::new(0);
    static FIRST_GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());
    static SECOND_GATE: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

    fn open(gate: &(Mutex<bool>, Condvar)) {
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
    }

    /// The first lookup answers 127.0.0.10 once `FIRST_GATE` opens, the second 127.0.0.11
    /// once `SECOND_GATE` does; the others fail at once.
    fn ordered(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        let (gate, ip) = match ORDERED_CALLS.fetch_add(1, Ordering::SeqCst) {
            0 => (&FIRST_GATE, [127, 0, 0, 10]),
            1 => (&SECOND_GATE, [127, 0, 0, 11]),
            _ => return Err(io::Error::other("name server down")),
        };
        let open = gate.0.lock().unwrap();
        let _open = gate.1.wait_timeout_while(open, Duration::from_secs(60), |open| !*open).unwrap();
        Ok(vec![SocketAddr::from((ip, port))])
    }

    #[test]
    fn a_late_answer_of_a_lookup_left_behind_does_not_replace_a_newer_one() {
        let (_closed_tx, closed_rx) = UnixStream::pair().unwrap();
        let closed = closed_rx.as_raw_fd();
        let mut resolver = Resolver::new(ordered);
        let brief = Duration::from_millis(100);
        assert_eq!(resolver.resolve("venue.example", 443, brief, closed).unwrap_err().code(), Code::Timeout);
        age(&mut resolver, Duration::from_secs(61));
        open(&SECOND_GATE);
        // The second lookup, beside the first, answers.
        let newer = [SocketAddr::from(([127, 0, 0, 11], 443))];
        assert_eq!(resolver.resolve("venue.example", 443, Duration::from_secs(30), closed).unwrap(), newer);
        // The first answers at last, with older news: it neither serves nor replaces them.
        open(&FIRST_GATE);
        let ended = Instant::now() + Duration::from_secs(60);
        while !resolver.lookups.iter().all(|(_, lookup)| finished(lookup)) && Instant::now() < ended {
            std::thread::sleep(Duration::from_millis(10));
        }
        // A new lookup (the third) fails: the newer last addresses serve.
        assert_eq!(resolver.resolve("venue.example", 443, Duration::from_secs(30), closed).unwrap(), newer);
        assert_eq!(ORDERED_CALLS.load(Ordering::SeqCst), 3);
    }
}
