"""Documents: one row per (company, product, key), every XML it arrived as kept in
``document_versions`` (compressed, byte-exact, with its sha256), parties by role, grid pages.

A fuller version (nfeProc) becomes current over a summary (resNFe); a poorer one arriving later
only joins the history. ``store_batch`` writes a lot and the cursor in one transaction, so a
crash never leaves the cursor ahead of the documents.

Lots are written by ``store_lot_in``: one look-up per table for the keys and NSUs of the lot, then
bulk inserts (executemany) for everything new, which is nearly every item of a capture stream.
Only an item whose key, event or NSU is already known (in the database or earlier in the same
lot) takes the per-row ORM path, in its place in the lot's order, so the outcome is the same as
storing the items one by one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, bindparam, delete, func, select
from sqlalchemy.orm import Session

from app.store.cursors import save_state_in
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.events import (
    INSERT_EVENTS,
    EventIdentity,
    existing_events,
    identity,
    new_event_values,
    store_event_in,
    validate_event,
)
from app.store.items import (
    IN_CHUNK,
    INSERT_ITEMS,
    check_nsu,
    new_item_values,
    record_item_in,
    recorded_nsus,
)
from app.store.models import (
    KEY_LEN,
    DistributionItemRow,
    DocumentPartyRow,
    DocumentRow,
    DocumentVersionRow,
    EventRow,
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
    Party,
    PartyRole,
    Product,
    StoredDocument,
    StoredEvent,
)
from app.store.types import BulkInsert, PackedXml, pack_xml, unpack_xml, utc_text

_DOCUMENTS = DocumentRow.__table__
# Prepared once: the lot writer's statements.
_INSERT_DOCUMENTS = BulkInsert(DocumentRow)
_INSERT_VERSIONS = BulkInsert(DocumentVersionRow)
_INSERT_PARTIES = BulkInsert(DocumentPartyRow, omit=("id",))
_EXISTING_KEYS = select(_DOCUMENTS.c.access_key).where(
    _DOCUMENTS.c.company_id == bindparam("company_id"),
    _DOCUMENTS.c.product == bindparam("product"),
    _DOCUMENTS.c.access_key.in_(bindparam("keys", expanding=True)),
)
# The tables whose new rows get their ids from the lot writer, and their highest ids in one query.
_DOCUMENT, _VERSION, _EVENT = 0, 1, 2
_MAX_IDS = select(
    *(select(func.max(model.id)).scalar_subquery() for model in (DocumentRow, DocumentVersionRow, EventRow))
)


class UnknownDocument(InvalidRecord, LookupError):
    """No document (or version) with that id."""


def _validate(doc: DocumentInput) -> None:
    if doc.access_key is not None and not (0 < len(doc.access_key) <= KEY_LEN):
        raise InvalidRecord(f"Chave de acesso inválida: {doc.access_key!r}.")
    if doc.issued_at is not None and doc.issued_at.utcoffset() is None:
        raise InvalidRecord("Data de emissão sem fuso horário; o documento deve informar o fuso.")
    if not doc.xml:
        raise InvalidRecord("Documento sem conteúdo XML.")


def validate_document(doc: DocumentInput) -> None:
    """Every refusal ``store_document_in`` can raise, before anything is written."""
    _validate(doc)
    if doc.nsu is not None:
        check_nsu(doc.nsu)


def _offset_minutes(instant: datetime | None) -> int | None:
    offset = instant.utcoffset() if instant is not None else None
    return None if offset is None else int(offset.total_seconds() // 60)


def _parties_of(doc: DocumentInput) -> tuple[Party, ...]:
    if doc.parties:
        return doc.parties
    derived = []
    if doc.emitter_id or doc.emitter_name:
        derived.append(Party(PartyRole.EMITTER, doc.emitter_id, doc.emitter_name))
    if doc.recipient_id or doc.recipient_name:
        derived.append(Party(PartyRole.RECIPIENT, doc.recipient_id, doc.recipient_name))
    return tuple(derived)


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
    row.issued_offset_minutes = _offset_minutes(doc.issued_at)
    row.direction = doc.direction.value
    row.status = doc.status.value
    row.situation = doc.situation
    row.quarantined = doc.parse_error is not None
    row.parse_error = doc.parse_error
    row.updated_at = now


def store_document_in(session: Session, company_id: int, doc: DocumentInput, now: datetime) -> StoredDocument:
    """Upsert one document inside an open write session."""
    _validate(doc)
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
                for p in _parties_of(doc)
            )
        session.flush()
    nsu_new = False
    if doc.nsu is not None:
        nsu_new = record_item_in(
            session, company_id, doc.product, doc.nsu, doc.schema, document_id=row.id, now=now
        )
    return StoredDocument(
        document_id=row.id,
        version_id=version.id,
        created=created,
        new_version=new_version,
        became_current=promote,
        nsu_was_new=nsu_new,
    )


def _new_document_values(
    document_id: int, company_id: int, doc: DocumentInput, stamp: str
) -> dict[str, Any]:
    """The row ``store_document_in`` creates for a key never seen (``_apply_metadata``'s fields)."""
    return {
        "id": document_id,
        "company_id": company_id,
        "product": doc.product.value,
        "kind": doc.kind.value,
        "access_key": doc.access_key,
        "nsu": doc.nsu,
        "model": doc.model,
        "serie": doc.serie,
        "number": doc.number,
        "emitter_id": doc.emitter_id,
        "emitter_name": doc.emitter_name,
        "recipient_id": doc.recipient_id,
        "recipient_name": doc.recipient_name,
        "total_cents": doc.total_cents,
        "issued_at": utc_text(doc.issued_at),
        "issued_offset_minutes": _offset_minutes(doc.issued_at),
        "direction": doc.direction.value,
        "status": doc.status.value,
        "situation": doc.situation,
        "quarantined": doc.parse_error is not None,
        "parse_error": doc.parse_error,
        "version_count": 1,
        "created_at": stamp,
        "updated_at": stamp,
    }


def _first_version_values(
    version_id: int, document_id: int, doc: DocumentInput, packed: PackedXml, stamp: str
) -> dict[str, Any]:
    return {
        "id": version_id,
        "document_id": document_id,
        "kind": doc.kind.value,
        "nsu": doc.nsu,
        "schema": doc.schema,
        "xml_zlib": packed.blob,
        "xml_sha256": packed.sha256,
        "xml_size": packed.size,
        "is_current": True,
        "parse_error": doc.parse_error,
        "received_at": stamp,
    }


def _existing_keys(connection: Connection, company_id: int, product: Product, keys: Iterable[str]) -> set[str]:
    wanted = sorted(set(keys))
    found: set[str] = set()
    for start in range(0, len(wanted), IN_CHUNK):
        params = {"company_id": company_id, "product": product.value, "keys": wanted[start : start + IN_CHUNK]}
        found.update(connection.execute(_EXISTING_KEYS, params).scalars())
    return found


class _LotWriter:
    """One lot inside an open write session: new rows queued for executemany, the rest per row.

    ``_known_*`` hold what exists in the database or was met earlier in the lot; an item touching
    any of it goes through ``store_document_in``/``store_event_in`` after the queue is flushed, so
    it sees every earlier row. Ids of queued rows are taken from ``max(id) + 1`` (what SQLite
    itself would choose): the write lock (``BEGIN IMMEDIATE``) keeps other writers out, and the
    counters are re-read after any row the ORM inserted.
    """

    def __init__(self, session: Session, company_id: int, now: datetime) -> None:
        self._session = session
        self._connection = session.connection()
        self._company_id = company_id
        self._now = now
        stamp = utc_text(now)
        assert stamp is not None
        self._stamp = stamp  # ``now`` as the bulk rows store it
        self._known_keys: dict[Product, set[str]] = {}
        self._known_events: dict[Product, set[EventIdentity]] = {}
        self._known_nsus: dict[Product, set[int]] = {}
        self._next_ids: list[int] = []  # per _DOCUMENT, _VERSION, _EVENT; empty: read them again
        self._documents: list[dict[str, Any]] = []
        self._versions: list[dict[str, Any]] = []
        self._parties: list[dict[str, Any]] = []
        self._events: list[dict[str, Any]] = []
        self._items: list[dict[str, Any]] = []

    def look_up(self, items: Sequence[DocumentInput | EventInput]) -> None:
        """One query per table and product for the lot's keys, event keys and NSUs."""
        products = {item.product for item in items}
        for product in products:
            doc_keys = [
                i.access_key
                for i in items
                if i.product is product and isinstance(i, DocumentInput) and i.access_key is not None
            ]
            event_keys = [i.access_key for i in items if i.product is product and isinstance(i, EventInput)]
            nsus = [i.nsu for i in items if i.product is product and i.nsu is not None]
            connection, company = self._connection, self._company_id
            self._known_keys[product] = _existing_keys(connection, company, product, doc_keys) if doc_keys else set()
            self._known_events[product] = (
                existing_events(connection, company, product, event_keys) if event_keys else set()
            )
            self._known_nsus[product] = recorded_nsus(connection, company, product, nsus) if nsus else set()

    def document(self, doc: DocumentInput) -> StoredDocument:
        keys, nsus = self._known_keys[doc.product], self._known_nsus[doc.product]
        known = (doc.access_key is not None and doc.access_key in keys) or (doc.nsu is not None and doc.nsu in nsus)
        if doc.access_key is not None:
            keys.add(doc.access_key)
        if doc.nsu is not None:
            nsus.add(doc.nsu)
        if known:
            self.flush()
            stored = store_document_in(self._session, self._company_id, doc, self._now)
            self._next_ids.clear()
            return stored
        packed = pack_xml(doc.xml, doc.xml_gzip)
        document_id, version_id = self._take_id(_DOCUMENT), self._take_id(_VERSION)
        self._documents.append(_new_document_values(document_id, self._company_id, doc, self._stamp))
        self._versions.append(_first_version_values(version_id, document_id, doc, packed, self._stamp))
        self._parties.extend(
            {"document_id": document_id, "role": p.role.value, "tax_id": p.tax_id, "name": p.name}
            for p in _parties_of(doc)
        )
        if doc.nsu is not None:
            self._items.append(
                new_item_values(
                    self._company_id, doc.product, doc.nsu, doc.schema, document_id=document_id, stamp=self._stamp
                )
            )
        return StoredDocument(
            document_id=document_id,
            version_id=version_id,
            created=True,
            new_version=True,
            became_current=True,
            nsu_was_new=doc.nsu is not None,
        )

    def event(self, event: EventInput) -> StoredEvent:
        events, nsus = self._known_events[event.product], self._known_nsus[event.product]
        key = identity(event)
        known = key in events or (event.nsu is not None and event.nsu in nsus)
        events.add(key)
        if event.nsu is not None:
            nsus.add(event.nsu)
        if known:
            self.flush()
            stored = store_event_in(self._session, self._company_id, event, self._now)
            self._next_ids.clear()
            return stored
        event_id = self._take_id(_EVENT)
        self._events.append(new_event_values(
                event_id, self._company_id, event, pack_xml(event.xml, event.xml_gzip), self._stamp
            ))
        if event.nsu is not None:
            self._items.append(
                new_item_values(
                    self._company_id, event.product, event.nsu, event.schema, event_id=event_id, stamp=self._stamp
                )
            )
        return StoredEvent(event_id=event_id, created=True, replaced=False, nsu_was_new=event.nsu is not None)

    def flush(self) -> None:
        """Insert the queued rows, parents before children (foreign keys are checked per row)."""
        for statement, rows in (
            (_INSERT_DOCUMENTS, self._documents),
            (INSERT_EVENTS, self._events),
            (_INSERT_VERSIONS, self._versions),
            (_INSERT_PARTIES, self._parties),
            (INSERT_ITEMS, self._items),
        ):
            statement.run(self._connection, rows)
            rows.clear()

    def _take_id(self, table: int) -> int:
        if not self._next_ids:
            highest = self._connection.execute(_MAX_IDS).one()
            self._next_ids.extend((value or 0) + 1 for value in highest)
        next_id = self._next_ids[table]
        self._next_ids[table] = next_id + 1
        return next_id


def store_lot_in(
    session: Session, company_id: int, items: Sequence[DocumentInput | EventInput], now: datetime
) -> list[StoredDocument | StoredEvent]:
    """Store documents and events inside an open write session; results in the items' order."""
    for item in items:  # every refusal before the first write, in the order one-by-one would raise
        if isinstance(item, EventInput):
            validate_event(item)
        else:
            validate_document(item)
    writer = _LotWriter(session, company_id, now)
    writer.look_up(items)
    results: list[StoredDocument | StoredEvent] = [
        writer.event(item) if isinstance(item, EventInput) else writer.document(item) for item in items
    ]
    writer.flush()
    return results


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


def _where(query: DocumentQuery) -> list[ColumnElement[bool]]:
    clauses: list[ColumnElement[bool]] = [
        DocumentRow.company_id == query.company_id,
        DocumentRow.product == query.product.value,
    ]
    if query.issued_from is not None:
        clauses.append(DocumentRow.issued_at >= query.issued_from)
    if query.issued_to is not None:
        clauses.append(DocumentRow.issued_at < query.issued_to)
    if query.direction is not None:
        clauses.append(DocumentRow.direction == query.direction.value)
    if query.kinds:
        clauses.append(DocumentRow.kind.in_([k.value for k in query.kinds]))
    if query.status is not None:
        clauses.append(DocumentRow.status == query.status.value)
    if query.quarantined is not None:
        clauses.append(DocumentRow.quarantined.is_(query.quarantined))
    return clauses


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
        with self._db.session() as s:
            results = store_lot_in(s, company_id, items, now)
            if state is not None:
                save_state_in(s, state, now)
        return results

    def set_status(
        self, document_id: int, status: DocumentStatus, situation: str | None = None
    ) -> DocumentSummary:
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
                    id=vid, document_id=document_id, kind=DocumentKind(kind), nsu=nsu, schema=schema,
                    sha256=sha, size=size, is_current=current, received_at=received,
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
        """One page of ids in issue-date order (ties by id); served by ``ix_documents_grid``."""
        if offset < 0 or limit <= 0:
            raise ValueError("offset must be >= 0 and limit > 0")
        order = (
            (DocumentRow.issued_at.desc(), DocumentRow.id.desc())
            if query.newest_first
            else (DocumentRow.issued_at.asc(), DocumentRow.id.asc())
        )
        statement = select(DocumentRow.id).where(*_where(query)).order_by(*order).offset(offset).limit(limit)
        with self._db.reader() as s:
            return list(s.scalars(statement))

    def count(self, query: DocumentQuery) -> int:
        with self._db.reader() as s:
            return s.scalar(select(func.count()).select_from(DocumentRow).where(*_where(query))) or 0

    def summaries(self, ids: Sequence[int]) -> list[DocumentSummary]:
        """Grid rows for ``ids`` in the same order, in one query per 500 ids (no N+1)."""
        found: dict[int, DocumentSummary] = {}
        with self._db.reader() as s:
            for chunk in _chunks(ids):
                for row in s.scalars(select(DocumentRow).where(DocumentRow.id.in_(chunk))):
                    found[row.id] = _summary(row)
        return [found[i] for i in ids if i in found]
