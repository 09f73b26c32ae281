"""The window's opening in two steps (issue 24): the desk's store, and the current grid's first
page read from it, then the rest of the opening (the capture starting: its imports, the office,
the service, the node), so the clerk sees rows while the capture is still starting."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from app.ui.grid_model import DocumentTableModel

CAPTURE_AT_LATEST_MS = 2_000  # a first page slower than this does not hold back the capture


class AfterFirstRows(QObject):
    """Calls ``then`` once: when ``model``'s first page arrived or failed, or after
    ``CAPTURE_AT_LATEST_MS`` (the two would otherwise share the worker's interpreter)."""

    def __init__(self, model: DocumentTableModel, then: Callable[[], None]) -> None:
        super().__init__(model)
        self._then: Callable[[], None] | None = then
        self._model = model
        model.loaded.connect(self._go)
        model.failed.connect(self._go)
        QTimer.singleShot(CAPTURE_AT_LATEST_MS, self, self._go)

    def _go(self, *_args: object) -> None:
        then, self._then = self._then, None
        if then is None:
            return
        self._model.loaded.disconnect(self._go)
        self._model.failed.disconnect(self._go)
        then()
