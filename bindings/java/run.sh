#!/usr/bin/env bash
# Build the Java binding (package perps, JNA) and its test program with javac, and run the
# tests against the sandbox venue (the test program starts and stops it).
#
#   bash bindings/java/run.sh        # from anywhere; installs JNA (and a JDK) when missing
#
# PERPS_SKIP_BUILD=1 skips the two cargo builds (when the caller has just made them).
# Outputs go to target/bindings/java. The closing line is "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
JNA_JAR=${JNA_JAR:-/usr/share/java/jna.jar}

packages=()
[ -f "$JNA_JAR" ] || packages+=(libjna-java)
command -v javac >/dev/null || packages+=(openjdk-17-jdk-headless)
if [ ${#packages[@]} -gt 0 ]; then
  echo "installing: ${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${packages[@]}" >/dev/null
fi

if [ -z "${PERPS_SKIP_BUILD:-}" ]; then
  make --no-print-directory sandbox lib
fi

out=target/bindings/java
rm -rf "$out/classes"
mkdir -p "$out/classes"
javac -Xlint:all -Werror -encoding UTF-8 --release 17 -cp "$JNA_JAR" -d "$out/classes" \
  bindings/java/src/perps/*.java bindings/java/test/*.java

# jna.library.path: where Native.load("perps") finds libperps.so. LC_ALL=C: the binding must
# not depend on the locale, so run where a default-charset bug would show (US-ASCII).
LC_ALL=C java -Djna.library.path="$PWD/target/release" -cp "$JNA_JAR:$out/classes" \
  PerpsTests "$PWD/target/release/perps-sandbox"

# A libperps of another 0.x minor, for the load-time ABI check: a stand-in exporting only
# perps_version, which answers the next minor (Cargo.toml's version is the binding's). Found
# first, instead of the real one, it must be refused before any call.
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
minor=${version#*.}
minor=${minor%%.*}
other="${version%%.*}.$((minor + 1)).0"
mkdir -p "$out/other-abi"
printf 'const char *perps_version(void) { return "%s"; }\n' "$other" >"$out/other-abi/version.c"
cc -shared -fPIC -o "$out/other-abi/libperps.so" "$out/other-abi/version.c"
echo "--- libperps $other on jna.library.path: refused"
LC_ALL=C java -Djna.library.path="$PWD/$out/other-abi" -cp "$JNA_JAR:$out/classes" \
  PerpsTests --expect-abi-refusal "$other" "$PWD/$out/other-abi/libperps.so"
