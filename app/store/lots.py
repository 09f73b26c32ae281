"""The lot writer: a distribution lot (documents and events) stored inside an open write session.

Lots are the capture's hot path (tens of thousands a day), so they run on the sqlite3 driver
inside the session's transaction, with SQL written once: one look-up per table for the keys and
NSUs of the lot, then ``executemany`` of plain tuples for everything new, which is nearly every
item of a capture stream. An item whose key, event or NSU is already known (in the database or
earlier in the same lot) is stored in its place in the lot's order by a few statements
(``_LotWriter.known_document`` / ``known_event``) after the queue is flushed, so it sees every
earlier row: the outcome, ids included, is what ``store_document_in`` / ``store_event_in`` (the
ORM's one-by-one path, kept as the reference the tests compare with) give item after item.

Ids of new rows are ``max(id) + 1`` (what SQLite itself would choose; on PostgreSQL the id
after the table's sequence, app.store.dialect): the write lock (``BEGIN IMMEDIATE``, the advisory
writer lock on PostgreSQL) keeps other writers out, and the counters are read again after a delete.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.orm import Session

from app.store.driver import as_driver, last_ids, register_text
from app.store.errors import InvalidRecord
from app.store.events import EventIdentity, identity, validate_event
from app.store.items import IN_CHUNK, check_nsu
from app.store.models import (
    KEY_LEN,
    DistributionItemRow,
    DocumentPartyRow,
    DocumentRow,
    DocumentVersionRow,
    EventRow,
)
from app.store.prepared import RowInsert, placeholders
from app.store.records import (
    KIND_RANK,
    DocumentInput,
    DocumentKind,
    DocumentStatus,
    EventInput,
    Party,
    PartyRole,
    Product,
    StoredDocument,
    StoredEvent,
)
from app.store.reform import save_reform_in
from app.store.types import pack_xml, utc_text

# ---------------------------------------------------------------- validation and derived values


def validate_fields(doc: DocumentInput) -> None:
    if doc.access_key is not None and not (0 < len(doc.access_key) <= KEY_LEN):
        raise InvalidRecord(f"Chave de acesso inválida: {doc.access_key!r}.")
    if doc.issued_at is not None and doc.issued_at.utcoffset() is None:
        raise InvalidRecord("Data de emissão sem fuso horário; o documento deve informar o fuso.")
    if not doc.xml:
        raise InvalidRecord("Documento sem conteúdo XML.")


def validate_document(doc: DocumentInput) -> None:
    """Every refusal ``store_document_in`` can raise, before anything is written."""
    validate_fields(doc)
    if doc.nsu is not None:
        check_nsu(doc.nsu)


def offset_minutes(instant: datetime | None) -> int | None:
    offset = instant.utcoffset() if instant is not None else None
    return None if offset is None else int(offset.total_seconds() // 60)


def parties_of(doc: DocumentInput) -> tuple[Party, ...]:
    """The party rows of a document: its own list, else emitter and recipient from the fields."""
    if doc.parties:
        return doc.parties
    derived = []
    if doc.emitter_id or doc.emitter_name:
        derived.append(Party(PartyRole.EMITTER, doc.emitter_id, doc.emitter_name))
    if doc.recipient_id or doc.recipient_name:
        derived.append(Party(PartyRole.RECIPIENT, doc.recipient_id, doc.recipient_name))
    return tuple(derived)


# ---------------------------------------------------------------- statements

# The columns a document's version rewrites when it becomes current (``_apply_metadata``'s).
_META = (
    "kind", "access_key", "nsu", "model", "serie", "number", "emitter_id", "emitter_name",
    "recipient_id", "recipient_name", "total_cents", "issued_at", "issued_offset_minutes",
    "direction", "status", "situation", "quarantined", "parse_error",
)  # fmt: skip
_EVENT_DATA = (
    "kind", "access_key", "tp_evento", "n_seq_evento", "nsu", "schema", "description", "protocol",
    "event_at", "cstat", "author_id", "xml_zlib", "xml_sha256", "xml_size",
)  # fmt: skip
# ``withheld`` and ``substitute_key`` are NFS-e's (revision 0006): NULL here, set by the NFS-e
# adapter in the lot's own transaction (app.store.nfse), so NF-e and CT-e lots write nothing more.
_INSERT_DOCUMENT = RowInsert(
    DocumentRow.__table__,
    ("id", "company_id", "product", *_META, "version_count", "created_at", "updated_at"),
    omit=("withheld",),
)
_INSERT_VERSION = RowInsert(
    DocumentVersionRow.__table__,
    ("id", "document_id", "kind", "nsu", "schema", "xml_zlib", "xml_sha256", "xml_size", "is_current",
     "parse_error", "received_at"),
)  # fmt: skip
_INSERT_PARTY = RowInsert(DocumentPartyRow.__table__, ("document_id", "role", "tax_id", "name"), omit=("id",))
_INSERT_EVENT = RowInsert(
    EventRow.__table__,
    ("id", "company_id", "product", *_EVENT_DATA, "created_at", "updated_at"),
    omit=("substitute_key",),
)
_INSERT_ITEM = RowInsert(
    DistributionItemRow.__table__,
    ("company_id", "product", "nsu", "schema", "document_id", "event_id", "received_at"),
    omit=("id",),
)

_MAX_IDS = (
    "SELECT (SELECT max(id) FROM documents), (SELECT max(id) FROM document_versions), (SELECT max(id) FROM events)"
)
_DOCUMENT, _VERSION, _EVENT = 0, 1, 2  # positions in _MAX_IDS
# PostgreSQL: after the sequences' last ids, so the ids are the ones the ORM would take there.
register_text(_MAX_IDS, last_ids("documents", "document_versions", "events"))

# A known document, its current version and the version with these bytes, if any, in one read.
_WITH_VERSIONS = (
    "SELECT d.id, c.id, c.kind, s.id FROM {source} "
    "LEFT JOIN document_versions AS c ON c.document_id = d.id AND c.is_current = 1 "
    "LEFT JOIN document_versions AS s ON s.document_id = d.id AND s.xml_sha256 = ? "
    "WHERE {where}"
)
_DOCUMENT_BY_KEY = _WITH_VERSIONS.format(
    source="documents AS d", where="d.company_id = ? AND d.product = ? AND d.access_key = ?"
)
# No key (unreadable or unknown document): the NSU identifies it, so a re-delivery of the same
# NSU lands on the same row instead of a duplicate.
_DOCUMENT_BY_NSU = _WITH_VERSIONS.format(
    source="distribution_items AS i JOIN documents AS d ON d.id = i.document_id",
    where="i.company_id = ? AND i.product = ? AND i.nsu = ?",
)
_NOT_CURRENT = "UPDATE document_versions SET is_current = 0 WHERE id = ?"
# Statements built from the column names above (constants), never from input: values are bound.
_PROMOTE = (
    f"UPDATE documents SET {', '.join(f'{c} = ?' for c in _META if c != 'nsu')}, nsu = coalesce(?, nsu), "  # noqa: S608
    "version_count = version_count + 1, updated_at = ? WHERE id = ?"
)
_PROMOTE_META = tuple(c for c in _META if c != "nsu")
_COUNT_VERSION = "UPDATE documents SET version_count = version_count + 1, updated_at = ? WHERE id = ?"
# The same bytes again, now with an NSU (a document first fetched by key, then distributed): the
# document and its version take the NSU they lacked; one that has its NSU keeps it.
_FILL_DOCUMENT_NSU = "UPDATE documents SET nsu = ? WHERE id = ? AND nsu IS NULL"
_FILL_VERSION_NSU = "UPDATE document_versions SET nsu = ? WHERE id = ? AND nsu IS NULL"
_DELETE_PARTIES = "DELETE FROM document_parties WHERE document_id = ?"

_EVENT_BY_IDENTITY = (
    "SELECT id, kind, xml_sha256 FROM events WHERE company_id = ? AND product = ? AND access_key = ? "
    "AND tp_evento = ? AND n_seq_evento = ?"
)
_REPLACE_EVENT = f"UPDATE events SET {', '.join(f'{c} = ?' for c in _EVENT_DATA)}, updated_at = ? WHERE id = ?"  # noqa: S608

_ITEM = "SELECT id, document_id, event_id FROM distribution_items WHERE company_id = ? AND product = ? AND nsu = ?"
_STALE = "SELECT quarantined, access_key FROM documents WHERE id = ?"
_RELINK_ITEM = "UPDATE distribution_items SET document_id = ?, event_id = ?, schema = ? WHERE id = ?"
_LINK_ITEM = "UPDATE distribution_items SET document_id = ?, event_id = ? WHERE id = ?"
_DELETE_DOCUMENT = "DELETE FROM documents WHERE id = ?"

_CANCELLED = DocumentStatus.CANCELLED.value

_KNOWN_KEYS = "SELECT access_key FROM documents WHERE company_id = ? AND product = ? AND access_key IN ({})"
_KNOWN_EVENTS = (
    "SELECT access_key, tp_evento, n_seq_evento FROM events WHERE company_id = ? AND product = ? AND access_key IN ({})"
)
_KNOWN_NSUS = "SELECT nsu FROM distribution_items WHERE company_id = ? AND product = ? AND nsu IN ({})"
_MARK_CANCELLED = (
    "UPDATE documents SET status = ?{stamp} "
    "WHERE company_id = ? AND product = ? AND status != ? AND access_key IN ({keys})"
)


def _known(driver: Any, sql: str, company_id: int, product: Product, values: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` (``company_id = ? AND product = ? AND x IN ({})``) for ``values``, 500 at a time."""
    wanted = sorted(set(values))
    found: list[tuple[Any, ...]] = []
    for start in range(0, len(wanted), IN_CHUNK):
        chunk = wanted[start : start + IN_CHUNK]
        found.extend(driver.execute(sql.format(placeholders(len(chunk))), (company_id, product.value, *chunk)))
    return found


# ---------------------------------------------------------------- the writer


class _LotWriter:
    """One lot inside an open write transaction: new rows queued for ``executemany``, known ones
    stored in place.

    ``_known_*`` hold what exists in the database or was met earlier in the lot; an item touching
    any of it flushes the queue first, so it sees every earlier row.
    """

    def __init__(self, driver: Any, company_id: int, now: datetime) -> None:
        self._driver = driver
        self._company_id = company_id
        stamp = utc_text(now)
        assert stamp is not None
        self._stamp = stamp  # ``now`` as the columns store it
        self._known_keys: dict[Product, set[str]] = {}
        self._known_events: dict[Product, set[EventIdentity]] = {}
        self._known_nsus: dict[Product, set[int]] = {}
        self._next_ids: list[int] = []  # per _DOCUMENT, _VERSION, _EVENT; empty: read them again
        self._documents: list[tuple[Any, ...]] = []
        self._versions: list[tuple[Any, ...]] = []
        self._parties: list[tuple[Any, ...]] = []
        self._events: list[tuple[Any, ...]] = []
        self._items: list[tuple[Any, ...]] = []

    def look_up(self, items: Sequence[DocumentInput | EventInput]) -> None:
        """One query per table and product for the lot's keys, event keys and NSUs."""
        driver, company = self._driver, self._company_id
        for product in {item.product for item in items}:
            doc_keys = [
                i.access_key
                for i in items
                if i.product is product and isinstance(i, DocumentInput) and i.access_key is not None
            ]
            event_keys = [i.access_key for i in items if i.product is product and isinstance(i, EventInput)]
            nsus = [i.nsu for i in items if i.product is product and i.nsu is not None]
            self._known_keys[product] = {k for (k,) in _known(driver, _KNOWN_KEYS, company, product, doc_keys)}
            self._known_events[product] = {
                (k, tp, seq) for k, tp, seq in _known(driver, _KNOWN_EVENTS, company, product, event_keys)
            }
            self._known_nsus[product] = {n for (n,) in _known(driver, _KNOWN_NSUS, company, product, nsus)}

    def document(self, doc: DocumentInput) -> StoredDocument:
        key, nsu, product = doc.access_key, doc.nsu, doc.product
        keys, nsus = self._known_keys[product], self._known_nsus[product]
        known = (key is not None and key in keys) or (nsu is not None and nsu in nsus)
        if key is not None:
            keys.add(key)
        if nsu is not None:
            nsus.add(nsu)
        if known:
            self.flush()
            return self.known_document(doc)
        packed = pack_xml(doc.xml, doc.xml_gzip)
        document_id, version_id = self._take_id(_DOCUMENT), self._take_id(_VERSION)
        stamp = self._stamp
        self._documents.append((document_id, self._company_id, product.value, *_metadata(doc), 1, stamp, stamp))
        self._versions.append(
            (version_id, document_id, doc.kind.value, nsu, doc.schema, packed.blob, packed.sha256, packed.size,
             True, doc.parse_error, stamp)
        )  # fmt: skip
        self._parties.extend((document_id, p.role.value, p.tax_id, p.name) for p in parties_of(doc))
        if nsu is not None:
            self._items.append((self._company_id, product.value, nsu, doc.schema, document_id, None, stamp))
        return StoredDocument(document_id, version_id, True, True, True, nsu is not None)

    def event(self, event: EventInput) -> StoredEvent:
        events, nsus = self._known_events[event.product], self._known_nsus[event.product]
        key, nsu = identity(event), event.nsu
        known = key in events or (nsu is not None and nsu in nsus)
        events.add(key)
        if nsu is not None:
            nsus.add(nsu)
        if known:
            self.flush()
            return self.known_event(event)
        event_id = self._take_id(_EVENT)
        self._events.append(self._event_row(event_id, event))
        if nsu is not None:
            self._items.append((self._company_id, event.product.value, nsu, event.schema, None, event_id, self._stamp))
        return StoredEvent(event_id=event_id, created=True, replaced=False, nsu_was_new=nsu is not None)

    def flush(self) -> None:
        """Insert the queued rows, parents before children (foreign keys are checked per row)."""
        driver = self._driver
        for statement, rows in (
            (_INSERT_DOCUMENT, self._documents),
            (_INSERT_EVENT, self._events),
            (_INSERT_VERSION, self._versions),
            (_INSERT_PARTY, self._parties),
            (_INSERT_ITEM, self._items),
        ):
            if rows:
                statement.run_many(driver, rows)
                rows.clear()

    def _take_id(self, table: int) -> int:
        if not self._next_ids:
            self._next_ids.extend((value or 0) + 1 for value in self._driver.execute(_MAX_IDS).fetchone())
        next_id = self._next_ids[table]
        self._next_ids[table] = next_id + 1
        return next_id

    def _event_row(self, event_id: int, event: EventInput) -> tuple[Any, ...]:
        stamp = self._stamp
        return (event_id, self._company_id, event.product.value, *_event_data(event), stamp, stamp)

    def known_document(self, doc: DocumentInput) -> StoredDocument:
        """``store_document_in`` for a document whose key or NSU is already stored: a new version
        row, the current one switched when these bytes are at least as complete (the metadata and
        parties then follow them), the NSU recorded."""
        driver, company, stamp = self._driver, self._company_id, self._stamp
        packed = pack_xml(doc.xml, doc.xml_gzip)
        product = doc.product.value
        if doc.access_key is not None:
            found = driver.execute(_DOCUMENT_BY_KEY, (packed.sha256, company, product, doc.access_key)).fetchone()
        else:  # known without a key: by its NSU
            found = driver.execute(_DOCUMENT_BY_NSU, (packed.sha256, company, product, doc.nsu)).fetchone()
        created = found is None
        parties: tuple[Party, ...] = ()
        if found is None:
            document_id, version_id = self._take_id(_DOCUMENT), self._take_id(_VERSION)
            _INSERT_DOCUMENT.run(driver, (document_id, company, product, *_metadata(doc), 1, stamp, stamp))
            new_version = promote = True
            parties = parties_of(doc)
        else:
            document_id, current_id, current_kind, version_id = found
            new_version = version_id is None
            promote = False
            if version_id is None:
                promote = current_id is None or (
                    doc.parse_error is None and KIND_RANK[doc.kind] >= KIND_RANK[DocumentKind(current_kind)]
                )
                if promote and current_id is not None:
                    driver.execute(_NOT_CURRENT, (current_id,))  # one current version at a time
                version_id = self._take_id(_VERSION)
                if promote:
                    meta = dict(zip(_META, _metadata(doc), strict=True))
                    driver.execute(_PROMOTE, (*(meta[c] for c in _PROMOTE_META), doc.nsu, stamp, document_id))
                    driver.execute(_DELETE_PARTIES, (document_id,))
                    parties = parties_of(doc)
                else:
                    driver.execute(_COUNT_VERSION, (stamp, document_id))
        if not new_version and doc.nsu is not None:
            driver.execute(_FILL_VERSION_NSU, (doc.nsu, version_id))
            if found is not None and found[1] == version_id:  # those bytes are the current version
                driver.execute(_FILL_DOCUMENT_NSU, (doc.nsu, document_id))
        if new_version:
            _INSERT_VERSION.run(
                driver,
                (version_id, document_id, doc.kind.value, doc.nsu, doc.schema, packed.blob, packed.sha256, packed.size,
                 promote, doc.parse_error, stamp),
            )  # fmt: skip
            _INSERT_PARTY.run_many(driver, [(document_id, p.role.value, p.tax_id, p.name) for p in parties])
        nsu_new = doc.nsu is not None and self._record_item(doc.product, doc.nsu, doc.schema, document_id, None)
        return StoredDocument(document_id, version_id, created, new_version, promote, nsu_new)

    def known_event(self, event: EventInput) -> StoredEvent:
        """``store_event_in`` for an event whose identity or NSU is already stored: a fuller form
        (procEvento over resEvento) replaces the row; the same bytes or a poorer form change nothing."""
        driver, company = self._driver, self._company_id
        found = driver.execute(_EVENT_BY_IDENTITY, (company, event.product.value, *identity(event))).fetchone()
        created = found is None
        replaced = False
        if found is None:
            event_id = self._take_id(_EVENT)
            _INSERT_EVENT.run(driver, self._event_row(event_id, event))
        else:
            event_id, kind, sha256 = found
            data = _event_data(event)
            replaced = data[-2] != sha256 and KIND_RANK[event.kind] >= KIND_RANK[DocumentKind(kind)]
            if replaced:
                driver.execute(_REPLACE_EVENT, (*data, self._stamp, event_id))
        nsu_new = event.nsu is not None and self._record_item(event.product, event.nsu, event.schema, None, event_id)
        return StoredEvent(event_id=event_id, created=created, replaced=replaced, nsu_was_new=nsu_new)

    def _record_item(
        self, product: Product, nsu: int, schema: str | None, document_id: int | None, event_id: int | None
    ) -> bool:
        """``record_item_in``: True when the NSU is new; a known one gets its missing links filled
        (never overwritten), or is healed when it pointed at a quarantined copy."""
        driver, company = self._driver, self._company_id
        found = driver.execute(_ITEM, (company, product.value, nsu)).fetchone()
        if found is None:
            _INSERT_ITEM.run(driver, (company, product.value, nsu, schema, document_id, event_id, self._stamp))
            return True
        item_id, linked_document, linked_event = found
        if linked_document is not None and (document_id, event_id) != (linked_document, None):
            stale = driver.execute(_STALE, (linked_document,)).fetchone()
            if stale is not None and stale[0] and stale[1] is None:
                # A readable copy of an NSU that arrived corrupt (a point query fetched it again):
                # the NSU points at it now and the keyless quarantined copy goes, with its versions
                # and parties (ON DELETE CASCADE).
                driver.execute(_RELINK_ITEM, (document_id, event_id, schema, item_id))
                driver.execute(_DELETE_DOCUMENT, (linked_document,))
                self._next_ids.clear()  # SQLite may hand the freed ids out again
                linked_document, linked_event = document_id, event_id
        link = (
            document_id if linked_document is None and document_id is not None else linked_document,
            event_id if linked_event is None and event_id is not None else linked_event,
        )
        if link != (linked_document, linked_event):
            driver.execute(_LINK_ITEM, (*link, item_id))
        return False


def _metadata(doc: DocumentInput) -> tuple[Any, ...]:
    """The values of ``_META`` for ``doc``, in the driver's form."""
    issued = doc.issued_at
    return (
        doc.kind.value, doc.access_key, doc.nsu, doc.model, doc.serie, doc.number, doc.emitter_id,
        doc.emitter_name, doc.recipient_id, doc.recipient_name, doc.total_cents,
        None if issued is None else utc_text(issued), offset_minutes(issued), doc.direction.value,
        doc.status.value, doc.situation, doc.parse_error is not None, doc.parse_error,
    )  # fmt: skip


def _event_data(event: EventInput) -> tuple[Any, ...]:
    """The values of ``_EVENT_DATA`` for ``event``, in the driver's form."""
    packed = pack_xml(event.xml, event.xml_gzip)
    return (
        event.kind.value, event.access_key, event.tp_evento, event.n_seq_evento, event.nsu, event.schema,
        event.description, event.protocol, utc_text(event.event_at), event.cstat, event.author_id,
        packed.blob, packed.sha256, packed.size,
    )  # fmt: skip


def store_lot_in(
    session: Session, company_id: int, items: Sequence[DocumentInput | EventInput], now: datetime
) -> list[StoredDocument | StoredEvent]:
    """Store documents and events inside an open write session; results in the items' order."""
    return store_lot_on(session.connection(), company_id, items, now) if items else []


def store_lot_on(
    connection: Connection | Any, company_id: int, items: Sequence[DocumentInput | EventInput], now: datetime
) -> list[StoredDocument | StoredEvent]:
    """``store_lot_in`` on the connection of an open write transaction: a SQLAlchemy connection or
    the sqlite3 connection of a ``Database.write_driver`` unit."""
    for item in items:  # every refusal before the first write, in the order one-by-one would raise
        if isinstance(item, EventInput):
            validate_event(item)
        else:
            validate_document(item)
    if not items:
        return []
    driver = as_driver(connection)
    writer = _LotWriter(driver, company_id, now)
    writer.look_up(items)
    results: list[StoredDocument | StoredEvent] = [
        writer.event(item) if isinstance(item, EventInput) else writer.document(item) for item in items
    ]
    writer.flush()
    save_reform_in(driver, company_id, items, results)  # app.store.reform: IBS/CBS, NFref
    return results


def mark_cancelled_in(
    session: Session | Connection | Any,
    company_id: int,
    product: Product,
    keys: Iterable[str],
    now: datetime | None = None,
) -> int:
    """Documents of these keys become CANCELLED (a registered cancellation event arrived), those
    not cancelled already; returns how many changed. ``now``, when given, becomes their
    ``updated_at``."""
    wanted = sorted(set(keys))
    if not wanted:
        return 0
    driver = as_driver(session.connection() if isinstance(session, Session) else session)
    stamp = "" if now is None else ", updated_at = ?"
    head: tuple[Any, ...] = (_CANCELLED,) if now is None else (_CANCELLED, utc_text(now))
    changed = 0
    for start in range(0, len(wanted), IN_CHUNK):
        chunk = wanted[start : start + IN_CHUNK]
        sql = _MARK_CANCELLED.format(stamp=stamp, keys=placeholders(len(chunk)))
        changed += driver.execute(sql, (*head, company_id, product.value, _CANCELLED, *chunk)).rowcount
    return changed
