#!/usr/bin/env bash
# The trading-loop demo: build the library and the sandbox venue, start the sandbox (its mark
# still unless told), then run the C examples against it:
#   1. order_timeout: an order times out (a one-shot slow-venue fault), is found again by its
#      cl_ord_id with perps_query_order, and is not sent twice;
#   2. market_maker: first refusing to start on a symbol the venue does not list, and on one
#      whose rules its quotes do not fit; then, on an account where "another engine" (rest_call)
#      has an order resting, trading on the venue's WebSockets (book and fills from the market
#      stream, orders on the order stream), quoting both sides around the book's mid on the
#      tick query_symbol_info gives, with a position limit of 0.01 (one quote), while this
#      script moves the mark (the sandbox's admin "mark" endpoint) through the bid (the bid
#      fills: at the limit, no bid is quoted), further down (where a bid would fill again),
#      and through the ask (back to flat: both sides quoted), then stops the sandbox's book
#      pushes (the "ws/timers" endpoint: the maker pulls its quotes from the stale book) and
#      starts them again (it quotes again from the fresh one). It re-quotes, reconciles by
#      REST, and at exit cancels every order it placed.
#      Checked at the end: the other engine's order is still open, the sandbox's position
#      never went beyond the limit, nothing of the maker's is left open, and the fills the
#      maker counted are the sandbox's.
# With --faults, the maker then meets the order stream's faults (the sandbox's admin
# "faults" endpoint), one stage each, moving the mark 15.00 at a time so that both sides
# re-quote: two outcomes sent twice (ignored, nothing counted twice), an order placed whose
# outcome says 503 (looked up by its cl_ord_id, found resting, cancelled), an order never
# placed whose outcome says 503 (taken as never placed after a 1 s not-found grace), an order
# acked in other words than "accepted" and then refused (the refusal a repeat that contradicts
# the ack taken for a success: looked up, taken as never placed), and two
# cancels left unanswered by a lost connection (the order stream stalled, then dropped: both
# orders looked up, found canceled by the resync), the market stream dropped (the quotes
# pulled by REST, quoted again once it is back), and an exit with both quotes' cancels
# unanswered (the order stream stalled), their REST cancels by cl_ord_id failing (503) and the
# first list of open orders failing: both looked up, found resting and cancelled, the list
# read again, and only then "0 order(s) left open".
# Needs only the Rust toolchain and a C compiler (the admin calls use bash's /dev/tcp).
#
#   bash examples-c/market_maker.sh              # from the repository root
#   RUNNER="valgrind --leak-check=full --error-exitcode=1" bash examples-c/market_maker.sh
#   bash examples-c/market_maker.sh --faults
set -euo pipefail
faults=0
case "${1:-}" in
  --faults) faults=1 ;;
  "") ;;
  *) echo "usage: $0 [--faults]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
CC=${CC:-cc}

make --no-print-directory sandbox lib
mkdir -p target/examples
for example in order_timeout market_maker rest_call; do
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
# GET an admin endpoint (/_sandbox/PATH): the whole body.
admin_get() {
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET /_sandbox/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$1" >&3
  sed '1,/^\r$/d' <&3
  exec 3<&-
}

echo
echo "=== order_timeout: the venue answers the next order after 1.5 s; the client waits 0.5 s"
admin faults '{"per_endpoint":{"new_order":{"slow_ms":1500,"times":1}}}' >/dev/null
${RUNNER:-} target/examples/order_timeout "$base_url" "$perps_url"

out=$(mktemp)
trap 'kill "$sandbox" 2>/dev/null; wait "$sandbox" 2>/dev/null; rm -f "$urls" "$out"' EXIT
echo
echo "=== market_maker refuses to start without rules its quotes fit (query_symbol_info)"
# Run the maker (under RUNNER) on MM_SYMBOL $1; it must refuse before signing in (exit status
# 2, which RUNNER's own --error-exitcode=1 cannot be mistaken for), saying $2.
refused() {
  local status=0
  MM_SYMBOL=$1 ${RUNNER:-} target/examples/market_maker "$base_url" "$perps_url" 1 >"$out" 2>&1 || status=$?
  cat "$out"
  if [ "$status" != 2 ] || ! grep -q -- "$2" "$out" || grep -q "signed in" "$out"; then
    echo "market_maker.sh: MM_SYMBOL=$1: expected a refusal (exit status 2) saying '$2', got status $status" >&2
    exit 1
  fi
}
refused DOGE-USD 'DOGE-USD: no rules from the venue.*invalid symbol DOGE-USD.*: not starting'
refused XAG-USD 'XAG-USD: the quote size 0.01 does not fit its rules (order qty 0.1\.\.10000, lot 0.01): not starting'

echo
echo "=== another engine's order on the same account (cl_ord_id other-engine-1), far from the mark"
other='{"cl_ord_id":"other-engine-1"}'
${RUNNER:-} target/examples/rest_call "$base_url" "$perps_url" new_order \
  '{"symbol":"BTC-USD","side":"buy","order_type":"limit","qty":"0.01","price":"60000.00","time_in_force":"gtc","reduce_only":false,"cl_ord_id":"other-engine-1"}'

echo
echo "=== market_maker: quotes on the WebSockets around the book's mid, within a position of 0.01;"
echo "    this script moves the mark through the bid, further down, through the ask, then stops the book"
admin mark '{"symbol":"BTC-USD","price":"65000.00"}' >/dev/null
: >"$out"
# 100 s at most: a bound for a stuck run, never reached (the script stops it with SIGTERM).
# With --faults, an order of unknown fate not found for 1 s (not 10) is taken as never placed.
MM_MAX_POSITION=0.01 ${RUNNER:-} target/examples/market_maker "$base_url" "$perps_url" 100 $([ "$faults" = 1 ] && echo 1000) >>"$out" 2>&1 &
maker=$!
# A check that fails leaves at once: the maker goes with the sandbox.
trap 'kill "$maker" "$sandbox" 2>/dev/null; wait "$maker" "$sandbox" 2>/dev/null; rm -f "$urls" "$out"' EXIT
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
agreed='reconcile (periodic): venue lists 2 open order(s) of ours, we track 2; position'
one='reconcile (periodic): venue lists 1 open order(s) of ours, we track 1; position'
wait_for "  live "
wait_for "$agreed 0[.0]* BTC, as streamed; 1 order(s) not ours left alone"
say "mark BTC-USD -> 64900.00 (through the bid: long 0.01, the limit)"
admin mark '{"symbol":"BTC-USD","price":"64900.00"}' >/dev/null
wait_for "FILLED   buy" "$from"
wait_for "limit    position 0.0100 BTC: bid not quoted" "$from"
wait_for "placed   ask 64925.00" "$from"
wait_for "$one 0.0100 BTC, as streamed" "$from"
say "mark BTC-USD -> 64800.00 (a bid quoted from the last book would fill here)"
admin mark '{"symbol":"BTC-USD","price":"64800.00"}' >/dev/null
wait_for "placed   ask 64825.00" "$from"
wait_for "$one 0.0100 BTC, as streamed" "$from"
say "mark BTC-USD -> 65100.00 (through the ask: flat again)"
admin mark '{"symbol":"BTC-USD","price":"65100.00"}' >/dev/null
wait_for "FILLED   sell" "$from"
wait_for "limit    position 0.0000 BTC: bid quoted again" "$from"
wait_for "  live " "$from"
wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
say "ws/timers depth_book_interval_ms 0 (no more book pushes: the book goes stale)"
admin ws/timers '{"depth_book_interval_ms":0}' >/dev/null
wait_for "book stale: no depth_book for" "$from"
wait_for "canceled bid .*: accepted, then success" "$from"
wait_for "canceled ask .*: accepted, then success" "$from"
wait_for "reconcile (periodic): venue lists 0 open order(s) of ours, we track 0;" "$from"
say "ws/timers depth_book_interval_ms 250 (the book is pushed again)"
admin ws/timers '{"depth_book_interval_ms":250}' >/dev/null
wait_for "book fresh again: quoting" "$from"
wait_for "  live " "$from"
wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
if [ "$faults" = 1 ]; then
  # Each stage: set a one-shot fault on the next order:new, move the mark 15.00 (more than the
  # 10.00 re-quote move, less than the 25.00 half spread: no fill), wait for the maker to deal
  # with it and for both quotes to rest again, agreed with REST.
  fault_stage() {
    say "faults $1; mark BTC-USD -> $2 (both sides re-quote)"
    admin faults "$1" >/dev/null
    admin mark "{\"symbol\":\"BTC-USD\",\"price\":\"$2\"}" >/dev/null
  }
  # The sandbox's id of the maker's connection to ENDPOINT (ws-api or ws-stream).
  connection_id() {
    admin_get ws/connections | grep -o "\"endpoint\":\"$1\"[^}]*\"id\":[0-9]*" | sed 's/.*"id"://'
  }
  # Stall the order stream (the sandbox neither reads nor writes it; its id left in api_id),
  # move the mark to $1 so that both quotes are cancelled over it, and wait for both cancels.
  stall_orders_and_move() {
    api_id=$(connection_id ws-api)
    say "ws/stall the order stream (connection $api_id); mark BTC-USD -> $1${2:-}"
    admin ws/stall "{\"id\":$api_id}" >/dev/null
    admin mark "{\"symbol\":\"BTC-USD\",\"price\":\"$1\"}" >/dev/null
    wait_for "cancel   bid .*: mid moved" "$from"
    wait_for "cancel   ask .*: mid moved" "$from"
  }
  fault_stage '{"ws_repeat_outcome":true,"times":2}' 65115.00
  wait_for "repeated for request" "$from"
  wait_for "  live " "$from"
  wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
  fault_stage '{"ws_outcome_code":503,"times":1}' 65130.00
  wait_for 'the venue says open: cancelled -> {"code":0' "$from"
  wait_for "  live " "$from"
  wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
  fault_stage '{"ws_outcome_code":503,"ws_not_placed":true,"times":1}' 65145.00
  wait_for "not at the venue after 1000 ms: never placed" "$from"
  wait_for "  live " "$from"
  wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
  # An ack worded otherwise than "accepted" (the library takes it for the outcome, a success),
  # then the real outcome, a refusal: a repeat that contradicts the first copy.
  fault_stage '{"ws_ack_word":"received","ws_outcome_code":400,"ws_not_placed":true,"times":1}' 65160.00
  wait_for "contradicting the first" "$from"
  wait_for "not at the venue after 1000 ms: never placed" "$from"
  wait_for "  live " "$from"
  wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
  # Both cancels refused (a 429 their outcomes carry; the sandbox does not cancel): the quotes
  # may still rest, priced from the old book, so the maker looks each up and cancels it by REST.
  fault_stage '{"per_endpoint":{"order:cancel":{"ws_outcome_code":429,"ws_not_placed":true,"times":2}}}' 65175.00
  wait_for "its cancel was refused" "$from"
  wait_for "  live " "$from"
  wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
  # An order acked whose outcome never comes, the connection alive: the library's deadline
  # (stream_request_timeout_ms, 5 s here) reports it by a request_timeout event, and the
  # maker looks the order up by REST rather than wait on.
  fault_stage '{"ws_no_outcome":true,"times":1}' 65190.00
  wait_for "no outcome for order:new .* within 5000 ms" "$from"
  wait_for "  live " "$from"
  wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
  # A lost connection with requests unanswered: the order stream stalled, both quotes'
  # cancels sent over it, then the connection dropped.
  stall_orders_and_move 65205.00 "; then ws/drop it"
  admin ws/drop "{\"id\":$api_id}" >/dev/null
  wait_for "unanswered when the connection was lost" "$from"
  wait_for "order stream: reconnected" "$from"
  wait_for "  live " "$from"
  wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
  # The market stream lost: blind, the maker pulls its quotes by REST; once the stream is
  # back it reconciles and quotes again from the next book.
  market_id=$(connection_id ws-stream)
  say "ws/drop the market stream (connection $market_id)"
  admin ws/drop "{\"id\":$market_id}" >/dev/null
  wait_for "market stream: disconnected" "$from"
  wait_for "cancel   our orders (disconnected): 2 by id" "$from"
  wait_for "market stream: reconnected" "$from"
  wait_for "  live " "$from"
  wait_for "$agreed 0[.0]* BTC, as streamed" "$from"
  # An exit with both quotes' fate open: their cancels unanswered (the order stream stalled),
  # then (set while the maker waits 2 s for those outcomes) the first REST cancel of each
  # failing and the first list of open orders failing (503). The maker must look both orders
  # up, find them resting, cancel them, read the list again, and only then report.
  stall_orders_and_move 65220.00
fi
say "SIGTERM (the maker cancels every order it placed and exits)"
kill -TERM "$maker"
if [ "$faults" = 1 ]; then
  wait_for "exit (signal): stop quoting, wait for the outcomes in flight" "$from"
  say "faults: REST cancel_order answers 503 twice, query_open_orders once"
  admin faults '{"per_endpoint":{"cancel_order":{"status":503,"times":2},"query_open_orders":{"status":503,"times":1}}}' >/dev/null
fi
status=0
wait "$maker" || status=$?
cat "$out"

# The checks, from the maker's whole output and the sandbox's own record.
check() {
  echo "market_maker.sh: $1" >&2
  status=1
}
count() { grep -c -- "$1" "$out" || true; }
# The other engine's order: the maker never cancelled it (then this script does).
other_now=$(${RUNNER:-} target/examples/rest_call "$base_url" "$perps_url" query_order "$other" 2>&1 || true)
case "$other_now" in
  *'"status":"open"'*) echo "the other engine's order is still open: the maker left it alone" ;;
  *) check "the other engine's order is not open: $other_now" ;;
esac
${RUNNER:-} target/examples/rest_call "$base_url" "$perps_url" cancel_order "$other" >/dev/null
# The position limit, as the sandbox's journal of position changes shows it: never beyond 0.01.
positions=$(admin_get 'events?since=0' | { grep -o '"channel":"position","data":{[^}]*}' || true; } | sed -n 's/.*"qty":"-\{0,1\}\([0-9.]*\)".*/\1/p')
largest=$(printf '%s\n' $positions | sort -g | tail -n 1)
awk -v q="${largest:-0}" 'BEGIN { exit !(q <= 0.01) }' || check "the sandbox's position reached $largest, beyond the limit 0.01"
[ "$(count 'limit    position 0.0100 BTC: bid not quoted')" -ge 1 ] || check "the bid was never held back at the limit"
# The stale book: both quotes pulled once the pushes stopped.
[ "$(count 'cancel   bid .*: book stale')" -ge 1 ] && [ "$(count 'cancel   ask .*: book stale')" -ge 1 ] ||
  check "the quotes were not cancelled when the book went stale"
# The fills the maker counted and the exit's own check, against the sandbox's trade events
# (one per fill of a 0.01 quote) and the exit reconcile, which reads the venue's position.
venue_fills=$(admin_get 'events?since=0' | { grep -o '"channel":"trade"' || true; } | wc -l)
grep -q "^done: $venue_fills fill(s); 0 order(s) left open" "$out" ||
  check "the sandbox has $venue_fills fill(s); the maker said: $(grep '^done:' "$out")"
grep -q "reconcile (exit): venue lists 0 open order(s) of ours, we track 0; position 0[.0]* BTC, as streamed; 1 order(s) not ours left alone" "$out" ||
  check "at exit the venue's position is not the streamed one, or orders of ours are open: $(grep 'reconcile (exit)' "$out")"
if [ "$faults" = 1 ]; then
  [ "$(count 'not an outcome, ignored')" = 2 ] || check "expected 2 repeated outcomes ignored, saw $(count 'not an outcome, ignored')"
  [ "$(count '(code 503): outcome unknown')" = 2 ] || check "expected 2 outcomes unknown, saw $(count '(code 503): outcome unknown')"
  [ "$(count 'the venue says open: cancelled -> {"code":0')" = 5 ] || check "expected the order placed behind a 503, both quotes whose cancel was refused and both whose exit cancel failed found resting and cancelled by REST, saw $(count 'the venue says open: cancelled -> {"code":0')"
  [ "$(count ' (exit) by cl_ord_id -> .*HTTP 503')" = 2 ] && [ "$(count '(its cancel failed)')" = 2 ] ||
    check "expected both exit cancels by cl_ord_id to fail and make their orders' fate unknown"
  [ "$(count 'query_open_orders failed: .*HTTP 503')" = 1 ] || check "expected the exit's first list of open orders to fail once, and to be read again"
  [ "$(count 'its cancel was refused')" = 2 ] || check "expected both refused cancels to make their orders' fate unknown, saw $(count 'its cancel was refused')"
  [ "$(count 'never placed')" = 2 ] || check "expected the two orders never placed (503, contradicted) taken as never placed, saw $(count 'never placed')"
  [ "$(count 'contradicting the first')" = 1 ] || check "expected 1 contradicting repeat, saw $(count 'contradicting the first')"
  [ "$(count 'unanswered when the connection was lost')" = 2 ] || check "expected both cancels left unanswered by the drop to make their orders' fate unknown"
  [ "$(count 'no outcome for order:new .* within 5000 ms')" = 1 ] || check "expected one order reported by the library's request deadline"
  # Both orders of the unanswered cancels, and the order whose outcome never came (cancelled
  # by the resync it started before its look-up): each found canceled, by its look-up or by
  # the account stream's event when that came first (either may).
  unknown_ids=$(sed -n 's/^  unknown  [a-z]* \([^ ]*\) (\(unanswered when the connection was lost\|no outcome in time\)).*/\1/p' "$out")
  [ "$(printf '%s\n' $unknown_ids | wc -l)" = 3 ] || check "expected 3 orders of unknown fate (unanswered cancels, no outcome), saw: $unknown_ids"
  for id in $unknown_ids; do
    grep -Eq "^  unknown  [a-z]+ $id: the venue says canceled\$|^  canceled [a-z]+ $id \(account stream\)\$" "$out" ||
      check "expected $id (unanswered cancel or no outcome) looked up, or reported by the account stream, and found canceled"
  done
  [ "$(count 'cancel   our orders (disconnected): 2 by id')" -ge 1 ] || check "expected the quotes pulled by REST when the market stream was lost"
  # A repeat taken for an outcome would show as a second "placed" for one order, or as a reply
  # to no request.
  twice=$(sed -n 's/^  placed   [a-z]* [0-9.]* \([^:]*\):.*/\1/p' "$out" | sort | uniq -d)
  [ -z "$twice" ] || check "orders placed twice: $twice"
  [ "$(count 'reply    to ')" = 0 ] || check "replies matched to no request: $(grep -- 'reply    to ' "$out")"
fi
[ "$status" = 0 ] && echo "market_maker.sh${1:+ $1}: every check passed ($venue_fills fills, as the sandbox counts; position within 0.01)"
exit "$status"
