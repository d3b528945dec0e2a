"""The load-time ABI check of the Python binding (perps._native): a libperps loaded by path
($PERPS_LIB, a stray copy) escapes the SONAME's version rule, so the binding compares the
library's perps_version() with its own __version__ before looking up any other symbol. The
rule on inputs that must be refused, the refusal's words, the library these tests load, and a
real refusal: a stand-in libperps of the next 0.x minor (perps_version alone, compiled here)
given as PERPS_LIB makes `import perps` fail with an ImportError naming both versions and the
file."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

import perps
from perps._native import abi_compatible, abi_refusal


@pytest.mark.parametrize("binding, library", [("0.1.0", "0.1.0"), ("0.1.0", "0.1.7"), ("0.1.3", "0.1.0"),
                                              ("1.2.0", "1.2.0"), ("1.2.0", "1.5.1"), ("0.1.0", "0.1.1-rc.1")])
def test_compatible(binding, library):
    assert abi_compatible(binding, library)
    assert abi_refusal(binding, library, "here") is None


@pytest.mark.parametrize("binding, library", [("0.1.0", "0.2.0"), ("0.2.0", "0.1.0"), ("0.1.0", "1.1.0"),
                                              ("1.2.0", "1.1.9"), ("1.2.0", "2.2.0"), ("0.1.0", ""),
                                              ("0.1.0", "0.1"), ("0.1.0", "x.1.0")])
def test_refused(binding, library):
    assert not abi_compatible(binding, library)
    assert abi_refusal(binding, library, "here") is not None


def test_the_refusal_names_both_versions_the_file_and_the_way_out():
    why = abi_refusal("0.1.0", "0.2.0", "/usr/lib/x86_64-linux-gnu/libperps.so")
    for words in ["libperps 0.2.0", "libperps 0.1.0", "/usr/lib/x86_64-linux-gnu/libperps.so", "0.1.x", "PERPS_LIB"]:
        assert words in why


def test_the_library_loaded_here_is_the_bindings_version():
    assert perps.version() == perps.__version__  # the same Cargo.toml


def test_another_minor_is_refused_at_import(tmp_path):
    major, minor = re.match(r"(\d+)\.(\d+)\.", perps.__version__).groups()
    other = f"{major}.{int(minor) + 1}.0"
    (tmp_path / "version.c").write_text(f'const char *perps_version(void) {{ return "{other}"; }}\n')
    stand_in = tmp_path / "libperps.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(stand_in), str(tmp_path / "version.c")], check=True)
    package_dir = pathlib.Path(perps.__file__).resolve().parents[1]
    env = dict(os.environ, PERPS_LIB=str(stand_in), PYTHONPATH=str(package_dir))
    run = subprocess.run([sys.executable, "-c", "import perps"], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: perps: libperps " + other), run.stderr
    for words in [f"libperps {other}", f"libperps {perps.__version__}", str(stand_in)]:
        assert words in last
