"""The window's opening in two steps (issue 24): the current grid's first page comes from the
desk's store before the capture starts, for the company chosen last time, and is not read again
when the companies are listed after."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.core.products import Product
from app.desk import Desk
from app.ui.main_window import MainWindow
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
