#!/usr/bin/env bash
# The Go binding's checks: go vet, then go test (the test starts its own sandbox venue).
# Assumes target/release/perps-sandbox and target/release/libperps.so are built:
#   cargo build --release -p perps-sandbox && cargo build --release --lib
# Needs Go >= 1.19 and a C compiler (Debian: golang-go, gcc). No Go modules are fetched.
# Usage: bindings/go/run.sh [extra go test args]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

for f in "$root/target/release/libperps.so" "${PERPS_SANDBOX:-$root/target/release/perps-sandbox}"; do
    if [[ ! -f "$f" ]]; then
        echo "run.sh: $f not found; build the sandbox and the library (see the top of this file)" >&2
        exit 2
    fi
done
command -v go >/dev/null || { echo "run.sh: go not found (Debian: apt-get install golang-go)" >&2; exit 2; }

# Everything Go writes stays under target/; nothing is downloaded (the module has no deps).
export GOCACHE="$root/target/go/cache" GOPATH="$root/target/go/path" GOPROXY=off GOFLAGS=-mod=readonly
export CGO_ENABLED=1
cd "$here"
go version
go vet ./...
go test -count=1 -v ./... "$@"
