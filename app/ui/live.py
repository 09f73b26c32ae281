"""Live grids: what changes in the store reaches every open grid within seconds, without a key.

Every ``POLL_MS`` (and at once after a capture notice) one worker reads the store's change mark
(a few primary-key reads); a grid whose rows were read at another mark reads again only the
documents touched in between (:meth:`DocumentTableModel.update`), which it replaces in place or
inserts at their sorted place. Around each update this keeps what the clerk was looking at: the
selection, the current row, the first visible row, and the detail of the selected row (read again
when that row changed: its Visualização follows, on its worker).

F5 is the same read over every loaded row; a new filter (the day turned, a company chosen)
reloads the grid and selects again, in its first page, the rows that were selected.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QObject, Qt, QTimer
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableView

from app.core.products import Product
from app.desk.views import GridFilter, GridRow
from app.ui.filters import narrowed
from app.ui.grid_model import DocumentTableModel, row_identity
from app.ui.tasks import Tasks

if TYPE_CHECKING:
    from app.desk.desk import Desk
    from app.desk.live import ChangeMark, Outside

POLL_MS = 2_000  # a change shows within this (plus one read); the goal is 5 s
Identity = tuple[object, ...]


def empty_text(none: str, grid_filter: GridFilter, outside: Outside | None) -> str:
    """What an empty grid says: why, and (rich text) the link to what its period hides."""
    filters = " com estes filtros" if narrowed(grid_filter) else ""
    why = f"{none}{filters} no período escolhido."
    if outside is None or not outside.count:
        return why
    plural = "s" if outside.count != 1 else ""
    count = f"{outside.count:,}".replace(",", ".")
    link = f"Mostrar {'os' if plural else 'o'} {count} documento{plural} fora do período"
    return f"{html.escape(why)}<br><br><a href='widen'>{link}</a>"


@dataclass
class _Kept:
    """What the clerk was looking at in one grid."""

    selected: list[Identity] = field(default_factory=list)
    current: Identity | None = None
    top: Identity | None = None
    at_top: bool = True


class LiveGrids(QObject):
    """Keeps the window's grids current; ``show_detail`` reads a changed selected row's detail."""

    def __init__(
        self,
        tasks: Tasks,
        models: dict[Product, DocumentTableModel],
        views: dict[Product, QTableView],
        show_detail: Callable[[GridRow], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.models = models
        self.views = views
        self.show_detail = show_detail
        self.desk: Desk | None = None
        self._kept: dict[Product, _Kept] = {}
        self._restore: dict[Product, _Kept] = {}
        self._reading = False
        self._again = False  # poked during a read: look once more after it (the change may be newer)
        self._widen: dict[Product, Callable[[], None]] = {}  # what an empty grid's link shows
        self._linked: set[Product] = set()
        self._explained: dict[Product, tuple[GridFilter, Outside]] = {}
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self.poke)
        for product, model in models.items():
            model.merging.connect(lambda p=product: self._note(p))
            model.merged.connect(lambda changed, p=product: self._merged(p, changed))
            model.loaded.connect(lambda p=product: self._reloaded(p))
            model.loaded.connect(self._settled)
            model.failed.connect(lambda _message: self._settled())

    def start(self, desk: Desk) -> None:
        self.desk = desk
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def poke(self) -> None:
        """Look at the store's mark now (a notice said something arrived). Poked while the mark or
        a grid's rows are being read, it looks once more when that read ends: the change may be
        newer than what that read saw (an office notification is not sent twice)."""
        desk = self.desk
        if desk is None:
            return
        if self._reading or any(m.loading for m in self.models.values()):
            self._again = True
            return
        self._again = False
        if not any(m.live for m in self.models.values()):
            return
        self._reading = True
        self.tasks.run(desk.change_mark, self._marked, self._failed)

    def _failed(self, _error: BaseException) -> None:
        self._reading = self._again = False  # the next tick tries again (a locked database, a folder gone)

    def _marked(self, mark: ChangeMark) -> None:
        self._reading = False
        for model in self.models.values():
            if model.live and model.mark != mark:
                model.update(mark)
        self._settled()

    def _settled(self) -> None:
        """A read ended (the mark, or a grid's page or update): the poke it held back, now."""
        if self._again and not self._reading and not any(m.loading for m in self.models.values()):
            self.poke()

    def load(self, product: Product, grid_filter: GridFilter) -> bool:
        """Show ``grid_filter`` in ``product``'s grid keeping the selection: in place when the
        filter is the one shown (F5), else a reload that selects the same rows again. False when
        the grid starts over (its first filter, or nothing was selected)."""
        model = self.models[product]
        if model.live and model.grid_filter == grid_filter:
            return model.update(everything=True) or True
        kept = self._look(product)
        model.set_filter(grid_filter)
        if kept.selected:
            self._restore[product] = kept
            return True
        return False

    def explain_empty(self, product: Product, label: QLabel, none: str, widen: Callable[[date], None]) -> None:
        """Say why ``product``'s grid is empty, then (read on a worker) how many documents its
        period hides, with a link that widens the period to show them."""
        model, desk = self.models[product], self.desk
        grid_filter = model.grid_filter
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setText(empty_text(none, grid_filter, None))
        if desk is None:
            return
        known = self._explained.get(product)

        def shown(outside: Outside) -> None:
            self._explained[product] = (grid_filter, outside)
            if model.rows or model.grid_filter != grid_filter or not outside.count:
                return
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setText(empty_text(none, grid_filter, outside))
            if outside.since is not None:
                since = outside.since
                self._widen[product] = lambda: widen(since)
            if product not in self._linked:
                self._linked.add(product)
                label.linkActivated.connect(lambda _link: self._widen.pop(product, lambda: None)())

        if known is not None and known[0] == grid_filter:
            shown(known[1])  # a live update of the same empty grid: no count of the whole product again
        else:
            self.tasks.run(lambda: desk.outside_period(grid_filter), shown)

    # ------------------------------------------------------------------ keeping the clerk's place

    def _look(self, product: Product) -> _Kept:
        view, model = self.views[product], self.models[product]
        selection = view.selectionModel()
        rows = sorted({i.row() for i in selection.selectedRows()})
        current = selection.currentIndex()
        top = view.rowAt(0)
        return _Kept(
            selected=[row_identity(model.rows[r]) for r in rows if r < len(model.rows)],
            current=row_identity(model.rows[current.row()]) if current.isValid() else None,
            top=row_identity(model.rows[top]) if 0 <= top < len(model.rows) else None,
            at_top=view.verticalScrollBar().value() == 0,
        )

    def _note(self, product: Product) -> None:
        self._kept[product] = self._look(product)

    def _merged(self, product: Product, changed: set[Identity]) -> None:
        kept = self._kept.pop(product, None)
        if kept is None:
            return
        self._put_back(product, kept)
        view, model = self.views[product], self.models[product]
        rows = sorted({i.row() for i in view.selectionModel().selectedRows()})
        if len(rows) == 1 and row_identity(model.rows[rows[0]]) in changed:
            self.show_detail(model.rows[rows[0]])  # its manifestation, its complete NF-e, its preview

    def _reloaded(self, product: Product) -> None:
        kept = self._restore.pop(product, None)
        if kept is not None:
            self._put_back(product, kept)

    def _put_back(self, product: Product, kept: _Kept) -> None:
        view, model = self.views[product], self.models[product]
        where = {row_identity(r): position for position, r in enumerate(model.rows)}
        selection = view.selectionModel()
        now = sorted({i.row() for i in selection.selectedRows()})
        wanted = sorted(where[i] for i in kept.selected if i in where)
        if wanted != now:
            chosen = QItemSelection()
            last = model.columnCount() - 1
            for position in wanted:
                chosen.select(model.index(position, 0), model.index(position, last))
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
            selection.select(chosen, flags)
        if kept.current in where and selection.currentIndex().row() != where[kept.current]:
            selection.setCurrentIndex(model.index(where[kept.current], 0), QItemSelectionModel.SelectionFlag.NoUpdate)
        if kept.at_top:
            view.verticalScrollBar().setValue(0)  # at the top, arrivals show
        elif kept.top in where:
            view.doItemsLayout()  # the scroll range grows with the rows inserted: now, not later
            view.scrollTo(model.index(where[kept.top], 0), QAbstractItemView.ScrollHint.PositionAtTop)
