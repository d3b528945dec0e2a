//! The trading loop's local costs, per order or request (BENCHMARKS.md): the rate limiter
//! when it does not wait (target < 100 ns: the client's bucket lookup plus one GCRA step on
//! one atomic; the per-IP window's step under its one lock), and the symbol-rule checks of an order (target < 1 µs: find the symbol in
//! a table of 24, check tick, lot, minimum and maximum with exact decimal comparisons).
//! The order parse is outside the timing: the library validates the order once, for every
//! check and the body.
//!
//! After criterion (wall time), a second run measures the calling thread's CPU time per
//! operation over rounds of many operations (median and best round), which a busy shared
//! machine does not inflate by descheduling the thread: the figures BENCHMARKS.md reports.
//!
//! `cargo bench --bench trading_core`; `-- --test` runs each once. Env:
//! PERPS_BENCH_ROUNDS (15), PERPS_BENCH_PER_ROUND (200000).

use criterion::{BatchSize, Criterion};
use perps::client::pacing::{Bucket, Buckets};
use perps::client::per_ip_limit::HostWindow;
use perps::client::symbol_rules::{SymbolTable, Verdict};
use std::hint::black_box;
use std::time::Duration;

/// 24 symbols shaped like the venue's `query_symbol_info` answer; BTC-USD last, so the
/// check walks the whole table.
fn symbol_list() -> String {
    let mut symbols: Vec<String> = (0..23)
        .map(|i| {
            format!(
                r#"{{"symbol":"SYM{i}-USD","price_tick_decimals":{},"qty_tick_decimals":3,"min_order_qty":"0.001","max_order_qty":"1000","enabled":true,"maker_fee":"0.0001"}}"#,
                i % 5
            )
        })
        .collect();
    symbols.push(
        r#"{"symbol":"BTC-USD","price_tick_decimals":2,"qty_tick_decimals":4,"min_order_qty":"0.0001","max_order_qty":"100","enabled":true}"#
            .to_owned(),
    );
    format!("[{}]", symbols.join(","))
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("trading_core");

    // Pacing: the client finds the account's bucket (a read lock and a short scan of the
    // buckets it has used), then takes one request's credits. A fresh bucket each time, so
    // every step admits without waiting (a full bucket would make it refuse).
    let buckets = Buckets::default();
    buckets.of("https://perps.example", "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
    group.bench_function("pacing_lookup_and_admit", |b| {
        b.iter_batched(
            Bucket::default,
            |fresh| {
                let shared =
                    buckets.of("https://perps.example", black_box("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"));
                black_box(&shared);
                fresh.admit(Duration::ZERO).expect("a fresh bucket admits")
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("pacing_admit", |b| {
        b.iter_batched(Bucket::default, |fresh| fresh.admit(Duration::ZERO).unwrap(), BatchSize::SmallInput)
    });
    // The per-IP window: allowed to wait without limit, so that it always admits; the step's
    // work (the lock, the clock, one comparison and one write) is the no-wait path's.
    let window = HostWindow::default();
    group.bench_function("pacing_per_ip_admit", |b| b.iter(|| window.admit(Duration::ZERO, Duration::MAX).unwrap()));

    let table = SymbolTable::parse(&symbol_list()).unwrap();
    let allowed = perps::order::validate(
        r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.0125","price":"65000.25","time_in_force":"alo","reduce_only":false,"tp_price":"66000.5","sl_price":"64000"}"#,
    )
    .unwrap();
    let refused = perps::order::validate(
        r#"{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.0125","price":"65000.255","time_in_force":"alo","reduce_only":false}"#,
    )
    .unwrap();
    assert_eq!(table.check(&allowed), Verdict::Allowed);
    assert!(matches!(table.check(&refused), Verdict::Refused(_)));
    group.bench_function("symbol_rules_check_allowed", |b| b.iter(|| table.check(black_box(&allowed))));
    group.bench_function("symbol_rules_check_refused", |b| b.iter(|| table.check(black_box(&refused))));
    group.finish();
    criterion.final_summary();

    let test_mode = std::env::args().any(|a| a == "--test");
    let rounds = env_number("PERPS_BENCH_ROUNDS").unwrap_or(if test_mode { 2 } else { 15 });
    let per_round = env_number("PERPS_BENCH_PER_ROUND").unwrap_or(if test_mode { 1000 } else { 200_000 });
    println!();
    println!("calling thread's CPU time per operation: {rounds} rounds of {per_round}");
    // Fresh buckets, made before each round's timing: every admission is the no-wait path.
    cpu_per_op("pacing: lookup + admit (target < 100 ns)", rounds, per_round, |n| {
        let fresh: Vec<Bucket> = (0..n).map(|_| Bucket::default()).collect();
        let buckets = &buckets;
        move || {
            for bucket in &fresh {
                black_box(buckets.of("https://perps.example", black_box("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266")));
                bucket.admit(Duration::ZERO).unwrap();
            }
        }
    });
    cpu_per_op("pacing: admit only", rounds, per_round, |n| {
        let fresh: Vec<Bucket> = (0..n).map(|_| Bucket::default()).collect();
        move || {
            for bucket in &fresh {
                bucket.admit(Duration::ZERO).unwrap();
            }
        }
    });
    cpu_per_op("pacing: the per-IP window's step", rounds, per_round, |n| {
        let window = &window;
        move || {
            for _ in 0..n {
                black_box(window.admit(Duration::ZERO, Duration::MAX).unwrap());
            }
        }
    });
    cpu_per_op("symbol rules: an allowed order (target < 1 µs)", rounds, per_round, |n| {
        let (table, allowed) = (&table, &allowed);
        move || {
            for _ in 0..n {
                black_box(table.check(black_box(allowed)));
            }
        }
    });
    cpu_per_op("symbol rules: a refused order (message written)", rounds, per_round, |n| {
        let (table, refused) = (&table, &refused);
        move || {
            for _ in 0..n {
                black_box(table.check(black_box(refused)));
            }
        }
    });
}

/// Run `prepare(n)`'s work `rounds` times, timing only the work; print the CPU time per
/// operation (median of the rounds, and the best round).
fn cpu_per_op<F: FnOnce()>(what: &str, rounds: usize, n: usize, prepare: impl Fn(usize) -> F) {
    let mut per_op: Vec<f64> = (0..rounds)
        .map(|_| {
            let work = prepare(n);
            let start = thread_cpu_ns();
            work();
            (thread_cpu_ns() - start) / n as f64
        })
        .collect();
    per_op.sort_by(f64::total_cmp);
    println!("  {what:<52} median {:>7.1} ns   best {:>7.1} ns", per_op[per_op.len() / 2], per_op[0]);
}

fn thread_cpu_ns() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64
}

fn env_number(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.parse().ok()
}
