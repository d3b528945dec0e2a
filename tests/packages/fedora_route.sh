#!/usr/bin/env bash
# README's "The tarball into /usr/local", run as written (less `sudo`: this runs as root), on
# this machine made to look like Fedora/RHEL for the run: in a private mount namespace, /etc is
# a copy (so ldconfig and the ld.so.conf.d entry touch the copy only), /usr/local an empty
# tmpfs, the loader's configuration has no /usr/local directory (Debian's libc.conf has one,
# Fedora's has none), and pkg-config's default path has none either (PKG_CONFIG_LIBDIR: this
# machine's default path without /usr/local, as Fedora's /usr/lib64/pkgconfig:/usr/share/pkgconfig).
# Before the block's lines after the unpack, pkg-config must not find perps and a program
# linked against /usr/local/lib (no run path) must not load: the namespace is as Fedora's. After
# them, the C example builds with pkg-config alone and with CMake with no hint (no
# CMAKE_PREFIX_PATH, no run path: CMAKE_SKIP_RPATH, as an installed program), and both run
# against the sandbox through the loader's cache.
#
#   bash tests/packages/fedora_route.sh DIST_DIR BASE_URL PERPS_URL    # as root (tests/packages/run.sh); SKIPPED without a mount namespace
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
die() { echo "FAILED (fedora_route.sh): $*" >&2; exit 1; }
[[ $# -eq 3 ]] || die "usage: fedora_route.sh DIST_DIR BASE_URL PERPS_URL"
if [[ "${PERPS_FEDORA_NAMESPACE:-}" != 1 ]]; then
    # Not root (tests/packages/run.sh runs as a user when its tools are installed), or a
    # container whose seccomp profile or missing CAP_SYS_ADMIN forbids mount namespaces: no
    # Fedora-like system can be staged without touching the host's /etc and /usr/local, so
    # it is said loudly and skipped, rather than run on the host or failing the whole run.
    if ! why=$(unshare --mount --propagation private true 2>&1); then
        echo "SKIPPED (fedora_route.sh): no private mount namespace here (uid $(id -u): ${why:0:300}); README's /usr/local route for Fedora/RHEL was not checked"
        exit 0
    fi
    exec unshare --mount --propagation private env PERPS_FEDORA_NAMESPACE=1 bash "$0" "$@"
fi
DIST="$(cd "$1" && pwd)"
BASE_URL=$2
PERPS_URL=$3
VERSION=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$ROOT/Cargo.toml" | head -n 1)
WORK="$(mktemp -d "${TMPDIR:-/tmp}/perps-fedora.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH LIBRARY_PATH CPATH C_INCLUDE_PATH

# The block: the fenced sh block after README's marker line; its first line unpacks.
awk '/^<!-- tests\/packages\/fedora_route.sh runs this block/ { marked = 1; next }
     marked && /^```sh/ { block = 1; next }
     block && /^```/ { exit }
     block { print }' "$ROOT/README.md" | sed 's/\bsudo //g' >"$WORK/block.sh"
[[ "$(head -n 1 "$WORK/block.sh")" == "tar -xzf perps-$VERSION-linux-x86_64.tar.gz -C /usr/local "* ]] ||
    die "README's block does not start by unpacking perps-$VERSION-linux-x86_64.tar.gz into /usr/local: $(head -n 1 "$WORK/block.sh")"
echo "README's block (sudo dropped):"
sed 's/^/  /' "$WORK/block.sh"

# The machine as Fedora has it, in this namespace only.
cp -a /etc "$WORK/etc"
mount --bind "$WORK/etc" /etc
mount -t tmpfs tmpfs /usr/local
sed -i '\|^[[:space:]]*/usr/local/|d' /etc/ld.so.conf /etc/ld.so.conf.d/*.conf
ldconfig
PKG_CONFIG_LIBDIR=$(pkg-config --variable pc_path pkg-config | tr ':' '\n' | grep -v '^/usr/local/' | paste -sd:)
export PKG_CONFIG_LIBDIR
echo "namespace: /usr/local empty, the loader's configuration and pkg-config's path ($PKG_CONFIG_LIBDIR) without /usr/local"

cd "$DIST"
# shellcheck disable=SC1090  # README's block
source <(head -n 1 "$WORK/block.sh")
EXAMPLES=/usr/local/share/doc/perps/examples-c
[[ -f "$EXAMPLES/signin_order.c" ]] || die "no $EXAMPLES/signin_order.c after the unpack"
! pkg-config --exists perps || die "pkg-config finds perps before README's steps: the namespace is not as Fedora's"
cc -std=c11 -I/usr/local/include "$EXAMPLES/signin_order.c" -L/usr/local/lib -lperps -o "$WORK/control"
grep -q "libperps.so.* => not found" <<<"$(ldd "$WORK/control")" ||
    die "a program linked against /usr/local/lib loads it before README's steps: the namespace is not as Fedora's"
echo "ok: before README's steps, pkg-config does not find perps and the loader does not find libperps"

# shellcheck disable=SC1090  # README's block
source <(tail -n +2 "$WORK/block.sh")
grep -q "libperps.so.* => /usr/local/lib/libperps.so" <<<"$(ldd "$WORK/control")" ||
    die "after README's steps, the loader does not find /usr/local/lib/libperps.so.*: $(ldd "$WORK/control")"

pkg-config --exists perps || die "after README's steps, pkg-config does not find perps"
echo "ok: after README's steps, pkg-config finds perps $(pkg-config --modversion perps) and the loader /usr/local/lib/libperps.so.*"

# run LABEL PROGRAM: it loads /usr/local/lib's library and the sandbox accepts its order.
run() {
    grep -q "libperps.so.* => /usr/local/lib/libperps.so" <<<"$(ldd "$2")" || die "$1 does not load /usr/local/lib's libperps"
    "$2" "$BASE_URL" "$PERPS_URL" bsc >"$WORK/log" 2>&1 || { cat "$WORK/log"; die "$1 exited with an error"; }
    cat "$WORK/log"
    grep -qF 'order placed: {"code":0' "$WORK/log" || die "$1: no accepted order in its output"
    echo "ok: $1"
}
# shellcheck disable=SC2046  # pkg-config prints a list of flags
cc -std=c11 -Wall -Wextra -Werror -pedantic "$EXAMPLES/signin_order.c" $(pkg-config --cflags --libs perps) \
    -o "$WORK/signin_order"
run "C (pkg-config through README's PKG_CONFIG_PATH, no run path)" "$WORK/signin_order"

cmake -S "$HERE/cmake_c" -B "$WORK/cmake" -DCMAKE_BUILD_TYPE=Release -DCMAKE_SKIP_RPATH=ON \
    -DPERPS_VERSION="$VERSION" -DPERPS_EXAMPLES="$EXAMPLES" >"$WORK/log" 2>&1 || { cat "$WORK/log"; die "cmake configure"; }
found=$(sed -n 's/^perps_DIR:PATH=//p' "$WORK/cmake/CMakeCache.txt")
[[ "$found" == /usr/local/lib/cmake/perps ]] || die "CMake found perps in '$found', not /usr/local/lib/cmake/perps"
cmake --build "$WORK/cmake" -j 2 >"$WORK/log" 2>&1 || { cat "$WORK/log"; die "cmake --build"; }
run "C (CMake find_package with no hint, no run path)" "$WORK/cmake/signin_order_c_shared"
echo "ok: README's tarball install into /usr/local, on a system whose loader and pkg-config do not search it"
