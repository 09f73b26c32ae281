"""The service on a virtual clock: the scheduler's jobs, run at their ticks, with time jumping.

``Simulation`` (and ``drive``, its one-call form) runs the same job functions as the background
scheduler, on the same grid of ticks (every job's interval from the start of the drive, the
23:00 Brasília check) plus the scheduler's wake-up pass the moment a company's wait ends, one
after the other in the calling thread (reproducible from the seeds). Between ticks the clock
jumps straight to the next moment a job has something due, or to the next timeline event: an
hour of waiting costs a few reads. A tick at which no job has anything due is skipped; the
scheduler would have run it and found nothing, so the decisions are the same. ``run_pending``
is one tick of it at the clock's now: how tests capture "what the sandbox has now" through the
same job table.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Final

from app.capture.engine.distribution import RunResult
from app.capture.jobs import Daily, Every, jobs_of
from app.capture.products import ProductCapture
from app.capture.service import CaptureService
from app.core.clock import Clock, FakeClock
from app.core.products import Product
from app.core.recovery import next_daily_run

Timeline = Sequence[tuple[datetime, Callable[[], object]]]


class _Default:
    pass


CYCLE: Final = _Default()  # max_step default: the smallest distribution cycle of the service


@dataclass
class DriveStats:
    """What a drive did; ``wall_seconds`` is real time spent."""

    start: datetime
    end: datetime | None = None
    steps: int = 0
    passes: int = 0
    runs: int = 0
    queries: int = 0
    documents: int = 0
    failures: int = 0
    events: int = 0
    wall_seconds: float = 0.0
    per_product: dict[Product, int] = field(default_factory=dict)  # queries


@dataclass
class _Job:
    name: str
    interval: timedelta | None  # None: daily at 23:00 Brasília
    next_tick: datetime
    run: Callable[[], None]
    due_at: Callable[[], datetime | None]
    forced: bool = True  # run at its next tick whatever due_at says
    exact: bool = False  # also runs the moment its due time comes (the scheduler's wake-up pass)
    last_run: datetime | None = None
    anchor: datetime | None = None  # the grid of ticks starts here (default: the drive's start)

    def should_run(self, now: datetime, due: datetime | None) -> bool:
        if self.next_tick <= now and (self.forced or (due is not None and due <= now)):
            return True
        newly_due = due is not None and due <= now and (self.last_run is None or due > self.last_run)
        return self.exact and newly_due

    def wake(self, origin: datetime, now: datetime, due: datetime | None) -> datetime | None:
        # A forced job (something changed) runs at its next tick, but an exact job's wake-up pass
        # still comes first when its due time is earlier: the scheduler sets that wake after every
        # pass whatever else happened (without it a company waited a whole cycle past its hour).
        if self.exact and due is not None and due > now:
            return min(due, self.tick_at_or_after(origin, due))
        if self.forced:
            return self.next_tick
        if due is None:
            return None
        return self.tick_at_or_after(origin, due)

    def tick_after(self, origin: datetime, instant: datetime) -> datetime:
        """The first tick strictly after ``instant``."""
        if self.interval is None:
            return next_daily_run(instant)
        origin = self.anchor or origin
        ticks = (instant - origin) // self.interval + 1
        return origin + ticks * self.interval

    def tick_at_or_after(self, origin: datetime, instant: datetime) -> datetime:
        if instant <= self.next_tick:
            return self.next_tick
        if self.interval is None:
            return next_daily_run(instant - timedelta(microseconds=1))
        origin = self.anchor or origin
        ticks = -((origin - instant) // self.interval)  # ceiling
        return origin + ticks * self.interval


class Simulation:
    """The service's job table (``app.capture.jobs``) on a virtual clock, in the calling thread.

    ``run_pending`` runs every job whose tick has come at the clock's now, as the scheduler does
    at that instant; ``run_until`` repeats it, jumping the clock from one due time to the next.
    Its jobs' ticks start at the clock's time when the simulation is made, like a service
    started then.
    """

    def __init__(
        self,
        target: CaptureService | ProductCapture,
        clock: Clock | None = None,
        *,
        max_step: timedelta | _Default | None = CYCLE,
    ) -> None:
        self.service = target if isinstance(target, CaptureService) else _service_for(target)
        self.clock = clock or self.service.ctx.clock
        self.origin = self.clock.now()
        self.stats = DriveStats(self.origin)
        self.jobs = _jobs(self.service, self.origin, self.stats)
        service = self.service
        self.max_step = min(service.cycle(p) for p in service.captures) if isinstance(max_step, _Default) else max_step

    def run_pending(self) -> datetime | None:
        """Run the jobs due at the clock's now (none twice at one instant); returns when the
        next one is due (a tick, a company's wait ending, a dispatch coming due)."""
        now = self.clock.now()
        self.stats.steps += 1
        dues: list[datetime | None] = []
        ran = False
        for job in self.jobs:
            due = job.due_at()
            if job.should_run(now, due):
                job.run()
                job.forced = False
                job.last_run = now
                ran = True
            if job.next_tick <= now:
                job.next_tick = job.tick_after(self.origin, now)
            dues.append(due)
        if ran:  # a job's work may change any job's due time (a Ciência queued, gaps found)
            dues = [job.due_at() for job in self.jobs]
        wakes = [job.wake(self.origin, now, due) for job, due in zip(self.jobs, dues, strict=True)]
        return min((when for when in wakes if when is not None), default=None)

    def changed(self) -> None:
        """Something outside the jobs happened (a publication, an outage, a user's request):
        every job looks again at its next tick whatever it had due."""
        for job in self.jobs:
            job.forced = True

    def run_until(
        self, until: datetime, *, timeline: Timeline | None = None, max_steps: int = 50_000_000
    ) -> DriveStats:
        """Run the jobs until ``until``; ``timeline`` actions fire at their times."""
        clock = self.clock
        if not isinstance(clock, FakeClock):
            raise TypeError("a simulation runs on a FakeClock")
        events = sorted(timeline or (), key=lambda item: item[0])
        started = time.perf_counter()
        index = 0
        for _ in range(max_steps):
            now = clock.now()
            while index < len(events) and events[index][0] <= now:
                events[index][1]()
                index += 1
                self.stats.events += 1
                self.changed()
            if now >= until:
                break
            wake = [until]
            next_due = self.run_pending()
            if next_due is not None:
                wake.append(next_due)
            if index < len(events):
                wake.append(events[index][0])
            step_to = min(wake)
            if self.max_step is not None:
                step_to = min(step_to, now + self.max_step)
            # Never back: a run that waited on the clock (the ADN's 1 s between lots, its 1-2-4 s
            # retries) has moved it past this step's ``now``.
            clock.set(max(step_to, now + timedelta(microseconds=1), clock.now()))
        else:
            raise RuntimeError("drive: max_steps reached before the end of the simulation")
        self.stats.end = clock.now()
        self.stats.wall_seconds += time.perf_counter() - started
        return self.stats


def drive(
    target: CaptureService | ProductCapture,
    clock: FakeClock,
    until: datetime,
    *,
    timeline: Timeline | None = None,
    max_step: timedelta | _Default | None = CYCLE,
    max_steps: int = 50_000_000,
) -> DriveStats:
    """Run the service's jobs on ``clock`` until ``until``; ``timeline`` actions fire at their times.

    ``max_step`` caps each jump (default: the smallest distribution cycle, like the scheduler's
    passes); ``None`` lets the clock jump straight to the next due time.
    """
    simulation = Simulation(target, clock, max_step=max_step)
    return simulation.run_until(until, timeline=timeline, max_steps=max_steps)


def run_pending(target: CaptureService | ProductCapture) -> DriveStats:
    """Run what is due at the clock's now, as a service started at this instant would: every
    product's distribution pass, the manifestation and recovery dispatches (tests: "capture
    what the sandbox has now"). The clock moves only as far as the calls make it."""
    simulation = Simulation(target)
    simulation.run_pending()
    simulation.stats.end = simulation.clock.now()
    return simulation.stats


def _jobs(service: CaptureService, origin: datetime, stats: DriveStats) -> list[_Job]:
    """The service's job table (``app.capture.jobs``) on the virtual clock's grid of ticks."""
    jobs = []
    for spec in jobs_of(service):
        if spec.product is not None:
            interval = spec.trigger.interval if isinstance(spec.trigger, Every) else None
            run = _pass(service, spec.product, stats)
            jobs.append(_Job(spec.name, interval, origin, run, spec.due_at or _never, exact=True))
        elif isinstance(spec.trigger, Daily):
            job = _Job(spec.name, None, next_daily_run(origin), _ignoring(spec.run), _never, forced=False)
            job.due_at = _ticking(job)  # no "due" of its own: it runs at every tick of its
            jobs.append(job)
        elif spec.due_at is None:
            first = origin + (spec.trigger.delay or spec.trigger.interval)
            job = _Job(spec.name, spec.trigger.interval, first, _ignoring(spec.run), _never, forced=False, anchor=first)
            job.due_at = _ticking(job)
            jobs.append(job)
        else:
            jobs.append(_Job(spec.name, spec.trigger.interval, origin, _ignoring(spec.run), spec.due_at))
    return jobs


def _ticking(job: _Job) -> Callable[[], datetime | None]:
    return lambda: job.next_tick


def _never() -> datetime | None:
    return None


def _ignoring(run: Callable[[], object]) -> Callable[[], None]:
    def call() -> None:
        run()

    return call


def _pass(service: CaptureService, product: Product, stats: DriveStats) -> Callable[[], None]:
    def run() -> None:
        stats.passes += 1
        for result in service.run_distribution(product).values():
            if isinstance(result, RunResult):
                stats.runs += 1
                stats.queries += result.queries
                stats.documents += result.documents
                stats.per_product[product] = stats.per_product.get(product, 0) + result.queries
            else:
                stats.failures += 1

    return run


def _service_for(capture: ProductCapture) -> CaptureService:
    return CaptureService(capture.ctx, captures={capture.product: capture}, workers=1)
