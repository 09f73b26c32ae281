"""The crash test's child: ``python -m tests.support.crash_child DATA_DIR`` runs ``capture --daemon``.

The real command-line path (data-folder lock, office, service on APScheduler, graceful stop on
SIGTERM), with two test-only substitutions taken from the environment the parent sets:

* ``CRASH_KEYRING_FILE``: the TestKeyring file holding the companies' certificate secrets
  (the parent stored them there; the app code only ever asks ``keyring.get_keyring()``);
* ``CRASH_CLOCK``: ``factor;virtual origin;real origin`` (ISO instants) of the
  :class:`~app.core.clock.ScaledClock` the parent's sandbox runs on, so every restarted child
  reads the same virtual time as the sandbox.

On Windows the end of stdin is the parent's Ctrl+Break (see :mod:`tests.support.crash`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from datetime import datetime

from app.core.clock import ScaledClock

KEYRING_ENV = "CRASH_KEYRING_FILE"
CLOCK_ENV = "CRASH_CLOCK"


def clock_spec(factor: float, origin: datetime, real_origin: datetime) -> str:
    """The ``CRASH_CLOCK`` value for a clock mapping (see :func:`clock_from_spec`)."""
    return f"{factor!r};{origin.isoformat()};{real_origin.isoformat()}"


def clock_from_spec(spec: str) -> ScaledClock:
    factor, origin, real_origin = spec.split(";")
    return ScaledClock(float(factor), datetime.fromisoformat(origin), real_origin=datetime.fromisoformat(real_origin))


def _install_keyring(path: str) -> None:
    import keyring

    from tests.support.test_keyring import TestKeyring

    ring = TestKeyring()
    ring.file_path = path
    keyring.set_keyring(ring)


def _break_at_end_of_stdin() -> None:
    sys.stdin.buffer.read()
    signal.raise_signal(signal.SIGBREAK)


def stop_at_end_of_stdin() -> None:
    """Windows: the parent closing our stdin is its Ctrl+Break (it may share no console with us to
    send CTRL_BREAK_EVENT through, and under Wine GenerateConsoleCtrlEvent fails): SIGBREAK raised
    here, as the C runtime does for the console's, so the daemon's own handler stops it. Elsewhere
    nothing: the parent sends SIGTERM (``tests.support.crash.ask_graceful_stop``)."""
    if sys.platform == "win32":
        threading.Thread(target=_break_at_end_of_stdin, name="crash-stop", daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("uso: python -m tests.support.crash_child PASTA_DE_DADOS", file=sys.stderr)
        return 2
    _install_keyring(os.environ[KEYRING_ENV])
    from app.cli.context import Runtime
    from app.cli.main import build_parser, run_command

    clock = clock_from_spec(os.environ[CLOCK_ENV])
    stop_at_end_of_stdin()
    args = build_parser().parse_args(["--data-dir", argv[0], "capture", "--daemon", "--stop-timeout", "20"])
    return run_command(args, runtime=Runtime(clock=clock))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
