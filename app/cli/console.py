"""Windows' console control events for ``capture --daemon``: the same graceful stop as SIGTERM.

Windows never sends SIGTERM. Closing the console window, logging off and shutting down reach a
console process as CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT and CTRL_SHUTDOWN_EVENT, through a handler
registered with ``SetConsoleCtrlHandler``; Windows ends the process as soon as that handler
returns, so the handler asks for the stop and then waits for it (at most the stop's grace).
Windows gives a closing console about 5 seconds and a logoff or a shutdown 5 to 20 before it ends
the process anyway: the runs in flight get what time there is, and every lot already committed
stays committed (the cursors are saved per lot). Ctrl+C and Ctrl+Break ask for the stop and
return at once, as SIGINT does.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CTRL_C_EVENT = 0
CTRL_BREAK_EVENT = 1
CTRL_CLOSE_EVENT = 2
CTRL_LOGOFF_EVENT = 5
CTRL_SHUTDOWN_EVENT = 6
INTERRUPTS = frozenset({CTRL_C_EVENT, CTRL_BREAK_EVENT})
ENDINGS = frozenset({CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT})


class ConsoleStop:
    """What a console control event does: ``stop`` is set (the daemon's loop stops the service);
    for an ending, the handler returns only once ``stopped`` is set or ``grace`` seconds passed."""

    def __init__(self, stop: threading.Event, stopped: threading.Event, grace: float) -> None:
        self.stop, self.stopped, self.grace = stop, stopped, grace

    def handle(self, ctrl_type: int) -> bool:
        """The handler's answer to Windows: True when the event is ours (no other handler runs)."""
        if ctrl_type in INTERRUPTS:
            self.stop.set()
            return True
        if ctrl_type in ENDINGS:
            self.stop.set()
            self.stopped.wait(self.grace)  # Windows ends the process when this returns
            return True
        return False


@contextmanager
def console_stop(stop: threading.Event, stopped: threading.Event, grace: float) -> Iterator[ConsoleStop]:
    """Route the console's control events to ``ConsoleStop`` while inside (Windows only; a no-op
    elsewhere, where SIGTERM and SIGINT already do it)."""
    console = ConsoleStop(stop, stopped, grace)
    if sys.platform != "win32":
        yield console
        return
    import ctypes
    from ctypes import wintypes

    handler_type = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.DWORD)
    handler: Any = handler_type(lambda ctrl_type: console.handle(int(ctrl_type)))  # kept alive below
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    installed = bool(kernel32.SetConsoleCtrlHandler(handler, True))
    try:
        yield console
    finally:
        if installed:
            kernel32.SetConsoleCtrlHandler(handler, False)
