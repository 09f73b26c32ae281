"""Manifestation requests (NF-e recipient 2102xx, NFS-e taker 2032xx) and their results.

The unique (company, product, key, tpEvento, nSeqEvento) is the guard against sending the same
event twice; asking again returns the existing request.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.models import KEY_LEN, ManifestationRow
from app.store.prepared import Prepared
from app.store.records import Manifestation, ManifestationStatus, Product
from app.store.types import compress, decompress

# Read at every step of the scheduler loop: prepared once.
_NEXT_DUE = Prepared(
    select(func.min(ManifestationRow.not_before)).where(ManifestationRow.status == bindparam("status"))
)


class UnknownManifestation(InvalidRecord, LookupError):
    """No manifestation with that id."""


def _manifestation(row: ManifestationRow) -> Manifestation:
    return Manifestation(
        id=row.id,
        company_id=row.company_id,
        product=Product(row.product),
        access_key=row.access_key,
        tp_evento=row.tp_evento,
        n_seq_evento=row.n_seq_evento,
        justification=row.justification,
        automatic=row.automatic,
        status=ManifestationStatus(row.status),
        not_before=row.not_before,
        attempts=row.attempts,
        cstat=row.cstat,
        x_motivo=row.x_motivo,
        protocol=row.protocol,
        created_at=row.created_at,
        updated_at=row.updated_at,
        sent_at=row.sent_at,
    )


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
        if not access_key or len(access_key) > KEY_LEN:
            raise InvalidRecord(f"Chave de acesso inválida: {access_key!r}.")
        if not (tp_evento.isdigit() and len(tp_evento) == 6):
            raise InvalidRecord(f"Tipo de evento inválido: {tp_evento!r} (esperados 6 dígitos).")
        now = self._db.clock.now()
        statement = (
            insert(ManifestationRow)
            .values(
                company_id=company_id,
                product=product.value,
                access_key=access_key,
                tp_evento=tp_evento,
                n_seq_evento=n_seq_evento,
                justification=justification,
                automatic=automatic,
                status=ManifestationStatus.PENDING.value,
                not_before=not_before,
                attempts=0,
                created_at=now,
                updated_at=now,
            )
            .on_conflict_do_nothing()
        )
        with self._db.session() as s:
            s.execute(statement)
            row = s.scalar(
                select(ManifestationRow).where(
                    ManifestationRow.company_id == company_id,
                    ManifestationRow.product == product.value,
                    ManifestationRow.access_key == access_key,
                    ManifestationRow.tp_evento == tp_evento,
                    ManifestationRow.n_seq_evento == n_seq_evento,
                )
            )
            assert row is not None
            return _manifestation(row)

    def next_not_before(self) -> datetime | None:
        """When the earliest pending request becomes due (the scheduler's wake-up), in one indexed read."""
        with self._db.read_connection() as connection:
            row = _NEXT_DUE.first(connection, {"status": ManifestationStatus.PENDING.value})
        return row[0] if row is not None else None

    def due(self, now: datetime, limit: int = 50) -> list[Manifestation]:
        """Pending requests whose wait (e.g. the automatic Ciência delay) is over."""
        with self._db.reader() as s:
            rows = s.scalars(
                select(ManifestationRow)
                .where(
                    ManifestationRow.status == ManifestationStatus.PENDING.value,
                    ManifestationRow.not_before <= now,
                )
                .order_by(ManifestationRow.not_before, ManifestationRow.id)
                .limit(limit)
            )
            return [_manifestation(r) for r in rows]

    def for_key(self, company_id: int, product: Product, access_key: str) -> list[Manifestation]:
        with self._db.reader() as s:
            rows = s.scalars(
                select(ManifestationRow)
                .where(
                    ManifestationRow.company_id == company_id,
                    ManifestationRow.product == product.value,
                    ManifestationRow.access_key == access_key,
                )
                .order_by(ManifestationRow.id)
            )
            return [_manifestation(r) for r in rows]

    def mark_sent(self, manifestation_id: int) -> Manifestation:
        with self._db.session() as s:
            row = self._row(s, manifestation_id)
            now = self._db.clock.now()
            row.status = ManifestationStatus.SENT.value
            row.attempts += 1
            row.sent_at = now
            row.updated_at = now
            return _manifestation(row)

    def settle(
        self,
        manifestation_id: int,
        status: ManifestationStatus,
        *,
        cstat: str | None,
        x_motivo: str | None,
        protocol: str | None = None,
        result_xml: bytes | None = None,
        retry_at: datetime | None = None,
    ) -> Manifestation:
        """Record the answer: accepted (135/136/573), rejected, or back to pending at ``retry_at``."""
        if status is ManifestationStatus.PENDING and retry_at is None:
            raise InvalidRecord("Reenvio de manifestação sem horário da nova tentativa.")
        with self._db.session() as s:
            row = self._row(s, manifestation_id)
            row.status = status.value
            row.cstat = cstat
            row.x_motivo = x_motivo
            row.protocol = protocol
            if result_xml is not None:
                row.result_xml_zlib = compress(result_xml)
            if retry_at is not None:
                row.not_before = retry_at
            row.updated_at = self._db.clock.now()
            return _manifestation(row)

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
            if row.status != ManifestationStatus.REJECTED.value:
                return _manifestation(row)
            row.status = ManifestationStatus.PENDING.value
            row.not_before = not_before
            row.justification = justification
            row.updated_at = self._db.clock.now()
            return _manifestation(row)

    def result_xml(self, manifestation_id: int) -> bytes | None:
        """The procEventoNFe (or NFS-e evento) returned for an accepted manifestation."""
        with self._db.reader() as s:
            blob = self._row(s, manifestation_id).result_xml_zlib
        return decompress(blob) if blob is not None else None

    @staticmethod
    def _row(session: Session, manifestation_id: int) -> ManifestationRow:
        row = session.get(ManifestationRow, manifestation_id)
        if row is None:
            raise UnknownManifestation(f"Manifestação não encontrada (id {manifestation_id}).")
        return row
