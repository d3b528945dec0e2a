#!/usr/bin/env bash
# Runs every fuzz target (libFuzzer through cargo-fuzz, AddressSanitizer on) for a bounded
# time and fails on any crash, panic, sanitizer report or hang. Prints the executions of
# each target.
#
#   bash fuzz/run.sh [seconds per target, default 60] [target ...]
#
# The toolchain is stable: cargo-fuzz needs nightly-only compiler flags, which
# RUSTC_BOOTSTRAP=1 allows on stable. Seeds are in fuzz/seeds/<target>/ (checked in, made by
# fuzz/make_seeds.py); the growing corpus is in fuzz/corpus/<target>/ and crash inputs in
# fuzz/artifacts/<target>/ (both ignored by git). Reproduce a crash with
#   fuzz/target/x86_64-unknown-linux-gnu/release/<target> <crash file>
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO_FUZZ_VERSION=0.13.2
SECONDS_PER_TARGET="${1:-60}"
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then TARGETS=("$@"); else TARGETS=(challenge order keys certs response sign_body_into stream_push order_replies stream_wire); fi
export CARGO_TERM_COLOR=never RUSTC_BOOTSTRAP=1

if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
  cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked --quiet
fi

echo "building fuzz targets (optimised, with debug assertions and overflow checks, AddressSanitizer)"
mkdir -p fuzz/artifacts
target_dir="$PWD/fuzz/target"
for target in "${TARGETS[@]}"; do
  if ! cargo fuzz build -O --debug-assertions --target-dir "$target_dir" "$target" >fuzz/artifacts/build.log 2>&1; then
    tail -40 fuzz/artifacts/build.log >&2
    echo "building fuzz target $target failed" >&2
    exit 1
  fi
done
triple=$(rustc -vV | sed -n 's/^host: //p')
bin_dir="$target_dir/$triple/release"

failed=()
summary=()
total=0
for target in "${TARGETS[@]}"; do
  bin="$bin_dir/$target"
  [ -x "$bin" ] || { echo "fuzz target $target was not built" >&2; exit 1; }
  corpus="fuzz/corpus/$target"
  artifacts="fuzz/artifacts/$target"
  mkdir -p "$corpus" "$artifacts"
  cp -n fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
  log="fuzz/artifacts/$target.log"
  echo "=== fuzz $target for ${SECONDS_PER_TARGET}s"
  extra=()
  asan_options=${ASAN_OPTIONS:-}
  # The response target runs a server thread per connection and ureq resolves on a thread of
  # its own: LeakSanitizer then reports glibc's thread-exit bookkeeping
  # (__cxa_thread_atexit_impl, 32 bytes) as a leak, of a thread still exiting. libFuzzer's
  # -detect_leaks=0 stops its check after each input; ASan's own check at exit needs
  # detect_leaks=0 in ASAN_OPTIONS (without it a 150 s run failed once, on the empty input
  # libFuzzer names when nothing in particular is at fault). Leaks of the library itself are
  # checked by valgrind and LeakSanitizer in the C tests.
  if [ "$target" = response ]; then
    extra=(-detect_leaks=0)
    asan_options="${asan_options:+$asan_options:}detect_leaks=0"
  fi
  status=0
  ASAN_OPTIONS="$asan_options" "$bin" "$corpus" -max_total_time="$SECONDS_PER_TARGET" -timeout=20 -rss_limit_mb=2048 -max_len=4096 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ "$status" -ne 0 ] || grep -qE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|panicked at' "$log"; then
    grep -E 'panicked at|ERROR:|SUMMARY|Test unit written' "$log" | head -20 >&2 || true
    echo "fuzz $target FAILED (exit $status); log: $log; crash inputs: $artifacts/" >&2
    failed+=("$target")
  fi
  runs=${runs:-0}
  total=$((total + runs))
  summary+=("$(printf '%-16s %12s executions  %8s exec/s  %6s corpus files' "$target" "$runs" "${rate:-0}" "$(ls "$corpus" | wc -l)")")
done

echo
echo "fuzz summary (${SECONDS_PER_TARGET}s per target):"
printf '  %s\n' "${summary[@]}"
echo "  total: $total executions"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#TARGETS[@]} targets, 0 crashes"
