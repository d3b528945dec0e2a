#!/usr/bin/env bash
# Every test of the project, from a fresh clone on a fresh machine: installs what it needs
# (Debian packages, the pinned cbindgen), checks the generated header, runs the Rust tests,
# the constant-time check of signing (valgrind), the C tests under AddressSanitizer/UBSan and
# valgrind, the independent Python cross-checks, the bindings, the packages (built by
# scripts/package.sh, installed and used), and the C example end to end under valgrind.
# `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
CBINDGEN_VERSION=0.29.4
export CARGO_TERM_COLOR=never
# A run from a fresh clone reuses nothing incremental: without it, 1.3 GB less on the disk.
export CARGO_INCREMENTAL=0

step() { printf '\n=== %s ===\n' "$*"; }

step "tools"
df -h . | sed 's/^/disk: /'   # a run that fills the disk says how much it had
missing=()
for tool in valgrind cc make python3 pkg-config go g++ clang++ nm; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
# The C tests verify hedged signatures with OpenSSL's libcrypto (tests/c/ed25519_verify.h).
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
if [ ${#missing[@]} -gt 0 ]; then
  packages=()
  for tool in "${missing[@]}"; do
    case "$tool" in
      cc) packages+=(gcc) ;;
      python3) packages+=(python3 python3-venv) ;;
      go) packages+=(golang-go) ;;
      nm) packages+=(binutils) ;;
      clang++) packages+=(clang) ;;   # tests/cpp/run.sh: the C++ layer compiled by clang++ too
      *) packages+=("$tool") ;;
    esac
  done
  echo "installing: ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${packages[@]}" >/dev/null
fi
if [ "$(cbindgen --version 2>/dev/null)" != "cbindgen $CBINDGEN_VERSION" ]; then
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked --quiet
fi

step "header: include/perps.h is what cbindgen $CBINDGEN_VERSION generates"
generated=$(mktemp)
cbindgen --config cbindgen.toml --output "$generated" 2>/dev/null
if ! cmp -s "$generated" include/perps.h; then
  diff -u include/perps.h "$generated" | head -40
  echo "include/perps.h is stale: run cbindgen --config cbindgen.toml --output include/perps.h" >&2
  exit 1
fi
rm -f "$generated"

step "build: the sandbox venue (its own crate), then the library"
make sandbox lib   # the C libraries: cargo rustc --crate-type cdylib,staticlib (see the Makefile)

step "rust tests (unit, vectors, tables, flows through the C ABI against the sandbox; the sandbox's own tests)"
cargo test --workspace

step "streams on one CPU: the stream tests with the I/O threads pinned to the caller's CPU, where callers read the frames themselves"
# Not stream_supervision: its time bounds are for two CPUs. Nor the test that the account
# event sent before the ack is also read first: on one CPU, which of two connections is read
# first is the scheduler's choice (TCP orders nothing across connections; engines handle both).
taskset -c 0 cargo test --test streams --test stream_order_entry --test stream_flows --test stream_reconnect \
  --test stream_hostile_venue --test stream_auth_answers --test stream_connection_limits --test stream_caller_reads \
  --test stream_upgrade_answers --test stream_venue_close --test stream_hostile_floods --test stream_rotation \
  --test stream_request_timeout --test stream_seq_gaps --test stream_hostile_subscriptions --test stream_hostile_fragments \
  -- --skip the_account_event_arrives_before_the_ack

# The debug test binaries are done with: their ~1.8 GB leave the disk before the release
# builds (a CI machine's disk once filled). Cargo links them again when next asked.
find target/debug/deps -maxdepth 1 -type f -perm -u+x ! -name '*.so' -delete

step "stress in release: 8 threads share one client and one session; 100,000 signatures, 1,000 orders, token refresh"
cargo test --release --test stress -- --ignored

step "pacing in release: 60-order bursts against the sandbox with its rate limit on (wait: no 429; refuse: nothing refused is sent)"
cargo test --release --test trading_flows -- --ignored

step "secrets in release, the build that ships: no freed heap block holds the token or the key, no stack below an import or a signature holds the key, returned strings wiped, signing allocates nothing"
# The debug run above passes where the release build once failed: an optimised sort's scratch
# on the stack held runs of the token, a key's import left the key there, and values later
# moved to the heap carried them.
cargo test --release --test stream_token_wiped --test key_residue --test key_stack_residue --test login_token_wiped --test string_free --test sign_into_no_alloc

step "constant time: a signature under valgrind memcheck with the secret key marked undefined (release build)"
cargo test --release --test constant_time -- --nocapture

step "constant time on the machine code: every build's branches and addresses audited with objdump, in this binary and in libperps.so as make lib built it above (libperps.a: the same code), planted leaks caught (release build)"
cargo test --release --test ct_audit -- --nocapture

step "vector build: its lane operations are inlined into the AVX-512 code, not left as calls (release build)"
cargo test --release --test lane_operations_inlined

step "curve builds: each one signs through the C ABI when chosen, PERPS_FAST_CURVE=0 forces the reference (release build)"
builds_log=$(mktemp)
cargo test --release --test signer_paths -- --nocapture 2>&1 | tee "$builds_log"
if grep -q "NOT EXERCISED" "$builds_log"; then
  printf '\n*** WARNING: this CPU could not run every curve build; these were NOT exercised here: ***\n'
  grep "NOT EXERCISED" "$builds_log"
  printf '*** (their machine code was still audited by ct_audit; run CI on a CPU with AVX-512 IFMA to run them) ***\n\n'
fi
rm -f "$builds_log"

step "fuzz: every target for ${FUZZ_SECONDS:-30} s (libFuzzer + ASan; stable toolchain through RUSTC_BOOTSTRAP)"
bash fuzz/run.sh "${FUZZ_SECONDS:-30}"

if [ "${PERPS_TSAN:-0}" = 1 ]; then
  step "ThreadSanitizer: the stress test, std rebuilt with TSan (needs the rust-src component)"
  rustup component add rust-src
  RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=thread" CARGO_TARGET_DIR=target/tsan \
    cargo test -Zbuild-std --release --target "$(rustc -vV | sed -n 's/^host: //p')" \
    --test stress -- --include-ignored
fi

step "C tests: ASan+UBSan, valgrind"
bash tests/c/run.sh target/release

step "C++ layer: perps.hpp unit test (valgrind, ASan+UBSan), C++ example against the sandbox"
bash tests/cpp/run.sh target/release

step "install: make install into a temporary prefix, C example built with pkg-config (shared, static)"
bash tests/install/run.sh

step "independent cross-checks (PyNaCl, eth-account)"
bash tests/python/run.sh

step "Go binding (cgo): go vet, go test against the sandbox, under the race detector and cgocheck=2"
# -race: the binding's handles, finalizers and stream goroutines are shared across goroutines;
# cgocheck=2: every pointer the binding hands to C is checked for Go pointers C may not keep.
# Asked for as GODEBUG=cgocheck=2 whatever the Go: run.sh gives it in the form that Go takes,
# GODEBUG=cgocheck=2 before Go 1.21 (Debian 12 has 1.19), GOEXPERIMENT=cgocheck2 from 1.21,
# where the GODEBUG form stops every Go program at its start (bindings/go/cgocheck.sh). First
# that choice, tested for either Go and tried with this one (the checks do stop a bad store).
bash bindings/go/cgocheck_test.sh
GODEBUG=cgocheck=2 bash bindings/go/run.sh -race

step "Python binding (ctypes): pytest against the sandbox"
bash bindings/python/run.sh

step "interop: a venue written from the documents only (aiohttp, PyNaCl, trustme), driven through the Python binding"
bash tests/interop/run.sh

step "C# binding (P/Invoke) against the sandbox, on Mono and on .NET (CoreCLR)"
PERPS_SKIP_BUILD=1 bash bindings/csharp/run.sh

step "Java binding (JNA) against the sandbox"
PERPS_SKIP_BUILD=1 bash bindings/java/run.sh

step "packages: scripts/package.sh, then each package installed and used by a program against the sandbox"
bash tests/packages/run.sh

step "C example end to end against the sandbox, under valgrind"
RUNNER="valgrind --quiet --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect" \
  bash examples-c/demo.sh

step "trading-loop examples against the sandbox, under valgrind: an order that timed out found by its cl_ord_id; a market maker quoted, filled, cancelled and reconciled"
RUNNER="valgrind --quiet --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect" \
  bash examples-c/market_maker.sh

step "the market maker again with the order stream's faults, under valgrind: outcomes sent twice ignored, an order placed behind a 503 found and cancelled, one never placed taken as such, one acked in other words then refused (a contradicting repeat) looked up and taken as never placed, refused cancels looked up and done by REST, cancels left unanswered by a dropped connection looked up; nothing left open, fills as the sandbox counts"
RUNNER="valgrind --quiet --error-exitcode=1 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect" \
  bash examples-c/market_maker.sh --faults

step "benchmarks: each one runs briefly (no timing asserted; the numbers are in BENCHMARKS.md)"
bash bench/smoke.sh

df -h . | sed 's/^/disk: /'
du -sh target 2>/dev/null | sed 's/^/disk used by target: /'
step "all tests passed"
