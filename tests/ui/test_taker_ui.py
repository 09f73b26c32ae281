"""NFS-e in the window: the grid lists them, the detail offers the taker's events, a confirmation
goes to the sandbox's Sefin over mutual TLS and comes back registered, a rejection asks for its
reason code and a 15-255 character text first."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from app.core.products import Product
from app.desk import Desk
from app.store.records import ManifestationStatus
from app.ui.main_window import MainWindow
from app.ui.taker_dialog import TakerDialog
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, product_harness


@pytest.fixture
def nfse(tmp_path: Path) -> Iterator[Harness]:
    with product_harness(tmp_path, Product.NFSE) as harness:
        yield harness
        assert harness.sandbox.referee.violations() == []


@contextmanager
def _nfse_tab(qtbot: QtBot, nfse: Harness, tmp_path: Path, key: str) -> Iterator[MainWindow]:
    """The window on the captured NFS-e's tab, once ``key`` is listed."""
    nfse.run_pending()
    desk = Desk(nfse.office.data_dir, clock=nfse.clock, capture=False)
    desk.open()
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    try:
        window.show()
        window.tabs.setCurrentIndex(list(Product).index(Product.NFSE))
        model = window.models[Product.NFSE]
        qtbot.waitUntil(lambda: any(r.access_key == key for r in model.rows), timeout=20_000)
        yield window
    finally:
        window.close()
        desk.close()


def test_an_nfse_is_confirmed_from_the_detail(qtbot: QtBot, nfse: Harness, tmp_path: Path) -> None:
    key = str(nfse.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT).key)
    with _nfse_tab(qtbot, nfse, tmp_path, key) as window:
        model = window.models[Product.NFSE]
        row_index = next(i for i, r in enumerate(model.rows) if r.access_key == key)
        window.views[Product.NFSE].selectRow(row_index)
        pane = window.detail
        qtbot.waitUntil(lambda: pane.detail is not None and pane.detail.row.access_key == key, timeout=20_000)
        confirm, reject = pane.buttons["203202"], pane.buttons["203206"]
        assert confirm.isVisibleTo(window) and reject.isVisibleTo(window) and confirm.isEnabled()
        assert not pane.buttons["210210"].isVisibleTo(window)  # the recipient's events are NF-e's
        [row] = window.selected_rows()
        window.manifestations.send_taker("203202", row, None, None)
        qtbot.waitUntil(lambda: getattr(window.manifestations, "last_outcomes", None) is not None, timeout=20_000)
        [(_fresh, outcome)] = window.manifestations.last_outcomes
        assert outcome.accepted, outcome.message
        stored = nfse.ctx.manifestations.for_key(row.company_id, Product.NFSE, key)
        assert [m.status for m in stored] == [ManifestationStatus.ACCEPTED]
        qtbot.waitUntil(lambda: pane.detail is not None and len(pane.detail.manifestations) == 1, timeout=20_000)
        assert not confirm.isEnabled()  # registered: nothing more to ask


def test_the_rejection_dialog_needs_a_reason_of_15_to_255_characters(qtbot: QtBot, nfse: Harness) -> None:
    key = str(nfse.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT).key)
    nfse.run_pending()
    desk = Desk(nfse.office.data_dir, clock=nfse.clock, capture=False)
    desk.open()
    try:
        [row] = [r for r in desk.find_key(key) if not r.is_event_row]
        dialog = TakerDialog("203206", row)
        qtbot.addWidget(dialog)
        send = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        assert dialog.text is not None and dialog.code is not None and not send.isEnabled()
        dialog.text.setPlainText("curto")
        assert not send.isEnabled() and dialog.count.text().startswith("5 caractere(s)")
        dialog.code.setCurrentIndex(dialog.code.findData("9"))
        dialog.text.setPlainText("Serviço não prestado nesta competência")
        assert send.isEnabled()
        assert (dialog.reason_code(), dialog.reason()) == ("9", "Serviço não prestado nesta competência")
        assert TakerDialog("203202", row).text is None  # a confirmation asks nothing more
    finally:
        desk.close()


def test_an_nfse_with_withheld_taxes_shows_both_values_in_the_grid_and_the_report(
    qtbot: QtBot, nfse: Harness, tmp_path: Path
) -> None:
    """Where ISS or federal taxes are withheld the taker pays the net value (vLiq): the grid and the
    documents report show it beside the service value (vServ), named as the DANFSe names them."""
    key = str(
        nfse.sandbox.publish_nfse(
            provider=SUPPLIER, taker=RECIPIENT, service_cents=1_000_000, retained_cents=61_500
        ).key
    )
    with _nfse_tab(qtbot, nfse, tmp_path, key) as window:
        model = window.models[Product.NFSE]
        headers = [c.header for c in model.columns]
        position = next(i for i, r in enumerate(model.rows) if r.access_key == key)
        service, net = headers.index("Valor do serviço"), headers.index("Valor líquido")
        assert model.index(position, service).data() == "R$ 10.000,00"
        assert model.index(position, net).data() == "R$ 9.385,00"
        from app.export.reports import NFSE_HEADERS, Filters, Reports

        [sheet] = Reports(nfse.ctx.db).documents(Filters((), (Product.NFSE,), None, None))
        row = next(r for r in sheet.rows if key in r)
        assert sheet.headers == NFSE_HEADERS
        values = dict(zip(sheet.headers, row, strict=True))
        assert str(values["Valor do serviço (R$)"]) == "10000.00" and str(values["Valor líquido (R$)"]) == "9385.00"
