"""Test-only stand-in DLLs for what Wine 8 lacks and the Windows wheels import.

``bcryptprimitives.dll!ProcessPrng`` (cryptography's Rust extension) and ``icuuc.dll`` (Qt6Core)
exist on every supported Windows; Wine 8 has neither, so nothing that imports cryptography or Qt
loads. Built with mingw-w64 from ``standins/*.c`` and copied into a Wine prefix's system32 by the
build and the test lane. They are never part of the bundle or the installer: the bundle check
refuses any of them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from windows.toolchain import CACHE, DEBIAN_TOOLS, native

SOURCES = Path(__file__).resolve().parent / "standins"
LIBRARIES = {"bcryptprimitives": ["-ladvapi32"], "icuuc": []}
NAMES = tuple(f"{name}.dll" for name in LIBRARIES)


def build() -> list[Path]:
    out = CACHE / "standins"
    out.mkdir(parents=True, exist_ok=True)
    built = []
    for name, libraries in LIBRARIES.items():
        source, dll = SOURCES / f"{name}.c", out / f"{name}.dll"
        if not dll.exists() or dll.stat().st_mtime < source.stat().st_mtime:
            compiler = DEBIAN_TOOLS["x86_64-w64-mingw32-gcc"]
            subprocess.run([compiler, "-O2", "-shared", "-s", "-o", str(dll), str(source), *libraries], check=True)
        built.append(dll)
    return built


def install(drive_c: Path) -> None:
    """Into the prefix's system32, where Windows keeps its own copies."""
    if native():
        return
    system32 = drive_c / "windows" / "system32"
    for dll in build():
        shutil.copy2(dll, system32 / dll.name)
