"""The desk's background life: pause and resume every company's capture, and the periodic look
the tray (and its notifications) take at the capture while the window is hidden.

A pause is the user's pause of each company's capture state (``CaptureState.paused``) in the
database: the company badges show it ("Captura pausada pelo usuário."), the engines skip the
company, and it survives a restart. A resume clears only that pause: a company the cadence
stopped stays stopped until someone resumes it on purpose (its notification says so).

Functions here take the desk's capture context and service (``Desk.pause_all`` and friends are
one-line calls); like every desk call, they read the database: never on the GUI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from app.core.cadence import Action, CaptureState
from app.core.products import Product
from app.desk.views import Alerts, CompanyLine

if TYPE_CHECKING:
    from app.capture.context import CaptureContext
    from app.capture.service import CaptureService

log = logging.getLogger(__name__)
# A company whose run is in flight is paused once that run ends (its engine would otherwise save
# its own, unpaused, state over ours); a run ends within its calls' timeouts, this waits at most.
RUN_WAIT_SECONDS = 60.0
Change = Callable[[CaptureState], CaptureState]


@dataclass(frozen=True, slots=True)
class Stopped:
    """A company and product the cadence stopped (failures, a refused request): needs a person."""

    company_id: int
    product: Product
    reason: str


@dataclass(frozen=True, slots=True)
class BackgroundState:
    """One look at the capture: what the tray menu shows and the notifications compare."""

    now: datetime
    companies: tuple[CompanyLine, ...]
    alerts: Alerts  # NF-e's: cancellations after capture, deadlines within 5 days
    paused: int  # company x product captures paused by the user
    captured: int  # company x product captures enabled (paused ones included)
    stopped: tuple[Stopped, ...]

    @property
    def all_paused(self) -> bool:
        return self.captured > 0 and self.paused >= self.captured

    def next_query(self) -> tuple[datetime, CompanyLine, Product] | None:
        """The earliest next query of any company and product (a wait, block or pause ending)."""
        best: tuple[datetime, CompanyLine, Product] | None = None
        for line in self.companies:
            for badge in line.badges:
                when = badge.next_query_at
                if when is None or badge.action is Action.DISABLED:
                    continue
                if best is None or when < best[0]:
                    best = (when, line, badge.product)
        return best


def look(
    ctx: CaptureContext, products: tuple[Product, ...], companies: tuple[CompanyLine, ...], alerts: Alerts
) -> BackgroundState:
    """The pauses and stops, read now (a few bulk reads), beside the desk's companies and NF-e alerts."""
    captured = paused = 0
    stopped: list[Stopped] = []
    for product in products:
        enabled = {company.id for company, _settings in ctx.companies.enabled_for(product)}
        captured += len(enabled)
        for state in ctx.cursors.list_states(product):
            if state.company_id not in enabled:
                continue
            paused += state.paused
            if state.disabled_reason:
                stopped.append(Stopped(state.company_id, product, state.disabled_reason))
    return BackgroundState(ctx.clock.now(), companies, alerts, paused, captured, tuple(stopped))


def pause_all(ctx: CaptureContext, service: CaptureService | None) -> int:
    """Pause every enabled company's capture of every product this desk captures; returns how
    many captures were paused now (those already paused are not counted)."""
    return _change_all(ctx, service, _pause)


def resume_all(ctx: CaptureContext, service: CaptureService | None) -> int:
    """Resume every capture the user paused (a stopped one stays stopped); returns how many."""
    return _change_all(ctx, service, _resume)


def _pause(state: CaptureState) -> CaptureState:
    return state if state.paused else replace(state, paused=True)


def _resume(state: CaptureState) -> CaptureState:
    return replace(state, paused=False) if state.paused else state


def _change_all(ctx: CaptureContext, service: CaptureService | None, change: Change) -> int:
    from app.desk.sending import company_locks  # here: the tray imports this module at start-up

    assert service is not None  # the desk is open (its ``ctx`` said so)
    changed = 0
    for product in service.captures:
        locks = company_locks(service, product)
        busy = []
        for company, _settings in ctx.companies.enabled_for(product):
            lock = locks.for_cnpj(company.cnpj.value)
            if lock.acquire(blocking=False):  # no run of this company in flight: nothing overwrites us
                try:
                    changed += _save(ctx, company.id, product, change)
                finally:
                    lock.release()
            else:
                busy.append((company, lock))
        for company, lock in busy:  # at most the service's workers: wait for their runs to end
            held = lock.acquire(timeout=RUN_WAIT_SECONDS)
            if not held:
                log.warning("Empresa %s: consulta ainda em andamento; estado de pausa salvo assim mesmo", company.id)
            try:
                changed += _save(ctx, company.id, product, change)
            finally:
                if held:
                    lock.release()
    service.replan()  # every plan was made before the change
    return changed


def _save(ctx: CaptureContext, company_id: int, product: Product, change: Change) -> int:
    state = ctx.cursors.get(company_id, product)
    new = change(state)
    if new == state:
        return 0
    ctx.cursors.save(new)
    return 1
