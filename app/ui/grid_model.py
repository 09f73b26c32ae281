"""The documents grid: a table model that holds only the pages fetched so far.

Rows come from a desk ``GridCursor`` a page at a time (``canFetchMore``/``fetchMore``, asked by
the view as the user scrolls), always on a worker; sorting is done by SQL (``sort`` starts a new
cursor), on raw values, which ``SORT_ROLE`` exposes too. ``count`` arrives after the first page,
so the first rows show before the database has counted the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QIcon
from PySide6.QtWidgets import QApplication, QStyle

from app.core.products import Product
from app.desk import labels
from app.desk.views import PAGE, GridFilter, GridRow
from app.store.records import DocumentStatus, GridSort, RowKind
from app.ui.tasks import Tasks

if TYPE_CHECKING:
    from app.desk.desk import Desk
    from app.desk.grid import GridCursor
    from app.desk.live import ChangeMark, LiveRows

SORT_ROLE = Qt.ItemDataRole.UserRole + 1
ROW_ROLE = Qt.ItemDataRole.UserRole + 2
Index = QModelIndex | QPersistentModelIndex


@dataclass(frozen=True, slots=True)
class Column:
    """One grid column: ``sample`` is its widest usual content (the initial width)."""

    name: str
    header: str
    sort: GridSort | None
    sample: str


_ALL = {
    c.name: c
    for c in (
        Column("issued", "Emissão", GridSort.ISSUED_AT, "00/00/0000 00:00 ++"),
        Column("number", "Número", GridSort.NUMBER, "000000000/00"),
        Column("counterpart", "Contraparte", GridSort.COUNTERPART, "DISTRIBUIDORA DE PRODUTOS LTDA"),
        Column("tax_id", "CNPJ/CPF", None, "00.000.000/0000-00"),
        Column("value", "Valor", GridSort.VALUE, "R$ 000.000,00"),
        # NFS-e: named as the DANFSe names them; the taker pays the net when taxes are withheld.
        Column("service", "Valor do serviço", GridSort.VALUE, "R$ 000.000,00"),
        Column("net", "Valor líquido", None, "R$ 000.000,00"),
        Column("status", "Situação", GridSort.STATUS, "cancelada após captura"),
        Column("manifestation", "Manifestação", None, "sem manifestação"),
        Column("deadline", "Prazo", None, "Conclusiva: 00 dias"),
        Column("modal", "Modal", None, "Aquaviário"),
        Column("payer", "Tomador", None, "TRANSPORTES EXEMPLO LTDA"),
        Column("carried", "NF-e transportadas", None, "0000 0000 0000 0000… +00"),
        # The tax reform's values (issue 23): hidden by default, shown from the header's menu.
        Column("ibs", "IBS", GridSort.IBS, "R$ 000.000,00"),
        Column("cbs", "CBS", GridSort.CBS, "R$ 000.000,00"),
        Column("is", "IS", GridSort.IS, "R$ 000.000,00"),
        Column("kind", "Tipo", GridSort.KIND, "completa"),
        Column("direction", "Direção", None, "recebida"),
        Column("key", "Chave de acesso", None, "0000 0000 0000 0000 0000 0000 0000 0000 0000 000"),
    )
}
_BASE = ("issued", "number", "counterpart", "tax_id", "value", "status")
_TAIL = ("ibs", "cbs", "is", "kind", "direction", "key")
COLUMNS: dict[Product, tuple[Column, ...]] = {
    Product.NFE: tuple(_ALL[n] for n in (*_BASE, "manifestation", "deadline", *_TAIL)),
    Product.CTE: tuple(_ALL[n] for n in (*_BASE, "modal", "payer", "carried", *_TAIL)),
    Product.NFSE: tuple(_ALL[n] for n in (*_BASE[:4], "service", "net", "status", *_TAIL)),
}

ALERT = QColor("#b3261e")
WARNING = QColor("#8a5300")
MUTED = QColor("#6b6b6b")


def _icons() -> dict[RowKind, QIcon]:
    style = QApplication.style()
    return {
        RowKind.COMPLETE: style.standardIcon(QStyle.StandardPixmap.SP_FileIcon),
        RowKind.SUMMARY: style.standardIcon(QStyle.StandardPixmap.SP_FileDialogInfoView),
        RowKind.EVENT: style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation),
        RowKind.UNREADABLE: style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning),
    }


def number_text(row: GridRow) -> str:
    if row.number is None:
        return "-"
    return f"{row.number}" + (f"/{row.serie}" if row.serie is not None else "")


def _carried_text(row: GridRow) -> str:
    if not row.carried_keys:
        return "-"
    first = row.carried_keys[0]
    more = len(row.carried_keys) - 1
    return first + (f" +{more}" if more else "")


def display(row: GridRow, column: str, now: datetime) -> str:
    if column == "issued":
        local = labels.local_instant(row.issued_at, row.issued_offset_minutes)
        return local.strftime("%d/%m/%Y %H:%M") if local else "-"
    if column == "counterpart":
        if row.is_event_row:
            return row.last_event or "Evento"
        return row.counterpart_name or ("Documento ilegível" if row.quarantined else "-")
    if column == "status":
        if row.is_event_row:
            return f"{row.event_count} evento{'s' if row.event_count != 1 else ''}"
        text = labels.STATUS[row.status]
        return text + " após captura" if row.cancelled_after_capture else text
    texts: dict[str, Callable[[], str]] = {
        "number": lambda: number_text(row),
        "tax_id": lambda: labels.tax_id(row.counterpart_id),
        "value": lambda: labels.money_br(row.total_cents),
        "service": lambda: labels.money_br(row.total_cents),
        "net": lambda: labels.money_br(row.net_cents),
        "manifestation": lambda: labels.MANIFESTATION_STATE[row.manifestation] if row.manifestation else "",
        "deadline": lambda: labels.deadline_text(row.deadline, now),
        "modal": lambda: row.modal or "-",
        "payer": lambda: row.payer_name or labels.tax_id(row.payer_id),
        "carried": lambda: _carried_text(row),
        "kind": lambda: labels.ROW_KIND[row.row_kind],
        "direction": lambda: labels.DIRECTION[row.direction],
        "key": lambda: row.access_key or "-",
        "ibs": lambda: _reform_money(row, row.ibs_cents),
        "cbs": lambda: _reform_money(row, row.cbs_cents),
        "is": lambda: _reform_money(row, row.is_cents),
    }
    make = texts.get(column)
    return make() if make is not None else ""


def _reform_money(row: GridRow, cents: int | None) -> str:
    """A reform value; "ilegível" when the groups are there but this value could not be read."""
    return "ilegível" if cents is None and row.reform_unreadable else labels.money_br(cents)


def sort_value(row: GridRow, column: str) -> Any:
    """The raw value a column sorts on (what SQL sorts on, for the columns it sorts)."""
    values: dict[str, Any] = {
        "issued": row.issued_at,
        "number": row.number,
        "counterpart": row.counterpart_name,
        "tax_id": row.counterpart_id,
        "value": row.total_cents,
        "service": row.total_cents,
        "net": row.net_cents,
        "status": row.status.value,
        "manifestation": row.manifestation.value if row.manifestation else None,
        "deadline": row.deadline.due if row.deadline else None,
        "modal": row.modal,
        "payer": row.payer_name,
        "carried": len(row.carried_keys),
        "kind": row.row_kind.value,
        "direction": row.direction.value,
        "key": row.access_key,
        "ibs": row.ibs_cents,
        "cbs": row.cbs_cents,
        "is": row.is_cents,
    }
    return values.get(column)


def row_identity(row: GridRow) -> tuple[object, ...]:
    """What stays the same when a row is read again (a key-event row's id is its latest event)."""
    if row.is_event_row:
        return ("key", row.company_id, row.product, row.access_key)
    return ("document", row.row_id)


_SORT_VALUES: dict[GridSort, Callable[[GridRow], Any]] = {
    GridSort.ISSUED_AT: lambda r: r.issued_at,
    GridSort.VALUE: lambda r: r.total_cents,
    GridSort.NUMBER: lambda r: r.number,
    GridSort.COUNTERPART: lambda r: r.counterpart_name,
    GridSort.KIND: lambda r: r.kind.value if r.kind is not None else None,
    GridSort.STATUS: lambda r: r.status.value,
    GridSort.IBS: lambda r: r.ibs_cents,
    GridSort.CBS: lambda r: r.cbs_cents,
    GridSort.IS: lambda r: r.is_cents,
}


class DocumentTableModel(QAbstractTableModel):
    """One product's grid; ``set_filter`` starts over, the view's scrolling fetches more."""

    counted = Signal(int)  # rows in the whole grid (after the first page)
    loaded = Signal()  # a page arrived
    failed = Signal(str)
    merging = Signal()  # a live update is about to change the rows (the view notes its scroll)
    merged = Signal(object)  # ... and did: the identities (``row_identity``) of the rows changed in place

    def __init__(self, tasks: Tasks, desk: Desk | None, product: Product, now: Callable[[], datetime]) -> None:
        super().__init__()
        self.tasks = tasks
        self.desk = desk
        self.product = product
        self.columns = COLUMNS[product]
        self._now = now
        self.grid_filter = GridFilter(product)
        self.rows: list[GridRow] = []
        self.total: int | None = None
        self._cursor: GridCursor | None = None
        self._generation = 0
        self._loading = False
        self._active = False
        self._icons = _icons()
        self.mark: ChangeMark | None = None  # the store's mark the rows were read at (live updates)

    # ------------------------------------------------------------------ loading

    @property
    def loading(self) -> bool:
        return self._loading

    def set_filter(self, grid_filter: GridFilter) -> None:
        self.grid_filter = replace(grid_filter, product=self.product)
        self._active = True
        self.reload()

    def reload(self) -> None:
        self._generation += 1
        generation = self._generation
        self.beginResetModel()
        self.rows = []
        self.total = None
        self._cursor = None
        self.endResetModel()
        self._loading = True
        desk, grid_filter = self.desk, self.grid_filter
        assert desk is not None, "set_filter before the desk opened"

        def first() -> tuple[ChangeMark, GridCursor, list[GridRow]]:
            mark = desk.change_mark()  # before the rows: what changes while they are read comes again
            cursor = desk.cursor(grid_filter)
            return mark, cursor, cursor.next_page(PAGE)

        self.tasks.run(first, lambda result: self._first(generation, result), self._error)

    def _first(self, generation: int, result: tuple[ChangeMark, GridCursor, list[GridRow]]) -> None:
        if generation != self._generation:
            return  # a newer filter replaced this one
        self.mark, cursor, rows = result
        self._cursor = cursor
        self._append(generation, rows)
        self.tasks.run(cursor.count, lambda total: self._counted(generation, total), self._error)

    def _counted(self, generation: int, total: int) -> None:
        if generation == self._generation:
            self.total = total
            self.counted.emit(total)

    def _append(self, generation: int, rows: list[GridRow]) -> None:
        if generation != self._generation:
            return
        self._loading = False
        if rows:
            self.beginInsertRows(QModelIndex(), len(self.rows), len(self.rows) + len(rows) - 1)
            self.rows.extend(rows)
            self.endInsertRows()
        self.loaded.emit()

    def _error(self, error: BaseException) -> None:
        self._loading = False
        self.failed.emit(str(getattr(error, "message", None) or error))

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008 (Qt's signature)
        if parent.isValid():
            return False
        return self._cursor is not None and not self._loading and not self._cursor.at_end

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if not self.canFetchMore(parent):
            return
        assert self._cursor is not None
        self._loading = True
        generation, cursor = self._generation, self._cursor
        self.tasks.run(lambda: cursor.next_page(PAGE), lambda rows: self._append(generation, rows), self._error)

    # ------------------------------------------------------------------ live updates

    @property
    def live(self) -> bool:
        """Loaded and idle: a live update may read what changed under it now."""
        return self._cursor is not None and not self._loading and self.mark is not None

    def update(self, after: ChangeMark | None = None, *, everything: bool = False) -> bool:
        """Read again the rows changed since the grid's mark (``after``: the mark now, read by the
        caller; None reads it), or every loaded row (``everything``: F5); False when busy."""
        if not self.live or self.desk is None:
            return False
        desk, before, grid_filter = self.desk, self.mark, self.grid_filter
        assert before is not None
        loaded = {r.row_id for r in self.rows if not r.is_event_row} if everything else set()
        generation = self._generation
        self._loading = True

        def work() -> tuple[ChangeMark, LiveRows]:
            mark = after or desk.change_mark()
            return mark, desk.live_rows(grid_filter, (before, mark, loaded))

        self.tasks.run(work, lambda result: self._merge(generation, *result), self._error)
        return True

    def _merge(self, generation: int, mark: ChangeMark, live: LiveRows) -> None:
        if generation != self._generation or self._cursor is None:
            return
        self._loading = False
        self.mark = mark
        cursor = self._cursor
        self.merging.emit()
        fresh = {r.row_id: r for r in live.rows}
        keyed = {(r.company_id, r.access_key): r for r in live.key_rows}
        changed: set[tuple[object, ...]] = set()
        moved: list[GridRow] = []
        for position in range(len(self.rows) - 1, -1, -1):
            row = self.rows[position]
            if row.is_event_row:
                new = keyed.pop((row.company_id, row.access_key), None)
            elif row.row_id in live.checked:
                new = fresh.pop(row.row_id, None)
            else:
                continue
            if new is not None and self._order(new) == self._order(row):
                if new != row:
                    self.rows[position] = new
                    changed.add(row_identity(new))
                    self.dataChanged.emit(self.index(position, 0), self.index(position, len(self.columns) - 1))
                continue
            self.beginRemoveRows(QModelIndex(), position, position)
            del self.rows[position]
            self.endRemoveRows()
            if not row.is_event_row:
                cursor.shift(-1)
            if new is not None:
                moved.append(new)
        for new in sorted([*fresh.values(), *moved, *keyed.values()], key=lambda r: r.row_id):
            position = self._position(new)
            if position < len(self.rows) or cursor.at_end:
                self.beginInsertRows(QModelIndex(), position, position)
                self.rows.insert(position, new)
                self.endInsertRows()
                if not new.is_event_row:
                    cursor.shift(1)
        # The key-event rows past the loaded ones wait in the cursor (with the undated documents).
        shown = {(r.company_id, r.access_key) for r in self.rows if r.is_event_row}
        waiting = cursor.pending_documents()
        cursor.replace_keys(waiting + [r for r in live.key_rows if (r.company_id, r.access_key) not in shown])
        self.total = live.total
        self.counted.emit(live.total)
        self.merged.emit(changed)
        self.loaded.emit()

    def _order(self, row: GridRow) -> tuple[Any, ...]:
        """The row's place in SQL's order, ascending: NULL first, ties by id; key-event rows by
        their first event in the issue-date order, before every document in any other."""
        sort = self.grid_filter.sort
        if row.is_event_row and sort is not GridSort.ISSUED_AT:
            return (0, False, 0, row.row_id)
        value = _SORT_VALUES[sort](row)
        return (1, value is not None, value if value is not None else 0, row.row_id)

    def _position(self, row: GridRow) -> int:
        """Where ``row`` goes among the loaded rows (their order is the grid's)."""
        order, descending = self._order(row), self.grid_filter.descending
        for position, other in enumerate(self.rows):
            theirs = self._order(other)
            if (order > theirs) if descending else (order < theirs):
                return position
        return len(self.rows)

    def replace_row(self, fresh: GridRow) -> None:
        """A row read again (after a manifestation): updated in place."""
        for position, row in enumerate(self.rows):
            if row.row_id == fresh.row_id and row.company_id == fresh.company_id:
                self.rows[position] = fresh
                self.dataChanged.emit(self.index(position, 0), self.index(position, len(self.columns) - 1))
                return

    # ------------------------------------------------------------------ Qt's model

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation is Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.columns[section].header
            if role == Qt.ItemDataRole.ToolTipRole and self.columns[section].sort is None:
                return "Esta coluna não é ordenável."
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row, column = self.rows[index.row()], self.columns[index.column()].name
        if role == Qt.ItemDataRole.DisplayRole:
            return display(row, column, self._now())
        if role == SORT_ROLE:
            return sort_value(row, column)
        if role == ROW_ROLE:
            return row
        if role == Qt.ItemDataRole.DecorationRole and column == "issued":
            return self._icons[row.row_kind]
        if role == Qt.ItemDataRole.TextAlignmentRole and column in ("value", "service", "net", "ibs", "cbs", "is"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._colour(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row)
        return None

    def _colour(self, row: GridRow, column: str) -> QBrush | None:
        if row.cancelled_after_capture or (row.quarantined and column in ("counterpart", "kind")):
            return QBrush(ALERT)
        if column == "deadline" and row.deadline is not None and row.deadline.days_left(self._now()) <= 5:
            return QBrush(ALERT if row.deadline.due < self._now() else WARNING)
        if row.status is DocumentStatus.CANCELLED or row.is_event_row:
            return QBrush(MUTED)
        return None

    def _tooltip(self, row: GridRow) -> str | None:
        if row.cancelled_after_capture:
            return "NF-e cancelada depois de capturada: confira se já foi escriturada."
        if row.quarantined:
            return f"Documento em quarentena: {row.parse_error or 'conteúdo ilegível'}"
        if row.is_event_row:
            return "Eventos de uma chave cujo documento não foi recebido por esta empresa."
        if row.row_kind is RowKind.SUMMARY:
            return "Resumo (resNFe): a NF-e completa chega depois da Ciência da Operação."
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if not 0 <= column < len(self.columns):
            return
        by = self.columns[column].sort
        if by is None:
            return
        descending = order is Qt.SortOrder.DescendingOrder
        if by is self.grid_filter.sort and descending == self.grid_filter.descending and self._cursor is not None:
            return
        self.grid_filter = replace(self.grid_filter, sort=by, descending=descending)
        if self._active:  # before its first filter (the window still opening) a sort only records itself
            self.reload()

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
