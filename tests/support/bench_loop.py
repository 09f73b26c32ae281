"""What the window benchmarks share: this process's RSS, and the Qt event loop run for a while."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from PySide6.QtCore import QEventLoop, QTimer


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_loop(ms: int) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait(condition: Callable[[], bool], timeout_s: float, what: str, step_ms: int = 500) -> None:
    """Run the event loop until ``condition`` (a benchmark's wait: it gives up with a message)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"Tempo esgotado esperando: {what}")
        run_loop(step_ms)
