#!/usr/bin/env bash
# Packaging test: `make install` into a temporary prefix, then build the C example
# (examples-c/signin_order.c) against the installed files using nothing but pkg-config,
# and run it against a sandbox venue this script starts and stops:
#   - the layout: headers, libperps.a, libperps.so.X.Y.Z with SONAME libperps.so.0.Y (0.x;
#     libperps.so.X from 1.0), the libperps.so.0.Y and libperps.so symlinks, perps.pc with
#     Cargo.toml's version, the CMake config files, bin/perps-sandbox;
#   - shared: `pkg-config --cflags --libs perps` and an rpath to `pkg-config --variable=libdir
#     perps` (README's link line); the program needs libperps.so.0.Y and loads it from the
#     prefix with no LD_LIBRARY_PATH;
#   - static: `pkg-config --static --cflags --libs perps` with -lperps forced to the archive;
#     the program needs no libperps at all;
#   - C++: examples-c/signin_order.cpp with the installed perps.hpp, the same way (shared);
#   - DESTDIR staging and `make uninstall`.
# Exits non-zero on the first failure.
#
# Usage: bash tests/install/run.sh   (from anywhere). `make install` builds the library and
# the sandbox venue; the installed perps-sandbox is the venue the programs talk to.
# Installs pkg-config with apt-get when it is missing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
CC="${CC:-cc}"
CXX="${CXX:-g++}"

step() { printf '\n=== %s\n' "$*"; }
ok() { echo "ok: $*"; }
die() { echo "FAILED: $*" >&2; exit 1; }

# Only what the test gives the compiler may find the library.
unset CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH LD_LIBRARY_PATH PKG_CONFIG_PATH

if ! command -v pkg-config >/dev/null; then
    step "installing pkg-config"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq pkg-config >/dev/null
fi
command -v readelf >/dev/null || die "readelf not found (binutils)"

VERSION=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
[[ -n "$VERSION" ]] || die "no version in Cargo.toml"
MAJOR=${VERSION%%.*}
MINOR=${VERSION#*.}
MINOR=${MINOR%%.*}
# The SONAME's version: 0.<minor> while the version is 0.x, <major> from 1.0 (the Makefile's rule).
if [[ "$MAJOR" == 0 ]]; then SOVERSION="0.$MINOR"; else SOVERSION="$MAJOR"; fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/perps-install.XXXXXX")"
PREFIX="$TMP/prefix"
OUT="$TMP/out"
mkdir -p "$OUT"
sandbox_pid=""
cleanup() {
    if [[ -n "$sandbox_pid" ]]; then
        kill "$sandbox_pid" 2>/dev/null || true
        wait "$sandbox_pid" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

# --- install ----------------------------------------------------------------------------
step "make install PREFIX=$PREFIX"
make --no-print-directory install PREFIX="$PREFIX"

step "installed layout"
for f in include/perps.h include/perps.hpp lib/libperps.a "lib/libperps.so.$VERSION" lib/pkgconfig/perps.pc \
    lib/cmake/perps/perpsConfig.cmake lib/cmake/perps/perpsConfigVersion.cmake bin/perps-sandbox; do
    [[ -f "$PREFIX/$f" && ! -L "$PREFIX/$f" ]] || die "$PREFIX/$f is not an installed file"
done
[[ -x "$PREFIX/bin/perps-sandbox" ]] || die "bin/perps-sandbox is not executable"
[[ "$(readlink "$PREFIX/lib/libperps.so.$SOVERSION")" == "libperps.so.$VERSION" ]] ||
    die "libperps.so.$SOVERSION is not a symlink to libperps.so.$VERSION"
[[ "$(readlink "$PREFIX/lib/libperps.so")" == "libperps.so.$SOVERSION" ]] ||
    die "libperps.so is not a symlink to libperps.so.$SOVERSION"
ok "headers, libperps.a, libperps.so.$VERSION, libperps.so.$SOVERSION -> .so.$VERSION, libperps.so -> .so.$SOVERSION, perps.pc, CMake config, perps-sandbox"
[[ "$("$PREFIX/bin/perps-sandbox" --version)" == "perps-sandbox $VERSION" ]] || die "perps-sandbox --version"
ok "bin/perps-sandbox $VERSION"
soname=$(readelf -d "$PREFIX/lib/libperps.so.$VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ "$soname" == "libperps.so.$SOVERSION" ]] || die "SONAME is '$soname', expected libperps.so.$SOVERSION"
ok "SONAME $soname"

export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
[[ "$(pkg-config --modversion perps)" == "$VERSION" ]] || die "pkg-config --modversion perps is not $VERSION"
[[ "$(pkg-config --variable=prefix perps)" == "$PREFIX" ]] || die "pkg-config found another perps.pc"
ok "pkg-config: perps $VERSION in $PREFIX"
echo "  --cflags --libs:          $(pkg-config --cflags --libs perps)"
echo "  --static --cflags --libs: $(pkg-config --static --cflags --libs perps)"

# --- build against the prefix -------------------------------------------------------
# Copies of the sources, so that nothing next to them (no repository include/) is found.
cp examples-c/signin_order.c examples-c/signin_order.cpp "$OUT/"
cd "$OUT"

step "shared: $CC ... \$(pkg-config --cflags --libs perps) -Wl,-rpath,\$(pkg-config --variable=libdir perps)"
# README's link line: the run path makes the program find the library without LD_LIBRARY_PATH.
# shellcheck disable=SC2046  # pkg-config prints a list of flags
"$CC" -std=c11 -Wall -Wextra -Werror -pedantic signin_order.c $(pkg-config --cflags --libs perps) \
    -Wl,-rpath,"$(pkg-config --variable=libdir perps)" -o signin_order_shared
readelf -d signin_order_shared | grep -q "(NEEDED).*\[libperps.so.$SOVERSION\]" ||
    die "signin_order_shared does not need libperps.so.$SOVERSION"
ldd_line=$(ldd signin_order_shared | grep libperps) || die "ldd: no libperps"
[[ "$ldd_line" == *"libperps.so.$SOVERSION => $PREFIX/lib/libperps.so.$SOVERSION "* ]] || die "ldd: $ldd_line"
ok "NEEDED libperps.so.$SOVERSION; ldd (no LD_LIBRARY_PATH):$ldd_line"

step "static: $CC ... \$(pkg-config --static --cflags --libs perps), -lperps forced to libperps.a"
# With both libperps.so and libperps.a installed, -lperps alone would pick the .so.
static_flags=$(pkg-config --static --cflags --libs perps | sed 's/-lperps\b/-Wl,-Bstatic -lperps -Wl,-Bdynamic/')
echo "+ $CC -std=c11 -Wall -Wextra -Werror -pedantic signin_order.c $static_flags"
# shellcheck disable=SC2086  # a list of flags
"$CC" -std=c11 -Wall -Wextra -Werror -pedantic signin_order.c $static_flags -o signin_order_static
if readelf -d signin_order_static | grep -q '(NEEDED).*libperps' || ldd signin_order_static | grep -q libperps; then
    die "signin_order_static still needs a shared libperps"
fi
ok "no libperps in readelf -d / ldd: $(ldd signin_order_static | awk '{print $1}' | tr '\n' ' ')"

step "C++: $CXX -std=c++17 ... \$(pkg-config --cflags --libs perps)"
# shellcheck disable=SC2046
"$CXX" -std=c++17 -Wall -Wextra -Werror -pedantic signin_order.cpp $(pkg-config --cflags --libs perps) \
    -o signin_order_cpp
ok "built with the installed perps.hpp"

# --- run against the sandbox --------------------------------------------------------
step "running against the sandbox venue"
"$PREFIX/bin/perps-sandbox" --port 0 >urls 2>sandbox.err &
sandbox_pid=$!
for _ in $(seq 1 200); do
    [[ -s urls ]] && break
    sleep 0.05
done
base_url=$(sed -n 's/.*"base_url":"\([^"]*\)".*/\1/p' urls)
perps_url=$(sed -n 's/.*"perps_url":"\([^"]*\)".*/\1/p' urls)
[[ -n "$base_url" && -n "$perps_url" ]] || { cat sandbox.err; die "the sandbox did not start"; }
echo "sandbox venue: base_url=$base_url perps_url=$perps_url"

run_flow() {  # label, expected line, command...
    local label="$1" expected="$2"
    shift 2
    echo "--- $label"
    local rc=0
    "$@" >log 2>&1 || rc=$?
    cat log
    [[ $rc -eq 0 ]] || die "$label exited with status $rc"
    grep -qF "$expected" log || die "$label: output lacks '$expected'"
    ok "$label"
}
run_flow "shared, bsc" '5. order placed: {"code":0' ./signin_order_shared "$base_url" "$perps_url" bsc
run_flow "shared, solana" '5. order placed: {"code":0' ./signin_order_shared "$base_url" "$perps_url" solana
run_flow "static, bsc" '5. order placed: {"code":0' ./signin_order_static "$base_url" "$perps_url" bsc
run_flow "C++, bsc" 'refused: PERPS_INVALID_ORDER (3)' \
    env LD_LIBRARY_PATH="$PREFIX/lib" ./signin_order_cpp "$base_url" "$perps_url" bsc
cd "$ROOT"

# --- DESTDIR and uninstall ------------------------------------------------------------
step "make install PREFIX=/opt/perps DESTDIR=$TMP/stage, then uninstall both"
make --no-print-directory install PREFIX=/opt/perps DESTDIR="$TMP/stage" >/dev/null
[[ -f "$TMP/stage/opt/perps/lib/libperps.so.$VERSION" && -f "$TMP/stage/opt/perps/include/perps.hpp" ]] ||
    die "DESTDIR install did not stage under $TMP/stage/opt/perps"
grep -qx 'prefix=/opt/perps' "$TMP/stage/opt/perps/lib/pkgconfig/perps.pc" || die "DESTDIR leaked into perps.pc"
ok "staged under DESTDIR; perps.pc says prefix=/opt/perps"
make --no-print-directory uninstall PREFIX=/opt/perps DESTDIR="$TMP/stage" >/dev/null
make --no-print-directory uninstall PREFIX="$PREFIX" >/dev/null
left=$(find "$TMP/stage" "$PREFIX" \( -type f -o -type l \) | head -n 5)
[[ -z "$left" ]] || die "make uninstall left: $left"
ok "make uninstall removed every file"

echo
echo "install test passed"
