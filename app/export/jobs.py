"""The routines this package adds to the capture service: ``service.add_job`` each of them
before ``start`` (``capture --daemon`` does; the desk's service is the lead's to wire)."""

from __future__ import annotations

from datetime import timedelta

from app.capture.jobs import Job
from app.core.clock import Clock
from app.export.automatic import export_job
from app.export.handoff import handoff_job
from app.store.db import Database


def service_jobs(db: Database, clock: Clock, *, at_least: timedelta | None = None) -> list[Job]:
    """``at_least``: the interval never shorter than that (the demo's sped-up clock would run
    them many times a second)."""
    if at_least is None:
        return [export_job(db, clock), handoff_job(db, clock)]
    return [export_job(db, clock, interval=at_least), handoff_job(db, clock, interval=at_least)]
