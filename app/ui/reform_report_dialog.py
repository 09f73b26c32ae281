"""Relatórios → Créditos de IBS e CBS: a company (or all), a span of months and where to save; the
XLSX is written by the desk on a worker (``Desk.save_report``), the window stays responsive, and
the dialog says where the file went or why it was not written."""

from __future__ import annotations

import calendar
from datetime import date
from pathlib import Path

from PySide6.QtCore import QDate, QObject, QStandardPaths
from PySide6.QtWidgets import (
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QGridLayout,
    QLabel,
    QLineEdit,
    QPushButton,
)

from app.core.clock import BRASILIA
from app.core.ids import Cnpj
from app.ui.company_list import ALL  # the window's "Todas as empresas": one value in both lists
from app.ui.window_host import WindowHost

TITLE = "Créditos de IBS e CBS por empresa e mês"
INTRO = (
    "Documentos recebidos, autorizados e não cancelados, com o IBS (estadual e municipal), a CBS, o "
    "Imposto Seletivo e os créditos presumidos por empresa, mês de emissão e produto; notas de crédito "
    "e de débito compensadas. A segunda aba lista os documentos de cada total."
)


def xlsx_path(text: str) -> Path | None:
    """The file the clerk named, with ``.xlsx`` added when missing (Windows compares it without case)."""
    text = text.strip().strip('"')
    if not text:
        return None
    path = Path(text)
    return path if path.suffix.lower() == ".xlsx" else path.with_name(path.name + ".xlsx")


def month_span(first: QDate, last: QDate) -> tuple[date, date]:
    """The first day of ``first``'s month to the last day of ``last``'s."""
    end_day = calendar.monthrange(last.year(), last.month())[1]
    return date(first.year(), first.month(), 1), date(last.year(), last.month(), end_day)


class ReformReportDialog(QDialog):
    """Company, months, file; ``rows``/``written`` after a report, for tests."""

    written: Path | None = None
    rows: int | None = None

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.setWindowTitle(TITLE)
        self.setMinimumWidth(640)
        self.host = host
        host.company_list.listed.connect(self._list_companies)  # opened before the list was read
        self.company = QComboBox(self)
        self.company.setObjectName("company")
        self.first = self._month_edit("first")
        self.last = self._month_edit("last")
        self.target = QLineEdit(self)
        self.target.setObjectName("target")
        self.target.setClearButtonEnabled(True)
        choose = QPushButton("Escolher…", self)
        choose.clicked.connect(self._choose)
        self.answer = QLabel(self)
        self.answer.setObjectName("result")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, parent=self)
        self.generate = self.buttons.addButton("Gerar planilha", QDialogButtonBox.ButtonRole.ActionRole)
        self.generate.setObjectName("generate")
        self.generate.setDefault(True)
        self.generate.clicked.connect(lambda: self.save())
        self.buttons.rejected.connect(self.reject)
        intro = QLabel(INTRO, self)
        for text in (intro, self.answer):
            text.setWordWrap(True)
        # On a grid of seven columns: the intro; Empresa; Mês de emissão de … até …; Salvar em …
        # Escolher…; the answer; the buttons.
        rows = (
            (None, ((intro, 7),)),
            ("Empresa:", ((self.company, 6),)),
            ("Mês de emissão:", ((QLabel("de", self), 1), (self.first, 1), (QLabel("até", self), 1), (self.last, 1))),
            ("Salvar em:", ((self.target, 5), (choose, 1))),
            (None, ((self.answer, 7),)),
            (None, ((self.buttons, 7),)),
        )
        grid = QGridLayout(self)
        for row, (label, cells) in enumerate(rows):
            column = 0
            if label is not None:
                grid.addWidget(QLabel(label, self), row, 0)
                column = 1
            for widget, span in cells:
                grid.addWidget(widget, row, column, 1, span)
                column += span
        grid.setColumnStretch(5, 1)  # after the months: they keep their width

    def _month_edit(self, name: str) -> QDateEdit:
        edit = QDateEdit(self)
        edit.setObjectName(name)
        edit.setDisplayFormat("MM/yyyy")
        edit.setCalendarPopup(True)
        return edit

    def prepare(self) -> None:
        """The companies as the window lists them, the company selected there, last month."""
        self._list_companies(self.host.company_list.company_id())
        today = self.host.desk.now().astimezone(BRASILIA).date()
        previous = QDate(today.year, today.month, 1).addMonths(-1)
        if self.written is None:
            self.first.setDate(previous)
            self.last.setDate(previous)
        if not self.target.text():
            folder = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
            name = f"creditos-ibs-cbs-{previous.toString('yyyy-MM')}.xlsx"
            self.target.setText(str(Path(folder) / name) if folder else name)
        self.answer.clear()

    def _list_companies(self, chosen: int | None = None) -> None:
        """The window's companies in the combo, ``chosen`` (else the one chosen here) selected."""
        if chosen is None:
            chosen = int(self.company.currentData()) if self.company.count() else ALL
        self.company.clear()
        self.company.addItem("Todas as empresas", ALL)
        for line in self.host.company_list.lines:
            self.company.addItem(f"{line.name} — {Cnpj.parse(line.cnpj).formatted()}", line.company_id)
        self.company.setCurrentIndex(max(self.company.findData(chosen), 0))

    def _choose(self) -> None:
        chosen, _ = QFileDialog.getSaveFileName(self, "Salvar relatório", self.target.text(), "Planilha (*.xlsx)")
        if chosen:
            self.target.setText(chosen)

    def save(self) -> None:
        """Check what was asked, then write the XLSX on a worker."""
        path = xlsx_path(self.target.text())
        first, last = month_span(self.first.date(), self.last.date())
        if path is None:
            self._say("Escolha onde gravar a planilha.", problem=True)
            return
        if last < first:
            self._say("O mês final é anterior ao inicial.", problem=True)
            return
        company = int(self.company.currentData())
        ids = () if company == ALL else (company,)
        desk = self.host.desk
        self.generate.setEnabled(False)
        self._say("Gerando a planilha…")
        self.host.tasks.run(
            lambda: desk.save_report("ibs-cbs", path, company_ids=ids, first_day=first, last_day=last),
            lambda rows: self._done(path, rows),
            self._failed,
        )

    def _done(self, path: Path, rows: int) -> None:
        self.generate.setEnabled(True)
        self.written, self.rows = path, rows
        self._say(f"Planilha gravada em {path} ({rows} linha(s) nas duas abas).")

    def _failed(self, error: BaseException) -> None:
        self.generate.setEnabled(True)
        reason = getattr(error, "message", None) or getattr(error, "strerror", None) or str(error)
        self._say(f"A planilha não foi gravada: {reason}", problem=True)

    def _say(self, text: str, *, problem: bool = False) -> None:
        self.answer.setStyleSheet("color: #a30000;" if problem else "")
        self.answer.setText(text)


class ReformReport(QObject):
    """The menu entry's controller: one dialog, made on first use and opened again as it was left
    (nothing to report on before the data folder is open)."""

    dialog: ReformReportDialog | None = None

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host

    def open(self) -> None:
        if self.host.opened is not None:
            self.dialog = self.dialog or ReformReportDialog(self.host)
            self.dialog.prepare()
            self.dialog.open()
