#!/usr/bin/env python3
"""Write THIRD-PARTY-NOTICES.txt: the licences of the crates compiled into a package.

    python3 scripts/third_party_notices.py --package perps [--package perps-sandbox] \
        [--target x86_64-unknown-linux-gnu] --output FILE

Every package of scripts/package.sh ships machine code compiled from third-party crates, and
their licences (MIT, Apache-2.0, BSD-3-Clause, ISC, ...) require a binary distribution to
carry their copyright notices and licence texts. This script writes them:

- Which crates: the normal dependencies of each --package for --target, as
  `cargo tree -e normal --target T -p P --locked --offline` resolves them: the features of
  that package alone (not the workspace's union, which `cargo metadata` resolves), so the
  list is the crates `make lib` / `make sandbox` compile, not more. Build dependencies (cc,
  ...) are left out: none of their code is in the artifact. Procedural macros and what they
  use (serde_derive, syn, ...) are kept: the code they generate is compiled in. The
  workspace's own packages (perps, perps-sandbox) are not third-party.
- Where each crate's source is: `cargo metadata --format-version 1 --locked --offline`
  (manifest_path; for the vendored tiny_http, sandbox/vendor/tiny_http).
- What is written for each crate: name, version, the licence expression its Cargo.toml
  declares, and the verbatim bytes of every file in its source directory, at any depth,
  named LICENSE*, LICENCE*, UNLICENSE*, COPYING*, NOTICE* or COPYRIGHT* (any case); the files
  in subdirectories are those of bundled code (ring's BoringSSL-derived C and assembly,
  its fiat-crypto code).
- Last, the Rust standard library's notices (std, core, alloc and what they use are compiled
  into every artifact, and no Cargo.lock names them): the toolchain's own
  share/doc/rust/COPYRIGHT-library.html, verbatim, under the `rustc --version` that builds.

A crate with no such file fails the script, naming it, unless LICENCE_EXCEPTIONS below says
where its text comes from instead. The output is deterministic (crates sorted by name, then
version; no dates, no absolute paths), so the packages stay reproducible.

CARGO names the cargo command (default: cargo); the workspace is the one this script is in
unless --manifest-path names another Cargo.toml.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import textwrap

# Crates with no licence file in their published source (crates.io package). Each entry says
# why, and which file on disk stands in for it: the same SPDX licence text, copied verbatim
# from another crate's source (never typed in), recorded in the output as such. Keys are
# (name, version): a new version must be checked again. Empty today: every crate compiled
# into a package ships its own files. An entry looks like this:
#
#   ("some-crate", "1.2.3"): {
#       "why": "the crates.io package omits LICENSE-MIT (the repository has it, not on disk)",
#       "from": [("other-crate", "4.5.6", "LICENSE-MIT")],  # (crate, version, relative path)
#   },
LICENCE_EXCEPTIONS: dict[tuple[str, str], dict[str, object]] = {}

# The files that carry a licence, a notice or a copyright (matched on the file's name).
LICENCE_FILE = re.compile(r"^(licen[cs]e|unlicense|copying|notice|copyright)", re.IGNORECASE)

RULE = "=" * 80


class NoticeError(Exception):
    """A crate whose licence text cannot be written (the message names it)."""


def version_key(version: str) -> tuple[tuple[int, object], ...]:
    """Sort 0.9.6 before 0.10.2 (numerically), and any text part after the numbers."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.+-]", version))


def run_cargo(args: list[str]) -> str:
    cargo = os.environ.get("CARGO", "cargo")
    try:
        done = subprocess.run([cargo, *args], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        raise NoticeError(f"`{cargo} {' '.join(args)}` failed:\n{e.stderr.strip()}") from None
    return done.stdout


def linked_crates(manifest: str, package: str, target: str) -> set[tuple[str, str]]:
    """(name, version) of every crate in `package`'s normal dependency tree, itself included."""
    out = run_cargo(["tree", "--manifest-path", manifest, "--locked", "--offline", "-e", "normal",
                     "--target", target, "-p", package, "--prefix", "none", "--format", "{p}"])
    crates = set()
    for line in out.splitlines():
        # "ring v0.17.14", "tiny_http v0.12.0 (/path)", "serde_derive v1.0.229 (proc-macro)", "... (*)"
        m = re.match(r"^(\S+) v(\S+)", line)
        if m:
            crates.add((m.group(1), m.group(2)))
        elif line.strip():
            raise NoticeError(f"cargo tree printed a line this script cannot read: {line!r}")
    if not crates:
        raise NoticeError(f"cargo tree lists no crate for package {package}")
    return crates


def licence_files(directory: str) -> list[str]:
    """The licence/notice/copyright files under a crate's source directory, relative to it,
    sorted; a nested crate (a subdirectory with its own Cargo.toml) and target/ are skipped."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "target" and d != ".git"
                         and not os.path.isfile(os.path.join(root, d, "Cargo.toml")))
        for name in files:
            path = os.path.join(root, name)
            if LICENCE_FILE.match(name) and os.path.isfile(path):
                found.append(os.path.relpath(path, directory).replace(os.sep, "/"))
    return sorted(found)


def crate_source(package: dict, workspace_root: str) -> str:
    """Where the crate comes from, without this machine's paths."""
    source = package.get("source")
    if source is None:
        where = os.path.relpath(os.path.dirname(package["manifest_path"]), workspace_root)
        return f"a copy in this project's repository, {where}/"
    if source.startswith("registry+https://github.com/rust-lang/crates.io-index"):
        return "crates.io"
    return re.sub(r"#.*", "", source)  # git+URL?rev#commit: the commit is in Cargo.lock


def crate_texts(package: dict, by_key: dict, exceptions: dict) -> list[tuple[str, bytes]]:
    """(label, verbatim bytes) of each licence text of one crate."""
    name, version = package["name"], package["version"]
    directory = os.path.dirname(package["manifest_path"])
    files = licence_files(directory)
    declared = package.get("license_file")  # Cargo.toml's `license-file`, any name
    if declared and os.path.normpath(declared) not in map(os.path.normpath, files):
        files.append(declared)
    exception = exceptions.get((name, version))
    if files and exception is not None:
        raise NoticeError(f"{name} {version} has licence files now ({', '.join(files)}): "
                          "remove its entry from LICENCE_EXCEPTIONS in scripts/third_party_notices.py")
    texts = []
    for relative in files:
        with open(os.path.join(directory, relative), "rb") as f:
            texts.append((relative, f.read()))
    if exception is not None:
        for other, other_version, relative in exception["from"]:
            donor = by_key.get((other, other_version))
            if donor is None:
                raise NoticeError(f"{name} {version}: its LICENCE_EXCEPTIONS entry takes {relative} from "
                                  f"{other} {other_version}, which is not in Cargo.lock")
            path = os.path.join(os.path.dirname(donor["manifest_path"]), relative)
            if not os.path.isfile(path):
                raise NoticeError(f"{name} {version}: its LICENCE_EXCEPTIONS entry takes {relative} from "
                                  f"{other} {other_version}, which has no such file on disk")
            with open(path, "rb") as f:
                label = f"{relative}, copied from {other} {other_version} ({exception['why']})"
                texts.append((label, f.read()))
    if not texts:
        raise NoticeError(
            f"{name} {version} ({package.get('license') or 'no licence declared'}) has no licence file "
            f"(LICENSE*, LICENCE*, COPYING*, NOTICE*, COPYRIGHT*) in {directory}: add an entry to "
            "LICENCE_EXCEPTIONS in scripts/third_party_notices.py naming where its text comes from")
    return texts


def rust_standard_library() -> tuple[str, bytes]:
    """The Rust standard library's notices, as the toolchain that builds the packages ships
    them: its version (`rustc --version`) and share/doc/rust/COPYRIGHT-library.html (part of
    the rustc component, so on every toolchain), verbatim. std, core and alloc, and the crates
    they use (hashbrown, gimli, addr2line, miniz_oxide, rustc-demangle, compiler_builtins with
    LLVM's compiler-rt), are compiled into every artifact, and no Cargo.lock names them."""
    rustc = os.environ.get("RUSTC", "rustc")
    try:
        version = subprocess.run([rustc, "--version"], check=True, capture_output=True, text=True).stdout.strip()
        sysroot = subprocess.run([rustc, "--print", "sysroot"], check=True, capture_output=True,
                                 text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as e:
        raise NoticeError(f"cannot ask {rustc} for its version and sysroot: {e}") from e
    path = os.path.join(sysroot, "share", "doc", "rust", "COPYRIGHT-library.html")
    try:
        with open(path, "rb") as f:
            return version, f.read()
    except OSError as e:
        raise NoticeError(f"the Rust standard library's notices are not where the toolchain keeps them: {e}") from e


def notices(manifest: str, packages: list[str], target: str, exceptions: dict,
            std_library: tuple[str, bytes] | None = None) -> bytes:
    """The whole file, for the crates compiled into `packages`, and `std_library`'s notices
    (`rust_standard_library`) after them when given."""
    meta = json.loads(run_cargo(["metadata", "--manifest-path", manifest, "--format-version", "1",
                                 "--locked", "--offline", "--filter-platform", target]))
    by_key: dict[tuple[str, str], dict] = {}
    ambiguous = set()
    for p in meta["packages"]:
        key = (p["name"], p["version"])
        if key in by_key:
            ambiguous.add(key)
        by_key[key] = p
    own = {(p["name"], p["version"]) for p in meta["packages"] if p["id"] in meta["workspace_members"]}
    missing_packages = sorted(set(packages) - {n for n, _ in own})
    if missing_packages:
        raise NoticeError(f"not a package of this workspace: {', '.join(missing_packages)}")

    used_by: dict[tuple[str, str], list[str]] = {}
    for package in packages:
        for key in linked_crates(manifest, package, target) - own:
            if key not in by_key:
                raise NoticeError(f"{key[0]} {key[1]} is in cargo tree but not in cargo metadata")
            if key in ambiguous:
                raise NoticeError(f"{key[0]} {key[1]} comes from two sources in Cargo.lock: "
                                  "this script cannot tell whose licence files to take")
            used_by.setdefault(key, []).append(package)
    crates = sorted(used_by, key=lambda k: (k[0], version_key(k[1])))

    root = meta["workspace_root"]
    intro = (
        f"This package contains machine code compiled from the {len(crates)} third-party Rust crates "
        f"listed below: the normal dependencies of {', '.join(packages)} for {target}, at the "
        "versions Cargo.lock pins (procedural macros included: the code they generate is compiled "
        "in). For each crate: its name, version, the licence expression its Cargo.toml declares, "
        "and the verbatim contents of every licence, notice and copyright file of its source "
        "(those of C and assembly code a crate bundles included), in the sections after this list."
    )
    out = ["THIRD-PARTY SOFTWARE NOTICES AND LICENCES\n\n", textwrap.fill(intro, 92) + "\n\n"]
    width = max(len(f"{n} {v}") for n, v in crates)
    licences = {k: by_key[k].get("license") or "(no licence expression)" for k in crates}
    licence_width = max(map(len, licences.values()))
    for key in crates:
        line = f"  {key[0] + ' ' + key[1]:<{width}}  {licences[key]:<{licence_width}}"
        if len(packages) > 1:
            line += f"  [{', '.join(used_by[key])}]"
        out.append(line.rstrip() + "\n")
    text = "".join(out).encode()
    for key in crates:
        p = by_key[key]
        texts = crate_texts(p, by_key, exceptions)
        head = [
            f"\n{RULE}\n",
            f"{key[0]} {key[1]}\n",
            f"licence: {p.get('license') or '(none declared: see the files below)'}\n",
            f"source: {crate_source(p, root)}\n",
            f"compiled into: {', '.join(used_by[key])}\n",
            f"files: {', '.join(label.split(',')[0] for label, _ in texts)}\n",
        ]
        text += "".join(head).encode()
        for label, body in texts:
            text += f"\n---- {key[0]} {key[1]}: {label} ----\n".encode()
            text += body if body.endswith(b"\n") else body + b"\n"
    if std_library is not None:
        version, html = std_library
        text += (f"\n{RULE}\nThe Rust standard library\ncompiled in by: {version}\n"
                 "files: COPYRIGHT-library.html (HTML, as the toolchain ships it in share/doc/rust/)\n"
                 f"\n---- The Rust standard library: COPYRIGHT-library.html ----\n").encode()
        text += html if html.endswith(b"\n") else html + b"\n"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--package", action="append", required=True,
                        help="a workspace package whose artifact the package ships (repeatable)")
    parser.add_argument("--target", default="x86_64-unknown-linux-gnu")
    parser.add_argument("--manifest-path",
                        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Cargo.toml"))
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    try:
        text = notices(os.path.abspath(args.manifest_path), args.package, args.target, LICENCE_EXCEPTIONS,
                       rust_standard_library())
    except NoticeError as e:
        print(f"third_party_notices.py: {e}", file=sys.stderr)
        return 1
    with open(args.output, "wb") as f:
        f.write(text)
    count = re.search(rb"compiled from the (\d+) third-party", text).group(1).decode()
    print(f"{args.output}: {count} crates of {' + '.join(args.package)}, {len(text)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
