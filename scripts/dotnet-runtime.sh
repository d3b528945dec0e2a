#!/usr/bin/env bash
# Print the path of a `dotnet` host with .NET's own runtime (CoreCLR), installing it first when
# needed, so the C# binding is tested on .NET as well as on Mono. The only CoreCLR on the
# package registries these machines reach is Microsoft's `dotnetcore2` wheel on PyPI (.NET Core
# 3.1.23: an old runtime, but CoreCLR's P/Invoke marshalling and native library probing, which
# is what differs from Mono); pinned, installed into target/dotnet-runtime.
#
#   dotnet=$(bash scripts/dotnet-runtime.sh [Program.exe...])
#   "$dotnet" exec Program.exe
#
# Each program named gets the Program.runtimeconfig.json beside it that .NET needs to run it
# (netcoreapp3.1; invariant globalization: the runtime needs no ICU, and the binding must not
# depend on a culture either). The assemblies are the ones Mono's mcs builds (.NET Framework
# 4.5 profile): .NET Core loads them through its mscorlib facade.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
env_dir="$ROOT/target/dotnet-runtime"
find_host() { [[ -d "$env_dir" ]] && find "$env_dir" -path '*/dotnetcore2/bin/dotnet' -type f | head -n 1 || true; }
dotnet=$(find_host)
if [[ -z "$dotnet" ]]; then
    rm -rf "$env_dir"
    python3 -m venv "$env_dir" >&2
    "$env_dir/bin/python" -m pip install --disable-pip-version-check -q dotnetcore2==3.1.23 >&2
    dotnet=$(find_host)
    [[ -n "$dotnet" ]] || { echo "dotnet-runtime.sh: the dotnetcore2 wheel has no bin/dotnet" >&2; exit 1; }
fi
chmod +x "$dotnet"
for program in "$@"; do
    cat >"${program%.*}.runtimeconfig.json" <<'JSON'
{"runtimeOptions":{"tfm":"netcoreapp3.1","framework":{"name":"Microsoft.NETCore.App","version":"3.1.0"},
 "configProperties":{"System.Globalization.Invariant":true}}}
JSON
done
echo "$dotnet"
