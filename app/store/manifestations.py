"""Manifestation requests (NF-e recipient 2102xx, NFS-e taker 2032xx) and their results.

The unique (company, product, key, tpEvento, nSeqEvento) is the guard against sending the same
event twice; asking again returns the existing request.

The dispatcher's statements (the due requests read at every scheduler step, the reads of one
dispatch pass, the claim before a send and the settle after it) are prepared once and run on the
driver: an ORM session per read or write cost more than SQLite's own work.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import fields
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Integer, String, bindparam, func, literal_column, select, update
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from app.store.db import Database
from app.store.dialect import json_values
from app.store.errors import InvalidRecord
from app.store.models import KEY_LEN, GovernmentCallRow, ManifestationRow
from app.store.prepared import Prepared
from app.store.records import Manifestation, ManifestationStatus, Product
from app.store.types import compress, decompress, utc_text

_FIELDS = tuple(f.name for f in fields(Manifestation))
_SELECT = select(*(getattr(ManifestationRow, name) for name in _FIELDS))


# Read at every step of the scheduler loop: prepared once, for every product and per product (each
# product's dispatcher reads only its own requests: an NFS-e taker event is no NF-e event).
def _per_product(build: Callable[[list[Any]], Any]) -> dict[bool, Prepared]:
    return {False: Prepared(build([])), True: Prepared(build([ManifestationRow.product == bindparam("product")]))}


_NEXT_DUE = _per_product(
    lambda extra: select(func.min(ManifestationRow.not_before)).where(
        ManifestationRow.status == bindparam("status"), *extra
    )
)
# ORDER BY follows ix_manifestations_due (status, not_before, then the rowid): no sort.
_DUE = _per_product(
    lambda extra: _SELECT.where(
        ManifestationRow.status == bindparam("status"), ManifestationRow.not_before <= bindparam("now"), *extra
    ).order_by(ManifestationRow.not_before, ManifestationRow.id)
)
_DUE_OF_COMPANY = _per_product(
    lambda extra: _SELECT.where(
        ManifestationRow.status == bindparam("status"),
        ManifestationRow.not_before <= bindparam("now"),
        ManifestationRow.company_id == bindparam("company_id"),
        *extra,
    ).order_by(ManifestationRow.not_before, ManifestationRow.id)
)
_BY_ID = Prepared(_SELECT.where(ManifestationRow.id == bindparam("id")))
_ONE_EVENT = Prepared(
    _SELECT.where(
        ManifestationRow.company_id == bindparam("company_id"),
        ManifestationRow.product == bindparam("product"),
        ManifestationRow.access_key == bindparam("access_key"),
        ManifestationRow.tp_evento == bindparam("tp_evento"),
        ManifestationRow.n_seq_evento == bindparam("n_seq_evento"),
    )
)
_FOR_KEY = Prepared(
    _SELECT.where(
        ManifestationRow.company_id == bindparam("company_id"),
        ManifestationRow.product == bindparam("product"),
        ManifestationRow.access_key == bindparam("access_key"),
    ).order_by(ManifestationRow.id)
)
# Every company x every key of a dispatch pass, through the unique index; callers keep their pairs.
_FOR_KEYS = Prepared(
    _SELECT.where(
        ManifestationRow.company_id.in_(json_values("companies", Integer())),
        ManifestationRow.product == bindparam("product"),
        ManifestationRow.access_key.in_(json_values("keys", String())),
    ).order_by(ManifestationRow.id)
)
_EVENT_CALLS = Prepared(
    select(GovernmentCallRow.operation, GovernmentCallRow.at, GovernmentCallRow.cstat)
    .where(
        GovernmentCallRow.service == bindparam("service"),
        GovernmentCallRow.at >= bindparam("since"),
        GovernmentCallRow.operation.in_(json_values("operations", String())),
    )
    .order_by(GovernmentCallRow.at, GovernmentCallRow.id)
)
# Queued by the engines for every new resNFe (automatic Ciência) inside the lot's unit of work.
_REQUEST_COLUMNS = (
    "company_id", "product", "access_key", "tp_evento", "n_seq_evento", "justification", "automatic",
    "status", "not_before", "attempts", "created_at", "updated_at",
)  # fmt: skip
_REQUEST = Prepared(
    insert(ManifestationRow).values({name: bindparam(name) for name in _REQUEST_COLUMNS}).on_conflict_do_nothing()
)
# The claim before a send: only a request still pending is sent (two passes never send one twice).
_CLAIM = Prepared(
    update(ManifestationRow)
    .where(ManifestationRow.id == bindparam("id"), ManifestationRow.status == bindparam("pending"))
    .values(
        status=bindparam("sent"),
        attempts=ManifestationRow.attempts + literal_column("1"),
        sent_at=bindparam("now"),
        updated_at=bindparam("now"),
    )
)
_SETTLE = Prepared(
    update(ManifestationRow)
    .where(ManifestationRow.id == bindparam("id"))
    .values(
        status=bindparam("status"),
        cstat=bindparam("cstat"),
        x_motivo=bindparam("x_motivo"),
        protocol=bindparam("protocol"),
        result_xml_zlib=func.coalesce(bindparam("result_xml_zlib"), ManifestationRow.result_xml_zlib),
        not_before=func.coalesce(bindparam("retry_at"), ManifestationRow.not_before),
        updated_at=bindparam("now"),
    )
)


class UnknownManifestation(InvalidRecord, LookupError):
    """No manifestation with that id."""


def _manifestation(row: tuple[Any, ...]) -> Manifestation:
    values = dict(zip(_FIELDS, row, strict=True))
    values["product"] = Product(values["product"])
    values["status"] = ManifestationStatus(values["status"])
    return Manifestation(**values)


def request_in(
    connection: Connection | Session,
    company_id: int,
    product: Product,
    access_key: str,
    tp_evento: str,
    now: datetime,
    *,
    not_before: datetime,
    n_seq_evento: int = 1,
    justification: str | None = None,
    automatic: bool = False,
) -> bool:
    """Queue a manifestation inside an open write transaction; False when the same event was queued."""
    if not access_key or len(access_key) > KEY_LEN:
        raise InvalidRecord(f"Chave de acesso inválida: {access_key!r}.")
    if not (tp_evento.isdigit() and len(tp_evento) == 6):
        raise InvalidRecord(f"Tipo de evento inválido: {tp_evento!r} (esperados 6 dígitos).")
    if isinstance(connection, Session):
        connection = connection.connection()
    stamp = utc_text(now)
    values = {
        "company_id": company_id,
        "product": product.value,
        "access_key": access_key,
        "tp_evento": tp_evento,
        "n_seq_evento": n_seq_evento,
        "justification": justification,
        "automatic": automatic,
        "status": ManifestationStatus.PENDING.value,
        "not_before": utc_text(not_before),
        "attempts": 0,
        "created_at": stamp,
        "updated_at": stamp,
    }
    return _REQUEST.changed(connection, values) == 1


def settle_in(
    connection: Connection,
    manifestation_id: int,
    status: ManifestationStatus,
    now: datetime,
    *,
    cstat: str | None,
    x_motivo: str | None,
    protocol: str | None = None,
    result_xml: bytes | None = None,
    retry_at: datetime | None = None,
) -> None:
    """A sent request's answer recorded inside an open write transaction (``Unit.settle_manifestation``)."""
    if status is ManifestationStatus.PENDING and retry_at is None:
        raise InvalidRecord("Reenvio de manifestação sem horário da nova tentativa.")
    values = {
        "id": manifestation_id,
        "status": status.value,
        "cstat": cstat,
        "x_motivo": x_motivo,
        "protocol": protocol,
        "result_xml_zlib": compress(result_xml) if result_xml is not None else None,
        "retry_at": utc_text(retry_at),
        "now": utc_text(now),
    }
    if not _SETTLE.changed(connection, values):
        raise UnknownManifestation(f"Manifestação não encontrada (id {manifestation_id}).")


class ManifestationRepository:
    """Request, dispatch and settle manifestations."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def request(
        self,
        company_id: int,
        product: Product,
        access_key: str,
        tp_evento: str,
        *,
        not_before: datetime,
        n_seq_evento: int = 1,
        justification: str | None = None,
        automatic: bool = False,
    ) -> Manifestation:
        """Queue a manifestation, or return the one already queued for the same event."""
        with self._db.write_connection() as connection:
            request_in(
                connection,
                company_id,
                product,
                access_key,
                tp_evento,
                self._db.clock.now(),
                not_before=not_before,
                n_seq_evento=n_seq_evento,
                justification=justification,
                automatic=automatic,
            )
            params = {
                "company_id": company_id,
                "product": product.value,
                "access_key": access_key,
                "tp_evento": tp_evento,
                "n_seq_evento": n_seq_evento,
            }
            row = _ONE_EVENT.first(connection, params)
            assert row is not None
            return _manifestation(row)

    def next_not_before(self, product: Product | None = None) -> datetime | None:
        """When the earliest pending request (of ``product``) becomes due (the scheduler's wake-up),
        in one indexed read."""
        params = {"status": ManifestationStatus.PENDING.value, "product": product.value if product else None}
        with self._db.driver_connection() as connection:
            row = _NEXT_DUE[product is not None].first_on_driver(connection, params)
        return row[0] if row is not None else None

    def due(
        self, now: datetime, limit: int = 50, *, company_id: int | None = None, product: Product | None = None
    ) -> list[Manifestation]:
        """Pending requests (of ``product``) whose wait (e.g. the automatic Ciência delay) is over,
        oldest first."""
        params = {
            "status": ManifestationStatus.PENDING.value,
            "now": utc_text(now),
            "company_id": company_id,
            "product": product.value if product else None,
        }
        statement = (_DUE if company_id is None else _DUE_OF_COMPANY)[product is not None]
        with self._db.driver_connection() as connection:
            rows = statement.rows_on_driver(connection, params, limit)
        return [_manifestation(r) for r in rows]

    def for_key(self, company_id: int, product: Product, access_key: str) -> list[Manifestation]:
        params = {"company_id": company_id, "product": product.value, "access_key": access_key}
        with self._db.driver_connection() as connection:
            return [_manifestation(r) for r in _FOR_KEY.rows_on_driver(connection, params)]

    def for_keys(
        self, product: Product, pairs: Iterable[tuple[int, str]]
    ) -> dict[tuple[int, str], list[Manifestation]]:
        """``for_key`` of many (company id, key) pairs in one read; every pair asked is in the answer."""
        wanted = set(pairs)
        found: dict[tuple[int, str], list[Manifestation]] = {pair: [] for pair in wanted}
        if not wanted:
            return found
        params = {
            "companies": json.dumps(sorted({company for company, _key in wanted})),
            "product": product.value,
            "keys": json.dumps(sorted({key for _company, key in wanted})),
        }
        with self._db.driver_connection() as connection:
            rows = _FOR_KEYS.rows_on_driver(connection, params)
        for row in rows:
            m = _manifestation(row)
            if (m.company_id, m.access_key) in found:
                found[(m.company_id, m.access_key)].append(m)
        return found

    def event_calls(
        self, service: str, operations: Iterable[str], since: datetime
    ) -> dict[str, list[tuple[datetime, str | None]]]:
        """(instant, cStat) of the logged calls of each event Id since ``since``, oldest first: the
        NT 2018.002 history of every request of a dispatch pass in one read."""
        found: dict[str, list[tuple[datetime, str | None]]] = {op: [] for op in operations}
        if not found:
            return found
        params = {"service": service, "since": utc_text(since), "operations": json.dumps(sorted(found))}
        with self._db.driver_connection() as connection:
            for operation, at, cstat in _EVENT_CALLS.rows_on_driver(connection, params):
                found[operation].append((at, cstat))
        return found

    def claim(self, manifestation_id: int) -> bool:
        """Mark a pending request SENT (attempts + 1) in its own committed transaction, BEFORE the
        call: a crash then leaves it 'sent' for ``reclaim_sent``. False when it is no longer pending."""
        now = utc_text(self._db.clock.now())
        params = {
            "id": manifestation_id,
            "pending": ManifestationStatus.PENDING.value,
            "sent": ManifestationStatus.SENT.value,
            "now": now,
        }
        # One UPDATE in the driver's autocommit is a whole transaction (committed when it returns),
        # without the BEGIN IMMEDIATE / COMMIT round trips of a write connection.
        with self._db.driver_connection() as connection:
            return _CLAIM.changed(connection, params) == 1

    def reclaim_sent(self) -> int:
        """After a crash: requests left 'sent' had no answer recorded; send them again (a copy that
        did arrive comes back as 573, which counts as done). Call only while holding the data folder."""
        now = self._db.clock.now()
        with self._db.session() as s:
            rows = list(
                s.scalars(select(ManifestationRow).where(ManifestationRow.status == ManifestationStatus.SENT.value))
            )
            for row in rows:
                row.status = ManifestationStatus.PENDING.value
                row.not_before = now
                row.updated_at = now
            return len(rows)

    def reopen(self, manifestation_id: int, not_before: datetime, justification: str | None = None) -> Manifestation:
        """A user asks again for a rejected event: back to pending (the caller checked NT 2018.002)."""
        with self._db.session() as s:
            row = self._row(s, manifestation_id)
            if row.status == ManifestationStatus.REJECTED.value:
                row.status = ManifestationStatus.PENDING.value
                row.not_before = not_before
                row.justification = justification
                row.updated_at = self._db.clock.now()
                s.flush()
            return self._get(s.connection(), manifestation_id)

    def result_xml(self, manifestation_id: int) -> bytes | None:
        """The procEventoNFe (or NFS-e evento) returned for an accepted manifestation."""
        with self._db.reader() as s:
            blob = self._row(s, manifestation_id).result_xml_zlib
        return decompress(blob) if blob is not None else None

    @staticmethod
    def _get(connection: Connection, manifestation_id: int) -> Manifestation:
        row = _BY_ID.first(connection, {"id": manifestation_id})
        if row is None:
            raise UnknownManifestation(f"Manifestação não encontrada (id {manifestation_id}).")
        return _manifestation(row)

    @staticmethod
    def _row(session: Session, manifestation_id: int) -> ManifestationRow:
        row = session.get(ManifestationRow, manifestation_id)
        if row is None:
            raise UnknownManifestation(f"Manifestação não encontrada (id {manifestation_id}).")
        return row
