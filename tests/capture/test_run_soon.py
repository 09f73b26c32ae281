"""A routine asked to run now (``CaptureService.dispatch_soon``: a client's request was committed on
the office database) runs now, not at its interval; asked while it runs, it runs once more after,
since what it read may predate the request. Real scheduler, real time, conditions with deadlines."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.capture.jobs import Every, Job
from app.capture.service import CaptureService, ServiceIntervals
from tests.conftest import wait_until
from tests.support.fleet import Fleet, fleet

HOUR = timedelta(hours=1)
QUIET = ServiceIntervals(manifestation=HOUR, recovery=HOUR, watchdog=timedelta(seconds=1))


@pytest.fixture
def office_fleet(tmp_path: Path) -> Iterator[Fleet]:
    with fleet(tmp_path, 1) as f:
        yield f


class Routine:
    """A routine that holds its first run until ``release``."""

    def __init__(self) -> None:
        self.runs = 0
        self.entered = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            self.runs += 1
            first = self.runs == 1
        if first:
            self.entered.set()
            assert self.release.wait(20)
        return self.runs


def test_a_routine_asked_for_runs_now_and_once_more_when_asked_during_its_run(office_fleet: Fleet) -> None:
    service = CaptureService(office_fleet.ctx, intervals=QUIET)
    routine = Routine()
    service.add_job(Job("teste", "Rotina de teste", Every(HOUR, delay=HOUR), routine))
    service.start()
    try:
        background = service._background
        assert background is not None
        background.run_soon("teste")  # its interval and first delay are an hour: only this runs it
        assert routine.entered.wait(20)
        background.run_soon("teste")  # during the run: once more after it
        background.run_soon("teste")  # (asked twice: still once)
        routine.release.set()
        wait_until(lambda: routine.runs == 2, timeout=20)
        background.run_soon("absent")  # no such routine: nothing, no error
        wait_until(lambda: not any(r.status == "running" for r in office_fleet.ctx.runs.recent()), timeout=20)
        assert routine.runs == 2
        assert [r.job_type for r in office_fleet.ctx.runs.recent()].count("teste") == 2
    finally:
        service.stop(timeout=10)
