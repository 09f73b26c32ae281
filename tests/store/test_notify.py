"""The office database tells every workstation what changed (LISTEN/NOTIFY, app.store.notify).

Real PostgreSQL (the session's cluster): a commit on one ``Database`` (or another process) reaches
the feed of another within a timeout; a rollback tells nobody; a dropped listening connection is
opened again and says that anything may have changed meanwhile. SQLite has no feed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from app.core.clock import FakeClock
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.manifestations import ManifestationRepository
from app.store.notify import FEED_NAME, WATCHED, Change
from app.store.records import Product
from tests.store.conftest import CNPJ_A
from tests.support.postgres import PostgresCluster
from tests.support.workstation import in_another_process

TIMEOUT = 20.0
KEY = "35240112345678000195550010000000011000000010"


class Heard:
    """What a subscriber got, with a condition to wait on (no sleeps)."""

    def __init__(self) -> None:
        self.changes: list[Change] = []
        self._condition = threading.Condition()

    def __call__(self, change: Change) -> None:
        with self._condition:
            self.changes.append(change)
            self._condition.notify_all()

    def wait_for(self, predicate: Callable[[list[Change]], bool], what: str) -> list[Change]:
        with self._condition:
            if not self._condition.wait_for(lambda: predicate(self.changes), TIMEOUT):
                raise AssertionError(f"not heard within {TIMEOUT} s: {what}; heard {self.changes}")
            return list(self.changes)


@pytest.fixture
def office(postgres_cluster: PostgresCluster, migrated_postgres: str) -> Iterator[tuple[Database, Database, str]]:
    """Two workstations' ``Database`` on one office database: (writer, listener, url)."""
    url = postgres_cluster.new_database(template=migrated_postgres)
    writer, listener = open_database(url, clock=FakeClock()), open_database(url, clock=FakeClock())
    try:
        yield writer, listener, url
    finally:
        writer.close()
        listener.close()


def _listening(db: Database) -> Heard:
    heard = Heard()
    assert db.changes is not None
    db.changes.subscribe(heard)
    assert db.changes.listening.wait(TIMEOUT), "the feed never listened"
    return heard


def test_a_request_committed_on_one_workstation_reaches_the_listener_of_another(
    office: tuple[Database, Database, str],
) -> None:
    writer, listener, _url = office
    heard = _listening(listener)
    company = CompanyRepository(writer).add(CNPJ_A, "Alfa Comércio Ltda")  # companies: not watched
    ManifestationRepository(writer).request(
        company.id, Product.NFE, KEY, "210210", not_before=writer.clock.now()
    )  # SQLAlchemy's connection with prepared statements on its driver

    changes = heard.wait_for(lambda c: bool(c), "the manifestation request")
    assert changes[0].tables == frozenset({"manifestations"})  # the company's commit told nobody
    assert changes[0].requests and not changes[0].everything
    assert changes[0].mine  # both workstations live in this test's process


def test_a_driver_unit_tells_on_commit_and_a_rollback_tells_nobody(office: tuple[Database, Database, str]) -> None:
    writer, listener, _url = office
    heard = _listening(listener)
    with pytest.raises(RuntimeError), writer.write_driver() as driver:
        driver.execute("UPDATE events SET product = product WHERE id = ?", (-1,))
        raise RuntimeError("rolled back")
    with writer.write_driver() as driver:
        driver.execute("UPDATE documents SET product = product WHERE id = ?", (-1,))
        driver.execute("UPDATE document_versions SET document_id = document_id WHERE id = ?", (-1,))
    with writer.session() as session:  # an ORM session's flush: the same path as every write
        session.connection().exec_driver_sql("UPDATE gap_recoveries SET status = status WHERE id = -1")

    changes = heard.wait_for(lambda c: len(c) >= 2, "two commits")
    assert changes[0].tables == frozenset({"documents", "document_versions"})  # not the rolled-back events
    assert changes[0].requests is False
    assert changes[1].tables == frozenset({"gap_recoveries"}) and changes[1].requests


def test_a_commit_of_another_process_reaches_the_listener(office: tuple[Database, Database, str]) -> None:
    _writer, listener, url = office
    heard = _listening(listener)
    script = (
        "import sys\n"
        "from app.store.db import open_database\n"
        "db = open_database(sys.argv[1])\n"
        "with db.write_driver() as driver:\n"
        "    driver.execute('UPDATE events SET product = product WHERE id = ?', (-1,))\n"
        "db.close()\n"
    )
    in_another_process(script, url)

    changes = heard.wait_for(lambda c: bool(c), "the other process's commit")
    assert changes[0].tables == frozenset({"events"})
    assert changes[0].by is not None and not changes[0].mine  # told who wrote it: another process


def test_the_feed_listens_again_after_the_server_drops_its_connection(
    office: tuple[Database, Database, str], postgres_cluster: PostgresCluster
) -> None:
    writer, listener, url = office
    heard = _listening(listener)
    assert listener.changes is not None
    with psycopg.connect(postgres_cluster.admin_url(), autocommit=True) as admin:
        killed = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s AND datname = %s",
            (FEED_NAME, postgres_cluster.name_of(url)),
        ).fetchall()
    assert killed == [(True,)]

    changes = heard.wait_for(lambda c: any(x.everything for x in c), "the reconnection")
    assert changes[-1].tables == WATCHED and changes[-1].requests  # the node looks at its queue again
    assert listener.changes.connections == 2
    with writer.write_driver() as driver:
        driver.execute("UPDATE manifestations SET attempts = attempts WHERE id = ?", (-1,))
    changes = heard.wait_for(lambda c: c[-1].tables == frozenset({"manifestations"}), "a commit after reconnecting")


def test_a_desktop_file_has_no_feed(tmp_path: Path) -> None:
    db = open_database(tmp_path / "captura.db", clock=FakeClock())
    try:
        assert db.changes is None  # SQLite: no other writer to hear from; grids poll their mark
        with db.write_driver() as driver:  # and its writes know nothing of NOTIFY
            driver.execute("UPDATE documents SET product = product WHERE id = ?", (-1,))
    finally:
        db.close()


def test_a_payload_it_cannot_read_means_look_at_everything() -> None:
    assert Change.parse("not json") == Change(WATCHED, everything=True)
    assert Change.parse('{"tables": ["events"], "by": "x:1"}') == Change(frozenset({"events"}), by="x:1")
    assert not Change.parse('{"tables": ["events"], "by": "x:1"}').mine
