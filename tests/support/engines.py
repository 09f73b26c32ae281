"""Running a test on both engines: a SQLite file and a fresh database of the session's PostgreSQL.

``engine_name`` parametrises a test by engine; ``office_database`` is what ``Office(database=…)``
and the capture harness take (None: the data folder's own SQLite file; else the URL of a
PostgreSQL database already at head, copied from a template migrated once per session).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store.db import open_database
from tests.support.nfe_harness import Harness, nfe_harness
from tests.support.postgres import PostgresCluster

ENGINES = ("sqlite", "postgresql")


@pytest.fixture(params=ENGINES)
def engine_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def migrated_postgres(postgres_cluster: PostgresCluster) -> str:
    """A PostgreSQL database migrated to head once per session: each test gets a copy of it
    (CREATE DATABASE ... TEMPLATE), as fast as a new SQLite file instead of every migration."""
    url = postgres_cluster.new_database()
    open_database(url).close()
    return postgres_cluster.name_of(url)


def migrated_copy(request: pytest.FixtureRequest) -> str:
    """The URL of a fresh PostgreSQL database at head (for a fixture that has ``request``)."""
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    return cluster.new_database(template=request.getfixturevalue("migrated_postgres"))


@pytest.fixture
def office_database(request: pytest.FixtureRequest, engine_name: str) -> str | None:
    """None on SQLite (the data folder's file), a fresh database's URL on PostgreSQL."""
    return migrated_copy(request) if engine_name == "postgresql" else None


@pytest.fixture(name="harness")
def harness_on_both_engines(tmp_path: Path, office_database: str | None) -> Iterator[Harness]:
    """The NF-e harness on each engine: imported by a test module (or conftest) to run its
    ``harness`` tests on a SQLite file and on PostgreSQL."""
    with nfe_harness(tmp_path, database=office_database) as harness:
        yield harness
