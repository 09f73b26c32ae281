"""Export from the window: the automatic profiles (list, add with a preview of the names, remove)
and a one-off export of the selected documents. Slow: call from a worker."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import CapturaError
from app.core.products import Product
from app.export.patterns import DEFAULT_PATTERN, IMPORT_PATTERN
from app.export.presets import ARCHIVE, IMPORT, preset, preview, preview_event
from app.store.records import ExportProfile

if TYPE_CHECKING:  # the store and the writers load on the worker that first exports
    from app.desk.desk import Desk
    from app.export.manual import ManualReport
    from app.store.exports import ExportRepository

PRESET_PATTERNS = {ARCHIVE: DEFAULT_PATTERN, IMPORT: IMPORT_PATTERN}
PRESET_LABELS = {
    ARCHIVE: "Arquivo (completos, resumos e eventos, por empresa e mês)",
    IMPORT: "Pasta de importação do ERP (só autorizados completos, um arquivo por chave)",
}


def sample_paths(pattern: str) -> tuple[str, str]:
    """Where a sample NF-e and its cancellation would go (raises on a bad pattern, in Portuguese)."""
    return preview(pattern), preview_event(pattern)


def _repository(desk: Desk) -> ExportRepository:
    from app.store.exports import ExportRepository

    return ExportRepository(desk.ctx.db)


def profiles(desk: Desk) -> list[ExportProfile]:
    return _repository(desk).profiles()


def add_profile(
    desk: Desk,
    *,
    name: str,
    kind: str,
    destination: str,
    pattern: str,
    products: tuple[Product, ...],
    include_pdf: bool,
    cancelled_mode: str,
) -> ExportProfile:
    if not name.strip():
        raise CapturaError("Dê um nome ao perfil.")
    if not destination.strip():
        raise CapturaError("Escolha a pasta de destino.")
    profile = preset(kind, name.strip(), destination.strip(), pattern.strip() or None)
    profile = replace(profile, products=products, include_pdf=include_pdf, cancelled_mode=cancelled_mode)
    return _repository(desk).add(profile)


def remove_profile(desk: Desk, name: str) -> None:
    _repository(desk).remove(name)


def export_documents(desk: Desk, document_ids: tuple[int, ...], destination: Path, *, pdf: bool) -> ManualReport:
    """The selected documents (and their events) under ``destination`` in the archive pattern."""
    from app.export.manual import Selection, export_selection

    if not document_ids:
        raise CapturaError("Selecione documentos para exportar.")
    return export_selection(desk.ctx.db, destination, Selection(document_ids=document_ids), pdf=pdf)
