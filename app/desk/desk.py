"""The desk: one data folder's office, capture service and lock, behind one facade.

``open`` is slow (database migration, certificates, the demo's sandbox): call it off the GUI
thread. Every other method is a short read or a request, safe from any worker thread; none is
meant for the GUI thread. Notices from the capture (documents arrived, blocks, manifestation
results) reach ``subscribe``'s listeners on the thread that produced them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from app.capture.context import CaptureContext, CaptureNotice
from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.nfe.manifestation import ManifestationRefused, NfeManifestationService
from app.capture.office import Office
from app.capture.service import CaptureService
from app.core.clock import Clock
from app.core.errors import CapturaError
from app.core.manifestation import ManifestationState, manifestation_type
from app.core.products import Product
from app.desk import background, taker
from app.desk.files import write_atomic
from app.desk.grid import (
    GridCursor,
    KeyEventIndex,
    allowed_manifestations,
    document_rows,
    to_query,
)
from app.desk.pdfs import PdfCache
from app.desk.search import parse_search
from app.desk.views import (
    Alerts,
    CompanyLine,
    DocumentDetail,
    GridFilter,
    GridRow,
    ManifestationLine,
    ManifestationOutcome,
    ProductBadge,
    RelatedDocument,
)
from app.export.jobs import service_jobs
from app.store.grid import GridRepository
from app.store.records import Direction, DocumentStatus, GridQuery, ManifestationStatus, RowKind

if TYPE_CHECKING:
    from app.demo.environment import DemoEnvironment, DemoOptions

log = logging.getLogger(__name__)
RELATED_SHOWN = 200  # a CT-e may carry hundreds of NF-e: the detail looks up this many
Listener = Callable[[CaptureNotice], None]


class DeskError(CapturaError):
    """The desk cannot do that now (not open, read-only...)."""


@dataclass(frozen=True, slots=True)
class Opened:
    read_only: bool
    holder: str | None  # who captures here when read-only ("PID 123 em host, desde 14:05")
    message: str | None


class Desk:
    """Open with :meth:`open` (off the GUI thread), close with :meth:`close`.

    ``capture`` False opens the data read-only without trying to capture (the command line's
    reading commands); ``demo`` runs the demonstration (sandbox, demo companies, sped-up clock).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        clock: Clock | None = None,
        capture: bool = True,
        demo: DemoOptions | None = None,
        owner: str = "janela do Captura DF-e",
    ) -> None:
        self.data_dir = data_dir
        self._clock = clock
        self._capture = capture
        self._demo_options = demo
        self._owner = owner
        self._listeners: list[Listener] = []
        self._listeners_lock = threading.Lock()
        self._demo: DemoEnvironment | None = None
        self._office: Office | None = None
        self._ctx: CaptureContext | None = None
        self._service: CaptureService | None = None
        self._running = False
        self.opened: Opened | None = None

    # ------------------------------------------------------------------ lifecycle

    def open(self) -> Opened:
        """Open the data folder and, if it may, start capturing; slow: never on the GUI thread.
        A failure leaves nothing open (and raises, with the reason in Portuguese)."""
        if self.opened is not None:
            return self.opened
        try:
            return self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> Opened:
        if self._demo_options is not None:
            from app.demo.environment import DemoEnvironment

            demo = self._demo = DemoEnvironment(self.data_dir, self._demo_options, listeners=[self._notify])
            demo.start()
            assert demo.office is not None and demo.ctx is not None and demo.service is not None
            self._office, self._ctx, self._service = demo.office, demo.ctx, demo.service
            self._running = True
            self.opened = Opened(False, None, None)
        else:
            office = self._office = Office(self.data_dir, clock=self._clock)
            ctx = self._ctx = office.capture_context()
            ctx.listeners.append(self._notify)
            lock = DataFolderLock(office.data_dir, owner=self._owner) if self._capture else None
            self._service = CaptureService(ctx, data_lock=lock)
            for job in service_jobs(ctx.db, ctx.clock):  # automatic exports and the ERP hand-off
                self._service.add_job(job)
            self.opened = Opened(False, None, None)  # not capturing by choice: requests send themselves
            if lock is not None:
                try:
                    self._service.start()
                except AlreadyRunning as error:
                    self.opened = Opened(True, error.holder, error.message)
                else:
                    self._running = True
        self._grid = GridRepository(self.ctx.db)
        self._keys = KeyEventIndex(self._grid)
        self._keys.current(Product.NFE)  # built here, on the opening worker, not on the first page
        return self.opened

    def close(self, timeout: float = 30.0) -> None:
        """Stop capturing (runs in flight finish and commit) and close the folder; idempotent."""
        if self._demo is not None:
            self._demo.stop(timeout)
            self._demo = None
        else:
            if self._service is not None and self._running:
                self._service.stop(timeout)
            if self._office is not None:
                self._office.close()
        self._running = False
        self._service = None
        self._office = None
        self._ctx = None
        self.opened = None

    def __enter__(self) -> Desk:
        self.open()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def capturing(self) -> bool:
        """This desk runs the capture service (false when read-only)."""
        return self._running

    @property
    def ctx(self) -> CaptureContext:
        if self._ctx is None:
            raise DeskError("A pasta de dados não está aberta.")
        return self._ctx

    @property
    def read_only(self) -> bool:
        """Another process holds the data folder (and captures there)."""
        return self.opened is not None and self.opened.read_only

    @property
    def service(self) -> CaptureService | None:
        """The capture service (running only when :attr:`capturing`)."""
        return self._service

    @property
    def office(self) -> Office:
        if self._office is None:
            raise DeskError("A pasta de dados não está aberta.")
        return self._office

    def now(self) -> datetime:
        return self.ctx.clock.now()

    def products(self) -> tuple[Product, ...]:
        """The products this version captures (an engine exists for them)."""
        return tuple(self._service.captures) if self._service is not None else ()

    # ------------------------------------------------------------------ notices

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """``listener`` gets every notice (on the capture's threads); returns the unsubscribe."""
        with self._listeners_lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._listeners_lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def _notify(self, notice: CaptureNotice) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(notice)
            except Exception:  # a listener's bug never stops the capture
                log.exception("Falha ao entregar aviso da captura")

    # ------------------------------------------------------------------ companies and status

    def companies(self) -> list[CompanyLine]:
        """Every company with its certificate and a badge per configured product."""
        assert self._service is not None
        badges: dict[int, list[ProductBadge]] = {}
        for status in self._service.status():
            badges.setdefault(status.company_id, []).append(
                ProductBadge(
                    product=status.product,
                    action=status.action,
                    capturing=status.capturing,
                    until=status.until,
                    reason=status.reason,
                    last_cstat=status.last_cstat,
                    last_message=status.last_message,
                    documents_today=status.documents_today,
                    pending_recoveries=status.pending_recoveries,
                    next_query_at=status.next_query_at,
                    stalled=status.stalled,
                )
            )
        now = self.now()
        lines = []
        for company in self.ctx.companies.list_companies():
            # The capture's own certificate cache: a status refresh every few seconds decrypts nothing.
            not_after: datetime | None = None
            problem: str | None = None
            try:
                if not self.read_only:  # another process captures: its certificates, not this one's vault
                    not_after = self.ctx.certificates.get(company, now).not_after
            except CapturaError as error:
                not_after, problem = getattr(error, "not_after", None), error.message
            lines.append(
                CompanyLine(
                    company_id=company.id,
                    cnpj=company.cnpj.value,
                    name=company.name,
                    active=company.active,
                    certificate_not_after=not_after,
                    certificate_problem=problem,
                    badges=tuple(badges.get(company.id, ())),
                )
            )
        return lines

    def pause_all(self) -> int:
        """Pause every company's capture (kept in the database); ``app.desk.background``."""
        return background.pause_all(self.ctx, self._service)

    def resume_all(self) -> int:
        """Resume every capture the user paused; ``app.desk.background``."""
        return background.resume_all(self.ctx, self._service)

    def background_state(self) -> background.BackgroundState:
        return background.look(self)

    # ------------------------------------------------------------------ documents

    def cursor(self, grid: GridFilter) -> GridCursor:
        """A grid, read forwards page by page (``next_page``), counted on demand (``count``)."""
        query = to_query(grid)
        return GridCursor(query, self.ctx.documents, self._grid, self._keys.current(grid.product), self.now)

    def find_key(self, key: str, company_ids: tuple[int, ...] = ()) -> list[GridRow]:
        """Every row with this key (a document or its events alone), in every product."""
        found = parse_search(key)
        if found.access_key is None:
            raise DeskError(f"Chave de acesso inválida: {key!r} (NF-e e CT-e: 44 caracteres; NFS-e: 50).")
        rows: list[GridRow] = []
        for product in Product:
            cursor = self.cursor(GridFilter(product, company_ids=company_ids, search=found.access_key))
            rows += cursor.next_page(50)
        return rows

    def row(self, row: GridRow) -> GridRow:
        """The row as it is now (after a manifestation or a new version)."""
        if row.is_event_row:
            fresh = [r for r in self.find_key(row.access_key or "", (row.company_id,)) if r.product is row.product]
            return fresh[0] if fresh else row
        rows = document_rows(self.ctx.documents, self._grid, row.product, [row.row_id], self.now())
        return rows[0] if rows else row

    def detail(self, row: GridRow) -> DocumentDetail:
        ctx = self.ctx
        company = ctx.companies.get(row.company_id)
        key = row.access_key or ""
        events = tuple(ctx.events.for_key(row.company_id, row.product, key)) if key else ()
        if row.is_event_row:
            return DocumentDetail(row, company.name, company.cnpj.value, (), (), events, (), ())
        lines: list[ManifestationLine] = []
        allowed: tuple[str, ...] = ()
        if row.product is Product.NFE and key:
            for view in NfeManifestationService(ctx).view(row.company_id, key):
                request = view.request
                refused = request.status is ManifestationStatus.REJECTED and request.cstat is None
                counts = request.status is ManifestationStatus.REJECTED and not refused
                lines.append(
                    ManifestationLine(request, view.label, view.deadline, view.attempts.text if counts else "", refused)
                )
            facts = self._grid.event_facts(row.product, [(row.company_id, key)])[(row.company_id, key)]
            allowed = allowed_manifestations(row, facts, self.now())
        elif row.product is Product.NFSE and key:
            lines = list(taker.lines(self, row.company_id, key))
            allowed = taker.allowed(row, tuple(lines))
        return DocumentDetail(
            row,
            company.name,
            company.cnpj.value,
            tuple(ctx.documents.parties(row.row_id)),
            tuple(ctx.documents.versions(row.row_id)),
            events,
            tuple(lines),
            allowed,
            self._related(row),
        )

    def _related(self, row: GridRow) -> tuple[RelatedDocument, ...]:
        """The CT-e that moved an NF-e, or the NF-e a CT-e carries (this company's, when stored)."""
        other = {Product.NFE: Product.CTE, Product.CTE: Product.NFE}.get(row.product)
        if other is None:
            return ()
        found: list[RelatedDocument] = []
        for key in row.carried_keys[:RELATED_SHOWN]:
            rows = self.cursor(GridFilter(other, company_ids=(row.company_id,), search=key)).next_page(1)
            found.append(RelatedDocument(other, key, rows[0] if rows else None))
        return tuple(found)

    def xml(self, row: GridRow) -> bytes:
        """The stored XML, byte for byte as received (a key-event row: its latest event's)."""
        if row.is_event_row:
            return self.ctx.events.get_xml(-row.row_id)
        return self.ctx.documents.get_document_xml(row.row_id)

    def save_xml(self, row: GridRow, target: Path) -> int:
        """Write the row's XML, byte for byte as received, atomically; returns its size."""
        content = self.xml(row)
        write_atomic(target, content)
        return len(content)

    def pdf(self, row: GridRow) -> bytes:
        """The row's DANFE, DACTE or DANFSe (a resNFe: its summary page); slow: call from a worker.
        The DANFE is kept after its first rendering (``app.desk.pdfs``)."""
        if row.is_event_row:
            raise DeskError("Eventos não têm PDF: abra o documento a que o evento se refere.")
        key = row.access_key or ""
        events = [self.ctx.events.get_xml(e.id) for e in self.ctx.events.for_key(row.company_id, row.product, key)]
        return PdfCache(self.office.data_dir).pdf(row.product, key, self.xml(row), events)

    def save_pdf(self, row: GridRow, target: Path) -> int:
        """Write the row's PDF atomically (a network drive may be slow: from a worker)."""
        content = self.pdf(row)
        write_atomic(target, content)
        return len(content)

    def alerts(self, product: Product, company_ids: tuple[int, ...] = ()) -> Alerts:
        """Counts for the banner: cancelled after capture, deadlines within 5 days, quarantined."""
        now = self.now()
        soon = 0
        if product is Product.NFE:

            def due(days: int, state: ManifestationState) -> int:
                """Received NF-e in ``state`` whose ``days``-day deadline ends within 5 days."""
                query = GridQuery(
                    product,
                    company_ids,
                    issued_from=now - timedelta(days=days),
                    issued_to=now - timedelta(days=days - 5),
                    direction=Direction.RECEIVED,
                    row_kinds=(RowKind.SUMMARY, RowKind.COMPLETE),
                    statuses=(DocumentStatus.SUMMARY, DocumentStatus.AUTHORISED),
                    manifestation=state,
                )
                return self._grid.count(query)

            # Ciência within 10 days of authorisation, a conclusive event within 90 (protocol.md §3.7).
            soon = due(10, ManifestationState.NONE) + due(90, ManifestationState.CIENCIA)
        return Alerts(
            cancelled_after_capture=self._grid.cancelled_after_capture(product, company_ids),
            deadlines_within_5_days=soon,
            quarantined=self._grid.count_quarantined(product, company_ids),
        )

    # ------------------------------------------------------------------ requests

    def request_manifestation(
        self, company_id: int, key: str, tp_evento: str, justification: str | None = None
    ) -> ManifestationOutcome:
        """Queue a recipient manifestation and send it now if this desk may; never raises for a
        refusal: a request that cannot reach the service is refused here and recorded nowhere."""
        ctx = self.ctx
        label = manifestation_type(tp_evento).label
        company = ctx.companies.get(company_id)
        problem = ctx.certificates.problem(company, self.now())
        if problem is not None:
            return ManifestationOutcome(key, tp_evento, False, False, True, f"{label} não enviada: {problem}")
        service = NfeManifestationService(ctx)
        try:
            request = service.request(company_id, key, tp_evento, justification)
        except (ManifestationRefused, CapturaError) as error:
            return ManifestationOutcome(key, tp_evento, False, False, True, error.message)
        elsewhere = False
        if request.status is ManifestationStatus.PENDING:
            elsewhere = not self._send_pending(service, company_id)
        stored = ctx.manifestations.for_key(company_id, Product.NFE, request.access_key)
        final = next(m for m in stored if m.id == request.id)
        base = ManifestationOutcome(
            key, tp_evento, False, False, False, "", final.protocol, final.cstat, final, queued_elsewhere=elsewhere
        )
        if final.status is ManifestationStatus.ACCEPTED:
            answer = final.x_motivo or f"cStat {final.cstat}"
            text = f"{label} registrada: protocolo {final.protocol or '-'} ({answer})."
            return replace(base, accepted=True, message=text)
        if final.status is ManifestationStatus.REJECTED:
            reason = final.x_motivo or "sem motivo informado"
            if final.cstat is None:
                return replace(base, refused=True, message=f"{label} não enviada: {reason}")
            attempts = service.attempts(company, final.access_key, tp_evento, final.n_seq_evento, self.now()).text
            return replace(base, message=f"{label} rejeitada: {reason} ({attempts})", attempts=attempts)
        where = "o serviço de captura em execução a enviará" if elsewhere else "será enviada pelo serviço de captura"
        detail = f" Último resultado: {final.x_motivo}." if final.x_motivo else ""
        return replace(base, pending=True, message=f"{label} pendente: {where}.{detail}")

    def request_taker_manifestation(
        self, company_id: int, key: str, tp_evento: str, reason_code: str | None = None, reason: str | None = None
    ) -> ManifestationOutcome:
        """An NFS-e taker event (Confirmação or Rejeição do Tomador), only on the user's click."""
        return taker.request(self, company_id, key, tp_evento, reason_code, reason)

    def _send_pending(self, service: NfeManifestationService, company_id: int) -> bool:
        """Send a queued request now; False when another instance captures here (it sends)."""
        if self._running:
            assert self._service is not None
            self._service.dispatch_manifestations(Product.NFE, company_id=company_id)
            return True
        try:  # no service here: send it ourselves unless another instance captures (two senders could send twice)
            with DataFolderLock(self.office.data_dir, owner=f"{self._owner} (enviando uma manifestação)"):
                service.dispatch(company_id=company_id)
        except AlreadyRunning:
            return False
        return True

    def retry_quarantined(self, row: GridRow) -> str:
        """Ask the distribution again for an unreadable document's NSU (gap recovery)."""
        if not row.quarantined or row.nsu is None:
            raise DeskError("Só documentos em quarentena com NSU podem ser pedidos de novo.")
        self.ctx.recoveries.add(row.company_id, row.product, next_attempt_at=self.now(), nsus=(row.nsu,))
        return "Nova consulta deste NSU agendada: o documento será pedido de novo ao Ambiente Nacional."


def demo_options_for(speed: float | None = None) -> DemoOptions:
    """The demo's options (its own defaults, the clock's speed-up if given)."""
    from app.demo.environment import DemoOptions

    return DemoOptions() if speed is None else DemoOptions(speed=speed)
