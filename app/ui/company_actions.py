"""The Empresas and Ferramentas menus (and the company list's context menu): add, edit, resume,
remove a company; the settings dialog. Every desk call runs on the window's workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDialog, QFileDialog, QMenu, QMessageBox

from app.core.products import Product
from app.desk import labels
from app.desk.views import CompanyLine
from app.ui.company_dialog import CompanyDialog
from app.ui.company_list import ALL
from app.ui.export_dialog import ExportProfilesDialog
from app.ui.settings_dialog import SettingsDialog
from app.ui.window_host import WindowHost


def _thousands(value: int) -> str:
    return f"{value:,}".replace(",", ".")


class CompanyActions(QObject):
    """The window's company and settings actions; ``last_dialog``/``last_box`` for tests."""

    def __init__(self, window: WindowHost) -> None:
        super().__init__(window.window())
        self.window = window
        self.last_dialog: QDialog | None = None
        self.last_box: QMessageBox | None = None
        self.last_export: Any = None  # the last export's report (app.export.manual.ManualReport)
        bar = window.menuBar()
        office = bar.addMenu("&Empresas")
        self.add = office.addAction("Adicionar empresa…", self.add_company)
        self.add.setObjectName("add-company")
        self.edit = office.addAction("Editar empresa e certificado…", self.edit_company)
        self.resume = office.addAction("Retomar captura interrompida", self.resume_company)
        office.addSeparator()
        self.remove = office.addAction("Remover empresa…", self.remove_company)
        tools = bar.addMenu("&Ferramentas")
        self.export_selected = tools.addAction("Exportar documentos selecionados…", self.export_documents)
        self.profiles = tools.addAction("Perfis de exportação automática…", self.open_profiles)
        tools.addSeparator()
        self.settings = tools.addAction("Configurações…", self.open_settings)
        self.settings.setObjectName("settings")
        companies = window.company_list
        companies.customContextMenuRequested.connect(self._context_menu)
        companies.itemDoubleClicked.connect(lambda _item: self.edit_company())
        self.enable()

    def enable(self) -> None:
        writable = self.window.writable
        chosen = self.window.company_list.company_id() != ALL
        self.add.setEnabled(writable)
        self.settings.setEnabled(self.window.opened is not None)
        self.export_selected.setEnabled(self.window.opened is not None)
        self.profiles.setEnabled(writable)
        for action in (self.edit, self.resume, self.remove):
            action.setEnabled(writable and chosen)

    def _context_menu(self, position: Any) -> None:
        menu = QMenu(self.window.window())
        menu.addAction(self.add)
        if self.window.company_list.company_id() != ALL:
            menu.addAction(self.edit)
            menu.addAction(self.resume)
            menu.addSeparator()
            menu.addAction(self.remove)
        menu.popup(self.window.company_list.viewport().mapToGlobal(position))

    def _selected(self) -> CompanyLine | None:
        companies = self.window.company_list
        return companies.line(companies.company_id())

    def _status(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 15_000)

    # ------------------------------------------------------------------ dialogs

    def add_company(self) -> None:
        self.open_company(None)

    def edit_company(self) -> None:
        line = self._selected()
        if line is not None:
            self.open_company(line.company_id)

    def open_company(self, company_id: int | None) -> None:
        window = self.window
        if not window.writable:
            return
        dialog = CompanyDialog(window.desk, window.tasks, company_id, window.window())
        dialog.saved.connect(lambda _id: window.refresh_companies())
        self.last_dialog = dialog
        dialog.open()

    def open_settings(self) -> None:
        window = self.window
        if window.opened is None:
            return
        dialog = SettingsDialog(window.desk, window.tasks, window.window())
        dialog.saved.connect(lambda notes: self._status(" ".join(notes)))
        self.last_dialog = dialog
        dialog.open()

    def open_profiles(self) -> None:
        window = self.window
        if not window.writable:
            return
        dialog = ExportProfilesDialog(window.desk, window.tasks, window.window())
        self.last_dialog = dialog
        dialog.open()

    def export_documents(self, folder: Path | None = None, *, pdf: bool | None = None) -> None:
        """The selected documents (with their events) to a folder, in the archive pattern."""
        window = self.window
        rows = [r for r in window.selected_rows() if not r.is_event_row]
        if not rows or window.opened is None:
            self._status("Selecione os documentos a exportar.")
            return
        if folder is None:
            chosen = QFileDialog.getExistingDirectory(window.window(), "Exportar para a pasta", str(Path.home()))
            if not chosen:
                return
            folder = Path(chosen)
        if pdf is None:
            pdf = (
                QMessageBox.question(window.window(), "Exportar", "Gravar também os PDFs (DANFE, DACTE, DANFSe)?")
                == QMessageBox.StandardButton.Yes
            )
        ids = tuple(r.row_id for r in rows)
        desk, target, with_pdf = window.desk, folder, pdf

        def done(report: Any) -> None:
            self.last_export = report
            files = len(report.files.files)
            counts = f"{report.documents} documento(s) e {report.events} evento(s) exportados"
            self._status(f"{counts}: {files} arquivo(s) em {target}.")

        window.tasks.run(lambda: desk.exports.export_documents(ids, target, pdf=with_pdf), done)

    # ------------------------------------------------------------------ requests

    def resume_company(self) -> None:
        line, window = self._selected(), self.window
        if line is None:
            return

        def done(resumed: list[Product]) -> None:
            names = ", ".join(p.label for p in resumed)
            self._status(
                f"{line.name}: captura de {names} retomada."
                if resumed
                else f"{line.name}: nenhuma captura interrompida ou pausada."
            )
            window.refresh_companies()

        window.tasks.run(lambda: window.desk.admin.resume(line.company_id), done)

    def remove_company(self) -> None:
        """Ask how many documents are at stake first (a read on a worker), then confirm."""
        line, window = self._selected(), self.window
        if line is None or not window.writable:
            return
        window.tasks.run(
            lambda: window.desk.admin.document_count(line.company_id), lambda n: self._confirm_removal(line, n)
        )

    def _confirm_removal(self, line: CompanyLine, stored: int) -> None:
        window = self.window
        box = QMessageBox(QMessageBox.Icon.Question, "Remover empresa", "", parent=window.window())
        box.setObjectName("remove-company")
        box.setText(
            f"Remover {line.name} ({labels.tax_id(line.cnpj)})?\n\n"
            f"A captura para e o certificado sai do cofre. {_thousands(stored)} documento(s) e evento(s) "
            "estão guardados para esta empresa."
        )
        keep = box.addButton("Remover e manter os documentos", QMessageBox.ButtonRole.AcceptRole)
        purge = box.addButton(
            f"Remover e apagar {_thousands(stored)} documento(s)", QMessageBox.ButtonRole.DestructiveRole
        )
        box.addButton("Cancelar", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(keep)
        self.last_box = box

        def chosen(button: Any) -> None:
            if button not in (keep, purge):
                return
            delete = button is purge

            def done(deleted: int) -> None:
                kept = f"; {_thousands(deleted)} documento(s) apagado(s)." if delete else "; documentos mantidos."
                self._status(f"{line.name} removida{kept}")
                window.refresh_companies()
                window.apply_filters(force=True)

            window.tasks.run(lambda: window.desk.admin.remove_company(line.company_id, delete_documents=delete), done)

        box.buttonClicked.connect(chosen)
        box.open()
