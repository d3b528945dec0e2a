#!/usr/bin/env bash
# Instructions per call, counted by callgrind, of the floor (ed25519-dalek's standard
# SigningKey::sign of the same v1,{id},{ts},{body} message), the library's signer with the key
# expanded once (no ABI), perps_sign_body_into and perps_sign_body + perps_string_free
# through the C ABI. Each variant runs twice under
# valgrind, N calls and BASE calls after the same setup; (I(N) - I(BASE)) / (N - BASE) is
# the cost of one call, setup and one-time initialisation cancelled out.
#
# usage: bash bench/callgrind.sh [N]      (default 1000; BASE is 10)
# Instruction counts are user-space only: the kernel's side of a system call (getrandom)
# is not counted, so wall-clock benchmarks (benches/signing.rs) remain the reference.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
BASE=10
if [ "$N" -le "$BASE" ]; then
  echo "N must be larger than $BASE" >&2
  exit 2
fi
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

# Build the driver (a [[bench]] with harness = false) and find its executable.
exe=$(cargo bench --bench callgrind_driver --no-run --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "callgrind_driver" and m.get("executable"):
        print(m["executable"])
')
[ -x "$exe" ] || { echo "callgrind_driver was not built" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Total instructions of one run: callgrind's "Collected" line.
count() {
  local log="$work/$1-$2.log"
  valgrind --tool=callgrind --callgrind-out-file="$work/$1-$2.out" "$exe" "$1" "$2" 2>"$log" >/dev/null \
    || { cat "$log" >&2; echo "callgrind run '$1 $2' failed" >&2; exit 1; }
  sed -n 's/.*Collected : \([0-9][0-9]*\).*/\1/p' "$log"
}

per_call() {
  local big small
  big=$(count "$1" "$N")
  small=$(count "$1" "$BASE")
  echo $(( (big - small) / (N - BASE) ))
}

floor=$(per_call floor)
core=$(per_call core)
into=$(per_call into)
json=$(per_call json)
echo "instructions per call (callgrind; $N calls minus $BASE calls, same setup):"
printf '  %-38s %10d\n' "floor (dalek SigningKey::sign)" "$floor"
printf '  %-38s %10d   ratio %s\n' "key expanded once (RequestKey, no ABI)" "$core" "$(python3 -c "print(f'{$core/$floor:.3f}')")"
printf '  %-38s %10d   ratio %s\n' "perps_sign_body_into" "$into" "$(python3 -c "print(f'{$into/$floor:.3f}')")"
printf '  %-38s %10d   ratio %s\n' "perps_sign_body + perps_string_free" "$json" "$(python3 -c "print(f'{$json/$floor:.3f}')")"
