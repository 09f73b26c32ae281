"""Documents: one row per (company, product, key), every XML it arrived as kept in
``document_versions`` (compressed, byte-exact, with its sha256), parties by role, grid pages.

A fuller version (nfeProc) becomes current over a summary (resNFe); a poorer one arriving later
only joins the history. ``store_batch`` writes a lot and the cursor in one transaction, so a
crash never leaves the cursor ahead of the documents.

Lots are written by ``store_lot_in`` (app.store.lots: the driver, statements written once).
``store_document_in`` is the same upsert for one document through the ORM: the reference the
lot writer's outcome is tested against, row for row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.store.cursors import save_state_in
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.grid import GridRepository
from app.store.items import IN_CHUNK, record_item_in
from app.store.lots import mark_cancelled_in as mark_cancelled_in
from app.store.lots import offset_minutes, parties_of, validate_fields
from app.store.lots import store_lot_in as store_lot_in
from app.store.lots import store_lot_on as store_lot_on
from app.store.lots import validate_document as validate_document
from app.store.models import (
    DistributionItemRow,
    DocumentPartyRow,
    DocumentRow,
    DocumentVersionRow,
)
from app.store.records import (
    KIND_RANK,
    CaptureState,
    Direction,
    DocumentInput,
    DocumentKind,
    DocumentQuery,
    DocumentStatus,
    DocumentSummary,
    DocumentVersionInfo,
    EventInput,
    GridQuery,
    Party,
    PartyRole,
    Product,
    StoredDocument,
    StoredEvent,
)
from app.store.types import pack_xml, unpack_xml


class UnknownDocument(InvalidRecord, LookupError):
    """No document (or version) with that id."""


def _apply_metadata(row: DocumentRow, doc: DocumentInput, now: datetime) -> None:
    row.kind = doc.kind.value
    row.access_key = doc.access_key
    row.nsu = doc.nsu if doc.nsu is not None else row.nsu
    row.model = doc.model
    row.serie = doc.serie
    row.number = doc.number
    row.emitter_id = doc.emitter_id
    row.emitter_name = doc.emitter_name
    row.recipient_id = doc.recipient_id
    row.recipient_name = doc.recipient_name
    row.total_cents = doc.total_cents
    row.issued_at = doc.issued_at
    row.issued_offset_minutes = offset_minutes(doc.issued_at)
    row.direction = doc.direction.value
    row.status = doc.status.value
    row.situation = doc.situation
    row.quarantined = doc.parse_error is not None
    row.parse_error = doc.parse_error
    row.updated_at = now


def store_document_in(session: Session, company_id: int, doc: DocumentInput, now: datetime) -> StoredDocument:
    """Upsert one document inside an open write session."""
    validate_fields(doc)
    packed = pack_xml(doc.xml, doc.xml_gzip)
    row: DocumentRow | None = None
    if doc.access_key is not None:
        row = session.scalar(
            select(DocumentRow).where(
                DocumentRow.company_id == company_id,
                DocumentRow.product == doc.product.value,
                DocumentRow.access_key == doc.access_key,
            )
        )
    elif doc.nsu is not None:
        # No key (unreadable or unknown document): the NSU identifies it, so a re-delivery of
        # the same NSU lands on the same row instead of a duplicate.
        row = session.scalar(
            select(DocumentRow)
            .join(DistributionItemRow, DistributionItemRow.document_id == DocumentRow.id)
            .where(
                DistributionItemRow.company_id == company_id,
                DistributionItemRow.product == doc.product.value,
                DistributionItemRow.nsu == doc.nsu,
            )
        )
    created = row is None
    current: DocumentVersionRow | None = None
    if row is None:
        row = DocumentRow(company_id=company_id, product=doc.product.value, version_count=0, created_at=now)
        _apply_metadata(row, doc, now)
        session.add(row)
        session.flush()
    else:
        current = session.scalar(
            select(DocumentVersionRow).where(
                DocumentVersionRow.document_id == row.id, DocumentVersionRow.is_current.is_(True)
            )
        )
    version = session.scalar(
        select(DocumentVersionRow).where(
            DocumentVersionRow.document_id == row.id, DocumentVersionRow.xml_sha256 == packed.sha256
        )
    )
    new_version = version is None
    promote = False
    if version is None:
        promote = current is None or (
            doc.parse_error is None and KIND_RANK[doc.kind] >= KIND_RANK[DocumentKind(current.kind)]
        )
        if promote and current is not None:
            current.is_current = False
            session.flush()  # the partial unique index allows one current version at a time
        version = DocumentVersionRow(
            document_id=row.id,
            kind=doc.kind.value,
            nsu=doc.nsu,
            schema=doc.schema,
            xml_zlib=packed.blob,
            xml_sha256=packed.sha256,
            xml_size=packed.size,
            is_current=promote,
            parse_error=doc.parse_error,
            received_at=now,
        )
        session.add(version)
        row.version_count += 1
        row.updated_at = now
        if promote:
            if not created:
                _apply_metadata(row, doc, now)
            session.execute(delete(DocumentPartyRow).where(DocumentPartyRow.document_id == row.id))
            session.add_all(
                DocumentPartyRow(document_id=row.id, role=p.role.value, tax_id=p.tax_id, name=p.name)
                for p in parties_of(doc)
            )
        session.flush()
    elif doc.nsu is not None:
        # The same bytes again, now with an NSU (fetched by key, then distributed): the version
        # and, when current, the document take the NSU they lacked (lots.py does the same).
        if version.nsu is None:
            version.nsu = doc.nsu
        if version.is_current and row.nsu is None:
            row.nsu = doc.nsu
        session.flush()
    nsu_new = False
    if doc.nsu is not None:
        nsu_new = record_item_in(session, company_id, doc.product, doc.nsu, doc.schema, document_id=row.id, now=now)
    return StoredDocument(
        document_id=row.id,
        version_id=version.id,
        created=created,
        new_version=new_version,
        became_current=promote,
        nsu_was_new=nsu_new,
    )


def _summary(row: DocumentRow) -> DocumentSummary:
    return DocumentSummary(
        id=row.id,
        company_id=row.company_id,
        product=Product(row.product),
        kind=DocumentKind(row.kind),
        access_key=row.access_key,
        nsu=row.nsu,
        model=row.model,
        serie=row.serie,
        number=row.number,
        emitter_id=row.emitter_id,
        emitter_name=row.emitter_name,
        recipient_id=row.recipient_id,
        recipient_name=row.recipient_name,
        total_cents=row.total_cents,
        issued_at=row.issued_at,
        issued_offset_minutes=row.issued_offset_minutes,
        direction=Direction(row.direction),
        status=DocumentStatus(row.status),
        situation=row.situation,
        quarantined=row.quarantined,
        parse_error=row.parse_error,
        version_count=row.version_count,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _chunks(ids: Sequence[int]) -> Iterable[Sequence[int]]:
    for start in range(0, len(ids), IN_CHUNK):
        yield ids[start : start + IN_CHUNK]


class DocumentRepository:
    """Store documents and read them back: XML by key, grid pages of ids, summaries, history."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # ------------------------------------------------------------------ writing

    def store(self, company_id: int, doc: DocumentInput) -> StoredDocument:
        with self._db.session() as s:
            [stored] = store_lot_in(s, company_id, [doc], self._db.clock.now())
        assert isinstance(stored, StoredDocument)
        return stored

    def store_batch(
        self,
        company_id: int,
        items: Sequence[DocumentInput | EventInput],
        state: CaptureState | None = None,
    ) -> list[StoredDocument | StoredEvent]:
        """Store a whole lot (documents and events) and, if given, the new cursor state, in one
        transaction: either all of it is on disk or none."""
        if state is not None and state.company_id != company_id:
            raise InvalidRecord("O estado de captura pertence a outra empresa.")
        now = self._db.clock.now()
        # The engines' path (app.store.unit): the driver's own transaction, no ORM session.
        with self._db.write_driver() as driver:
            results = store_lot_on(driver, company_id, items, now)
            if state is not None:
                save_state_in(driver, state, now)
        if state is not None:
            self._db.state_marks.mark((company_id,))
        return results

    def set_status(self, document_id: int, status: DocumentStatus, situation: str | None = None) -> DocumentSummary:
        """Change the status (e.g. cancelled by an event) and optionally the situation."""
        with self._db.session() as s:
            row = s.get(DocumentRow, document_id)
            if row is None:
                raise UnknownDocument(f"Documento não encontrado (id {document_id}).")
            row.status = status.value
            if situation is not None:
                row.situation = situation
            row.updated_at = self._db.clock.now()
            return _summary(row)

    # ------------------------------------------------------------------ reading one

    def get(self, document_id: int) -> DocumentSummary:
        with self._db.reader() as s:
            row = s.get(DocumentRow, document_id)
            if row is None:
                raise UnknownDocument(f"Documento não encontrado (id {document_id}).")
            return _summary(row)

    def find(self, company_id: int, product: Product, access_key: str) -> DocumentSummary | None:
        with self._db.reader() as s:
            row = s.scalar(
                select(DocumentRow).where(
                    DocumentRow.company_id == company_id,
                    DocumentRow.product == product.value,
                    DocumentRow.access_key == access_key,
                )
            )
            return _summary(row) if row is not None else None

    def get_xml(self, company_id: int, product: Product, access_key: str) -> bytes | None:
        """The exact bytes of the current version of the document with that key."""
        query = (
            select(DocumentVersionRow.xml_zlib, DocumentVersionRow.xml_sha256)
            .join(DocumentRow, DocumentRow.id == DocumentVersionRow.document_id)
            .where(
                DocumentRow.company_id == company_id,
                DocumentRow.product == product.value,
                DocumentRow.access_key == access_key,
                DocumentVersionRow.is_current.is_(True),
            )
        )
        with self._db.reader() as s:
            found = s.execute(query).first()
        return None if found is None else unpack_xml(found[0], found[1])

    def get_document_xml(self, document_id: int) -> bytes:
        query = select(DocumentVersionRow.xml_zlib, DocumentVersionRow.xml_sha256).where(
            DocumentVersionRow.document_id == document_id, DocumentVersionRow.is_current.is_(True)
        )
        with self._db.reader() as s:
            found = s.execute(query).first()
        if found is None:
            raise UnknownDocument(f"Documento não encontrado (id {document_id}).")
        return unpack_xml(found[0], found[1])

    def versions(self, document_id: int) -> list[DocumentVersionInfo]:
        """Every XML the document arrived as, oldest first."""
        with self._db.reader() as s:
            rows = s.execute(
                select(
                    DocumentVersionRow.id,
                    DocumentVersionRow.kind,
                    DocumentVersionRow.nsu,
                    DocumentVersionRow.schema,
                    DocumentVersionRow.xml_sha256,
                    DocumentVersionRow.xml_size,
                    DocumentVersionRow.is_current,
                    DocumentVersionRow.received_at,
                )
                .where(DocumentVersionRow.document_id == document_id)
                .order_by(DocumentVersionRow.id)
            )
            return [
                DocumentVersionInfo(
                    id=vid,
                    document_id=document_id,
                    kind=DocumentKind(kind),
                    nsu=nsu,
                    schema=schema,
                    sha256=sha,
                    size=size,
                    is_current=current,
                    received_at=received,
                )
                for vid, kind, nsu, schema, sha, size, current, received in rows
            ]

    def get_version_xml(self, version_id: int) -> bytes:
        with self._db.reader() as s:
            found = s.execute(
                select(DocumentVersionRow.xml_zlib, DocumentVersionRow.xml_sha256).where(
                    DocumentVersionRow.id == version_id
                )
            ).first()
        if found is None:
            raise UnknownDocument(f"Versão de documento não encontrada (id {version_id}).")
        return unpack_xml(found[0], found[1])

    def parties(self, document_id: int) -> list[Party]:
        with self._db.reader() as s:
            rows = s.execute(
                select(DocumentPartyRow.role, DocumentPartyRow.tax_id, DocumentPartyRow.name)
                .where(DocumentPartyRow.document_id == document_id)
                .order_by(DocumentPartyRow.id)
            )
            return [Party(PartyRole(role), tax_id, name) for role, tax_id, name in rows]

    # ------------------------------------------------------------------ grid pages

    def page_ids(self, query: DocumentQuery, offset: int, limit: int) -> list[int]:
        """One page of ids in issue-date order (ties by id); served by ``ix_documents_grid``.
        The grid's query (``app.store.grid``) with one company and the store's filters."""
        return GridRepository(self._db).page_ids(GridQuery.of(query), offset, limit)

    def count(self, query: DocumentQuery) -> int:
        return GridRepository(self._db).count(GridQuery.of(query))

    def summaries(self, ids: Sequence[int]) -> list[DocumentSummary]:
        """Grid rows for ``ids`` in the same order, in one query per 500 ids (no N+1)."""
        found: dict[int, DocumentSummary] = {}
        with self._db.reader() as s:
            for chunk in _chunks(ids):
                for row in s.scalars(select(DocumentRow).where(DocumentRow.id.in_(chunk))):
                    found[row.id] = _summary(row)
        return [found[i] for i in ids if i in found]
