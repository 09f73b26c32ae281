"""Store fixtures: a real database, migrated, with a virtual clock; ``db`` runs every test that
takes it twice, on a SQLite file in tmp_path and on a fresh database of the session's PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.clock import FakeClock
from app.core.ids import Cnpj
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.records import Company
from tests.support.postgres import PostgresCluster

CNPJ_A = Cnpj.from_body("112223330001")
CNPJ_B = Cnpj.from_body("12ABC34501DE")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "dados" / "captura.db"


ENGINES = ("sqlite", "postgresql")


@pytest.fixture(params=ENGINES)
def engine_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def migrated_postgres(postgres_cluster: PostgresCluster) -> str:
    """A PostgreSQL database migrated to head once per session: each test gets a copy of it
    (CREATE DATABASE ... TEMPLATE), as fast as a new SQLite file instead of seven migrations."""
    url = postgres_cluster.new_database()
    open_database(url).close()
    return postgres_cluster.name_of(url)


@pytest.fixture
def db_target(request: pytest.FixtureRequest, engine_name: str, db_path: Path) -> Path | str:
    """What ``open_database`` takes: the SQLite file, or the URL of a PostgreSQL database at head."""
    if engine_name == "postgresql":
        cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
        return cluster.new_database(template=request.getfixturevalue("migrated_postgres"))
    return db_path


@pytest.fixture
def second_target(request: pytest.FixtureRequest, engine_name: str, tmp_path: Path) -> Path | str:
    """Another database on the same engine as ``db`` (a reference to compare with)."""
    if engine_name == "postgresql":
        cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
        return cluster.new_database(template=request.getfixturevalue("migrated_postgres"))
    return tmp_path / "referencia" / "captura.db"


@pytest.fixture
def db(db_target: Path | str, clock: FakeClock) -> Iterator[Database]:
    database = open_database(db_target, clock=clock)
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def sqlite_db(db_path: Path, clock: FakeClock) -> Iterator[Database]:
    """The database on SQLite only: for tests of the file itself (PRAGMAs, WAL, query plans)."""
    database = open_database(db_path, clock=clock)
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def company(db: Database) -> Company:
    return CompanyRepository(db).add(CNPJ_A, "Alfa Comércio Ltda", certificate_ref="cert-alfa")
