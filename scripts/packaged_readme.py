"""The README as the C/C++ tarball installs it, in share/doc/perps/, with what it links to.

    python3 scripts/packaged_readme.py DOC_DIR      # scripts/package.sh: DOC_DIR is the
                                                   # staged tree's share/doc/perps

README.md is written for a checkout: its paths (`examples-c/signin_order.c`,
[BENCHMARKS.md](BENCHMARKS.md), `bindings/go`, ...) are relative to the repository root, and
point nowhere in an installed tree. So the tarball gets:
  - beside the README, what of those belongs in a package (SHIPPED): the C and C++ examples
    and the manual of the sandbox venue the tarball installs (bin/perps-sandbox), at the same
    relative paths, so the README's references to them resolve unchanged;
  - a note under the title (NOTE) that says which paths are installed beside it and names the
    repository's own top-level paths the README mentions, as files of the source repository;
  - every Markdown link to a file not shipped turned into its text and the repository path, so
    that no link of the packaged copy is dead.
tests/packages/check_doc_links.py checks the unpacked tarball against this.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Repository paths installed beside the README (a directory: its files under git).
SHIPPED = ["examples-c", "sandbox/README.md"]

NOTE = """\
<!-- packaged-readme: the note scripts/packaged_readme.py adds to the installed copy -->
> **The installed copy.** This README was installed with the C/C++ tarball, in
> `share/doc/perps/`. Beside it are the C and C++ examples, `examples-c/` (their scripts and
> Makefile build from a checkout; the sources build against the installed library as
> [Install](#install) shows), and the sandbox venue's manual, `sandbox/README.md`. The other
> paths it names are files of the libperps source repository, not installed:
> `.ci/`, `BENCHMARKS.md`, `Cargo.lock`, `Cargo.toml`, `bench/`, `benches/`, `bindings/`,
> `build.rs`, `cbindgen.toml`, `cmake/`, `fuzz/`, `include/`, `perps.pc.in`, `scripts/`,
> `src/`, `tests/`. The installed headers are in the prefix's `include/`; the libraries,
> `pkgconfig/perps.pc` and `cmake/perps/` in its `lib/`.
<!-- end packaged-readme -->
"""

LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def tracked(path: str) -> list[str]:
    """The files of `path` under git, without git's own (.gitignore). Only git can tell them
    from what a build left beside them (`make -C examples-c` writes its programs there, which
    .gitignore keeps out): where git cannot list them (not a checkout, no git, a checkout of
    another owner), the tarball is not made, rather than made with those."""
    full = os.path.join(ROOT, path)
    if os.path.isfile(full):
        return [path]
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--", path], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        why = (getattr(e, "stderr", None) or str(e)).strip().splitlines()
        sys.exit(f"packaged_readme.py: `git ls-files {path}` failed ({why[0] if why else e}): only git tells "
                 f"the files of {path} from what a build left there; package from a git checkout")
    files = [f for f in out.split("\0") if f and not os.path.basename(f).startswith(".")]
    if not files:
        sys.exit(f"packaged_readme.py: {path} has no files to ship")
    return sorted(files)


def packaged(readme: str, doc_dir: str) -> str:
    title, sep, rest = readme.partition("\n")
    if not title.startswith("# ") or not sep:
        sys.exit("packaged_readme.py: README.md does not start with a '# ' title line")

    def link(m: re.Match[str]) -> str:
        text, target = m.group(1), m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # a URL or an anchor of the README
            return m.group(0)
        if os.path.exists(os.path.join(doc_dir, target.split("#", 1)[0])):
            return m.group(0)
        shown = target.split("#", 1)[0]
        return f"`{shown}`" if text in (shown, f"`{shown}`") else f"{text} (`{shown}`)"

    return f"{title}\n\n{NOTE}{LINK.sub(link, rest)}"


def main(doc_dir: str) -> int:
    for path in SHIPPED:
        for f in tracked(path):
            dest = os.path.join(doc_dir, f)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(os.path.join(ROOT, f), dest)
            os.chmod(dest, 0o644)  # documentation: the scripts are to read (and copy)
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    out = os.path.join(doc_dir, "README.md")
    with open(out, "w", encoding="utf-8") as f:
        f.write(packaged(readme, doc_dir))
    os.chmod(out, 0o644)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
