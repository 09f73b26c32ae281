"""Opening the database: one engine per file, migrations to head, short sessions.

SQLite runs in WAL mode (readers never wait for the writer), with foreign keys on, synchronous
NORMAL (safe in WAL; a power cut loses at most the commits since the last checkpoint, never
consistency) and a busy timeout so concurrent writers queue instead of failing.

Checkpoints run by time on a background thread (``Checkpointer``, a second after a write), not
inline by size: SQLite's automatic checkpoint made the commit that crossed 1,000 WAL pages copy
them and fsync, on the capture thread (bench_nfe_processing: ~8% of the pipeline), and at night
(a few commits an hour) it left the last hours' commits unsynced. The size-based checkpoint stays
as a backstop at ``WAL_BACKSTOP_PAGES`` should the thread fall behind.

SQLAlchemy emits BEGIN itself: write sessions take ``BEGIN IMMEDIATE`` so two writers serialise at
the start of the transaction (a deferred transaction that reads and then writes could fail with
SQLITE_BUSY without waiting); read sessions use a plain deferred ``BEGIN`` and never block.

Migrations live in ``app/store/migrations`` and run through Alembic's API with a
``Config`` built in code (no alembic.ini). Alembic (and Mako under it, ~11 MB of the tray's
resident memory, issue 20) is imported only when a migration is due: opening compares the stored
revision, read with a plain query, with the head read from the revision files' text. To write
a new revision during development::

    from alembic import command
    from app.store.db import alembic_config
    command.revision(alembic_config(url="sqlite:///scratch.db"), message="...", autogenerate=True)

(upgrade ``scratch.db`` to head first, then review the generated file by hand).
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, inspect
from sqlalchemy.orm import Session, sessionmaker

from app.core.clock import Clock, SystemClock
from app.store.driver import driver_of
from app.store.errors import StorageBug, translate_errors
from app.store.notify import ChangeFeed

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
BUSY_TIMEOUT_MS = 15_000
CHECKPOINT_INTERVAL_S = 1.0
WAL_BACKSTOP_PAGES = 16_000  # ~64 MB: reached only if the checkpoint thread cannot keep up
_BEGIN_OPTION = "captura_begin"
# Driver connections kept between uses (each holds its page cache and two descriptors): a burst's
# extra ones are closed, so the file count stays bounded over days in the tray (issue 20).
DRIVER_MAX_IDLE = 4


def alembic_config(connection: Connection | None = None, url: str | None = None) -> Config:
    """An Alembic ``Config`` pointing at the migrations package; no ini file involved."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    # Revision files must be importable module names (mypy checks them): r<rev>_<slug>.py.
    config.set_main_option("file_template", "r%%(rev)s_%%(slug)s")
    if url is not None:
        config.set_main_option("sqlalchemy.url", url)
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise StorageBug("no migration found in app/store/migrations/versions")
    return head


def _configure_connection(dbapi_connection: sqlite3.Connection) -> None:
    """The settings every connection to the database gets, SQLAlchemy's and the driver pool's."""
    # Transactions are begun explicitly (SQLAlchemy's "begin" hook, the driver units' BEGIN
    # IMMEDIATE): the sqlite3 module's legacy mode would skip BEGIN for SELECT and DDL.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute(f"PRAGMA wal_autocheckpoint = {WAL_BACKSTOP_PAGES}")
    finally:
        cursor.close()


def _configure_engine(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        _configure_connection(dbapi_connection)

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        mode = connection.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        connection.exec_driver_sql(f"BEGIN {mode}")


class Checkpointer:
    """Copies the WAL into the database file every ``interval`` seconds on its own connection
    (``PRAGMA wal_checkpoint(PASSIVE)``: never waits for readers or the writer), so the capture
    threads' commits only append to the WAL. ``kick`` after a write; ``stop`` checkpoints once
    more and ends the thread."""

    def __init__(self, path: Path, interval: float = CHECKPOINT_INTERVAL_S) -> None:
        self._path = path
        self._interval = interval
        self._dirty = threading.Event()
        self._stopping = threading.Event()
        self.checkpoints = 0
        self._thread = threading.Thread(target=self._loop, name="captura-checkpoint", daemon=True)
        self._thread.start()

    def kick(self) -> None:
        self._dirty.set()

    def stop(self) -> None:
        self._stopping.set()
        self._dirty.set()
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        connection = sqlite3.connect(self._path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        try:
            while True:
                self._dirty.wait()
                if not self._stopping.is_set():
                    self._stopping.wait(self._interval)  # gather a second of commits per checkpoint
                self._dirty.clear()
                self._checkpoint(connection)
                if self._stopping.is_set():
                    return
        finally:
            connection.close()

    def _checkpoint(self, connection: sqlite3.Connection) -> None:
        try:
            connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            self.checkpoints += 1
        except sqlite3.Error as error:  # busy or I/O: the next one (or the backstop) catches up
            log.warning("checkpoint do banco adiado: %s", error)


class NoCheckpointer:
    """PostgreSQL's server checkpoints by itself: nothing to copy, nothing to kick."""

    checkpoints = 0

    def kick(self) -> None:
        pass

    def stop(self) -> None:
        pass


class StateMarks:
    """Change marks of the capture states and pauses written by this process.

    Every writer marks AFTER its commit; a reader takes :meth:`token` BEFORE it reads. A token
    still current later therefore proves that no write of this process committed since the
    reading, so the reading may stand in for a new one (the engines read a company's state to
    decide it is due and, a moment later, to run it). A pause concerns every company: ``mark_all``.
    Other processes are not seen: a reading is trusted for one scheduler cycle at most.
    """

    def __init__(self) -> None:
        self._all = 0
        self._companies: dict[int, int] = {}
        self._lock = threading.Lock()

    def token(self, company_id: int) -> tuple[int, int]:
        with self._lock:
            return self._all, self._companies.get(company_id, 0)

    def mark(self, company_ids: Iterable[int]) -> None:
        with self._lock:
            for company_id in company_ids:
                self._companies[company_id] = self._companies.get(company_id, 0) + 1

    def mark_all(self) -> None:
        with self._lock:
            self._all += 1


def _sqlite_driver(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        _configure_connection(connection)
    except BaseException:
        connection.close()
        raise
    return connection


class DriverPool:
    """DBAPI connections (sqlite3's, or ``PgDriver``s on PostgreSQL) for the driver paths
    (``write_driver`` units and one-statement reads), kept apart from SQLAlchemy's pool.

    Those paths run a few times per government call; SQLAlchemy's checkout and return (events,
    reset-on-return, weakref bookkeeping) cost more than the statements themselves. Here a
    checkout is a list pop under a lock. A connection is used by one thread at a time and may
    serve another thread later (``check_same_thread=False``); it is returned outside any
    transaction, or rolled back first.
    """

    def __init__(
        self, connect: Callable[[], Any], errors: tuple[type[BaseException], ...], max_idle: int = DRIVER_MAX_IDLE
    ) -> None:
        """``connect`` opens one configured connection; ``errors``: the driver's error classes;
        ``max_idle``: how many returned connections are kept (more are closed on return)."""
        self._connect = connect
        self._errors = errors
        self.max_idle = max_idle
        self._lock = threading.Lock()
        self._idle: list[Any] = []
        self._closed = False

    def take(self) -> Any:
        with self._lock:
            if self._closed:
                raise StorageBug("banco de dados já fechado")
            if self._idle:
                return self._idle.pop()
        return self._connect()

    def give(self, connection: Any) -> None:
        try:
            if connection.in_transaction:  # an error ended the block mid-transaction
                connection.execute("ROLLBACK")
        except self._errors:  # unusable, and so are the ones kept (the server restarted): new ones on demand
            with self._lock:
                broken, self._idle = [connection, *self._idle], []
            for dead in broken:
                dead.close()
            return
        with self._lock:
            if not self._closed and len(self._idle) < self.max_idle:
                self._idle.append(connection)
                return
        connection.close()  # closed pool, or a burst's extra connection: the kept ones are bounded

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()


class Database:
    """An open database: one engine shared by every thread, short sessions per operation.

    ``session()`` is for writes (commits at the end, rolls back on error); ``reader()`` for
    reads. Both translate database errors into ``StorageUnavailable`` or ``StorageBug``.
    ORM objects never leave a session: repositories return frozen dataclasses or ids.
    """

    def __init__(self, path: Path | None, engine: Engine, clock: Clock) -> None:
        """``path``: the SQLite file, or None on PostgreSQL (``engine.url`` names the server)."""
        self.path = path
        # What error messages name: the file, or the office server without its password.
        self.location: Path | str = path if path is not None else engine.url.render_as_string(hide_password=True)
        self.engine = engine
        self.clock = clock
        self.dialect = engine.dialect.name
        writer = engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        self._writer_engine = writer
        self._writer = sessionmaker(writer, expire_on_commit=False)
        # Bumped by every in-process change to companies and their settings: the engines keep
        # the list of companies to look at between scheduler passes while it stays the same.
        self.companies_generation = 0
        self.state_marks = StateMarks()
        # The capture node's fence (app.store.lease.fence_in with its token): while set, every
        # write transaction first checks, inside it, that this workstation still holds the lease.
        self.fence: Callable[[Any], None] | None = None
        self.checkpointer: Checkpointer | NoCheckpointer
        # What other workstations commit, heard on the office server (app.store.notify); None on SQLite.
        self.changes: ChangeFeed | None = None
        if path is not None:
            self._read_engine = engine
            self.checkpointer = Checkpointer(path)
            self.drivers = DriverPool(partial(_sqlite_driver, path), (sqlite3.Error,))
        else:
            from app.store.dialect import pg_connector, pg_feed

            # A reader sees one snapshot for its whole transaction, as a deferred SQLite one does.
            self._read_engine = engine.execution_options(isolation_level="REPEATABLE READ")
            self.checkpointer = NoCheckpointer()
            self.drivers = DriverPool(*pg_connector(engine.url))
            self.changes = pg_feed(engine.url)
        self._reader = sessionmaker(self._read_engine, expire_on_commit=False)

        @event.listens_for(engine, "commit")
        def _on_commit(_connection: Connection) -> None:
            self.checkpointer.kick()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A write transaction: ``BEGIN IMMEDIATE``, commit on success, rollback on error."""
        with translate_errors(self.location), self._writer() as session, session.begin():
            fence = self.fence
            if fence is not None:
                fence(driver_of(session.connection()))
            yield session

    @contextmanager
    def reader(self) -> Iterator[Session]:
        """A read-only snapshot (deferred transaction, rolled back at the end)."""
        # No explicit begin: the first statement starts a deferred transaction, and closing the
        # session rolls it back and returns the connection.
        with translate_errors(self.location), self._reader() as session:
            yield session

    @contextmanager
    def write_connection(self) -> Iterator[Connection]:
        """A write transaction on a bare connection (prepared statements on the hot path: no ORM
        session to build and tear down); ``BEGIN IMMEDIATE``, commit on success."""
        with translate_errors(self.location), self._writer_engine.begin() as connection:
            fence = self.fence
            if fence is not None:
                fence(driver_of(connection))
            yield connection

    @contextmanager
    def read_connection(self) -> Iterator[Connection]:
        """A read snapshot on a bare connection (deferred transaction, rolled back at the end)."""
        with translate_errors(self.location), self._read_engine.connect() as connection:
            yield connection

    @contextmanager
    def driver_connection(self) -> Iterator[Any]:
        """A pooled driver connection in autocommit for ONE read statement: the cheapest read there is."""
        with translate_errors(self.location):
            connection = self.drivers.take()
            try:
                yield connection
            finally:
                self.drivers.give(connection)

    @contextmanager
    def write_driver(self, *, fenced: bool = True) -> Iterator[Any]:
        """A write transaction on the pooled sqlite3 connection itself: ``BEGIN IMMEDIATE``, commit
        on success, rollback on error. The capture's unit of work per answer (app.store.unit),
        without SQLAlchemy's per-statement machinery; statements are the prepared ones.
        ``fenced`` False: the node lease's own transactions (the fence checks the lease)."""
        with translate_errors(self.location):
            driver = self.drivers.take()
            try:
                driver.execute("BEGIN IMMEDIATE")
                try:
                    fence = self.fence if fenced else None
                    if fence is not None:
                        fence(driver)
                    yield driver
                except BaseException:
                    if driver.in_transaction:  # some errors end the transaction themselves
                        driver.execute("ROLLBACK")
                    raise
                driver.execute("COMMIT")
                self.checkpointer.kick()
            finally:
                self.drivers.give(driver)

    def revision(self) -> str | None:
        from alembic.runtime.migration import MigrationContext

        with translate_errors(self.location), self.engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    def close(self) -> None:
        if self.changes is not None:
            self.changes.stop()
        self.drivers.close()
        self.checkpointer.stop()
        self.engine.dispose()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


_REVISION = re.compile(r"^revision\b[^=\n]*=\s*['\"]([^'\"\n]+)['\"]\s*$", re.MULTILINE)
_DOWN_REVISION = re.compile(r"^down_revision\b[^=\n]*=\s*(.+?)\s*$", re.MULTILINE)
_QUOTED = re.compile(r"['\"]([^'\"]+)['\"]")


@cache
def _scripted_head() -> str | None:
    """The head revision read from the revision files' text, without importing Alembic; None when
    that text does not say it plainly (several heads, a merge, a file in another shape): then
    Alembic decides."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for script in (MIGRATIONS_DIR / "versions").glob("r*.py"):
        text = script.read_text(encoding="utf-8")
        revision, down = _REVISION.search(text), _DOWN_REVISION.search(text)
        if revision is None or down is None:
            return None
        revisions.add(revision[1])
        if down[1] != "None":
            parent = _QUOTED.fullmatch(down[1])
            if parent is None:  # a tuple of parents: a merge revision
                return None
            parents.add(parent[1])
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 and parents <= revisions else None


def _stored_revisions(connection: Connection) -> list[str] | None:
    """The revisions stamped in the database (a plain query); None before the first migration."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    return [row[0] for row in connection.exec_driver_sql("SELECT version_num FROM alembic_version")]


def _upgrade(engine: Engine, location: Path | str, clock: Clock) -> None:
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            from app.store.driver import WRITE_LOCK_SQL

            connection.exec_driver_sql(WRITE_LOCK_SQL)  # two workstations opening at once: one migrates
        head = _scripted_head()
        if head is not None and _stored_revisions(connection) == [head]:
            return  # already at head: Alembic is not even imported
        _alembic_upgrade(connection, location, clock)


def _alembic_upgrade(connection: Connection, location: Path | str, clock: Clock) -> None:
    from alembic import command
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    from app import __version__
    from app.store.versions import guard_migration, record_version, too_new

    known = ScriptDirectory.from_config(alembic_config())
    current = MigrationContext.configure(connection).get_current_revision()
    if current is not None:
        try:
            known.get_revision(current)
        except CommandError:
            raise too_new(connection, current, location) from None
    head = known.get_current_head()
    if head is None:
        raise StorageBug("no migration found in app/store/migrations/versions")
    if current == head:
        return
    guard_migration(connection, current, head, clock.now())
    command.upgrade(alembic_config(connection), "head")
    record_version(connection, head, __version__, clock.now())


def is_server_url(target: Path | str) -> bool:
    """Whether ``target`` names a PostgreSQL server (``postgresql://…``) rather than a file."""
    return isinstance(target, str) and target.startswith(("postgresql:", "postgresql+psycopg:"))


def open_database(target: Path | str, *, clock: Clock | None = None) -> Database:
    """Open the database at ``target`` and migrate it to the newest schema: a SQLite file (created
    if missing) or an office server's URL (``postgresql+psycopg://user@host:port/database``)."""
    if is_server_url(target):
        from app.store.dialect import pg_engine

        engine = pg_engine(str(target))
        path: Path | None = None
        location: Path | str = engine.url.render_as_string(hide_password=True)
    else:
        path = location = Path(target)
        with translate_errors(path):
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        _configure_engine(engine)
    try:
        with translate_errors(location):
            _upgrade(engine, location, clock or SystemClock())
    except BaseException:
        engine.dispose()
        raise
    log.info("database open: %s", location)
    return Database(path, engine, clock or SystemClock())
