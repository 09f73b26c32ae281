"""The Windows lane's way of running a program under Wine (packaging/windows/toolchain.py).

Wine itself is not on the Linux test machine: a shell stands in for ``wine64`` and a script for
``wineserver -k`` (ending the prefix's programs), so what is tested is the lane's own handling of a
program that ends while something it started still holds its output: under Wine, a ``cmd /c ver``
that ``platform`` started hung for good and kept the suite's lane waiting after the tests ended.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Wine's stand-ins are POSIX shell scripts")


def _toolchain() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lane_toolchain", ROOT / "packaging" / "windows" / "toolchain.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_stray_holding_the_output_is_ended_after_the_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toolchain = _toolchain()
    marker, pid = tmp_path / "stray-ended", tmp_path / "stray.pid"
    server = tmp_path / "wineserver"
    server.write_text(f"#!/bin/sh\nkill \"$(cat '{pid}')\" && touch '{marker}'\n", encoding="utf-8")
    server.chmod(0o755)
    monkeypatch.setitem(toolchain.DEBIAN_TOOLS, "wine64", "/bin/sh")
    monkeypatch.setitem(toolchain.DEBIAN_TOOLS, "wineserver", str(server))
    monkeypatch.setattr(toolchain, "STRAY_GRACE_S", 1.0)
    wine = toolchain.Wine(tmp_path / "prefixo")

    started = time.monotonic()
    program = f"sleep 600 & echo $! > '{pid}'; echo terminou"  # the stray keeps the output open
    result = wine.run(["-c", program], cwd=tmp_path, end_strays=True, check=False, echo=False)
    assert result.returncode == 0 and result.stdout == "terminou\n"
    assert marker.exists()  # the stray was ended, with the prefix's other programs
    assert time.monotonic() - started < 60

    # Without end_strays the output is read to its end: a program that re-launches itself finishes.
    result = wine.run(["-c", "(sleep 1; echo depois) & echo antes"], cwd=tmp_path, check=False, echo=False)
    assert result.stdout == "antes\ndepois\n"
