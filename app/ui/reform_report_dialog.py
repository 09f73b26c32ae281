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
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
)

from app.core.clock import BRASILIA
from app.core.ids import Cnpj
from app.ui.window_host import WindowHost

TITLE = "Créditos de IBS e CBS por empresa e mês"
ALL = 0
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

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.written: Path | None = None
        self.rows: int | None = None
        self.setWindowTitle(TITLE)
        self.setMinimumWidth(640)
        layout = QVBoxLayout(self)
        intro = QLabel(INTRO, self)
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        self.company = QComboBox(self)
        self.company.setObjectName("company")
        form.addRow("Empresa:", self.company)
        months = QHBoxLayout()
        self.first = self._month_edit("first")
        self.last = self._month_edit("last")
        months.addWidget(QLabel("de", self))
        months.addWidget(self.first)
        months.addWidget(QLabel("até", self))
        months.addWidget(self.last)
        months.addStretch(1)
        form.addRow("Mês de emissão:", months)
        target = QHBoxLayout()
        self.target = QLineEdit(self)
        self.target.setObjectName("target")
        self.target.setClearButtonEnabled(True)
        target.addWidget(self.target, 1)
        choose = QPushButton("Escolher…", self)
        choose.clicked.connect(self._choose)
        target.addWidget(choose)
        form.addRow("Salvar em:", target)
        layout.addLayout(form)
        self.answer = QLabel(self)
        self.answer.setObjectName("result")
        self.answer.setWordWrap(True)
        layout.addWidget(self.answer)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, parent=self)
        self.generate = self.buttons.addButton("Gerar planilha", QDialogButtonBox.ButtonRole.ActionRole)
        self.generate.setObjectName("generate")
        self.generate.setDefault(True)
        self.generate.clicked.connect(lambda: self.save())
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)

    def _month_edit(self, name: str) -> QDateEdit:
        edit = QDateEdit(self)
        edit.setObjectName(name)
        edit.setDisplayFormat("MM/yyyy")
        edit.setCalendarPopup(True)
        return edit

    def prepare(self) -> None:
        """The companies as the window lists them, the company selected there, last month."""
        lines = self.host.company_list.lines
        self.company.clear()
        self.company.addItem("Todas as empresas", ALL)
        for line in lines:
            self.company.addItem(f"{line.name} — {Cnpj.parse(line.cnpj).formatted()}", line.company_id)
        chosen = self.company.findData(self.host.company_list.company_id())
        self.company.setCurrentIndex(max(chosen, 0))
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
    """The menu entry's controller: one dialog, opened again as it was left."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.dialog: ReformReportDialog | None = None

    def open(self) -> None:
        if self.host.opened is None:
            return
        if self.dialog is None:
            self.dialog = ReformReportDialog(self.host)
        self.dialog.prepare()
        self.dialog.open()
