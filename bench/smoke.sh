#!/usr/bin/env bash
# A short run of every benchmark, so that none of them can rot: each one builds and runs,
# briefly. No timing is asserted (the machines are shared and noisy); the behaviours are:
# 1,000 sequential orders use exactly one TCP connection (benches/order_roundtrip.rs), and
# RSS does not grow by 1 MiB over the C benchmark's sign_body + string_free calls.
# The real measurements and how to run them: BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

step() { printf '\n--- bench smoke: %s ---\n' "$*"; }

step "order round trip against the in-process sandbox (+ one connection for 1,000 orders)"
cargo bench --bench order_roundtrip -- --test

step "trading endpoints: each round trip next to plain ureq (needs the paper-trading sandbox)"
cargo bench --bench trading_roundtrip -- --test

step "trading core: the rate limiter and the symbol-rule checks"
cargo bench --bench trading_core -- --test

step "sign-in client CPU, the sandbox in another process"
cargo build --release -p perps-sandbox
cargo bench --bench signin_cpu -- --test

step "signing: floor, perps_sign_body_into, perps_sign_body, one vs two threads"
cargo bench --bench signing -- --test

step "streams: depth_book decoding, order entry, event delivery (test venue on loopback)"
cargo bench --bench streams -- --test

step "pipelined orders on one order stream against sequential REST (the in-process sandbox)"
cargo bench --bench pipelined_orders -- --test

step "C benchmark through the ABI (small N)"
make --no-print-directory lib
make -C bench/c --no-print-directory
bench/c/bench_sign 200 20000

step "callgrind instruction counts (small N)"
bash bench/callgrind.sh 20

printf '\nbench smoke: every benchmark ran\n'
