//! A stream's resolver against gated, slow, failing and late lookups (injected: no real DNS).

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
    let error = resolver.resolve("venue.example", 443, Duration::from_secs(120), closed_rx.as_raw_fd()).unwrap_err();
    // Neither the lookup's failure (after a minute) nor the timeout (two): the close.
    assert_eq!(error.code(), Code::StreamClosed, "{error}");
    assert!(started.elapsed() < Duration::from_secs(50), "{:?}", started.elapsed());
    let _closed_tx = closer.join().unwrap();
    // Closed already: the next attempt ends at once too, and starts no other lookup.
    let error = resolver.resolve("venue.example", 443, Duration::from_secs(120), closed_rx.as_raw_fd()).unwrap_err();
    assert_eq!(error.code(), Code::StreamClosed, "{error}");
    assert_eq!(SLOW_CALLS.load(Ordering::SeqCst), 1);
}

#[test]
fn an_address_needs_no_lookup_and_a_failed_lookup_says_which_host() {
    let (_closed_tx, closed_rx) = UnixStream::pair().unwrap();
    let closed = closed_rx.as_raw_fd();
    let mut resolver = Resolver::new(failing);
    let second = Duration::from_secs(30);
    assert_eq!(resolver.resolve("127.0.0.1", 80, second, closed).unwrap(), [SocketAddr::from(([127, 0, 0, 1], 80))]);
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

static CAPPED_CALLS: AtomicUsize = AtomicUsize::new(0);

fn capped(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    CAPPED_CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
}

#[test]
fn past_the_process_cap_of_stuck_lookups_of_a_host_no_stream_starts_another() {
    let (_closed_tx, closed_rx) = UnixStream::pair().unwrap();
    let closed = closed_rx.as_raw_fd();
    let started = Instant::now().checked_sub(name_lookup::presumed_stuck_after(Duration::ZERO)).unwrap();
    let stuck: Vec<_> = (0..name_lookup::MAX_STUCK_LOOKUPS_PER_PROCESS)
        .map(|_| name_lookup::InFlight::begin_at("capped-stream.test", started).unwrap())
        .collect();
    let mut resolver = Resolver::new(capped);
    let error = resolver.resolve("capped-stream.test", 443, Duration::from_secs(30), closed).unwrap_err();
    assert_eq!(error.code(), Code::Transport, "{error}");
    assert!(
        error.message().contains("\"capped-stream.test\" could not be resolved: its name lookups are not returning"),
        "{error}"
    );
    assert_eq!(CAPPED_CALLS.load(Ordering::SeqCst), 0, "no thread started");
    drop(stuck);
    let addrs = resolver.resolve("capped-stream.test", 443, Duration::from_secs(30), closed).unwrap();
    assert_eq!(addrs, [SocketAddr::from(([127, 0, 0, 1], 443))]);
}
