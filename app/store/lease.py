"""The capture node's lease: which workstation talks to the government for the office.

One row (``node_lease``, ``name`` 'capture'). A workstation takes it when it is free, its own (the
same data folder, whose OS lock the caller holds: the previous holder there is dead), or **stale**:
the caller saw the very same token and renewal for a whole lease on its own clock (a
compare-and-set on both), so workstations whose clocks disagree never take a live lease from each
other; ``expires_at`` is what a reader shows. Each acquisition increments the **fencing token**.
The holder renews it before it expires and releases it on a clean stop. Every write transaction
of the holder checks, inside that transaction, that the row still carries its token
(:func:`fence_in`): a node that stopped renewing (a pause, a lost network) and woke up after
another took over cannot commit anything, not a cursor, not a document, not a call record.

Why a SELECT suffices for the fence: every write transaction of the store holds the writer lock
(SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's transaction advisory lock, app.store.driver) and an
acquisition is itself such a transaction, so no takeover can commit between the check and the
writes that follow it.

All statements are plain SQL in SQLite's spelling (``?``), run on the driver connection of
``Database.write_driver`` (translated for PostgreSQL by ``PgDriver``); instants are the store's
UTC text, which sorts as time does on both engines.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from sqlalchemy import Connection, inspect, text

from app.core.errors import CapturaError
from app.store.db import Database
from app.store.errors import StorageUnavailable
from app.store.types import utc_text
from app.store.versions import MIGRATION_GUARDS

LEASE_NAME = "capture"

_ACQUIRE = (
    "UPDATE node_lease SET token = token + 1, node_id = ?, workstation = ?, pid = ?, "
    "acquired_at = ?, renewed_at = ?, expires_at = ? "
    "WHERE name = ? AND (node_id IS NULL OR (node_id = ? AND workstation = ?) OR (token = ? AND renewed_at = ?))"
)
_RENEW = "UPDATE node_lease SET renewed_at = ?, expires_at = ? WHERE name = ? AND token = ?"
_RELEASE = "UPDATE node_lease SET node_id = NULL, expires_at = ? WHERE name = ? AND token = ?"
_READ = "SELECT token, node_id, workstation, pid, acquired_at, renewed_at, expires_at FROM node_lease WHERE name = ?"
_CURRENT_FENCE = "SELECT token FROM node_lease WHERE name = ?"


class LeaseLost(CapturaError):
    """This workstation no longer holds the capture node's lease: nothing it writes as the node
    may commit (another workstation took over, or its lease expired and was taken)."""


class NodeIdentity(NamedTuple):
    """Who a workstation is: its data folder's id, the machine's name, the process."""

    node_id: str
    workstation: str
    pid: int


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """The lease as stored: who holds (or last held) it, since and until when."""

    token: int
    node_id: str | None
    workstation: str | None
    pid: int | None
    acquired_at: datetime | None
    renewed_at: datetime | None
    expires_at: datetime | None

    def live(self, now: datetime) -> bool:
        """Held and not expired at ``now``."""
        return self.node_id is not None and self.expires_at is not None and self.expires_at > now

    @property
    def held(self) -> bool:
        return self.node_id is not None

    def is_(self, identity: NodeIdentity) -> bool:
        return self.node_id == identity.node_id and self.workstation == identity.workstation

    def text(self) -> str:
        return f"{self.workstation or 'estação desconhecida'} (PID {self.pid})"


def instant(value: Any) -> datetime | None:
    """A stored instant back as an aware UTC datetime (SQLite gives text, psycopg a datetime)."""
    if value is None:
        return None
    instant = datetime.fromisoformat(value) if isinstance(value, str) else value
    assert isinstance(instant, datetime)
    return instant.replace(tzinfo=UTC)


class NodeLeases:
    """The lease's repository; every change is one write transaction (under the writer lock)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def acquire(
        self, identity: NodeIdentity, now: datetime, ttl: timedelta, *, stale: LeaseHolder | None = None
    ) -> int | None:
        """Take the lease if free, this node's own, or still exactly ``stale`` (a holder the caller
        saw unrenewed for a whole lease); the new fencing token, or None when another node holds
        it. The caller holds its data folder's OS lock (see the module)."""
        stamp = utc_text(now)
        seen_token, seen_renewal = (stale.token, utc_text(stale.renewed_at)) if stale is not None else (-1, None)
        with self.db.write_driver(fenced=False) as driver:
            changed = driver.execute(
                _ACQUIRE,
                (
                    identity.node_id,
                    identity.workstation,
                    identity.pid,
                    stamp,
                    stamp,
                    utc_text(now + ttl),
                    LEASE_NAME,
                    identity.node_id,
                    identity.workstation,
                    seen_token,
                    seen_renewal,
                ),
            ).rowcount
            if changed != 1:
                return None
            row = driver.execute(_CURRENT_FENCE, (LEASE_NAME,)).fetchone()
        return int(row[0])

    def renew(self, token: int, now: datetime, ttl: timedelta) -> bool:
        """Extend the lease held with ``token``; False when it was taken (the token moved on)."""
        with self.db.write_driver(fenced=False) as driver:
            changed = driver.execute(_RENEW, (utc_text(now), utc_text(now + ttl), LEASE_NAME, token)).rowcount
        return bool(changed == 1)

    def release(self, token: int, now: datetime) -> bool:
        """Give the lease up (a clean stop): the next node takes it at once. False when it was
        no longer ours."""
        with self.db.write_driver(fenced=False) as driver:
            changed = driver.execute(_RELEASE, (utc_text(now), LEASE_NAME, token)).rowcount
        return bool(changed == 1)

    def holder(self) -> LeaseHolder | None:
        """The lease as stored (None on a database without the row: never the case once migrated)."""
        with self.db.driver_connection() as connection:
            row = connection.execute(_READ, (LEASE_NAME,)).fetchone()
        if row is None:
            return None
        token, node_id, workstation, pid, acquired, renewed, expires = row
        return LeaseHolder(int(token), node_id, workstation, pid, instant(acquired), instant(renewed), instant(expires))


# A lease expired longer ago than this on the reader's clock belongs to a dead node, whatever the
# two workstations' clocks say (they rarely disagree by minutes; a live node renews every 20 s).
DEAD_AFTER = timedelta(minutes=10)


def migration_refusal(connection: Connection, now: datetime) -> str | None:
    """Why the office database may not be moved to a newer schema now (a node captures, with the
    older app, and would write into tables it does not know), or None. For the migration's guard
    (on the open ``connection`` of the migration, before it runs; revision 0013 or later)."""
    row = connection.execute(
        text("SELECT node_id, workstation, pid, expires_at FROM node_lease WHERE name = :name"), {"name": LEASE_NAME}
    ).first()
    expires = instant(row[3]) if row is not None else None
    if row is None or row[0] is None or expires is None or expires + DEAD_AFTER <= now:
        return None
    return (
        f"A estação {row[1]} (PID {row[2]}) está capturando para o escritório com a versão anterior do "
        "Captura DF-e: o banco do escritório só é atualizado quando nenhuma estação captura. Pare a "
        "captura nela (ou atualize-a primeiro) e abra de novo; nada foi alterado no banco."
    )


def no_live_node(connection: Connection, _current: str | None, _head: str, now: datetime) -> None:
    """app.store.db's migration guard: the office server moves to a newer schema only when no
    capture node holds the lease (:func:`migration_refusal`). A single desktop's SQLite file is its
    own: its node is this very program, stopped for the update."""
    if connection.dialect.name != "postgresql" or not inspect(connection).has_table("node_lease"):
        return  # before revision 0013 no node could hold the office
    refusal = migration_refusal(connection, now)
    if refusal is not None:
        raise StorageUnavailable(refusal)


MIGRATION_GUARDS.append(no_live_node)


def fence_in(driver: Any, token: int) -> None:
    """Inside a write transaction: raise :class:`LeaseLost` unless the lease still carries ``token``."""
    row = driver.execute(_CURRENT_FENCE, (LEASE_NAME,)).fetchone()
    if row is None or int(row[0]) != token:
        raise LeaseLost(
            "Esta estação deixou de ser o nó de captura do escritório (outra estação assumiu a captura): "
            "nada foi gravado; a captura continua pela outra estação."
        )
