"""Events (cancellation, CC-e, manifestations, NFS-e events) linked to documents by key."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.store.db import Database
from app.store.driver import as_driver
from app.store.errors import InvalidRecord
from app.store.items import IN_CHUNK, check_nsu, record_item_in
from app.store.models import KEY_LEN, EventRow
from app.store.prepared import placeholders
from app.store.records import KIND_RANK, DocumentKind, EventInput, EventRecord, Product, StoredEvent
from app.store.types import pack_xml, unpack_xml

EventIdentity = tuple[str, str, int]  # (access_key, tp_evento, n_seq_evento) within company and product


_KEYS_WITH_EVENT = (
    "SELECT DISTINCT access_key FROM events WHERE company_id = ? AND product = ? "
    "AND tp_evento IN ({types}) AND access_key IN ({keys})"
)


class UnknownEvent(InvalidRecord, LookupError):
    """No event with that id."""


def _record(row: EventRow) -> EventRecord:
    return EventRecord(
        id=row.id,
        company_id=row.company_id,
        product=Product(row.product),
        kind=DocumentKind(row.kind),
        access_key=row.access_key,
        tp_evento=row.tp_evento,
        n_seq_evento=row.n_seq_evento,
        nsu=row.nsu,
        description=row.description,
        protocol=row.protocol,
        event_at=row.event_at,
        cstat=row.cstat,
        author_id=row.author_id,
        sha256=row.xml_sha256,
        created_at=row.created_at,
    )


def _validate(event: EventInput) -> None:
    if not event.access_key or len(event.access_key) > KEY_LEN:
        raise InvalidRecord(f"Evento com chave de acesso inválida: {event.access_key!r}.")
    if not (event.tp_evento.isdigit() and len(event.tp_evento) == 6):
        raise InvalidRecord(f"Tipo de evento inválido: {event.tp_evento!r} (esperados 6 dígitos).")
    if event.event_at is not None and event.event_at.utcoffset() is None:
        raise InvalidRecord("Data do evento sem fuso horário.")


def validate_event(event: EventInput) -> None:
    """Every refusal ``store_event_in`` can raise, before anything is written."""
    _validate(event)
    if event.nsu is not None:
        check_nsu(event.nsu)


def identity(event: EventInput) -> EventIdentity:
    return (event.access_key, event.tp_evento, event.n_seq_evento)


def store_event_in(session: Session, company_id: int, event: EventInput, now: datetime) -> StoredEvent:
    """Upsert one event inside an open write session; a procEvento replaces its resEvento."""
    _validate(event)
    packed = pack_xml(event.xml, event.xml_gzip)
    row = session.scalar(
        select(EventRow).where(
            EventRow.company_id == company_id,
            EventRow.product == event.product.value,
            EventRow.access_key == event.access_key,
            EventRow.tp_evento == event.tp_evento,
            EventRow.n_seq_evento == event.n_seq_evento,
        )
    )
    created = row is None
    replaced = False
    if row is None:
        row = EventRow(company_id=company_id, product=event.product.value, created_at=now)
        session.add(row)
    else:
        # Same bytes again, or a poorer form (resEvento after procEvento): keep what we have.
        replaced = row.xml_sha256 != packed.sha256 and (KIND_RANK[event.kind] >= KIND_RANK[DocumentKind(row.kind)])
    if created or replaced:
        row.kind = event.kind.value
        row.access_key = event.access_key
        row.tp_evento = event.tp_evento
        row.n_seq_evento = event.n_seq_evento
        row.nsu = event.nsu
        row.schema = event.schema
        row.description = event.description
        row.protocol = event.protocol
        row.event_at = event.event_at
        row.cstat = event.cstat
        row.author_id = event.author_id
        row.xml_zlib = packed.blob
        row.xml_sha256 = packed.sha256
        row.xml_size = packed.size
        row.updated_at = now
    session.flush()
    nsu_new = False
    if event.nsu is not None:
        nsu_new = record_item_in(session, company_id, event.product, event.nsu, event.schema, event_id=row.id, now=now)
    return StoredEvent(event_id=row.id, created=created, replaced=replaced, nsu_was_new=nsu_new)


def _keys_with_event(
    driver: Any, company_id: int, product: Product, keys: Sequence[str], types: Sequence[str]
) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(keys), IN_CHUNK):
        chunk = keys[start : start + IN_CHUNK]
        sql = _KEYS_WITH_EVENT.format(types=placeholders(len(types)), keys=placeholders(len(chunk)))
        found.update(key for (key,) in driver.execute(sql, (company_id, product.value, *types, *chunk)))
    return found


def keys_with_event_in(
    session: Session | Any, company_id: int, product: Product, access_keys: Iterable[str], tp_eventos: Iterable[str]
) -> set[str]:
    """``EventRepository.keys_with_event`` inside an open session (its snapshot, its writes)."""
    keys, types = sorted(set(access_keys)), sorted(set(tp_eventos))
    if not keys or not types:
        return set()
    connection = session.connection() if isinstance(session, Session) else session
    return _keys_with_event(as_driver(connection), company_id, product, keys, types)


class EventRepository:
    """Store events and read them back by document key."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def store(self, company_id: int, event: EventInput) -> StoredEvent:
        with self._db.session() as s:
            return store_event_in(s, company_id, event, self._db.clock.now())

    def keys_with_event(
        self, company_id: int, product: Product, access_keys: Iterable[str], tp_eventos: Iterable[str]
    ) -> set[str]:
        """Which of ``access_keys`` have an event of one of ``tp_eventos`` (a lot's cancellations
        in one read rather than one per document). No keys or no types: no read at all; else one
        statement on a pooled driver connection (read after every lot with notes)."""
        keys, types = sorted(set(access_keys)), sorted(set(tp_eventos))
        if not keys or not types:
            return set()
        with self._db.driver_connection() as driver:
            if len(keys) <= IN_CHUNK:  # one statement is its own snapshot
                return _keys_with_event(driver, company_id, product, keys, types)
            driver.execute("BEGIN")  # several statements: one snapshot for all of them
            try:
                return _keys_with_event(driver, company_id, product, keys, types)
            finally:
                driver.execute("ROLLBACK")

    def for_key(self, company_id: int, product: Product, access_key: str) -> list[EventRecord]:
        """The events of one document, oldest first."""
        with self._db.reader() as s:
            rows = s.scalars(
                select(EventRow)
                .where(
                    EventRow.company_id == company_id,
                    EventRow.product == product.value,
                    EventRow.access_key == access_key,
                )
                .order_by(EventRow.event_at, EventRow.id)
            )
            return [_record(r) for r in rows]

    def get(self, event_id: int) -> EventRecord:
        with self._db.reader() as s:
            row = s.get(EventRow, event_id)
            if row is None:
                raise UnknownEvent(f"Evento não encontrado (id {event_id}).")
            return _record(row)

    def get_xml(self, event_id: int) -> bytes:
        with self._db.reader() as s:
            found = s.execute(select(EventRow.xml_zlib, EventRow.xml_sha256).where(EventRow.id == event_id)).first()
        if found is None:
            raise UnknownEvent(f"Evento não encontrado (id {event_id}).")
        return unpack_xml(found[0], found[1])
