#!/usr/bin/env bash
# Instructions per operation of the streams' hot paths, counted by callgrind on the calling
# (main) thread only: a depth_book push decoded and sorted, without and with a session (next
# to a bare serde_json::Value parse of the same frame), and order entry through the C ABI and without it, next to its
# floor (the body signature + a plain tungstenite write of the same frame). Each mode runs
# twice under valgrind, N and BASE operations after the same setup; (I(N) - I(BASE)) /
# (N - BASE) is the cost of one operation, setup and one-time initialisation cancelled out.
#
# usage: bash bench/callgrind_streams.sh [N]      (default 2000; BASE is 20)
# Counts are user-space only: the kernel's side of a write is not counted, so the wall-clock
# and CPU-time figures of benches/streams.rs remain the reference for the targets.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}
BASE=20
if [ "$N" -le "$BASE" ]; then
  echo "N must be larger than $BASE" >&2
  exit 2
fi
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

exe=$(cargo bench --bench stream_callgrind_driver --no-run --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "stream_callgrind_driver" and m.get("executable"):
        print(m["executable"])
')
[ -x "$exe" ] || { echo "stream_callgrind_driver was not built" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Instructions of the main thread in one run (file -01 of --separate-threads).
count() {
  local log="$work/$1-$2.log"
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/$1-$2.out" \
    "$exe" "$1" "$2" 2>"$log" >/dev/null \
    || { cat "$log" >&2; echo "callgrind run '$1 $2' failed" >&2; exit 1; }
  sed -n 's/^totals: *\([0-9][0-9]*\).*/\1/p' "$work/$1-$2.out-01"
}

per_op() {
  local big small
  big=$(count "$1" "$N")
  small=$(count "$1" "$BASE")
  echo $(( (big - small) / (N - BASE) ))
}

ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }

value=$(per_op depth_value)
depth=$(per_op depth)
session=$(per_op depth_session)
floor=$(per_op order_floor)
order=$(per_op order)
ffi=$(per_op order_ffi)
echo "instructions per operation, calling thread (callgrind; $N minus $BASE, same setup):"
printf '  %-52s %9d\n' "serde_json::Value parse of the depth_book push" "$value"
printf '  %-52s %9d   ratio %s\n' "depth_book push decoded + sorted (PushDecoder)" "$depth" "$(ratio "$depth" "$value")"
printf '  %-52s %9d   ratio %s\n' "the same with a session (redacted of its token)" "$session" "$(ratio "$session" "$value")"
printf '  %-52s %9d\n' "floor: signature + plain tungstenite write" "$floor"
printf '  %-52s %9d   ratio %s\n' "Stream::new_order" "$order" "$(ratio "$order" "$floor")"
printf '  %-52s %9d   ratio %s\n' "perps_stream_new_order + perps_string_free" "$ffi" "$(ratio "$ffi" "$floor")"
