//! The REST resolver against gated, failing and answering lookups (injected: no real DNS),
//! its clock moved by `age`.

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
        self.answer(SocketAddr::from(([127, 0, 0, 1], port)))
    }

    /// `addr` once open.
    fn answer(&self, addr: SocketAddr) -> io::Result<Vec<SocketAddr>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let open = self.open.lock().unwrap();
        let (open, _) = self.opened.wait_timeout_while(open, Duration::from_secs(60), |open| !*open).unwrap();
        if *open { Ok(vec![addr]) } else { Err(io::Error::other("no answer")) }
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

const NO_SUCH_HOST: &str = "the venue's host \"venue.test\" could not be resolved: no such host";

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
        assert!(matches!(&error, ureq::Error::Io(e) if e.to_string() == NO_SUCH_HOST), "{error}");
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
        host.known.iter_mut().for_each(|known| back(&mut known.at));
        host.running.age(by);
        host.failure.iter_mut().for_each(|(at, ..)| back(at));
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
        assert!(matches!(&error, ureq::Error::Io(e) if e.to_string() == NO_SUCH_HOST), "{error}");
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

static STUCK: Gate = Gate::new();

#[test]
fn a_lookup_that_never_returns_gives_way_to_another_up_to_a_cap_and_then_says_so() {
    let resolver = RememberingResolver::new(|_, port| STUCK.pass(port));
    let (uri, config) = (uri("https://venue.test/api/new_order"), config());
    let timed_out = |r: Result<ResolvedSocketAddrs, ureq::Error>| matches!(r, Err(ureq::Error::Timeout(_)));
    assert!(timed_out(resolver.resolve(&uri, &config, within(100))));
    assert_eq!(STUCK.calls(), 1);
    // Not yet presumed stuck: waited for, none other started.
    age(&resolver, Duration::from_secs(30));
    assert!(timed_out(resolver.resolve(&uri, &config, within(100))));
    assert_eq!(STUCK.calls(), 1);
    for calls in 2..=4 {
        // The newest lookup has run a minute and more: another starts beside it.
        age(&resolver, Duration::from_secs(31));
        assert!(timed_out(resolver.resolve(&uri, &config, within(100))));
        assert_eq!(STUCK.calls(), calls, "a lookup beside the stuck one");
        age(&resolver, Duration::from_secs(29));
        assert!(timed_out(resolver.resolve(&uri, &config, within(100))));
        assert_eq!(STUCK.calls(), calls, "the new one is waited for");
    }
    // Four stuck: no fifth thread, and the error says why, at once (within(0) would time out).
    age(&resolver, Duration::from_secs(31));
    let error = resolver.resolve(&uri, &config, within(30_000)).unwrap_err();
    assert_eq!(STUCK.calls(), 4);
    let text = error.to_string();
    assert!(text.contains("venue.test") && text.contains("name lookups are not returning"), "{text}");
    // They return at last: the host resolves again.
    STUCK.open();
    until_all_ended(&resolver);
    let addrs = resolver.resolve(&uri, &config, within(30_000)).unwrap();
    assert_eq!(&addrs[..], [SocketAddr::from(([127, 0, 0, 1], 443))]);
}

/// Wait until none of the resolver's lookups runs (a minute at most).
fn until_all_ended(resolver: &RememberingResolver) {
    let ended = Instant::now() + Duration::from_secs(60);
    while resolver.hosts().iter().any(|h| h.running.len() > 0) && Instant::now() < ended {
        std::thread::sleep(Duration::from_millis(10));
    }
}

static OLD: Gate = Gate::new();
static NEW: Gate = Gate::new();

/// The first lookup answers 127.0.0.10 when `OLD` opens, the next 127.0.0.11 when `NEW` does.
fn old_then_new(_: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    match OLD.calls() {
        0 => OLD.answer(SocketAddr::from(([127, 0, 0, 10], port))),
        _ => NEW.answer(SocketAddr::from(([127, 0, 0, 11], port))),
    }
}

#[test]
fn a_late_answer_of_a_lookup_left_behind_does_not_replace_a_newer_one() {
    let resolver = RememberingResolver::new(old_then_new);
    let (uri, config) = (uri("https://venue.test/api/new_order"), config());
    assert!(matches!(resolver.resolve(&uri, &config, within(100)), Err(ureq::Error::Timeout(_))));
    age(&resolver, name_lookup::presumed_stuck_after(Duration::ZERO));
    assert!(matches!(resolver.resolve(&uri, &config, within(100)), Err(ureq::Error::Timeout(_))));
    assert_eq!((OLD.calls(), NEW.calls()), (1, 1), "the second lookup runs beside the first");
    NEW.open();
    let new = [SocketAddr::from(([127, 0, 0, 11], 443))];
    assert_eq!(&resolver.resolve(&uri, &config, within(30_000)).unwrap()[..], new);
    // The lookup left behind answers at last, with what is older news.
    OLD.open();
    until_all_ended(&resolver);
    assert_eq!(&resolver.resolve(&uri, &config, within(0)).unwrap()[..], new);
    assert_eq!((OLD.calls(), NEW.calls()), (1, 1));
}

static CAPPED: Gate = Gate::new();

#[test]
fn past_the_process_cap_of_stuck_lookups_of_a_host_no_client_starts_another() {
    // Eight lookups of the host, begun elsewhere in the process over a minute ago, never
    // returned (other clients', other streams').
    let started = Instant::now().checked_sub(name_lookup::presumed_stuck_after(Duration::ZERO)).unwrap();
    let stuck: Vec<_> = (0..name_lookup::MAX_STUCK_LOOKUPS_PER_PROCESS)
        .map(|_| name_lookup::InFlight::begin_at("capped.test", started).unwrap())
        .collect();
    let resolver = RememberingResolver::new(|_, port| CAPPED.answer(SocketAddr::from(([127, 0, 0, 1], port))));
    let (uri, config) = (uri("https://capped.test/api/new_order"), config());
    // A new client's call fails at once, saying why, and starts no thread of its own.
    let error = resolver.resolve(&uri, &config, within(30_000)).unwrap_err();
    let text = error.to_string();
    assert!(text.contains("capped.test") && text.contains("8 lookups of it in this process"), "{text}");
    assert_eq!(CAPPED.calls(), 0);
    // One of them returns: the client looks the host up again.
    drop(stuck);
    CAPPED.open();
    let addrs = resolver.resolve(&uri, &config, within(30_000)).unwrap();
    assert_eq!(&addrs[..], [SocketAddr::from(([127, 0, 0, 1], 443))]);
    assert_eq!(CAPPED.calls(), 1);
}
