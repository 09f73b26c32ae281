"""Store fixtures: a real SQLite file in tmp_path, migrated, with a virtual clock."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.clock import FakeClock
from app.core.ids import Cnpj
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.records import Company

CNPJ_A = Cnpj.from_body("112223330001")
CNPJ_B = Cnpj.from_body("12ABC34501DE")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "dados" / "captura.db"


@pytest.fixture
def db(db_path: Path, clock: FakeClock) -> Iterator[Database]:
    database = open_database(db_path, clock=clock)
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def company(db: Database) -> Company:
    return CompanyRepository(db).add(CNPJ_A, "Alfa Comércio Ltda", certificate_ref="cert-alfa")
