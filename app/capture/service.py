"""The capture service: drives every product's engines, now (``run_once``) or on the clock.

The decisions stay in the engines' pure cadence functions; this module only decides WHEN to ask
them. Three ways to drive the same job functions:

* ``run_once``: everything due now, once, and a report (``capture --once``);
* ``start``/``stop``: APScheduler 3 in a background thread with a pool of company workers
  (``capture --daemon``, the window, the demo);
* :func:`app.capture.simulation.drive`: a virtual clock jumping from one due time to the next
  (tests and the month benchmark).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TypeVar

from app.capture.context import CaptureContext, CaptureNotice, resume_stopped
from app.capture.engine.distribution import RunResult
from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.jobs import Job
from app.capture.other_consumer import other_consumers
from app.capture.products import REGISTRY, ProductCapture, build_capture
from app.capture.scheduler import BackgroundJobs, job_id
from app.capture.status import (
    CONSULTANDO,
    LABELS,
    OTHER_INSTANCE,
    CompanyOutcome,
    CompanyStatus,
    OnceReport,
    due_wait,
    named,
    pending_recoveries,
    snapshots,
    start_of_day,
    with_other_consumer,
    without_engine,
)
from app.capture.watchdog import Flight, FlightTable, clock_rate
from app.core.cadence import Action
from app.core.errors import CapturaError
from app.core.products import Product
from app.core.quota import QUOTA_WINDOW
from app.core.recovery import DISPATCH_INTERVAL
from app.store.errors import StorageUnavailable
from app.store.lease import LeaseLost
from app.store.records import RunStatus

log = logging.getLogger(__name__)
T = TypeVar("T")

# A run silent for longer than its product's call timeout plus this is stalled ("travada").
STALL_MARGIN = timedelta(seconds=60)
# The point-query ledger only matters for the last hour; a day is kept to explain a deferral.
LEDGER_KEPT = max(QUOTA_WINDOW, timedelta(days=1))


@dataclass(frozen=True, slots=True)
class ServiceIntervals:
    """How often each job runs, in the clock's time (the demo's sped-up clock scales them).

    ``stall_after`` and the watchdog are real time: they watch threads and HTTP timeouts.
    """

    distribution: Mapping[Product, timedelta] = field(default_factory=dict)  # default: rules' scheduler_cycle
    manifestation: timedelta = timedelta(seconds=60)
    recovery: timedelta = DISPATCH_INTERVAL
    prune: timedelta = timedelta(days=1)
    prune_delay: timedelta = timedelta(minutes=10)  # first prune after start: start-up stays light
    watchdog: timedelta = timedelta(seconds=30)
    stall_after: timedelta | None = None  # default: the product's call timeout + STALL_MARGIN
    jump_tolerance: timedelta = timedelta(seconds=60)


class ServiceError(CapturaError):
    """The service cannot do that in its current state."""


class CaptureService:
    """Drives the capture of every company and product of one data folder.

    ``workers`` company runs at once (never two of one CNPJ: the engines' locks). ``data_lock``,
    when given, is acquired by ``start`` (raising ``AlreadyRunning``) and released by ``stop``.
    """

    def __init__(
        self,
        ctx: CaptureContext,
        *,
        products: Iterable[Product] | None = None,  # default: every product the registry has
        workers: int = 4,
        captures: Mapping[Product, ProductCapture] | None = None,
        intervals: ServiceIntervals | None = None,
        data_lock: DataFolderLock | None = None,
        extra_jobs: Sequence[Job] = (),
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        self.ctx = ctx
        self.workers = workers
        self.intervals = intervals or ServiceIntervals()
        self.data_lock = data_lock
        # Who captures this data folder when this service does not (another process holds the
        # lock: a demo, a daemon, a window): status then shows the state that one writes in the
        # database and leaves the certificates, in its memory or its vault, to it.
        self.captured_elsewhere: str | None = None
        # The capture node's gate (app.capture.node): asked before a background run, chained lot or
        # scheduled job; told when a write was fenced (this workstation lost the office's lease) or
        # the database could not be reached (the node retries; the answer waits in its engine).
        self.may_query: Callable[[], bool] = _always
        self.on_lease_lost: Callable[[], None] | None = None
        self.on_storage_lost: Callable[[StorageUnavailable], None] | None = None
        self.extra_jobs: list[Job] = list(extra_jobs)  # routines of packages above (app.export)
        self.captures: dict[Product, ProductCapture] = (
            dict(captures)
            if captures is not None
            else {p: build_capture(ctx, p) for p in dict.fromkeys(REGISTRY if products is None else products)}
        )
        self.rate = clock_rate(ctx.clock)
        self.flights = FlightTable()
        self.clock_jumps = 0
        self.stalls = 0
        self.passes: dict[Product, int] = dict.fromkeys(self.captures, 0)  # background passes done
        self._stopping = threading.Event()
        self._background: BackgroundJobs | None = None
        self._state_lock = threading.Lock()
        for product, capture in self.captures.items():
            capture.distribution.lot_done = partial(self._lot_done, product)

    # ------------------------------------------------------------------ configuration

    def cycle(self, product: Product) -> timedelta:
        """The distribution pass interval of ``product`` (clock time)."""
        return self.intervals.distribution.get(product) or self.captures[product].distribution.rules.scheduler_cycle

    def add_job(self, job: Job) -> None:
        """A routine of a package above the capture (the automatic export), run like the others.
        Before ``start``: the scheduler reads the job table once."""
        if self._background is not None:
            raise ServiceError("Inclua as rotinas antes de iniciar o serviço de captura.")
        self.extra_jobs.append(job)

    def stall_after(self, product: Product) -> timedelta:
        if self.intervals.stall_after is not None:
            return self.intervals.stall_after
        # A call may block for its whole (real-seconds) timeout: on a sped-up clock, that many
        # times the clock's factor.
        timeout = timedelta(seconds=self.ctx.settings.call_timeouts.for_product(product))
        return timeout * self.ctx.clock.factor + STALL_MARGIN

    def _selected(self, product: Product | None) -> list[ProductCapture]:
        if product is None:
            return list(self.captures.values())
        if product not in self.captures:
            raise ServiceError(f"O serviço não captura {product.label}.")
        return [self.captures[product]]

    # ------------------------------------------------------------------ job functions

    def run_distribution(
        self, product: Product, *, company_id: int | None = None, trigger: str = "scheduler"
    ) -> dict[int, RunResult | Exception]:
        """One pass: runs every due company of ``product`` here, one after the other."""
        capture = self.captures[product]
        due = [c.id for c in capture.distribution.due(self.ctx.clock.now()) if company_id in (None, c.id)]
        return {cid: self._run_safely(capture, cid, trigger) for cid in due}

    def dispatch_manifestations(self, product: Product | None = None, *, company_id: int | None = None) -> int:
        if not self.may_query():
            return 0
        return sum(c.manifestation.dispatch(company_id=company_id) for c in self._selected(product))

    def dispatch_recoveries(self, product: Product | None = None, *, company_id: int | None = None) -> int:
        if not self.may_query():
            return 0
        return sum(c.points.dispatch(company_id=company_id) for c in self._selected(product))

    def dispatch_soon(self, *, passes: bool = False) -> None:
        """Send the queued manifestations and fetches now, on the routines' own thread (a
        client's request was committed: the node need not wait for the next interval); with
        ``passes``, every product's distribution pass too (the database is back after a drop)."""
        background = self._background
        if background is not None:
            background.run_soon("manifestacoes", "recuperacoes", *(job_id(p) for p in self.captures if passes))

    def store_unstored(self) -> int:
        """The answers kept in memory when the database went away, stored now; how many."""
        return sum(capture.distribution.store_unstored() for capture in self.captures.values())

    def daily_gap_check(self, product: Product | None = None) -> int:
        """Queue the NSUs missing among the last 3 days (23:00 Brasília); returns how many."""
        selected = self._selected(product)
        return self.recorded("verificacao_diaria", lambda: sum(c.points.daily_gap_check() for c in selected))

    def prune(self) -> dict[str, int]:
        """Retention: archived exchanges, calls and runs older than the configured days; the
        point-query ledger beyond a day. Documents and events are never pruned."""

        def work() -> dict[str, int]:
            result = self.ctx.audit.prune(timedelta(days=self.ctx.settings.archive_retention_days))
            ledger = self.ctx.quota.forget_before(self.ctx.clock.now() - LEDGER_KEPT)
            return {"archives": result.archives, "calls": result.calls, "runs": result.runs, "point_queries": ledger}

        return self.recorded("retencao", work)

    def resume(self, company_id: int, product: Product | None = None) -> list[Product]:
        """A user takes up a company's stopped (or paused) capture: looked at on the next pass."""
        resumed = []
        for capture in self._selected(product):
            if resume_stopped(self.ctx.cursors, company_id, capture.product):
                capture.distribution.replan(company_id)
                resumed.append(capture.product)
        return resumed

    def replan(self, company_id: int | None = None, product: Product | None = None) -> None:
        """After a company's settings, certificate or pause changed (or the clock jumped)."""
        for capture in self._selected(product):
            capture.distribution.replan(company_id)

    def next_due_at(self) -> datetime | None:
        """The earliest time any product has something due (None: nothing planned)."""
        now = self.ctx.clock.now()
        times = []
        for capture in self.captures.values():
            times += [capture.distribution.next_due_at(now), capture.manifestation.next_due_at()]
            times.append(capture.points.next_due_at())
        return min((t for t in times if t is not None), default=None)

    def _run_safely(self, capture: ProductCapture, company_id: int, trigger: str) -> RunResult | Exception:
        try:
            return capture.distribution.run_company(company_id, trigger=trigger)
        except LeaseLost as error:  # another workstation captures now: nothing of ours committed
            log.warning("Empresa %s (%s): %s", company_id, capture.product.label, error)
            if self.on_lease_lost is not None:
                self.on_lease_lost()
            return error
        except StorageUnavailable as error:  # the database went away: the node waits for it
            log.warning("Empresa %s (%s) não gravada: %s", company_id, capture.product.label, error)
            if self.on_storage_lost is not None:
                self.on_storage_lost(error)
            return error
        except Exception as error:  # one company's failure never stops the others
            log.exception("Falha na captura de %s da empresa %s", capture.product.label, company_id)
            self.ctx.notify(
                CaptureNotice("alert", company_id, capture.product, f"Falha inesperada na captura: {error}")
            )
            return error

    def recorded(self, job_type: str, work: Callable[[], T]) -> T:
        """A routine job's run with its row in the runs table (every scheduled run has one)."""
        run_id = self.ctx.runs.start(job_type, "scheduler")
        try:
            result = work()
        except Exception as error:
            self.ctx.runs.finish(run_id, RunStatus.FAILED, f"{type(error).__name__}: {error}")
            raise
        self.ctx.runs.finish(run_id, RunStatus.SUCCEEDED, str(result))
        return result

    def _lot_done(self, product: Product, company_id: int) -> bool:
        self.flights.beat(product, company_id)
        return not self._stopping.is_set() and self.may_query()

    # ------------------------------------------------------------------ now, once

    def recover_after_crash(self) -> None:
        """With the data folder held: what a previous process left half-done is taken up again
        (its run rows closed as interrupted, its unanswered manifestations queued again, the
        hour's wait for the companies whose answer it may have lost)."""
        self.ctx.runs.mark_interrupted()
        self.ctx.manifestations.reclaim_sent()
        for capture in self.captures.values():
            capture.distribution.recover_lost_answers()

    def _release_leases(self) -> None:
        """Every call has its answer committed (or none is coming): a clean stop."""
        for capture in self.captures.values():
            capture.distribution.release_lease()

    def run_once(self, *, company_id: int | None = None, product: Product | None = None) -> OnceReport:
        """Everything due now, for all companies and products or one, obeying every wait.

        A company still waiting is not queried; the report says why and until when.
        """
        started = self.ctx.clock.now()
        outcomes: list[CompanyOutcome] = []
        sent = tried = 0
        for capture in self._selected(product):
            rules = capture.distribution.rules
            now = self.ctx.clock.now()
            due = [c.id for c in capture.distribution.due(now) if company_id in (None, c.id)]
            results = self._run_many(capture, due)
            sent += capture.manifestation.dispatch(company_id=company_id)
            tried += capture.points.dispatch(company_id=company_id)
            for snap in snapshots(self.ctx, capture.product, rules, self.ctx.clock.now(), company_id):
                result = results.get(snap.company.id)
                decision = snap.decision
                reason = decision.reason
                if isinstance(result, RunResult) and result.skipped:
                    decision = result.decision
                    reason = decision.reason
                elif isinstance(result, Exception):
                    reason = f"Falha na execução: {result}. {reason}"
                run = result if isinstance(result, RunResult) else None
                outcomes.append(
                    CompanyOutcome(
                        **named(snap.company, capture.product),
                        queries=run.queries if run else 0,
                        documents=run.documents if run else 0,
                        quarantined=run.quarantined if run else 0,
                        action=decision.action,
                        reason=reason,
                        until=decision.until,
                        ran=result is not None,
                        skipped=bool(run and run.skipped),
                    )
                )
        if self._background is None:  # nothing else of ours is calling: every answer is in
            self._release_leases()
        return OnceReport(started, self.ctx.clock.now(), tuple(outcomes), sent, tried)

    def _run_many(self, capture: ProductCapture, company_ids: list[int]) -> dict[int, RunResult | Exception]:
        if self.workers == 1 or len(company_ids) <= 1:
            return {cid: self._run_safely(capture, cid, "once") for cid in company_ids}
        with ThreadPoolExecutor(min(self.workers, len(company_ids)), thread_name_prefix="captura-once") as pool:
            futures = {cid: pool.submit(self._run_safely, capture, cid, "once") for cid in company_ids}
            return {cid: future.result() for cid, future in futures.items()}

    # ------------------------------------------------------------------ real clock

    @property
    def running(self) -> bool:
        return self._background is not None

    def start(self) -> None:
        """Start the background scheduler (real or sped-up clock); returns at once."""
        with self._state_lock:
            if self._background is not None:
                raise ServiceError("O serviço de captura já está em execução.")
            if self.data_lock is not None:
                try:
                    self.data_lock.acquire()
                except AlreadyRunning as error:
                    self.captured_elsewhere = error.holder or OTHER_INSTANCE
                    raise
                self.captured_elsewhere = None
            self._stopping.clear()
            self.recover_after_crash()
            self._background = BackgroundJobs(self)
            try:
                self._background.start()
            except BaseException:
                self._background = None
                if self.data_lock is not None:
                    self.data_lock.release()
                raise

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop starting new work, let runs in flight finish (each lot commits with its cursor),
        then mark whatever is still open as interrupted. True when everything finished in time."""
        with self._state_lock:
            background, self._background = self._background, None
            self._stopping.set()
            if background is None:
                return True
            try:
                finished = background.stop(timeout)
                self.store_unstored()  # unreachable: the call lease stays, the next start honours it
                self.ctx.runs.mark_interrupted("O serviço de captura foi encerrado durante esta execução.")
                if finished:  # else a call may still be in flight: the next start honours the lease
                    self._release_leases()
            finally:
                if self.data_lock is not None:
                    self.data_lock.release()
            return finished

    def submit(self, product: Product, company_id: int, trigger: str = "scheduler") -> bool:
        """Queue one company's run on the workers (background only); False if it has one in flight."""
        background = self._background
        if background is None or self._stopping.is_set() or not self.may_query():
            return False
        capture = self.captures[product]
        stall = self.stall_after(product).total_seconds()
        flight = Flight(product, company_id, self.ctx.clock.now(), stall)
        if not self.flights.claim(flight):
            return False
        if not background.submit(flight, partial(self._execute, capture, flight, trigger)):
            self.flights.drop(flight)
            return False
        return True

    def _execute(self, capture: ProductCapture, flight: Flight, trigger: str) -> None:
        if self._stopping.is_set():
            return  # queued before the stop and dequeued before its pool was shut down: dropped
        self.flights.started(flight, self.ctx.clock.now())
        self._run_safely(capture, flight.company_id, trigger)

    def on_clock_jump(self, jump: timedelta) -> None:
        """The machine slept or its time changed: re-plan; coalescing already collapsed the
        missed scheduler runs into one, and the cadence decides each company as always."""
        self.clock_jumps += 1
        self.flights.refresh_all()
        self.replan()
        minutes = int(abs(jump).total_seconds() // 60)
        text = (
            f"O relógio do computador saltou {minutes} min (suspensão ou ajuste de hora): "
            "agenda de todas as empresas recalculada."
        )
        log.warning(text)
        self.ctx.notify(CaptureNotice("status", None, None, text))

    def on_stalled(self, flight: Flight, silent: float) -> None:
        """Record a stalled run; the caller has already moved the other companies to a fresh pool."""
        self.stalls += 1
        text = stalled_reason(silent)
        run_id = self.ctx.runs.start(
            f"{flight.product.value}_distribution", "watchdog", company_id=flight.company_id, product=flight.product
        )
        self.ctx.runs.finish(run_id, RunStatus.FAILED, text)
        log.error("Empresa %s (%s): %s", flight.company_id, flight.product.label, text)
        self.ctx.notify(CaptureNotice("alert", flight.company_id, flight.product, text))

    # ------------------------------------------------------------------ status

    def status(self, *, company_id: int | None = None, product: Product | None = None) -> list[CompanyStatus]:
        """Every company and product as the UI shows it; a few reads for all of them."""
        now = self.ctx.clock.now()
        since = start_of_day(now)
        flights = self.flights.snapshot()
        result = []
        for capture in self._selected(product):
            pending = pending_recoveries(self.ctx, capture.product, now)
            today = self.ctx.items.count_documents_received_since(capture.product, since)
            next_pass = self._next_pass(capture.product, now)
            rules = capture.distribution.rules
            others = other_consumers(self.ctx, capture.product, now, company_id)
            for snap in snapshots(
                self.ctx, capture.product, rules, now, company_id, check_certificates=self.captured_elsewhere is None
            ):
                decision = snap.decision
                flight = flights.get((capture.product, snap.company.id))
                if decision.action is Action.BLOCKED:
                    flight = None  # queued, or storing the answer that earned the block: nothing goes out
                label, reason, until = LABELS[decision.action], decision.reason, decision.until
                next_query = next_pass if decision.action is Action.QUERY else decision.until
                if decision.action is Action.QUERY:
                    until, reason = due_wait(
                        next_pass if self._background is not None else None, now, self.captured_elsewhere
                    )
                if decision.action is Action.DISABLED:
                    next_query = None
                if flight is not None:
                    label, until, next_query = CONSULTANDO, None, None
                    reason = "Consulta em andamento."
                    if flight.stalled and flight.beat is not None:
                        reason = stalled_reason(self.flights.silent_for(flight))
                result.append(
                    CompanyStatus(
                        **named(snap.company, capture.product),
                        label=label,
                        until=until,
                        reason=with_other_consumer(reason, others.get(snap.company.id)),
                        last_cstat=snap.state.last_cstat,
                        last_message=snap.state.last_message,
                        documents_today=today.get(snap.company.id, 0),
                        pending_recoveries=pending.get(snap.company.id, 0),
                        next_query_at=next_query,
                        stalled=bool(flight and flight.stalled),
                        action=decision.action,
                        capturing=flight is not None,
                        other_consumer=others.get(snap.company.id),
                    )
                )
        if product is None:  # products enabled without an engine: said, never left out
            result.extend(without_engine(self.ctx, company_id))
        return result

    def _next_pass(self, product: Product, now: datetime) -> datetime:
        background = self._background
        return background.next_pass(product, now) if background is not None else now


def _always() -> bool:
    return True


def stalled_reason(silent: float) -> str:
    minutes = max(1, int(silent // 60))
    return (
        f"Consulta travada: sem resposta há {minutes} min. As outras empresas continuam; esta só volta "
        "a ser consultada quando a chamada travada terminar (o tempo limite da conexão a encerra)."
    )
