"""Check a package's THIRD-PARTY-NOTICES.txt against cargo's own list of the crates compiled in.

    python3 tests/packages/check_notices.py NOTICES-FILE WORKSPACE-PACKAGE...

The crates are those `cargo tree -e normal --target x86_64-unknown-linux-gnu -p P` lists for
each workspace package P whose artifact the package ships (perps: libperps.so/.a; perps-sandbox:
bin/perps-sandbox), run here, independently of scripts/third_party_notices.py, minus the
workspace's own packages, and the Rust standard library's notices (a section of that name
naming the `rustc --version` run here). For each crate the file must have a section headed "<name> <version>"
that holds at least one licence text (a "---- <name> <version>: <file> ----" block whose text
speaks of a licence or a copyright). Exits non-zero naming every crate that is not covered.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKSPACE_PACKAGES = {"perps", "perps-sandbox"}


def compiled_crates(package: str) -> set[tuple[str, str]]:
    out = subprocess.run(
        ["cargo", "tree", "--locked", "--offline", "-e", "normal", "--target", "x86_64-unknown-linux-gnu",
         "-p", package, "--prefix", "none", "--format", "{p}"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    crates = {(m.group(1), m.group(2)) for m in re.finditer(r"^(\S+) v(\S+)", out, re.M)}
    return {c for c in crates if c[0] not in WORKSPACE_PACKAGES}


def sections(text: str) -> dict[str, str]:
    """Each crate's section, by its heading line (the line after a rule of '=')."""
    parts = re.split(r"^={80}\n", text, flags=re.M)[1:]
    return {part.split("\n", 1)[0]: part for part in parts}


def main() -> int:
    path, packages = sys.argv[1], sys.argv[2:]
    with open(path, encoding="utf-8") as f:
        by_heading = sections(f.read())
    expected = set().union(*(compiled_crates(p) for p in packages))
    problems = []
    for name, version in sorted(expected):
        heading = f"{name} {version}"
        section = by_heading.get(heading)
        if section is None:
            problems.append(f"{heading}: no section")
            continue
        blocks = re.split(rf"^---- {re.escape(heading)}: .* ----\n", section, flags=re.M)[1:]
        if not any(re.search(r"licen[cs]e|copyright", b, re.I) for b in blocks):
            problems.append(f"{heading}: no licence text")
    # The standard library's section: the toolchain's notices, of the rustc that builds here.
    rustc = subprocess.run(["rustc", "--version"], check=True, capture_output=True, text=True).stdout.strip()
    std = by_heading.get("The Rust standard library", "")
    if f"compiled in by: {rustc}\n" not in std or "Rust Standard Library" not in std or "Permission is hereby granted" not in std:
        problems.append(f"The Rust standard library: no section with {rustc}'s COPYRIGHT-library.html")
    if problems:
        print(f"{path}: {len(problems)} crate(s) of {' + '.join(packages)} not covered:", file=sys.stderr)
        print("\n".join("  " + p for p in problems), file=sys.stderr)
        return 1
    print(f"{len(expected)} crates of {' + '.join(packages)} (cargo tree), each with its licence text, "
          f"in {os.path.basename(path)} ({os.path.getsize(path)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
