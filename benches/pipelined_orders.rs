//! Pipelined order entry (BENCHMARKS.md, "Streams"; issue 14 target: ≥ 10× the rate of
//! sequential REST orders): N orders on one order stream, each sent as soon as the previous
//! one is written (`Stream::new_order` returns without waiting for the venue), until the
//! venue's final reply of every one has come back — against N REST `new_order` calls, each
//! waiting for its answer, on the same client, session and in-process sandbox venue, in the
//! same run. Orders rest far below the mark, so the venue's matching is the same both ways.
//!
//! `cargo bench --bench pipelined_orders`; `-- --test` runs a short round (bench/smoke.sh).
//! Env: PERPS_BENCH_ORDERS (10000), PERPS_BENCH_ROUNDS (3; the ratio of each round is printed
//! and the median is the result).
//!
//! Each round also prints the ceiling this machine puts on the ratio, whatever the client: every
//! pipelined order costs at least our signature and the venue's verification of it, and this
//! machine's cores run both (the sandbox verifies as the venue documents, one `verify_strict`
//! per request; the cheaper cofactorless `verify` is printed too). The ceiling is
//! `cores / (sign + verify)` orders per second, over the REST rate of the same round.

use base64::Engine;
use ed25519_dalek::Verifier;
use perps::client::Client;
use perps::client::options::ClientOptions;
use perps::session::Session;
use perps::stream::Stream;
use perps_sandbox::{Sandbox, SandboxConfig};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A buy far below the mark (65000): it rests, nothing fills.
fn order(n: usize) -> String {
    format!(
        r#"{{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"{}","time_in_force":"gtc","reduce_only":false}}"#,
        50_000 + n % 1000
    )
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Sequential REST orders per second.
fn rest_rate(client: &Client, session: &Session, orders: usize) -> f64 {
    let started = Instant::now();
    for n in 0..orders {
        let answer = client.new_order(session, &order(n)).expect("a REST order");
        assert!(answer.contains("\"code\":0"), "{answer}");
    }
    orders as f64 / started.elapsed().as_secs_f64()
}

/// Pipelined stream orders per second, from the first send to the last final reply; the rate
/// at which the calls returned (the library's side: every order signed and written); and the
/// process's CPU per order in µs, the library's threads and the sandbox's together.
fn stream_rate(client: &Arc<Client>, session: &Arc<Session>, orders: usize) -> (f64, f64, f64) {
    let stream = Stream::open_orders(client.clone(), session.clone()).expect("the order stream opens");
    // Past the connected status event: the stream is signed in.
    loop {
        let event = stream.next(Some(Duration::from_secs(10))).unwrap().expect("connected");
        if event.contains("\"state\":\"connected\"") {
            break;
        }
    }
    let started = Instant::now();
    let process_cpu = cpu_us(libc::CLOCK_PROCESS_CPUTIME_ID);
    let finals = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut finals = 0;
            while finals < orders {
                let event = stream.next(Some(Duration::from_secs(30))).unwrap().expect("a reply within 30 s");
                if event.contains("\"final\":true") {
                    assert!(event.contains("\"code\":0"), "{event}");
                    finals += 1;
                }
            }
            finals
        });
        for n in 0..orders {
            stream.new_order(&order(n)).expect("written");
        }
        let written = orders as f64 / started.elapsed().as_secs_f64();
        (reader.join().unwrap(), written)
    });
    let rate = finals.0 as f64 / started.elapsed().as_secs_f64();
    let cpu_per_order = (cpu_us(libc::CLOCK_PROCESS_CPUTIME_ID) - process_cpu) / orders as f64;
    stream.close();
    (rate, finals.1, cpu_per_order)
}

/// CPU time in µs of the calling thread, or of the whole process (library and in-process
/// sandbox together).
fn cpu_us(clock: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a valid out-pointer.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 * 1e6 + ts.tv_nsec as f64 / 1e3
}

fn thread_cpu_us() -> f64 {
    cpu_us(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// Calling-thread CPU per order, in µs: our signature of the order body (as
/// `Stream::new_order` makes it), and ed25519-dalek's `verify_strict` (the sandbox's check) and
/// `verify` of that very signature over the v1 text.
fn crypto_per_order(session: &Session, orders: usize) -> (f64, f64, f64) {
    let bodies: Vec<String> = (0..orders).map(order).collect();
    let started = thread_cpu_us();
    let signed: Vec<_> =
        bodies.iter().map(|b| session.sign_body_now(b.as_bytes(), 1_700_000_000_000).expect("signed")).collect();
    let sign = (thread_cpu_us() - started) / orders as f64;
    let key = session.key().verifying_key();
    let checks: Vec<_> = signed
        .iter()
        .zip(&bodies)
        .map(|(s, body)| {
            let raw = base64::engine::general_purpose::STANDARD.decode(s.signature()).expect("base64");
            let signature = ed25519_dalek::Signature::from_slice(&raw).expect("64 bytes");
            let text = perps::body_sign::signed_message(s.request_id(), 1_700_000_000_000, body.as_bytes());
            (signature, text)
        })
        .collect();
    let started = thread_cpu_us();
    for (signature, text) in &checks {
        assert!(key.verify_strict(text, signature).is_ok(), "our signature verifies");
    }
    let strict = (thread_cpu_us() - started) / orders as f64;
    let started = thread_cpu_us();
    for (signature, text) in &checks {
        assert!(key.verify(text, signature).is_ok());
    }
    let plain = (thread_cpu_us() - started) / orders as f64;
    (sign, strict, plain)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let orders = if quick { 200 } else { env_or("PERPS_BENCH_ORDERS", 10_000) };
    let rounds = if quick { 1 } else { env_or("PERPS_BENCH_ROUNDS", 3) };
    let venue = Sandbox::start(SandboxConfig { market_walk_ms: 0, ..SandboxConfig::default() }).expect("sandbox");
    let options = ClientOptions::parse(Some(r#"{"stream_connects_per_minute":1000}"#)).unwrap();
    let client = Arc::new(Client::new(&venue.url(), &venue.url(), options).unwrap());
    let credential = venue.issue_api_key(None).unwrap();
    let session = Arc::new(Session::from_api_key(&credential.token, &credential.private_key).unwrap());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        // Alternate which goes first, so neither always meets the fuller book.
        let (rest, (stream, written, cpu_per_order)) = if round % 2 == 1 {
            let rest = rest_rate(&client, &session, orders);
            (rest, stream_rate(&client, &session, orders))
        } else {
            let stream = stream_rate(&client, &session, orders);
            (rest_rate(&client, &session, orders), stream)
        };
        let ratio = stream / rest;
        println!(
            "pipelined orders, round {round}: {orders} on one order stream {stream:.0}/s (calls returned at {written:.0}/s), sequential REST {rest:.0}/s: {ratio:.2}×"
        );
        let (sign, strict, plain) = crypto_per_order(&session, orders.min(2_000));
        let ceiling = |cpu: f64| cores as f64 * 1e6 / cpu / rest;
        println!(
            "  CPU per pipelined order, both sides: {cpu_per_order:.1} µs (10× REST allows {:.1} µs on {cores} cores): a ceiling of {:.2}×",
            cores as f64 * 1e6 / (10.0 * rest),
            ceiling(cpu_per_order)
        );
        println!(
            "  of it the signatures: sign {sign:.1} µs + verify_strict {strict:.1} µs, alone a ceiling of {:.2}× (with verify {plain:.1} µs: {:.2}×)",
            ceiling(sign + strict),
            ceiling(sign + plain)
        );
        ratios.push(ratio);
    }
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("pipelined orders: median ratio {:.2}× over {rounds} round(s) (target ≥ 10×)", ratios[rounds / 2]);
}
