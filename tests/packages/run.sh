#!/usr/bin/env bash
# The packages, installed the way each ecosystem installs a native library, each used by a
# small program built from the installed package (not the source tree) that signs in and
# places an order against the sandbox venue of the tarball (bin/perps-sandbox):
#   - C/C++ tarball unpacked into an empty prefix: the layout and SONAME; every path its
#     share/doc/perps/README.md names installed beside it or marked as the source repository's
#     (check_doc_links.py); the C example it ships in share/doc/perps/examples-c/ built
#     with README's pkg-config link line (run path, no LD_LIBRARY_PATH); a CMake project with
#     find_package(perps CONFIG): perps::perps and perps::perps_static (C, C++; the C++ programs
#     ask for C++14 and the targets' cxx_std_17 raises them, the C ones stay C11), the version
#     rule; a CMake project with C alone enabled, linking both targets; README's install into
#     /usr/local run as written where the loader and pkg-config do not search it, as on
#     Fedora/RHEL (fedora_route.sh: a private mount namespace; pkg-config, CMake, no run path);
#   - Python: the wheel into a fresh virtual environment (no environment variable: the library
#     inside the wheel is loaded), the program checked with mypy --strict, the wheel's
#     platform tag checked with auditwheel; the wheel installed by pip 19.3.1 (before PEP 600:
#     through the legacy manylinux2014 alias) and used; its METADATA (check_wheel_metadata.py:
#     summary, bindings/python/README.md as the Markdown long description, licence expression); the package from source (pip install
#     bindings/python) in another one: no library until the installed one is on the loader's
#     path, then that one, by its SONAME;
#   - Java: the jar on a class path with JNA (no -Djna.library.path: JNA extracts the
#     library from the jar), and through Maven offline (the jar and POM installed into a
#     local repository, a project depending on libperps:perps);
#   - C#: `nuget install Perps -Source dist` into a package folder, a program compiled
#     against it with mcs and run under Mono without LD_LIBRARY_PATH: from the package
#     folder, and deployed (lib/net45's Perps.dll and libperps.so beside the program); and on
#     .NET's CoreCLR in the layout `dotnet publish` makes (runtimes/linux-x64/native's
#     libperps.so beside Perps.dll);
#   - Go: a program in its own module using the binding through go.work (no replace), and
#     with the binding vendored as a package of its own, cgo linking the installed library
#     with pkg-config; go vet + go test of the binding in its
#     default (installed) mode (bindings/go/run.sh, PERPS_GO_LINK=installed);
#   - Rust: a program depending on the crate by path: it builds no libperps.so/.a; README's
#     "Use from Rust" snippet is its code;
#   - in each package, THIRD-PARTY-NOTICES.txt where its ecosystem keeps licences, naming every
#     crate `cargo tree` (run here, check_notices.py) lists for what the package ships, each
#     with its licence text; scripts/third_party_notices.py's own test first
#     (third_party_notices_test.py: a made-up workspace, a crate without a licence file); and
#     scripts/packaged_readme.py's (packaged_readme_test.py: only the examples under git ship).
#
#   bash tests/packages/run.sh           # runs scripts/package.sh first
#   PERPS_PACKAGES_REUSE=1 bash tests/packages/run.sh   # uses what is in dist/ already
# Installs the Debian packages it needs when they are missing. Exits non-zero on the first
# failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/packages"
cd "$ROOT"
export CARGO_TERM_COLOR=never
JNA_JAR=${JNA_JAR:-/usr/share/java/jna.jar}
MAVEN_REPO=/usr/share/maven-repo
CC="${CC:-cc}"

step() { printf '\n=== packages: %s\n' "$*"; }
ok() { echo "ok: $*"; }
die() { echo "FAILED: $*" >&2; exit 1; }

# Only what a step gives explicitly may find the library.
unset LD_LIBRARY_PATH PERPS_LIB PKG_CONFIG_PATH CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LIBRARY_PATH \
    MONO_PATH CLASSPATH CGO_LDFLAGS CGO_CFLAGS PYTHONPATH

# --- tools ------------------------------------------------------------------------------
packages=()
need() { command -v "$1" >/dev/null || packages+=("$2"); }
need cmake cmake
need pkg-config pkg-config
need g++ g++
need go golang-go
need mono mono-runtime
need mcs mono-mcs
need nuget nuget
need javac openjdk-17-jdk-headless
need mvn maven
need objdump binutils
[[ -f "$JNA_JAR" ]] || packages+=(libjna-java)
for plugin in install dependency compiler resources; do
    [[ -d "$MAVEN_REPO/org/apache/maven/plugins/maven-$plugin-plugin" ]] || packages+=("libmaven-$plugin-plugin-java")
done
# The compiler plugin's plexus-compiler POM imports junit-bom:debian (package junit5), which
# Debian lists only as a suggestion: without it, an offline `mvn compile` cannot resolve it.
[[ -d "$MAVEN_REPO/org/junit/junit-bom" ]] || packages+=(junit5)
python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
if [[ ${#packages[@]} -gt 0 ]]; then
    step "installing: ${packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${packages[@]}" >/dev/null
fi

# --- the packages -----------------------------------------------------------------------
step "scripts/third_party_notices.py: tests/packages/third_party_notices_test.py"
python3 "$HERE/third_party_notices_test.py" || die "third_party_notices_test.py"
step "scripts/packaged_readme.py: tests/packages/packaged_readme_test.py"
python3 "$HERE/packaged_readme_test.py" || die "packaged_readme_test.py"

VERSION=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
MAJOR=${VERSION%%.*}
MINOR=${VERSION#*.}
MINOR=${MINOR%%.*}
if [[ "$MAJOR" == 0 ]]; then SOVERSION="0.$MINOR"; else SOVERSION="$MAJOR"; fi
SONAME="libperps.so.$SOVERSION"
if [[ "${PERPS_PACKAGES_REUSE:-0}" != 1 ]]; then
    step "bash scripts/package.sh"
    bash scripts/package.sh
fi
TARBALL="$ROOT/dist/perps-$VERSION-linux-x86_64.tar.gz"
JAR="$ROOT/dist/perps-$VERSION.jar"
POM="$ROOT/dist/perps-$VERSION.pom"
NUPKG="$ROOT/dist/Perps.$VERSION.nupkg"
WHEEL=$(ls "$ROOT"/dist/perps-"$VERSION"-py3-none-manylinux_*_x86_64.whl 2>/dev/null | head -n 1)
for f in "$TARBALL" "$JAR" "$POM" "$NUPKG" "$WHEEL"; do
    [[ -f "$f" ]] || die "${f:-the wheel} is missing from dist/ (bash scripts/package.sh)"
done
(cd dist && sha256sum --quiet -c SHA256SUMS) || die "dist/SHA256SUMS does not match"
ok "dist/: $(cd dist && ls | tr '\n' ' ')"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/perps-packages.XXXXXX")"
sandbox_pid=""
cleanup() {
    if [[ -n "$sandbox_pid" ]]; then
        kill "$sandbox_pid" 2>/dev/null || true
        wait "$sandbox_pid" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

# run_flow LABEL COMMAND...: the program must exit 0 and print the venue's accepted order.
run_flow() {
    local label="$1"
    shift
    echo "--- $label"
    local rc=0
    "$@" >"$TMP/log" 2>&1 || rc=$?
    cat "$TMP/log"
    [[ $rc -eq 0 ]] || die "$label exited with status $rc"
    grep -qF 'order placed: {"code":0' "$TMP/log" || die "$label: no accepted order in its output"
    ok "$label"
}

# --- C/C++ ------------------------------------------------------------------------------
PREFIX="$TMP/prefix"
step "C/C++: $(basename "$TARBALL") unpacked into $PREFIX"
mkdir -p "$PREFIX"
tar -xzf "$TARBALL" -C "$PREFIX" --strip-components=1
for f in include/perps.h include/perps.hpp lib/libperps.a "lib/libperps.so.$VERSION" lib/pkgconfig/perps.pc \
    lib/cmake/perps/perpsConfig.cmake lib/cmake/perps/perpsConfigVersion.cmake bin/perps-sandbox; do
    [[ -f "$PREFIX/$f" && ! -L "$PREFIX/$f" ]] || die "the tarball has no file $f"
done
[[ "$(readlink "$PREFIX/lib/$SONAME")" == "libperps.so.$VERSION" ]] || die "lib/$SONAME is not a symlink to libperps.so.$VERSION"
[[ "$(readlink "$PREFIX/lib/libperps.so")" == "$SONAME" ]] || die "lib/libperps.so is not a symlink to $SONAME"
soname=$(objdump -p "$PREFIX/lib/libperps.so.$VERSION" | sed -n 's/^ *SONAME *//p')
[[ "$soname" == "$SONAME" ]] || die "SONAME '$soname', expected $SONAME"
ok "layout; SONAME $soname"
# notices FILE PACKAGE...: FILE names every crate cargo tree lists for the workspace packages
# whose artifacts the package ships, each with a licence text.
notices() {
    [[ -f "$1" ]] || die "no $1"
    python3 "$HERE/check_notices.py" "$@" || die "$1 does not cover the crates compiled into ${*:2}"
}
notices "$PREFIX/share/doc/perps/THIRD-PARTY-NOTICES.txt" perps perps-sandbox
ok "the tarball's share/doc/perps/THIRD-PARTY-NOTICES.txt (the library's and the sandbox's crates)"
# The README installed in share/doc/perps/ (scripts/packaged_readme.py): what it links to is
# installed beside it (the examples, the sandbox's manual) or marked as the source repository's.
python3 "$HERE/check_doc_links.py" "$PREFIX" || die "the links of the tarball's share/doc/perps/README.md"
# The packages are built for glibc 2.17 and newer (scripts/package.sh, PERPS_GLIBC): no symbol of
# the library or the sandbox may need a newer glibc, or they would not load on RHEL 8 or
# Ubuntu 20.04 (and the wheel would not install there).
GLIBC=${PERPS_GLIBC:-2.17}
if [[ "$GLIBC" != host ]]; then
    newest_glibc=$(objdump -T "$PREFIX/lib/libperps.so.$VERSION" "$PREFIX/bin/perps-sandbox" |
        grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
    [[ "$(printf '%s\n' "$newest_glibc" "$GLIBC" | sort -V | tail -n 1)" == "$GLIBC" ]] ||
        die "the tarball's library or sandbox needs glibc $newest_glibc; the packages promise $GLIBC"
    # PEP 600's tag, and its legacy alias where one names that glibc (as auditwheel tags): pip
    # before 20.3 (Ubuntu 20.04's 20.0.2, RHEL 8's 19.3.1) knows only the legacy tags.
    expected_tag="manylinux_${GLIBC/./_}_x86_64"
    case "$GLIBC" in
        2.5) expected_tag+=".manylinux1_x86_64" ;;
        2.12) expected_tag+=".manylinux2010_x86_64" ;;
        2.17) expected_tag+=".manylinux2014_x86_64" ;;
    esac
    [[ "$(basename "$WHEEL")" == "perps-$VERSION-py3-none-$expected_tag.whl" ]] ||
        die "the wheel is $(basename "$WHEEL"), expected the tag $expected_tag"
    ok "glibc: the library and the sandbox need glibc $newest_glibc at most; the wheel is tagged $expected_tag"
fi

"$PREFIX/bin/perps-sandbox" --port 0 >"$TMP/urls" 2>"$TMP/sandbox.err" &
sandbox_pid=$!
for _ in $(seq 1 200); do
    [[ -s "$TMP/urls" ]] && break
    sleep 0.05
done
BASE_URL=$(sed -n 's/.*"base_url":"\([^"]*\)".*/\1/p' "$TMP/urls")
PERPS_URL=$(sed -n 's/.*"perps_url":"\([^"]*\)".*/\1/p' "$TMP/urls")
[[ -n "$BASE_URL" && -n "$PERPS_URL" ]] || { cat "$TMP/sandbox.err"; die "the tarball's perps-sandbox did not start"; }
echo "sandbox venue (the tarball's bin/perps-sandbox): base_url=$BASE_URL perps_url=$PERPS_URL"

step "C: README's link line, pkg-config on the unpacked tree (perps.pc is relative to itself)"
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
[[ "$(pkg-config --modversion perps)" == "$VERSION" ]] || die "pkg-config --modversion perps"
mkdir -p "$TMP/c"
cp "$PREFIX/share/doc/perps/examples-c/signin_order.c" "$TMP/c/"  # the example the tarball ships
(
    cd "$TMP/c"
    set -x
    # shellcheck disable=SC2046  # pkg-config prints a list of flags
    "$CC" -std=c11 -Wall -Wextra -Werror -pedantic signin_order.c $(pkg-config --cflags --libs perps) \
        -Wl,-rpath,"$(pkg-config --variable=libdir perps)" -o signin_order
)
# (grep reads a variable, not a pipe: with pipefail, grep -q's early exit would fail the pipe)
grep -q "$SONAME => $PREFIX/lib/" <<<"$(ldd "$TMP/c/signin_order")" || die "signin_order does not load $PREFIX/lib/$SONAME"
run_flow "C (pkg-config, run path)" "$TMP/c/signin_order" "$BASE_URL" "$PERPS_URL" bsc
unset PKG_CONFIG_PATH

step "C/C++: CMake, find_package(perps CONFIG) with CMAKE_PREFIX_PATH=$PREFIX"
cmake -S "$HERE/cmake" -B "$TMP/cmake" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    -DPERPS_VERSION="$VERSION" -DPERPS_NEXT_MINOR=$((MINOR + 1)) -DPERPS_EXAMPLES="$PREFIX/share/doc/perps/examples-c" >"$TMP/log" ||
    { cat "$TMP/log"; die "cmake configure"; }
grep -E 'perps|refuse' "$TMP/log"
cmake --build "$TMP/cmake" -j 2 >"$TMP/log" 2>&1 || { cat "$TMP/log"; die "cmake --build"; }
if grep -q 'NEEDED.*libperps' <<<"$(objdump -p "$TMP/cmake/signin_order_static")"; then
    die "signin_order_static (perps::perps_static) needs a shared libperps"
fi
grep -q "$SONAME => $PREFIX/lib/" <<<"$(ldd "$TMP/cmake/signin_order_shared")" ||
    die "signin_order_shared (perps::perps) does not load $PREFIX/lib/$SONAME"
run_flow "C, perps::perps" "$TMP/cmake/signin_order_shared" "$BASE_URL" "$PERPS_URL" bsc
run_flow "C, perps::perps_static" "$TMP/cmake/signin_order_static" "$BASE_URL" "$PERPS_URL" solana
echo "--- C++, perps::perps"
"$TMP/cmake/signin_order_cpp" "$BASE_URL" "$PERPS_URL" bsc >"$TMP/log" 2>&1 || { cat "$TMP/log"; die "signin_order_cpp"; }
cat "$TMP/log"
grep -qF 'order placed: {"code":0' "$TMP/log" || die "signin_order_cpp placed no order"
ok "C++, perps::perps"
if grep -q 'NEEDED.*libperps' <<<"$(objdump -p "$TMP/cmake/signin_order_cpp_static")"; then
    die "signin_order_cpp_static (perps::perps_static) needs a shared libperps"
fi
run_flow "C++, perps::perps_static" "$TMP/cmake/signin_order_cpp_static" "$BASE_URL" "$PERPS_URL" solana

# The compile lines (compile_commands.json, one "command" per source file): the C++ programs
# ask for C++14 and get C++17 from the targets' cxx_std_17; the C programs stay C11, no C++
# flag. $1: the build directory, $2: the source file's name, $3: the -std flag it must have.
compiled_with() {
    python3 - "$1/compile_commands.json" "$2" "$3" <<'EOF_PY' || die "the compile lines in $1"
import json, os, sys
path, name, flag = sys.argv[1:]
entries = [e for e in json.load(open(path)) if os.path.basename(e["file"]) == name]
if not entries:
    sys.exit(f"{path}: no compile line for {name}")
for e in entries:
    words = e["command"].split() if "command" in e else e["arguments"]
    if flag not in words:
        sys.exit(f"{name} compiled without {flag}: {' '.join(words)}")
    if "++" not in flag and any(w.startswith("-std=") and "++" in w for w in words):
        sys.exit(f"{name} (C) compiled with a C++ flag: {' '.join(words)}")
print(f"{len(entries)} compile line(s) of {name}: {flag}")
EOF_PY
}
compiled_with "$TMP/cmake" signin_order.cpp -std=c++17
compiled_with "$TMP/cmake" signin_order.c -std=c11
ok "perps::perps and perps::perps_static: C++ compiled as C++17 (asked for 14), C as C11"

step "C: CMake, a project with C alone (no C++ enabled), perps::perps and perps::perps_static"
cmake -S "$HERE/cmake_c" -B "$TMP/cmake_c" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DPERPS_VERSION="$VERSION" -DPERPS_EXAMPLES="$PREFIX/share/doc/perps/examples-c" \
    >"$TMP/log" 2>&1 || { cat "$TMP/log"; die "cmake configure (C alone)"; }
cmake --build "$TMP/cmake_c" -j 2 >"$TMP/log" 2>&1 || { cat "$TMP/log"; die "cmake --build (C alone)"; }
compiled_with "$TMP/cmake_c" signin_order.c -std=c11
run_flow "C alone, perps::perps" "$TMP/cmake_c/signin_order_c_shared" "$BASE_URL" "$PERPS_URL" bsc
run_flow "C alone, perps::perps_static" "$TMP/cmake_c/signin_order_c_static" "$BASE_URL" "$PERPS_URL" solana

step "C: README's tarball install into /usr/local as on Fedora/RHEL (tests/packages/fedora_route.sh)"
# As written, in a private mount namespace that hides this machine's /usr/local and takes it out
# of the loader's configuration and pkg-config's path, as Fedora has them.
bash "$HERE/fedora_route.sh" "$ROOT/dist" "$BASE_URL" "$PERPS_URL" ||
    die "README's tarball install into /usr/local on a Fedora-like system (fedora_route.sh)"

# --- Python -------------------------------------------------------------------------------
pip_quiet=(--disable-pip-version-check -q)
step "Python: pip install $(basename "$WHEEL") into a fresh virtual environment"
wheel_tag=$(basename "$WHEEL" .whl)
wheel_tag=${wheel_tag##*-}
python3 -m venv "$TMP/venv-wheel"
"$TMP/venv-wheel/bin/python" -m pip install "${pip_quiet[@]}" "$WHEEL"
site=$("$TMP/venv-wheel/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp "$HERE/python/signin_order.py" "$TMP/"
(cd "$TMP" && run_flow "Python (wheel)" "$TMP/venv-wheel/bin/python" signin_order.py "$BASE_URL" "$PERPS_URL")
grep -qF "loaded from $site/perps/libperps.so" "$TMP/log" || die "the wheel's perps did not load its own libperps.so"
ok "the wheel loaded $site/perps/libperps.so"
[[ -f "$site/perps/py.typed" ]] || die "the wheel has no py.typed"
notices "$site/perps-$VERSION.dist-info/licenses/THIRD-PARTY-NOTICES.txt" perps
grep -qx "License-File: THIRD-PARTY-NOTICES.txt" "$site/perps-$VERSION.dist-info/METADATA" ||
    die "the wheel's METADATA names no License-File THIRD-PARTY-NOTICES.txt"
ok "the installed wheel's .dist-info/licenses/THIRD-PARTY-NOTICES.txt (a License-File of its METADATA)"
# What PyPI and `pip show` show: the summary, bindings/python/README.md as the long description
# (Markdown), the licence expression; in the wheel, and as pip installed it.
python3 "$HERE/check_wheel_metadata.py" "$WHEEL" || die "the wheel's METADATA (check_wheel_metadata.py)"
python3 "$HERE/check_wheel_metadata.py" "$site/perps-$VERSION.dist-info/METADATA" ||
    die "the installed wheel's METADATA (check_wheel_metadata.py)"
"$TMP/venv-wheel/bin/python" -m pip install "${pip_quiet[@]}" mypy==2.4.1 auditwheel==6.8.2
(cd "$TMP" && "$TMP/venv-wheel/bin/python" -m mypy --strict --no-incremental signin_order.py) ||
    die "mypy --strict on a program using the installed package"
(cd "$TMP" && "$TMP/venv-wheel/bin/python" -m mypy --no-incremental -p perps) || die "mypy on the installed package"
ok "mypy: the installed package is typed (py.typed) and its annotations hold; the program passes --strict"
"$TMP/venv-wheel/bin/auditwheel" show "$WHEEL" >"$TMP/log" 2>&1 || { cat "$TMP/log"; die "auditwheel show"; }
# auditwheel names the PEP 600 tag, the first of the wheel's (a legacy alias may follow it).
grep -qF "consistent with the following platform tag: \"${wheel_tag%%.*}\"" <<<"$(tr '\n' ' ' <"$TMP/log")" ||
    { cat "$TMP/log"; die "auditwheel does not agree with the tag $wheel_tag"; }
ok "auditwheel: $(basename "$WHEEL") is consistent with ${wheel_tag%%.*}"

# The pip of the older systems the wheel is for: 19.3.1 (RHEL 8's python38; the first pip that
# knows manylinux2014), which predates PEP 600's manylinux_x_y tags: it installs the wheel only
# through its legacy alias. (pip 19.3.1 needs distutils: Python 3.11 or older.)
if "$TMP/venv-wheel/bin/python" -c 'import sys; sys.exit(sys.version_info >= (3, 12))'; then
    step "Python: the wheel with pip 19.3.1 (before PEP 600's tags), into a fresh virtual environment"
    python3 -m venv "$TMP/venv-oldpip"
    "$TMP/venv-oldpip/bin/python" -m pip install "${pip_quiet[@]}" pip==19.3.1
    "$TMP/venv-oldpip/bin/python" -m pip install "${pip_quiet[@]}" --no-index "$WHEEL" >"$TMP/log" 2>&1 ||
        { cat "$TMP/log"; die "pip 19.3.1 does not install $(basename "$WHEEL") (its tags: $wheel_tag)"; }
    (cd "$TMP" && run_flow "Python (wheel, installed by pip 19.3.1)" "$TMP/venv-oldpip/bin/python" signin_order.py "$BASE_URL" "$PERPS_URL")
else
    echo "(pip 19.3.1 does not run on this Python 3.12+: the wheel's legacy tag is checked by its name only)"
fi

step "Python: pip install bindings/python (from source: no library inside) into another environment"
python3 -m venv "$TMP/venv-src"
"$TMP/venv-src/bin/python" -m pip install "${pip_quiet[@]}" "$ROOT/bindings/python"
src_site=$("$TMP/venv-src/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
[[ ! -e "$src_site/perps/libperps.so" ]] || die "the source install bundles a library"
if (cd "$TMP" && "$TMP/venv-src/bin/python" -c 'import perps' >"$TMP/log" 2>&1); then
    die "import perps succeeded with no libperps anywhere"
fi
grep -qF "this binding needs $SONAME" "$TMP/log" || { cat "$TMP/log"; die "no helpful ImportError"; }
ok "without a libperps: $(tail -n 1 "$TMP/log")"
# The unpacked tree on the dynamic loader's path stands for a system installation (ldconfig).
(cd "$TMP" && run_flow "Python (source install, library found by SONAME)" \
    env LD_LIBRARY_PATH="$PREFIX/lib" "$TMP/venv-src/bin/python" signin_order.py "$BASE_URL" "$PERPS_URL")
grep -qF "loaded from $SONAME" "$TMP/log" || die "the source install did not load $SONAME"
mapped=$(cd "$TMP" && LD_LIBRARY_PATH="$PREFIX/lib" "$TMP/venv-src/bin/python" -c \
    'import perps; print(next(l.split()[-1] for l in open("/proc/self/maps") if "libperps" in l))')
[[ "$mapped" == "$PREFIX/lib/libperps.so.$VERSION" ]] || die "the source install mapped $mapped"
ok "the source install loaded $mapped"

# --- Java ---------------------------------------------------------------------------------
step "Java: java -cp $(basename "$JAR"):jna.jar (no -Djna.library.path)"
mkdir -p "$TMP/java"
javac -Xlint:all -Werror --release 17 -cp "$JAR" -d "$TMP/java" "$HERE/java/SigninOrder.java"
(cd "$TMP" && run_flow "Java (class path)" java -Djna.debug_load=true -cp "$JAR:$JNA_JAR:$TMP/java" \
    SigninOrder "$BASE_URL" "$PERPS_URL")
grep -qF "Found library resource at jar:file:$JAR!/linux-x86-64/libperps.so" "$TMP/log" ||
    die "JNA did not load linux-x86-64/libperps.so from the jar"
ok "JNA loaded linux-x86-64/libperps.so from $(basename "$JAR")"
unzip -p "$JAR" META-INF/THIRD-PARTY-NOTICES.txt >"$TMP/jar-notices.txt" || die "the jar has no META-INF/THIRD-PARTY-NOTICES.txt"
notices "$TMP/jar-notices.txt" perps
ok "the jar's META-INF/THIRD-PARTY-NOTICES.txt"

step "Java: Maven, offline: install-file into a local repository, a project depending on libperps:perps:$VERSION"
# The local repository starts as Debian's (its packaged Maven plugins and JNA), linked, so
# that nothing is fetched; the newest packaged version of each plugin is used.
plugin_version() {
    find "$MAVEN_REPO/org/apache/maven/plugins/maven-$1-plugin" -mindepth 1 -maxdepth 1 -type d -name '[0-9]*' \
        -printf '%f\n' | sort -V | tail -n 1
}
mkdir -p "$TMP/m2"
cp -rs "$MAVEN_REPO/." "$TMP/m2/"
# mvn's output (even with -q, some colour codes) is shown only when it fails.
mvn() { command mvn -B -o -q -Dmaven.repo.local="$TMP/m2" "$@" >"$TMP/mvn.log" 2>&1 || { cat "$TMP/mvn.log"; return 1; }; }
mvn "org.apache.maven.plugins:maven-install-plugin:$(plugin_version install):install-file" \
    -Dfile="$JAR" -DpomFile="$POM" || die "mvn install:install-file"
mkdir -p "$TMP/maven"
cp "$HERE/java/pom.xml" "$HERE/java/SigninOrder.java" "$TMP/maven/"
sed -i -e "s|<version>3.3.0</version>|<version>$(plugin_version resources)</version>|" \
    -e "s|<version>3.10.1</version>|<version>$(plugin_version compiler)</version>|" "$TMP/maven/pom.xml"
(cd "$TMP/maven" && mvn -Dperps.version="$VERSION" compile \
    "org.apache.maven.plugins:maven-dependency-plugin:$(plugin_version dependency):build-classpath" \
    -Dmdep.outputFile=classpath.txt) || die "mvn compile (a project depending on libperps:perps:$VERSION)"
echo "Maven's class path: $(cat "$TMP/maven/classpath.txt")"
grep -q "libperps/perps/$VERSION/perps-$VERSION.jar" "$TMP/maven/classpath.txt" || die "Maven did not resolve the jar"
grep -q "jna-[0-9.]*\.jar" "$TMP/maven/classpath.txt" || die "Maven did not resolve JNA through the POM"
(cd "$TMP" && run_flow "Java (Maven)" java -cp "$TMP/maven/target/classes:$(cat "$TMP/maven/classpath.txt")" \
    SigninOrder "$BASE_URL" "$PERPS_URL")

# --- C# -----------------------------------------------------------------------------------
step "C#: nuget install Perps -Version $VERSION -Source dist, a program under Mono (no LD_LIBRARY_PATH)"
mkdir -p "$TMP/nuget"
nuget install Perps -Version "$VERSION" -Source "$ROOT/dist" -OutputDirectory "$TMP/nuget/packages" \
    -NonInteractive -Verbosity quiet
pkg="$TMP/nuget/packages/Perps.$VERSION"
for f in lib/net45/Perps.dll lib/net45/libperps.so runtimes/linux-x64/native/libperps.so; do
    [[ -f "$pkg/$f" ]] || die "the NuGet package has no $f"
done
notices "$pkg/THIRD-PARTY-NOTICES.txt" perps
ok "the NuGet package's THIRD-PARTY-NOTICES.txt (at its root)"
mcs -nologo -warnaserror+ -reference:"$pkg/lib/net45/Perps.dll" -out:"$TMP/nuget/SigninOrder.exe" \
    "$HERE/csharp/SigninOrder.cs"
(cd "$TMP" && run_flow "C# (Perps.dll from the package folder)" \
    env MONO_PATH="$pkg/lib/net45" mono "$TMP/nuget/SigninOrder.exe" "$BASE_URL" "$PERPS_URL")
grep -qF "loaded from $pkg/lib/net45/libperps.so" "$TMP/log" ||
    die "Perps.dll did not load the package's lib/net45/libperps.so"
# Deployed: the package's lib/net45 files copied beside the program.
mkdir -p "$TMP/nuget/app"
cp "$TMP/nuget/SigninOrder.exe" "$pkg"/lib/net45/* "$TMP/nuget/app/"
(cd "$TMP" && run_flow "C# (deployed beside the program)" mono "$TMP/nuget/app/SigninOrder.exe" "$BASE_URL" "$PERPS_URL")
grep -qF "loaded from $TMP/nuget/app/libperps.so" "$TMP/log" || die "Perps.dll did not load the libperps.so beside it"
# On .NET (CoreCLR, scripts/dotnet-runtime.sh): deployed as `dotnet publish -r linux-x64` lays a
# package out, lib/net45's Perps.dll and runtimes/linux-x64/native's libperps.so beside the
# program, found by .NET's own probing (no LD_LIBRARY_PATH).
mkdir -p "$TMP/nuget/dotnet-app"
cp "$TMP/nuget/SigninOrder.exe" "$pkg/lib/net45/Perps.dll" "$pkg/runtimes/linux-x64/native/libperps.so" "$TMP/nuget/dotnet-app/"
dotnet=$(bash "$ROOT/scripts/dotnet-runtime.sh" "$TMP/nuget/dotnet-app/SigninOrder.exe")
(cd "$TMP" && run_flow "C# on .NET (CoreCLR, published layout)" "$dotnet" exec "$TMP/nuget/dotnet-app/SigninOrder.exe" "$BASE_URL" "$PERPS_URL")
grep -qF "loaded from $TMP/nuget/dotnet-app/libperps.so" "$TMP/log" ||
    die "on .NET, Perps.dll did not load the package's runtimes/linux-x64/native/libperps.so beside it"

# --- Go -----------------------------------------------------------------------------------
step "Go: a module using the binding through go.work, cgo with pkg-config on the unpacked tree"
export GOCACHE="$ROOT/target/go/cache" GOPATH="$TMP/gopath" GOPROXY=off GOFLAGS=-mod=readonly CGO_ENABLED=1
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
mkdir -p "$TMP/go/perps-go" "$TMP/go/app"
# The binding's module as a user has it (a checkout's bindings/go), without its tests.
find bindings/go -maxdepth 1 \( -name '*.go' ! -name '*_test.go' -o -name go.mod \) -exec cp {} "$TMP/go/perps-go/" \;
cp "$HERE/go/main.go" "$TMP/go/app/"
printf 'module example.com/signin_order\n\ngo 1.19\n' >"$TMP/go/app/go.mod"
(
    cd "$TMP/go/app"
    go work init . "$TMP/go/perps-go"  # README's command
    go vet ./...
    CGO_LDFLAGS="-Wl,-rpath,$(pkg-config --variable=libdir perps)" go build -o signin_order .
) || die "go build (go.work, pkg-config)"
! grep -q replace "$TMP/go/app/go.mod" "$TMP/go/app/go.work" || die "a replace crept in"
run_flow "Go (go.work, pkg-config)" "$TMP/go/app/signin_order" "$BASE_URL" "$PERPS_URL"
# Vendored instead: the binding's files copied into a package of the program's own module.
mkdir -p "$TMP/go/vendored/perps"
cp "$TMP/go/perps-go/"*.go "$TMP/go/vendored/perps/"
sed 's|perps "libperps/bindings/go"|perps "example.com/vendored/perps"|' "$HERE/go/main.go" >"$TMP/go/vendored/main.go"
printf 'module example.com/vendored\n\ngo 1.19\n' >"$TMP/go/vendored/go.mod"
(
    cd "$TMP/go/vendored"
    go vet ./...
    CGO_LDFLAGS="-Wl,-rpath,$(pkg-config --variable=libdir perps)" go build -o signin_order .
) || die "go build (vendored copy, pkg-config)"
run_flow "Go (vendored copy, pkg-config)" "$TMP/go/vendored/signin_order" "$BASE_URL" "$PERPS_URL"

step "Go: go vet + go test of the binding, default (installed) link"
PERPS_GO_LINK=installed PERPS_SANDBOX="$PREFIX/bin/perps-sandbox" GOPATH="$ROOT/target/go/path" \
    bash bindings/go/run.sh >"$TMP/log" 2>&1 || { cat "$TMP/log"; die "bindings/go/run.sh (installed)"; }
grep -E '^(linking|ok|---)' "$TMP/log" | grep -v -- '--- PASS' || true
ok "go vet, go test: $(grep -c -- '--- PASS' "$TMP/log") tests passed against the installed library"
unset PKG_CONFIG_PATH GOFLAGS GOPROXY

# --- Rust ---------------------------------------------------------------------------------
step "Rust: a program depending on the crate by path builds the Rust library only"
mkdir -p "$TMP/rust"
cp -r "$HERE/rust/src" "$TMP/rust/"
sed "s|@PERPS_PATH@|$ROOT|" "$HERE/rust/Cargo.toml.in" >"$TMP/rust/Cargo.toml"
cp Cargo.lock "$TMP/rust/"  # the versions libperps is tested with
# The shared target directory reuses the dependencies `make lib` compiled. cargo's JSON
# messages list every file made for each package: for perps, an .rlib and nothing else.
(cd "$TMP/rust" && CARGO_TARGET_DIR="$ROOT/target" cargo build --release --message-format=json-render-diagnostics \
    >"$TMP/cargo.json") || die "cargo build of a program depending on perps"
python3 - "$TMP/cargo.json" <<'EOF' || die "cargo built more than the Rust library of perps"
import json, sys
made = [m for m in map(json.loads, open(sys.argv[1])) if m.get("reason") == "compiler-artifact"
        and m["target"]["name"] == "perps"]
assert made, "no perps artifact in cargo's messages"
for m in made:
    files = m["filenames"]
    print(f"perps: crate types {m['target']['crate_types']}, files {[f.rsplit('/', 1)[-1] for f in files]}")
    assert m["target"]["crate_types"] in (["rlib"], ["lib"]), m["target"]["crate_types"]
    assert all(f.endswith(".rlib") or f.endswith(".rmeta") for f in files), files
EOF
run_flow "Rust (path dependency)" "$ROOT/target/release/signin-order" "$BASE_URL" "$PERPS_URL"
# README's "Use from Rust" snippet is this program's code (between its README markers, unindented).
sed -n '/--- README "Use from Rust" ---/,/--- end of the README snippet ---/p' "$HERE/rust/src/main.rs" |
    sed '1d;$d' | sed 's/^    //' >"$TMP/snippet.program"
awk '/^## Use from Rust/ { section = 1; next }
     section && /^## / { exit }
     section && /^```rust/ { block = 1; next }
     block && /^```/ { exit }
     block { print }' README.md >"$TMP/snippet.readme"
diff -u "$TMP/snippet.readme" "$TMP/snippet.program" || die "README's Rust snippet differs from tests/packages/rust/src/main.rs"
ok "README's \"Use from Rust\" snippet is the program's code"

echo
echo "packages test passed: tarball (pkg-config, CMake), wheel, source install, jar (class path, Maven), NuGet (Mono, .NET), Go, Rust; THIRD-PARTY-NOTICES.txt in each package"
