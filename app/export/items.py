"""One document or event as the exporters see it: the stored bytes with what names and rules need."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.store.companies import CompanyRepository
from app.store.db import Database
from app.store.documents import DocumentRepository
from app.store.events import EventRepository, UnknownEvent
from app.store.exports import DOCUMENT, EVENT, ExportReads
from app.store.records import (
    CaptureSettings,
    Company,
    DocumentKind,
    DocumentSummary,
    EventRecord,
    Party,
    Product,
)

SUMMARY_KINDS = frozenset({DocumentKind.RES_NFE, DocumentKind.RES_EVENTO, DocumentKind.DPS})


@dataclass(frozen=True, slots=True)
class ExportItem:
    """A document (``event`` None) or an event (``document``: the one of its key, if stored)."""

    company: Company
    product: Product
    item_type: str
    item_id: int
    access_key: str
    kind: DocumentKind
    xml: bytes
    document: DocumentSummary | None
    event: EventRecord | None = None
    parties: tuple[Party, ...] = ()

    @property
    def content(self) -> str:
        """complete, summary or event: what a profile's ``kinds`` choose among."""
        if self.event is not None:
            return "event"
        return "summary" if self.kind in SUMMARY_KINDS else "complete"


class ItemSource:
    """Reads items by id; companies and settings are read once per source (one export run)."""

    def __init__(self, db: Database) -> None:
        self.documents = DocumentRepository(db)
        self.events = EventRepository(db)
        self.companies = CompanyRepository(db)
        self.reads = ExportReads(db)
        self._companies: dict[int, Company] = {}
        self._settings: dict[tuple[int, Product], CaptureSettings | None] = {}

    def company(self, company_id: int) -> Company:
        if company_id not in self._companies:
            self._companies[company_id] = self.companies.get(company_id)
        return self._companies[company_id]

    def settings(self, company_id: int, product: Product) -> CaptureSettings | None:
        if (company_id, product) not in self._settings:
            self._settings[(company_id, product)] = self.companies.get_settings(company_id, product)
        return self._settings[(company_id, product)]

    def load(self, item_type: str, item_id: int) -> ExportItem | None:
        """None when the item is gone or has no key (an unreadable document cannot be named)."""
        if item_type == DOCUMENT:
            return self.document(item_id)
        try:
            return self.event(item_id)
        except UnknownEvent:
            return None

    def load_many(
        self, entries: Sequence[tuple[str, int]], *, with_xml: bool = True
    ) -> dict[tuple[str, int], ExportItem | None]:
        """``load`` for many, documents in a few queries; ``with_xml`` False leaves ``xml`` empty
        (enough to decide what a profile wants, not to write it)."""
        doc_ids = list(dict.fromkeys(i for t, i in entries if t == DOCUMENT))
        summaries = {d.id: d for d in self.documents.summaries(doc_ids)}
        parties = self.reads.parties(doc_ids)
        xml = self.reads.current_xml(doc_ids) if with_xml else {}
        found: dict[tuple[str, int], ExportItem | None] = {}
        for item_type, item_id in entries:
            if item_type != DOCUMENT:
                found[(item_type, item_id)] = self.load(item_type, item_id)
                continue
            summary = summaries.get(item_id)
            if summary is None or summary.access_key is None or (with_xml and item_id not in xml):
                found[(item_type, item_id)] = None
                continue
            found[(item_type, item_id)] = ExportItem(
                company=self.company(summary.company_id),
                product=summary.product,
                item_type=DOCUMENT,
                item_id=item_id,
                access_key=summary.access_key,
                kind=summary.kind,
                xml=xml.get(item_id, b""),
                document=summary,
                parties=tuple(parties.get(item_id, ())),
            )
        return found

    def document(self, document_id: int) -> ExportItem | None:
        return self.load_many([(DOCUMENT, document_id)])[(DOCUMENT, document_id)]

    def event(self, event_id: int) -> ExportItem:
        record = self.events.get(event_id)
        document = self.documents.find(record.company_id, record.product, record.access_key)
        parties = tuple(self.documents.parties(document.id)) if document is not None else ()
        return ExportItem(
            company=self.company(record.company_id),
            product=record.product,
            item_type=EVENT,
            item_id=event_id,
            access_key=record.access_key,
            kind=record.kind,
            xml=self.events.get_xml(event_id),
            document=document,
            event=record,
            parties=parties,
        )
