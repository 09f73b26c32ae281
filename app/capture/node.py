"""The office's capture node: the one workstation that talks to the government for the office.

Every workstation that runs the capture (``capture --daemon``, the window) runs a ``CaptureNode``.
The node that holds the lease (app.store.lease) runs the capture service; every other one stands
by: it never queries a government service, looks at the lease every ``renew_every`` and takes
over once it has seen the holder's renewal unchanged for a whole ``ttl`` on its own clock (so
clocks that disagree between workstations never matter): within ``ttl + 2 × renew_every`` of the
holder's last renewal, 100 s by default, inside the two minutes the office is promised. A single
desktop on SQLite runs the same path: its daemon or window takes the lease of its own file at once.

While it holds the lease the node fences the database (``Database.fence``): each write transaction
checks the token first, so a node paused past its lease commits nothing once another took over,
and the fenced failure (or a renewal refused) sends it back to standby without another query.
Between renewals the service asks ``may_query`` before each run and chained lot: a node whose last
renewal is older than ``ttl - renew_every`` stops querying before its lease can be taken.

Clients' requests (manifestations, fetch by key) reach the node through the database: queued
there by any workstation, sent by the node's dispatch jobs. On the office server the node hears
each request's commit (app.store.notify) and runs those jobs at once (``wake``), so a clerk's
manifestation goes out in about a second instead of at the next interval.

**The server gone** (a network drop, a restart of PostgreSQL, a full disk): the first look, write
or feed that finds it unreachable puts the node **offline** (``offline``): ``may_query`` is False,
so no run, chained lot or dispatch starts and no cursor moves; the service's scheduled work waits
(app.capture.scheduler); an answer that came just before the drop stays in its engine's memory
(app.capture.engine.distribution). The node's loop then retries with a growing pause
(``FIRST_RETRY_S`` up to ``LAST_RETRY_S`` real seconds, or the renewal interval if shorter),
logging once when the server goes and once when it is back, not per attempt. Back, it renews the
lease with its token before anything else: the lease still ours (nobody took it meanwhile, even
past its expiry: a takeover changes the token) re-validates the fence; taken, the node stands by.
Then the schema is checked (another workstation may have moved it to a newer version meanwhile:
the node stops and names the version to install), the kept answers are stored and the capture
resumes at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

from app.capture.context import CaptureNotice
from app.capture.instance import DataFolderLock
from app.capture.service import CaptureService
from app.core.errors import CapturaError
from app.store.errors import SchemaTooNew, StorageUnavailable
from app.store.lease import LeaseHolder, NodeIdentity, NodeLeases, fence_in
from app.store.notify import BACK, LOST, Change
from app.store.presence import Presence
from app.store.schema_check import newer_schema

log = logging.getLogger(__name__)

NODE_ID_NAME = "captura.node-id"  # the data folder's identity among the office's workstations
STOP_ON_LOSS_SECONDS = 30.0  # real seconds a lost node waits for its runs in flight (their writes fail)
STANDING_BY = "o nó de captura do escritório"  # who captures, when no workstation holds the lease now
FIRST_RETRY_S = 0.5  # real seconds before the first new attempt on an unreachable database
LAST_RETRY_S = 10.0  # the longest pause between two attempts (bounded: the server back is seen soon)
OFFLINE_TEXT = "Sem conexão com o banco do escritório: a captura está parada e volta sozinha quando ele voltar."


@dataclass(frozen=True, slots=True)
class LeaseTiming:
    """The lease's times, in the clock's time (the tests' sped-up clock shortens them)."""

    ttl: timedelta = timedelta(seconds=60)
    renew_every: timedelta = timedelta(seconds=20)

    def __post_init__(self) -> None:
        if not timedelta(0) < self.renew_every < self.ttl:
            raise ValueError("renew_every must be positive and shorter than ttl")


def node_identity(data_dir: Path) -> NodeIdentity:
    """This data folder's node: its id (created once, kept in the folder), the machine, the process."""
    path = Path(data_dir) / NODE_ID_NAME
    try:
        node_id = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        node_id = ""
    if len(node_id) != 32:
        node_id = uuid.uuid4().hex
        with contextlib.suppress(OSError):  # unwritable: a new id per start, still unique
            path.write_text(node_id, encoding="ascii")
    return NodeIdentity(node_id, socket.gethostname(), os.getpid())


class CaptureNode:
    """The service of one workstation, run only while it holds the office's lease.

    ``start`` takes the data folder's lock (raising ``AlreadyRunning`` as the service did), tries
    the lease once (so a single desktop captures as soon as ``start`` returns) and starts the
    thread that renews or keeps trying; ``stop`` stops the service and releases both.
    """

    def __init__(
        self,
        service: CaptureService,
        identity: NodeIdentity,
        *,
        data_lock: DataFolderLock | None = None,
        timing: LeaseTiming | None = None,
        eligible: Callable[[], bool] | None = None,
    ) -> None:
        """``eligible``: whether this workstation may take the capture over (it holds the
        certificates); asked before each attempt, default yes."""
        self.service = service
        self.eligible = eligible
        self.identity = identity
        self.data_lock = data_lock
        self.timing = timing or LeaseTiming()
        self.leases = NodeLeases(service.ctx.db)
        self.presence = Presence(service.ctx.db)  # this app is listed among the office's workstations
        self._clock = service.ctx.clock
        self._token: int | None = None
        self._expires: datetime | None = None
        # Another node's lease as last seen changing: (token, renewal) and when, on this clock.
        self._seen: tuple[tuple[int, datetime | None], datetime] | None = None
        self._lock = threading.RLock()
        self._wake = threading.Event()
        self._requests = threading.Event()  # a client's request committed: dispatch after the look
        self._unheard: Callable[[], None] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._offline = threading.Event()  # the database unreachable: nothing is queried or written
        self._retry_s = FIRST_RETRY_S
        self.refusal: SchemaTooNew | None = None  # the schema moved past this app: it writes no more
        service.may_query = self.may_query
        service.on_lease_lost = self.wake
        service.on_storage_lost = self._unreachable

    # ------------------------------------------------------------------ state

    @property
    def holding(self) -> bool:
        """This workstation is the office's capture node now."""
        return self._token is not None

    @property
    def token(self) -> int | None:
        return self._token

    @property
    def offline(self) -> bool:
        """The database is unreachable now (the node retries by itself)."""
        return self._offline.is_set()

    def may_query(self) -> bool:
        """Whether the service may start a call now: the database reachable and the lease ours
        with at least one renewal interval left (a late renewal stops the queries before anyone
        may take over)."""
        expires = self._expires
        if self._token is None or expires is None or self._offline.is_set():
            return False
        return self._clock.now() < expires - self.timing.renew_every

    def holder(self) -> LeaseHolder | None:
        """The lease as stored (who captures for the office, since when)."""
        return self.leases.holder()

    # ------------------------------------------------------------------ life

    def start(self) -> None:
        if self.data_lock is not None:
            self.data_lock.acquire()  # AlreadyRunning: another process captures this folder
        try:
            self.tick()
        except BaseException:
            if self.data_lock is not None:
                self.data_lock.release()
            raise
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="captura-no", daemon=True)
        self._thread.start()
        changes = self.service.ctx.db.changes
        if changes is not None:  # the office server: hear the clients' requests
            self._unheard = changes.subscribe(self._heard)

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the service (runs in flight finish), release the lease and the folder."""
        self._stopping.set()
        unheard, self._unheard = self._unheard, None
        if unheard is not None:
            unheard()
        self._wake.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
        finished = True
        with self._lock:
            token = self._token
            if token is not None:
                finished = self._stop_service(timeout)
                self.service.ctx.db.fence = None
                self._token = self._expires = None
                with contextlib.suppress(CapturaError):  # unreachable server: the lease expires
                    self.leases.release(token, self._clock.now())
            with contextlib.suppress(CapturaError):  # unreachable server: the heartbeat expires
                self.presence.leave(self.identity)
        if self.data_lock is not None:
            self.data_lock.release()
        return finished

    def wake(self) -> None:
        """Look at the lease now (a fenced write failed, a request arrived)."""
        self._wake.set()

    def _heard(self, change: Change) -> None:
        """On the feed's thread: a committed change; a client's request wakes the node (not what
        this process wrote: its own dispatch settling a request must not start another). The
        feed's connection dropped: offline at once; back: look now."""
        if change.link == LOST:
            self._unreachable(None)
            return
        if change.link == BACK:
            self.wake()
        if change.requests and not change.mine:
            self._requests.set()
            self.wake()

    def _unreachable(self, error: StorageUnavailable | None) -> None:
        """The database cannot be reached (from any thread): no query starts from now on; the
        loop retries with a growing pause. Logged once per outage."""
        # A standby's watch of the holder starts over once it sees the server again: the holder
        # was most likely cut off too, and renews as soon as it can (no takeover after every outage).
        self._seen = None
        if self._offline.is_set():
            return
        self._retry_s = FIRST_RETRY_S
        self._offline.set()
        why = f" ({error.message})" if error is not None else ""
        log.warning("Sem conexão com o banco do escritório%s: a captura para até ele voltar", why)
        self.service.ctx.notify(CaptureNotice("status", None, None, OFFLINE_TEXT))
        self.wake()

    def _pause(self, interval: float) -> float:
        """The loop's wait: the renewal interval, or the next attempt's growing pause offline."""
        if not self._offline.is_set():
            return interval
        pause = min(self._retry_s, interval, LAST_RETRY_S)
        self._retry_s = min(self._retry_s * 2, LAST_RETRY_S)
        return pause

    def _loop(self) -> None:
        interval = self.timing.renew_every.total_seconds() / self._clock.factor
        while not self._stopping.is_set():
            self._wake.wait(self._pause(interval))
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                self.tick()
                if self._requests.is_set():
                    self._requests.clear()
                    if self.holding:  # the node sends them; a standby leaves them to it
                        self.service.dispatch_soon()
            except Exception:  # the loop outlives any one look (the next one tries again)
                log.exception("Falha ao verificar a concessão do nó de captura")

    def tick(self) -> None:
        """One look: renew the lease held, or try to take it (standby); and this app's heartbeat.
        Offline, the look is the next attempt: back, the node resumes (see the module)."""
        with self._lock:
            if self._stopping.is_set() and self._thread is not None:
                return
            if self.refusal is not None:
                return  # the schema is newer than this app: it stays out of the office's database
            now = self._clock.now()
            try:
                if self._token is not None:
                    self._renew(self._token, now)
                else:
                    self._try_acquire(now)
                self.presence.beat(self.identity, now, self.timing.ttl)
                if self._offline.is_set():
                    self._back()
            except StorageUnavailable as error:  # the server unreachable: the lease may still be ours
                self._unreachable(error)

    def _renew(self, token: int, now: datetime) -> None:
        if self.leases.renew(token, now, self.timing.ttl):
            self._expires = now + self.timing.ttl
        else:
            self._demote("outra estação assumiu a captura")

    def _back(self) -> None:
        """The database answers again and the lease is settled (renewed with its token, or lost
        and the service stopped): the schema checked, the kept answers stored, queries resume."""
        refusal = newer_schema(self.service.ctx.db)
        if refusal is not None:
            self.refusal = refusal
            log.error("%s", refusal.message)
            if self._token is not None:
                self._demote("o banco do escritório foi atualizado por uma versão mais nova")
            self.service.ctx.notify(CaptureNotice("alert", None, None, refusal.message))
            self._offline.clear()
            return
        if self._token is not None:
            self.service.store_unstored()  # before any query: the cursors first take what was answered
        self._offline.clear()
        log.info("Conexão com o banco do escritório restabelecida: a captura continua")
        self.service.ctx.notify(CaptureNotice("status", None, None, "Conexão com o banco do escritório restabelecida."))
        if self._token is not None:
            self.service.dispatch_soon(passes=True)

    def _stale(self, holder: LeaseHolder | None, now: datetime) -> LeaseHolder | None:
        """``holder`` when another node's lease went unrenewed for a whole ``ttl`` of this clock
        (the same token and renewal seen since); None while it changes or is free or ours."""
        if holder is None or not holder.held or holder.is_(self.identity):
            self._seen = None
            return None
        seen = (holder.token, holder.renewed_at)
        if self._seen is None or self._seen[0] != seen:
            self._seen = (seen, now)
            return None
        return holder if now - self._seen[1] >= self.timing.ttl else None

    def _try_acquire(self, now: datetime) -> None:
        holder = self.leases.holder()
        stale = self._stale(holder, now)
        token = None
        free = holder is None or not holder.held or holder.is_(self.identity)
        if (free or stale is not None) and (self.eligible is None or self.eligible()):
            token = self.leases.acquire(self.identity, now, self.timing.ttl, stale=stale)
        if token is None:  # standing by: the status shows the node's state, not this vault's
            held = holder is not None and holder.held and not holder.is_(self.identity)
            self.service.captured_elsewhere = holder.text() if holder is not None and held else STANDING_BY
            return
        self._seen = None
        self.service.captured_elsewhere = None
        self._token, self._expires = token, now + self.timing.ttl
        self.service.ctx.db.fence = partial(fence_in, token=token)
        try:
            self.service.start()
        except BaseException:
            self.service.ctx.db.fence = None
            self._token = self._expires = None
            with contextlib.suppress(CapturaError):
                self.leases.release(token, now)
            raise
        log.info("Esta estação é o nó de captura do escritório (concessão %s)", token)

    def _demote(self, reason: str) -> None:
        log.warning("Esta estação deixou de ser o nó de captura: %s; em espera", reason)
        self._expires = None  # may_query is False from here on
        self._stop_service(STOP_ON_LOSS_SECONDS)
        self.service.ctx.db.fence = None
        self._token = None

    def _stop_service(self, timeout: float) -> bool:
        try:
            return self.service.stop(timeout)
        except CapturaError as error:  # closing writes fenced (LeaseLost) or the server gone:
            log.warning("Serviço parado sem fechar suas execuções (o próximo nó as fecha): %s", error)
            return False


@contextmanager
def lease_once(leases: NodeLeases, identity: NodeIdentity, now: datetime, ttl: timedelta) -> Iterator[int | None]:
    """The lease for one send by a workstation that does not capture (a command line's request
    when no node runs): its token, fenced on the database meanwhile, or None when a node holds it.
    The caller holds its data folder's lock."""
    token = leases.acquire(identity, now, ttl)
    if token is None:
        yield None
        return
    db = leases.db
    db.fence = partial(fence_in, token=token)
    try:
        yield token
    finally:
        db.fence = None
        with contextlib.suppress(CapturaError):
            leases.release(token, db.clock.now())
