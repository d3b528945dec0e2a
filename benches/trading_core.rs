//! The trading loop's local costs, per order or request (BENCHMARKS.md): the rate limiter
//! when it does not wait (target < 100 ns: the client's bucket lookup plus one GCRA step on
//! one atomic), and the symbol-rule checks of an order (target < 1 µs: find the symbol in
//! a table of 24, check tick, lot, minimum and maximum with exact decimal comparisons).
//! The order parse is outside the timing: the library validates the order once, for every
//! check and the body.
//!
//! `cargo bench --bench trading_core`; `-- --test` runs each once.

use criterion::{BatchSize, Criterion};
use perps::client::pacing::{Bucket, Buckets};
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
}
