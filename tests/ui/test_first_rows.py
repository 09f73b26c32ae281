"""The window's opening in two steps (issue 24): the current grid's first page comes from the
desk's store before the capture starts, for the company chosen last time, and is not read again
when the companies are listed after."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from app.core.products import Environment, Product
from app.desk import Desk
from app.ui.company_list import ALL, LOADING
from app.ui.main_window import MainWindow
from app.ui.reform_report_dialog import ReformReportDialog
from tests.desk.conftest import Office
from tests.support.nfe_harness import RECIPIENT


def test_the_first_rows_come_before_the_capture_starts_for_the_company_chosen_last_time(
    qtbot: QtBot, office: Office, tmp_path: Path
) -> None:
    harness = office.harness
    company = next(c for c in harness.office.companies.list_companies() if c.cnpj.value == RECIPIENT)
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    settings.setValue("last_company", RECIPIENT)
    made: list[Desk] = []

    def make() -> Desk:  # as app.ui.app.run_gui: the desk made on the opening worker
        made.append(Desk(harness.office.data_dir, clock=harness.clock, capture=False))
        return made[0]

    window = MainWindow(make, settings=settings)
    qtbot.addWidget(window)
    model = window.models[Product.NFE]
    seen: list[tuple[object, ...]] = []
    reads: list[tuple[int, ...]] = []
    model.loaded.connect(lambda: seen.append(("rows", model.grid_filter.company_ids, made[0].opened is None)))
    model.modelReset.connect(lambda: reads.append(model.grid_filter.company_ids))
    window.ready.connect(lambda: seen.append(("ready",)))
    window.show()
    try:
        qtbot.waitUntil(lambda: ("ready",) in seen and window.company_list.count() == 2, timeout=30_000)
        assert seen[0] == ("rows", (company.id,), True)  # the capture's opening had not ended yet
        assert window.company_list.company_id() == company.id
        assert reads == [(company.id,)]  # the companies listed after select it: the grid is not read again
        assert {r.company_id for r in model.rows} == {company.id} and len(model.rows) == 4
        assert window.opened is not None and window.opened.read_only is False
    finally:
        window.close()
        if made:
            made[0].close()


def test_the_company_list_says_it_is_loading_and_the_report_follows_the_list(
    qtbot: QtBot, office: Office, tmp_path: Path
) -> None:
    """Before the desk's first read of the companies the list says it is loading (not an empty
    panel, not a clickable line); the IBS/CBS report opened while the list changes offers what the
    window lists, keeping the company chosen in it."""
    harness = office.harness
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    go = threading.Event()
    made: list[Desk] = []

    def make() -> Desk:  # the opening worker waits until the test has looked at the window
        assert go.wait(30)
        made.append(Desk(harness.office.data_dir, clock=harness.clock, capture=False))
        return made[0]

    window = MainWindow(make, settings=settings)
    qtbot.addWidget(window)
    window.show()
    try:
        companies = window.company_list
        assert [companies.item(i).text() for i in range(companies.count())] == [LOADING]
        assert not companies.item(0).flags() & Qt.ItemFlag.ItemIsSelectable
        assert companies.company_id() == ALL
        go.set()
        qtbot.waitUntil(lambda: window.opened is not None and companies.count() == 2, timeout=30_000)
        assert companies.item(0).text().startswith("Todas as empresas")

        window.menus.ibs_cbs.trigger()
        dialog = window.menus.reform_report.dialog
        assert isinstance(dialog, ReformReportDialog)
        dialog.company.setCurrentIndex(1)
        chosen = dialog.company.currentData()
        cert = harness.sandbox.company("55666777000181", "NOVA CLIENTE LTDA")
        made[0].admin.add_company(
            cert.pfx, cert.password, cnpj=None, name=None, environment=Environment.HOMOLOGACAO, products=()
        )
        with qtbot.waitSignal(companies.listed, timeout=20_000):
            window.refresh_companies()
        assert dialog.company.count() == 3 and dialog.company.currentData() == chosen
        dialog.grab().save(str(tmp_path / "relatorio_empresas.png"))  # looked at: the company listed, CNPJ formatted
        companies.setCurrentRow(0)  # "Todas as empresas" in the window: the same choice in the report
        dialog.prepare()
        assert dialog.company.currentIndex() == 0 and dialog.company.currentData() == ALL
        assert any("NOVA CLIENTE" in dialog.company.itemText(i) for i in range(3))
    finally:
        go.set()
        window.close()
        if made:
            made[0].close()
