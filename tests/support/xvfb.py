"""A virtual X server for screenshots taken as on a desktop (the xcb platform, real fonts and
window decorations), in a child process: the test suite itself stays offscreen."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def xvfb_display() -> Iterator[str]:
    """``:N`` of a fresh Xvfb; skips the test where Xvfb is not installed (packaging/dev.py installs it)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.skip("Xvfb não instalado (apt-get install -y xvfb)")
    server = subprocess.Popen(
        [xvfb, "-displayfd", "1", "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        display = server.stdout.readline().strip()  # written once the server accepts clients
        assert display.isdigit(), display
        yield f":{display}"
    finally:
        server.terminate()
        server.wait(30)
        if server.stdout is not None:
            server.stdout.close()


def run_under_xvfb(args: Sequence[str], *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python ARGS...`` on a fresh Xvfb with Qt's xcb platform, from the project root."""
    with xvfb_display() as display:
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", PYTHONPATH=str(ROOT))
        return subprocess.run(
            [sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
        )
