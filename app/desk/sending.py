"""Who sends a request to the government now: written once for every request of the desk.

A request (a manifestation, a fetch by key) is sent at once by whoever may send for the data
folder: this desk when it runs the capture service, or this desk under the data-folder lock when
nobody captures there. When another instance captures (the lock is taken), that instance sends it:
never two senders for one data folder, so nothing reaches the government twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from app.capture.engine.locks import CompanyLocks
from app.capture.instance import AlreadyRunning, DataFolderLock
from app.core.products import Product

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


@dataclass(frozen=True, slots=True)
class Sender:
    """Sends for one desk: ``capturing`` tells whether the desk's own service runs now."""

    data_dir: Path
    owner: str
    capturing: Callable[[], bool]

    def now_or_leave(self, send: Callable[[], T], purpose: str) -> Sent[T]:
        """``send()`` now if this desk may send; otherwise leave it to the running service."""
        if self.capturing():  # this desk's service is the data folder's one sender
            return Sent(True, send())
        try:
            lock = DataFolderLock(self.data_dir, owner=f"{self.owner} ({purpose})")
            lock.acquire()
        except AlreadyRunning as error:
            return Sent(False, holder=error.holder, message=error.message)
        try:
            return Sent(True, send())
        finally:
            lock.release()


def company_locks(service: CaptureService, product: Product) -> CompanyLocks:
    """The running engine's per-CNPJ locks for ``product`` (what keeps two runs of one company
    apart); an engine without them runs no company concurrently with the desk."""
    capture = service.captures.get(product)
    locks = getattr(capture.distribution, "locks", None) if capture is not None else None
    return locks if isinstance(locks, CompanyLocks) else CompanyLocks()
