#!/usr/bin/env bash
# The Go binding's checks: go vet, then go test (the test starts its own sandbox venue).
# Two ways to link the library (see perps.go, "Linking"):
#   - in-tree (the default here, for developers): -tags perps_intree links
#     target/release/libperps.so with a run path. Assumes it and the sandbox are built:
#       make sandbox lib
#   - installed (PERPS_GO_LINK=installed): no tag, `#cgo pkg-config: perps` finds the
#     installed library through PKG_CONFIG_PATH (the caller sets it: tests/packages/run.sh
#     does, with the release tarball unpacked in a temporary prefix); a run path to
#     `pkg-config --variable=libdir perps` is added so the test runs without LD_LIBRARY_PATH.
# Needs Go >= 1.19 and a C compiler (Debian: golang-go, gcc). No Go modules are fetched.
# Usage: bindings/go/run.sh [extra go test args]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
link="${PERPS_GO_LINK:-intree}"

command -v go >/dev/null || { echo "run.sh: go not found (Debian: apt-get install golang-go)" >&2; exit 2; }
sandbox="${PERPS_SANDBOX:-$root/target/release/perps-sandbox}"
case "$link" in
    intree)
        tags=(-tags perps_intree)
        needed=("$root/target/release/libperps.so" "$sandbox")
        ;;
    installed)
        tags=()
        needed=("$sandbox")
        if ! pkg-config --exists perps; then
            echo "run.sh: pkg-config finds no perps.pc (set PKG_CONFIG_PATH to <prefix>/lib/pkgconfig)" >&2
            exit 2
        fi
        export CGO_LDFLAGS="${CGO_LDFLAGS:+$CGO_LDFLAGS }-Wl,-rpath,$(pkg-config --variable=libdir perps)"
        echo "linking the installed library: $(pkg-config --cflags --libs perps)"
        ;;
    *)
        echo "run.sh: PERPS_GO_LINK is '$link': intree or installed" >&2
        exit 2
        ;;
esac
for f in "${needed[@]}"; do
    if [[ ! -f "$f" ]]; then
        echo "run.sh: $f not found; build the sandbox and the library (see the top of this file)" >&2
        exit 2
    fi
done
export PERPS_SANDBOX="$sandbox"

# The header by angle brackets only: with #include "perps.h", cgo's C compiler looks first
# beside its temporary copy of the Go file, where a stray perps.h wins over the one -I or
# pkg-config names (commit 265a8a3). Every .go file of the package, tests included.
if quoted=$(find "$here" -name '*.go' -exec grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"perps[^"]*"' {} +); then
    echo "$quoted" >&2
    echo "run.sh: include the header as #include <perps.h>, never in quotes" >&2
    exit 1
fi

# Everything Go writes stays under target/; nothing is downloaded (the module has no deps).
export GOCACHE="$root/target/go/cache" GOPATH="$root/target/go/path" GOPROXY=off GOFLAGS=-mod=readonly
export CGO_ENABLED=1
cd "$here"
# cgo's full pointer checks, asked for as GODEBUG=cgocheck=2 (scripts/test.sh does): that
# form on Go 1.19 and 1.20, GOEXPERIMENT=cgocheck2 from Go 1.21, where GODEBUG=cgocheck=2
# stops the go command itself at its start (cgocheck.sh). The request is taken out of
# GODEBUG before any go command runs, and the form for this Go put back.
source "$here/cgocheck.sh"
cgocheck2=0
if go_cgocheck2_take_request; then cgocheck2=1; fi
version=$(go version)
echo "$version"
if ((cgocheck2)); then
    setting=$(go_cgocheck2_setting "$version")
    go_cgocheck2_apply "$setting"
    echo "cgo's full pointer checks: $setting"
fi
go vet "${tags[@]}" ./...
go test "${tags[@]}" -count=1 -v ./... "$@"
