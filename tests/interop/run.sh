#!/usr/bin/env bash
# The interop checks: a venue written from the documents only (../shared/spec), with aiohttp,
# PyNaCl and trustme, driven through the Python binding on 127.0.0.1 (README.md here).
# Assumes the library is already built: target/release/libperps.so, or $PERPS_LIB.
# Usage: tests/interop/run.sh [check_file.py [check name ...]]   (no argument: every check)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/target/interop-venv"
lib="${PERPS_LIB:-$root/target/release/libperps.so}"

if [[ ! -f "$lib" ]]; then
    echo "run.sh: $lib not found; run 'make lib' first (or set PERPS_LIB)" >&2
    exit 2
fi
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/requirements.txt"

export PERPS_LIB="$lib"
export PYTHONDONTWRITEBYTECODE=1
cd "$here"
if [[ $# -gt 0 ]]; then
    exec "$venv/bin/python" "$@"
fi
failed=0
for suite in check_rest.py check_tls.py check_ws_handshake.py check_stream.py check_more.py check_signin.py check_wallet_login.py check_credentials.py; do
    echo "== $suite"
    "$venv/bin/python" "$suite" || failed=1
done
if [[ $failed -ne 0 ]]; then
    echo "interop: some checks FAILED (lines starting FAIL above)" >&2
fi
exit $failed
