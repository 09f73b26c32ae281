"""Export profiles, their queues and the stream of what arrived (revision 0007).

A profile's ``watermark`` is the last ``distribution_items.id`` it has turned into queue rows:
every captured document or event arrives with an NSU, so ``arrived_after`` reads the stream of
arrivals in order and ``enqueue`` moves the watermark and adds the rows in one transaction. A
queue row is deleted only by ``written``, once its file is on disk: a destination that fails
keeps its queue across restarts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select, update

from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.items import IN_CHUNK
from app.store.models import (
    DistributionItemRow,
    DocumentPartyRow,
    DocumentVersionRow,
    ExportProfileRow,
    ExportQueueRow,
)
from app.store.records import CANCELLED_MODES, EXPORT_KINDS, Direction, ExportProfile, Party, PartyRole, Product
from app.store.types import unpack_xml

DOCUMENT = "document"
EVENT = "event"
ITEM_TYPES = (DOCUMENT, EVENT)
KINDS = EXPORT_KINDS


class UnknownProfile(InvalidRecord, LookupError):
    """No export profile with that name or id."""


class ProfileExists(InvalidRecord):
    """A profile with that name already exists."""


@dataclass(frozen=True, slots=True)
class ArrivedItem:
    """One NSU as it arrived: a document's version or an event (never both)."""

    item_id: int
    company_id: int
    product: Product
    nsu: int
    document_id: int | None
    event_id: int | None


@dataclass(frozen=True, slots=True)
class QueuedItem:
    id: int
    item_type: str
    item_id: int
    attempts: int


def _profile(row: ExportProfileRow) -> ExportProfile:
    return ExportProfile(
        id=row.id,
        name=row.name,
        destination=row.destination,
        pattern=row.pattern,
        products=tuple(Product(p) for p in row.products),
        kinds=tuple(row.kinds),
        directions=tuple(Direction(d) for d in row.directions),
        company_ids=tuple(int(c) for c in row.company_ids),
        only_authorised=row.only_authorised,
        cancelled_mode=row.cancelled_mode,
        include_pdf=row.include_pdf,
        active=row.active,
        watermark=row.watermark,
        exported_count=row.exported_count,
        last_error=row.last_error,
        failing_since=row.failing_since,
        next_attempt_at=row.next_attempt_at,
        last_export_at=row.last_export_at,
    )


def _validate(profile: ExportProfile) -> None:
    if not profile.name.strip() or len(profile.name) > 80:
        raise InvalidRecord("O nome do perfil de exportação deve ter de 1 a 80 caracteres.")
    if not profile.destination.strip():
        raise InvalidRecord("Informe a pasta de destino do perfil de exportação.")
    unknown = set(profile.kinds) - set(KINDS)
    if unknown:
        raise InvalidRecord(f"Tipo de conteúdo desconhecido: {', '.join(sorted(unknown))} (use {', '.join(KINDS)}).")
    if profile.cancelled_mode not in CANCELLED_MODES:
        raise InvalidRecord("Canceladas: use 'move' (pasta Canceladas) ou 'beside' (evento ao lado).")


class ExportRepository:
    """Profiles (add, list, remove), the arrival stream and each profile's queue."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # ------------------------------------------------------------------ profiles

    def add(self, profile: ExportProfile) -> ExportProfile:
        _validate(profile)
        now = self._db.clock.now()
        with self._db.session() as s:
            if s.scalar(select(ExportProfileRow.id).where(ExportProfileRow.name == profile.name)) is not None:
                raise ProfileExists(f"Já existe um perfil de exportação chamado {profile.name!r}.")
            row = ExportProfileRow(
                name=profile.name,
                destination=profile.destination,
                pattern=profile.pattern,
                products=[p.value for p in profile.products],
                kinds=list(profile.kinds),
                directions=[d.value for d in profile.directions],
                company_ids=list(profile.company_ids),
                only_authorised=profile.only_authorised,
                cancelled_mode=profile.cancelled_mode,
                include_pdf=profile.include_pdf,
                active=profile.active,
                watermark=profile.watermark,
                exported_count=0,
                created_at=now,
                updated_at=now,
            )
            s.add(row)
            s.flush()
            return _profile(row)

    def profiles(self, *, active_only: bool = False) -> list[ExportProfile]:
        query = select(ExportProfileRow).order_by(ExportProfileRow.name)
        if active_only:
            query = query.where(ExportProfileRow.active.is_(True))
        with self._db.reader() as s:
            return [_profile(r) for r in s.scalars(query)]

    def get(self, profile_id: int) -> ExportProfile:
        with self._db.reader() as s:
            row = s.get(ExportProfileRow, profile_id)
            if row is None:
                raise UnknownProfile(f"Perfil de exportação não encontrado (id {profile_id}).")
            return _profile(row)

    def find(self, name: str) -> ExportProfile | None:
        with self._db.reader() as s:
            row = s.scalar(select(ExportProfileRow).where(ExportProfileRow.name == name))
            return _profile(row) if row is not None else None

    def remove(self, name: str) -> None:
        with self._db.session() as s:
            row = s.scalar(select(ExportProfileRow).where(ExportProfileRow.name == name))
            if row is None:
                raise UnknownProfile(f"Perfil de exportação não encontrado: {name!r}.")
            s.execute(delete(ExportQueueRow).where(ExportQueueRow.profile_id == row.id))
            s.delete(row)

    # ------------------------------------------------------------------ the stream and the queue

    def arrived_after(self, watermark: int, limit: int = 500, *, company_id: int | None = None) -> list[ArrivedItem]:
        """NSUs recorded after ``watermark`` that brought a document or an event, in arrival order."""
        query = (
            select(
                DistributionItemRow.id,
                DistributionItemRow.company_id,
                DistributionItemRow.product,
                DistributionItemRow.nsu,
                DistributionItemRow.document_id,
                DistributionItemRow.event_id,
            )
            .where(DistributionItemRow.id > watermark)
            .order_by(DistributionItemRow.id)
            .limit(limit)
        )
        if company_id is not None:
            query = query.where(DistributionItemRow.company_id == company_id)
        with self._db.reader() as s:
            return [ArrivedItem(i, c, Product(p), n, d, e) for i, c, p, n, d, e in s.execute(query)]

    def last_arrival(self) -> int:
        """The newest ``distribution_items.id`` (0 when nothing arrived yet)."""
        with self._db.reader() as s:
            return int(s.scalar(select(func.max(DistributionItemRow.id))) or 0)

    def enqueue(self, profile_id: int, entries: Sequence[tuple[str, int]], watermark: int) -> int:
        """Queue ``(item_type, item_id)`` pairs not queued yet and move the watermark, together."""
        now = self._db.clock.now()
        added = 0
        with self._db.session() as s:
            queued = {
                (item_type, item_id)
                for item_type, item_id in s.execute(
                    select(ExportQueueRow.item_type, ExportQueueRow.item_id).where(
                        ExportQueueRow.profile_id == profile_id
                    )
                )
            }
            for item_type, item_id in dict.fromkeys(entries):
                if item_type not in ITEM_TYPES:
                    raise InvalidRecord(f"Item de exportação desconhecido: {item_type!r}.")
                if (item_type, item_id) in queued:
                    continue
                s.add(
                    ExportQueueRow(
                        profile_id=profile_id, item_type=item_type, item_id=item_id, attempts=0, created_at=now
                    )
                )
                added += 1
            s.execute(
                update(ExportProfileRow)
                .where(ExportProfileRow.id == profile_id, ExportProfileRow.watermark < watermark)
                .values(watermark=watermark)
            )
        return added

    def queued(self, profile_id: int, limit: int = 200) -> list[QueuedItem]:
        query = (
            select(ExportQueueRow.id, ExportQueueRow.item_type, ExportQueueRow.item_id, ExportQueueRow.attempts)
            .where(ExportQueueRow.profile_id == profile_id)
            .order_by(ExportQueueRow.id)
            .limit(limit)
        )
        with self._db.reader() as s:
            return [QueuedItem(*row) for row in s.execute(query)]

    def queue_size(self, profile_id: int) -> int:
        with self._db.reader() as s:
            return int(s.scalar(select(func.count()).where(ExportQueueRow.profile_id == profile_id)) or 0)

    def written(self, profile_id: int, queue_ids: Sequence[int], *, clear_error: bool = True) -> None:
        """These rows' files are on disk: drop them, count them, clear the profile's error
        (unless another row of the same run failed: ``clear_error`` False keeps its retry time)."""
        if not queue_ids:
            return
        now = self._db.clock.now()
        cleared = {"last_error": None, "failing_since": None, "next_attempt_at": None} if clear_error else {}
        with self._db.session() as s:
            s.execute(
                delete(ExportQueueRow).where(
                    ExportQueueRow.profile_id == profile_id, ExportQueueRow.id.in_(list(queue_ids))
                )
            )
            s.execute(
                update(ExportProfileRow)
                .where(ExportProfileRow.id == profile_id)
                .values(
                    exported_count=ExportProfileRow.exported_count + len(queue_ids),
                    last_export_at=now,
                    updated_at=now,
                    **cleared,
                )
            )

    def failed(self, profile_id: int, queue_id: int | None, error: str, retry_at: datetime) -> None:
        """The destination refused a write: keep the queue, say why, try again at ``retry_at``."""
        now = self._db.clock.now()
        with self._db.session() as s:
            row = s.get(ExportProfileRow, profile_id)
            if row is None:
                return
            row.last_error = error
            row.failing_since = row.failing_since or now
            row.next_attempt_at = retry_at
            row.updated_at = now
            if queue_id is not None:
                s.execute(
                    update(ExportQueueRow)
                    .where(ExportQueueRow.id == queue_id)
                    .values(attempts=ExportQueueRow.attempts + 1)
                )

    def drop(self, profile_id: int, queue_ids: Sequence[int]) -> None:
        """Rows whose item is gone or not deliverable: nothing to write, nothing to count."""
        if queue_ids:
            with self._db.session() as s:
                s.execute(
                    delete(ExportQueueRow).where(
                        ExportQueueRow.profile_id == profile_id, ExportQueueRow.id.in_(list(queue_ids))
                    )
                )


class ExportReads:
    """Many documents' XML and parties in one query per 500 ids (an export reads thousands)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def current_xml(self, document_ids: Sequence[int]) -> dict[int, bytes]:
        found: dict[int, bytes] = {}
        with self._db.reader() as s:
            for start in range(0, len(document_ids), IN_CHUNK):
                chunk = list(document_ids[start : start + IN_CHUNK])
                rows = s.execute(
                    select(
                        DocumentVersionRow.document_id, DocumentVersionRow.xml_zlib, DocumentVersionRow.xml_sha256
                    ).where(DocumentVersionRow.document_id.in_(chunk), DocumentVersionRow.is_current.is_(True))
                )
                found.update((doc_id, unpack_xml(blob, sha)) for doc_id, blob, sha in rows)
        return found

    def parties(self, document_ids: Sequence[int]) -> dict[int, list[Party]]:
        found: dict[int, list[Party]] = {doc_id: [] for doc_id in document_ids}
        with self._db.reader() as s:
            for start in range(0, len(document_ids), IN_CHUNK):
                chunk = list(document_ids[start : start + IN_CHUNK])
                rows = s.execute(
                    select(DocumentPartyRow.document_id, DocumentPartyRow.role, DocumentPartyRow.tax_id,
                           DocumentPartyRow.name)
                    .where(DocumentPartyRow.document_id.in_(chunk))
                    .order_by(DocumentPartyRow.id)
                )  # fmt: skip
                for doc_id, role, tax_id, name in rows:
                    found[doc_id].append(Party(PartyRole(role), tax_id, name))
        return found
