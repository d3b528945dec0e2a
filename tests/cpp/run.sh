#!/usr/bin/env bash
# The C++ layer (include/perps.hpp): build with g++ -std=c++17 -Wall -Wextra -Werror -pedantic
# and run
#   - tests/cpp/test_hpp.cpp (offline unit test): shared library plainly and under valgrind,
#     static library under AddressSanitizer + UBSan;
#   - tests/cpp/test_secrets.cpp (offline: no copy of a secret argument is freed unwiped):
#     shared library, plainly;
#   - tests/cpp/test_trading.cpp (the trading loop: every endpoint method, errors with their
#     cl_ord_id / x-request-id / retry_after_ms) and tests/cpp/test_funding.cpp (funding the
#     venue settles, read back with query_funding_history) against a sandbox venue this
#     script starts and stops: plainly and under valgrind;
#   - examples-c/signin_order.cpp (the full flow: bsc and solana sign-in, login, order, an
#     invalid order and a venue refusal caught as perps::Error) against a sandbox venue this
#     script starts and stops: plainly and under valgrind, checking its output;
#   - when README.md has a "Use from C++" section: that its snippet is the example's lines;
#   - tests/cpp/test_mixed_exceptions.cpp with tests/cpp/mixed_no_exceptions_part.cpp (built
#     with -fno-exceptions, linked first): one program holding the header in both modes
#     still throws perps::Error where it was built with exceptions;
#   - every C++ test and example: compiled (-fsyntax-only, -Wall -Wextra -Wpedantic -Werror)
#     in C++17 and C++20 by $CXX and by clang++ when it is installed;
#   - below C++17 (-std=c++14, -std=c++11) the header stops at its #error, and nothing else;
#   - tests/cpp/test_no_exceptions.cpp built with -fno-exceptions: results as usual, and a
#     failure reaches the default error handler (message, abort) or an installed one.
# Exits non-zero if any build, run or check fails.
#
# Usage (the caller builds the sandbox venue and the library first, as scripts/test.sh does):
#   make sandbox lib
#   bash tests/cpp/run.sh [PROFILE_DIR]       # default: target/release
#
# Environment: CXX (default g++), VALGRIND (default valgrind), PERPS_NATIVE_LIBS (system
# libraries of the static library, as in tests/c/run.sh), PERPS_README (default README.md).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 2

PROFILE_DIR="${1:-target/release}"
PROFILE_DIR="$(cd "$PROFILE_DIR" 2>/dev/null && pwd)" || {
    echo "run.sh: profile dir '${1:-target/release}' does not exist (build the library first)" >&2
    exit 2
}
CXX="${CXX:-g++}"
VALGRIND="${VALGRIND:-valgrind}"
README="${PERPS_README:-README.md}"
NATIVE_LIBS="${PERPS_NATIVE_LIBS:--lgcc_s -lutil -lrt -lpthread -lm -ldl -lc}"
CXXFLAGS=(-std=c++17 -Wall -Wextra -Werror -pedantic -Iinclude -g)
VALGRIND_ARGS=(--quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect)

for file in libperps.so libperps.a perps-sandbox; do
    if [[ ! -f "$PROFILE_DIR/$file" ]]; then
        echo "run.sh: $PROFILE_DIR/$file not found: build the sandbox and the library (make sandbox lib)" >&2
        exit 2
    fi
done
for tool in "$CXX" "$VALGRIND"; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool not found" >&2; exit 2; }
done

OUT="$(mktemp -d "${TMPDIR:-/tmp}/perps-cpptests.XXXXXX")"
sandbox_pid=""
cleanup() {
    if [[ -n "$sandbox_pid" ]]; then
        kill "$sandbox_pid" 2>/dev/null
        wait "$sandbox_pid" 2>/dev/null
    fi
    rm -rf "$OUT"
}
trap cleanup EXIT

failures=()
fail() {
    echo "--- $1: FAILED${2:+ ($2)}"
    failures+=("$1")
}

build() {
    local label="$1"
    shift
    echo "=== build: $label"
    echo "+ $*"
    "$@" || { fail "build $label"; return 1; }
}

# Run a command, keep its output in $OUT/log; it must exit 0.
run() {
    local label="$1"
    shift
    echo "=== $label"
    "$@" >"$OUT/log" 2>&1
    local rc=$?
    cat "$OUT/log"
    if [[ $rc -ne 0 ]]; then
        fail "$label" "exit status $rc"
        return 1
    fi
}

# The unit test's last line must be "N passed, 0 failed".
run_unit() {
    local label="$1"
    shift
    run "$label" "$@" || return 1
    if ! grep -qE '^[0-9]+ passed, 0 failed$' "$OUT/log"; then
        fail "$label" "no final 'N passed, 0 failed' line"
        return 1
    fi
    echo "--- $label: ok ($(grep -E '^[0-9]+ passed' "$OUT/log" | tail -n 1))"
}

# The example must have placed the order and caught both errors with the right codes.
run_example() {
    local label="$1"
    shift
    run "$label" "$@" || return 1
    local expected
    for expected in 'order placed: {"code":0,' \
        'refused: PERPS_INVALID_ORDER (3): "price" is required' \
        'venue refused: PERPS_HTTP_STATUS (8)' \
        '  HTTP 404, body: {'; do
        if ! grep -qF "$expected" "$OUT/log"; then
            fail "$label" "output lacks: $expected"
            return 1
        fi
    done
    echo "--- $label: ok"
}

# --- build --------------------------------------------------------------------------
build "test_hpp (shared)" "$CXX" "${CXXFLAGS[@]}" tests/cpp/test_hpp.cpp \
    -L"$PROFILE_DIR" -lperps -Wl,-rpath,"$PROFILE_DIR" -o "$OUT/test_hpp" && have_unit=1
# shellcheck disable=SC2086  # NATIVE_LIBS is a list of flags
build "test_hpp (static, ASan+UBSan)" "$CXX" "${CXXFLAGS[@]}" -fsanitize=address,undefined \
    -fno-omit-frame-pointer -fno-sanitize-recover=undefined tests/cpp/test_hpp.cpp \
    "$PROFILE_DIR/libperps.a" $NATIVE_LIBS -o "$OUT/test_hpp_asan" && have_asan=1
build "test_secrets (shared)" "$CXX" "${CXXFLAGS[@]}" tests/cpp/test_secrets.cpp \
    -L"$PROFILE_DIR" -lperps -Wl,-rpath,"$PROFILE_DIR" -o "$OUT/test_secrets" && have_secrets=1
build "test_trading (shared)" "$CXX" "${CXXFLAGS[@]}" tests/cpp/test_trading.cpp \
    -L"$PROFILE_DIR" -lperps -Wl,-rpath,"$PROFILE_DIR" -o "$OUT/test_trading" && have_trading=1
build "test_funding (shared)" "$CXX" "${CXXFLAGS[@]}" tests/cpp/test_funding.cpp \
    -L"$PROFILE_DIR" -lperps -Wl,-rpath,"$PROFILE_DIR" -o "$OUT/test_funding" && have_funding=1
build "signin_order_cpp (shared)" "$CXX" "${CXXFLAGS[@]}" examples-c/signin_order.cpp \
    -L"$PROFILE_DIR" -lperps -Wl,-rpath,"$PROFILE_DIR" -o "$OUT/signin_order_cpp" && have_example=1

build "test_no_exceptions (shared, -fno-exceptions)" "$CXX" "${CXXFLAGS[@]}" -fno-exceptions \
    tests/cpp/test_no_exceptions.cpp -L"$PROFILE_DIR" -lperps -Wl,-rpath,"$PROFILE_DIR" \
    -o "$OUT/test_no_exceptions" && have_noexc=1

# --- below C++17: the header's #error, and no other diagnostic ------------------------
for standard in c++14 c++11; do
    echo "=== -std=$standard stops at the #error"
    echo '#include "perps.hpp"' >"$OUT/old_standard.cpp"
    if "$CXX" -std="$standard" -Iinclude -fsyntax-only "$OUT/old_standard.cpp" >"$OUT/log" 2>&1; then
        fail "-std=$standard" "perps.hpp compiled below C++17"
    elif ! grep -q 'error: #error "perps.hpp needs C++17 or newer' "$OUT/log" ||
        [[ $(grep -c 'error:' "$OUT/log") -ne 1 ]]; then
        cat "$OUT/log"
        fail "-std=$standard" "expected the #error alone"
    else
        echo "--- -std=$standard: ok ($(grep 'error:' "$OUT/log" | sed 's/.*error: //'))"
    fi
done

# --- C++17 and C++20, g++ and clang++ -------------------------------------------------
# The header and every C++ test and example compile without a warning under each compiler
# found (the runs above use $CXX in C++17 only).
for compiler in "$CXX" clang++; do
    if ! command -v "$compiler" >/dev/null; then
        echo "=== $compiler not found: its compile checks skipped"
        continue
    fi
    for standard in c++17 c++20; do
        echo "=== $compiler -std=$standard -Wall -Wextra -Wpedantic -Werror -fsyntax-only"
        for file in tests/cpp/*.cpp examples-c/*.cpp; do
            mode=()
            # (a file that stops at an #error unless built without exceptions)
            grep -qx '#if PERPS_HPP_EXCEPTIONS' "$file" && mode=(-fno-exceptions)
            "$compiler" -std="$standard" -Wall -Wextra -Wpedantic -Werror -Iinclude -fsyntax-only \
                "${mode[@]}" "$file" >"$OUT/log" 2>&1 || {
                head -n 20 "$OUT/log"
                fail "$compiler -std=$standard $file"
            }
        done
    done
done

# --- without exceptions -----------------------------------------------------------------
# mode, expected exit status, expected output line
run_noexc() {
    local mode="$1" status="$2" expected="$3"
    echo "=== test_no_exceptions $mode"
    "$OUT/test_no_exceptions" "$mode" >"$OUT/log" 2>&1
    local rc=$?
    cat "$OUT/log"
    if [[ $rc -ne $status ]]; then
        fail "test_no_exceptions $mode" "exit status $rc, expected $status"
    elif ! grep -qF "$expected" "$OUT/log"; then
        fail "test_no_exceptions $mode" "output lacks: $expected"
    else
        echo "--- test_no_exceptions $mode: ok"
    fi
}
if [[ -n "${have_noexc:-}" ]]; then
    run_noexc ok 0 'serialized {"symbol":"BTC-USD"'
    run_noexc default 134 'libperps: PERPS_INVALID_ORDER (3): '  # SIGABRT: 128 + 6
    run_noexc handler 42 'handled: PERPS_INVALID_ORDER (3): '
    run_noexc nul 42 'handled: PERPS_INVALID_ARGUMENT (1): order_json contains a NUL byte'
fi

# One program, two object files: the part built with -fno-exceptions linked first.
build "mixed_no_exceptions_part (-fno-exceptions)" "$CXX" "${CXXFLAGS[@]}" -fno-exceptions -c \
    tests/cpp/mixed_no_exceptions_part.cpp -o "$OUT/mixed_no_exceptions_part.o" &&
    build "test_mixed_exceptions (shared)" "$CXX" "${CXXFLAGS[@]}" "$OUT/mixed_no_exceptions_part.o" \
        tests/cpp/test_mixed_exceptions.cpp -L"$PROFILE_DIR" -lperps -Wl,-rpath,"$PROFILE_DIR" \
        -o "$OUT/test_mixed_exceptions" && have_mixed=1
[[ -n "${have_mixed:-}" ]] && run_unit "test_mixed_exceptions (shared, plain)" "$OUT/test_mixed_exceptions"

build "test_stream (shared)" "$CXX" "${CXXFLAGS[@]}" tests/cpp/test_stream.cpp \
    -L"$PROFILE_DIR" -lperps -Wl,-rpath,"$PROFILE_DIR" -o "$OUT/test_stream" && have_stream=1
# shellcheck disable=SC2086
build "test_stream (static, ASan+UBSan)" "$CXX" "${CXXFLAGS[@]}" -fsanitize=address,undefined \
    -fno-omit-frame-pointer -fno-sanitize-recover=undefined tests/cpp/test_stream.cpp \
    "$PROFILE_DIR/libperps.a" $NATIVE_LIBS -o "$OUT/test_stream_asan" && have_stream_asan=1

# --- perps::Stream against the WebSocket test venue ----------------------------------
if [[ -n "${have_stream:-}${have_stream_asan:-}" ]]; then
    if cargo build --quiet --release --example ws_test_server; then
        coproc WS_SERVER { exec "$ROOT/target/release/examples/ws_test_server" 600; }
        read -r PERPS_TEST_WS_URL <&"${WS_SERVER[0]}"
        export PERPS_TEST_WS_URL
        [[ -n "${have_stream:-}" ]] && run_unit "test_stream (shared, plain)" "$OUT/test_stream"
        [[ -n "${have_stream:-}" ]] && run_unit "test_stream (shared, valgrind)" "$VALGRIND" "${VALGRIND_ARGS[@]}" "$OUT/test_stream"
        [[ -n "${have_stream_asan:-}" ]] && run_unit "test_stream (static, ASan+UBSan)" \
            env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$OUT/test_stream_asan"
        kill "$WS_SERVER_PID" 2>/dev/null
        wait "$WS_SERVER_PID" 2>/dev/null
    else
        fail "build ws_test_server"
    fi
fi

# --- the offline unit test ------------------------------------------------------------
if [[ -n "${have_unit:-}" ]]; then
    run_unit "test_hpp (shared, plain)" "$OUT/test_hpp"
    run_unit "test_hpp (shared, valgrind)" "$VALGRIND" "${VALGRIND_ARGS[@]}" "$OUT/test_hpp"
fi
# Its own operator new/delete look into every freed block for a secret: run plainly (ASan
# and valgrind bring their own allocators).
[[ -n "${have_secrets:-}" ]] && run_unit "test_secrets (shared, plain)" "$OUT/test_secrets"
if [[ -n "${have_asan:-}" ]]; then
    run_unit "test_hpp (static, ASan+UBSan)" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$OUT/test_hpp_asan"
fi

# --- the trading test and the example against the sandbox -----------------------------
if [[ -n "${have_example:-}" || -n "${have_trading:-}" || -n "${have_funding:-}" ]]; then
    "$PROFILE_DIR/perps-sandbox" --port 0 >"$OUT/urls" 2>"$OUT/sandbox.err" &
    sandbox_pid=$!
    for _ in $(seq 1 200); do
        [[ -s "$OUT/urls" ]] && break
        sleep 0.05
    done
    base_url=$(sed -n 's/.*"base_url":"\([^"]*\)".*/\1/p' "$OUT/urls")
    perps_url=$(sed -n 's/.*"perps_url":"\([^"]*\)".*/\1/p' "$OUT/urls")
    admin_url=$(sed -n 's/.*"admin_url":"\([^"]*\)".*/\1/p' "$OUT/urls")
    if [[ -z "$base_url" || -z "$perps_url" || -z "$admin_url" ]]; then
        cat "$OUT/sandbox.err"
        fail "sandbox start"
    else
        echo "sandbox venue: base_url=$base_url perps_url=$perps_url admin_url=$admin_url"
        if [[ -n "${have_trading:-}" ]]; then
            run_unit "test_trading (shared, plain)" "$OUT/test_trading" "$base_url" "$perps_url" "$admin_url"
            run_unit "test_trading (shared, valgrind)" "$VALGRIND" "${VALGRIND_ARGS[@]}" \
                "$OUT/test_trading" "$base_url" "$perps_url" "$admin_url"
        fi
        if [[ -n "${have_funding:-}" ]]; then
            run_unit "test_funding (shared, plain)" "$OUT/test_funding" "$base_url" "$perps_url" "$admin_url"
            run_unit "test_funding (shared, valgrind)" "$VALGRIND" "${VALGRIND_ARGS[@]}" \
                "$OUT/test_funding" "$base_url" "$perps_url" "$admin_url"
        fi
        # perps::Stream against the sandbox: an order over the order stream, its account event.
        [[ -n "${have_stream:-}" ]] && run_unit "test_stream sandbox (shared, valgrind)" \
            "$VALGRIND" "${VALGRIND_ARGS[@]}" "$OUT/test_stream" "$base_url" "$perps_url"
        [[ -n "${have_stream_asan:-}" ]] && run_unit "test_stream sandbox (static, ASan+UBSan)" \
            env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$OUT/test_stream_asan" "$base_url" "$perps_url"
    fi
    if [[ -n "${have_example:-}" && -n "$base_url" && -n "$perps_url" ]]; then
        run_example "signin_order_cpp bsc (plain)" "$OUT/signin_order_cpp" "$base_url" "$perps_url" bsc
        run_example "signin_order_cpp bsc (valgrind)" \
            "$VALGRIND" "${VALGRIND_ARGS[@]}" "$OUT/signin_order_cpp" "$base_url" "$perps_url" bsc
        run_example "signin_order_cpp solana (valgrind)" \
            "$VALGRIND" "${VALGRIND_ARGS[@]}" "$OUT/signin_order_cpp" "$base_url" "$perps_url" solana
    fi
fi

# --- the README snippet is the example's code ---------------------------------------
# The lines between the example's "README" markers, unindented, must be the ```cpp block
# of README.md's "Use from C++" section.
if grep -q '^## Use from C++' "$README"; then
    sed -n '/--- README "Use from C++"/,/--- end of the README snippet ---/p' examples-c/signin_order.cpp |
        sed '1d;$d' | sed 's/^        //' >"$OUT/snippet.example"
    awk '/^## Use from C\+\+/ { section = 1; next }
         section && /^## / { exit }
         section && /^```cpp/ { block = 1; next }
         block && /^```/ { exit }
         block { print }' "$README" >"$OUT/snippet.readme"
    echo "=== $README snippet == examples-c/signin_order.cpp"
    if diff -u "$OUT/snippet.readme" "$OUT/snippet.example"; then
        echo "--- README snippet: ok"
    else
        fail "README snippet" "$README's C++ snippet differs from examples-c/signin_order.cpp"
    fi
else
    echo "($README has no 'Use from C++' section yet: snippet check skipped)"
fi

echo
if [[ ${#failures[@]} -ne 0 ]]; then
    echo "C++ tests FAILED: ${failures[*]}"
    exit 1
fi
echo "C++ tests: all runs passed"
