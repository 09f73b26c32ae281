"""The filter bar over the document grids: search, period (of capture or issue), kind, status, values.

It owns its widgets and their remembered choices; the window asks it for the filter of a
product (:meth:`FilterBar.grid_filter`) and listens to :attr:`FilterBar.changed`.

The period follows today (``follow_today``, at midnight) unless the clerk set its dates: each end
set by hand stays; "Limpar filtros" goes back to the default view, "capturados nos últimos 30
dias", so every arrival is listed whatever its issue date.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from PySide6.QtCore import QDate, QSettings, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QDateEdit, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from app.core.products import Product
from app.desk import labels
from app.desk.views import GridFilter
from app.store.records import Direction, DocumentStatus, GridSort, ManifestationState, RowKind

SEARCH_DEBOUNCE_MS = 350
CAPTURE_DAYS = 30  # the default view: what arrived in the last 30 days


def default_period(today: date, *, by_capture: bool = False) -> tuple[date, date]:
    """By capture: the last 30 days. By issue: the first day of last month to today (an office
    closes last month while this one runs)."""
    if by_capture:
        return today - timedelta(days=CAPTURE_DAYS - 1), today
    first_this = today.replace(day=1)
    return (first_this - timedelta(days=1)).replace(day=1), today


def parse_cents(text: str) -> int | None:
    """``1.234,56`` / ``1234.56`` / ``1234`` in reais to centavos; None when empty or unreadable."""
    value = text.strip().replace("R$", "").replace(" ", "")
    if not value:
        return None
    if "," in value:
        value = value.replace(".", "").replace(",", ".")
    try:
        return round(float(value) * 100)
    except ValueError:
        return None


def narrowed(grid: GridFilter) -> bool:
    """Filters beyond the company and the period are set."""
    return bool(
        grid.search
        or grid.statuses
        or grid.row_kinds
        or grid.direction
        or grid.manifestation
        or grid.min_cents is not None
        or grid.max_cents is not None
    )


def _qdate(day: date) -> QDate:
    return QDate(day.year, day.month, day.day)


def _day(value: QDate) -> date:
    return date(value.year(), value.month(), value.day())


class FilterBar(QWidget):
    """Two rows of filters; ``changed`` after any of them changes (the search debounced)."""

    changed = Signal()

    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        bar = QVBoxLayout(self)
        bar.setContentsMargins(0, 0, 0, 0)
        first = QHBoxLayout()
        self.search = QLineEdit(self)
        self.search.setObjectName("search")
        self.search.setPlaceholderText("Chave de acesso, número, CNPJ/CPF ou nome  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.changed.emit)
        self.search_timer = QTimer(self)
        self.search_timer.setSingleShot(True)
        self.search_timer.setInterval(SEARCH_DEBOUNCE_MS)
        self.search_timer.timeout.connect(self.changed.emit)
        self.search.textChanged.connect(lambda _t: self.search_timer.start())
        first.addWidget(self.search, 3)
        self.today: Callable[[], date] = date.today  # the window gives the desk's clock
        self.period_by = QComboBox(self)
        self.period_by.setObjectName("period_by")
        self.period_by.addItem("Capturados de", True)
        self.period_by.addItem("Emitidos de", False)
        self.period_by.setToolTip("O período é o dia em que o documento foi capturado, ou o dia da sua emissão.")
        self.period_by.currentIndexChanged.connect(lambda _i: self._period_by_changed())
        first.addWidget(self.period_by)
        start, end = default_period(date.today(), by_capture=True)
        self.pinned = {"from": False, "to": False}  # an end the clerk set stays; the others follow today
        self.date_from = self._date_edit(start, "from")
        first.addWidget(self.date_from)
        first.addWidget(QLabel("até", self))
        self.date_to = self._date_edit(end, "to")
        first.addWidget(self.date_to)
        bar.addLayout(first)
        second = QHBoxLayout()
        self.direction = self._combo(
            "direction",
            [("Recebidas e emitidas", None), ("Recebidas", Direction.RECEIVED), ("Emitidas", Direction.EMITTED)],
        )
        self.kind = self._combo(
            "kind", [("Todos os tipos", None)] + [(labels.ROW_KIND[k].capitalize(), k) for k in RowKind]
        )
        shown_statuses = (
            DocumentStatus.AUTHORISED,
            DocumentStatus.CANCELLED,
            DocumentStatus.DENIED,
            DocumentStatus.SUMMARY,
        )
        self.status = self._combo(
            "status", [("Todas as situações", None)] + [(labels.STATUS[s].capitalize(), s) for s in shown_statuses]
        )
        self.manifestation = self._combo(
            "manifestation",
            [("Qualquer manifestação", None)]
            + [(labels.MANIFESTATION_STATE[m].capitalize(), m) for m in ManifestationState],
        )
        for combo in self.combos:
            second.addWidget(combo)
        second.addWidget(QLabel("Valor de", self))
        self.min_value = self._value_edit()
        second.addWidget(self.min_value)
        second.addWidget(QLabel("até", self))
        self.max_value = self._value_edit()
        second.addWidget(self.max_value)
        clear = QPushButton("Limpar filtros", self)
        clear.clicked.connect(self.clear)
        second.addWidget(clear)
        second.addStretch(1)
        bar.addLayout(second)
        self._restore()

    @property
    def combos(self) -> tuple[QComboBox, ...]:
        return (self.direction, self.kind, self.status, self.manifestation)

    def _date_edit(self, day: date, end: str) -> QDateEdit:
        edit = QDateEdit(_qdate(day), self)
        edit.setObjectName(f"date_{end}")
        edit.setCalendarPopup(True)
        edit.setDisplayFormat("dd/MM/yyyy")
        edit.dateChanged.connect(lambda _d: self._date_set(end))
        return edit

    def _date_set(self, end: str) -> None:
        self.pinned[end] = True
        self.changed.emit()

    @property
    def by_capture(self) -> bool:
        return bool(self.period_by.currentData())

    def _period_by_changed(self) -> None:
        self.follow_today(self.today(), emit=False)
        self.changed.emit()

    def follow_today(self, today: date, *, emit: bool = True) -> bool:
        """The default period of ``today`` on the ends the clerk did not set; True if it moved."""
        start, end = default_period(today, by_capture=self.by_capture)
        old = (self.date_from.date(), self.date_to.date())
        self.set_period(_day(old[0]) if self.pinned["from"] else start, _day(old[1]) if self.pinned["to"] else end)
        moved = (self.date_from.date(), self.date_to.date()) != old
        if moved and emit:
            self.changed.emit()
        return moved

    def widen(self, since: date) -> None:
        """Show from ``since`` (what the period hid); the end keeps following today."""
        self.set_period(since, max(self.today(), _day(self.date_to.date())))
        self.pinned["from"] = True
        self.changed.emit()

    def _combo(self, name: str, items: list[tuple[str, Any]]) -> QComboBox:
        combo = QComboBox(self)
        combo.setObjectName(name)
        for text, value in items:
            combo.addItem(text, value)
        combo.currentIndexChanged.connect(lambda _i: self.changed.emit())
        return combo

    def _value_edit(self) -> QLineEdit:
        edit = QLineEdit(self)
        edit.setPlaceholderText("R$")
        edit.setMaximumWidth(110)
        edit.editingFinished.connect(self.changed.emit)
        return edit

    def set_period(self, start: date, end: date) -> None:
        """The period without a ``changed`` per edit (the window loads once afterwards)."""
        for edit, day in ((self.date_from, start), (self.date_to, end)):
            edit.blockSignals(True)
            edit.setDate(_qdate(day))
            edit.blockSignals(False)

    def grid_filter(
        self, product: Product, company_ids: tuple[int, ...], sort: GridSort, descending: bool
    ) -> GridFilter:
        kind, status = self.kind.currentData(), self.status.currentData()
        return GridFilter(
            product=product,
            company_ids=company_ids,
            issued_from=_day(self.date_from.date()),
            issued_to=_day(self.date_to.date()),
            by_capture=self.by_capture,
            direction=self.direction.currentData(),
            row_kinds=(kind,) if kind else (),
            statuses=(status,) if status else (),
            manifestation=self.manifestation.currentData(),
            min_cents=parse_cents(self.min_value.text()),
            max_cents=parse_cents(self.max_value.text()),
            search=self.search.text(),
            sort=sort,
            descending=descending,
        )

    def clear(self) -> None:
        """The default view: every filter off, captured in the last 30 days up to today."""
        widgets = (*self.remembered, self.search, self.min_value, self.max_value)
        for widget in widgets:
            widget.blockSignals(True)
        for combo in self.remembered:
            combo.setCurrentIndex(0)
        for edit in (self.search, self.min_value, self.max_value):
            edit.clear()
        for widget in widgets:
            widget.blockSignals(False)
        self.pinned = {"from": False, "to": False}
        self.follow_today(self.today(), emit=False)
        self.changed.emit()

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    @property
    def remembered(self) -> tuple[QComboBox, ...]:
        return (self.period_by, *self.combos)

    def save(self) -> None:
        for combo in self.remembered:
            self.settings.setValue(f"filters/{combo.objectName()}", combo.currentIndex())

    def _restore(self) -> None:
        for combo in self.remembered:
            value = self.settings.value(f"filters/{combo.objectName()}")
            if value is not None and 0 <= int(value) < combo.count():
                combo.blockSignals(True)
                combo.setCurrentIndex(int(value))
                combo.blockSignals(False)
