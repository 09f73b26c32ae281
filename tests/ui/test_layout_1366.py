"""The usual office laptop, 1366×768: the default columns fit without horizontal scrolling (Valor,
Situação and Prazo visible), at least 15 rows of the grid show, and the Painel's "Última resposta"
is not cut. The screens are written for a person to look at."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.core.products import Product
from app.desk import Desk
from app.ui import grid_columns
from app.ui.main_window import MainWindow
from tests.conftest import show_artifacts

SCREEN = (1366, 768)
MIN_ROWS = 15


def test_the_window_fits_a_1366_by_768_screen(qtbot: QtBot, desk: Desk, tmp_path: Path) -> None:
    shots = show_artifacts("Janela em 1366x768", tmp_path / "telas")
    shots.mkdir()
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(*SCREEN)
    window.show()
    qtbot.waitUntil(lambda: window.models[Product.NFE].total is not None, timeout=20_000)
    qtbot.waitUntil(lambda: window.company_list.count() > 1, timeout=20_000)
    for product in Product:
        window.tabs.setCurrentIndex(list(Product).index(product))
        view = window.views[product]
        qtbot.waitUntil(lambda v=view: v.isVisible())  # type: ignore[misc]
        header = view.horizontalHeader()
        shown = [
            window.models[product].columns[i].header for i in range(header.count()) if not header.isSectionHidden(i)
        ]
        values = {"Valor do serviço", "Valor líquido"} if product is Product.NFSE else {"Valor"}
        assert {*values, "Situação"} <= set(shown), shown
        if product is Product.NFE:
            assert "Prazo" in shown
        assert header.length() <= view.viewport().width(), (product, header.length(), view.viewport().width())
        assert not view.horizontalScrollBar().isVisible()
        rows = view.viewport().height() // view.verticalHeader().defaultSectionSize()
        assert rows >= MIN_ROWS, rows
        window.grab().save(str(shots / f"janela-{product.value}.png"))
    window.tabs.setCurrentIndex(0)
    window.pages.setCurrentIndex(1)
    qtbot.waitUntil(lambda: window.dashboard.isVisible())
    qtbot.waitUntil(lambda: window.dashboard.status_table.rowCount() > 0, timeout=20_000)
    table = window.dashboard.status_table
    header = table.horizontalHeader()
    answer = next(i for i in range(header.count()) if table.horizontalHeaderItem(i).text() == "Última resposta")
    assert header.sectionViewportPosition(answer) + header.sectionSize(answer) <= table.viewport().width()
    for row in range(table.rowCount()):
        item = table.item(row, answer)
        if item is not None and item.text():
            assert table.fontMetrics().horizontalAdvance(item.text()) + 12 <= header.sectionSize(answer), item.text()
    # The ADN's answers are long: the column widens within the screen, and what is left wraps.
    from dataclasses import replace

    long = "E2220 — Certificado de transmissão não autorizado para consultar os documentos deste CNPJ no ADN"
    window.dashboard.lines = [replace(line, last_answer=long) for line in window.dashboard.lines]
    window.dashboard._show_lines()
    assert table.item(0, answer).text() == long
    assert header.sectionViewportPosition(answer) + header.sectionSize(answer) <= table.viewport().width()
    assert table.wordWrap() and table.rowHeight(0) > table.verticalHeader().defaultSectionSize()
    window.grab().save(str(shots / "painel.png"))


def test_a_column_shown_from_the_header_menu_stays_shown_next_time(qtbot: QtBot, desk: Desk, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)

    def opened() -> MainWindow:
        window = MainWindow(desk, settings=settings)
        qtbot.addWidget(window)
        window.resize(*SCREEN)
        window.show()
        qtbot.waitUntil(lambda: window.models[Product.NFE].total is not None, timeout=20_000)
        return window

    window = opened()
    header = window.views[Product.NFE].horizontalHeader()
    key = [c.name for c in window.models[Product.NFE].columns].index("key")
    assert header.isSectionHidden(key)  # by default: read in the detail pane
    menu = grid_columns.columns_menu(window.views[Product.NFE], window.models[Product.NFE].columns)  # a right click
    next(a for a in menu.actions() if a.text() == "Chave de acesso").setChecked(True)
    assert not header.isSectionHidden(key)
    window.close()
    again = opened()
    assert not again.views[Product.NFE].horizontalHeader().isSectionHidden(key)
