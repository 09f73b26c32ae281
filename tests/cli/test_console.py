"""Windows' console control events for ``capture --daemon`` (closing the console, logoff,
shutdown, Ctrl+C, Ctrl+Break), as the handler ``SetConsoleCtrlHandler`` calls: Linux has no such
events, so the handler's logic is driven directly with the codes Windows passes."""

from __future__ import annotations

import threading

import pytest

from app.cli.console import (
    CTRL_BREAK_EVENT,
    CTRL_C_EVENT,
    CTRL_CLOSE_EVENT,
    CTRL_LOGOFF_EVENT,
    CTRL_SHUTDOWN_EVENT,
    ConsoleStop,
    console_stop,
)


@pytest.mark.parametrize("ctrl_type", [CTRL_C_EVENT, CTRL_BREAK_EVENT])
def test_ctrl_c_and_ctrl_break_ask_for_the_stop_and_return_at_once(ctrl_type: int) -> None:
    stop, stopped = threading.Event(), threading.Event()
    assert ConsoleStop(stop, stopped, grace=60).handle(ctrl_type) is True  # no other handler runs
    assert stop.is_set() and not stopped.is_set()


@pytest.mark.parametrize("ctrl_type", [CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT])
def test_closing_logoff_and_shutdown_wait_for_the_graceful_stop(ctrl_type: int) -> None:
    # Windows ends the process when the handler returns: it must not return before the stop ends.
    stop, stopped = threading.Event(), threading.Event()
    console = ConsoleStop(stop, stopped, grace=60)
    answers: list[bool] = []
    handler = threading.Thread(target=lambda: answers.append(console.handle(ctrl_type)))  # Windows' own thread
    handler.start()
    assert stop.wait(10)  # the daemon's loop sees the stop...
    assert handler.is_alive() and answers == []  # ...while the handler still holds Windows back
    stopped.set()  # the service stopped, the folder closed
    handler.join(10)
    assert answers == [True]


def test_the_wait_ends_with_the_grace_and_other_events_are_not_ours() -> None:
    stop, stopped = threading.Event(), threading.Event()
    console = ConsoleStop(stop, stopped, grace=0.01)  # a service that never finishes
    assert console.handle(CTRL_SHUTDOWN_EVENT) is True and stop.is_set()
    assert ConsoleStop(threading.Event(), stopped, grace=60).handle(99) is False


def test_elsewhere_the_context_installs_nothing_and_yields_the_same_logic() -> None:
    stop, stopped = threading.Event(), threading.Event()
    with console_stop(stop, stopped, grace=1) as console:
        assert console.handle(CTRL_C_EVENT) and stop.is_set()
