"""The service on the real clock: APScheduler 3 jobs that hand work to the company workers.

The scheduler's jobs are short: a distribution pass asks the engine which companies are due and
submits each to a pool of ``workers`` threads (the engine's per-CNPJ lock keeps two runs of one
CNPJ apart); dispatches and daily routines go to a one-thread routine pool. So ``stop`` can bound
its wait, and a stalled company blocks one worker, which the watchdog then abandons.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from apscheduler.executors.pool import ThreadPoolExecutor as JobExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import SchedulerNotRunningError
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from apscheduler.triggers.interval import IntervalTrigger

from app.capture.context import CaptureNotice
from app.capture.jobs import Daily, JobHost, Trigger, jobs_of
from app.capture.memory import trim_heap
from app.capture.watchdog import ClockWatch, Flight, FlightTable
from app.core.clock import BRASILIA
from app.core.products import Product
from app.core.recovery import DAILY_RUN_AT, next_daily_run
from app.store.errors import StorageUnavailable
from app.store.lease import LeaseLost

log = logging.getLogger(__name__)

# A job late by up to an hour (a busy or briefly suspended machine) still runs, once: coalescing
# folds every missed run into one. The interval jobs' last missed run is always within one cycle
# of the wake-up, so after any sleep they run at once; the cadence then decides each company.
MISFIRE_GRACE_SECONDS = 3600
# The 23:00 gap check runs on the next morning's wake-up after a night asleep (``Daily``'s
# grace); it covers 3 days, so a check skipped by a longer absence loses nothing.
_FLOOR = 0.05  # seconds: the shortest interval a sped-up clock can ask of the scheduler


class ServiceHost(JobHost, Protocol):
    """What the scheduler needs of the service besides the jobs (no import of the service)."""

    workers: int
    rate: float
    flights: FlightTable
    passes: dict[Product, int]
    may_query: Callable[[], bool]  # False: the node is offline or its lease in doubt, no job works
    on_storage_lost: Callable[[StorageUnavailable], None] | None

    @property
    def running(self) -> bool: ...

    def submit(self, product: Product, company_id: int, trigger: str = ...) -> bool: ...

    def on_clock_jump(self, jump: timedelta) -> None: ...

    def on_stalled(self, flight: Flight, silent: float) -> None: ...


class BackgroundJobs:
    """One started service's scheduler, worker pools and watchdog."""

    def __init__(self, service: ServiceHost) -> None:
        self.service = service
        self._lock = threading.Lock()
        self._pool = self._new_pool()
        self._routines = ThreadPoolExecutor(1, thread_name_prefix="captura-rotinas")
        self._abandoned: list[ThreadPoolExecutor] = []
        self._routine_futures: dict[str, Future[None]] = {}
        self._working: set[str] = set()  # routines inside their work now
        self._again: set[str] = set()  # of those, the ones asked to run (run_soon) meanwhile
        self._wakes: dict[Product, tuple[str, datetime]] = {}  # pending extra pass: job id, real time
        self._wake_count = 0
        # The scheduler's own jobs in flight (they only submit work): ``stop`` waits for them
        # itself, because APScheduler's shutdown(wait=True) holds its job-store lock while it
        # waits, and a distribution job setting its wake-up needs that lock (a deadlock).
        self._closing = threading.Event()
        self._active_jobs = 0
        self._jobs_idle = threading.Condition()
        intervals = service.intervals
        self._watch = ClockWatch(
            service.ctx.clock,
            interval=intervals.watchdog.total_seconds(),
            tolerance=intervals.jump_tolerance,
            rate=service.rate,
        )
        # The job store is in memory on purpose: every durable fact (cursors, waits, pending
        # manifestations and recoveries) is in our own database, and the jobs are rebuilt from
        # it at each start, so nothing the scheduler could persist would be news.
        self._scheduler = BackgroundScheduler(
            jobstores={"default": MemoryJobStore()},
            executors={"default": JobExecutor(max_workers=3)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": MISFIRE_GRACE_SECONDS},
            timezone=BRASILIA,
        )

    def _new_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(self.service.workers, thread_name_prefix="captura-empresa")

    def _every(self, interval: timedelta, *, scaled: bool = True) -> IntervalTrigger:
        seconds = interval.total_seconds() / (self.service.rate if scaled else 1.0)
        return IntervalTrigger(seconds=max(_FLOOR, seconds), timezone=BRASILIA)

    def _tracked(self, job: Callable[..., None]) -> Callable[..., None]:
        def run(*args: Any) -> None:
            with self._jobs_idle:
                if self._closing.is_set():
                    return
                self._active_jobs += 1
            try:
                job(*args)
            finally:
                with self._jobs_idle:
                    self._active_jobs -= 1
                    self._jobs_idle.notify_all()

        return run

    def start(self) -> None:
        service = self.service
        real_now = datetime.now(BRASILIA)
        add = self._scheduler.add_job
        distribution, routine = self._tracked(self._distribution), self._tracked(self._routine)
        watchdog = self._tracked(self._watchdog)
        for job in jobs_of(service):
            if job.product is not None:
                add(
                    distribution,
                    self._trigger(job.trigger, real_now),
                    args=[job.product],
                    id=job_id(job.product),
                    name=job.label,
                    next_run_time=real_now,
                )
            else:
                # A daily routine may run late within its grace; a periodic one starts after its delay.
                timing: dict[str, Any] = (
                    {"misfire_grace_time": int(job.trigger.grace.total_seconds())}
                    if isinstance(job.trigger, Daily)
                    else {"next_run_time": real_now + job.trigger.delay / service.rate}
                )
                add(
                    routine,
                    self._trigger(job.trigger, real_now),
                    args=[job.name, job.run],
                    id=job.name,
                    name=job.label,
                    **timing,
                )
        add(watchdog, self._every(service.intervals.watchdog, scaled=False), id="vigia", name="Vigia")
        self._scheduler.start()

    def _trigger(self, trigger: Trigger, real_now: datetime) -> BaseTrigger:
        if isinstance(trigger, Daily):
            return self._daily_trigger(real_now)
        return self._every(trigger.interval)

    def _daily_trigger(self, real_now: datetime) -> BaseTrigger:
        if self.service.rate == 1.0:
            return CronTrigger(hour=DAILY_RUN_AT.hour, minute=DAILY_RUN_AT.minute, timezone=BRASILIA)
        # A sped-up clock (demo): 23:00 of the clock's day, every clock day.
        now = self.service.ctx.clock.now()
        first = real_now + (next_daily_run(now) - now) / self.service.rate
        return IntervalTrigger(seconds=max(_FLOOR, 86400 / self.service.rate), start_date=first, timezone=BRASILIA)

    # ------------------------------------------------------------------ jobs

    def _distribution(self, product: Product) -> None:
        if not self.service.may_query():  # the node's database unreachable: not even a look at who is due
            return
        try:
            self._pass(product)
        except StorageUnavailable as error:  # it went away during the look
            self._postponed(job_id(product), error)

    def _postponed(self, name: str, error: StorageUnavailable) -> None:
        """A job the database's absence interrupted: said without a traceback (no bug of ours),
        and the node told (it stops every query and waits for the server)."""
        log.warning("Rotina %s adiada: %s", name, error)
        if self.service.on_storage_lost is not None:
            self.service.on_storage_lost(error)

    def _pass(self, product: Product) -> None:
        service = self.service
        distribution = service.captures[product].distribution
        now = service.ctx.clock.now()
        for company in distribution.due(now):
            if not service.submit(product, company.id) and not service.running:
                return
        with self._lock:
            service.passes[product] += 1
        planned = distribution.planned_next(after=now)
        if planned is not None:
            self._wake(product, planned, now)

    def _wake(self, product: Product, planned: datetime, now: datetime) -> None:
        """An extra pass when the next company is due, if that comes before the next cycle: a
        wait ends on time (the 61-minute latency) instead of up to a cycle late."""
        if self._closing.is_set():
            return
        real_now = datetime.now(BRASILIA)
        at = real_now + (planned - now) / self.service.rate
        job = self._scheduler.get_job(job_id(product))
        if job is None or job.next_run_time is None or at >= job.next_run_time:
            return  # the regular pass comes first
        with self._lock:
            pending = self._wakes.get(product)
            if pending is not None and real_now < pending[1] <= at:
                return  # an earlier wake is already set
            self._wake_count += 1
            wake_id = f"{job_id(product)}-despertar-{self._wake_count}"
            self._wakes[product] = (wake_id, at)
        try:
            # Unique ids: the scheduler removes a fired date job itself, never a newer one.
            self._scheduler.add_job(
                self._tracked(self._distribution), DateTrigger(at, timezone=BRASILIA), args=[product], id=wake_id
            )
            if pending is not None:
                self._scheduler.remove_job(pending[0])
        except (JobLookupError, SchedulerNotRunningError):
            pass  # the old wake already fired, or the service is stopping

    def _routine(self, name: str, work: Callable[[], Any]) -> None:
        if not self.service.may_query():  # as a pass: the routine runs at its next tick
            return
        with self._lock:
            previous = self._routine_futures.get(name)
            if previous is not None and not previous.done():
                return  # still running: one at a time, like max_instances=1
            try:
                self._routine_futures[name] = self._routines.submit(self._guarded, name, work)
            except RuntimeError:
                return  # stopping

    def _guarded(self, name: str, work: Callable[[], Any]) -> None:
        with self._lock:
            self._working.add(name)
        while True:
            try:
                work()
            except LeaseLost as error:  # another workstation captures now: the node stands by
                log.warning("Rotina %s não gravada: %s", name, error)
            except StorageUnavailable as error:  # the database went away: the node waits for it
                self._postponed(name, error)
            except Exception as error:
                log.exception("Falha na rotina %s", name)
                self.service.ctx.notify(CaptureNotice("alert", None, None, f"Falha na rotina {name}: {error}"))
            with self._lock:
                if name not in self._again or self._closing.is_set():
                    self._working.discard(name)
                    self._again.discard(name)
                    return
                self._again.discard(name)  # asked for while it ran: what it read may predate the request

    def _watchdog(self) -> None:
        if self.service.ctx.http.release_idle():  # idle companies' TLS clients: ~60 kB each, all day
            trim_heap()
        jump = self._watch.check()
        if jump is not None:
            self.service.on_clock_jump(jump)
        stalled = self.service.flights.newly_stalled()
        if not stalled:
            return
        # A Python thread cannot be killed: the stalled run keeps its worker (and its CNPJ lock)
        # until its call returns. The others get a fresh pool; runs still queued in the old one
        # are cancelled and come back on the next pass.
        with self._lock:
            old, self._pool = self._pool, self._new_pool()
            self._abandoned.append(old)
        old.shutdown(wait=False, cancel_futures=True)
        for flight, silent in stalled:
            self.service.on_stalled(flight, silent)

    def run_soon(self, *names: str) -> None:
        """The routines ``names`` run now instead of at their next interval (a client's request
        arrived: app.capture.node); one at a time still, as every routine."""
        for name in names:
            with self._lock:
                if name in self._working:
                    self._again.add(name)  # it runs once more when this run ends
                    continue
            try:
                self._scheduler.modify_job(name, next_run_time=datetime.now(BRASILIA))
            except (JobLookupError, SchedulerNotRunningError):
                pass  # stopping, or a service without that job

    # ------------------------------------------------------------------ service side

    def submit(self, flight: Flight, work: Callable[[], None]) -> bool:
        with self._lock:
            try:
                future = self._pool.submit(work)
            except RuntimeError:
                return False
        flight.future = future
        future.add_done_callback(lambda _f: self.service.flights.drop(flight))
        return True

    def next_pass(self, product: Product, now: datetime) -> datetime:
        """The clock time of ``product``'s next distribution pass."""
        job = self._scheduler.get_job(job_id(product))
        if job is None or job.next_run_time is None:
            return now
        next_run: datetime = job.next_run_time
        ahead = max(timedelta(0), next_run - datetime.now(UTC))
        return now + ahead * self.service.rate

    def stop(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._jobs_idle:
            self._closing.set()
        self._scheduler.shutdown(wait=False)
        with self._jobs_idle:  # its jobs only submit work: this is quick
            self._jobs_idle.wait_for(lambda: self._active_jobs == 0, timeout=max(0.0, deadline - time.monotonic()))
        with self._lock:
            pools = [self._pool, self._routines, *self._abandoned]
            pending: list[Future[None]] = [f for f in self._routine_futures.values() if not f.done()]
        for pool in pools:
            pool.shutdown(wait=False, cancel_futures=True)  # queued work is dropped, running work ends
        pending += self.service.flights.futures()
        # A future cancelled in the queue never reaches the state ``wait`` counts as done.
        running = [f for f in pending if not f.cancelled()]
        _done, not_done = wait(running, timeout=max(0.0, deadline - time.monotonic()))
        return not not_done


def job_id(product: Product) -> str:
    return f"distribuicao-{product.value}"
