"""Every path the tarball's README names resolves in the installed tree, or is marked as a
file of the source repository.

    python3 check_doc_links.py PREFIX      # the unpacked tarball (tests/packages/run.sh)

In PREFIX/share/doc/perps/README.md:
  - a Markdown link to a relative target must name a file or directory that exists beside the
    README, inside PREFIX (a dead link is a miss, even to a repository path);
  - a path naming one of the repository's top-level files or directories (`examples-c/...`,
    `bindings/go`, `BENCHMARKS.md`: from `git ls-files` of this checkout) must exist beside the
    README, or its top-level name must be among those the packaged-readme note (between its
    <!-- packaged-readme --> markers) lists as files of the source repository (a name installed
    beside the README, such as `examples-c/`, marks nothing).
Exits non-zero naming each miss.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")
# A path: a name, then /-separated parts (globs kept), not inside a longer path or a URL.
PATH = re.compile(r"(?<![\w./-])([A-Za-z0-9_.-]+)((?:/[\w.+*-]*)*)")


def repository_names() -> set[str]:
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True, capture_output=True, text=True).stdout
    return {f.split("/", 1)[0] for f in out.split("\0") if f}


def inside(root: str, path: str) -> bool:
    root, path = os.path.realpath(root), os.path.realpath(path)
    return path == root or path.startswith(root + os.sep)


def problems(prefix: str) -> list[str]:
    doc_dir = os.path.join(prefix, "share", "doc", "perps")
    with open(os.path.join(doc_dir, "README.md"), encoding="utf-8") as f:
        text = f.read()
    found = []
    note = re.search(r"<!-- packaged-readme\b.*?-->(.*?)<!-- end packaged-readme -->", text, re.S)
    # A name the note shows that is installed beside the README (`examples-c/`) marks nothing:
    # a path under it must then be installed too.
    marked = {m.rstrip("/") for m in re.findall(r"`([^`\s]+)`", note.group(1))} if note else set()
    marked = {m for m in marked if not os.path.exists(os.path.join(doc_dir, m))}
    if not note:
        found.append("no packaged-readme note: nothing is marked as a path of the source repository")

    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:|#", target):
            continue  # a URL, or an anchor of the README itself
        path = os.path.join(doc_dir, target.split("#", 1)[0])
        if not os.path.exists(path) or not inside(prefix, path):
            found.append(f"the link to {target!r} resolves to nothing in the installed tree")

    names = repository_names()
    seen = set()
    for m in PATH.finditer(text):
        first, rest = m.group(1), m.group(2)
        if first not in names or not (rest or "." in first) or m.group(0) in seen:
            continue
        seen.add(m.group(0))
        # A glob (`bindings/go/*.go`) resolves when its directory does.
        path = os.path.join(doc_dir, m.group(0).split("*", 1)[0])
        if os.path.exists(path) and inside(prefix, path):
            continue
        if first not in marked:
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"line {line}: `{m.group(0)}` is not installed, and the note does not mark {first} as a repository path")
    return found


def main(prefix: str) -> int:
    found = problems(prefix)
    for problem in found:
        print(f"share/doc/perps/README.md: {problem}", file=sys.stderr)
    if not found:
        print("ok: share/doc/perps/README.md: every link resolves in the tree; every other path is installed or marked as the repository's")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
