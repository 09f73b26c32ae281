"""The desk's reads of one document (``Desk.row``, ``detail``, ``xml``, ``pdf``...): a part of
the desk's facade kept apart (``app.desk.desk``), over its store and capture context."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from app.core.products import Product
from app.desk.errors import DeskError
from app.desk.files import write_atomic
from app.desk.grid import GridCursor, document_rows
from app.desk.pdfs import PdfCache
from app.desk.reform import reform_of, related_of
from app.desk.views import DocumentDetail, GridFilter, GridRow, ManifestationActions, ManifestationLine

if TYPE_CHECKING:
    from datetime import datetime

    from app.capture.context import CaptureContext
    from app.capture.office import Office
    from app.desk.manifesting import Manifestations
    from app.desk.opening import StoreSide


class DocumentReads:
    """The reads of one document; the desk supplies its store, context and manifestations."""

    _manifestations: Manifestations

    def _reads(self) -> StoreSide:
        raise NotImplementedError

    def _context(self) -> CaptureContext:
        raise NotImplementedError

    def _open_office(self) -> Office:
        raise NotImplementedError

    def now(self) -> datetime:
        raise NotImplementedError

    def cursor(self, grid: GridFilter) -> GridCursor:
        raise NotImplementedError

    def find_key(self, key: str, company_ids: tuple[int, ...] = ()) -> list[GridRow]:
        raise NotImplementedError

    def row(self, row: GridRow) -> GridRow:
        """The row as it is now (after a manifestation or a new version)."""
        if row.is_event_row:
            fresh = [r for r in self.find_key(row.access_key or "", (row.company_id,)) if r.product is row.product]
            return fresh[0] if fresh else row
        reads = self._reads()
        rows = document_rows(reads.documents, reads.grid, row.product, [row.row_id], self.now())
        return rows[0] if rows else row

    def detail(self, row: GridRow) -> DocumentDetail:
        ctx = self._context()
        company = ctx.companies.get(row.company_id)
        key = row.access_key or ""
        events = tuple(ctx.events.for_key(row.company_id, row.product, key)) if key else ()
        if row.is_event_row:
            return DocumentDetail(row, company.name, company.cnpj.value, (), (), events, (), ())
        lines = self._manifestations.lines(row.product, row.company_id, key) if key else ()
        actions = self._actions(row, lines)
        return DocumentDetail(
            row,
            company.name,
            company.cnpj.value,
            tuple(ctx.documents.parties(row.row_id)),
            tuple(ctx.documents.versions(row.row_id)),
            events,
            lines,
            actions.allowed,
            related_of(row, self.cursor),
            actions.rectifiable,
            *reform_of(ctx.db, row, self.cursor),
        )

    def manifestation_actions(self, row: GridRow) -> ManifestationActions:
        """Which manifestations this document's buttons may send now: by a plain request, or as
        the one rectification of a registered conclusive event."""
        if row.is_event_row or not row.access_key:
            return ManifestationActions()
        return self._actions(row, self._manifestations.lines(row.product, row.company_id, row.access_key))

    def _actions(self, row: GridRow, lines: tuple[ManifestationLine, ...]) -> ManifestationActions:
        from app.desk.manifesting import nfe_actions, taker_actions

        key = row.access_key or ""
        if row.product is Product.NFE and key and not row.is_event_row:
            facts = self._reads().grid.event_facts(row.product, [(row.company_id, key)])[(row.company_id, key)]
            return nfe_actions(row, facts, self.now())
        if row.product is Product.NFSE and key and not row.is_event_row:
            return taker_actions(row, lines)
        return ManifestationActions()

    def xml(self, row: GridRow) -> bytes:
        """The stored XML, byte for byte as received (a key-event row: its latest event's)."""
        if row.is_event_row:
            return self._context().events.get_xml(-row.row_id)
        return self._context().documents.get_document_xml(row.row_id)

    def save_xml(self, row: GridRow, target: Path) -> int:
        """Write the row's XML, byte for byte as received, atomically; returns its size."""
        content = self.xml(row)
        write_atomic(target, content)
        return len(content)

    def pdf(self, row: GridRow) -> bytes:
        """The row's DANFE, DACTE or DANFSe (a resNFe: its summary page); slow: call from a worker.
        The DANFE is kept after its first rendering (``app.desk.pdfs``)."""
        if row.is_event_row:
            raise DeskError("Eventos não têm PDF: abra o documento a que o evento se refere.")
        key = row.access_key or ""
        events = [
            self._context().events.get_xml(e.id)
            for e in self._context().events.for_key(row.company_id, row.product, key)
        ]
        return PdfCache(self._open_office().data_dir).pdf(row.product, key, self.xml(row), events)

    def save_pdf(self, row: GridRow, target: Path) -> int:
        """Write the row's PDF atomically (a network drive may be slow: from a worker)."""
        content = self.pdf(row)
        write_atomic(target, content)
        return len(content)
