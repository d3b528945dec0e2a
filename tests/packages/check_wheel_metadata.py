"""The wheel's METADATA says what PyPI and `pip show` show about the package.

    python3 check_wheel_metadata.py dist/perps-<v>-....whl     # the METADATA inside the wheel
    python3 check_wheel_metadata.py <site>/perps-<v>.dist-info/METADATA   # an installed one

Checks: a Summary; the long description is bindings/python/README.md, as Markdown
(Description-Content-Type: text/markdown), with no relative link (PyPI has none of the
repository's files to point at); its "Quick start" code is the whole program
tests/packages/python/signin_order.py (its code after the docstring: imports, key and entry
point included, so it runs as shown) that tests/packages/run.sh runs; the licence is the
expression Cargo.toml declares (License-Expression). Exits non-zero naming each miss.
"""

from __future__ import annotations

import ast
import email.parser
import os
import re
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "bindings", "python", "README.md")
PROGRAM = os.path.join(ROOT, "tests", "packages", "python", "signin_order.py")


def metadata_text(path: str) -> str:
    if not path.endswith(".whl"):
        with open(path, encoding="utf-8") as f:
            return f.read()
    with zipfile.ZipFile(path) as wheel:
        names = [n for n in wheel.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        if len(names) != 1:
            sys.exit(f"{path}: expected one .dist-info/METADATA, found {names}")
        return wheel.read(names[0]).decode("utf-8")


def cargo_license() -> str:
    with open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8") as f:
        found = re.search(r'^license\s*=\s*"([^"]+)"', f.read(), re.M)
    if not found:
        sys.exit("Cargo.toml declares no license")
    return found.group(1)


def quick_start(readme: str) -> str:
    """The first ```python block under "## Quick start"."""
    section = readme.split("\n## Quick start\n", 1)
    block = re.search(r"^```python\n(.*?)^```$", section[1], re.M | re.S) if len(section) == 2 else None
    return block.group(1) if block else ""


def program_code() -> str:
    """The program's code after its module docstring: the whole program a reader of the README
    copies, imports, key and entry point included (a snippet of its body would not run)."""
    with open(PROGRAM, encoding="utf-8") as f:
        text = f.read()
    body = ast.parse(text).body
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
        sys.exit(f"{PROGRAM}: no module docstring to begin with")
    after = text.splitlines(keepends=True)[body[0].end_lineno :]
    return "".join(after).lstrip("\n")


def problems(text: str) -> list[str]:
    meta = email.parser.Parser().parsestr(text)
    body = meta.get_payload()
    with open(README, encoding="utf-8") as f:
        readme = f.read()
    found = []
    if not (meta.get("Summary") or "").strip():
        found.append("no Summary")
    if (meta.get("Description-Content-Type") or "").split(";")[0].strip() != "text/markdown":
        found.append(f"Description-Content-Type is {meta.get('Description-Content-Type')!r}, not text/markdown")
    if body.strip() != readme.strip():
        found.append(f"the long description ({len(body.strip())} characters) is not {os.path.relpath(README, ROOT)}")
    for target in re.findall(r"\]\(([^)\s]+)", readme):
        if not re.match(r"https?://", target):
            found.append(f"{os.path.relpath(README, ROOT)} links to {target!r}: nothing on PyPI is there")
    snippet = quick_start(readme)
    if not snippet or snippet != program_code():
        found.append(f'the "Quick start" code of the README is not the program {os.path.relpath(PROGRAM, ROOT)} '
                     "(its code after the docstring)")
    declared = cargo_license()
    if meta.get("License-Expression") != declared:
        found.append(f"License-Expression is {meta.get('License-Expression')!r}, Cargo.toml declares {declared!r}")
    return found


def main(path: str) -> int:
    found = problems(metadata_text(path))
    for problem in found:
        print(f"{path}: {problem}", file=sys.stderr)
    if not found:
        print(f"ok: {os.path.basename(path)}: Summary, long description (README, text/markdown), License-Expression")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
