from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from app.core.clock import FakeClock
from app.store.db import (
    DRIVER_MAX_IDLE,
    WAL_BACKSTOP_PAGES,
    Database,
    _scripted_head,
    alembic_config,
    head_revision,
    open_database,
)
from app.store.documents import DocumentRepository
from app.store.errors import StorageBug, StorageUnavailable
from app.store.items import DistributionItemRepository
from app.store.models import Base
from app.store.models.documents import POSTGRESQL_ONLY_INDEXES, POSTGRESQL_ONLY_TABLES
from app.store.records import Company, DocumentInput, DocumentKind, Product
from tests.conftest import wait_until

EXPECTED_TABLES = {
    "companies",
    "capture_settings",
    "capture_state",
    "service_pauses",
    "call_leases",
    "node_lease",
    "documents",
    "document_versions",
    "document_parties",
    "events",
    "cte_carried_nfe",
    "other_consumers",
    "nfse_details",
    "distribution_items",
    "archived_exchanges",
    "gap_recoveries",
    "manifestations",
    "point_queries",
    "runs",
    "government_calls",
    "export_profiles",
    "export_queue",
    "handoff_targets",
    "handoff_deliveries",
    "document_reform",  # revision 0011
    "document_reform_items",
    "nfe_references",
    "schema_versions",  # revision 0012
}


def _declared(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
    if type_ == "table" and reflected and name in POSTGRESQL_ONLY_TABLES:
        return False
    return not (type_ == "index" and reflected and name in POSTGRESQL_ONLY_INDEXES)


def _diff(db: Database) -> list[object]:
    with db.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True, "include_object": _declared})
        return list(compare_metadata(context, Base.metadata))


def test_opening_creates_the_file_and_every_table(db_path: Path, sqlite_db: Database) -> None:
    assert db_path.is_file()
    tables = set(inspect(sqlite_db.engine).get_table_names())
    assert tables == EXPECTED_TABLES | {"alembic_version"}
    assert set(Base.metadata.tables) == EXPECTED_TABLES
    assert sqlite_db.revision() == head_revision()


def test_models_and_migrations_do_not_drift(db: Database) -> None:
    assert _diff(db) == []


def test_the_drift_check_does_see_a_difference(db: Database) -> None:
    # Guards the test above: a schema changed behind the models' back must show up.
    with db.engine.begin() as connection:
        connection.exec_driver_sql("DROP INDEX ix_documents_grid")
        connection.exec_driver_sql("ALTER TABLE runs ADD COLUMN stray INTEGER")
    kinds = {entry[0] for entry in _diff(db) if isinstance(entry, tuple)}
    assert {"add_index", "remove_column"} <= kinds


def test_a_database_of_the_first_revision_is_migrated_without_losing_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
        connection.exec_driver_sql(
            "INSERT INTO companies (id, cnpj, name, active, created_at, updated_at) "
            "VALUES (1, '11444777000161', 'ANTIGA LTDA', 1, '2026-01-01 00:00:00', '2026-01-01 00:00:00')"
        )
    engine.dispose()
    with open_database(path) as db:
        assert db.revision() == head_revision()
        assert _diff(db) == []
        indexes = {ix["name"] for table in ("documents", "events") for ix in inspect(db.engine).get_indexes(table)}
        assert "ix_documents_access_key" not in indexes and "ix_events_access_key" not in indexes
        with db.engine.connect() as connection:
            assert connection.exec_driver_sql("SELECT name FROM companies").scalar() == "ANTIGA LTDA"


@pytest.mark.parametrize(
    "sql",
    [
        # DocumentRepository.find / get_xml and the lot writer's look-up of known keys
        "SELECT id FROM documents WHERE company_id = 1 AND product = 'nfe' AND access_key = 'k'",
        "SELECT access_key FROM documents WHERE company_id = 1 AND product = 'nfe' AND access_key IN ('a', 'b')",
        # EventRepository.for_key, the cancelled-keys check and the lot writer's event look-ups
        "SELECT id FROM events WHERE company_id = 1 AND product = 'nfe' AND access_key = 'k' ORDER BY event_at",
        "SELECT DISTINCT access_key FROM events WHERE company_id = 1 AND product = 'nfe' "
        "AND tp_evento IN ('110111') AND access_key IN ('a', 'b')",
    ],
)
def test_look_ups_by_key_use_the_company_key_index(sqlite_db: Database, sql: str) -> None:
    with sqlite_db.engine.connect() as connection:
        plan = " | ".join(str(row[-1]) for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}"))
    assert "USING INDEX sqlite_autoindex_" in plan or "USING COVERING INDEX sqlite_autoindex_" in plan, plan
    assert "SCAN" not in plan.replace("SCAN CONSTANT ROW", ""), plan


def _pragmas(execute: Any) -> dict[str, object]:
    names = ("journal_mode", "foreign_keys", "synchronous", "busy_timeout", "wal_autocheckpoint")
    return {name: execute(f"PRAGMA {name}").fetchone()[0] for name in names}


def test_pragmas_are_on_for_every_connection(sqlite_db: Database) -> None:
    expected = {
        "journal_mode": "wal",
        "foreign_keys": 1,
        "synchronous": 1,  # NORMAL
        "busy_timeout": 15_000,
        # The size-based checkpoint is only a backstop: the Checkpointer thread does the work.
        "wal_autocheckpoint": WAL_BACKSTOP_PAGES,
    }
    with sqlite_db.engine.connect() as connection:
        assert _pragmas(connection.exec_driver_sql) == expected
    with sqlite_db.driver_connection() as driver:
        assert _pragmas(driver.execute) == expected
        assert driver.isolation_level is None  # transactions are begun explicitly


def test_driver_connections_are_reused_and_come_back_outside_a_transaction(db: Database) -> None:
    with db.driver_connection() as first:
        first.execute("BEGIN")  # left open by a failing caller
    with db.write_driver() as again:
        assert again is first  # the same connection, rolled back on its return
        again.execute("CREATE TABLE scratch (v TEXT)")
    with db.driver_connection() as one, db.driver_connection() as two:
        assert one is not two  # two at once (e.g. two threads) get their own
    db.close()
    with pytest.raises(StorageBug), db.driver_connection():
        pass


def test_a_burst_of_driver_connections_leaves_only_the_bounded_few_kept(sqlite_db: Database) -> None:
    # The pool keeps DRIVER_MAX_IDLE connections (each with its page cache); a burst's extra ones
    # are closed when returned (issue 20). Their descriptors may stay: SQLite's Unix VFS keeps a
    # closed connection's file open for reuse while others hold POSIX locks on the file.
    burst = DRIVER_MAX_IDLE + 3
    held = [sqlite_db.drivers.take() for _ in range(burst)]
    for connection in held:
        sqlite_db.drivers.give(connection)
    again = [sqlite_db.drivers.take() for _ in range(burst)]
    assert sum(connection in held for connection in again) == DRIVER_MAX_IDLE
    with pytest.raises(sqlite3.ProgrammingError):  # the extra ones were closed
        held[-1].execute("SELECT 1")
    for connection in again:
        sqlite_db.drivers.give(connection)


def test_commits_are_checkpointed_by_the_background_thread(sqlite_db: Database) -> None:
    before = sqlite_db.checkpointer.checkpoints
    with sqlite_db.write_driver() as driver:
        driver.execute("CREATE TABLE scratch (v TEXT)")
        driver.executemany("INSERT INTO scratch VALUES (?)", [("x" * 500,)] * 200)
    # The commit kicked the thread: within its interval it copies the WAL into the database.
    wait_until(lambda: sqlite_db.checkpointer.checkpoints > before, timeout=10)


def test_a_write_unit_rolls_back_on_error(db: Database) -> None:
    with pytest.raises(RuntimeError), db.write_driver() as driver:
        driver.execute("CREATE TABLE scratch (v TEXT)")
        raise RuntimeError("boom")
    with db.engine.connect() as connection:
        assert not inspect(connection).has_table("scratch")


def test_foreign_keys_are_enforced(db: Database) -> None:
    with pytest.raises(StorageBug), db.session() as s:
        s.execute(
            text(
                "INSERT INTO distribution_items (company_id, product, nsu, received_at) "
                "VALUES (999, 'nfe', 1, '2026-01-01 00:00:00.000000')"
            )
        )


def test_reopening_keeps_data_and_does_not_migrate_again(db_target: Path | str, company: Company, db: Database) -> None:
    db.close()
    again = open_database(db_target, clock=FakeClock())
    try:
        assert again.revision() == head_revision()
        with again.reader() as s:
            assert s.execute(text("SELECT cnpj FROM companies")).scalar() == company.cnpj.value
    finally:
        again.close()


def test_the_head_read_from_the_revision_files_is_alembics() -> None:
    assert _scripted_head() == head_revision()


def test_a_database_at_head_opens_without_importing_alembic(db_path: Path, sqlite_db: Database) -> None:
    # Alembic and Mako cost the tray ~11 MB (issue 20): imported only when a migration is due.
    sqlite_db.close()
    probe = (
        "import sys; from pathlib import Path; from app.store.db import open_database; "
        f"db = open_database(Path({str(db_path)!r})); db.close(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('alembic', 'mako')))"
    )
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True, text=True, timeout=120, check=True, cwd=root, env={**os.environ, "PYTHONPATH": root},
    )  # fmt: skip
    assert done.stdout.strip() == "[]"


def test_a_file_that_is_not_a_database_is_an_environment_error(tmp_path: Path) -> None:
    path = tmp_path / "lixo.db"
    path.write_bytes(b"isto nao e um banco sqlite" * 200)
    with pytest.raises(StorageUnavailable) as caught:
        open_database(path)
    assert "não é um banco de dados" in caught.value.message
    assert str(path) in caught.value.message


def test_a_database_from_a_newer_version_is_refused_with_a_clear_message(db_target: Path | str, db: Database) -> None:
    with db.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = 'ffff_future'")
    db.close()
    with pytest.raises(StorageUnavailable) as caught:
        open_database(db_target)
    assert "versão mais nova" in caught.value.message


def test_a_locked_database_is_an_environment_error(
    db_path: Path, sqlite_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.store.db.BUSY_TIMEOUT_MS", 50)
    impatient = open_database(db_path)
    blocker = sqlite3.connect(db_path, isolation_level=None)
    try:
        blocker.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StorageUnavailable) as caught, impatient.session() as s:
            s.execute(text("UPDATE companies SET name = name"))
        assert caught.value.sqlite_code == 5  # SQLITE_BUSY
        assert "ocupado" in caught.value.message
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        impatient.close()


def test_write_sessions_take_the_write_lock_at_begin(
    db_path: Path, sqlite_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    # BEGIN IMMEDIATE: a second writer waits at its first statement, even a SELECT, instead of
    # failing later when a deferred transaction tries to upgrade its lock.
    monkeypatch.setattr("app.store.db.BUSY_TIMEOUT_MS", 50)
    impatient = open_database(db_path)
    try:
        with sqlite_db.session() as holder:
            holder.execute(text("SELECT 1"))
            with pytest.raises(StorageUnavailable), impatient.session() as second:
                second.execute(text("SELECT 1"))
            with impatient.reader() as reader:
                assert reader.execute(text("SELECT 1")).scalar() == 1
    finally:
        impatient.close()


def test_readers_are_not_blocked_by_an_open_write(db: Database, company: Company) -> None:
    with db.session() as writer:
        writer.execute(text("UPDATE companies SET name = 'durante a escrita'"))
        with db.reader() as reader:  # WAL: the old snapshot, immediately
            assert reader.execute(text("SELECT name FROM companies")).scalar() == company.name
    with db.reader() as reader:
        assert reader.execute(text("SELECT name FROM companies")).scalar() == "durante a escrita"


def test_concurrent_writers_from_two_threads_lose_no_row(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    items = DistributionItemRepository(db)
    per_thread = 150
    errors: list[BaseException] = []
    start = threading.Barrier(2, timeout=10)

    def writer(offset: int) -> None:
        try:
            start.wait()
            for i in range(per_thread):
                nsu = offset + i
                docs.store(
                    company.id,
                    DocumentInput(
                        product=Product.NFE,
                        kind=DocumentKind.RES_NFE,
                        xml=f"<resNFe n='{nsu}'/>".encode(),
                        access_key=f"{nsu:044d}",
                        nsu=nsu,
                    ),
                )
                items.record(company.id, Product.CTE, nsu)
        except Exception as error:  # noqa: BLE001 (any failure is reported to the main thread)
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(base,)) for base in (1, 10_001)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "writer threads did not finish"
    assert errors == []
    with db.reader() as s:
        assert s.execute(text("SELECT count(*) FROM documents")).scalar() == 2 * per_thread
        assert s.execute(text("SELECT count(*) FROM distribution_items")).scalar() == 4 * per_thread


def test_writers_on_postgresql_wait_for_each_other_as_sqlite_writers_do(postgres_url: str) -> None:
    # BEGIN IMMEDIATE's guarantee on the office server: the writer lock (an advisory lock held
    # to COMMIT) makes a second write transaction wait at its begin, while readers go on.
    db = open_database(postgres_url, clock=FakeClock())
    other = open_database(postgres_url, clock=FakeClock())
    done = threading.Event()

    def second_writer() -> None:
        with other.write_driver() as driver:
            driver.execute("UPDATE companies SET name = name")
        done.set()

    def waiting_for_the_lock() -> int:
        with db.driver_connection() as driver:
            return int(
                driver.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").fetchone()[
                    0
                ]
            )

    try:
        with db.write_driver() as holder:
            holder.execute("UPDATE companies SET name = name")
            thread = threading.Thread(target=second_writer)
            thread.start()
            wait_until(lambda: waiting_for_the_lock() == 1)
            assert not done.is_set()
            with db.reader() as reader:  # readers are not blocked by the writers' lock
                assert reader.execute(text("SELECT 1")).scalar() == 1
        thread.join(timeout=10)
        assert done.is_set()
    finally:
        db.close()
        other.close()
