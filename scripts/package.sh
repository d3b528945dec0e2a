#!/usr/bin/env bash
# Build every package of libperps into dist/, from a clean clone:
#   perps-<v>-linux-x86_64.tar.gz                  C/C++: the install tree (make install):
#                                                  include/, lib/ (libperps.so.<v>, SONAME
#                                                  libperps.so.<soversion>, symlinks, libperps.a,
#                                                  pkgconfig/perps.pc, cmake/perps/), bin/perps-sandbox,
#                                                  share/doc/perps/ (README.md, examples-c/,
#                                                  sandbox/README.md: scripts/packaged_readme.py)
#   perps-<v>-py3-none-manylinux_<glibc>_x86_64.manylinux2014_x86_64.whl
#                                                  Python: the package with libperps.so inside
#                                                  (the legacy alias, for pip < 20.3, when <glibc>
#                                                  is 2_17; see bindings/python/hatch_build.py)
#   perps-<v>.jar, perps-<v>.pom                   Java: the classes and linux-x86-64/libperps.so
#                                                  (JNA's class-path location); the Maven POM
#   Perps.<v>.nupkg                                C#: lib/net45/Perps.dll and libperps.so
#                                                  (Mono), runtimes/linux-x64/native/libperps.so (.NET)
#   SHA256SUMS
# Each package carries THIRD-PARTY-NOTICES.txt (scripts/third_party_notices.py): the licences
# of the crates compiled into what it ships (the tarball: the library's and the sandbox's;
# the others: the library's), in share/doc/perps/ beside the README, the wheel's
# .dist-info/licenses/, the jar's META-INF/ and the nupkg's root.
# Every package carries the same libperps.so, built by `make lib GLIBC=2.17` (glibc 2.17 and
# newer; PERPS_GLIBC=host builds `make lib`'s target/release/libperps.so for this machine's).
# tests/packages/run.sh installs each one and uses it against the sandbox venue.
#
#   bash scripts/package.sh          # from anywhere; installs missing Debian packages
#
# Needs the network only for what the ecosystems fetch themselves: the Rust crates (cargo) and
# the wheel's build backend (hatchling, from PyPI, in pip's isolated build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CARGO_TERM_COLOR=never
JNA_JAR=${JNA_JAR:-/usr/share/java/jna.jar}

step() { printf '\n=== package: %s ===\n' "$*"; }
die() { echo "package.sh: $*" >&2; exit 1; }

VERSION=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
[[ -n "$VERSION" ]] || die "no version in Cargo.toml"
MAJOR=${VERSION%%.*}
MINOR=${VERSION#*.}
MINOR=${MINOR%%.*}
if [[ "$MAJOR" == 0 ]]; then SOVERSION="0.$MINOR"; else SOVERSION="$MAJOR"; fi
[[ "$(uname -m)" == x86_64 ]] || die "the packages are for Linux x86-64; this is $(uname -m)"

step "tools"
packages=()
command -v objdump >/dev/null || packages+=(binutils)
command -v javac >/dev/null || packages+=(openjdk-17-jdk-headless)
[[ -f "$JNA_JAR" ]] || packages+=(libjna-java)
command -v mcs >/dev/null || packages+=(mono-mcs)
command -v nuget >/dev/null || packages+=(nuget)
python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
if [[ ${#packages[@]} -gt 0 ]]; then
    echo "installing: ${packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${packages[@]}" >/dev/null
fi

step "versions: the bindings are made for libperps $VERSION (SONAME libperps.so.$SOVERSION)"
# Each binding compares this constant with the loaded library's perps_version() at load time.
py_version=$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' bindings/python/perps/__init__.py)
[[ "$py_version" == "$VERSION" ]] ||
    die "bindings/python/perps/__init__.py has __version__ $py_version, Cargo.toml $VERSION"
echo "ok: Python __version__ $py_version"
cs_version=$(sed -n 's/.*public const string BindingVersion = "\([^"]*\)";.*/\1/p' bindings/csharp/Perps.Api.cs)
[[ "$cs_version" == "$VERSION" ]] ||
    die "bindings/csharp/Perps.Api.cs has Library.BindingVersion $cs_version, Cargo.toml $VERSION"
echo "ok: C# Library.BindingVersion $cs_version"
java_version=$(sed -n 's/.*public static final String BINDING_VERSION = "\([^"]*\)";.*/\1/p' bindings/java/src/perps/Perps.java)
[[ "$java_version" == "$VERSION" ]] ||
    die "bindings/java/src/perps/Perps.java has BINDING_VERSION $java_version, Cargo.toml $VERSION"
echo "ok: Java Perps.BINDING_VERSION $java_version"

# The packages are built for glibc $GLIBC and newer (manylinux2014), not for this machine's own
# glibc: zig links them (cargo-zigbuild, pinned, from PyPI, in target/zig-tools). PERPS_GLIBC=host
# builds against the build machine's glibc instead (then the packages need that glibc or newer).
GLIBC=${PERPS_GLIBC:-2.17}
make_vars=()
if [[ "$GLIBC" != host ]]; then
    [[ "$GLIBC" =~ ^2\.[0-9]+$ ]] || die "PERPS_GLIBC is '$GLIBC': expected a version such as 2.17, or host"
    step "tools: zig as the linker, for glibc $GLIBC (cargo-zigbuild in target/zig-tools)"
    zig_tools="$ROOT/target/zig-tools"
    if ! "$zig_tools/bin/cargo-zigbuild" --version >/dev/null 2>&1; then
        rm -rf "$zig_tools"
        python3 -m venv "$zig_tools"
        "$zig_tools/bin/python" -m pip install --disable-pip-version-check -q ziglang==0.17.1 cargo-zigbuild==0.24.1
    fi
    "$zig_tools/bin/cargo-zigbuild" --version
    # cargo-zigbuild runs zig as `python3 -m ziglang`: the tools' own python3 comes first.
    export PATH="$zig_tools/bin:$PATH"
    make_vars=(GLIBC="$GLIBC" ZIGBUILD="$zig_tools/bin/cargo-zigbuild")
fi

step "build: make sandbox lib ${make_vars[*]}"
make --no-print-directory "${make_vars[@]}" sandbox lib
BUILD_DIR=$(make --no-print-directory -s "${make_vars[@]}" build-dir)
LIB="$ROOT/$BUILD_DIR/libperps.so"
newest_glibc=$(objdump -T "$LIB" "$ROOT/$BUILD_DIR/perps-sandbox" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
echo "the library and the sandbox need glibc $newest_glibc or newer"
if [[ "$GLIBC" != host ]]; then
    [[ "$(printf '%s\n' "$newest_glibc" "$GLIBC" | sort -V | tail -n 1)" == "$GLIBC" ]] ||
        die "built for glibc $GLIBC, but a symbol needs glibc $newest_glibc"
fi
soname=$(objdump -p "$LIB" | sed -n 's/^ *SONAME *//p')
[[ "$soname" == "libperps.so.$SOVERSION" ]] || die "$LIB has SONAME '$soname', expected libperps.so.$SOVERSION"

rm -rf dist
mkdir -p dist
WORK="$ROOT/target/package"
rm -rf "$WORK"
mkdir -p "$WORK"
# Reproducible archives: every file dated at the last commit (or 2020-01-01 outside git).
# Not exported: cargo would see a changed environment and rebuild the library.
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 1577836800)}"

# --- third-party notices -------------------------------------------------------------------
step "THIRD-PARTY-NOTICES.txt: the licences of the crates compiled in (scripts/third_party_notices.py)"
# Two lists: the library's crates (every package ships libperps.so), and those plus the
# sandbox's (the tarball also ships bin/perps-sandbox). The crates are on disk: the build
# above fetched them, and the script asks cargo offline.
NOTICES_LIB="$WORK/notices/library/THIRD-PARTY-NOTICES.txt"
NOTICES_ALL="$WORK/notices/library+sandbox/THIRD-PARTY-NOTICES.txt"
mkdir -p "$(dirname "$NOTICES_LIB")" "$(dirname "$NOTICES_ALL")"
python3 scripts/third_party_notices.py --target x86_64-unknown-linux-gnu --package perps --output "$NOTICES_LIB"
python3 scripts/third_party_notices.py --target x86_64-unknown-linux-gnu --package perps --package perps-sandbox \
    --output "$NOTICES_ALL"

# --- C/C++ ------------------------------------------------------------------------------
name="perps-$VERSION-linux-x86_64"
step "C/C++: dist/$name.tar.gz"
# make install into a staging directory; perps.pc's prefix is its own location, so the tree
# works wherever it is unpacked (the CMake files are relative to themselves anyway).
make --no-print-directory "${make_vars[@]}" install PREFIX=/usr/local DESTDIR="$WORK/stage" PC_PREFIX='$${pcfiledir}/../..' >/dev/null
mv "$WORK/stage/usr/local" "$WORK/$name"
# The README with what it links to that belongs in a package beside it (the C/C++ examples, the
# sandbox's manual), and a note marking its other paths as the source repository's.
mkdir -p "$WORK/$name/share/doc/perps"
python3 scripts/packaged_readme.py "$WORK/$name/share/doc/perps"
# Beside the README, not at the tree's top: the README's install unpacks the tree into /usr/local.
install -m 644 "$NOTICES_ALL" "$WORK/$name/share/doc/perps/THIRD-PARTY-NOTICES.txt"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -C "$WORK" -czf "dist/$name.tar.gz" "$name"
tar -tzvf "dist/$name.tar.gz" | awk '{print "  " $1 " " $6 ($7 ? " " $7 " " $8 : "")}'

# --- Python -------------------------------------------------------------------------------
step "Python: the wheel (hatchling; libperps.so inside, tagged from its glibc needs)"
python3 -m venv "$WORK/pyenv"
"$WORK/pyenv/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip
# hatchling takes pyproject.toml's license-files from the project directory into the wheel's
# .dist-info/licenses/: the notices are there while the wheel is built (a source install has none).
py_notices=bindings/python/THIRD-PARTY-NOTICES.txt
trap 'rm -f "$ROOT/$py_notices"' EXIT
cp "$NOTICES_LIB" "$py_notices"
SOURCE_DATE_EPOCH="$epoch" PERPS_WHEEL_LIBRARY="$LIB" "$WORK/pyenv/bin/python" -m pip wheel --disable-pip-version-check -q \
    --no-deps -w dist bindings/python
rm -f "$py_notices"
wheel=$(ls dist/perps-"$VERSION"-py3-none-manylinux_*_x86_64.whl)
python3 -m zipfile -l "$wheel" | sed 's/^/  /'

# --- Java ---------------------------------------------------------------------------------
step "Java: dist/perps-$VERSION.jar (linux-x86-64/libperps.so inside) and dist/perps-$VERSION.pom"
mkdir -p "$WORK/java/classes" "$WORK/java/native/linux-x86-64" "$WORK/java/meta/META-INF"
cp "$NOTICES_LIB" "$WORK/java/meta/META-INF/THIRD-PARTY-NOTICES.txt"
javac -Xlint:all -Werror -encoding UTF-8 --release 17 -cp "$JNA_JAR" -d "$WORK/java/classes" \
    bindings/java/src/perps/*.java
cp "$LIB" "$WORK/java/native/linux-x86-64/libperps.so"
cat >"$WORK/java/MANIFEST.MF" <<EOF
Implementation-Title: perps
Implementation-Version: $VERSION
Automatic-Module-Name: perps
EOF
jar --create --file "dist/perps-$VERSION.jar" --manifest "$WORK/java/MANIFEST.MF" \
    --date="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)" \
    -C "$WORK/java/classes" . -C "$WORK/java/native" . -C "$WORK/java/meta" META-INF/THIRD-PARTY-NOTICES.txt
jna_version=$(unzip -p "$JNA_JAR" META-INF/MANIFEST.MF | sed -n 's/^Bundle-Version: *\([0-9.]*\).*/\1/p')
[[ -n "$jna_version" ]] || die "no Bundle-Version in $JNA_JAR"
# The POM depends on the JNA the jar is built (and bindings/java/run.sh tests it) with, and the
# README names that version to Maven users: they must agree, or the README is updated first.
readme_jna=$(sed -n 's/.*`net\.java\.dev\.jna:jna:\([0-9.]*\)`.*/\1/p' README.md)
[[ "$readme_jna" == "$jna_version" ]] ||
    die "$JNA_JAR is JNA $jna_version, but README.md says the POM brings net.java.dev.jna:jna:${readme_jna:-?}: update README.md (\"Use from Java\") or build with that JNA (JNA_JAR=...)"
sed -e "s/@VERSION@/$VERSION/g" -e "s/@JNA_VERSION@/$jna_version/g" bindings/java/pom.xml.in >"dist/perps-$VERSION.pom"
jar --list --file "dist/perps-$VERSION.jar" | grep -v '/$' | sed 's/^/  /'
echo "  POM: libperps:perps:$VERSION, depends on net.java.dev.jna:jna:$jna_version"

# --- C# -----------------------------------------------------------------------------------
step "C#: dist/Perps.$VERSION.nupkg (Mono's mcs, Debian's nuget)"
nupkg="$WORK/nuget"
mkdir -p "$nupkg/lib/net45" "$nupkg/runtimes/linux-x64/native"
cat >"$WORK/AssemblyInfo.cs" <<EOF
[assembly: System.Reflection.AssemblyVersion("$VERSION.0")]
[assembly: System.Reflection.AssemblyInformationalVersion("$VERSION")]
[assembly: System.Reflection.AssemblyTitle("libperps for C#")]
EOF
# -nowarn:1591,1573: members or parameters without a doc comment are no error in the docs file.
mcs -nologo -warnaserror+ -nowarn:1591,1573 -optimize+ -target:library -deterministic \
    -doc:"$nupkg/lib/net45/Perps.xml" -out:"$nupkg/lib/net45/Perps.dll" \
    bindings/csharp/Perps.cs bindings/csharp/Perps.Api.cs bindings/csharp/Perps.Secrets.cs "$WORK/AssemblyInfo.cs"
cp "$LIB" "$nupkg/runtimes/linux-x64/native/libperps.so"
cp bindings/csharp/Perps.nuspec "$nupkg/"
cp "$NOTICES_LIB" "$nupkg/THIRD-PARTY-NOTICES.txt"
nuget pack "$nupkg/Perps.nuspec" -Version "$VERSION" -BasePath "$nupkg" -OutputDirectory dist \
    -NonInteractive -Verbosity quiet
[[ -f "dist/Perps.$VERSION.nupkg" ]] || die "nuget pack made no dist/Perps.$VERSION.nupkg"
# nuget pack dates every entry now (it has no option for another date): rewritten, the same
# entries in the same order, each dated at the last commit like the other archives.
python3 - "dist/Perps.$VERSION.nupkg" "$epoch" <<'EOF_PY'
import os, sys, time, zipfile
path, epoch = sys.argv[1], int(sys.argv[2])
date = time.gmtime(max(epoch, 315532800))[:6]  # a zip date starts in 1980
with zipfile.ZipFile(path) as src, zipfile.ZipFile(path + ".tmp", "w") as dst:
    for old in src.infolist():
        new = zipfile.ZipInfo(old.filename, date_time=date)
        new.compress_type, new.external_attr, new.create_system = old.compress_type, old.external_attr, old.create_system
        dst.writestr(new, src.read(old))
os.replace(path + ".tmp", path)
EOF_PY
python3 -m zipfile -l "dist/Perps.$VERSION.nupkg" | sed 's/^/  /'

step "dist/: reproducible (every archive entry dated at the last commit)"
# Two builds of a commit make the same bytes only if no archive records the time it was made.
python3 - "$epoch" dist/*.whl dist/*.jar dist/*.nupkg <<'EOF_PY' || die "an archive entry is not dated at the last commit"
import sys, time, zipfile
date = time.gmtime(max(int(sys.argv[1]), 315532800))[:6]
date = date[:5] + (date[5] // 2 * 2,)  # a zip date counts seconds in twos
bad = [f"{path}: {i.filename} {i.date_time}" for path in sys.argv[2:]
       for i in zipfile.ZipFile(path).infolist() if i.date_time != date]
print("\n".join(bad) or f"ok: every entry of {len(sys.argv) - 2} zip archives dated {date}")
sys.exit(1 if bad else 0)
EOF_PY
tar -tzvf "dist/$name.tar.gz" --full-time --utc | awk -v d="$(date -u -d "@$epoch" '+%F %T')" '$4 " " $5 != d { print; bad = 1 } END { exit bad }' ||
    die "an entry of dist/$name.tar.gz is not dated at the last commit"

step "dist/"
(cd dist && sha256sum -- * >SHA256SUMS && ls -l)
