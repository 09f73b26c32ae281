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
from tests.support.engines import migrated_copy

CNPJ_A = Cnpj.from_body("112223330001")
CNPJ_B = Cnpj.from_body("12ABC34501DE")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "dados" / "captura.db"


@pytest.fixture
def db_target(request: pytest.FixtureRequest, engine_name: str, db_path: Path) -> Path | str:
    """What ``open_database`` takes: the SQLite file, or the URL of a PostgreSQL database at head."""
    return migrated_copy(request) if engine_name == "postgresql" else db_path


@pytest.fixture
def second_target(request: pytest.FixtureRequest, engine_name: str, tmp_path: Path) -> Path | str:
    """Another database on the same engine as ``db`` (a reference to compare with)."""
    return migrated_copy(request) if engine_name == "postgresql" else tmp_path / "referencia" / "captura.db"


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
