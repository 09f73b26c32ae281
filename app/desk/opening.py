"""The desk's opening in two steps: the store first, then the capture.

The window's first rows need only the store (the database, the grid's reads, the key-event
index): ``open_store``. The capture (the office, its certificates and HTTP clients, the service,
the node) is what makes a cold start slow (its imports: the protocols, the schedulers, the
certificates' cryptography): ``start_capture`` runs after, on the same worker, and imports it
only then. Nothing here starts capturing before ``start_capture``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.clock import Clock, SystemClock
from app.desk import key_snapshot, office_database
from app.desk.grid import KeyEventIndex
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.documents import DocumentRepository
from app.store.grid import GridRepository

if TYPE_CHECKING:
    from app.capture.context import CaptureContext, CaptureNotice
    from app.capture.instance import AlreadyRunning
    from app.capture.node import CaptureNode, LeaseTiming
    from app.capture.office import Office
    from app.capture.service import CaptureService
    from app.desk.presence_beat import PresenceBeat


@dataclass(frozen=True, slots=True)
class StoreSide:
    """What the grids read: one database, its clock, the grid's repositories and key-event index."""

    db: Database
    clock: Clock
    documents: DocumentRepository
    grid: GridRepository
    keys: KeyEventIndex
    companies: CompanyRepository


def store_side(db: Database, clock: Clock, data_dir: Path) -> StoreSide:
    """The grid's reads over an open database (the key-event index restored or built)."""
    grid, companies = GridRepository(db), CompanyRepository(db)
    ids = {c.id for c in companies.list_companies()}  # saved between openings:
    keys = key_snapshot.open_index(grid, data_dir, db, ids)
    return StoreSide(db, clock, DocumentRepository(db), grid, keys, companies)


def open_store(data_dir: Path, database: str | None, clock: Clock | None) -> StoreSide:
    """Open (and migrate) the data folder's database, or the office server chosen for it."""
    from app.config.paths import database_path, ensure_data_dir

    data_dir = ensure_data_dir(data_dir)
    target = database or office_database.target(data_dir) or database_path(data_dir)  # None: the SQLite file
    clock = clock or SystemClock()
    db = open_database(target, clock=clock)
    try:
        return store_side(db, clock, data_dir)
    except BaseException:
        db.close()
        raise


@dataclass(frozen=True, slots=True)
class CaptureSide:
    office: Office
    ctx: CaptureContext
    service: CaptureService
    node: CaptureNode | None
    refusal: AlreadyRunning | None  # another workstation captures: this one stands by
    beat: PresenceBeat | None


def start_capture(
    data_dir: Path,
    store: StoreSide,
    notify: Callable[[CaptureNotice], None],
    *,
    capture: bool,
    owner: str,
    lease: LeaseTiming | None,
) -> CaptureSide:
    """The office over the store's database, its capture service (automatic exports and the ERP
    hand-off as jobs) and, with ``capture``, the office's node: capturing with the lease,
    standing by without (then this workstation beats its presence)."""
    from app.capture.node import node_identity
    from app.capture.office import Office
    from app.capture.service import CaptureService
    from app.desk.nodes import start_node
    from app.desk.presence_beat import PresenceBeat
    from app.export.jobs import service_jobs

    office = Office(data_dir, clock=store.clock, db=store.db)
    ctx = office.capture_context()
    ctx.listeners.append(notify)
    service = CaptureService(ctx)
    for job in service_jobs(ctx.db, ctx.clock):
        service.add_job(job)
    if not capture:  # not capturing by choice: requests send themselves
        return CaptureSide(office, ctx, service, None, None, None)
    started = start_node(service, office, owner, lease)
    beat = None
    if started.refusal is not None:
        beat = PresenceBeat(office.db, node_identity(data_dir), lease).start()
    return CaptureSide(office, ctx, service, started.node, started.refusal, beat)
