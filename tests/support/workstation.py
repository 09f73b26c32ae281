"""Another workstation of the office, for the tests: a short script run in a process of its own
(the office server sees another client; this process's own writes are told apart by their origin)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def in_another_process(script: str, *args: str) -> None:
    """Run the Python source ``script`` (``sys.argv[1:]`` are ``args``) in a child process with this
    checkout importable; the test fails with the child's error output when it does."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script, *args], env=environment, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
