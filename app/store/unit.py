"""A unit of work: everything one government answer changes, in ONE write transaction.

An answer moves the cursor, stores its lot, logs the call, archives the exchange, queues the
automatic Ciências and gap recoveries it causes and closes the run. Written one repository call
at a time that was seven transactions (each with its BEGIN IMMEDIATE, commit and pool round trip,
which cost more than SQLite's own work); here the engines compose them into one, which is also
the stronger guarantee: a crash leaves either all of it or none.

Used by the capture engines through ``CaptureContext.unit()``::

    with ctx.unit() as unit:
        stored = unit.store_lot(company_id, items)
        unit.save_state(transition.state)
        call_id = unit.log_call(record)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from app.core.cadence import OtherConsumer
from app.store.audit import archive_in, log_call_in
from app.store.carried import link_carried_in
from app.store.consumers import record_in as record_other_consumer_in
from app.store.cursors import release_lease_in, save_state_in
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.lots import mark_cancelled_in, store_lot_on
from app.store.manifestations import request_in, settle_in
from app.store.nfse import save_nfse_in
from app.store.records import (
    CallRecord,
    CaptureState,
    DocumentInput,
    EventInput,
    ManifestationStatus,
    NfseDetails,
    Product,
    RunStatus,
    StoredDocument,
    StoredEvent,
)
from app.store.recoveries import add_recoveries_in
from app.store.runs import finish_run_in, start_run_in


class Unit:
    """Write operations inside one open transaction; ``now`` is the transaction's instant.

    Every statement is a prepared one run on the sqlite3 connection of ``Database.write_driver``:
    no SQLAlchemy execution machinery per statement on the capture's hottest path.
    """

    def __init__(self, driver: Any, now: datetime) -> None:
        self._connection = driver
        self.now = now
        self.saved_states: set[int] = set()  # companies whose capture state this unit writes

    def store_lot(
        self, company_id: int, items: Sequence[DocumentInput | EventInput]
    ) -> list[StoredDocument | StoredEvent]:
        return store_lot_on(self._connection, company_id, items, self.now)

    def save_state(self, state: CaptureState) -> None:
        if state.ult_nsu < 0 or state.max_nsu < 0:
            raise InvalidRecord(f"NSU negativo no estado de captura: {state.ult_nsu}/{state.max_nsu}.")
        save_state_in(self._connection, state, self.now)
        self.saved_states.add(state.company_id)

    def release_answers_lease(self, product: Product) -> None:
        release_lease_in(self._connection, product)

    def log_call(self, call: CallRecord) -> int:
        return log_call_in(self._connection, call)

    def archive(
        self, service: str, company_id: int | None, call_id: int | None, request: bytes, response: bytes
    ) -> int:
        return archive_in(
            self._connection,
            service,
            request=request,
            response=response,
            company_id=company_id,
            call_id=call_id,
            now=self.now,
        )

    def start_run(
        self,
        job_type: str,
        trigger: str,
        *,
        company_id: int | None,
        product: Product | None,
        at: datetime | None = None,
        finished: tuple[RunStatus, str] | None = None,
    ) -> int:
        """A run row (``running``); ``at`` is when it began, when that was before this unit.
        ``finished`` (status, reason): the run also ends in this unit (one row written once)."""
        return start_run_in(
            self._connection,
            job_type,
            trigger,
            at or self.now,
            company_id=company_id,
            product=product,
            reason=finished[1] if finished else None,
            finished=(finished[0], self.now) if finished else None,
        )

    def finish_run(self, run_id: int, status: RunStatus, reason: str | None = None) -> None:
        finish_run_in(self._connection, run_id, status, self.now, reason)

    def request_manifestation(
        self,
        company_id: int,
        product: Product,
        access_key: str,
        tp_evento: str,
        *,
        not_before: datetime,
        automatic: bool = False,
    ) -> bool:
        return request_in(
            self._connection,
            company_id,
            product,
            access_key,
            tp_evento,
            self.now,
            not_before=not_before,
            automatic=automatic,
        )

    def settle_manifestation(
        self,
        manifestation_id: int,
        status: ManifestationStatus,
        *,
        cstat: str | None,
        x_motivo: str | None,
        protocol: str | None = None,
        result_xml: bytes | None = None,
        retry_at: datetime | None = None,
    ) -> None:
        """A sent request's answer: accepted (135/136/573), rejected, or back to pending at
        ``retry_at``; the engine adds the archive and the stored procEventoNFe of the same answer
        (its call log is committed on its own, right after the answer)."""
        settle_in(
            self._connection,
            manifestation_id,
            status,
            self.now,
            cstat=cstat,
            x_motivo=x_motivo,
            protocol=protocol,
            result_xml=result_xml,
            retry_at=retry_at,
        )

    def add_recoveries(
        self, company_id: int, product: Product, *, next_attempt_at: datetime, nsus: tuple[int, ...]
    ) -> int:
        return add_recoveries_in(
            self._connection, company_id, product, self.now, next_attempt_at=next_attempt_at, nsus=nsus
        )

    def record_other_consumer(self, company_id: int, product: Product, sighting: OtherConsumer) -> int:
        """Another system consumed this CNPJ (``app.store.consumers``), with the gaps it left."""
        return record_other_consumer_in(self._connection, company_id, product, sighting)

    def link_carried_nfe(self, company_id: int, cte_key: str, nfe_keys: Iterable[str]) -> int:
        """The NF-e keys a CT-e carries (``app.store.carried``)."""
        return link_carried_in(self._connection, company_id, cte_key, nfe_keys)

    def mark_cancelled(self, company_id: int, product: Product, keys: Iterable[str]) -> int:
        """Documents of these keys become CANCELLED (a registered cancellation event arrived)."""
        return mark_cancelled_in(self._connection, company_id, product, keys, now=self.now)

    def save_nfse(
        self, details: Sequence[tuple[int, NfseDetails]], substitutes: Sequence[tuple[int, str]] = ()
    ) -> None:
        """NFS-e details (and their delivery flag) by document id, substitute keys by event id."""
        save_nfse_in(self._connection, details, substitutes)


@contextmanager
def write_unit(db: Database) -> Iterator[Unit]:
    """One write transaction (``BEGIN IMMEDIATE``), committed when the block ends without error."""
    with db.write_driver() as driver:
        unit = Unit(driver, db.clock.now())
        yield unit
    db.state_marks.mark(unit.saved_states)  # after the commit (see StateMarks)
