"""A workstation of the office test: ``python -m tests.office.node_child DATA_DIR`` runs
``capture --daemon`` on the office database named by ``CAPTURA_DATABASE`` (the app's own variable).

Test-only substitutions from the environment, as in :mod:`tests.support.crash_child`: the
TestKeyring file (each workstation has its own keyring, as two machines do), the sped-up clock
shared with the parent, the end of stdin as the graceful stop on Windows, and ``NODE_LEASE``
("ttl;renew_every", clock seconds) for the lease times.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta

from tests.support.crash_child import CLOCK_ENV, KEYRING_ENV, _install_keyring, clock_from_spec, stop_at_end_of_stdin

LEASE_ENV = "NODE_LEASE"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("uso: python -m tests.office.node_child PASTA_DE_DADOS", file=sys.stderr)
        return 2
    _install_keyring(os.environ[KEYRING_ENV])
    from app.cli.context import Runtime
    from app.cli.main import build_parser, run_command
    from app.desk.nodes import LeaseTiming

    ttl, renew = (float(part) for part in os.environ[LEASE_ENV].split(";"))
    lease = LeaseTiming(ttl=timedelta(seconds=ttl), renew_every=timedelta(seconds=renew))
    clock = clock_from_spec(os.environ[CLOCK_ENV])
    stop_at_end_of_stdin()  # Windows: the parent's graceful stop (tests.support.crash.ask_graceful_stop)
    args = build_parser().parse_args(["--data-dir", argv[0], "capture", "--daemon", "--stop-timeout", "20"])
    return run_command(args, runtime=Runtime(clock=clock, lease=lease))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
