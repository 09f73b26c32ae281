"""The desk's part of the office's capture node: starting it, and saying who captures.

A desk opened to capture runs a ``CaptureNode`` (app.capture.node): it captures while it holds the
office's lease and stands by otherwise, as a client whose requests the node sends. ``NodeView``
is what the window's status line and ``status`` print: which workstation captures, since when.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from app.capture.context import CaptureNotice
from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.node import CaptureNode, LeaseTiming, node_identity
from app.capture.office import Office

__all__ = [
    "LeaseTiming",
    "NodeStart",
    "NodeView",
    "StationView",
    "hear_office",
    "node_view",
    "sender_for",
    "start_node",
]
from app.capture.service import CaptureService
from app.core.cadence import display_time
from app.core.clock import to_brasilia
from app.desk.sending import Sender
from app.desk.views import OFFICE_BACK, OFFICE_LOST
from app.store.db import Database
from app.store.lease import LeaseHolder, NodeIdentity, NodeLeases
from app.store.notify import BACK, LOST, Change
from app.store.presence import Connected, Presence

OFFICE_NOTICE = "office"  # another commit on the office server: grids look again
LOST_TEXT = (
    "Sem conexão com o banco do escritório: o que está na tela continua à mostra, e tudo se "
    "atualiza sozinho quando a conexão voltar."
)
BACK_TEXT = "Conexão com o banco do escritório restabelecida."


@dataclass(frozen=True, slots=True)
class StationView:
    """One workstation connected to the office (its app beats, app.store.presence): the Painel's line."""

    workstation: str
    pid: int
    capturing: bool  # it holds the capture lease now
    here: bool  # this very app
    since: datetime
    last_seen: datetime

    def cells(self, now: datetime) -> tuple[str, str, str, str]:
        """Estação, Papel, Conectada desde, Vista por último."""
        name = f"{self.workstation} (PID {self.pid}){' · esta estação' if self.here else ''}"
        role = "captura" if self.capturing else "cliente"
        since = to_brasilia(self.since)  # past instants: as they were, never rounded up
        day = "" if since.date() == to_brasilia(now).date() else since.strftime("%d/%m ")
        return name, role, day + since.strftime("%H:%M"), to_brasilia(self.last_seen).strftime("%H:%M:%S")


@dataclass(frozen=True, slots=True)
class NodeView:
    """Who captures for the office: ``workstation`` None when nobody does now; ``here`` when it
    is this desk's own node; ``since`` when it took the capture; ``stations``: every workstation
    connected now, the longest connected first."""

    workstation: str | None
    pid: int | None
    since: datetime | None
    here: bool
    standing_by: bool  # this desk runs a node that waits for the lease
    stations: tuple[StationView, ...] = ()

    def text(self, now: datetime) -> str:
        """The status line: "Captura: nesta estação desde 14:05", "Captura: estação X (PID 12) desde …"."""
        if self.workstation is None:
            waiting = " (esta estação aguarda para assumir)" if self.standing_by else ""
            return f"Captura: nenhuma estação está capturando agora{waiting}."
        since = f" desde {display_time(self.since, now)}" if self.since is not None else ""
        if self.here:
            return f"Captura: nesta estação ({self.workstation}){since}."
        waiting = "; esta estação assume se ela parar" if self.standing_by else ""
        return f"Captura: estação {self.workstation} (PID {self.pid}){since}{waiting}."


def node_view(db: Database, data_dir: Path, node: CaptureNode | None) -> NodeView:
    """Who captures for the office as the database says, seen from this desk (``node``: its own)."""
    identity = node.identity if node is not None else node_identity(data_dir)
    holder, now = NodeLeases(db).holder(), db.clock.now()
    view = _view_of(holder, identity, now, standing_by=node is not None and not node.holding)
    connected = Presence(db).connected(now)
    return replace(view, stations=tuple(_station(c, holder, identity, now) for c in connected))


def _station(connected: Connected, holder: LeaseHolder | None, identity: NodeIdentity, now: datetime) -> StationView:
    who = (connected.node_id, connected.pid)
    capturing = holder is not None and holder.live(now) and (holder.node_id, holder.pid) == who
    here = who == (identity.node_id, identity.pid)
    return StationView(connected.workstation, connected.pid, capturing, here, connected.since, connected.last_seen)


def _view_of(holder: LeaseHolder | None, identity: NodeIdentity, now: datetime, *, standing_by: bool) -> NodeView:
    if holder is None or not holder.live(now):
        return NodeView(None, None, None, False, standing_by)
    return NodeView(holder.workstation, holder.pid, holder.acquired_at, holder.is_(identity), standing_by)


def sender_for(
    db: Database, data_dir: Path, owner: str, capturing: Callable[[], bool], node: CaptureNode | None
) -> Sender:
    """The desk's sender: its node's, or (no node: a command's desk) one that takes the lease per send."""
    identity = node.identity if node is not None else node_identity(data_dir)
    return Sender(
        data_dir, owner, capturing, NodeLeases(db), identity, standing_by=lambda: node is not None and not node.holding
    )


@dataclass(frozen=True, slots=True)
class NodeStart:
    """A node started (``node``), or the data folder held by another process (``refusal``)."""

    node: CaptureNode | None
    refusal: AlreadyRunning | None


def hear_office(db: Database, listener: Callable[[CaptureNotice], None]) -> Callable[[], None]:
    """``listener`` gets an "office" notice (on the feed's thread) whenever the office server tells
    of a commit another workstation (or this one) made to what the grids show or the node sends:
    a window's grids then read their change mark at once. When the connection to the server
    drops, one ``OFFICE_LOST`` notice (the window says so and keeps what it shows); once it is
    back, one ``OFFICE_BACK`` (the window reads again what changed meanwhile). Returns the
    unsubscribe (nothing to hear on SQLite)."""
    changes = db.changes
    if changes is None:
        return lambda: None
    return changes.subscribe(lambda change: listener(office_notice(change)))


def office_notice(change: Change) -> CaptureNotice:
    """What a window hears of one of the office feed's changes."""
    if change.link == LOST:
        return CaptureNotice(OFFICE_LOST, None, None, LOST_TEXT)
    if change.link == BACK:
        return CaptureNotice(OFFICE_BACK, None, None, BACK_TEXT)
    return CaptureNotice(OFFICE_NOTICE, None, None, "")


def holds_certificates(office: Office) -> bool:
    """This data folder's vault holds the certificate of every active company: only such a
    workstation takes the capture over (a client installed without them never talks to the
    government); an office without companies yet: yes (a single desktop's first start)."""
    wanted = {c.certificate_ref for c in office.companies.list_companies(active_only=True) if c.certificate_ref}
    return wanted <= {holder.value for holder in office.vault.list()}


def start_node(service: CaptureService, office: Office, owner: str, timing: LeaseTiming | None) -> NodeStart:
    """The desk's node on ``service``: capturing at once when the lease is free (a single
    desktop), standing by otherwise; refused when another process captures this data folder."""
    lock = DataFolderLock(office.data_dir, owner=owner)
    identity = node_identity(office.data_dir)
    # A data folder's own SQLite file has no other workstation to leave the capture to.
    eligible = None if office.db.path is not None else (lambda: holds_certificates(office))
    node = CaptureNode(service, identity, data_lock=lock, timing=timing, eligible=eligible)
    try:
        node.start()
    except AlreadyRunning as error:
        service.captured_elsewhere = error.holder or "outra instância do Captura DF-e"
        return NodeStart(None, error)
    return NodeStart(node, None)
