//! Body signatures through the C ABI against the floor, side by side (BENCHMARKS.md).
//!
//! - `floor`: ed25519-dalek's standard `SigningKey::sign` of the same `v1,{id},{ts},{body}`
//!   message (what any caller of the standard API pays).
//! - `perps_sign_body_into`: the allocation-free hot path (fresh UUID, clock, sign, base64,
//!   fixed-size fields in a caller struct).
//! - `perps_sign_body`: JSON of the four headers, plus the `perps_string_free` of the result.
//! - one thread vs two threads signing on one shared session.
//!
//! Criterion measures each one; then a paired run (the variants interleaved round by round,
//! so that the machine's load drifts the same way for all of them) prints the ratios the
//! targets are about: `cargo bench --bench signing`. `-- --test` runs everything once.
//! The paired run's size: `PERPS_BENCH_ROUNDS` (default 15) rounds of `PERPS_BENCH_PER_ROUND`
//! (default 3000) calls per variant, and 4 × that per thread for the throughput comparison.
//! `PERPS_FAST_CURVE` chooses the code that computes R (`adx`, `avx2`, `baseline`, or `0` for
//! the reference; the library's own switch), so each build's ratio is measured the same way.

use criterion::{Criterion, Throughput};
use ed25519_dalek::{Signer, SigningKey};
use perps::ffi::error::perps_code;
use perps::ffi::session::{perps_session, perps_session_free, perps_session_new};
use perps::ffi::sign::{perps_body_signature, perps_sign_body, perps_sign_body_into};
use perps::ffi::strings::perps_string_free;
use std::ffi::{CStr, c_char};
use std::hint::black_box;
use std::mem::MaybeUninit;
use std::ptr::null_mut;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// The order body the flows send: the realistic size of a signed body.
const BODY: &CStr = c"{\"symbol\":\"BTC-USD\",\"side\":\"buy\",\"order_type\":\"limit\",\"qty\":\"0.01\",\"price\":\"65000\",\"time_in_force\":\"gtc\",\"reduce_only\":false}";

/// A session handle shared by threads (the ABI allows it: signing reads an immutable key).
#[derive(Clone, Copy)]
struct SharedSession(*mut perps_session);
unsafe impl Send for SharedSession {}
unsafe impl Sync for SharedSession {}

impl SharedSession {
    fn new() -> SharedSession {
        let s = perps_session_new(null_mut());
        assert!(!s.is_null(), "perps_session_new failed");
        SharedSession(s)
    }

    #[inline(always)]
    fn sign_into(self, out: &mut MaybeUninit<perps_body_signature>) {
        let body = BODY.to_bytes();
        let code = perps_sign_body_into(self.0, black_box(body.as_ptr()), body.len(), out.as_mut_ptr());
        assert!(code == perps_code::PERPS_OK, "perps_sign_body_into failed");
    }

    #[inline(always)]
    fn sign_json(self) {
        let json: *mut c_char = perps_sign_body(self.0, black_box(BODY.as_ptr()), null_mut());
        assert!(!json.is_null(), "perps_sign_body failed");
        perps_string_free(black_box(json));
    }
}

/// The floor: the standard API, given the same message a body signature covers.
struct Floor {
    key: SigningKey,
    message: Vec<u8>,
}

impl Floor {
    fn new() -> Floor {
        let key = SigningKey::from_bytes(&[7u8; 32]);
        let message = perps::body_sign::signed_message(
            "0b7f6a2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b",
            perps::body_sign::now_ms(),
            BODY.to_bytes(),
        );
        Floor { key, message }
    }

    #[inline(always)]
    fn sign(&self) {
        black_box(self.key.sign(black_box(&self.message)));
    }
}

fn criterion_benches(c: &mut Criterion, session: SharedSession, floor: &Floor) {
    let mut group = c.benchmark_group("body_signature");
    group.throughput(Throughput::Elements(1));
    group.bench_function("floor_dalek_SigningKey_sign", |b| b.iter(|| floor.sign()));
    group.bench_function("perps_sign_body_into", |b| {
        let mut out = MaybeUninit::zeroed();
        b.iter(|| session.sign_into(&mut out))
    });
    group.bench_function("perps_sign_body+perps_string_free", |b| b.iter(|| session.sign_json()));
    group.finish();

    let mut group = c.benchmark_group("shared_session");
    group.throughput(Throughput::Elements(1));
    group.bench_function("1_thread", |b| {
        b.iter_custom(|iters| {
            let mut out = MaybeUninit::zeroed();
            let start = Instant::now();
            for _ in 0..iters {
                session.sign_into(&mut out);
            }
            start.elapsed()
        })
    });
    // Two threads, `iters` signatures each: criterion reports time per 2 signatures.
    group.throughput(Throughput::Elements(2));
    group.bench_function("2_threads", |b| b.iter_custom(|iters| two_threads(session, iters)));
    group.finish();
}

/// Wall time for two threads to make `per_thread` signatures each on the shared session,
/// from the moment both are ready.
fn two_threads(session: SharedSession, per_thread: u64) -> Duration {
    two_threads_with_cpu(session, per_thread).0
}

/// The same, with the CPU time each thread spent (summed): if the threads contended for
/// anything (a lock, a shared cache line), the CPU time per signature would rise.
///
/// The wall time runs from the first worker's start to the last worker's end, as the workers
/// see them: on two cores the main thread may not run again until both workers are done.
fn two_threads_with_cpu(session: SharedSession, per_thread: u64) -> (Duration, Duration) {
    let barrier = Barrier::new(2);
    let runs: Vec<(Instant, Instant, Duration)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let mut out = MaybeUninit::zeroed();
                    barrier.wait();
                    let (start, cpu) = (Instant::now(), thread_cpu());
                    for _ in 0..per_thread {
                        session.sign_into(&mut out);
                    }
                    (start, Instant::now(), thread_cpu() - cpu)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("signing thread")).collect()
    });
    let start = runs.iter().map(|r| r.0).min().expect("two runs");
    let end = runs.iter().map(|r| r.1).max().expect("two runs");
    (end - start, runs.iter().map(|r| r.2).sum())
}

/// CPU time of the calling thread: unaffected by other processes taking the core away.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall time and this thread's CPU time of `n` calls.
fn time_both(n: u64, mut f: impl FnMut()) -> (Duration, Duration) {
    let cpu = thread_cpu();
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    (start.elapsed(), thread_cpu() - cpu)
}

struct Spread {
    values: Vec<f64>,
}

impl Spread {
    fn new() -> Spread {
        Spread { values: Vec::new() }
    }
    fn median(&self) -> f64 {
        let mut v = self.values.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
    }
    fn min(&self) -> f64 {
        self.values.iter().copied().fold(f64::INFINITY, f64::min)
    }
    fn max(&self) -> f64 {
        self.values.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    }
    fn line(&self) -> String {
        format!("median {:.3}  (min {:.3}, max {:.3})", self.median(), self.min(), self.max())
    }
}

/// The ratios the targets are about, measured in one run with the variants interleaved.
fn paired(session: SharedSession, floor: &Floor, rounds: usize, per_round: u64) {
    let mut out = MaybeUninit::zeroed();
    // The library's core signer on the floor's key and message: the precomputed key alone,
    // without request id, clock, base64 or the C boundary.
    let core = perps::keys::RequestKey::from_signing_key(&floor.key);
    let core_sign = || {
        black_box(core.sign_parts(&[black_box(&floor.message)]).expect("sign"));
    };
    // Warm up caches and the CPU's frequency for each variant.
    for _ in 0..per_round.min(1000) {
        floor.sign();
        core_sign();
        session.sign_into(&mut out);
        session.sign_json();
    }
    const NAMES: [&str; 4] = [
        "floor (dalek SigningKey::sign)",
        "core RequestKey::sign_parts",
        "perps_sign_body_into",
        "perps_sign_body + perps_string_free",
    ];
    let mut wall: [Spread; 4] = std::array::from_fn(|_| Spread::new());
    let mut cpu: [Spread; 4] = std::array::from_fn(|_| Spread::new());
    let mut wall_ratio: [Spread; 4] = std::array::from_fn(|_| Spread::new());
    let mut cpu_ratio: [Spread; 4] = std::array::from_fn(|_| Spread::new());
    let (mut threads_ratio, mut threads_cpu_ratio, mut threads_cores) = (Spread::new(), Spread::new(), Spread::new());
    let per_op = |d: Duration| d.as_nanos() as f64 / per_round as f64;
    for round in 0..rounds {
        // Rotate the order so no variant always runs first (or right after another).
        let mut t = [(0f64, 0f64); 4];
        for k in 0..4 {
            let which = (round + k) % 4;
            let (w, c) = match which {
                0 => time_both(per_round, || floor.sign()),
                1 => time_both(per_round, core_sign),
                2 => time_both(per_round, || session.sign_into(&mut out)),
                _ => time_both(per_round, || session.sign_json()),
            };
            t[which] = (per_op(w), per_op(c));
        }
        for i in 0..4 {
            wall[i].values.push(t[i].0);
            cpu[i].values.push(t[i].1);
            wall_ratio[i].values.push(t[i].0 / t[0].0);
            cpu_ratio[i].values.push(t[i].1 / t[0].1);
        }
        // Longer runs for throughput: a steady state, not the threads' start-up.
        let per_thread = 4 * per_round;
        let (one, one_cpu) = time_both(per_thread, || session.sign_into(&mut out));
        let (two, two_cpu) = two_threads_with_cpu(session, per_thread);
        // Throughput ratio: (2n / two) / (n / one).
        threads_ratio.values.push(2.0 * one.as_secs_f64() / two.as_secs_f64());
        // CPU per signature with two threads vs one: (two_cpu / 2n) / (one_cpu / n).
        threads_cpu_ratio.values.push(two_cpu.as_secs_f64() / (2.0 * one_cpu.as_secs_f64()));
        // The share of the machine the two threads got: CPU seconds per wall second.
        threads_cores.values.push(two_cpu.as_secs_f64() / two.as_secs_f64());
    }
    println!();
    println!("paired run: {rounds} rounds of {per_round} calls per variant, order rotated each round");
    println!("ns per call, wall clock:");
    for i in 0..4 {
        println!("  {:<38} {}", NAMES[i], wall[i].line());
    }
    println!("ns per call, thread CPU time:");
    for i in 0..4 {
        println!("  {:<38} {}", NAMES[i], cpu[i].line());
    }
    // The targets for perps_sign_body_into depend on the build computing R.
    let status = perps::curve::signer_status();
    let into_target = match status.build {
        Some(perps::curve::Build::Ifma) => "   target <= 0.50 (IFMA build)",
        Some(perps::curve::Build::Adx) => "   target <= 0.75 (ADX build)",
        Some(_) => "   (no target for this build)",
        None => "   target <= 1.02 (reference path)",
    };
    println!(
        "R computed by: {} (PERPS_FAST_CURVE={:?})",
        status.build.map_or("the reference (curve25519-dalek)", |b| b.name()),
        std::env::var("PERPS_FAST_CURVE").unwrap_or_default()
    );
    println!("ratios to the floor, per round (wall | CPU):");
    for (i, target) in [(1, ""), (2, into_target), (3, "   target <= 1.05")] {
        println!("  {:<38} {} | {}{target}", NAMES[i], wall_ratio[i].line(), cpu_ratio[i].line());
    }
    println!("throughput, 2 threads / 1 thread on one session ({} signatures per thread per round):", 4 * per_round);
    println!("  {:<38} {}   target >= 1.80", "ratio (wall clock)", threads_ratio.line());
    println!("  {:<38} {}", "cores the 2 threads got (CPU s / s)", threads_cores.line());
    println!("  {:<38} {}   (1.0 = no contention)", "CPU per signature, 2 threads / 1", threads_cpu_ratio.line());
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let test_mode = args.iter().any(|a| a == "--test");
    let session = SharedSession::new();
    let floor = Floor::new();

    let mut criterion = Criterion::default().configure_from_args();
    criterion_benches(&mut criterion, session, &floor);
    criterion.final_summary();

    let rounds = env_number("PERPS_BENCH_ROUNDS").unwrap_or(if test_mode { 2 } else { 15 });
    let per_round = env_number("PERPS_BENCH_PER_ROUND").unwrap_or(if test_mode { 20 } else { 3000 }) as u64;
    paired(session, &floor, rounds, per_round);
    perps_session_free(session.0);
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}
