"""Automatic export: every active profile takes what arrived since its watermark, queues what it
wants and is deliverable, and writes its queue. A destination that fails keeps its queue (in
the store, so across restarts too) and is tried again later, 1 minute after the first failure
and up to an hour apart. A single file another program holds open (Windows) waits alone, with
the same backoff, while the profile goes on with everything else.

:func:`export_job` is the capture service's job (``CaptureService(extra_jobs=[...])``): the
capture never imports this package.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.capture.jobs import Every, Job
from app.config.files import write_atomic
from app.core.clock import Clock
from app.core.retries import EXPORT_RETRY
from app.export.items import ExportItem, ItemSource
from app.export.rules import deliverable
from app.export.writer import Exporter, ExportWriteFailed, Remover, Writer, is_cancellation, remove_file, wants
from app.store.db import Database
from app.store.exports import DOCUMENT, EVENT, ExportRepository
from app.store.records import ExportProfile

log = logging.getLogger(__name__)

INTERVAL = timedelta(minutes=1)
BATCH = 500


def retry_delay(failures: int) -> timedelta:
    """1, 2, 4... minutes, at most an hour, for the ``failures``-th failure in a row (from 1)."""
    return EXPORT_RETRY.delay(failures)


@dataclass
class ProfileRun:
    profile: str
    queued: int = 0
    written: int = 0
    failed: str | None = None
    files: int = 0  # files written (a document may bring its PDF or its cancellation)


class AutomaticExport:
    """Runs every active profile once: ``run()`` (the job) or ``run_profile(profile)``."""

    def __init__(
        self, db: Database, clock: Clock, *, write: Writer = write_atomic, remove: Remover = remove_file
    ) -> None:
        self.db = db
        self.clock = clock
        self.repo = ExportRepository(db)
        self._write = write
        self._remove = remove
        # Queue rows whose file was in use: (not before, failures in a row). In memory: a restart
        # simply tries them at once.
        self._held: dict[int, tuple[datetime, int]] = {}

    def run(self) -> list[ProfileRun]:
        now = self.clock.now()
        runs = []
        for profile in self.repo.profiles(active_only=True):
            if profile.next_attempt_at is not None and profile.next_attempt_at > now:
                continue  # failing: its retry is not due yet; its queue waits in the store
            runs.append(self.run_profile(profile))
        return runs

    def next_due_at(self) -> datetime | None:
        return None  # every tick: new arrivals are only seen by reading the stream

    def run_profile(self, profile: ExportProfile) -> ProfileRun:
        source = ItemSource(self.db)
        result = ProfileRun(profile.name)
        result.queued = self._take_arrivals(profile, source)
        self._drain(profile, source, result)
        return result

    def _take_arrivals(self, profile: ExportProfile, source: ItemSource) -> int:
        watermark, queued = profile.watermark, 0
        while True:
            arrived = self.repo.arrived_after(watermark, BATCH)
            if not arrived:
                return queued
            entries: list[tuple[str, int]] = []
            for arrival in arrived:
                if arrival.document_id is not None:
                    entries.append((DOCUMENT, arrival.document_id))
                elif arrival.event_id is not None:
                    entries.append((EVENT, arrival.event_id))
            items = source.load_many(entries, with_xml=False)
            wanted = [entry for entry in entries if self._keeps(profile, source, items[entry])]
            # A cancellation re-exports its document: moved to Canceladas, or the event beside it.
            cancelled = [
                (DOCUMENT, item.document.id)
                for item in (items[entry] for entry in wanted if entry[0] == EVENT)
                if item is not None and is_cancellation(item) and item.document is not None
            ]
            documents = source.load_many(cancelled, with_xml=False)
            wanted += [entry for entry in cancelled if self._keeps(profile, source, documents[entry])]
            watermark = arrived[-1].item_id
            queued += self.repo.enqueue(profile.id, wanted, watermark)

    def _keeps(self, profile: ExportProfile, source: ItemSource, item: ExportItem | None) -> bool:
        return item is not None and self._should_write(profile, source, item)

    @staticmethod
    def _should_write(profile: ExportProfile, source: ItemSource, item: ExportItem) -> bool:
        return wants(profile, item) and deliverable(item, source.settings(item.company.id, item.product))

    def _drain(self, profile: ExportProfile, source: ItemSource, result: ProfileRun) -> None:
        exporter = Exporter(profile, write=self._write, remove=self._remove, sleep=self.clock.sleep)
        waiting: set[int] = set()  # rows held back this run (a file in use)
        paused = False  # the destination refused something else: the whole profile waits
        while True:
            now = self.clock.now()
            queued = [
                entry
                for entry in self.repo.queued(profile.id, limit=len(waiting) + 200)
                if entry.id not in waiting and not self._still_held(entry.id, now, waiting)
            ]
            if not queued:
                return
            done: list[int] = []
            gone: list[int] = []
            loaded = source.load_many([(entry.item_type, entry.item_id) for entry in queued])
            for entry in queued:
                item = loaded[(entry.item_type, entry.item_id)]
                if item is None or not self._should_write(profile, source, item):
                    gone.append(entry.id)
                    self._held.pop(entry.id, None)
                    continue
                events = self._events_of(source, item)
                try:
                    report = exporter.export(item, events)
                except ExportWriteFailed as error:
                    self.repo.written(profile.id, done, clear_error=result.failed is None)
                    self.repo.drop(profile.id, gone)
                    if error.in_use:
                        self._hold(profile, entry.id, error, result)
                        waiting.add(entry.id)
                        done, gone = [], []
                        continue
                    self._failed(profile, entry.id, entry.attempts, error, result)
                    paused = True
                    if error.destination_down:
                        return
                    done, gone = [], []
                    continue
                self._held.pop(entry.id, None)
                done.append(entry.id)
                result.written += 1
                result.files += len(report.written)
            self.repo.written(profile.id, done, clear_error=result.failed is None)
            self.repo.drop(profile.id, gone)
            if paused:
                return  # the failing rows stay queued: the retry takes them up

    def _still_held(self, queue_id: int, now: datetime, waiting: set[int]) -> bool:
        held = self._held.get(queue_id)
        if held is None or held[0] <= now:
            return False
        waiting.add(queue_id)
        return True

    def _hold(self, profile: ExportProfile, queue_id: int, error: ExportWriteFailed, result: ProfileRun) -> None:
        """One file in use: that row waits (1, 2, 4... minutes), the profile is not paused."""
        failures = self._held.get(queue_id, (self.clock.now(), 0))[1] + 1
        retry_at = self.clock.now() + retry_delay(failures)
        self._held[queue_id] = (retry_at, failures)
        message = f"{error.message} Nova tentativa desse arquivo às {retry_at:%H:%M} (UTC); os demais seguem."
        # next_attempt_at = now: the profile itself stays due at every tick.
        self.repo.failed(profile.id, queue_id, message, self.clock.now())
        result.failed = message
        log.warning("perfil de exportação %s: %s", profile.name, message)

    @staticmethod
    def _events_of(source: ItemSource, item: ExportItem) -> list[ExportItem]:
        if item.event is not None or item.document is None or item.document.status.value != "cancelled":
            return []
        records = source.events.for_key(item.company.id, item.product, item.access_key)
        return [source.event(r.id) for r in records]

    def _failed(
        self, profile: ExportProfile, queue_id: int, attempts: int, error: ExportWriteFailed, result: ProfileRun
    ) -> None:
        retry_at = self.clock.now() + retry_delay(attempts + 1)
        message = f"{error.message} Nova tentativa às {retry_at:%H:%M} (UTC); nada da fila foi perdido."
        self.repo.failed(profile.id, queue_id, message, retry_at)
        result.failed = message
        log.warning("perfil de exportação %s: %s", profile.name, message)


def export_job(db: Database, clock: Clock, *, interval: timedelta = INTERVAL) -> Job:
    """The automatic export as one of the capture service's scheduled jobs."""
    exports = AutomaticExport(db, clock)

    def run() -> str:  # the runs table keeps this line as the run's reason
        return "; ".join(summary(r) for r in exports.run()) or "nenhum perfil devido"

    return Job("exportacao", "Exportação automática de XML", Every(interval), run)


def summary(run: ProfileRun) -> str:
    text = f"{run.profile}: {run.written} item(ns), {run.files} arquivo(s)"
    return text + (f"; falha: {run.failed}" if run.failed else "")
