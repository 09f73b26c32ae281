"""PostgreSQL for the tests: one server per session, one fresh database per test.

The server is a throwaway cluster of Debian's binaries (:mod:`tests.support.pg_server`: a temp
folder, a loopback port), or, when ``CAPTURA_TEST_POSTGRES`` names one, a server already running:
the Windows lane starts it on the Linux side of Wine (Windows programs cannot run Debian's server
but reach Linux loopback TCP) and the Windows pytest uses it. Either way each test gets a database
of its own (``new_database``), and a missing server is an error, never a skip: a test meant to run
on PostgreSQL must not pass by being skipped.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from urllib.parse import urlsplit

import psycopg
import pytest

from tests.support.pg_server import SERVER_ENV, PostgresMissing, PostgresServer, free_port

__all__ = ["PostgresCluster", "PostgresMissing", "free_port", "postgres_cluster", "postgres_url"]


class PostgresCluster:
    """One server for a test session; ``url(name)`` is SQLAlchemy's URL of one of its databases."""

    def __init__(self, address: str | None = None) -> None:
        # address: a running server's "postgresql://user@host:port" (its databases are ours to make)
        self.server: PostgresServer | None = None
        if address:
            self.address = address.rstrip("/")
        else:
            self.server = PostgresServer()
            self.address = self.server.address
        parts = urlsplit(self.address)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 5432
        self.host_port = f"{self.host}:{self.port}"
        self.user = parts.username or "postgres"
        # Unique per session: a server named in CAPTURA_TEST_POSTGRES may outlive this run.
        self._names = (f"t{os.getpid()}_{n}" for n in itertools.count(1))
        self._made: list[str] = []

    def start(self) -> PostgresCluster:
        if self.server is not None:
            self.server.start()
            return self
        try:
            with psycopg.connect(self.admin_url(), connect_timeout=30):
                pass
        except psycopg.OperationalError as error:
            raise RuntimeError(f"PostgreSQL de {SERVER_ENV}={self.address} não responde: {error}") from error
        return self

    def admin_url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host_port}/{database}"

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{self.user}@{self.host_port}/{database}"

    def new_database(self, template: str | None = None) -> str:
        """A fresh database (empty, or a copy of the database ``template``); its SQLAlchemy URL."""
        name = next(self._names)
        copy = f' TEMPLATE "{template}"' if template else ""
        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"{copy}')
        self._made.append(name)
        return self.url(name)

    def name_of(self, url: str) -> str:
        return url.rsplit("/", 1)[1]

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()  # the whole cluster goes with its folder
            return
        with psycopg.connect(self.admin_url(), autocommit=True) as connection:
            for name in reversed(self._made):  # copies before their templates
                connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """The session's PostgreSQL server, started (or reached) on first use and stopped at the end."""
    cluster = PostgresCluster(os.environ.get(SERVER_ENV) or None).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """The URL of a fresh, empty database for one test."""
    return postgres_cluster.new_database()
