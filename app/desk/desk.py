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
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from app.config.settings import Settings
from app.core.clock import Clock
from app.core.ids import Cnpj
from app.core.products import Product
from app.core.subscribers import Subscribers
from app.desk import background, fetching, live
from app.desk.alerts import alerts
from app.desk.companies import CompanyAdmin, company_lines
from app.desk.dashboard import Dashboard
from app.desk.document_reads import DocumentReads
from app.desk.errors import DeskError
from app.desk.exports import Exports
from app.desk.fetching import FetchOutcome, product_of
from app.desk.grid import GridCursor, to_query
from app.desk.handoff import Handoffs
from app.desk.opening import StoreSide, open_store, start_capture, store_side
from app.desk.search import parse_search
from app.desk.views import (
    Alerts,
    CompanyLine,
    GridFilter,
    GridRow,
    ManifestationOutcome,
)
from app.store.records import Company

if TYPE_CHECKING:  # the capture's modules load when it starts (``app.desk.opening``), after the first rows
    from app.capture.context import CaptureContext, CaptureNotice
    from app.capture.node import CaptureNode, LeaseTiming
    from app.capture.office import Office
    from app.capture.service import CaptureService
    from app.demo.environment import DemoEnvironment, DemoOptions
    from app.desk.capturing import CaptureRounds
    from app.desk.manifesting import Manifestations
    from app.desk.nodes import NodeView
    from app.desk.presence_beat import PresenceBeat

log = logging.getLogger(__name__)
Listener = Callable[["CaptureNotice"], None]
OPENING_WAIT_S = 300.0  # a read needing the capture waits this long for the opening under way
P = TypeVar("P")


@dataclass(frozen=True, slots=True)
class Opened:
    read_only: bool
    holder: str | None  # who captures here when read-only ("PID 123 em host, desde 14:05")
    message: str | None


class Desk(DocumentReads):
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
        database: str | None = None,
        lease: LeaseTiming | None = None,
    ) -> None:
        """``database``: the office server's URL (None: the data folder's SQLite file);
        ``lease``: the capture node's lease times (tests shorten them)."""
        self.data_dir = data_dir
        self._database = database
        self._lease = lease
        self._node: CaptureNode | None = None
        self._beat: PresenceBeat | None = None  # a window without a node is connected to the office too
        self._clock = clock
        self._capture = capture
        self._demo_options = demo
        self._owner = owner
        self._listeners: Subscribers[CaptureNotice] = Subscribers("Falha ao entregar aviso da captura")
        self._demo: DemoEnvironment | None = None
        self._office: Office | None = None
        self._ctx: CaptureContext | None = None
        self._service: CaptureService | None = None
        self._running = False
        self._admin: CompanyAdmin | None = None
        self._dashboard: Dashboard | None = None
        self._exports: Exports | None = None
        self._handoff: Handoffs | None = None
        self._rounds: CaptureRounds | None = None
        self._store: StoreSide | None = None
        self._settled = threading.Event()  # the opening ended (opened, failed or closed)
        self.opened: Opened | None = None

    # ------------------------------------------------------------------ lifecycle

    def open_store(self) -> None:
        """The first step of :meth:`open`, alone: the database and the grid's reads, usable before
        the capture starts (the window's first rows); slow: off the GUI thread. The capture's
        reads wait for :meth:`open`, which the caller runs next (the demo opens all at once)."""
        if self._store is not None:
            return
        if self._demo_options is not None:
            self.open()
            return
        self._settled.clear()
        self._store = open_store(self.data_dir, self._database, self._clock)

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
        finally:
            self._settled.set()

    def _open(self) -> Opened:
        if self._demo_options is not None:
            from app.demo.environment import DemoEnvironment

            demo = self._demo = DemoEnvironment(self.data_dir, self._demo_options, listeners=[self._notify])
            demo.start()
            assert demo.office is not None and demo.ctx is not None and demo.service is not None
            self._office, self._ctx, self._service = demo.office, demo.ctx, demo.service
            self._store = store_side(demo.ctx.db, demo.ctx.clock, self.data_dir)
            self._running = True
            opened = Opened(False, None, None)
        else:
            self.open_store()
            assert self._store is not None
            side = start_capture(
                self.data_dir, self._store, self._notify, capture=self._capture, owner=self._owner, lease=self._lease
            )  # fmt: skip
            self._office, self._ctx, self._service, self._node, self._beat = (
                side.office, side.ctx, side.service, side.node, side.beat
            )  # fmt: skip
            refused = side.refusal
            opened = Opened(False, None, None) if refused is None else Opened(True, refused.holder, refused.message)
        self._parts()
        self.opened = opened
        return opened

    def _parts(self) -> None:
        from app.desk.capturing import CaptureRounds
        from app.desk.manifesting import Manifestations
        from app.desk.nodes import sender_for

        assert self._service is not None and self._office is not None and self._ctx is not None
        capturing = self._capturing_now
        self._sender = sender_for(self._ctx.db, self.data_dir, self._owner, capturing, self._node)
        self._manifestations = Manifestations(self._ctx, self._service, self._sender)
        self._admin = CompanyAdmin(self._office, self._ctx, self._service, capturing)
        self._dashboard = Dashboard(self._ctx, self._service, capturing)
        self._exports = Exports(self._ctx.db, self._ctx.clock)
        self._handoff = Handoffs(self._ctx.db, self._ctx.clock)
        self._rounds = CaptureRounds(self.data_dir, self._service, self._sender)

    def close(self, timeout: float = 30.0) -> bool:
        """Stop capturing (runs in flight finish and commit) and close the folder; idempotent.
        False when work in flight had to be left unfinished after ``timeout`` seconds."""
        finished = True
        if self._demo is not None:
            self._demo.stop(timeout)
            self._demo = None
        else:
            node, self._node = self._node, None
            if node is not None:
                finished = node.stop(timeout)
            beat, self._beat = self._beat, None
            if beat is not None:
                beat.stop()
            if self._office is not None:
                self._office.close()  # the store's database with it
            elif self._store is not None:
                self._store.db.close()  # opened for the first rows, the capture not started
        self._running = False
        self._service, self._office, self._ctx, self._store = None, None, None, None
        self._admin = self._dashboard = self._exports = self._handoff = self._rounds = None
        self.opened = None
        self._settled.set()
        return finished

    def __enter__(self) -> Desk:
        self.open()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def capturing(self) -> bool:
        """This desk runs the capture service: the office's node (false when read-only or standing by)."""
        return self._capturing_now()

    def _capturing_now(self) -> bool:
        return self._running or (self._node is not None and self._node.holding)

    def capture_node(self) -> NodeView:
        """Which workstation captures for the office, since when (``app.desk.nodes``); a read."""
        from app.desk.nodes import node_view

        return node_view(self._context().db, self.data_dir, self._node)

    def _context(self) -> CaptureContext:
        self._await_opening()
        if self._ctx is None:
            raise DeskError("A pasta de dados não está aberta.")
        return self._ctx

    def _await_opening(self) -> None:
        """Between the first step and the end of the opening (the capture starting), a read that
        needs the capture waits for it (on a worker, as every call)."""
        if self.opened is None and self._store is not None:
            self._settled.wait(OPENING_WAIT_S)

    def _reads(self) -> StoreSide:
        if self._store is None:
            raise DeskError("A pasta de dados não está aberta.")
        return self._store

    @property
    def read_only(self) -> bool:
        """Another process holds the data folder (and captures there)."""
        return self.opened is not None and self.opened.read_only

    def _open_office(self) -> Office:
        if self._office is None:
            raise DeskError("A pasta de dados não está aberta.")
        return self._office

    @property
    def admin(self) -> CompanyAdmin:
        """The companies' certificates, settings and removal (``app.desk.companies``)."""
        return self._part(lambda: self._admin)

    @property
    def dashboard(self) -> Dashboard:
        """The capture dashboard's reads and "Consultar agora" (``app.desk.dashboard``)."""
        return self._part(lambda: self._dashboard)

    @property
    def rounds(self) -> CaptureRounds:
        """A capture round now and the capture's state (``app.desk.capturing``)."""
        return self._part(lambda: self._rounds)

    @property
    def handoff(self) -> Handoffs:
        """The ERP hand-off: webhooks, their log, resending (``app.desk.handoff``)."""
        return self._part(lambda: self._handoff)

    @property
    def exports(self) -> Exports:
        """Export profiles and one-off exports (``app.desk.exports``)."""
        return self._part(lambda: self._exports)

    def _part(self, made: Callable[[], P | None]) -> P:
        self._await_opening()
        part = made()  # made by the opening, perhaps just now
        if part is None or self.opened is None:
            raise DeskError("A pasta de dados não está aberta.")
        return part

    def now(self) -> datetime:
        return self._reads().clock.now()

    def settings(self) -> Settings:
        """The data folder's ``settings.json`` as in force now (frozen)."""
        return self._open_office().settings

    def change_settings(self, updated: Settings) -> None:
        """Save the data folder's settings; the running capture reads them from now on."""
        self._open_office().change_settings(updated)

    def clock_factor(self) -> float:
        """Seconds of the desk's clock per real second (the demo's runs faster): when its midnight comes."""
        return self._reads().clock.factor

    def products(self) -> tuple[Product, ...]:
        """The products this version captures (an engine exists for them)."""
        return tuple(self._service.captures) if self._service is not None else ()  # the GUI thread asks

    # ------------------------------------------------------------------ notices

    def subscribe(self, listener: Listener, *, office: bool = False) -> Callable[[], None]:
        """``listener`` gets every notice (on the capture's threads), and with ``office`` the office
        server's news of other commits (``app.desk.nodes.hear_office``); returns the unsubscribe."""
        removed = self._listeners.add(listener)  # a listener's bug never stops the capture
        unheard: Callable[[], None] = lambda: None  # noqa: E731
        if office and self._ctx is not None:
            from app.desk.nodes import hear_office

            unheard = hear_office(self._ctx.db, listener)

        def unsubscribe() -> None:
            unheard()
            removed()

        return unsubscribe

    def _notify(self, notice: CaptureNotice) -> None:
        self._listeners.tell(notice)

    # ------------------------------------------------------------------ companies and status

    def companies(self) -> list[CompanyLine]:
        """Every company with its certificate and a badge per configured product."""
        ctx = self._context()
        assert self._service is not None
        elsewhere = self.read_only or bool(self._service.captured_elsewhere)  # the node's certificates
        return company_lines(ctx, self._service, self.now(), read_only=elsewhere)

    def pause_all(self) -> int:
        """Pause every company's capture (kept in the database); ``app.desk.background``."""
        return background.pause_all(self._context(), self._service)

    def resume_all(self) -> int:
        """Resume every capture the user paused; ``app.desk.background``."""
        return background.resume_all(self._context(), self._service)

    def background_state(self) -> background.BackgroundState:
        products = self.products()
        alerts = self.alerts(Product.NFE) if Product.NFE in products else Alerts(0, 0, 0)
        return background.look(self._context(), products, tuple(self.companies()), alerts)

    # ------------------------------------------------------------------ documents

    def cursor(self, grid: GridFilter) -> GridCursor:
        """A grid, read forwards page by page (``next_page``), counted on demand (``count``)."""
        reads = self._reads()
        return GridCursor(to_query(grid), reads.documents, reads.grid, reads.keys.current(grid.product), self.now)

    def change_mark(self) -> live.ChangeMark:
        """The store's high-water marks, a few primary-key reads: open grids compare them often;
        and the key-event rows' generation (their build apart ended: ``app.desk.key_snapshot``)."""
        reads = self._reads()
        return replace(live.ChangeRepository(reads.db).mark(), key_index=reads.keys.generation)

    def live_rows(self, grid: GridFilter, changed: live.Changed) -> live.LiveRows:
        """The grid's documents changed between two marks (and F5's loaded ids), read again: ``app.desk.live``."""
        reads = self._reads()
        return live.live_rows(reads.db, reads.documents, reads.grid, reads.keys, grid, changed, self.now)

    def outside_period(self, grid: GridFilter) -> live.Outside:
        """What the grid's period hides: how many documents and since when (an empty grid says it)."""
        return live.outside_period(self._reads().grid, grid)

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

    def alerts(self, product: Product, company_ids: tuple[int, ...] = ()) -> Alerts:
        """Counts for the banner: cancelled after capture, deadlines within 5 days, quarantined."""
        return alerts(self._reads().grid, product, company_ids, self.now())

    # ------------------------------------------------------------------ requests

    def manifest(
        self,
        company_id: int,
        key: str,
        tp_evento: str,
        *,
        justification: str | None = None,
        reason_code: str | None = None,
        rectify: bool = False,
    ) -> ManifestationOutcome:
        """Any manifestation, of either product (the NFS-e taker's by its tpEvento): queued and sent
        now if this desk may (``app.desk.manifesting``). A registered conclusive NF-e event is never
        sent again: ``rectify`` asks, on purpose, for the one rectification the rules allow.
        Never raises for a refusal: the outcome says why, and nothing is recorded."""
        return self._open_manifestations().request(
            company_id, key, tp_evento, justification=justification, reason_code=reason_code, rectify=rectify
        )

    def request_manifestation(
        self, company_id: int, key: str, tp_evento: str, justification: str | None = None
    ) -> ManifestationOutcome:
        """The window's NF-e request: :meth:`manifest`, never a rectification."""
        return self.manifest(company_id, key, tp_evento, justification=justification)

    def request_taker_manifestation(
        self, company_id: int, key: str, tp_evento: str, reason_code: str | None = None, reason: str | None = None
    ) -> ManifestationOutcome:
        """The window's NFS-e taker request (Confirmação or Rejeição do Tomador): :meth:`manifest`."""
        return self.manifest(company_id, key, tp_evento, justification=reason, reason_code=reason_code)

    def _open_manifestations(self) -> Manifestations:
        self._await_opening()
        if self.opened is None:
            raise DeskError("A pasta de dados não está aberta.")
        return self._manifestations

    def fetch_by_key(self, key: str, company_id: int | None = None) -> FetchOutcome:
        """ "Buscar pela chave": the database first, then the service (NF-e within the point-query
        quota, NFS-e from the Sefin Nacional), as the company given or the one the key names
        (``app.desk.fetching``; several candidates: ``CompanyChoiceNeeded``). Sent now when this
        desk may; otherwise the capture service running here makes the NF-e query."""
        from app.desk.sending import company_locks

        ctx = self._context()
        locks = company_locks(self._service, product_of(key)) if self._capturing_now() and self._service else None
        return fetching.fetch(ctx, self._sender, locks, self.find_key, key, company_id)

    def company(self, cnpj: str) -> Company:
        """A registered company by its CNPJ (any punctuation), or a refusal that says so."""
        found = self._context().companies.find(Cnpj.parse(cnpj))
        if found is None:
            raise DeskError(f"A empresa {Cnpj.parse(cnpj).formatted()} não está cadastrada.")
        return found

    def save_report(self, name: str, target: Path, **filters: Any) -> int:
        """A spreadsheet (``app.desk.reports``: documents, summary, gaps, deadlines); returns its rows."""
        from app.desk.reports import save_report

        return save_report(self._context(), name, target, **filters)

    def registered(self) -> list[Company]:
        """Every registered company (a plain read: no certificate is opened; ready with the first rows)."""
        return self._reads().companies.list_companies()

    def retry_quarantined(self, row: GridRow) -> str:
        """Ask the distribution again for an unreadable document's NSU (gap recovery)."""
        if not row.quarantined or row.nsu is None:
            raise DeskError("Só documentos em quarentena com NSU podem ser pedidos de novo.")
        self._context().recoveries.add(row.company_id, row.product, next_attempt_at=self.now(), nsus=(row.nsu,))
        return "Nova consulta deste NSU agendada: o documento será pedido de novo ao Ambiente Nacional."


def demo_options_for(speed: float | None = None) -> DemoOptions:
    """The demo's options (its own defaults, the clock's speed-up if given)."""
    from app.demo.environment import DemoOptions

    return DemoOptions() if speed is None else DemoOptions(speed=speed)
