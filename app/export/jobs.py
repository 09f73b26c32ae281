"""The routines this package adds to the capture service: ``service.add_job`` each of them
before ``start`` (``capture --daemon`` does; the desk's service is the lead's to wire)."""

from __future__ import annotations

from app.capture.jobs import Job
from app.core.clock import Clock
from app.export.automatic import export_job
from app.export.handoff import handoff_job
from app.store.db import Database


def service_jobs(db: Database, clock: Clock) -> list[Job]:
    return [export_job(db, clock), handoff_job(db, clock)]
