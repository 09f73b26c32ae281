"""The distribution loop of one company, for any distribution product (flows 001 §2-4).

One run: check (certificate, global pause, block, wait: ``app.core.cadence.decide``), ask the
adapter for the lot after the cursor (``distNSU`` for NF-e and CT-e, ``GET /DFe`` for NFS-e),
then store the lot and the new cursor in ONE transaction (the cursor never advances before the
whole lot is persisted), and chain while the answer says there is more (spaced by the rules'
``chain_spacing``, up to the rules' lots per run). The rules are the product's pure answer
policy; the product's own writes are the adapter's; this module does the store's I/O.

An answer whose transaction fails because the database cannot be reached (the office server
gone, a full disk) is kept in memory, with its cursor, and stored first when the database is back
(``store_unstored``, or the company's next run): never asked again, so no answer is lost and no
lot is fetched twice (a second ask of what was already given is the 656 the rule book warns of).
A process that ends before storing it leaves its call lease behind: the next start gives the
companies it may have asked their hour's wait (app.capture.engine.lease).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import NamedTuple

from app.capture.context import CaptureContext, CaptureNotice, call_record
from app.capture.engine.adapter import DistributionAdapter, LotAnswer, RunSoFar, StoredLot
from app.capture.engine.lease import CallLease
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.soap import may_have_reached_service
from app.capture.other_consumer import other_consumer_notice
from app.core.cadence import (
    Action,
    CaptureState,
    Decision,
    Transition,
    decide,
    rules_for,
)
from app.store.errors import StorageUnavailable
from app.store.records import (
    CallRecord,
    CaptureSettings,
    Company,
    RunStatus,
)

# A run never chains forever: a company with a huge backlog yields to the others after this many
# lots (or its rules' ``max_lots_per_run``) and continues on the next scheduler cycle.
MAX_LOTS_PER_RUN = 40

__all__ = ["MAX_LOTS_PER_RUN", "DistributionEngine", "RunResult", "may_have_reached_service"]
RECHECK_DISABLED = timedelta(hours=1)


@dataclass(slots=True)
class _Run:
    """The run row of one company's run and its running totals."""

    company_id: int
    trigger: str
    id: int | None = None  # the row is written with the run's first answer
    started_at: datetime | None = None
    queries: int = 0
    documents: int = 0
    quarantined: int = 0
    notable: int = 0  # what the product's filters let notify
    finished: bool = False

    def summary(self, decision: Decision) -> str:
        return f"{self.queries} consulta(s), {self.documents} documento(s). {decision.reason}"


@dataclass(frozen=True, slots=True)
class _Reading:
    """What ``due`` read for a company it found due, for the run its pass starts."""

    company: Company
    settings: CaptureSettings
    read_at: datetime
    generation: int  # Database.companies_generation when read
    state: CaptureState
    pause_until: datetime | None
    token: tuple[int, int]  # StateMarks.token taken before the state was read


@dataclass(frozen=True, slots=True)
class _LotResult:
    decision: Decision  # what comes next, decided from the state the lot left
    final: bool  # the run ends with this lot
    spacing: float = 0.0  # seconds to wait before the next lot (the rules' chain spacing)


class _Unstored(NamedTuple):
    """An answer whose transaction the unreachable database refused: stored before anything else."""

    cnpj: str
    state: CaptureState  # the state its transaction writes (already there: it did commit after all)
    run: _Run  # the run as it was before that answer (the retry closes it)
    commit: Callable[[], _LotResult]


@dataclass(frozen=True, slots=True)
class RunResult:
    """What one company's run did."""

    company_id: int
    queries: int
    documents: int
    quarantined: int
    decision: Decision  # the decision that ended the run
    skipped: bool = False  # another run of the same company was in progress


class DistributionEngine:
    """Runs one product's distribution (its ``adapter``) of the office's companies."""

    def __init__(self, ctx: CaptureContext, adapter: DistributionAdapter, locks: CompanyLocks | None = None) -> None:
        self.ctx = ctx
        self.adapter = adapter
        self.product = adapter.product
        self.rules = rules_for(adapter.product)
        self.locks = locks or CompanyLocks()
        self._plan: dict[int, datetime] = {}
        self._earliest: datetime | None = None  # min(self._plan.values()) while _earliest_known
        self._earliest_known = False
        # What ``due`` read for each company it found due, taken by that company's run.
        self._pass_configs: dict[int, _Reading] = {}
        self._plan_lock = threading.Lock()
        self.lease = CallLease(ctx, adapter.product)
        self.max_lots = self.rules.max_lots_per_run or MAX_LOTS_PER_RUN
        # Called after every lot with the company id (the service's heartbeat); returning False
        # ends the run after that lot (graceful stop): the lot and its cursor are committed.
        self.lot_done: Callable[[int], bool] | None = None
        self._unstored: dict[int, _Unstored] = {}  # per company: see the module

    # ------------------------------------------------------------------ planning

    def decision(self, company: Company, settings: CaptureSettings, now: datetime) -> tuple[CaptureState, Decision]:
        reading = self._read(company, settings, now)
        return reading.state, self._decide(company, settings, reading.state, reading.pause_until, now)

    def _read(self, company: Company, settings: CaptureSettings, now: datetime) -> _Reading:
        token = self.ctx.db.state_marks.token(company.id)  # before the read: see StateMarks
        generation = self.ctx.db.companies_generation
        state, pause = self.ctx.cursors.get_with_pause(company.id, self.product, settings.environment)
        return _Reading(company, settings, now, generation, state, pause.paused_until if pause else None, token)

    def _decide(
        self,
        company: Company,
        settings: CaptureSettings,
        state: CaptureState,
        pause_until: datetime | None,
        now: datetime,
    ) -> Decision:
        return decide(
            state,
            self.rules,
            now,
            global_pause_until=pause_until,
            certificate_problem=self.ctx.certificates.problem(company, now),
            enabled=settings.enabled and company.active,
        )

    def due(self, now: datetime) -> list[Company]:
        """Companies whose distribution may be queried now.

        A company is decided again only when its planned time comes, so a scheduler pass over
        hundreds of waiting companies reads nothing but the list of companies.
        """
        due = []
        enabled = self.ctx.companies.enabled_snapshot(self.product)
        with self._plan_lock:  # one look at the plan for the whole list (most are still waiting)
            plan = self._plan
            looks = [(c, s) for c, s in enabled if (planned := plan.get(c.id)) is None or planned <= now]
        for company, settings in looks:
            reading = self._read(company, settings, now)
            decision = self._decide(company, settings, reading.state, reading.pause_until, now)
            if self._remember(company.id, decision, now) <= now:
                due.append(company)
                with self._plan_lock:  # the run this pass starts takes them (no second read)
                    self._pass_configs[company.id] = reading
        ids = {company.id for company, _settings in enabled}
        with self._plan_lock:
            # A company disabled or removed since its plan was made must not keep waking the loop.
            for stale in [company_id for company_id in self._plan if company_id not in ids]:
                del self._plan[stale]
                self._earliest_known = False
        return due

    def planned_next(self, after: datetime | None = None) -> datetime | None:
        """The earliest planned look (later than ``after`` when given), from the plan alone: no
        query, valid right after ``due``. The service wakes its pass then, not a cycle later."""
        with self._plan_lock:
            if not self._earliest_known:  # the scheduler asks after every step, the plan changes less
                self._earliest = min(self._plan.values(), default=None)
                self._earliest_known = True
            earliest = self._earliest
            if after is None or earliest is None or earliest > after:
                return earliest
            return min((t for t in self._plan.values() if t > after), default=None)

    def next_due_at(self, now: datetime) -> datetime | None:
        """The earliest planned look at any company (a wait, block or pause ending)."""
        times = []
        for company, settings in self.ctx.companies.enabled_snapshot(self.product):
            with self._plan_lock:
                planned = self._plan.get(company.id)
            times.append(planned if planned is not None else self._replan(company, settings, now))
        return min(times, default=None)

    def replan(self, company_id: int | None = None) -> None:
        """Forget the plan of one company (or all): after its settings, certificate or pause changed."""
        self.ctx.companies.forget_snapshots()
        with self._plan_lock:
            if company_id is None:
                self._plan.clear()
                self._pass_configs.clear()
            else:
                self._plan.pop(company_id, None)
                self._pass_configs.pop(company_id, None)
            self._earliest_known = False

    def _replan(self, company: Company, settings: CaptureSettings, now: datetime) -> datetime:
        _state, decision = self.decision(company, settings, now)
        return self._remember(company.id, decision, now)

    def _remember(self, company_id: int, decision: Decision, now: datetime) -> datetime:
        # DISABLED has no end of its own (an expired certificate, a stop): look again hourly.
        when = now if decision.query else (decision.until or now + RECHECK_DISABLED)
        with self._plan_lock:
            self._plan[company_id] = when
            self._earliest_known = False
        return when

    # ------------------------------------------------------------------ one company

    def _stale(self, passed: _Reading) -> bool:
        """A pass's reading is good for its own runs only: same generation of company settings in
        this process, and not older than a scheduler cycle (another process may have changed them)."""
        too_old = self.ctx.clock.now() - passed.read_at > self.rules.scheduler_cycle
        return too_old or passed.generation != self.ctx.db.companies_generation

    def _configured(self, company_id: int) -> tuple[Company, CaptureSettings | None]:
        """The company and its settings as they are now: from the list of enabled companies
        (read again whenever anything changed), else from the database (disabled, inactive)."""
        found = self.ctx.companies.enabled_configuration(self.product, company_id)
        if found is not None:
            return found
        return self.ctx.companies.get(company_id), self.ctx.companies.get_settings(company_id, self.product)

    def run_company(self, company_id: int, *, trigger: str = "scheduler") -> RunResult:
        with self._plan_lock:
            passed = self._pass_configs.pop(company_id, None)
        settings: CaptureSettings | None
        if passed is not None and not self._stale(passed):
            company, settings = passed.company, passed.settings
        else:
            passed = None
            company, settings = self._configured(company_id)
        lock = self.locks.for_cnpj(company.cnpj.value)
        if not lock.acquire(blocking=False):
            return RunResult(company_id, 0, 0, 0, Decision(Action.WAIT, "Consulta já em andamento."), skipped=True)
        try:
            self._store_kept(company_id)  # an answer kept from a drop: stored before any new ask
            result = self._run_locked(company, settings, trigger, passed)
        finally:
            lock.release()
        # The decision that ended the run is the company's next plan: no second look next pass.
        self._remember(company_id, result.decision, self.ctx.clock.now())
        return result

    def _run_locked(
        self, company: Company, settings: CaptureSettings | None, trigger: str, passed: _Reading | None = None
    ) -> RunResult:
        run = _Run(company.id, trigger)
        decision = Decision(Action.WAIT, "")
        try:
            for lot in range(self.max_lots):
                if lot:  # settings may change between lots (the user disabled the company)
                    company, settings = self._configured(company.id)
                if settings is None:
                    decision = Decision(Action.DISABLED, f"Captura de {self.product.label} não configurada.")
                    break
                now = self.ctx.clock.now()
                if not lot and passed is not None and passed.token == self.ctx.db.state_marks.token(company.id):
                    # what ``due`` read a moment ago, and nothing written since: no second read
                    state, pause_until = passed.state, passed.pause_until
                else:
                    reading = self._read(company, settings, now)
                    state, pause_until = reading.state, reading.pause_until
                decision = self._decide(company, settings, state, pause_until, now)
                if not decision.query:
                    break
                lot_result = self._query_once(company, settings, state, pause_until, run)
                decision = lot_result.decision
                carry_on = self.lot_done(company.id) if self.lot_done is not None else True
                if lot_result.final or not carry_on:
                    break
                if lot_result.spacing > 0:
                    self.ctx.clock.sleep(lot_result.spacing)
        except Exception as error:
            if run.id is not None and not run.finished:
                self.ctx.runs.finish(run.id, RunStatus.FAILED, f"{type(error).__name__}: {error}")
            raise
        if run.id is not None and not run.finished:  # a graceful stop or the lot limit ended the chain
            self.ctx.runs.finish(run.id, RunStatus.SUCCEEDED, run.summary(decision))
        if run.notable:
            self.ctx.notify(
                CaptureNotice(
                    "documents",
                    company.id,
                    self.product,
                    f"{run.notable} documento(s) de {self.product.label} recebido(s).",
                    run.notable,
                )
            )
        return RunResult(company.id, run.queries, run.documents, run.quarantined, decision)

    def _query_once(
        self,
        company: Company,
        settings: CaptureSettings,
        state: CaptureState,
        pause_until: datetime | None,
        run: _Run,
    ) -> _LotResult:
        """One query and everything its answer changes, committed in ONE transaction: the lot,
        the cursor, the call log, the archive, the Ciências and recoveries it causes and, when the
        queue ends here, the run's closing row."""
        if run.started_at is None:
            run.started_at = self.ctx.clock.now()
        self.lease.cover()
        started = time.monotonic()
        at = self.ctx.clock.now()
        answer = self.adapter.query(company, settings, state, RunSoFar(run.queries, run.documents))
        call = None
        if answer.outcome is not None:
            service, operation = self.adapter.service, self.adapter.operation
            call = call_record(
                service, self.product, company.id, operation, at, started, answer.outcome, cstat=answer.code,
                http_status=answer.http_status, error=answer.error, run_id=run.id,
            )  # fmt: skip
        return self._commit(company, settings, answer, pause_until, run, call)

    def _commit(
        self,
        company: Company,
        settings: CaptureSettings,
        answer: LotAnswer,
        pause_until: datetime | None,
        run: _Run,
        call: CallRecord | None,
    ) -> _LotResult:
        now = self.ctx.clock.now()
        before, given = replace(run), call  # what a retry after a drop starts from
        transition, items, corrupt = answer.transition, answer.items, answer.corrupt
        bad = sum(1 for item in items if getattr(item, "parse_error", None))
        run.queries += 1 if call is not None else 0
        run.documents += len(items) - bad
        run.quarantined += bad
        run.notable += sum(1 for item in items if self.adapter.notable(company, settings, item))
        if transition.global_pause is not None:
            pause_until = transition.global_pause.until
        # The next decision from the new state, in memory: when the queue ends here the run's
        # closing row goes into the same transaction.
        decision = self._decide(company, settings, transition.state, pause_until, now)
        spacing = self._spacing(transition, decision, now)
        final = not (transition.chain_immediately and (decision.query or spacing > 0))
        # The damaged payloads (bad base64/gzip, ``corrupt``) are fetched again by consNSU while
        # the service still holds them; the quarantined copy is kept until then.
        recover = tuple(sorted({*transition.gap_nsus, *corrupt}))
        try:
            prepared = self.adapter.prepare_lot(company, items) if items else None  # it may read the store
            run_id = self._store(company, settings, answer, now, run, call, final, decision, recover, prepared)
        except StorageUnavailable:  # the database went away: the answer waits here (see the module)
            retry = partial(self._commit, company, settings, answer, pause_until, before, given)
            self._unstored[company.id] = _Unstored(company.cnpj.value, transition.state, before, retry)
            raise
        run.id = run_id  # once committed: a failed commit leaves the run to the error path
        run.finished = final
        self._apply_effects(company, settings, transition)
        return _LotResult(decision, final, spacing if not final else 0.0)

    def _store(
        self,
        company: Company,
        settings: CaptureSettings,
        answer: LotAnswer,
        now: datetime,
        run: _Run,
        call: CallRecord | None,
        final: bool,
        decision: Decision,
        recover: tuple[int, ...],
        prepared: object,
    ) -> int:
        """The answer's one transaction; the run's id."""
        transition, items, exchange = answer.transition, answer.items, answer.exchange
        with self.ctx.unit() as unit:
            run_id = run.id
            if run_id is None:
                # The run's row comes with its first answer: no write before the call. A crash
                # during the first call leaves no row; the next start's wait reason (after the
                # call lease) tells what happened.
                run_id = unit.start_run(
                    self.adapter.job_type,
                    run.trigger,
                    company_id=company.id,
                    product=self.product,
                    at=run.started_at,
                    finished=(RunStatus.SUCCEEDED, run.summary(decision)) if final else None,
                )
                call = replace(call, run_id=run_id) if call is not None else None
                closed = final
            else:
                closed = False
            stored = unit.store_lot(company.id, items)
            unit.save_state(transition.state)
            call_id = unit.log_call(call) if call is not None else None
            if exchange is not None and call_id is not None:
                unit.archive(self.adapter.service.value, company.id, call_id, *exchange)
            if items:
                self.adapter.within_lot(StoredLot(unit, company, settings, items, stored, now, prepared))
            if recover:
                unit.add_recoveries(company.id, self.product, next_attempt_at=now, nsus=recover)
            if transition.other_consumer is not None:  # issue 22: with the gaps it left
                unit.record_other_consumer(company.id, self.product, transition.other_consumer)
            if final and not closed:
                unit.finish_run(run_id, RunStatus.SUCCEEDED, run.summary(decision))
        return run_id

    def _spacing(self, transition: Transition, decision: Decision, now: datetime) -> float:
        """Seconds until the next lot of a chain the rules space out (the ADN's 1 s); 0 otherwise."""
        spacing = self.rules.chain_spacing
        if not transition.chain_immediately or not spacing or decision.action is not Action.WAIT:
            return 0.0
        if decision.until is None or decision.until - now > spacing:
            return 0.0
        return max(0.0, (decision.until - now).total_seconds())

    # ------------------------------------------------------------------ crash safety

    def store_unstored(self) -> int:
        """Store every answer kept from a drop (each under its company's lock); how many. Raises
        ``StorageUnavailable`` while the database is still away (they stay kept)."""
        stored = 0
        for company_id, kept in list(self._unstored.items()):
            with self.locks.for_cnpj(kept.cnpj):
                stored += self._store_kept(company_id)
        return stored

    def _store_kept(self, company_id: int) -> int:
        """Under the company's lock: its kept answer stored (1), or none kept (0). Refused for a
        reason other than the database's absence (this node fenced: the new node's start gave the
        company its hour), the answer is dropped."""
        kept = self._unstored.pop(company_id, None)
        if kept is None:
            return 0
        try:
            if self.ctx.cursors.get(company_id, self.product) == kept.state:
                return 1  # its commit did land (the connection dropped with the COMMIT's answer)
            decision = kept.commit().decision
            if kept.run.id is not None and not kept.run.finished:  # its chain ended with the drop
                self.ctx.runs.finish(kept.run.id, RunStatus.SUCCEEDED, kept.run.summary(decision))
        except StorageUnavailable:
            self._unstored.setdefault(company_id, kept)
            raise
        return 1

    def recover_lost_answers(self) -> int:
        """At start-up, with the data folder held: the hour's wait for every company a process
        that died holding the call lease could have asked; returns how many."""
        waits = self.lease.recover(self.rules)
        self.replan()  # cheap at start-up, when nothing is planned yet
        return waits

    def release_lease(self) -> None:
        """No call is in flight (the service stopped cleanly, a one-off pass ended)."""
        self.lease.release()

    def _apply_effects(self, company: Company, settings: CaptureSettings, transition: Transition) -> None:
        if transition.global_pause is not None:
            pause = transition.global_pause
            self.ctx.cursors.set_pause(self.product, settings.environment, pause.until, pause.reason, str(pause.cstat))
            self.ctx.notify(CaptureNotice("status", None, self.product, pause.reason))
        if transition.alert:
            self.ctx.notify(CaptureNotice("alert", company.id, self.product, transition.alert))
        if transition.other_consumer is not None:
            self.ctx.notify(other_consumer_notice(self.ctx, company.id, self.product))
