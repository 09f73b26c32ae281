"""Which workstations are connected to the office database: a heartbeat per running app.

Every app that runs a capture node (the window, ``capture --daemon``) beats with the node's own
renewals, a read-only window with its own thread (``app.desk.presence_beat``): one row per data
folder (a read-only window's own beside it), refreshed every ``renew_every`` and valid until
``expires_at``; a clean stop removes it, a killed app's row expires. The Painel lists the rows
still valid.

No table of its own yet (no migration slot this round): the rows live in ``node_lease`` beside the
capture lease, named ``ws:`` + the first 17 characters of the node id (a read-only window's: 9
of them and its pid in hex, as its folder's daemon has the same id; the table's key is 20
characters), ``token`` unused (0). Nothing else reads them: the lease is the row ``capture``
(app.store.lease) and every statement there names it. Instants are the store's UTC text, as the
lease's; a workstation's "since" is when its process started beating.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from app.store.db import Database
from app.store.lease import NodeIdentity, instant
from app.store.types import utc_text

PREFIX = "ws:"

_BEAT = (
    "INSERT INTO node_lease (name, token, node_id, workstation, pid, acquired_at, renewed_at, expires_at) "
    "VALUES (?, 0, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
    "acquired_at = CASE WHEN node_lease.pid = excluded.pid AND node_lease.workstation = excluded.workstation "
    "THEN node_lease.acquired_at ELSE excluded.acquired_at END, "
    "node_id = excluded.node_id, workstation = excluded.workstation, pid = excluded.pid, "
    "renewed_at = excluded.renewed_at, expires_at = excluded.expires_at"
)
_LEAVE = "DELETE FROM node_lease WHERE name = ? AND pid = ? AND workstation = ?"
_CONNECTED = (
    "SELECT node_id, workstation, pid, acquired_at, renewed_at FROM node_lease "
    "WHERE name LIKE 'ws:%' AND expires_at > ? ORDER BY acquired_at, workstation"
)


@dataclass(frozen=True, slots=True)
class Connected:
    """A workstation whose app beats: its data folder's node id, machine, process, since, last beat."""

    node_id: str
    workstation: str
    pid: int
    since: datetime
    last_seen: datetime


def _name(identity: NodeIdentity, alongside: bool) -> str:
    """The data folder's row (a restarted app takes its row over); ``alongside``: a read-only
    window's own row beside its folder's daemon, which has the same node id (9 characters of the
    id and the pid in hex: 20 at most)."""
    if alongside:
        return PREFIX + identity.node_id[:9] + format(identity.pid, "x")[-8:]
    return PREFIX + identity.node_id[:17]


class Presence:
    """The heartbeats' repository; each beat is one short write transaction (never fenced)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def beat(self, identity: NodeIdentity, now: datetime, ttl: timedelta, *, alongside: bool = False) -> None:
        """This app is connected now, and until ``now + ttl`` unless it beats again (``alongside``:
        a read-only window, beside the app that holds its data folder)."""
        stamp = utc_text(now)
        name = _name(identity, alongside)
        row = (name, identity.node_id, identity.workstation, identity.pid, stamp, stamp, utc_text(now + ttl))
        with self.db.write_driver(fenced=False) as driver:
            driver.execute(_BEAT, row)

    def leave(self, identity: NodeIdentity, *, alongside: bool = False) -> None:
        """A clean stop: the workstation is no longer listed (a killed one's row expires)."""
        with self.db.write_driver(fenced=False) as driver:
            driver.execute(_LEAVE, (_name(identity, alongside), identity.pid, identity.workstation))

    def connected(self, now: datetime) -> list[Connected]:
        """Every workstation whose last beat is still valid at ``now``, the longest connected first."""
        with self.db.driver_connection() as connection:
            rows = connection.execute(_CONNECTED, (utc_text(now),)).fetchall()
        result = []
        for node_id, workstation, pid, since, seen in rows:
            since_at, seen_at = instant(since), instant(seen)
            assert since_at is not None and seen_at is not None
            result.append(Connected(node_id, workstation, int(pid), since_at, seen_at))
        return result
