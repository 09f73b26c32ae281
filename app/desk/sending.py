"""Who sends a request to the government now: written once for every request of the desk.

A request (a manifestation, a fetch by key) is sent at once by whoever may send for the office:
this desk when it is the capture node, or this desk under the data-folder lock and, for that one
send, the office's node lease when nobody captures. When another instance captures this data
folder (the lock is taken) or another workstation is the office's node (the lease is held), the
request stays queued in the database and that one sends it: never two senders for one office, so
nothing reaches the government twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from app.capture.engine.locks import CompanyLocks
from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.node import LeaseTiming, lease_once
from app.core.products import Product
from app.store.lease import NodeIdentity, NodeLeases

if TYPE_CHECKING:
    from app.capture.service import CaptureService

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Sent(Generic[T]):
    """``here``: this desk sent it (``value`` is what the send returned); otherwise the capture
    service running elsewhere on the data folder will."""

    here: bool
    value: T | None = None
    holder: str | None = None  # who captures elsewhere ("PID 123 em host, desde 14:05"), when known
    message: str | None = None  # the lock's own sentence about it
    office_node: bool = False  # left to the office's node on another workstation (not this folder's)


@dataclass(frozen=True, slots=True)
class Sender:
    """Sends for one desk: ``capturing`` tells whether the desk's own service runs now (it is the
    office's node); ``standing_by`` whether the desk runs a node that another workstation's lease
    keeps waiting; ``leases``/``identity``: the office's lease, taken for one send otherwise."""

    data_dir: Path
    owner: str
    capturing: Callable[[], bool]
    leases: NodeLeases
    identity: NodeIdentity
    standing_by: Callable[[], bool] = lambda: False

    def now_or_leave(self, send: Callable[[], T], purpose: str) -> Sent[T]:
        """``send()`` now if this desk may send; otherwise leave it to the office's node."""
        if self.capturing():  # this desk's service is the office's one sender
            return Sent(True, send())
        if self.standing_by():
            return self._left()
        try:
            lock = DataFolderLock(self.data_dir, owner=f"{self.owner} ({purpose})")
            lock.acquire()
        except AlreadyRunning as error:
            return Sent(False, holder=error.holder, message=error.message)
        try:
            now = self.leases.db.clock.now()
            with lease_once(self.leases, self.identity, now, LeaseTiming().ttl) as token:
                if token is None:
                    return self._left()
                return Sent(True, send())
        finally:
            lock.release()

    def node_elsewhere(self) -> str | None:
        """Who captures for the office when another workstation does (None: this one or nobody)."""
        holder = self.leases.holder()
        if holder is None or not holder.live(self.leases.db.clock.now()) or holder.is_(self.identity):
            return None
        return holder.text()

    def _left(self) -> Sent[T]:
        who = self.node_elsewhere()
        where = f"a estação {who}" if who else "o nó de captura do escritório"
        message = f"Pedido registrado no banco do escritório: {where} o enviará."
        return Sent(False, holder=who, message=message, office_node=True)


def company_locks(service: CaptureService, product: Product) -> CompanyLocks:
    """The running engine's per-CNPJ locks for ``product`` (what keeps two runs of one company
    apart); an engine without them runs no company concurrently with the desk."""
    capture = service.captures.get(product)
    locks = getattr(capture.distribution, "locks", None) if capture is not None else None
    return locks if isinstance(locks, CompanyLocks) else CompanyLocks()
