"""The company list on the left: "Todas as empresas" and one line per company with its capture
badges and certificate warning, rewritten in place on every refresh."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from app.core.cadence import Action
from app.desk import labels
from app.desk.views import CompanyLine

ALL = -1
LAST_COMPANY = "last_company"  # the company selected last time (its CNPJ), in the window's settings
ATTENTION = QColor("#8b0000")
LOADING = "Carregando empresas…"


def company_text(line: CompanyLine, now: datetime) -> str:
    badges = "  ·  ".join(
        f"{b.product.label}: {labels.badge_text(b.action, b.capturing, b.until, now)}" for b in line.badges
    )
    text = f"{line.name}\n{labels.tax_id(line.cnpj)}"
    if badges:
        text += f"\n{badges}"
    warning = labels.certificate_text(line.certificate_not_after, line.certificate_problem, now)
    if warning:
        text += f"\n⚠ {warning}"
    return text


def company_tooltip(line: CompanyLine) -> str:
    parts = [f"{b.product.label}: {b.reason}" for b in line.badges]
    if line.certificate_not_after is not None:
        parts.append(f"Certificado válido até {labels.brasilia_text(line.certificate_not_after)}")
    return "\n".join(parts)


class CompanyList(QListWidget):
    """``selected`` carries the chosen company id (``ALL`` for every company)."""

    selected = Signal(int)
    listed = Signal()  # the companies listed changed (the first list read, a company came or went)

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.lines: list[CompanyLine] = []
        self.setObjectName("companies")
        self.setMinimumWidth(250)
        self.setWordWrap(True)
        self.setSpacing(3)
        self.currentItemChanged.connect(self._changed)
        # Until the desk's first read of the companies (a worker's, after the data folder opens).
        waiting = QListWidgetItem(LOADING)
        waiting.setFlags(Qt.ItemFlag.NoItemFlags)
        self.addItem(waiting)

    def company_id(self) -> int:
        item = self.currentItem()
        company = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return ALL if company is None else int(company)  # nothing yet, or the "carregando" line

    def company_ids(self) -> tuple[int, ...]:
        """The grid filter's companies: () for all."""
        company = self.company_id()
        return () if company == ALL else (company,)

    def remembered_ids(self, registered: dict[str, int]) -> tuple[int, ...]:
        """The grid filter's companies before the list is built (``registered``: ids by CNPJ): the
        company selected last time, as ``show_lines(first=True)`` selects it."""
        company = registered.get(self._remembered_cnpj())
        return () if company is None else (company,)

    def _remembered_cnpj(self) -> str:
        return str(self.settings.value(LAST_COMPANY, ""))

    def line(self, company_id: int) -> CompanyLine | None:
        return next((c for c in self.lines if c.company_id == company_id), None)

    def show_lines(self, lines: list[CompanyLine], now: datetime, *, first: bool = False) -> None:
        """Build the list when companies came or went; otherwise only rewrite its texts, so the
        selection and the scroll stay where the clerk left them."""
        self.lines = lines
        ids = [ALL] + [line.company_id for line in lines]
        shown = [self.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.count())]
        if shown != ids:
            current = self.company_id()
            if first:
                remembered = self._remembered_cnpj()
                current = next((c.company_id for c in lines if c.cnpj == remembered), ALL)
            self.blockSignals(True)
            self.clear()
            for company_id in ids:
                item = QListWidgetItem()
                item.setData(Qt.ItemDataRole.UserRole, company_id)
                self.addItem(item)
            self.setCurrentRow(ids.index(current) if current in ids else 0)
            self.blockSignals(False)
            if not first and current not in ids:
                self._changed()
            self.listed.emit()
        self.item(0).setText(f"Todas as empresas\n{len(lines)} empresa{'s' if len(lines) != 1 else ''}")
        for row, line in enumerate(lines, start=1):
            item = self.item(row)
            item.setText(company_text(line, now))
            item.setToolTip(company_tooltip(line))
            warning = labels.certificate_text(line.certificate_not_after, line.certificate_problem, now)
            attention = warning or any(b.action is Action.BLOCKED or b.stalled for b in line.badges)
            item.setData(Qt.ItemDataRole.ForegroundRole, QBrush(ATTENTION) if attention else None)

    def _changed(self, *_args: object) -> None:
        line = self.line(self.company_id())
        self.settings.setValue(LAST_COMPANY, line.cnpj if line else "")
        self.selected.emit(self.company_id())
