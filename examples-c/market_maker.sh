#!/usr/bin/env bash
# The trading-loop demo: build the library and the sandbox venue, start the sandbox (its mark
# still unless told), then run two C examples against it:
#   1. order_timeout: an order times out (a one-shot slow-venue fault), is found again by its
#      cl_ord_id with perps_query_order, and is not sent twice;
#   2. market_maker: trades on the venue's WebSockets (book and fills from the market stream,
#      orders on the order stream) and quotes both sides around the book's mid while this
#      script moves the mark through the bid and then through the ask (the sandbox's admin
#      "mark" endpoint), so both quotes fill; it re-quotes, reconciles by REST, and cancels
#      everything on exit.
# Needs only the Rust toolchain and a C compiler (the admin calls use bash's /dev/tcp).
#
#   bash examples-c/market_maker.sh              # from the repository root
#   RUNNER="valgrind --leak-check=full --error-exitcode=1" bash examples-c/market_maker.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CC=${CC:-cc}

make --no-print-directory sandbox lib
mkdir -p target/examples
for example in order_timeout market_maker; do
  "$CC" -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude "examples-c/$example.c" \
    -Ltarget/release -lperps -Wl,-rpath,"$PWD/target/release" -o "target/examples/$example"
done

urls=$(mktemp)
target/release/perps-sandbox --port 0 --walk-ms 0 >"$urls" &
sandbox=$!
trap 'kill "$sandbox" 2>/dev/null; wait "$sandbox" 2>/dev/null; rm -f "$urls"' EXIT
for _ in $(seq 1 100); do
  [ -s "$urls" ] && break
  sleep 0.05
done
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" "$urls"; }
base_url=$(field base_url)
perps_url=$(field perps_url)
admin_url=$(field admin_url)
[ -n "$base_url" ] || { echo "the sandbox did not start" >&2; exit 1; }
port=${admin_url#http://127.0.0.1:}
port=${port%%/*}
echo "sandbox venue: base_url=$base_url perps_url=$perps_url"

# POST a JSON body to one of the sandbox's admin endpoints (/_sandbox/NAME).
admin() {
  local name=$1 body=$2
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'POST /_sandbox/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
    "$name" "${#body}" "$body" >&3
  sed -n '$p' <&3 | cut -c1-120
  exec 3<&-
}

echo
echo "=== order_timeout: the venue answers the next order after 1.5 s; the client waits 0.5 s"
admin faults '{"per_endpoint":{"new_order":{"slow_ms":1500,"times":1}}}' >/dev/null
${RUNNER:-} target/examples/order_timeout "$base_url" "$perps_url"

echo
echo "=== market_maker: quotes on the WebSockets around the book's mid; this script moves the mark"
echo "    through the bid, waits for the fill and the re-quote, moves it through the ask, then stops it"
admin mark '{"symbol":"BTC-USD","price":"65000.00"}' >/dev/null
out=$(mktemp)
trap 'kill "$sandbox" 2>/dev/null; wait "$sandbox" 2>/dev/null; rm -f "$urls" "$out"' EXIT
# 100 s at most: a bound for a stuck run, never reached (the script stops it with SIGTERM).
${RUNNER:-} target/examples/market_maker "$base_url" "$perps_url" 100 >>"$out" 2>&1 &
maker=$!
# Wait until the maker's output, from line FROM on (default 1), has a line matching PATTERN
# (a grep regular expression).
wait_for() {
  for _ in $(seq 1 1200); do
    grep -q -- "$1" < <(tail -n +"${2:-1}" "$out") && return 0 # (a pipe would fail on tail's SIGPIPE)
    kill -0 "$maker" 2>/dev/null || break
    sleep 0.05
  done
  cat "$out"
  echo "market_maker.sh: no '$1' in the maker's output${2:+ from line $2}" >&2
  exit 1
}
# Print a line into the maker's output; the line number after it, for wait_for.
say() {
  echo "--- script: $1" >>"$out"
  from=$(($(wc -l <"$out") + 1))
}
# Each stage waits for: both quotes resting ("  live ", printed once each one's outcome came
# back over the order stream), then a periodic REST reconcile that agrees with the streams
# (the venue lists our two quotes, its position is the one the position channel gave).
agreed='reconcile (periodic): venue lists 2 open order(s), we track 2; position'
wait_for "  live "
wait_for "$agreed 0[.0]* BTC, as streamed"
say "mark BTC-USD -> 64900.00 (through the bid)"
admin mark '{"symbol":"BTC-USD","price":"64900.00"}' >/dev/null
wait_for "FILLED   buy" "$from"
wait_for "  live " "$from"
wait_for "$agreed 0.0100 BTC, as streamed" "$from"
say "mark BTC-USD -> 65100.00 (through the ask)"
admin mark '{"symbol":"BTC-USD","price":"65100.00"}' >/dev/null
wait_for "FILLED   sell" "$from"
wait_for "  live " "$from"
wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
say "SIGTERM (the maker cancels everything and exits)"
kill -TERM "$maker"
status=0
wait "$maker" || status=$?
cat "$out"
exit "$status"
