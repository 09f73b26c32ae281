"""Which app version brought the schema where it is: named to a workstation too old to write, and
the hook that lets the capture node's lease hold a migration back."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import Connection, text

from app import __version__
from app.core.clock import FakeClock
from app.store import versions
from app.store.db import Database, alembic_config, head_revision, open_database
from app.store.errors import SchemaTooNew, StorageUnavailable


def _versions(database: Database) -> list[tuple[str, str]]:
    with database.reader() as s:
        return [tuple(row) for row in s.execute(text("SELECT revision, app_version FROM schema_versions"))]


def test_the_migration_records_the_app_version_that_made_the_schema(db: Database) -> None:
    assert _versions(db) == [(head_revision(), __version__)]


def test_an_app_older_than_the_schema_names_the_version_to_install_and_writes_nothing(
    db_target: Path | str, db: Database
) -> None:
    with db.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0099'")
        connection.exec_driver_sql(
            "INSERT INTO schema_versions (revision, app_version, migrated_at) VALUES ('0099', '2.3.0', '2027-01-01')"
        )
    db.close()
    with pytest.raises(SchemaTooNew) as caught:
        open_database(db_target)
    assert caught.value.app_version == "2.3.0"
    assert "Instale a versão 2.3.0 do Captura DF-e (ou mais nova) nesta estação" in caught.value.message
    assert "nada foi gravado" in caught.value.message


@pytest.fixture
def refusing_guard(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str | None, str]]:
    """A guard as the capture node's lease will register one: it refuses, and says what it saw."""
    asked: list[tuple[str | None, str]] = []

    def guard(_connection: Connection, current: str | None, head: str, _now: datetime) -> None:
        asked.append((current, head))
        raise StorageUnavailable("Uma estação captura com outra versão: o banco não é atualizado agora.")

    monkeypatch.setattr(versions, "MIGRATION_GUARDS", [guard])
    return asked


def test_a_guard_holds_a_migration_back_and_the_schema_stays_as_it_was(
    db_target: Path | str, db: Database, clock: FakeClock, refusing_guard: list[tuple[str | None, str]]
) -> None:
    with db.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0011")
    db.close()
    with pytest.raises(StorageUnavailable, match="não é atualizado agora"):
        open_database(db_target, clock=clock)
    assert refusing_guard == [("0011", head_revision())]
    versions.MIGRATION_GUARDS.clear()  # the node gone: the next opening migrates
    with open_database(db_target, clock=clock) as again:
        assert again.revision() == head_revision()
        assert _versions(again) == [(head_revision(), __version__)]


def test_every_desk_brings_the_node_guard_and_a_live_node_holds_the_office_back(
    db: Database, engine_name: str, clock: FakeClock
) -> None:
    import app.desk.desk  # noqa: F401  (what every workstation imports before it opens a database)
    from app.store.lease import NodeIdentity, NodeLeases, no_live_node

    assert no_live_node in versions.MIGRATION_GUARDS
    token = NodeLeases(db).acquire(NodeIdentity("a" * 32, "ESTACAO-ALFA", 101), clock.now(), timedelta(seconds=60))
    assert token is not None
    with db.engine.begin() as connection:
        if engine_name == "sqlite":  # a single desktop's file: its node is this program, stopped to update
            no_live_node(connection, "0013", "0014", clock.now())
            return
        with pytest.raises(StorageUnavailable, match="só é atualizado quando nenhuma estação captura"):
            no_live_node(connection, "0013", "0014", clock.now())
