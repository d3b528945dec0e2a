//! Streams (BENCHMARKS.md, "Streams"). Printed first, the paired measurements of the targets:
//! - `depth_book`: RSS before and after 10^6 decoded pushes (target: < 1 MiB growth), then the
//!   calling thread's CPU time per 20 + 20-level push decoded, sorted and shaped into its
//!   event, as the I/O thread does it, in rounds (target: ≥ 200,000 per second on one core),
//!   next to the serde path it replaced and a bare `serde_json::Value` parse of the frame;
//! - order entry: the calling thread's CPU time per order, from the call to the frame
//!   written, through the C ABI (`perps_stream_new_order` + `perps_string_free`) and in Rust
//!   (`Stream::new_order`), against the floor — the body signature of the same params plus a
//!   plain tungstenite write of the same frame — interleaved round by round (target: ≤ 1.15×);
//! - event delivery: from the venue's write of a `depth_book` push to the return of
//!   `perps_stream_next`, against a plain tungstenite read loop of the same frames from the
//!   same venue thread, interleaved (target: median ≤ 1.10×), with the threads pinned to
//!   CPUs in three ways (see `Pinning`).
//!
//! Then criterion's groups. Env: `PERPS_BENCH_ONLY` (depth, order, delivery),
//! `PERPS_BENCH_ROUNDS` (21), `PERPS_BENCH_PER_ROUND` (order: 500; delivery: 400; depth: 5000).
//! `cargo bench --bench streams -- --test` runs every part briefly (bench/smoke.sh).

#[path = "common/delivery_venue.rs"]
mod delivery_venue;
#[path = "common/stream_fixtures.rs"]
mod stream_fixtures;
#[path = "../tests/common/ws_server.rs"]
mod ws_server;

use criterion::{Criterion, criterion_group, criterion_main};
use delivery_venue::{Pinning, pin, plain_read, pusher, thread_named};
use perps::ffi::client::{perps_client, perps_client_free, perps_client_new};
use perps::ffi::session::{perps_session_free, perps_session_from_api_key};
use perps::ffi::stream::{
    perps_order_stream_open, perps_stream, perps_stream_free, perps_stream_new_order, perps_stream_next,
    perps_stream_open,
};
use perps::ffi::strings::perps_string_free;
use perps::session::Session;
use perps::stream::{PushDecoder, Stream};
use std::cell::{Cell, RefCell};
use std::ffi::CString;
use std::hint::black_box;
use std::net::TcpStream;
use std::ptr::null_mut;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use stream_fixtures::{ORDER, SEED_B58, bench_token, depth_frame, floor_order_frame};

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec for the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn median<T: PartialOrd + Copy>(values: &[T]) -> T {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).expect("comparable"));
    sorted[sorted.len() / 2]
}

/// `cargo bench -- --test` (bench/smoke.sh): every part runs, briefly.
fn quick() -> bool {
    std::env::args().any(|a| a == "--test")
}

fn wanted(part: &str) -> bool {
    std::env::var("PERPS_BENCH_ONLY").map_or(true, |only| only.split(',').any(|p| p == part))
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn rounds() -> usize {
    if quick() { 2 } else { env_or("PERPS_BENCH_ROUNDS", 21) }
}

fn per_round(default: usize) -> usize {
    if quick() { 20 } else { env_or("PERPS_BENCH_PER_ROUND", default) }
}

fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    statm.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 4
}

/// "min / median / max" of per-round ratios.
fn spread(ratios: &[f64]) -> String {
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ratios.iter().copied().fold(0.0, f64::max);
    format!("median {:.3} (rounds: min {min:.3}, max {max:.3})", median(ratios))
}

fn c_client(options: &str, url: &str) -> *mut perps_client {
    let url = CString::new(url).unwrap();
    let options = CString::new(options).unwrap();
    let client = perps_client_new(url.as_ptr(), url.as_ptr(), options.as_ptr(), null_mut());
    assert!(!client.is_null());
    client
}

// ---- depth_book ----

fn depth(c: &mut Criterion) {
    // Frames with seq 1..=1000, replayed as if each round were a new connection (so that
    // every event is in order: no status event is made).
    let frames: Vec<String> = (1..=1000).map(depth_frame).collect();
    let decode = |decoder: &mut PushDecoder, i: usize| {
        if i.is_multiple_of(1000) {
            decoder.reset_seq();
        }
        decoder.decode(&frames[i % 1000])
    };
    let mut decoder = PushDecoder::default();
    let mut serde_path = PushDecoder::serde_only();
    // A stream with a session redacts every push of the token it sent (a JWT of the venue's
    // size: about 420 characters).
    let mut with_session = PushDecoder::default().with_token(&bench_token());
    let without_time = |event: Option<String>| event.map(|e| e[..e.rfind(",\"received_ns\"").unwrap()].to_owned());
    assert_eq!(
        without_time(decode(&mut decoder, 0)),
        without_time(decode(&mut serde_path, 0)),
        "both paths give the same event"
    );
    assert_eq!(without_time(decode(&mut decoder, 0)), without_time(decode(&mut with_session, 0)), "nothing to redact");
    // RSS over 10^6 decoded events (after a warm-up of 10^5).
    let events = if quick() { 10_000 } else { 1_000_000 };
    for i in 0..events / 10 {
        black_box(decode(&mut decoder, i));
    }
    let before = rss_kib();
    for i in 0..events {
        let event = decode(&mut decoder, i);
        assert!(event.as_deref().is_some_and(|e| e.starts_with("{\"channel\":\"depth_book\"")));
    }
    println!("depth_book: RSS over {events} events: {before} KiB before, {} KiB after", rss_kib());

    // Calling-thread CPU time per event, the three in turn each round.
    let (rounds, per_round) = (rounds(), per_round(5000));
    let (mut ours, mut serde, mut value, mut session) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut i = 0;
    for _ in 0..rounds {
        let t = thread_cpu();
        for _ in 0..per_round {
            i += 1;
            black_box(decode(&mut decoder, i));
        }
        ours.push((thread_cpu() - t).as_secs_f64() / per_round as f64);
        let t = thread_cpu();
        for _ in 0..per_round {
            i += 1;
            black_box(decode(&mut with_session, i));
        }
        session.push((thread_cpu() - t).as_secs_f64() / per_round as f64);
        let t = thread_cpu();
        for _ in 0..per_round {
            i += 1;
            black_box(decode(&mut serde_path, i));
        }
        serde.push((thread_cpu() - t).as_secs_f64() / per_round as f64);
        let t = thread_cpu();
        for _ in 0..per_round {
            i += 1;
            black_box(serde_json::from_str::<serde_json::Value>(&frames[i % 1000]).unwrap());
        }
        value.push((thread_cpu() - t).as_secs_f64() / per_round as f64);
    }
    let rate = |seconds: f64| format!("{:.2} µs = {:.0}/s", seconds * 1e6, 1.0 / seconds);
    println!(
        "depth_book: CPU per event (median of {rounds} rounds of {per_round}; best round): decode + sort {} (best {}); \
         with a session (redacted of its token) {} (best {}); the serde path {}; a bare serde_json::Value parse {}",
        rate(median(&ours)),
        rate(ours.iter().copied().fold(f64::INFINITY, f64::min)),
        rate(median(&session)),
        rate(session.iter().copied().fold(f64::INFINITY, f64::min)),
        rate(median(&serde)),
        rate(median(&value)),
    );
    let ratios = |a: &[f64]| -> Vec<f64> { a.iter().zip(&value).map(|(a, v)| a / v).collect() };
    println!(
        "depth_book: per-round ratios to the Value parse, medians: decode + sort {:.3}; with a session {:.3}; \
         with a session / without {:.3}",
        median(&ratios(&ours)),
        median(&ratios(&session)),
        median(&session.iter().zip(&ours).map(|(s, o)| s / o).collect::<Vec<_>>()),
    );

    let reference = depth_frame(1);
    c.bench_function("depth_book/serde_value_parse_reference", |b| {
        b.iter(|| black_box(serde_json::from_str::<serde_json::Value>(black_box(&reference)).unwrap()))
    });
    c.bench_function("depth_book/serde_path", |b| b.iter(|| black_box(decode(&mut serde_path, 1))));
    let mut i = 0usize;
    c.bench_function("depth_book/decode_sort", |b| {
        b.iter(|| {
            i += 1;
            black_box(decode(&mut decoder, i))
        })
    });
}

// ---- order entry ----

/// The silent venue never answers, so every order stays among the stream's requests awaiting
/// their outcome, which the stream bounds (100,000; beyond, an order is refused unsent). Each
/// kind of call moves to a fresh stream after this many orders: one open in the hundreds of
/// thousands of calls criterion makes.
const ORDERS_PER_STREAM: usize = 90_000;

fn order_entry(c: &mut Criterion) {
    let server = ws_server::WsServer::start(ws_server::Config { silent_orders: true, ..Default::default() });
    // Through the C ABI.
    let client = c_client(stream_fixtures::CLIENT_OPTIONS, &server.perps_url());
    let (token, seed) = (CString::new("bench-token").unwrap(), CString::new(SEED_B58).unwrap());
    let c_session = perps_session_from_api_key(token.as_ptr(), seed.as_ptr(), null_mut());
    let c_open = || {
        let c_stream = perps_order_stream_open(client, c_session, null_mut());
        assert!(!c_stream.is_null());
        c_stream
    };
    let (c_stream, c_sent) = (Cell::new(c_open()), Cell::new(0));
    let order = CString::new(ORDER).unwrap();
    let c_order = || {
        if c_sent.replace(c_sent.get() + 1) == ORDERS_PER_STREAM {
            perps_stream_free(c_stream.replace(c_open()));
            c_sent.set(1);
        }
        let sent = perps_stream_new_order(c_stream.get(), black_box(order.as_ptr()), null_mut());
        assert!(!sent.is_null());
        perps_string_free(sent);
    };
    // In Rust, on a stream of its own.
    let session = Arc::new(Session::from_api_key("bench-token", SEED_B58).unwrap());
    let rust_client = stream_fixtures::client(&server.perps_url());
    let rust_open = || Stream::open_orders(rust_client.clone(), session.clone()).unwrap();
    let (stream, rust_sent) = (RefCell::new(rust_open()), Cell::new(0));
    let rust_order = || {
        if rust_sent.replace(rust_sent.get() + 1) == ORDERS_PER_STREAM {
            *stream.borrow_mut() = rust_open();
            rust_sent.set(1);
        }
        black_box(stream.borrow().new_order(black_box(ORDER)).unwrap());
    };
    // The floor, on a plain loopback connection to the same venue.
    let body = perps::order::validate(ORDER).unwrap();
    let (mut ws, _) = tungstenite::connect(format!("{}/ws-api/v1", server.url())).unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(tcp) = ws.get_ref() {
        tcp.set_nodelay(true).unwrap();
    }
    let mut floor = || ws.send(tungstenite::Message::text(floor_order_frame(&session, &body))).unwrap();

    let (rounds, per_round) = (rounds(), per_round(500));
    let time = |f: &mut dyn FnMut()| {
        let t = thread_cpu();
        for _ in 0..per_round {
            f();
        }
        (thread_cpu() - t).as_secs_f64() / per_round as f64
    };
    let (mut abi, mut rust, mut base, mut abi_ratio, mut rust_ratio) = (vec![], vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        // The order of the three rotates from round to round.
        let mut times = [0.0; 3];
        for k in 0..3 {
            let which = (round + k) % 3;
            times[which] = match which {
                0 => time(&mut || c_order()),
                1 => time(&mut || rust_order()),
                _ => time(&mut floor),
            };
        }
        abi.push(times[0]);
        rust.push(times[1]);
        base.push(times[2]);
        abi_ratio.push(times[0] / times[2]);
        rust_ratio.push(times[1] / times[2]);
    }
    println!(
        "order entry: calling-thread CPU per order (median of {rounds} rounds of {per_round}): \
         perps_stream_new_order {:.2} µs, Stream::new_order {:.2} µs, floor (signature + plain write) {:.2} µs",
        median(&abi) * 1e6,
        median(&rust) * 1e6,
        median(&base) * 1e6
    );
    println!("order entry: ratio through the C ABI: {}", spread(&abi_ratio));
    println!("order entry: ratio in Rust:           {}", spread(&rust_ratio));

    let mut group = c.benchmark_group("order_entry");
    group.bench_function("perps_stream_new_order", |b| b.iter(c_order));
    group.bench_function("stream_new_order", |b| b.iter(rust_order));
    group.bench_function("sign_plus_plain_write", |b| b.iter(&mut floor));
    group.finish();
    drop(stream);
    perps_stream_free(c_stream.get());
    perps_session_free(c_session);
    perps_client_free(client);
}

// ---- event delivery ----

fn delivery(c: &mut Criterion) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let venue = pusher(listener);
    let options = format!(
        r#"{{"stream_url":"ws://{addr}/ws-stream/v1","stream_connects_per_minute":100000,"stream_max_connections":1000}}"#
    );
    let client = c_client(&options, &format!("http://{addr}"));
    let subscriptions = CString::new(r#"[{"channel":"depth_book","symbol":"BTC-USD"}]"#).unwrap();
    let stream: *mut perps_stream = perps_stream_open(client, std::ptr::null(), subscriptions.as_ptr(), null_mut());
    assert!(!stream.is_null());
    // Waiting without limit, or busy-polling (a zero timeout, as a spinning engine does).
    let next_with = |timeout_ms: i64| loop {
        let event = perps_stream_next(stream, timeout_ms, null_mut());
        if !event.is_null() {
            break event;
        }
    };
    perps_string_free(next_with(-1)); // connected
    let (mut plain, _) = tungstenite::client::client(
        format!("ws://{addr}/ws-stream/v1"),
        TcpStream::connect(addr).and_then(|t| t.set_nodelay(true).map(|()| t)).unwrap(),
    )
    .unwrap();

    // SAFETY: gettid has no preconditions.
    let caller = unsafe { libc::gettid() };
    let io = thread_named("perps-market").expect("the stream's I/O thread");
    let venue_tid = venue.tid.load(Ordering::Acquire) as libc::pid_t;
    let (rounds, per_round) = (rounds(), per_round(400));
    // The event is freed after the time is taken: not part of the delivery.
    let waits =
        [(Pinning::IoWithCaller, -1), (Pinning::IoWithCaller, 0), (Pinning::IoWithVenue, -1), (Pinning::None, -1)];
    for (pinning, timeout_ms) in waits {
        let ours_event = || next_with(timeout_ms);
        if !pin(pinning, caller, io, venue_tid) {
            println!("delivery: fewer than 2 CPUs, nothing pinned");
        }
        plain.get_ref().set_nonblocking(timeout_ms == 0).unwrap();
        let (mut ours, mut base, mut ratios) = (vec![], vec![], vec![]);
        for round in 0..rounds {
            let (mut a, mut b) = (Vec::with_capacity(per_round), Vec::with_capacity(per_round));
            // A round of each in turn, which goes first alternating from round to round.
            for which in if round % 2 == 0 { [0, 1] } else { [1, 0] } {
                for _ in 0..per_round {
                    if which == 0 {
                        let mut event = null_mut();
                        a.push(venue.latency(0, &mut || event = ours_event()));
                        perps_string_free(event);
                    } else {
                        // Busy-polling is compared with a plain loop that busy-polls too (a
                        // non-blocking socket, read again on WouldBlock).
                        b.push(venue.latency(1, &mut || {
                            black_box(plain_read(&mut plain));
                        }));
                    }
                }
            }
            let (a, b) = (median(&a), median(&b));
            ours.push(a);
            base.push(b);
            ratios.push(a.as_secs_f64() / b.as_secs_f64());
        }
        let how = if timeout_ms == 0 { ", both busy-polling" } else { "" };
        println!(
            "delivery ({pinning:?}{how}): median push→return {:.1} µs (perps_stream_next) vs {:.1} µs (plain read); \
             per-round ratio {}",
            median(&ours).as_secs_f64() * 1e6,
            median(&base).as_secs_f64() * 1e6,
            spread(&ratios)
        );
    }
    pin(Pinning::None, caller, io, venue_tid);

    let mut group = c.benchmark_group("delivery");
    group.bench_function("perps_stream_next", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let mut event = null_mut();
                    let latency = venue.latency(0, &mut || event = next_with(-1));
                    perps_string_free(event);
                    latency
                })
                .sum()
        })
    });
    group.bench_function("plain_read", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    venue.latency(1, &mut || {
                        black_box(plain.read().unwrap());
                    })
                })
                .sum()
        })
    });
    group.finish();
    perps_stream_free(stream);
    perps_client_free(client);
}

fn all(c: &mut Criterion) {
    if wanted("depth") {
        depth(c);
    }
    if wanted("order") {
        order_entry(c);
    }
    if wanted("delivery") {
        delivery(c);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = all
}
criterion_main!(benches);
