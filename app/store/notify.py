"""What changed in the office database, told to every workstation: PostgreSQL's LISTEN/NOTIFY.

**Writers.** Every write transaction on PostgreSQL notes the tables it writes that another
workstation shows or acts on (``WATCHED``); just before its COMMIT, inside the transaction, it
sends one ``NOTIFY`` on ``CHANNEL`` naming them. The server delivers a notification only when its
transaction commits (a rollback sends nothing), after the rows are visible to every reader. Both
write paths do it: the driver units (``PgDriver``, app.store.driver) and SQLAlchemy's sessions
and connections (the engine's events, app.store.dialect).

**Listeners.** ``ChangeFeed`` holds one dedicated connection per process on a background thread,
``LISTEN``\\s there and hands each :class:`Change` to its subscribers on that thread (they must
only signal: set an event, emit a queued Qt signal). When the connection drops (a network cut, a
restart of the server, its disk full), it tells its subscribers once (``Change.link`` ``LOST``: a
window says "sem conexão com o banco do escritório", the capture node stops querying), reconnects
with a growing pause (bounded by ``LAST_RETRY_S``; logged once per drop, not per attempt) and, once
listening again, tells them that anything may have changed meanwhile (``BACK``, with
``Change.everything``): notifications sent while nobody listened are not kept by the server.

On SQLite nothing of this runs: a desktop's own file has no other writer to hear from, and its
grids keep polling their change mark.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from app.core.subscribers import Subscribers

log = logging.getLogger(__name__)

CHANNEL = "captura_changes"
FEED_NAME = "captura-escuta"  # the listening connection's application_name (pg_stat_activity)
# What a grid shows (app.store.grid_changes' mark) and the clients' requests the node sends.
REQUESTS = frozenset({"manifestations", "gap_recoveries"})
WATCHED = frozenset({"documents", "document_versions", "events"}) | REQUESTS
# Who wrote: this process among the office's (a node skips what its own dispatch wrote).
ORIGIN = f"{socket.gethostname()}:{os.getpid()}"
NOTIFY_SQL = "SELECT pg_notify(%s, %s)"  # psycopg's placeholders: run on the driver itself

_WRITE = re.compile(r'^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+"?(\w+)"?', re.IGNORECASE)

FIRST_RETRY_S = 0.5
LAST_RETRY_S = 10.0  # a server back from a restart is heard within this (each attempt is one connect)
LOOK_EVERY_S = 0.5  # how soon ``stop`` is heard
PING_EVERY_S = 15.0  # a silent connection is asked once in a while whether the server is there
LOST = "lost"  # Change.link: the connection to the office server dropped
BACK = "back"  # ... and is back (after a drop): everything may have changed meanwhile


@lru_cache(maxsize=4096)
def written_table(sql: str) -> str | None:
    """The watched table ``sql`` writes to (INSERT, UPDATE, DELETE), or None."""
    found = _WRITE.match(sql)
    table = found[1].lower() if found else None
    return table if table in WATCHED else None


def payload(tables: Iterable[str]) -> str:
    return json.dumps({"tables": sorted(tables), "by": ORIGIN})


def send_before_commit(connection: Any, written: set[str]) -> None:
    """Inside the open transaction of the psycopg ``connection``: the NOTIFY of ``written`` (the
    watched tables it wrote), delivered by the server on commit; ``written`` is emptied."""
    if written:
        connection.execute(NOTIFY_SQL, (CHANNEL, payload(written)))
        written.clear()


@dataclass(frozen=True, slots=True)
class Change:
    """The watched tables a committed transaction wrote, and which process (``by``) wrote them;
    ``everything`` after a reconnection; ``link``: ``LOST`` or ``BACK`` when the connection to the
    server dropped or came back (no tables then)."""

    tables: frozenset[str]
    everything: bool = False
    by: str | None = None
    link: str | None = None

    @property
    def mine(self) -> bool:
        """Written by this very process."""
        return self.by == ORIGIN

    @property
    def requests(self) -> bool:
        """A client's request (manifestation, fetch by key) may be waiting for the node."""
        return self.everything or bool(self.tables & REQUESTS)

    @classmethod
    def parse(cls, text: str) -> Change:
        try:
            told = json.loads(text)
            tables, by = told["tables"], told.get("by")
        except (ValueError, KeyError, TypeError, AttributeError):  # not ours, or a newer version's
            return cls(WATCHED, everything=True)
        return cls(frozenset(str(t) for t in tables), by=str(by) if by is not None else None)


Subscriber = Callable[[Change], None]


class ChangeFeed:
    """One process's ear on the office database: a thread, started on the first ``subscribe``.

    ``connect`` opens an autocommit psycopg connection; ``errors``: what a dropped connection
    raises. ``listening`` is set while the LISTEN is in place (tests wait on it)."""

    def __init__(self, connect: Callable[[], Any], errors: tuple[type[BaseException], ...]) -> None:
        self._connect = connect
        self._errors = errors
        self._subscribers = Subscribers[Change]("Falha ao entregar uma mudança do banco do escritório")
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.listening = threading.Event()
        self.connections = 0  # how many times it connected (a reconnection counts)
        self._lost = False
        self._thread: threading.Thread | None = None

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """``subscriber`` gets every change (on the feed's thread); returns the unsubscribe."""
        unsubscribe = self._subscribers.add(subscriber)
        with self._lock:
            if self._thread is None and not self._stopping.is_set():
                self._thread = threading.Thread(target=self._run, name="captura-escuta", daemon=True)
                self._thread.start()
        return unsubscribe

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)

    @property
    def lost(self) -> bool:
        """The connection dropped and is not back yet (the subscribers were told ``LOST``)."""
        return self._lost

    def _run(self) -> None:
        delay = FIRST_RETRY_S
        while not self._stopping.is_set():
            try:
                self._listen()
                delay = FIRST_RETRY_S
            except self._errors as error:
                self.listening.clear()
                if not self._lost:  # once per drop: the attempts that follow are not news
                    self._lost = True
                    log.warning("Sem conexão com o banco do escritório; novas tentativas sozinhas: %s", error)
                    self._subscribers.tell(Change(frozenset(), link=LOST))
                self._stopping.wait(delay)
                delay = min(delay * 2, LAST_RETRY_S)

    def _listen(self) -> None:
        connection = self._connect()
        try:
            connection.execute(f"LISTEN {CHANNEL}")
            self.connections += 1
            self.listening.set()
            if self.connections > 1:  # what was sent while nobody listened is lost: look at everything
                if self._lost:
                    log.info("Conexão com o banco do escritório restabelecida")
                self._lost = False
                self._subscribers.tell(Change(WATCHED, everything=True, link=BACK))
            silent = 0.0
            while not self._stopping.is_set():
                heard = False
                for notification in connection.notifies(timeout=LOOK_EVERY_S):
                    heard = True
                    self._subscribers.tell(Change.parse(notification.payload))
                silent = 0.0 if heard else silent + LOOK_EVERY_S
                if silent >= PING_EVERY_S:  # a half-open connection raises here, not in the wait
                    connection.execute("SELECT 1")
                    silent = 0.0
        finally:
            self.listening.clear()
            try:
                connection.close()
            except self._errors:
                pass
