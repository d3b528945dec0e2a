"""Hatchling build hook: a wheel with libperps.so inside, tagged for what it needs.

Without PERPS_WHEEL_LIBRARY (``pip install bindings/python``) the wheel is pure Python and
the package loads an installed libperps by its SONAME. With PERPS_WHEEL_LIBRARY=<absolute
path to libperps.so> (scripts/package.sh sets it) the wheel carries that file as
``perps/libperps.so`` and is tagged ``py3-none-manylinux_<X>_<Y>_<arch>``: ctypes needs no
particular Python (``py3-none``), and the platform tag is the newest glibc symbol version
the library needs, read from its ELF version references (``objdump -p``), so pip installs
it exactly where that glibc is (PEP 600). When that glibc is one a legacy manylinux tag names
(2.5, 2.12, 2.17: manylinux1, manylinux2010, manylinux2014), the wheel carries that alias too,
``manylinux_2_17_x86_64.manylinux2014_x86_64`` as auditwheel writes it: pip before 20.3 (Ubuntu
20.04's 20.0.2, RHEL 8's 19.3.1) knows only the legacy tags and would refuse a wheel tagged
``manylinux_2_17`` alone as "not a supported wheel on this platform". The build fails when
the library needs a shared library outside the set every glibc distribution has, rather than
produce a wheel that would not load.
"""

from __future__ import annotations

import os
import re
import subprocess
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# Shared libraries a manylinux wheel may take from the system (the glibc family and libgcc_s,
# a subset of PEP 600's policies); anything else would have to be bundled.
SYSTEM_LIBRARIES = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "librt.so.1",
    "libpthread.so.0",
    "libutil.so.1",
    "libgcc_s.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}

ELF_MACHINES = {62: "x86_64", 183: "aarch64"}  # e_machine

# PEP 600's legacy aliases: the glibc each older manylinux tag stands for.
LEGACY_MANYLINUX = {(2, 5): "manylinux1", (2, 12): "manylinux2010", (2, 17): "manylinux2014"}


def elf_machine(path: str) -> str:
    """The wheel platform's architecture of a 64-bit little-endian ELF file."""
    with open(path, "rb") as f:
        header = f.read(20)
    if header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
        raise RuntimeError(f"{path} is not a 64-bit little-endian ELF library")
    machine = int.from_bytes(header[18:20], "little")
    if machine not in ELF_MACHINES:
        raise RuntimeError(f"{path}: ELF machine {machine} has no wheel platform tag here")
    return ELF_MACHINES[machine]


def needs(path: str) -> tuple[set[str], tuple[int, int]]:
    """The shared libraries ``path`` needs (NEEDED) and the newest GLIBC_x.y version it
    references, from ``objdump -p`` (binutils)."""
    try:
        dump = subprocess.run(["objdump", "-p", path], check=True, capture_output=True, text=True).stdout
    except FileNotFoundError:
        raise RuntimeError("objdump not found: install binutils to build the wheel") from None
    needed = set(re.findall(r"^\s*NEEDED\s+(\S+)", dump, re.M))
    versions = {(int(a), int(b)) for a, b in re.findall(r"\bGLIBC_(\d+)\.(\d+)(?:\.\d+)?\b", dump)}
    if not versions:
        raise RuntimeError(f"{path} references no GLIBC symbol version: is it a glibc library?")
    return needed, max(versions)


def platform_tag(path: str) -> str:
    """``manylinux_<glibc major>_<glibc minor>_<arch>`` for the library at ``path``, followed
    by its legacy alias (``.manylinux2014_<arch>``) when there is one."""
    needed, (major, minor) = needs(path)
    foreign = sorted(needed - SYSTEM_LIBRARIES)
    if foreign:
        raise RuntimeError(f"{path} needs {', '.join(foreign)}: not on every glibc system, no manylinux tag")
    arch = elf_machine(path)
    tag = f"manylinux_{major}_{minor}_{arch}"
    legacy = LEGACY_MANYLINUX.get((major, minor))
    # (manylinux1 and manylinux2010 were defined for x86 only)
    if legacy is not None and (legacy == "manylinux2014" or arch in ("x86_64", "i686")):
        tag += f".{legacy}_{arch}"
    return tag


class PerpsBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        library = os.environ.get("PERPS_WHEEL_LIBRARY")
        if self.target_name != "wheel" or version == "editable" or not library:
            return
        if not os.path.isabs(library) or not os.path.isfile(library):
            raise RuntimeError(f"PERPS_WHEEL_LIBRARY={library}: not an absolute path to a file")
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{platform_tag(library)}"
        build_data["force_include"][library] = "perps/libperps.so"
