"""The Painel tells the clerk that another system consumes a company with the same certificate
(issue 22): a real capture over mutual TLS meets the 656 the other system provokes (offscreen)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.core.cadence import Action
from app.core.products import Product
from app.desk import Desk
from app.ui.main_window import MainWindow
from tests.desk.conftest import Office
from tests.support.nfe_harness import RECIPIENT, SUPPLIER


@pytest.fixture
def capturing(office: Office) -> Iterator[Desk]:
    desk = Desk(office.harness.office.data_dir, clock=office.harness.clock, owner="teste")
    try:
        yield desk
    finally:
        desk.close()


def test_the_painel_says_another_system_took_the_documents_and_what_to_do(
    qtbot: QtBot, capturing: Desk, office: Office, tmp_path: Path
) -> None:
    harness = office.harness
    window = MainWindow(capturing, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1366, 768)
    window.show()
    window.pages.setCurrentIndex(1)
    board = window.dashboard
    qtbot.waitUntil(lambda: board.status_table.rowCount() >= 1, timeout=20_000)
    assert not board.other_consumers.isVisible()
    row = next(r for r, ln in enumerate(board.lines) if ln.product is Product.NFE)
    allowed = board.lines[row].next_query_at
    assert allowed is not None
    # Two NF-e arrive; the client's ERP, with the same certificate, reads them at the end of the hour.
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.other_consumer(RECIPIENT, "nfe")
    harness.clock.set(allowed + timedelta(seconds=5))
    board.status_table.selectRow(row)
    qtbot.waitUntil(board.query_button.isEnabled)
    board.query_selected()
    qtbot.waitUntil(lambda: board.last_query is not None, timeout=30_000)
    qtbot.waitUntil(lambda: any(ln.action is Action.BLOCKED for ln in board.lines), timeout=20_000)
    qtbot.waitUntil(board.other_consumers.isVisible, timeout=20_000)
    text = board.other_consumers.text()
    assert text.startswith("DESTINATARIA EXEMPLO LTDA: Outro sistema está consultando as NF-e desta empresa")
    assert "0 documentos recuperados, 2 pendentes (até 20 por hora)" in text
    assert "Mantenha um só sistema consultando" in text
    row = next(r for r, ln in enumerate(board.lines) if ln.product is Product.NFE)
    assert "Outro sistema está consultando" in board.status_table.item(row, 9).toolTip()
    assert board.status_table.item(row, 7).text() == "2"  # the gaps it left, pending
    shot = os.environ.get("CAPTURA_SCREENSHOTS")
    if shot:  # rendered for a person to look at (house rule), not compared
        window.grab().save(str(Path(shot) / "painel-outro-sistema.png"))
