#!/usr/bin/env bash
# Build every tests/c/test_*.c against libperps and run each one three ways:
#   (a) static library, AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer
#   (b) shared library under valgrind (definite/indirect leaks and memory errors fail)
#   (c) shared library, plainly
# test_stream.c gets a WebSocket test venue and test_funding.c the sandbox venue, both started
# here. Exits non-zero if any build or run fails.
#
# Usage (from anywhere; paths are relative to the repository root):
#   make sandbox lib               # the caller builds the library and the sandbox venue first
#   bash tests/c/run.sh [PROFILE_DIR]   # default: target/release
#
# Environment:
#   CC                 C compiler (default: cc)
#   PERPS_NATIVE_LIBS  system libraries the Rust static library needs; the default is what
#                      `cargo rustc --release --lib --crate-type staticlib -- --print
#                      native-static-libs` prints on Linux/glibc.
#   VALGRIND           valgrind command (default: valgrind)

set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 2

PROFILE_DIR="${1:-target/release}"
PROFILE_DIR="$(cd "$PROFILE_DIR" 2>/dev/null && pwd)" || {
    echo "run.sh: profile dir '${1:-target/release}' does not exist (build the library first)" >&2
    exit 2
}
CC="${CC:-cc}"
VALGRIND="${VALGRIND:-valgrind}"
NATIVE_LIBS="${PERPS_NATIVE_LIBS:--lgcc_s -lutil -lrt -lpthread -lm -ldl -lc}"
CFLAGS=(-std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -g)
# OpenSSL's libcrypto verifies fresh (hedged) signatures independently (ed25519_verify.h).
TEST_LIBS=(-lcrypto)

for lib in libperps.a libperps.so perps-sandbox; do
    if [[ ! -f "$PROFILE_DIR/$lib" ]]; then
        echo "run.sh: $PROFILE_DIR/$lib not found (run make sandbox lib first)" >&2
        exit 2
    fi
done
if ! command -v "$VALGRIND" >/dev/null 2>&1; then
    echo "run.sh: valgrind not found (apt-get install valgrind)" >&2
    exit 2
fi

OUT="$(mktemp -d "${TMPDIR:-/tmp}/perps-ctests.XXXXXX")"
trap 'rm -rf "$OUT"' EXIT

failures=()

# The WebSocket test venue for test_stream.c (tests/common/ws_server.rs as a program).
if ! cargo build --quiet --release --example ws_test_server; then
    echo "run.sh: cannot build the ws_test_server example" >&2
    exit 2
fi
coproc WS_SERVER { exec "$ROOT/target/release/examples/ws_test_server" 900; }
read -r PERPS_TEST_WS_URL <&"${WS_SERVER[0]}"
export PERPS_TEST_WS_URL
trap 'kill "$WS_SERVER_PID" 2>/dev/null; rm -rf "$OUT"' EXIT

# The sandbox venue for test_funding.c (it settles funding on demand); its URLs from the JSON
# line it prints.
"$PROFILE_DIR/perps-sandbox" --port 0 >"$OUT/sandbox_urls" 2>"$OUT/sandbox.err" </dev/null &
SANDBOX_PID=$!
trap 'kill "$WS_SERVER_PID" "$SANDBOX_PID" 2>/dev/null; rm -rf "$OUT"' EXIT
for _ in $(seq 1 200); do
    [[ -s "$OUT/sandbox_urls" ]] && break
    sleep 0.05
done
url_of() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "$OUT/sandbox_urls"; }
PERPS_TEST_SANDBOX_BASE_URL=$(url_of base_url)
PERPS_TEST_SANDBOX_PERPS_URL=$(url_of perps_url)
PERPS_TEST_SANDBOX_ADMIN_URL=$(url_of admin_url)
export PERPS_TEST_SANDBOX_BASE_URL PERPS_TEST_SANDBOX_PERPS_URL PERPS_TEST_SANDBOX_ADMIN_URL
if [[ -z "$PERPS_TEST_SANDBOX_ADMIN_URL" ]]; then
    cat "$OUT/sandbox.err" >&2
    echo "run.sh: the sandbox did not print its URLs" >&2
    exit 2
fi

# Run one command; the program must exit 0 and its last line must be "N passed, 0 failed".
run() {
    local label="$1"
    shift
    echo "=== $label"
    "$@" 2>&1 | tee "$OUT/log"
    local rc=${PIPESTATUS[0]}
    local last
    last="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$OUT/log" | tail -n 1)"
    if [[ $rc -ne 0 ]]; then
        echo "--- $label: FAILED (exit status $rc)"
        failures+=("$label")
    elif [[ ! "$last" =~ ^[0-9]+\ passed,\ 0\ failed$ ]]; then
        echo "--- $label: FAILED (no final 'N passed, 0 failed' line)"
        failures+=("$label")
    else
        echo "--- $label: ok ($last)"
    fi
}

build() {
    local label="$1"
    shift
    echo "=== build: $label"
    echo "+ $*"
    if ! "$@"; then
        echo "--- build $label: FAILED"
        failures+=("build $label")
        return 1
    fi
}

shopt -s nullglob
tests=(tests/c/test_*.c)
if [[ ${#tests[@]} -eq 0 ]]; then
    echo "run.sh: no tests/c/test_*.c found" >&2
    exit 2
fi

for src in "${tests[@]}"; do
    name="$(basename "$src" .c)"

    # (a) static library + ASan/LSan/UBSan. The Rust std allocator is the system malloc,
    # so ASan sees (and checks) every allocation the library makes.
    # shellcheck disable=SC2086  # NATIVE_LIBS is a list of flags
    if build "$name (static, ASan+UBSan)" \
        "$CC" "${CFLAGS[@]}" -fsanitize=address,undefined -fno-omit-frame-pointer \
        -fno-sanitize-recover=undefined \
        "$src" "$PROFILE_DIR/libperps.a" $NATIVE_LIBS "${TEST_LIBS[@]}" -o "$OUT/${name}_asan"; then
        run "$name (static, ASan+UBSan)" \
            env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
            "$OUT/${name}_asan"
        # Pinned to one CPU, the streams' I/O threads too: callers of perps_stream_next read
        # and decode the frames themselves (src/stream/reader.rs).
        if [[ "$name" == test_stream ]]; then
            run "$name (static, ASan+UBSan, one CPU)" \
                env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                taskset -c 0 "$OUT/${name}_asan"
        fi
    fi

    # (b) and (c): the shared library, found through the rpath (no LD_LIBRARY_PATH).
    if build "$name (shared)" \
        "$CC" "${CFLAGS[@]}" "$src" -L"$PROFILE_DIR" -Wl,-Bdynamic -lperps "${TEST_LIBS[@]}" \
        -Wl,-rpath,"$PROFILE_DIR" -o "$OUT/${name}_shared"; then
        # Rust std's one-time allocations are "still reachable" and do not count;
        # "definitely lost" / "indirectly lost" and any memory error do.
        run "$name (shared, valgrind)" \
            "$VALGRIND" --error-exitcode=1 --leak-check=full \
            --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
            --track-origins=yes "$OUT/${name}_shared"
        run "$name (shared, plain)" "$OUT/${name}_shared"
    fi
done

echo
if [[ ${#failures[@]} -ne 0 ]]; then
    echo "C tests FAILED: ${failures[*]}"
    exit 1
fi
echo "C tests: all runs passed"
