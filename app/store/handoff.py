"""The ERP hand-off: one target per company, and the delivery log (revision 0007).

Each captured document or event becomes one delivery row, unique per company and idempotency
key, queued with the target's watermark in one transaction; a row is ``delivered`` only once the
receiver said 2xx. The signing secret is in the keyring (app.export.handoff), never here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import or_, select, update

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import DocumentVersionRow, HandoffDeliveryRow, HandoffTargetRow
from app.store.records import DocumentKind
from app.store.types import unpack_xml

PENDING = "pending"
DELIVERED = "delivered"


class UnknownTarget(InvalidRecord, LookupError):
    """The company has no hand-off configured."""


@dataclass(frozen=True, slots=True)
class HandoffTarget:
    company_id: int
    url: str
    active: bool
    watermark: int


@dataclass(frozen=True, slots=True)
class NewDelivery:
    idempotency_key: str
    item_type: str
    item_id: int
    access_key: str | None
    nsu: int | None
    event_type: str
    action: str


@dataclass(frozen=True, slots=True)
class Delivery:
    id: int
    company_id: int
    idempotency_key: str
    item_type: str
    item_id: int
    access_key: str | None
    nsu: int | None
    event_type: str
    action: str
    status: str
    attempts: int
    next_attempt_at: datetime
    last_http_status: int | None
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


def _delivery(row: HandoffDeliveryRow) -> Delivery:
    return Delivery(
        row.id,
        row.company_id,
        row.idempotency_key,
        row.item_type,
        row.item_id,
        row.access_key,
        row.nsu,
        row.event_type,
        row.action,
        row.status,
        row.attempts,
        row.next_attempt_at,
        row.last_http_status,
        row.last_error,
        row.created_at,
        row.delivered_at,
    )


def _target(row: HandoffTargetRow) -> HandoffTarget:
    return HandoffTarget(row.company_id, row.url, row.active, row.watermark)


class HandoffRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    # ------------------------------------------------------------------ targets

    def set_target(self, company_id: int, url: str, *, watermark: int, active: bool = True) -> HandoffTarget:
        """Create or change a company's target; a new one starts at ``watermark`` (what arrives
        from now on: the history goes by "reenviar" by period)."""
        if not url.startswith(("http://", "https://")):
            raise InvalidRecord(f"Endereço inválido para a integração: {url!r} (use http:// ou https://).")
        now = self._db.clock.now()
        with self._db.session() as s:
            row = s.scalar(select(HandoffTargetRow).where(HandoffTargetRow.company_id == company_id))
            if row is None:
                row = HandoffTargetRow(company_id=company_id, watermark=watermark, created_at=now)
                s.add(row)
            row.url, row.active, row.updated_at = url, active, now
            s.flush()
            return _target(row)

    def target(self, company_id: int) -> HandoffTarget | None:
        with self._db.reader() as s:
            row = s.scalar(select(HandoffTargetRow).where(HandoffTargetRow.company_id == company_id))
            return _target(row) if row is not None else None

    def targets(self, *, active_only: bool = True) -> list[HandoffTarget]:
        query = select(HandoffTargetRow).order_by(HandoffTargetRow.company_id)
        if active_only:
            query = query.where(HandoffTargetRow.active.is_(True))
        with self._db.reader() as s:
            return [_target(r) for r in s.scalars(query)]

    def remove_target(self, company_id: int) -> None:
        with self._db.session() as s:
            row = s.scalar(select(HandoffTargetRow).where(HandoffTargetRow.company_id == company_id))
            if row is None:
                raise UnknownTarget("Esta empresa não tem integração configurada.")
            s.delete(row)

    # ------------------------------------------------------------------ the log

    def enqueue(self, company_id: int, deliveries: Sequence[NewDelivery], watermark: int) -> int:
        """Add the deliveries whose idempotency key is new, and move the watermark, together."""
        now = self._db.clock.now()
        added = 0
        with self._db.session() as s:
            keys = [d.idempotency_key for d in deliveries]
            known = (
                set(
                    s.scalars(
                        select(HandoffDeliveryRow.idempotency_key).where(
                            HandoffDeliveryRow.company_id == company_id, HandoffDeliveryRow.idempotency_key.in_(keys)
                        )
                    )
                )
                if keys
                else set()
            )
            for d in deliveries:
                if d.idempotency_key in known:
                    continue
                known.add(d.idempotency_key)
                s.add(
                    HandoffDeliveryRow(
                        company_id=company_id,
                        idempotency_key=d.idempotency_key,
                        item_type=d.item_type,
                        item_id=d.item_id,
                        access_key=d.access_key,
                        nsu=d.nsu,
                        event_type=d.event_type,
                        action=d.action,
                        status=PENDING,
                        attempts=0,
                        next_attempt_at=now,
                        created_at=now,
                    )
                )
                added += 1
            s.execute(
                update(HandoffTargetRow)
                .where(HandoffTargetRow.company_id == company_id, HandoffTargetRow.watermark < watermark)
                .values(watermark=watermark)
            )
        return added

    def due(self, now: datetime, limit: int = 100, *, company_ids: Sequence[int] | None = None) -> list[Delivery]:
        """Pending deliveries whose time has come, of ``company_ids`` (None: every company)."""
        query = (
            select(HandoffDeliveryRow)
            .where(HandoffDeliveryRow.status == PENDING, HandoffDeliveryRow.next_attempt_at <= now)
            .order_by(HandoffDeliveryRow.next_attempt_at, HandoffDeliveryRow.id)
            .limit(limit)
        )
        if company_ids is not None:
            query = query.where(HandoffDeliveryRow.company_id.in_(list(company_ids)))
        with self._db.reader() as s:
            return [_delivery(r) for r in s.scalars(query)]

    def next_attempt_at(self) -> datetime | None:
        with self._db.reader() as s:
            return s.scalar(
                select(HandoffDeliveryRow.next_attempt_at)
                .where(HandoffDeliveryRow.status == PENDING)
                .order_by(HandoffDeliveryRow.next_attempt_at)
                .limit(1)
            )

    def delivered(self, delivery_id: int, http_status: int) -> None:
        now = self._db.clock.now()
        with self._db.session() as s:
            s.execute(
                update(HandoffDeliveryRow)
                .where(HandoffDeliveryRow.id == delivery_id)
                .values(
                    status=DELIVERED,
                    attempts=HandoffDeliveryRow.attempts + 1,
                    last_http_status=http_status,
                    last_error=None,
                    delivered_at=now,
                )
            )

    def failed(self, delivery_id: int, http_status: int | None, error: str, retry_at: datetime) -> None:
        with self._db.session() as s:
            s.execute(
                update(HandoffDeliveryRow)
                .where(HandoffDeliveryRow.id == delivery_id)
                .values(
                    attempts=HandoffDeliveryRow.attempts + 1,
                    last_http_status=http_status,
                    last_error=error,
                    next_attempt_at=retry_at,
                )
            )

    def resend(
        self,
        company_id: int,
        *,
        access_keys: Sequence[str] = (),
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> int:
        """ "Reenviar": deliveries of these keys, or first queued in [since, until), go again now."""
        if not access_keys and since is None and until is None:
            raise InvalidRecord("Informe as chaves ou o período a reenviar.")
        now = self._db.clock.now()
        query = update(HandoffDeliveryRow).where(HandoffDeliveryRow.company_id == company_id)
        if access_keys:
            query = query.where(HandoffDeliveryRow.access_key.in_(list(access_keys)))
        if since is not None:
            query = query.where(HandoffDeliveryRow.created_at >= since)
        if until is not None:
            query = query.where(HandoffDeliveryRow.created_at < until)
        with self._db.session() as s:
            result = s.execute(query.values(status=PENDING, next_attempt_at=now, delivered_at=None))
            return int(getattr(result, "rowcount", 0) or 0)

    def log(self, company_id: int | None = None, limit: int = 100) -> list[Delivery]:
        """The newest deliveries first (the delivery log the user reads)."""
        query = select(HandoffDeliveryRow).order_by(HandoffDeliveryRow.id.desc()).limit(limit)
        if company_id is not None:
            query = query.where(HandoffDeliveryRow.company_id == company_id)
        with self._db.reader() as s:
            return [_delivery(r) for r in s.scalars(query)]

    def version(self, document_id: int, nsu: int | None) -> tuple[DocumentKind, bytes] | None:
        """The layout and XML of the document as it arrived with ``nsu`` (a resumo stays a resumo
        after its complete NF-e came), else its current version's."""
        with self._db.reader() as s:
            found = s.execute(
                select(DocumentVersionRow.kind, DocumentVersionRow.xml_zlib, DocumentVersionRow.xml_sha256)
                .where(
                    DocumentVersionRow.document_id == document_id,
                    or_(DocumentVersionRow.nsu == nsu, DocumentVersionRow.is_current.is_(True)),
                )
                .order_by(DocumentVersionRow.is_current)  # the NSU's own version (False) first
                .limit(1)
            ).first()
        return None if found is None else (DocumentKind(found[0]), unpack_xml(found[1], found[2]))
