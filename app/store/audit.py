"""The audit trail: every government call, the archived requests and responses, retention.

``prune`` deletes only audit rows (archived exchanges, the call log, finished runs) older than
the retention period; documents, versions and events are never touched. It deletes in small
batches, each its own transaction, so the capture threads never wait long for the write lock.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import Connection, bindparam, delete, insert, select
from sqlalchemy.orm import InstrumentedAttribute

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import ArchivedExchangeRow, GovernmentCallRow, RunRow
from app.store.prepared import Prepared
from app.store.records import CallOutcome, CallRecord, Product, PruneResult, RunStatus
from app.store.types import compress, decompress, utc_text

# Every government call is logged, and most exchanges with documents archived: prepared once.
_CALL_COLUMNS: tuple[str, ...] = ("company_id", "product", "service", "operation", "outcome", "cstat")
_CALL_COLUMNS += ("http_status", "duration_ms", "at", "error_text", "run_id")
_INSERT_CALL = Prepared(insert(GovernmentCallRow).values({name: bindparam(name) for name in _CALL_COLUMNS}))
_ARCHIVE_COLUMNS = ("call_id", "company_id", "service", "request_zlib", "response_zlib", "created_at")
_INSERT_ARCHIVE = Prepared(insert(ArchivedExchangeRow).values({name: bindparam(name) for name in _ARCHIVE_COLUMNS}))

DEFAULT_RETENTION = timedelta(days=365)
_PRUNE_BATCH = 2_000


class UnknownArchive(InvalidRecord, LookupError):
    """No archived exchange with that id."""


def call_from_row(row: GovernmentCallRow) -> CallRecord:
    return CallRecord(
        id=row.id,
        service=row.service,
        outcome=CallOutcome(row.outcome),
        at=row.at,
        duration_ms=row.duration_ms,
        company_id=row.company_id,
        product=Product(row.product) if row.product else None,
        operation=row.operation,
        cstat=row.cstat,
        http_status=row.http_status,
        error_text=row.error_text,
        run_id=row.run_id,
    )


def log_call_in(connection: Connection, call: CallRecord) -> int:
    """``AuditRepository.log_call`` inside an open write transaction (a unit of work)."""
    if call.at.utcoffset() is None:
        raise InvalidRecord("Horário da chamada sem fuso horário.")
    values = {
        "company_id": call.company_id,
        "product": call.product.value if call.product else None,
        "service": call.service,
        "operation": call.operation,
        "outcome": call.outcome.value,
        "cstat": call.cstat,
        "http_status": call.http_status,
        "duration_ms": max(0, call.duration_ms),
        "at": utc_text(call.at),
        "error_text": call.error_text,
        "run_id": call.run_id,
    }
    return _INSERT_CALL.run(connection, values)


def archive_in(
    connection: Connection,
    service: str,
    *,
    request: bytes | None,
    response: bytes | None,
    company_id: int | None,
    call_id: int | None,
    now: datetime,
) -> int:
    """``AuditRepository.archive_exchange`` inside an open write transaction."""
    values = {
        "call_id": call_id,
        "company_id": company_id,
        "service": service,
        "request_zlib": compress(request) if request is not None else None,
        "response_zlib": compress(response) if response is not None else None,
        "created_at": utc_text(now),
    }
    return _INSERT_ARCHIVE.run(connection, values)


class AuditRepository:
    """Log calls, archive exchanges, prune old audit rows."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def log_call(self, call: CallRecord) -> int:
        """Record one government call; returns its id (to link the archived exchange)."""
        with self._db.write_driver() as driver:
            return log_call_in(driver, call)

    def recent_calls(self, limit: int = 100, company_id: int | None = None) -> list[CallRecord]:
        query = select(GovernmentCallRow).order_by(GovernmentCallRow.at.desc(), GovernmentCallRow.id.desc())
        if company_id is not None:
            query = query.where(GovernmentCallRow.company_id == company_id)
        with self._db.reader() as s:
            return [call_from_row(r) for r in s.scalars(query.limit(limit))]

    def calls_for(self, service: str, operation: str, since: datetime) -> list[CallRecord]:
        """The calls of one operation (e.g. one event Id) since ``since``, oldest first."""
        query = (
            select(GovernmentCallRow)
            .where(
                GovernmentCallRow.service == service,
                GovernmentCallRow.operation == operation,
                GovernmentCallRow.at >= since,
            )
            .order_by(GovernmentCallRow.at, GovernmentCallRow.id)
        )
        with self._db.reader() as s:
            return [call_from_row(r) for r in s.scalars(query)]

    def archive_exchange(
        self,
        service: str,
        *,
        request: bytes | None,
        response: bytes | None,
        company_id: int | None = None,
        call_id: int | None = None,
    ) -> int:
        """Keep a request/response pair (compressed) for audit and reprocessing."""
        with self._db.write_driver() as driver:
            return archive_in(
                driver,
                service,
                request=request,
                response=response,
                company_id=company_id,
                call_id=call_id,
                now=self._db.clock.now(),
            )

    def archives_of(self, company_id: int, service: str, limit: int = 100) -> list[tuple[int, datetime]]:
        """(id, created_at) of a company's archived exchanges with ``service``, newest first."""
        with self._db.reader() as s:
            rows = s.execute(
                select(ArchivedExchangeRow.id, ArchivedExchangeRow.created_at)
                .where(ArchivedExchangeRow.company_id == company_id, ArchivedExchangeRow.service == service)
                .order_by(ArchivedExchangeRow.id.desc())
                .limit(limit)
            ).all()
        return [(row[0], row[1]) for row in rows]

    def exchange_owner(self, archive_id: int) -> tuple[int | None, str]:
        """(company id, service) of an archived exchange."""
        with self._db.reader() as s:
            found = s.execute(
                select(ArchivedExchangeRow.company_id, ArchivedExchangeRow.service).where(
                    ArchivedExchangeRow.id == archive_id
                )
            ).first()
        if found is None:
            raise UnknownArchive(f"Resposta arquivada não encontrada (id {archive_id}).")
        return found[0], found[1]

    def get_exchange(self, archive_id: int) -> tuple[bytes | None, bytes | None]:
        """(request, response) as they were archived."""
        with self._db.reader() as s:
            found = s.execute(
                select(ArchivedExchangeRow.request_zlib, ArchivedExchangeRow.response_zlib).where(
                    ArchivedExchangeRow.id == archive_id
                )
            ).first()
        if found is None:
            raise UnknownArchive(f"Resposta arquivada não encontrada (id {archive_id}).")
        request, response = found
        return (
            decompress(request) if request is not None else None,
            decompress(response) if response is not None else None,
        )

    def prune(self, retention: timedelta = DEFAULT_RETENTION) -> PruneResult:
        """Delete audit rows older than ``retention`` (default 365 days) before now."""
        if retention <= timedelta(0):
            raise InvalidRecord("O período de retenção deve ser positivo.")
        cutoff = self._db.clock.now() - retention
        archives = self._delete_older(ArchivedExchangeRow, ArchivedExchangeRow.created_at, cutoff)
        calls = self._delete_older(GovernmentCallRow, GovernmentCallRow.at, cutoff)
        runs = self._delete_older(RunRow, RunRow.started_at, cutoff, RunRow.status != RunStatus.RUNNING.value)
        return PruneResult(archives=archives, calls=calls, runs=runs)

    def _delete_older(
        self,
        model: type[ArchivedExchangeRow] | type[GovernmentCallRow] | type[RunRow],
        column: InstrumentedAttribute[datetime],
        cutoff: datetime,
        *extra: object,
    ) -> int:
        total = 0
        while True:
            with self._db.session() as s:
                ids = list(
                    s.scalars(select(model.id).where(column < cutoff, *extra).limit(_PRUNE_BATCH))  # type: ignore[arg-type]
                )
                if not ids:
                    return total
                s.execute(delete(model).where(model.id.in_(ids)))
            total += len(ids)
