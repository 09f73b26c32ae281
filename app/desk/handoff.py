"""The ERP hand-off from the desk (``Desk.handoff``): a company's webhook, its log, resending and
a run now. The deliveries themselves are ``app.export.handoff``'s. Slow: from a worker."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.clock import Clock
    from app.export.handoff import HandoffRun
    from app.store.db import Database
    from app.store.handoff import Delivery


class Handoffs:
    """The data folder's hand-off targets and deliveries, over its database and clock."""

    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    @staticmethod
    def signature_header() -> str:
        """The HTTP header each delivery's HMAC-SHA256 signature travels in."""
        from app.export.handoff import SIGNATURE_HEADER

        return SIGNATURE_HEADER

    def configure(self, company_id: int, url: str) -> str:
        """Point a company's deliveries at ``url``; returns the new signing secret (kept in the vault)."""
        from app.export.handoff import Handoff

        return Handoff(self._db, self._clock).configure(company_id, url)

    def remove(self, company_id: int) -> None:
        """Stop a company's deliveries (the log stays)."""
        from app.store.handoff import HandoffRepository

        HandoffRepository(self._db).remove_target(company_id)

    def log(self, company_id: int | None, limit: int) -> list[Delivery]:
        from app.store.handoff import HandoffRepository

        return HandoffRepository(self._db).log(company_id, limit)

    def resend(
        self, company_id: int, *, keys: Sequence[str] = (), first: date | None = None, last: date | None = None
    ) -> int:
        """Mark deliveries to be sent again now: these keys, or those captured in the period."""
        from app.export.manual import period_of
        from app.store.handoff import HandoffRepository

        since, until = period_of(first, last)
        return HandoffRepository(self._db).resend(company_id, access_keys=keys, since=since, until=until)

    def run(self) -> HandoffRun:
        """Deliver what is due now (the capture service does it every minute)."""
        from app.export.handoff import Handoff

        return Handoff(self._db, self._clock).run()
