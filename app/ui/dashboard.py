"""The capture dashboard: every company × product with its state and the next query counting
down, the global pauses, the gap ledger, the government calls and documents per month.

It reads the desk on the window's workers every few seconds while it is visible, and only
repaints in between (the countdown); the tables are rewritten in place, so a clerk's selection
and scroll stay put.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.cadence import Action
from app.core.products import Product
from app.desk import labels
from app.desk.dashboard import CallLine, DashboardLine, MonthCount, PauseLine, QueryNow
from app.store.records import CallOutcome, GapLedgerLine
from app.ui.tasks import Tasks

if TYPE_CHECKING:
    from app.desk.desk import Desk

REFRESH_MS = 5_000
TICK_MS = 1_000
LINE_ROLE = Qt.ItemDataRole.UserRole + 1
STATE_COLOURS = {
    Action.BLOCKED: QColor("#8b0000"),
    Action.PAUSED: QColor("#8a5300"),
    Action.DISABLED: QColor("#6b6b6b"),
}
PRODUCT_COLOURS = {Product.NFE: QColor("#2f6db3"), Product.CTE: QColor("#d08a1f"), Product.NFSE: QColor("#3c9a5f")}
STATUS_COLUMNS = (
    "Empresa",
    "CNPJ",
    "Produto",
    "Situação",
    "Próxima consulta",
    "Última resposta",
    "Docs hoje",
    "Lacunas",
    "Carga inicial",
    "Motivo",
)
CALL_COLUMNS = ("Horário", "Empresa", "Produto", "Operação", "Resultado", "cStat", "Duração", "Serviço")
ANSWER_COLUMN = STATUS_COLUMNS.index("Última resposta")
MIN_ANSWER = 230
GAP_COLUMNS = ("Empresa", "Produto", "Encontradas", "Recuperadas", "Pendentes", "Inexistentes", "Desistidas")
STATION_COLUMNS = ("Estação", "Papel", "Conectada desde", "Vista por último")  # app.desk.nodes.StationView


def countdown(instant: datetime | None, now: datetime) -> str:
    """``agora``, ``em 45 s``, ``em 12 min (14:05)``, ``02/12 14:05``."""
    if instant is None:
        return "-"
    seconds = int((instant - now).total_seconds())
    if seconds <= 0:
        return "agora"
    if seconds < 60:
        return f"em {seconds} s"
    if seconds < 3 * 3600:
        return f"em {seconds // 60} min ({labels.hour_text(instant, now)})"
    return labels.hour_text(instant, now)


def _item(text: str, sort: Any = None, align_right: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if sort is not None:
        item.setData(Qt.ItemDataRole.UserRole, sort)
    if align_right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _table(parent: QWidget, name: str, columns: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(columns), parent)
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(columns))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)
    table.setWordWrap(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    table.horizontalHeader().setStretchLastSection(True)
    return table


def _fill(table: QTableWidget, rows: list[list[QTableWidgetItem]]) -> None:
    """Rewrite the table in place (same row count: the selection and the scroll stay)."""
    table.setUpdatesEnabled(False)
    table.setRowCount(len(rows))
    for r, items in enumerate(rows):
        for c, item in enumerate(items):
            table.setItem(r, c, item)
    table.setUpdatesEnabled(True)


class MonthChart(QWidget):
    """Documents per month and product as grouped bars, painted (no QtCharts: see the commit)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("month-chart")
        self.months: list[MonthCount] = []
        self.setMinimumHeight(170)

    def show_months(self, months: list[MonthCount]) -> None:
        self.months = months
        self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(36, 22, -10, -22)
        painter.fillRect(self.rect(), QColor("#ffffff"))
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() - 1))
        painter.setFont(small)
        products = [p for p in Product if any(p in m.counts for m in self.months)]
        highest = max((m.counts.get(p, 0) for m in self.months for p in products), default=0)
        painter.setPen(QColor("#333333"))
        painter.drawText(QRectF(rect.left(), 2, rect.width(), 18), Qt.AlignmentFlag.AlignLeft, "Documentos por mês")
        x = rect.right()
        for product in reversed(products):  # the legend, right-aligned on the title line
            width = painter.fontMetrics().horizontalAdvance(product.label) + 24
            x -= width
            painter.fillRect(QRectF(x, 6, 10, 10), PRODUCT_COLOURS[product])
            painter.drawText(QRectF(x + 14, 2, width, 18), Qt.AlignmentFlag.AlignLeft, product.label)
        painter.setPen(QPen(QColor("#c8c8c8")))
        painter.drawLine(rect.bottomLeft(), rect.bottomRight())
        if not self.months or highest == 0:
            painter.setPen(QColor("#6b6b6b"))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "Nenhum documento nos últimos 12 meses.")
            return
        painter.setPen(QColor("#6b6b6b"))
        painter.drawText(
            QRectF(0, rect.top() - 6, 32, 14), Qt.AlignmentFlag.AlignRight, f"{highest:,}".replace(",", ".")
        )
        painter.drawText(QRectF(0, rect.bottom() - 8, 32, 14), Qt.AlignmentFlag.AlignRight, "0")
        slot = rect.width() / len(self.months)
        bar = max(2.0, (slot - 8) / max(1, len(products)))
        for index, month in enumerate(self.months):
            left = rect.left() + index * slot + 4
            for offset, product in enumerate(products):
                value = month.counts.get(product, 0)
                height = rect.height() * value / highest
                painter.fillRect(
                    QRectF(left + offset * bar, rect.bottom() - height, bar - 1, height), PRODUCT_COLOURS[product]
                )
            painter.setPen(QColor("#333333"))
            painter.drawText(
                QRectF(rect.left() + index * slot, rect.bottom() + 3, slot, 16),
                Qt.AlignmentFlag.AlignHCenter,
                month.label,
            )


class Dashboard(QWidget):
    """``message`` carries a sentence for the status bar (a refused "Consultar agora")."""

    message = Signal(str)

    def __init__(self, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.desk: Desk | None = None
        self.company_id: int | None = None
        self.lines: list[DashboardLine] = []
        self.last_query: QueryNow | None = None
        self._loading = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.pauses = QLabel(self)
        self.pauses.setObjectName("pauses")
        self.pauses.setWordWrap(True)
        self.pauses.setStyleSheet("background: #fff4e0; color: #5c3b00; border: 1px solid #f0c98a; padding: 6px;")
        self.pauses.setVisible(False)
        layout.addWidget(self.pauses)
        # Another system consuming a company with the same certificate (issue 22): what, and what to do.
        self.other_consumers = QLabel(self)
        self.other_consumers.setObjectName("other-consumers")
        self.other_consumers.setWordWrap(True)
        self.other_consumers.setStyleSheet(
            "background: #fdecec; color: #6b0000; border: 1px solid #e8a3a3; padding: 6px;"
        )
        self.other_consumers.setVisible(False)
        layout.addWidget(self.other_consumers)
        actions = QHBoxLayout()
        self.query_button = QPushButton("Consultar agora", self)
        self.query_button.setObjectName("query-now")
        self.query_button.setToolTip("Consulta a empresa selecionada se nenhuma espera ou bloqueio impedir.")
        self.query_button.clicked.connect(self.query_selected)
        self.resume_button = QPushButton("Retomar captura", self)
        self.resume_button.setObjectName("resume")
        self.resume_button.setToolTip("Retoma uma captura interrompida por falhas ou pausada pelo usuário.")
        self.resume_button.clicked.connect(self.resume_selected)
        self.summary = QLabel(self)
        self.summary.setObjectName("dashboard-summary")
        self.node = QLabel(self)  # which workstation captures for the office (issue 24)
        self.node.setObjectName("capture-node")
        actions.addWidget(self.query_button)
        actions.addWidget(self.resume_button)
        actions.addSpacing(12)
        actions.addWidget(self.node)
        actions.addStretch(1)
        actions.addWidget(self.summary)
        layout.addLayout(actions)
        split = QSplitter(Qt.Orientation.Vertical, self)
        self.status_table = _table(split, "capture-status", STATUS_COLUMNS)
        self.status_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.status_table.itemSelectionChanged.connect(self._selection_changed)
        bottom = QTabWidget(split)
        calls = QWidget(bottom)
        calls_layout = QVBoxLayout(calls)
        self.failures_only = QCheckBox("Somente falhas e rejeições", calls)
        self.failures_only.setObjectName("failures-only")
        self.failures_only.toggled.connect(lambda _on: self.refresh())
        calls_layout.addWidget(self.failures_only)
        self.calls_table = _table(calls, "calls", CALL_COLUMNS)
        calls_layout.addWidget(self.calls_table)
        bottom.addTab(calls, "Atividade (chamadas ao governo)")
        self.gaps_table = _table(bottom, "gaps", GAP_COLUMNS)
        bottom.addTab(self.gaps_table, "Lacunas de NSU")
        self.chart = MonthChart(bottom)
        bottom.addTab(self.chart, "Documentos por mês")
        self.stations_table = _table(bottom, "workstations", STATION_COLUMNS)  # issue 24: who is connected
        bottom.addTab(self.stations_table, "Estações conectadas")
        split.addWidget(self.status_table)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout.addWidget(split)
        widths = (190, 135, 55, 150, 130, MIN_ANSWER, 70, 60, 110, 300)
        for index, width in enumerate(widths):
            self.status_table.setColumnWidth(index, width)
        for index, width in enumerate((150, 220, 60, 300, 110, 60, 80)):
            self.calls_table.setColumnWidth(index, width)
        for index, width in enumerate((240, 70, 100, 100, 100, 100)):
            self.gaps_table.setColumnWidth(index, width)
        for index, width in enumerate((360, 90, 130)):
            self.stations_table.setColumnWidth(index, width)
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self.refresh)
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self._countdown)
        self._enable_actions()

    # ------------------------------------------------------------------ life

    def attach(self, desk: Desk) -> None:
        self.desk = desk
        self._enable_actions()
        if self.isVisible():
            self.refresh()

    def set_company(self, company_id: int | None) -> None:
        self.company_id = company_id
        if self.isVisible():
            self.refresh()

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._refresh_timer.start()
        self._tick.start()
        self.refresh()

    def hideEvent(self, event: Any) -> None:
        super().hideEvent(event)
        self._refresh_timer.stop()  # hidden (another tab, the tray): it reads nothing
        self._tick.stop()

    def refresh(self) -> None:
        desk = self.desk
        if desk is None or self._loading:
            return
        self._loading = True
        company, failures = self.company_id, self.failures_only.isChecked()
        ids = (company,) if company is not None else ()

        def read() -> tuple[Any, ...]:
            return (
                desk.dashboard.lines(company),
                desk.dashboard.pauses(),
                desk.dashboard.calls(company_id=company, failures_only=failures),
                desk.dashboard.gap_ledger(company),
                desk.dashboard.documents_per_month(ids),
                {c.company_id: c.name for c in desk.companies()},
                desk.capture_node(),
            )

        self.tasks.run(read, self._show, self._failed)

    def _failed(self, error: BaseException) -> None:
        self._loading = False
        self.message.emit(getattr(error, "message", None) or str(error))

    # ------------------------------------------------------------------ showing

    def _show(self, result: tuple[Any, ...]) -> None:
        self._loading = False
        lines, pauses, calls, gaps, months, names, node = result
        self.lines = lines
        if self.desk is not None:
            now = self.desk.now()
            self.node.setText(node.text(now))
            _fill(self.stations_table, [[_item(cell) for cell in s.cells(now)] for s in node.stations])
        self._show_lines()
        self._show_pauses(pauses)
        self._show_calls(calls)
        self._show_gaps(gaps, names)
        self.chart.show_months(months)

    def fit_answers(self) -> None:
        """ "Última resposta" whole: as wide as its longest answer, within the visible width; what
        still does not fit wraps onto a second line (the ADN's answers can be long)."""
        table = self.status_table
        room = table.viewport().width() - table.horizontalHeader().sectionViewportPosition(ANSWER_COLUMN)
        wanted = max(MIN_ANSWER, table.sizeHintForColumn(ANSWER_COLUMN))
        table.setColumnWidth(ANSWER_COLUMN, max(MIN_ANSWER, min(wanted, room)))
        wrap = wanted > table.columnWidth(ANSWER_COLUMN)
        if wrap != table.wordWrap():
            table.setWordWrap(wrap)
        if wrap:
            table.resizeRowsToContents()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_answers()

    def _show_lines(self) -> None:
        assert self.desk is not None
        now = self.desk.now()
        rows = []
        for line in self.lines:
            items = [
                _item(line.name),
                _item(labels.tax_id(line.cnpj)),
                _item(line.product.label),
                _item(line.state),
                _item(countdown(line.next_query_at, now)),
                _item(line.last_answer),
                _item(str(line.documents_today), line.documents_today, align_right=True),
                _item(str(line.pending_recoveries), line.pending_recoveries, align_right=True),
                _item(line.progress_text if line.loading else ("concluída" if line.max_nsu else "-")),
                _item(line.reason),
            ]
            items[0].setData(LINE_ROLE, line)
            items[5].setToolTip(line.last_answer)
            items[9].setToolTip(line.reason)
            colour = STATE_COLOURS.get(line.action)
            if line.stalled:
                colour = STATE_COLOURS[Action.BLOCKED]
            if colour is not None:
                items[3].setForeground(QBrush(colour))
            rows.append(items)
        _fill(self.status_table, rows)
        others = [f"{ln.name}: {ln.other_consumer}" for ln in self.lines if ln.other_consumer]
        self.other_consumers.setText("\n".join(others))
        self.other_consumers.setVisible(bool(others))
        self.fit_answers()
        loading = sum(1 for ln in self.lines if ln.loading)
        blocked = sum(1 for ln in self.lines if ln.action is Action.BLOCKED)
        parts = [f"{len(self.lines)} captura(s)"]
        if blocked:
            parts.append(f"{blocked} bloqueada(s)")
        if loading:
            parts.append(f"{loading} em carga inicial")
        self.summary.setText("  ·  ".join(parts))
        self._enable_actions()

    def _countdown(self) -> None:
        if self.desk is None or not self.lines:
            return
        now = self.desk.now()
        for row, line in enumerate(self.lines):
            item = self.status_table.item(row, 4)
            if item is not None:
                item.setText(countdown(line.next_query_at, now))

    def _show_pauses(self, pauses: list[PauseLine]) -> None:
        assert self.desk is not None
        now = self.desk.now()
        texts = [
            f"Pausa global de {p.product.label} ({p.environment.label.lower()}) até {labels.hour_text(p.until, now)}: "
            f"{p.reason}"
            for p in pauses
        ]
        self.pauses.setText("\n".join(texts))
        self.pauses.setVisible(bool(texts))

    def _show_calls(self, calls: list[CallLine]) -> None:
        rows = []
        for call in calls:
            items = [
                _item(labels.brasilia_text(call.at, with_seconds=True)),
                _item(call.company),
                _item(call.product.label if call.product else "-"),
                _item(call.operation or "-"),
                _item(call.outcome_text),
                _item(call.cstat),
                _item(f"{call.duration_ms:,} ms".replace(",", "."), call.duration_ms, align_right=True),
                _item(call.service),
            ]
            items[3].setToolTip(call.detail)
            if call.outcome is not CallOutcome.OK:
                items[4].setForeground(QBrush(STATE_COLOURS[Action.BLOCKED]))
            rows.append(items)
        _fill(self.calls_table, rows)

    def _show_gaps(self, gaps: list[GapLedgerLine], names: dict[int, str]) -> None:
        rows = [
            [
                _item(names.get(g.company_id, str(g.company_id))),
                _item(g.product.label),
                *(
                    _item(str(value), value, align_right=True)
                    for value in (g.found, g.recovered, g.pending, g.not_found, g.abandoned)
                ),
            ]
            for g in gaps
        ]
        _fill(self.gaps_table, rows)

    # ------------------------------------------------------------------ actions

    def selected_line(self) -> DashboardLine | None:
        rows = self.status_table.selectionModel().selectedRows() if self.status_table.selectionModel() else []
        if not rows:
            return None
        item = self.status_table.item(rows[0].row(), 0)
        return item.data(LINE_ROLE) if item is not None else None

    def _selection_changed(self) -> None:
        self._enable_actions()

    def _enable_actions(self) -> None:
        line = self.selected_line()
        usable = self.desk is not None and line is not None
        self.query_button.setEnabled(usable)
        self.resume_button.setEnabled(usable)

    def query_selected(self) -> None:
        line, desk = self.selected_line(), self.desk
        if line is None or desk is None:
            return
        self.query_button.setEnabled(False)
        self.message.emit(f"Consultando {line.product.label} de {line.name}…")

        def done(outcome: QueryNow) -> None:
            self.last_query = outcome
            self.message.emit(outcome.message)
            self._enable_actions()
            self.refresh()

        self.tasks.run(lambda: desk.dashboard.query_now(line.company_id, line.product), done, self._failed)

    def resume_selected(self) -> None:

        line, desk = self.selected_line(), self.desk
        if line is None or desk is None:
            return

        def done(resumed: list[Product]) -> None:
            text = (
                f"Captura de {', '.join(p.label for p in resumed)} de {line.name} retomada."
                if resumed
                else f"A captura de {line.product.label} de {line.name} não estava interrompida nem pausada."
            )
            self.message.emit(text)
            self.refresh()

        self.tasks.run(lambda: desk.admin.resume(line.company_id, line.product), done, self._failed)
