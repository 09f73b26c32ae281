"""Live workstations on one office database (LISTEN/NOTIFY, app.store.notify), on real PostgreSQL.

* The Painel lists every workstation connected (app.store.presence): the node and a standby.

* A clerk's window (real widgets, offscreen, 1366×768) with its poll timer stopped: a document
  another workstation stores reaches the open grid without a key, by the server's notification.
* The capture node hears a clerk's manifestation request and runs its dispatch at once, well
  before the job's 60 s interval.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.core.clock import SystemClock
from app.core.products import Product
from app.desk import Desk
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.documents import DocumentRepository
from app.store.records import Company
from tests.conftest import wait_until
from tests.store.conftest import CNPJ_A
from tests.store.test_documents import KEY, _res_nfe, _summary_input
from tests.support.screens import keep_screenshot, open_window
from tests.support.workstation import in_another_process

LIVE_MS = 5_000  # the goal for a change to be on screen


@pytest.fixture
def office(postgres_url: str) -> Iterator[tuple[Database, Company]]:
    """The office database, as a second workstation writes it, with one company."""
    db = open_database(postgres_url, clock=SystemClock())
    try:
        yield db, CompanyRepository(db).add(CNPJ_A, "Alfa Comércio Ltda")
    finally:
        db.close()


def test_a_document_stored_by_another_workstation_shows_in_the_open_grid(
    qtbot: QtBot, office: tuple[Database, Company], postgres_url: str, tmp_path: Path
) -> None:
    other, company = office
    desk = Desk(tmp_path / "estacao-a", capture=False, database=postgres_url, owner="teste (cliente)")
    desk.open()
    try:
        window = open_window(qtbot, desk, tmp_path)
        model = window.models[Product.NFE]
        qtbot.waitUntil(lambda: model.total is not None, timeout=20_000)
        window.live.timer.stop()  # no polling: only the office server's notification can bring it
        assert model.rows == []
        changes = desk._context().db.changes
        assert changes is not None
        qtbot.waitUntil(changes.listening.is_set, timeout=20_000)

        today = datetime.now(UTC)
        stored = DocumentRepository(other).store(company.id, replace(_summary_input(_res_nfe()), issued_at=today))

        qtbot.waitUntil(lambda: [r.access_key for r in model.rows] == [KEY], timeout=LIVE_MS)
        assert stored.document_id and model.total == 1
        assert not window.live.timer.isActive()
        keep_screenshot(window, "grade-ao-vivo-escritorio.png")
        window.close()
    finally:
        desk.close()


def _pending(db: Database) -> int:
    with db.driver_connection() as connection:
        return int(connection.execute("SELECT count(*) FROM manifestations WHERE status = 'pending'").fetchone()[0])


def _manifestation_runs(db: Database) -> int:
    with db.driver_connection() as connection:
        row = connection.execute("SELECT count(*) FROM runs WHERE job_type = ?", ("manifestacoes",)).fetchone()
    return int(row[0])


def test_the_node_dispatches_a_clerks_request_as_soon_as_it_is_committed(
    office: tuple[Database, Company], postgres_url: str, tmp_path: Path
) -> None:
    clerk, company = office
    node = Desk(tmp_path / "no", database=postgres_url, owner="teste (nó)")
    node.open()
    try:
        assert node.capturing  # the lease was free: this desk is the office's node
        changes = node._context().db.changes
        assert changes is not None
        wait_until(changes.listening.is_set, timeout=20)
        wait_until(lambda: _manifestation_runs(clerk) == 1, timeout=20)  # the job's first run, at start
        requested = time.monotonic()
        # The clerk's workstation is another process (what the node's own process writes, its own
        # dispatch settling a request, never wakes it). Not due for a day: the dispatch looks at
        # it and sends nothing (no government here).
        script = (
            "import sys\n"
            "from datetime import timedelta\n"
            "from app.store.db import open_database\n"
            "from app.store.manifestations import ManifestationRepository\n"
            "from app.store.records import Product\n"
            "db = open_database(sys.argv[1])\n"
            "later = db.clock.now() + timedelta(days=1)\n"
            "company_id, key = int(sys.argv[2]), sys.argv[3]\n"
            "ManifestationRepository(db).request(company_id, Product.NFE, key, '210210', not_before=later)\n"
            "db.close()\n"
        )
        in_another_process(script, postgres_url, str(company.id), KEY)
        assert _pending(clerk) == 1
        wait_until(lambda: _manifestation_runs(clerk) == 2, timeout=20)
        assert time.monotonic() - requested < 60  # the job's interval is 60 s: the notification ran it
    finally:
        node.close()


def test_the_painel_lists_every_workstation_connected(
    qtbot: QtBot, office: tuple[Database, Company], postgres_url: str, tmp_path: Path
) -> None:
    node = Desk(tmp_path / "no", database=postgres_url, owner="teste (nó)")
    client = Desk(tmp_path / "cliente", database=postgres_url, owner="teste (cliente)")
    try:
        node.open()
        client.open()
        assert node.capturing and not client.capturing  # the client's node stands by
        window = open_window(qtbot, client, tmp_path)
        window.pages.setCurrentIndex(1)
        table = window.dashboard.stations_table
        table.parentWidget().parentWidget().setCurrentWidget(table)  # its tab in the Painel
        qtbot.waitUntil(lambda: table.rowCount() == 2, timeout=20_000)
        lines = [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]
        assert [line[1] for line in lines] == ["captura", "cliente"]  # the node connected first
        assert lines[1][0].endswith(" · esta estação") and not lines[0][0].endswith(" · esta estação")
        assert all(f"(PID {os.getpid()})" in line[0] for line in lines)
        label = window.dashboard.node
        qtbot.waitUntil(lambda: label.width() >= label.sizeHint().width(), timeout=5_000)  # laid out whole
        assert label.text().startswith("Captura: estação")
        keep_screenshot(window, "painel-estacoes-conectadas.png")
        window.close()
        node.close()  # a clean stop: the node leaves the list at once
        assert [s.here for s in client.capture_node().stations] == [True]
    finally:
        client.close()
        node.close()
