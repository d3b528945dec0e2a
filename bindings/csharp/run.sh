#!/usr/bin/env bash
# Build the C# binding (Perps.dll) and its test program with Mono's mcs, and run the tests
# against the sandbox venue (the test program starts and stops it) on Mono, then on .NET's
# CoreCLR (scripts/dotnet-runtime.sh).
#
#   bash bindings/csharp/run.sh        # from anywhere; installs Mono when it is missing
#
# PERPS_SKIP_BUILD=1 skips the two cargo builds (when the caller has just made them).
# Outputs go to target/bindings/csharp. The closing line is "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v mcs >/dev/null || ! command -v mono >/dev/null; then
  echo "installing: mono-mcs mono-runtime"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 mono-mcs mono-runtime >/dev/null
fi

if [ -z "${PERPS_SKIP_BUILD:-}" ]; then
  make --no-print-directory sandbox lib
fi

out=target/bindings/csharp
mkdir -p "$out"
mcs -nologo -warnaserror+ -target:library -out:"$out/Perps.dll" bindings/csharp/Perps.cs bindings/csharp/Perps.Api.cs bindings/csharp/Perps.Secrets.cs
mcs -nologo -warnaserror+ -reference:"$out/Perps.dll" -out:"$out/PerpsTests.exe" bindings/csharp/PerpsTests.cs \
  bindings/csharp/PerpsTests.Trading.cs bindings/csharp/PerpsTests.Streams.cs bindings/csharp/PerpsTests.Funding.cs \
  bindings/csharp/PerpsTests.Secrets.cs bindings/csharp/PerpsTests.SecretForms.cs bindings/csharp/PerpsTests.Headers.cs bindings/csharp/PerpsTests.Offline.cs

# A libperps of another 0.x minor, for the load-time ABI check: a stand-in exporting only
# perps_version, which answers the next minor (Cargo.toml's version is the binding's). On the
# loader's path instead of the real one, the binding must refuse it before any call.
version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)
minor=${version#*.}
minor=${minor%%.*}
other="${version%%.*}.$((minor + 1)).0"
mkdir -p "$out/other-abi"
printf 'const char *perps_version(void) { return "%s"; }\n' "$other" >"$out/other-abi/version.c"
cc -shared -fPIC -o "$out/other-abi/libperps.so" "$out/other-abi/version.c"

# [DllImport("perps")] resolves to libperps.so through LD_LIBRARY_PATH. LC_ALL=C: the binding
# must not depend on the locale, so run where a default-charset bug would show (ASCII).
echo "--- on Mono"
LC_ALL=C LD_LIBRARY_PATH="$PWD/target/release${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  mono --debug "$out/PerpsTests.exe" "$PWD/target/release/perps-sandbox"
echo "--- on Mono, libperps $other on the loader's path: refused"
LC_ALL=C LD_LIBRARY_PATH="$PWD/$out/other-abi" \
  mono --debug "$out/PerpsTests.exe" --expect-abi-refusal "$other" "$PWD/$out/other-abi/libperps.so"

# The same assemblies on .NET's runtime, CoreCLR (scripts/dotnet-runtime.sh: .NET Core 3.1 from
# PyPI), whose marshalling and library probing are not Mono's.
dotnet=$(bash scripts/dotnet-runtime.sh "$out/PerpsTests.exe")
echo "--- on .NET (CoreCLR $("$dotnet" --list-runtimes | sed -n 's/^Microsoft.NETCore.App \([^ ]*\).*/\1/p'))"
LC_ALL=C LD_LIBRARY_PATH="$PWD/target/release${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  "$dotnet" exec "$out/PerpsTests.exe" "$PWD/target/release/perps-sandbox"
echo "--- on .NET, libperps $other on the loader's path: refused"
LC_ALL=C LD_LIBRARY_PATH="$PWD/$out/other-abi" \
  "$dotnet" exec "$out/PerpsTests.exe" --expect-abi-refusal "$other" "$PWD/$out/other-abi/libperps.so"
