"""The manifestation buttons: which are offered for the selection, their dialogs, the requests
sent on workers one after the other, and the result per document."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QMessageBox, QProgressDialog

from app import APP_NAME
from app.core.manifestation import CIENCIA
from app.core.products import Product
from app.desk.views import GridRow, ManifestationOutcome
from app.store.records import Direction, DocumentStatus, ManifestationState, RowKind
from app.ui.detail import NFE_EVENTS
from app.ui.manifest_dialog import ManifestDialog
from app.ui.rectify_dialog import RectifyDialog
from app.ui.taker_dialog import TakerDialog
from app.ui.window_host import WindowHost


def manifestable(row: GridRow) -> bool:
    """A received NF-e (resumo or complete), neither cancelled nor denied, not awaiting an answer."""
    return (
        row.product is Product.NFE
        and row.direction is Direction.RECEIVED
        and row.row_kind in (RowKind.SUMMARY, RowKind.COMPLETE)
        and row.status not in (DocumentStatus.CANCELLED, DocumentStatus.DENIED)
        and row.manifestation not in (ManifestationState.REQUESTED, None)
    )


class ManifestActions(QObject):
    """Manifestation for the window's selection; ``last_outcomes``/``last_result`` for tests."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.last_dialog: QDialog | None = None
        self.last_outcomes: list[tuple[GridRow, ManifestationOutcome]] | None = None
        self.last_result: QMessageBox | None = None
        self.rectify = QAction("Retificar manifestação…", self)  # the menus place it
        self.rectify.setObjectName("rectify")
        self.rectify.setEnabled(False)
        self.rectify.triggered.connect(self.rectify_selected)

    def enable_batch(self, rows: list[GridRow]) -> None:
        """Several rows selected: the NF-e buttons apply to those that accept them."""
        eligible = [r for r in rows if manifestable(r)]
        product = self.host.current_product()
        for tp, button in self.host.detail.buttons.items():
            if tp not in NFE_EVENTS:  # the taker's events: one NFS-e at a time
                button.setVisible(product is Product.NFSE)
                button.setEnabled(False)
                continue
            button.setVisible(product is Product.NFE)
            button.setEnabled(
                bool(eligible)
                and self.host.writable
                and (tp != "210210" or any(r.manifestation is ManifestationState.NONE for r in eligible))
            )

    def double_clicked(self, row: GridRow | None, otherwise: Callable[[], None]) -> None:
        """A double click on a resumo awaiting its Ciência offers it; elsewhere, ``otherwise``."""
        if (
            row is not None
            and row.row_kind is RowKind.SUMMARY
            and row.manifestation is ManifestationState.NONE
            and self.host.writable
        ):
            self.manifest_selected(CIENCIA)
        else:
            otherwise()

    def manifest_selected(self, tp_evento: str) -> None:
        host = self.host
        if not host.writable:
            return
        if tp_evento not in NFE_EVENTS:
            self.manifest_taker(tp_evento)
            return
        rows = [r for r in host.selected_rows() if manifestable(r)]
        if tp_evento == "210210":
            rows = [r for r in rows if r.manifestation is ManifestationState.NONE]
        if not rows:
            QMessageBox.information(host.window(), APP_NAME, "Nenhuma das notas selecionadas aceita este evento agora.")
            return
        dialog = ManifestDialog(tp_evento, rows, host.window())
        self.last_dialog = dialog
        if dialog.exec() != ManifestDialog.DialogCode.Accepted:
            return
        self.send_manifestations(tp_evento, rows, dialog.justification())

    def manifest_taker(self, tp_evento: str) -> None:
        """An NFS-e taker event for the one selected NFS-e, after its dialog."""
        rows = self.host.selected_rows()
        if len(rows) != 1 or rows[0].product is not Product.NFSE:
            return
        row = rows[0]
        dialog = TakerDialog(tp_evento, row, self.host.window())
        self.last_dialog = dialog
        if dialog.exec() != TakerDialog.DialogCode.Accepted:
            return
        self.send_taker(tp_evento, row, dialog.reason_code(), dialog.reason())

    def send_taker(self, tp_evento: str, row: GridRow, reason_code: str | None, reason: str | None) -> None:
        desk = self.host.desk
        key = row.access_key or ""
        self._send_one(
            row, lambda: desk.request_taker_manifestation(row.company_id, key, tp_evento, reason_code, reason)
        )

    def rectifiable(self) -> tuple[str, ...]:
        """The events the one selected NF-e offers as its one rectification (none: not offered)."""
        detail = self.host.detail.detail
        rows = self.host.selected_rows()
        if detail is None or not self.host.writable or len(rows) != 1 or rows[0].row_id != detail.row.row_id:
            return ()
        return detail.rectifiable_manifestations

    def update_rectify(self) -> None:
        self.rectify.setEnabled(bool(self.rectifiable()))

    def rectify_selected(self) -> None:
        """Retificar manifestação: its dialog, then the one rectification on a worker."""
        detail = self.host.detail.detail
        if detail is None or not self.rectifiable():
            text = "A nota selecionada não tem manifestação a retificar."
            QMessageBox.information(self.host.window(), APP_NAME, text)
            return
        dialog = RectifyDialog(detail, self.host.window())
        self.last_dialog = dialog
        tp_evento = dialog.tp_evento() if dialog.exec() == RectifyDialog.DialogCode.Accepted else None
        if tp_evento is not None:
            self.send_rectification(detail.row, tp_evento, dialog.justification())

    def send_rectification(self, row: GridRow, tp_evento: str, justification: str | None) -> None:
        desk = self.host.desk
        self.rectify.setEnabled(False)  # a second one is never offered while this one runs
        self._send_one(
            row,
            lambda: desk.manifest(
                row.company_id, row.access_key or "", tp_evento, justification=justification, rectify=True
            ),
        )

    def _send_one(self, row: GridRow, request: Callable[[], ManifestationOutcome]) -> None:
        """One request on a worker, the row refreshed, the result shown."""
        host = self.host
        desk = host.desk

        def work() -> tuple[ManifestationOutcome, GridRow]:
            return request(), desk.row(row)

        def done(result: tuple[ManifestationOutcome, GridRow]) -> None:
            outcome, fresh = result
            host.models[fresh.product].replace_row(fresh)
            self._manifested([(fresh, outcome)])

        host.tasks.run(work, done)

    def send_manifestations(self, tp_evento: str, rows: list[GridRow], justification: str | None) -> None:
        """One request after the other on a worker, with progress and the result per row."""
        host = self.host
        progress = QProgressDialog("Enviando manifestações…", "", 0, len(rows), host.window())
        progress.setCancelButton(None)
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(300)
        outcomes: list[tuple[GridRow, ManifestationOutcome]] = []
        desk = host.desk

        def step(index: int) -> None:
            if index >= len(rows):
                progress.close()
                self._manifested(outcomes)
                return
            row = rows[index]

            def work() -> tuple[ManifestationOutcome, GridRow]:
                outcome = desk.request_manifestation(row.company_id, row.access_key or "", tp_evento, justification)
                return outcome, desk.row(row)

            def done(result: tuple[ManifestationOutcome, GridRow]) -> None:
                outcome, fresh = result
                outcomes.append((fresh, outcome))
                host.models[fresh.product].replace_row(fresh)
                progress.setValue(index + 1)
                step(index + 1)

            host.tasks.run(work, done)

        step(0)

    def _manifested(self, outcomes: list[tuple[GridRow, ManifestationOutcome]]) -> None:
        self.last_outcomes = outcomes
        lines = [f"{r.product.label} {r.number or '-'}: {o.message}" for r, o in outcomes]
        failed = any(o.refused or not (o.accepted or o.pending) for _r, o in outcomes)
        box = QMessageBox(
            QMessageBox.Icon.Warning if failed else QMessageBox.Icon.Information,
            APP_NAME,
            "\n".join(lines),
            parent=self.host.window(),
        )
        box.setObjectName("manifestation-result")
        self.last_result = box
        box.open()
        rows = self.host.selected_rows()
        if len(rows) == 1:
            self.host.show_detail(rows[0])

    def retry_selected(self) -> None:
        host = self.host
        rows = host.selected_rows()
        if len(rows) == 1:
            host.tasks.run(
                lambda: host.desk.retry_quarantined(rows[0]), lambda text: host.statusBar().showMessage(text, 10_000)
            )
