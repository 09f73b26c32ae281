"""A throwaway PostgreSQL server from Debian's binaries: a temp folder, a loopback port, trust auth.

Standard library only, so that the Windows lane (packaging/windows/lane.py, run by the system's
python3) starts one with the same code the tests use: Windows programs under Wine cannot run
Debian's server, but reach Linux loopback TCP, so the lane starts it on this side and hands its
address to the Windows pytest in ``SERVER_ENV`` (tests/support/postgres.py honours it).

``initdb`` and ``pg_ctl start`` run as the ``postgres`` system user when run as root (the server
refuses root); readiness is waited on with ``pg_isready`` (no sleeps). Missing binaries are an
error that names the package: a test meant to run on PostgreSQL must never pass by being skipped.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

READY_TIMEOUT_S = 60.0
SUPERUSER = "captura"
# The address of a running server ("postgresql://captura@127.0.0.1:PORT") the tests use instead of
# starting their own: the Windows lane sets it (the server runs on the Linux side of Wine).
SERVER_ENV = "CAPTURA_TEST_POSTGRES"


class PostgresMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def server_binaries() -> Path:
    """The folder of initdb/pg_ctl/pg_isready: Debian's newest /usr/lib/postgresql/N/bin, or PATH."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0
    )
    for folder in reversed(candidates):
        if (folder / "initdb").is_file():
            return folder
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    raise PostgresMissing(
        "PostgreSQL não encontrado (initdb/pg_ctl): instale o pacote Debian 'postgresql' "
        "(packaging/dev.py o instala no CI); os testes no PostgreSQL não podem ser pulados."
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """One server in a temp folder; ``address`` is its superuser's libpq URL (no database)."""

    def __init__(self) -> None:
        self.bin = server_binaries()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="captura-pg-"))
        self.data = self.root / "data"
        self._as_user: Sequence[str] = ()
        if os.name == "posix" and os.geteuid() == 0:
            # postgres refuses to run as root: the cluster belongs to the system user.
            self._as_user = ("runuser", "-u", "postgres", "--")
            shutil.chown(self.root, "postgres")

    @property
    def address(self) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self._as_user, *args], capture_output=True, text=True, check=False, timeout=120)

    def start(self) -> PostgresServer:
        init = self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
            "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        if init.returncode != 0:
            raise RuntimeError(f"initdb falhou: {init.stderr or init.stdout}")
        return self.resume()

    def resume(self) -> PostgresServer:
        """Start the server on its folder and port (again, after ``pause``), and wait until ready."""
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c full_page_writes=off"
        started = self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
            "-o", options, "-w", "-t", str(int(READY_TIMEOUT_S)), "start",
        )  # fmt: skip
        if started.returncode != 0:
            log = (self.root / "server.log").read_text(errors="replace") if (self.root / "server.log").exists() else ""
            raise RuntimeError(f"pg_ctl start falhou: {started.stderr or started.stdout}\n{log}")
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            probe = subprocess.run(
                [str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port), "-t", "5"],
                capture_output=True, check=False,
            )  # fmt: skip
            if probe.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL não ficou pronto em {READY_TIMEOUT_S:.0f} s na porta {self.port}")

    def pause(self, mode: str = "fast") -> None:
        """Stop the server and keep its folder (a restart of the office's PostgreSQL): ``fast``
        ends every session at once; ``immediate`` as a crash. ``resume`` starts it again."""
        stopped = self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")
        if stopped.returncode != 0:
            raise RuntimeError(f"pg_ctl stop falhou: {stopped.stderr or stopped.stdout}")

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)
