"""Export from the window: the automatic profiles (list, add with a preview of the names, remove)
and a one-off export of the selected documents (``Desk.exports``). Slow: call from a worker."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import CapturaError
from app.core.products import Product
from app.export.patterns import DEFAULT_PATTERN, IMPORT_PATTERN
from app.export.presets import ARCHIVE, IMPORT, PRESETS, preset, preview, preview_event
from app.store.records import ExportProfile

if TYPE_CHECKING:  # the store and the writers load on the worker that first exports
    from datetime import date

    from app.core.clock import Clock
    from app.export.automatic import ProfileRun
    from app.export.manual import ManualReport
    from app.store.db import Database
    from app.store.exports import ExportRepository

__all__ = ["ARCHIVE", "DEFAULT_PATTERN", "PRESETS", "Exports", "preset", "preview", "sample_paths"]
PRESET_PATTERNS = {ARCHIVE: DEFAULT_PATTERN, IMPORT: IMPORT_PATTERN}
PRESET_LABELS = {
    ARCHIVE: "Arquivo (completos, resumos e eventos, por empresa e mês)",
    IMPORT: "Pasta de importação do ERP (só autorizados completos, um arquivo por chave)",
}


def sample_paths(pattern: str) -> tuple[str, str]:
    """Where a sample NF-e and its cancellation would go (raises on a bad pattern, in Portuguese)."""
    return preview(pattern), preview_event(pattern)


class Exports:
    """The data folder's export profiles and one-off exports, over its database."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def _repository(self) -> ExportRepository:
        from app.store.exports import ExportRepository

        return ExportRepository(self._db)

    def profiles(self) -> list[ExportProfile]:
        return self._repository().profiles()

    def add_profile(
        self,
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
        return self._repository().add(profile)

    def remove_profile(self, name: str) -> None:
        self._repository().remove(name)

    def save_profile(self, profile: ExportProfile) -> ExportProfile:
        """A profile built from a preset (``export-profile add``), stored as given."""
        return self._repository().add(profile)

    def queued(self, profile: ExportProfile) -> int:
        """Items waiting for this profile's next run."""
        return self._repository().queue_size(profile.id)

    def run_profiles(self) -> list[ProfileRun]:
        """Run the active profiles now (the capture service runs them every minute)."""
        from app.export.automatic import AutomaticExport

        return AutomaticExport(self._db, self._clock).run()

    def export(
        self,
        destination: Path,
        *,
        company_ids: tuple[int, ...] = (),
        products: tuple[Product, ...] = (),
        first_day: date | None = None,
        last_day: date | None = None,
        pattern: str = DEFAULT_PATTERN,
        pdf: bool = False,
        cancelled_mode: str = "move",
        zip_path: Path | None = None,
    ) -> ManualReport:
        """Every document chosen by the filters, and its events, under ``destination`` (``export``)."""
        from app.export.manual import Selection, export_selection

        selection = Selection(company_ids=company_ids, products=products, first_day=first_day, last_day=last_day)
        return export_selection(
            self._db, destination, selection, pattern=pattern, pdf=pdf, cancelled_mode=cancelled_mode, zip_path=zip_path
        )

    def export_documents(self, document_ids: tuple[int, ...], destination: Path, *, pdf: bool) -> ManualReport:
        """The selected documents (and their events) under ``destination`` in the archive pattern."""
        from app.export.manual import Selection, export_selection

        if not document_ids:
            raise CapturaError("Selecione documentos para exportar.")
        return export_selection(self._db, destination, Selection(document_ids=document_ids), pdf=pdf)
