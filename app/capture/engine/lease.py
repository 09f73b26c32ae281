"""The call lease: until when this process may still be waiting for a service's answers.

A crash (SIGKILL, power cut) during a call or before its lot commits loses the answer, maybe the
137 that started the service's hour. Before a call, the committed lease must reach the latest its
answer can come; the next start reads it and puts every company that could have been asked into
that hour (``app.core.cadence.after_lost_answers``). One row per product, extended a few minutes
at a time, deleted on a clean stop.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from app.capture.context import CaptureContext
from app.core.cadence import CadenceRules, CaptureState, after_lost_answers
from app.core.products import Product

# How far past a call's latest answer the lease is extended at a time: one commit per few
# minutes of calls instead of one per call, and, after a crash, a few minutes more of companies
# put into the hour's wait.
LEASE_EXTENSION = timedelta(minutes=5)


class CallLease:
    """One product's call lease in this process."""

    def __init__(self, ctx: CaptureContext, product: Product) -> None:
        self.ctx = ctx
        self.product = product
        self._answers_by: datetime | None = None  # the lease this process committed
        self._lock = threading.Lock()

    def _latest_answer(self, now: datetime) -> datetime:
        # The call's timeout is real seconds (the socket's): on a sped-up clock (demo, crash
        # test) the service may mark its answer up to factor times as many clock seconds later.
        timeout = timedelta(seconds=self.ctx.settings.call_timeouts.for_product(self.product))
        return now + timeout * self.ctx.clock.factor

    def cover(self) -> None:
        """Before a call: extend the committed lease if it does not reach the call's latest answer."""
        latest = self._latest_answer(self.ctx.clock.now())
        with self._lock:
            if self._answers_by is not None and latest <= self._answers_by:
                return
            answers_by = latest + LEASE_EXTENSION
            self.ctx.cursors.hold_answers_until(self.product, answers_by)
            self._answers_by = answers_by

    def recover(self, rules: CadenceRules) -> int:
        """After a process that died holding the lease: the hour's wait for every company it could
        have asked, and the lease released; returns how many companies now wait."""
        answers_by = self.ctx.cursors.answers_lease(self.product)
        if answers_by is None:
            return 0
        now = self.ctx.clock.now()
        # Every company, with or without a state row: a first call (from NSU 0) may be the one lost.
        states = {state.company_id: state for state in self.ctx.cursors.list_states(self.product)}
        for company in self.ctx.companies.list_companies():
            states.setdefault(company.id, CaptureState(company.id, self.product))
        waits = [
            changed
            for state in states.values()
            if (changed := after_lost_answers(state, rules, answers_by, now)) is not None
        ]
        with self.ctx.unit() as unit:
            for state in waits:
                unit.save_state(state)
            unit.release_answers_lease(self.product)
        return len(waits)

    def release(self) -> None:
        """No call is in flight: the lease row goes."""
        with self._lock:
            self.ctx.cursors.release_answers_lease(self.product)
            self._answers_by = None
