"""Sightings of another system consuming a company's distribution (issue 22), and their tally.

Each sighting is one answer that showed another system at work (a 656 on a distNSU our cadence
allowed, a lot starting past our cursor): when, and the NSU range ``(from_nsu, to_nsu]`` it took.
The NSUs themselves are gap recoveries (``gap_recoveries``); the tally joins the two on the
range, so the clerk sees how many came back by consNSU and how many are still pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, bindparam, func, insert, select

from app.core.cadence import OtherConsumer
from app.core.other_consumer import OtherConsumerSummary
from app.core.products import Product
from app.store.db import Database
from app.store.models import GapRecoveryRow, OtherConsumerRow
from app.store.prepared import Prepared
from app.store.records import GapStatus
from app.store.types import utc_text

_COLUMNS = ("company_id", "product", "seen_at", "cstat", "from_nsu", "to_nsu", "skipped", "queued", "out_of_reach")
_RECORD = Prepared(insert(OtherConsumerRow).values({name: bindparam(name) for name in _COLUMNS}))
_OUT_OF_REACH = (GapStatus.NOT_FOUND.value, GapStatus.ABANDONED.value)


def record_in(connection: Any, company_id: int, product: Product, sighting: OtherConsumer) -> int:
    """Record one sighting inside an open write transaction (the lot's unit); returns its id."""
    return _RECORD.run(
        connection,
        {
            "company_id": company_id,
            "product": product.value,
            "seen_at": utc_text(sighting.seen_at),
            "cstat": str(sighting.cstat),
            "from_nsu": sighting.from_nsu,
            "to_nsu": max(sighting.to_nsu, sighting.from_nsu),
            "skipped": sighting.skipped,
            "queued": sighting.queued,
            "out_of_reach": sighting.out_of_reach,
        },
    )


class OtherConsumerRepository:
    """The sightings and, per company, the tally of what the other system took."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def record(self, company_id: int, product: Product, sighting: OtherConsumer) -> int:
        with self._db.session() as s:
            return record_in(s.connection(), company_id, product, sighting)

    def sightings(self, company_id: int, product: Product) -> list[OtherConsumer]:
        query = (
            select(OtherConsumerRow)
            .where(OtherConsumerRow.company_id == company_id, OtherConsumerRow.product == product.value)
            .order_by(OtherConsumerRow.seen_at, OtherConsumerRow.id)
        )
        with self._db.reader() as s:
            return [
                OtherConsumer(r.seen_at, int(r.cstat), r.from_nsu, r.to_nsu, r.skipped, r.queued, r.out_of_reach)
                for r in s.scalars(query)
            ]

    def summaries(self, product: Product, company_ids: Sequence[int] = ()) -> dict[int, OtherConsumerSummary]:
        """Per company ever seen: every sighting's tally (``OtherConsumerSummary.active`` says
        whether it is still news), in two grouped reads for all companies."""
        seen = (
            select(
                OtherConsumerRow.company_id,
                func.min(OtherConsumerRow.seen_at),
                func.max(OtherConsumerRow.seen_at),
                func.count(),
                func.sum(OtherConsumerRow.skipped),
                func.sum(OtherConsumerRow.skipped - OtherConsumerRow.queued),
            )
            .where(OtherConsumerRow.product == product.value)
            .group_by(OtherConsumerRow.company_id)
        )
        if company_ids:
            seen = seen.where(OtherConsumerRow.company_id.in_(list(company_ids)))
        gaps = (
            select(OtherConsumerRow.company_id, GapRecoveryRow.status, func.count(func.distinct(GapRecoveryRow.id)))
            .join(
                GapRecoveryRow,
                and_(
                    GapRecoveryRow.company_id == OtherConsumerRow.company_id,
                    GapRecoveryRow.product == OtherConsumerRow.product,
                    GapRecoveryRow.nsu > OtherConsumerRow.from_nsu,
                    GapRecoveryRow.nsu <= OtherConsumerRow.to_nsu,
                ),
            )
            .where(OtherConsumerRow.product == product.value)
            .group_by(OtherConsumerRow.company_id, GapRecoveryRow.status)
        )
        if company_ids:
            gaps = gaps.where(OtherConsumerRow.company_id.in_(list(company_ids)))
        with self._db.reader() as s:
            episodes = list(s.execute(seen))
            if not episodes:
                return {}
            by_status: dict[int, dict[str, int]] = {}
            for company_id, status, count in s.execute(gaps):
                by_status.setdefault(company_id, {})[status] = count
        result = {}
        for company_id, first, last, count, skipped, capped in episodes:
            statuses = by_status.get(company_id, {})
            result[company_id] = OtherConsumerSummary(
                company_id=company_id,
                product=product,
                since=first,
                last_seen=last,
                sightings=count,
                skipped=int(skipped or 0),
                recovered=statuses.get(GapStatus.RECOVERED.value, 0),
                pending=statuses.get(GapStatus.PENDING.value, 0),
                out_of_reach=int(capped or 0) + sum(statuses.get(s, 0) for s in _OUT_OF_REACH),
            )
        return result
