#!/usr/bin/env bash
# The Python binding's tests (pytest): the full flow against a sandbox venue each test
# starts itself, error cases, body signatures verified with PyNaCl, misuse.
# Assumes target/release/perps-sandbox and target/release/libperps.so are built:
#   make sandbox lib
# Creates or reuses the venv target/pyenv (shared with tests/python/run.sh, same pins;
# $PERPS_PYENV overrides).
# Usage: bindings/python/run.sh [extra pytest args]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${PERPS_PYENV:-$root/target/pyenv}"
lib="${PERPS_LIB:-$root/target/release/libperps.so}"
sandbox="${PERPS_SANDBOX:-$root/target/release/perps-sandbox}"

for f in "$lib" "$sandbox"; do
    if [[ ! -f "$f" ]]; then
        echo "run.sh: $f not found; build the sandbox and the library (see the top of this file)" >&2
        exit 2
    fi
done

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$here/requirements.txt"

export PERPS_LIB="$lib" PERPS_SANDBOX="$sandbox"
export PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
cd "$here"
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
