"""Relatórios → Créditos de IBS e CBS in the window: a reform NF-e captured from the sandbox over
mutual TLS, the report asked for its company and month, written on a worker (the click returns at
once), read back with openpyxl; the grid's IBS/CBS/IS columns shown; refusals said in Portuguese."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from openpyxl import load_workbook
from PySide6.QtCore import QDate
from pytestqt.qtbot import QtBot

from app.core.clock import BRASILIA
from app.core.products import Product
from app.export.reform_report import DOCUMENT_HEADERS
from app.ui import grid_columns
from app.ui.reform_report_dialog import ReformReportDialog, month_span, xlsx_path
from tests.cli.test_reform_capture import _capture
from tests.support.nfe_harness import nfe_harness
from tests.ui.test_rectify_and_fetch import _shot, _window


def test_the_xlsx_name_gets_its_suffix_once_whatever_its_case() -> None:
    # Windows file names ignore case: "Créditos.XLSX" is already a spreadsheet, not "….XLSX.xlsx".
    assert xlsx_path(r'"C:\Users\Contador\Créditos.XLSX"') == Path(r"C:\Users\Contador\Créditos.XLSX")
    assert xlsx_path("creditos") == Path("creditos.xlsx")
    assert xlsx_path("  ") is None
    assert month_span(QDate(2026, 2, 14), QDate(2026, 2, 3)) == (date(2026, 2, 1), date(2026, 2, 28))


def test_the_report_from_the_window_holds_the_captured_values(qtbot: QtBot, tmp_path: Path) -> None:
    with nfe_harness(tmp_path) as harness:
        key, _xml, (ibs, cbs, selective) = _capture(harness)
        with _window(qtbot, harness, tmp_path) as window:
            model = window.models[Product.NFE]
            qtbot.waitUntil(lambda: any(r.access_key == key for r in model.rows), timeout=20_000)
            view = window.views[Product.NFE]
            names = [c.name for c in model.columns]
            header = view.horizontalHeader()
            for name in ("ibs", "cbs", "is"):  # as from the header's menu of columns
                header.setSectionHidden(names.index(name), False)
            for name in ("tax_id", "deadline"):
                header.setSectionHidden(names.index(name), True)
            grid_columns.fit(view, model.columns)
            row = next(r for r in model.rows if r.access_key == key)
            shown = model.data(model.index(model.rows.index(row), names.index("cbs")))
            assert shown == f"R$ {cbs // 100:,}".replace(",", ".") + f",{cbs % 100:02d}"
            view.selectRow(model.rows.index(row))
            qtbot.waitUntil(lambda: "Reforma tributária" in window.detail.summary.toPlainText(), timeout=20_000)
            _shot(window, tmp_path, "reform_grid_columns.png")
            summary = window.detail.summary
            bar = summary.verticalScrollBar()
            bar.setValue(summary.cursorRect(summary.document().find("Reforma tributária")).top() + bar.value() - 4)
            _shot(window, tmp_path, "reform_detail_block.png")

            window.menus.ibs_cbs.trigger()
            dialog = window.menus.reform_report.dialog
            assert isinstance(dialog, ReformReportDialog) and dialog.isVisible()
            assert dialog.company.count() == 2 and dialog.company.currentText().startswith("Todas")
            issued = harness.clock.now().astimezone(BRASILIA).date()
            assert (dialog.first.date().month(), dialog.target.text().endswith(".xlsx")) == (
                QDate(issued.year, issued.month, 1).addMonths(-1).month(), True,
            )  # fmt: skip
            dialog.company.setCurrentIndex(1)
            dialog.first.setDate(QDate(issued.year, issued.month, 1))
            dialog.last.setDate(QDate(issued.year, issued.month, 1).addMonths(-1))
            dialog.generate.click()
            assert "anterior ao inicial" in dialog.answer.text()
            dialog.last.setDate(QDate(issued.year, issued.month, 1))
            dialog.target.setText(str(tmp_path / "sem-pasta" / "x.xlsx"))
            dialog.generate.click()
            qtbot.waitUntil(lambda: "não foi gravada" in dialog.answer.text(), timeout=20_000)
            target = tmp_path / "creditos"
            dialog.target.setText(str(target))
            dialog.generate.click()
            assert dialog.answer.text() == "Gerando a planilha…"  # the click returned; a worker writes
            assert not dialog.generate.isEnabled()
            qtbot.waitUntil(lambda: dialog.written is not None, timeout=30_000)
            assert dialog.written == target.with_suffix(".xlsx") and dialog.generate.isEnabled()
            assert "Planilha gravada em" in dialog.answer.text()
            _shot(dialog, tmp_path, "reform_report_dialog.png")

    book = load_workbook(target.with_suffix(".xlsx"))
    [line] = list(book["Documentos"].iter_rows(min_row=2, values_only=True))
    column = dict(zip(DOCUMENT_HEADERS, line, strict=True))
    assert column["Chave de acesso"] == key
    read = [column[t] for t in ("IBS total (R$)", "CBS (R$)", "Imposto Seletivo (R$)")]
    assert [None if v is None else round(v * 100) for v in read] == [ibs, cbs, selective]
