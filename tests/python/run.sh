#!/usr/bin/env bash
# Independent cross-checks of libperps's signatures (PyNaCl, eth-account, base58).
# Assumes the library is already built: target/release/libperps.so, or $PERPS_LIB.
# Usage: tests/python/run.sh [extra pytest args]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/target/pyenv"
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
cd "$root"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here" "$@"
