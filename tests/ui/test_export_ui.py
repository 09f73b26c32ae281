"""Export from the window: a profile added with its name preview, refused for a bad pattern, and
the selected documents written to a folder."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from app.core.products import Product
from app.desk import Desk
from app.ui.export_dialog import ExportProfilesDialog
from app.ui.main_window import MainWindow
from tests.desk.conftest import Office


def _window(qtbot: QtBot, desk: Desk, tmp_path: Path) -> MainWindow:
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.models[Product.NFE].total is not None, timeout=20_000)
    return window


def test_a_profile_is_previewed_then_added_and_listed(qtbot: QtBot, desk: Desk, tmp_path: Path) -> None:
    window = _window(qtbot, desk, tmp_path)
    window.company_actions.open_profiles()
    dialog = window.company_actions.last_dialog
    assert isinstance(dialog, ExportProfilesDialog)
    assert "11222333000181/2026-11/NFe/" in dialog.preview.text()  # the archive preset's sample
    dialog.pattern.setText("{cnpj}/{xyz}.xml")
    assert "Campo desconhecido" in dialog.preview.text() and not dialog.add_button.isEnabled()
    dialog.kind.setCurrentIndex(dialog.kind.findData("importacao"))
    assert dialog.preview.text().startswith("NF-e: 35261199888777000100550010000001231000001234")
    dialog.name.setText("erp")
    dialog.destination.setText(str(tmp_path / "erp"))
    dialog.pdf.setChecked(True)
    dialog.add()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1, timeout=10_000)
    assert dialog.table.item(0, 0).text() == "erp" and dialog.table.item(0, 4).text() == "sim"
    assert dialog.name.text() == ""  # ready for the next one
    dialog.name.setText("erp")
    dialog.add()  # the same name again
    qtbot.waitUntil(lambda: "Já existe" in dialog.message.text(), timeout=10_000)
    assert dialog.table.rowCount() == 1


def test_the_selected_documents_are_exported_to_a_folder(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    window = _window(qtbot, desk, tmp_path)
    view = window.views[Product.NFE]
    view.selectAll()
    chosen = [r for r in window.selected_rows() if not r.is_event_row]
    folder = tmp_path / "saida"
    window.company_actions.export_documents(folder, pdf=True)
    qtbot.waitUntil(lambda: window.company_actions.last_export is not None, timeout=30_000)
    report = window.company_actions.last_export
    assert report is not None and report.documents == len(chosen) == 3
    written = sorted(p.name for p in folder.rglob("*.xml"))
    assert {k for k in office.received} <= {n.split("-")[0].split(".")[0] for n in written}
    assert "exportados" in window.statusBar().currentMessage()
