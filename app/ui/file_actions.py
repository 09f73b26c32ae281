"""Saving the selected document's XML and PDF, and rendering its preview, all on workers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from app.desk import labels
from app.desk.views import GridRow
from app.ui.window_host import WindowHost


class FileActions(QObject):
    """The detail pane's "Salvar XML…", "Salvar DANFE…" and its Visualização tab."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host

    def _one_row(self) -> GridRow | None:
        rows = self.host.selected_rows()
        return rows[0] if len(rows) == 1 else None

    def _folder(self) -> Path:
        return Path(str(self.host.settings.value("last_save_folder", str(Path.home()))))

    def save_xml(self) -> None:
        row = self._one_row()
        if row is None:
            return
        name = f"{row.access_key or row.row_id}.xml"
        target, _filter = QFileDialog.getSaveFileName(
            self.host.window(), "Salvar XML", str(self._folder() / name), "XML (*.xml)"
        )
        if target:
            self.write_xml(row, Path(target))

    def render_preview(self, row: GridRow) -> None:
        """The DANFE/DACTE/DANFSe for the Visualização tab, rendered on a worker."""
        host = self.host
        host.tasks.run(
            lambda: host.desk.pdf(row),
            lambda content: host.detail.show_pdf(row.row_id, content),
            lambda error: host.detail.pdf_failed(row.row_id, getattr(error, "message", None) or str(error)),
        )

    def save_pdf(self) -> None:
        row = self._one_row()
        if row is None:
            return
        kind = labels.pdf_name(row.product, row.row_kind)
        suffix = "resumo" if kind == labels.SUMMARY_PDF else kind
        name = f"{row.access_key or row.row_id}-{suffix}.pdf"
        target, _filter = QFileDialog.getSaveFileName(
            self.host.window(), f"Salvar {kind}", str(self._folder() / name), "PDF (*.pdf)"
        )
        if target:
            self.write_pdf(row, Path(target))

    def write_pdf(self, row: GridRow, target: Path) -> None:
        self._write(target, labels.pdf_name(row.product, row.row_kind), lambda: self.host.desk.save_pdf(row, target))

    def write_xml(self, row: GridRow, target: Path) -> None:
        self._write(target, "XML", lambda: self.host.desk.save_xml(row, target))

    def _write(self, target: Path, what: str, save: Callable[[], int]) -> None:
        """Write on a worker (a network drive may be slow), then say where and offer the folder."""
        host = self.host
        host.settings.setValue("last_save_folder", str(target.parent))

        def done(_size: int) -> None:
            host.detail.saved(target)
            host.statusBar().showMessage(f"{what} salvo em {target}.", 10_000)

        host.tasks.run(save, done)
