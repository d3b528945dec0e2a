"""scripts/packaged_readme.py on a made-up repository (a temporary copy of the script, README.md,
examples-c/ and sandbox/README.md): what it ships beside the README.

    python3 tests/packages/packaged_readme_test.py      (tests/packages/run.sh runs it)

The tarball ships the files of examples-c/ under git, never what a build left beside them
(`make -C examples-c` writes signin_order, ... there; .gitignore keeps them out of git).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class PackagedReadme(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.repo = os.path.join(self._tmp.name, "repo")
        self.out = os.path.join(self._tmp.name, "doc")
        os.makedirs(os.path.join(self.repo, "scripts"))
        os.makedirs(os.path.join(self.repo, "sandbox"))
        os.makedirs(self.out)
        shutil.copy(os.path.join(ROOT, "scripts", "packaged_readme.py"), os.path.join(self.repo, "scripts"))
        shutil.copy(os.path.join(ROOT, "sandbox", "README.md"), os.path.join(self.repo, "sandbox"))
        with open(os.path.join(self.repo, "README.md"), "w", encoding="utf-8") as f:
            f.write("# perps\n\nSee [the example](examples-c/signin_order.c) and [BENCHMARKS.md](BENCHMARKS.md).\n")
        examples = os.path.join(self.repo, "examples-c")
        os.makedirs(examples)
        for name, text in {"signin_order.c": "int main(void) { return 0; }\n", ".gitignore": "/signin_order\n*.o\n"}.items():
            with open(os.path.join(examples, name), "w", encoding="utf-8") as f:
                f.write(text)
        # What `make -C examples-c` leaves: a program and an object file, ignored by git.
        for built in ["signin_order", "signin_order.o"]:
            with open(os.path.join(examples, built), "wb") as f:
                f.write(b"\x7fELF built here")

    def tearDown(self):
        self._tmp.cleanup()

    def run_script(self):
        # GIT_CEILING_DIRECTORIES: the temporary copy is not taken for a part of a repository
        # above it.
        env = dict(os.environ, GIT_CEILING_DIRECTORIES=self._tmp.name)
        return subprocess.run([sys.executable, os.path.join(self.repo, "scripts", "packaged_readme.py"), self.out],
                              capture_output=True, text=True, env=env)

    def shipped(self):
        return sorted(os.path.relpath(os.path.join(d, f), self.out) for d, _, fs in os.walk(self.out) for f in fs)

    def git(self, *args):
        subprocess.run(["git", "-C", self.repo, *args], check=True, capture_output=True)

    def test_a_checkout_ships_the_tracked_examples_only(self):
        self.git("init", "-q")
        self.git("add", "README.md", "sandbox/README.md", "examples-c/signin_order.c", "examples-c/.gitignore")
        result = self.run_script()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.shipped(), ["README.md", "examples-c/signin_order.c", "sandbox/README.md"])
        with open(os.path.join(self.out, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        self.assertIn("[the example](examples-c/signin_order.c)", readme)
        self.assertIn("`BENCHMARKS.md`", readme)
        self.assertNotIn("](BENCHMARKS.md)", readme)

    def test_without_git_it_refuses_rather_than_ship_what_a_build_left(self):
        # Not a checkout (a source tree copied out of one), as when git cannot read it either
        # (no git, or a checkout of another owner: "detected dubious ownership").
        result = self.run_script()
        self.assertNotEqual(result.returncode, 0, f"shipped {self.shipped()}")
        self.assertIn("git ls-files", result.stderr)
        self.assertIn("examples-c", result.stderr)
        self.assertNotIn(os.path.join("examples-c", "signin_order"), self.shipped())
        self.assertNotIn(os.path.join("examples-c", "signin_order.o"), self.shipped())


if __name__ == "__main__":
    unittest.main(verbosity=2)
