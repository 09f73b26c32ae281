"""A one-off export of a selection, a filter or a period into a folder, optionally zipped.

The user chose what goes, so the delivery rules do not filter it; names, atomic writes, no
duplicates, resumo and cancelled handling are the profiles' (``app.export.writer``). Keys known
only by their events (an NF-e the company issued, its customers' manifestations) go too while
no period is given, or when their first event falls in it.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import BinaryIO

from app.config.files import write_atomic, write_atomic_with
from app.core.clock import BRASILIA
from app.core.errors import CapturaError
from app.export.items import ExportItem, ItemSource
from app.export.patterns import DEFAULT_PATTERN, validate_pattern
from app.export.writer import Exporter, Writer, WriteReport, make_folders
from app.store.db import Database
from app.store.grid import GridRepository
from app.store.records import ExportProfile, GridQuery, GridSort, Product

PAGE = 500


@dataclass(frozen=True, slots=True)
class Selection:
    """What to export: companies and products (empty: all), an issue period in Brasília days
    (inclusive), or explicit document ids (then nothing else is looked at)."""

    company_ids: tuple[int, ...] = ()
    products: tuple[Product, ...] = ()
    first_day: date | None = None
    last_day: date | None = None
    document_ids: tuple[int, ...] = ()

    def period(self) -> tuple[datetime | None, datetime | None]:
        return period_of(self.first_day, self.last_day)


def period_of(first_day: date | None, last_day: date | None) -> tuple[datetime | None, datetime | None]:
    """Brasília days, both inclusive, as the [start, end) instants the store filters on."""
    start = datetime.combine(first_day, time(), BRASILIA) if first_day else None
    end = datetime.combine(last_day + timedelta(days=1), time(), BRASILIA) if last_day else None
    return start, end


@dataclass
class ManualReport:
    documents: int = 0
    events: int = 0
    skipped: int = 0  # unreadable documents: no key to name them by
    files: WriteReport = field(default_factory=WriteReport)
    zip_path: Path | None = None


def export_selection(
    db: Database,
    destination: Path,
    selection: Selection,
    *,
    pattern: str = DEFAULT_PATTERN,
    pdf: bool = False,
    cancelled_mode: str = "move",
    zip_path: Path | None = None,
    write: Writer = write_atomic,
) -> ManualReport:
    """Write every selected document and its events under ``destination``; raises
    ``ExportWriteFailed`` (the folder refused a write: nothing is lost, run it again)."""
    start, end = selection.period()
    if start and end and end <= start:
        raise CapturaError("O fim do período é anterior ao início.")
    profile = ExportProfile(
        name="manual",
        destination=str(destination),
        pattern=validate_pattern(pattern),
        cancelled_mode=cancelled_mode,
        include_pdf=pdf,
    )
    exporter = Exporter(profile, write=write)
    source = ItemSource(db)
    report = ManualReport()
    for document_id in _document_ids(db, selection):
        item = source.document(document_id)
        if item is None:
            report.skipped += 1
            continue
        events = _events(source, item.company.id, item.product, item.access_key)
        exporter.export(item, events, report.files)
        report.documents += 1
        for event in events:
            exporter.export(event, report=report.files)
            report.events += 1
    if not selection.document_ids:
        for company_id, product, key in _event_only_keys(db, selection):
            for event in _events(source, company_id, product, key):
                exporter.export(event, report=report.files)
                report.events += 1
    if zip_path is not None:
        write_zip(zip_path, destination, report.files.files)
        report.zip_path = zip_path
    return report


def _document_ids(db: Database, selection: Selection) -> Iterator[int]:
    if selection.document_ids:
        yield from selection.document_ids
        return
    start, end = selection.period()
    for product in selection.products or tuple(Product):
        yield from issued_ids(db, product, selection.company_ids, start, end)


def issued_ids(
    db: Database, product: Product, company_ids: Sequence[int], start: datetime | None, end: datetime | None
) -> Iterator[int]:
    """The ids of one product's documents issued in [start, end), oldest first, a page at a time."""
    grid = GridRepository(db)
    query = GridQuery(
        product=product,
        company_ids=tuple(company_ids),
        issued_from=start,
        issued_to=end,
        sort=GridSort.ISSUED_AT,
        descending=False,
    )
    offset = 0
    while True:
        ids = grid.page_ids(query, offset, PAGE)
        yield from (i for i in ids if i > 0)
        if len(ids) < PAGE:
            return
        offset += PAGE


def _event_only_keys(db: Database, selection: Selection) -> Iterator[tuple[int, Product, str]]:
    grid = GridRepository(db)
    start, end = selection.period()
    for product in selection.products or tuple(Product):
        for row in grid.key_events(product):
            if selection.company_ids and row.company_id not in selection.company_ids:
                continue
            when = row.first_event_at
            if (start or end) and when is None:
                continue
            if (start and when and when < start) or (end and when and when >= end):
                continue
            yield row.company_id, product, row.access_key


def _events(source: ItemSource, company_id: int, product: Product, key: str) -> list[ExportItem]:
    return [source.event(record.id) for record in source.events.for_key(company_id, product, key)]


def write_zip(zip_path: Path, root: Path, files: Sequence[Path]) -> None:
    """A ZIP of ``files`` (named relative to ``root``), all of it or nothing (temp + rename)."""

    def fill(out: BinaryIO) -> None:
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in dict.fromkeys(files):
                archive.write(path, path.relative_to(root).as_posix())

    try:
        make_folders(zip_path.parent)
    except OSError as error:
        raise CapturaError(f"Não foi possível gravar o ZIP {zip_path}: {error.strerror or error}.") from error
    write_atomic_with(zip_path, fill)
