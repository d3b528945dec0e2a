"""scripts/third_party_notices.py against a made-up workspace (a stand-in cargo, crates in a
temporary directory): what it takes, in what order, and when it refuses.

    python3 tests/packages/third_party_notices_test.py      (tests/packages/run.sh runs it)
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "third_party_notices.py")

# The stand-in cargo: `metadata` prints $FAKE_CARGO/metadata.json, `tree ... -p P` prints
# $FAKE_CARGO/tree-P.txt (as `cargo tree --prefix none --format {p}` would).
FAKE_CARGO = """#!/usr/bin/env python3
import os, sys
d = os.environ["FAKE_CARGO"]
if sys.argv[1] == "metadata":
    sys.stdout.write(open(os.path.join(d, "metadata.json")).read())
else:
    sys.stdout.write(open(os.path.join(d, "tree-" + sys.argv[sys.argv.index("-p") + 1] + ".txt")).read())
"""


def load_script():
    spec = importlib.util.spec_from_file_location("third_party_notices", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Workspace:
    """A workspace `app` whose crates live under a temporary directory."""

    def __init__(self, tmp: str):
        self.tmp = tmp
        self.packages = [self.crate("app", "0.1.0", {}, source=None)]
        self.trees: dict[str, list[str]] = {"app": ["app v0.1.0 (/ws)"]}
        cargo = os.path.join(tmp, "cargo")
        with open(cargo, "w") as f:
            f.write(FAKE_CARGO)
        os.chmod(cargo, 0o755)
        self.env = dict(os.environ, CARGO=cargo, FAKE_CARGO=tmp)

    def crate(self, name, version, files, licence="MIT", source="registry+https://github.com/rust-lang/crates.io-index"):
        directory = os.path.join(self.tmp, "src", f"{name}-{version}")
        os.makedirs(directory, exist_ok=True)
        for relative, text in {"Cargo.toml": "", "README.md": "not a licence", **files}.items():
            os.makedirs(os.path.dirname(os.path.join(directory, relative)), exist_ok=True)
            with open(os.path.join(directory, relative), "wb") as f:
                f.write(text if isinstance(text, bytes) else text.encode())
        return {"id": f"{name} {version}", "name": name, "version": version, "license": licence,
                "license_file": None, "source": source, "manifest_path": os.path.join(directory, "Cargo.toml")}

    def add(self, name, version, files, linked=True, **kw):
        self.packages.append(self.crate(name, version, files, **kw))
        if linked:
            self.trees["app"].append(f"{name} v{version}")

    def run(self, module=None):
        """The script's output (bytes), or raises its NoticeError / CalledProcessError."""
        meta = {"packages": self.packages, "workspace_members": ["app 0.1.0"], "workspace_root": self.tmp}
        with open(os.path.join(self.tmp, "metadata.json"), "w") as f:
            json.dump(meta, f)
        for package, lines in self.trees.items():
            with open(os.path.join(self.tmp, f"tree-{package}.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
        if module is not None:  # in-process, with the module's table patched by the caller
            os.environ.update(CARGO=self.env["CARGO"], FAKE_CARGO=self.tmp)
            return module.notices(os.path.join(self.tmp, "Cargo.toml"), ["app"], "x86_64-unknown-linux-gnu",
                                  module.LICENCE_EXCEPTIONS)
        out = os.path.join(self.tmp, "NOTICES.txt")
        subprocess.run([sys.executable, SCRIPT, "--package", "app", "--manifest-path",
                        os.path.join(self.tmp, "Cargo.toml"), "--output", out],
                       check=True, capture_output=True, text=True, env=self.env)
        with open(out, "rb") as f:
            return f.read()


class ThirdPartyNotices(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.ws = Workspace(self._tmp.name)

    def tearDown(self):
        self._tmp.cleanup()

    def test_every_licence_file_verbatim_nested_ones_too_sorted_and_stable(self):
        self.ws.add("zeta", "1.0.0", {"LICENSE-MIT": "zeta MIT text\r\nline 2"}, licence="MIT")
        # 0.10 after 0.9: versions compare as numbers; the tree order is not the file's.
        self.ws.add("alpha", "0.10.0", {"COPYING": "alpha ten"})
        self.ws.add("alpha", "0.9.0", {"licence.txt": "alpha nine", "Notice": "alpha notice"})
        self.ws.add("ring", "0.17.0", {"LICENSE": "ring isc", "third_party/fiat/LICENSE": "fiat mit",
                                       "src/not_a_licence.c": "int x;"}, licence="Apache-2.0 AND ISC")
        self.ws.add("unlinked", "1.0.0", {"LICENSE": "unlinked text"}, linked=False)
        text = self.ws.run()
        self.assertEqual(text, self.ws.run(), "two runs differ")
        decoded = text.decode()
        order = [decoded.index(f"\n{c}\nlicence:") for c in ("alpha 0.9.0", "alpha 0.10.0", "ring 0.17.0", "zeta 1.0.0")]
        self.assertEqual(order, sorted(order), "sections not sorted by name, then version")
        self.assertIn(b"---- zeta 1.0.0: LICENSE-MIT ----\nzeta MIT text\r\nline 2\n", text)
        self.assertIn(b"---- alpha 0.9.0: Notice ----\nalpha notice\n", text)
        self.assertIn(b"---- alpha 0.9.0: licence.txt ----\nalpha nine\n", text)
        self.assertIn(b"---- ring 0.17.0: third_party/fiat/LICENSE ----\nfiat mit\n", text)
        self.assertIn(b"licence: Apache-2.0 AND ISC\n", text)
        self.assertIn(b"4 third-party Rust crates", text)
        for absent in (b"unlinked", b"not a licence", b"int x;", b"app 0.1.0", self.ws.tmp.encode()):
            self.assertNotIn(absent, text)

    def test_a_crate_without_a_licence_file_fails_naming_it(self):
        self.ws.add("fine", "1.0.0", {"LICENSE": "fine"})
        self.ws.add("bare", "2.3.4", {}, licence="MIT OR Apache-2.0")
        with self.assertRaises(subprocess.CalledProcessError) as failed:
            self.ws.run()
        self.assertEqual(failed.exception.returncode, 1)
        self.assertIn("bare 2.3.4 (MIT OR Apache-2.0) has no licence file", failed.exception.stderr)
        self.assertIn("LICENCE_EXCEPTIONS", failed.exception.stderr)

    def test_an_exception_takes_the_text_from_another_crate_and_says_so(self):
        module = load_script()
        self.ws.add("bare", "2.3.4", {}, licence="MIT")
        self.ws.add("donor", "1.0.0", {"LICENSE-MIT": "the MIT text"}, linked=False)
        module.LICENCE_EXCEPTIONS[("bare", "2.3.4")] = {"why": "not published", "from": [("donor", "1.0.0", "LICENSE-MIT")]}
        text = self.ws.run(module)
        self.assertIn(b"---- bare 2.3.4: LICENSE-MIT, copied from donor 1.0.0 (not published) ----\nthe MIT text\n", text)
        # A donor file that is not there fails, naming the crate.
        module.LICENCE_EXCEPTIONS[("bare", "2.3.4")]["from"] = [("donor", "1.0.0", "LICENSE-APACHE")]
        with self.assertRaisesRegex(module.NoticeError, r"bare 2\.3\.4: .*LICENSE-APACHE.*no such file"):
            self.ws.run(module)

    def test_an_exception_for_a_crate_that_has_its_files_now_fails(self):
        module = load_script()
        self.ws.add("has", "1.0.0", {"LICENSE": "own"})
        self.ws.add("donor", "1.0.0", {"LICENSE": "other"}, linked=False)
        module.LICENCE_EXCEPTIONS[("has", "1.0.0")] = {"why": "x", "from": [("donor", "1.0.0", "LICENSE")]}
        with self.assertRaisesRegex(module.NoticeError, r"has 1\.0\.0 has licence files now"):
            self.ws.run(module)

    def test_a_path_crate_is_named_by_its_place_in_the_repository(self):
        self.ws.add("tiny_http", "0.12.0", {"LICENSE-MIT": "tiny"}, source=None)
        text = self.ws.run()
        self.assertIn(b"source: a copy in this project's repository, src/tiny_http-0.12.0/\n", text)


if __name__ == "__main__":
    unittest.main(verbosity=2)
