#!/usr/bin/env bash
# The end-to-end demo: build the library and the sandbox venue, start the sandbox on
# loopback, run the C example against it (bsc, then solana), and stop the sandbox.
# Needs only the Rust toolchain and a C compiler.
#
#   bash examples-c/demo.sh              # from the repository root
#   RUNNER="valgrind --leak-check=full --error-exitcode=1" bash examples-c/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CC=${CC:-cc}

# The sandbox venue (its own crate) and the C library.
make --no-print-directory sandbox lib   # lib: libperps.so and libperps.a (see the Makefile)
mkdir -p target/examples
"$CC" -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude examples-c/signin_order.c \
  -Ltarget/release -lperps -Wl,-rpath,"$PWD/target/release" -o target/examples/signin_order

urls=$(mktemp)
target/release/perps-sandbox --port 0 >"$urls" &
sandbox=$!
trap 'kill "$sandbox" 2>/dev/null; wait "$sandbox" 2>/dev/null; rm -f "$urls"' EXIT
for _ in $(seq 1 100); do
  [ -s "$urls" ] && break
  sleep 0.05
done
base_url=$(sed -n 's/.*"base_url":"\([^"]*\)".*/\1/p' "$urls")
perps_url=$(sed -n 's/.*"perps_url":"\([^"]*\)".*/\1/p' "$urls")
[ -n "$base_url" ] || { echo "the sandbox did not start" >&2; exit 1; }
echo "sandbox venue: base_url=$base_url perps_url=$perps_url"

for chain in bsc solana; do
  echo "--- $chain ---"
  ${RUNNER:-} target/examples/signin_order "$base_url" "$perps_url" "$chain"
done
