"""The NFS-e daily gap check (rule book §6.7, flows 001 §4.4).

Every day at 23:00 Brasília: when the NSUs received in the last 3 days have a hole, the company's
distribution restarts from the NSU before the first hole. The ADN has no query of one NSU in
this capture's routine: asking ``GET /DFe`` again from there brings the missing ones, and what
is already stored is absorbed by idempotency (same NSU, same key: not stored twice, not notified
again). The cursor moves back under the company's lock; its waits are kept (the ADN's hour after
an empty queue still holds).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from app.capture.context import CaptureContext, CaptureNotice
from app.capture.engine.locks import CompanyLocks
from app.capture.nfse.fetch import NfseFetch
from app.core.products import Product
from app.core.recovery import lookback_start

log = logging.getLogger(__name__)
PRODUCT = Product.NFSE


class NfseGapCheck:
    """Satisfies ``app.capture.engine.capture.GapWork``: a daily restart, and the dispatch of the
    fetches by key queued for the office's capture node."""

    def __init__(self, ctx: CaptureContext, locks: CompanyLocks) -> None:
        self.ctx = ctx
        self.locks = locks

    def dispatch(self, limit: int = 100, *, company_id: int | None = None) -> int:
        """The fetches by key a client of the office's node queued (``NfseFetch.queue``)."""
        return NfseFetch(self.ctx).dispatch(self.locks, limit, company_id=company_id)

    def next_due_at(self) -> datetime | None:
        return NfseFetch(self.ctx).next_due_at()

    def daily_gap_check(self) -> int:
        """Restart every company whose last 3 days of NSUs have a hole; returns how many."""
        now = self.ctx.clock.now()
        restarted = 0
        for company, _settings in self.ctx.companies.enabled_for(PRODUCT):
            first = self.ctx.items.first_received_since(company.id, PRODUCT, lookback_start(now))
            if first is None:
                continue
            lock = self.locks.for_cnpj(company.cnpj.value)
            with lock:
                state = self.ctx.cursors.get(company.id, PRODUCT)
                holes = self.ctx.items.missing(company.id, PRODUCT, first, state.ult_nsu)
                if not holes:
                    continue
                restart = holes[0] - 1
                self.ctx.cursors.save(replace(state, ult_nsu=restart))
            restarted += 1
            message = (
                f"NFS-e: {len(holes)} NSU(s) faltando nos últimos 3 dias (primeiro {holes[0]}); "
                f"a captura recomeça do NSU {restart}."
            )
            log.warning("Empresa %s: %s", company.id, message)
            self.ctx.notify(CaptureNotice("recovery", company.id, PRODUCT, message, len(holes)))
        return restarted
