"""A throwaway PostgreSQL cluster for the tests: Debian's binaries, a temp folder, a loopback port.

``PostgresCluster.start`` runs ``initdb`` and ``pg_ctl start`` (as the ``postgres`` system user when
the tests run as root: the server refuses root), waits on ``pg_isready`` (no sleeps), and hands out
one fresh database per test (``new_database``). ``stop`` shuts the server down fast and removes
the folder. Missing binaries are an error that names the package: CI installs ``postgresql``
(packaging/dev.py), and a test meant to run on PostgreSQL must never pass by being skipped.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import psycopg
import pytest

READY_TIMEOUT_S = 60.0
SUPERUSER = "captura"


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


class PostgresCluster:
    """One server for a test session; ``url(name)`` is SQLAlchemy's URL of one of its databases."""

    def __init__(self) -> None:
        self.bin = server_binaries()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="captura-pg-"))
        self.data = self.root / "data"
        self._names = itertools.count(1)
        self._as_user: Sequence[str] = ()
        if os.name == "posix" and os.geteuid() == 0:
            # postgres refuses to run as root: the cluster belongs to the system user.
            self._as_user = ("runuser", "-u", "postgres", "--")
            shutil.chown(self.root, "postgres")

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self._as_user, *args], capture_output=True, text=True, check=False, timeout=120)

    def start(self) -> PostgresCluster:
        init = self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
            "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        if init.returncode != 0:
            raise RuntimeError(f"initdb falhou: {init.stderr or init.stdout}")
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

    def admin_url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self, template: str | None = None) -> str:
        """A fresh database (empty, or a copy of the database ``template``); its SQLAlchemy URL."""
        name = f"t{next(self._names)}"
        copy = f' TEMPLATE "{template}"' if template else ""
        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"{copy}')
        return self.url(name)

    def name_of(self, url: str) -> str:
        return url.rsplit("/", 1)[1]

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """The session's PostgreSQL server, started on first use and stopped at the end."""
    cluster = PostgresCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """The URL of a fresh, empty database for one test."""
    return postgres_cluster.new_database()
