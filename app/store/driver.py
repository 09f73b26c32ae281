"""The store's driver paths on PostgreSQL: a psycopg connection that speaks like sqlite3.

The store's hot paths (``Database.write_driver``/``driver_connection``, ``Prepared``, the lot
writer, the grid) run SQL text on a DBAPI connection, written once in SQLite's spelling: ``?``
placeholders, ``lastrowid`` after an INSERT, ``0``/``1`` for booleans. ``PgDriver`` wraps a psycopg
connection (autocommit: transactions are begun explicitly, as on sqlite3) and translates each SQL
text once, cached: ``?`` becomes ``%s`` (a literal ``%`` is doubled), ``<boolean column> = 0|1``
becomes ``= FALSE|TRUE``, an INSERT into a table with an ``id`` gets ``RETURNING id`` and its cursor
a ``lastrowid``. Statements ``Prepared`` registered are compiled for PostgreSQL instead of
translated. SQLite's own path never passes here: the ``Database`` picks its driver once, at open.

Writers: SQLite's ``BEGIN IMMEDIATE`` serialises every write transaction of every process, and the
store relies on it (the lot writer's ``max(id) + 1``, the cursors' read-then-write, the call lease).
On PostgreSQL each write transaction takes the same guarantee explicitly: ``WRITE_LOCK_SQL``, a
transaction-level advisory lock held until COMMIT/ROLLBACK.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.sql.expression import ClauseElement

from app.store.errors import StorageBug
from app.store.notify import send_before_commit, written_table

# An arbitrary constant naming "the store's writer" among advisory locks (b"CAPTURA\0" as int).
WRITE_LOCK_KEY = 0x4341505455524100
WRITE_LOCK_SQL = f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})"
# The key, in a SQLAlchemy connection's ``info``, of the watched tables its transaction wrote.
WRITTEN_INFO = "captura_written"


# The schema's facts the translation needs, given by app.store.dialect (which knows the models).
_BOOLEAN_LITERAL = re.compile(r"(?!)")
_ID_TABLES: frozenset[str] = frozenset()
_INSERT_INTO = re.compile(r"^\s*INSERT INTO\s+\"?(\w+)\"?", re.IGNORECASE)
_QMARK = re.compile(r"\?")
_RETURNING = re.compile(r"\s+RETURNING\s+[\w.\"]+\s*$", re.IGNORECASE)
# An INSERT naming its ids, and the statement that moves the table's id sequence past them.
_GIVEN_ID = re.compile(r'^\s*INSERT INTO\s+"?(\w+)"?\s*\(\s*"?id"?\s*,', re.IGNORECASE)
_LAST_ID = "COALESCE(pg_sequence_last_value(pg_get_serial_sequence('{table}', 'id')::regclass), 0)"
_FOLLOW_IDS = (
    "SELECT setval(pg_get_serial_sequence('{table}', 'id'), GREATEST((SELECT max(id) FROM {table}), " + _LAST_ID + "))"  # noqa: S608 (table names from the models)
)


def follow_ids(table: str) -> str:
    """The statement that moves ``table``'s id sequence past the ids written into it explicitly
    (PostgreSQL; the table's primary key is ``id``)."""
    return _FOLLOW_IDS.format(table=table)


def last_ids(*tables: str) -> str:
    """PostgreSQL's ``SELECT max(id)`` of each table as the lot writer means it: the last id handed
    out, by its sequence (which never hands an id back, where SQLite reuses a deleted last one)."""
    maxima = (f"GREATEST((SELECT max(id) FROM {t}), {_LAST_ID.format(table=t)})" for t in tables)  # noqa: S608
    return "SELECT " + ", ".join(maxima)


# SQL texts spelled differently on PostgreSQL (register_text).
_SPELLED: dict[str, str] = {}
# SQLite text of a Prepared statement -> the statement and the order of its parameters there,
# compiled for PostgreSQL on first use.
_REGISTERED: dict[str, tuple[ClauseElement, tuple[str, ...]]] = {}
_TRANSLATED: dict[str, tuple[str, bool]] = {}
_lock = threading.Lock()


def describe_schema(boolean_columns: Iterable[str], id_tables: Iterable[str]) -> None:
    """The boolean columns (``= 0|1`` becomes ``= FALSE|TRUE``) and the tables whose primary key
    is ``id`` (an INSERT there returns it): from the models, before the first translation."""
    global _BOOLEAN_LITERAL, _ID_TABLES
    _BOOLEAN_LITERAL = re.compile(r"\b(" + "|".join(sorted(boolean_columns)) + r")\s*=\s*([01])\b")
    _ID_TABLES = frozenset(id_tables)
    _TRANSLATED.clear()


def register(sqlite_sql: str, statement: ClauseElement, names: tuple[str, ...]) -> None:
    """Let ``PgDriver`` compile ``statement`` for PostgreSQL when it meets its SQLite text;
    ``names``: its parameters in the order the SQLite text takes them."""
    _REGISTERED.setdefault(sqlite_sql, (statement, names))


def register_text(sqlite_sql: str, postgresql_sql: str) -> None:
    """``postgresql_sql`` (``?`` placeholders too) runs wherever ``sqlite_sql`` is given."""
    _SPELLED[sqlite_sql] = postgresql_sql


def _pg_dialect() -> Any:
    """SQLAlchemy's PostgreSQL dialect with ``?`` placeholders (imported on first use only)."""
    global _PG_DIALECT
    if _PG_DIALECT is None:
        from sqlalchemy.dialects.postgresql import psycopg as pg_psycopg

        _PG_DIALECT = pg_psycopg.dialect(paramstyle="qmark")  # type: ignore[no-untyped-call]
    return _PG_DIALECT


_PG_DIALECT: Any = None


def _pg_text(sql: str) -> str:
    spelled = _SPELLED.get(sql)
    if spelled is not None:
        return spelled
    registered = _REGISTERED.get(sql)
    # SQLite's own INSERT ... ON CONFLICT construct has no PostgreSQL compilation, but its text
    # is PostgreSQL's too: translated below like any SQL text.
    if registered is not None and registered[0].__class__.__module__ != "sqlalchemy.dialects.sqlite.dml":
        statement, names = registered
        compiled = statement.compile(dialect=_pg_dialect())
        if tuple(getattr(compiled, "positiontup", None) or ()) != names:
            raise StorageBug(f"parameters in another order on PostgreSQL: {compiled}")
        return str(compiled)
    return _BOOLEAN_LITERAL.sub(lambda m: f"{m[1]} = {'TRUE' if m[2] == '1' else 'FALSE'}", sql)


def translate(sql: str) -> tuple[str, bool]:
    """``sql`` (SQLite's spelling, ``?`` placeholders) in psycopg's, and whether it returns an id."""
    found = _TRANSLATED.get(sql)
    if found is not None:
        return found
    text = _pg_text(sql)
    inserted = _INSERT_INTO.match(text)
    # sqlite3's lastrowid: the id the INSERT returns (SQLAlchemy's compilation already asks for
    # it, "RETURNING <table>.id"); an INSERT written with its own RETURNING is left to its caller.
    returns_id = bool(inserted and inserted[1] in _ID_TABLES and "RETURNING" not in sql.upper())
    if returns_id and "RETURNING" not in text.upper():
        text += " RETURNING id"
    text = _QMARK.sub("%s", text.replace("%", "%%"))
    with _lock:
        _TRANSLATED[sql] = (text, returns_id)
    return text, returns_id


class _Inserted:
    """The cursor of an INSERT ... RETURNING id, read: ``lastrowid`` as sqlite3 gives it."""

    __slots__ = ("lastrowid", "rowcount")

    def __init__(self, cursor: Any) -> None:
        self.rowcount = cursor.rowcount
        row = cursor.fetchone()
        self.lastrowid = row[0] if row else None
        cursor.close()

    def fetchone(self) -> None:
        return None

    def fetchall(self) -> list[Any]:
        return []


class PgDriver:
    """A psycopg connection (autocommit) with sqlite3's ``execute``/``executemany`` interface.

    ``written``: the watched tables its open transaction wrote, told to the office just before
    its COMMIT (app.store.notify); a driver inside a SQLAlchemy transaction shares that
    connection's set, which the engine's commit event sends (app.store.dialect)."""

    __slots__ = ("connection", "written")

    def __init__(self, connection: Any, written: set[str] | None = None) -> None:
        self.connection = connection
        self.written: set[str] = written if written is not None else set()

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self.connection.info.transaction_status != TransactionStatus.IDLE)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        if sql.startswith(("BEGIN", "COMMIT", "ROLLBACK")):
            return self._transaction(sql)
        text, returns_id = translate(sql)
        table = written_table(sql)
        if table is not None:
            self.written.add(table)
        cursor = self.connection.execute(text, tuple(params))
        if not returns_id:
            return cursor
        inserted = _Inserted(cursor)
        given = _GIVEN_ID.match(sql)
        if given:
            self.connection.execute(follow_ids(given[1]))
        return inserted

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        text, returns_id = translate(sql)
        table = written_table(sql)
        if table is not None:
            self.written.add(table)
        if returns_id:
            text = _RETURNING.sub("", text)
        cursor = self.connection.cursor()
        cursor.executemany(text, rows)
        given = _GIVEN_ID.match(sql)
        if given:  # ids chosen by the writer (the lot's max(id) + 1): the sequence follows them
            cursor.execute(follow_ids(given[1]))
        return cursor

    def _transaction(self, sql: str) -> Any:
        """``BEGIN IMMEDIATE``: a transaction holding the store's writer lock (see the module's
        docstring); a plain ``BEGIN`` (a read of several statements): one snapshot for all.
        ``COMMIT`` first tells the office what the transaction wrote (delivered on commit)."""
        if sql == "COMMIT":
            send_before_commit(self.connection, self.written)
        elif sql.startswith(("BEGIN", "ROLLBACK")):
            self.written.clear()
        if sql == "BEGIN IMMEDIATE":
            self.connection.execute("BEGIN")
            return self.connection.execute(WRITE_LOCK_SQL)
        if sql == "BEGIN":
            return self.connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        return self.connection.execute(sql)

    def close(self) -> None:
        self.connection.close()


# ---------------------------------------------------------------- the driver, inside a transaction


def driver_of(connection: Connection) -> Any:
    """The sqlite3 connection under ``connection``, inside its open transaction: statements run
    on it belong to that transaction (the engine hands transaction control to SQLAlchemy). On
    PostgreSQL, the psycopg connection in a ``PgDriver`` (SQLite's spelling, translated)."""
    raw = connection.connection.driver_connection
    if raw.__class__ is sqlite3.Connection:
        return raw
    return PgDriver(raw, connection.info.setdefault(WRITTEN_INFO, set()))


def as_driver(connection: Connection | Any) -> Any:
    """The DBAPI connection to run a statement on: under a SQLAlchemy ``Connection`` (inside its
    open transaction), or the one a ``Database.write_driver`` unit holds."""
    return driver_of(connection) if isinstance(connection, Connection) else connection
