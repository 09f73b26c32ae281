"""Per-engine pieces chosen once at open: PostgreSQL's engine and driver connections, the
dialect's own ``INSERT ... ON CONFLICT``, a JSON array parameter as a table.

The driver paths themselves (``PgDriver``, the SQL translation, the writer lock) are in
app.store.driver; this module tells it the schema's facts from the models.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import URL, Boolean, Connection, Engine, bindparam, create_engine, event, make_url, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement, FunctionElement, Select
from sqlalchemy.sql.visitors import InternalTraversal

from app.store.driver import WRITE_LOCK_SQL, WRITTEN_INFO, PgDriver, describe_schema
from app.store.models import Base
from app.store.notify import FEED_NAME, ChangeFeed, send_before_commit, written_table

describe_schema(
    {c.name for t in Base.metadata.tables.values() for c in t.columns if isinstance(c.type, Boolean)},
    {t.name for t in Base.metadata.tables.values() if [c.name for c in t.primary_key.columns] == ["id"]},
)


# ---------------------------------------------------------------- the engine and the driver pool


# A workstation paused inside a write transaction (a suspended laptop, a frozen VM) would hold the
# office's writer lock until it wakes: the server ends such a session after this long instead (its
# transaction rolls back; the capture node's lease meanwhile passes to another workstation). It is
# shorter than the lease (app.capture.node.LeaseTiming): a node that vanished inside a transaction
# (power cut, cable pulled) has lost its session before a standby may take the lease over, so the
# takeover never waits on the dead node's writer lock.
IDLE_IN_TRANSACTION_TIMEOUT = timedelta(seconds=30)
SESSION_OPTIONS = f"-c idle_in_transaction_session_timeout={int(IDLE_IN_TRANSACTION_TIMEOUT.total_seconds() * 1000)}"
# A server the network lost (no refusal, just silence) is found out in seconds, not in the minutes
# of the system's TCP timeouts: a connection attempt waits 10 s at most, an idle connection is
# probed after 10 s of silence, and a write nobody acknowledges fails after 30 s (Linux; the other
# systems ignore what they lack). The capture node then retries on its own (app.capture.node).
LINK_DEFAULTS: dict[str, int] = {
    "connect_timeout": 10,
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 30_000,
}


def link_options(url: URL) -> dict[str, Any]:
    """``LINK_DEFAULTS`` but those the office's URL sets itself (its own ``connect_timeout``)."""
    return {name: value for name, value in LINK_DEFAULTS.items() if name not in url.query}


def pg_engine(url: str) -> Engine:
    """SQLAlchemy's engine on the office server; write transactions take the writer lock."""
    target = make_url(url)
    if target.drivername == "postgresql":
        target = target.set(drivername="postgresql+psycopg")
    engine = create_engine(
        target, pool_pre_ping=True, connect_args={"options": SESSION_OPTIONS, **link_options(target)}
    )

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        if connection.get_execution_options().get("captura_begin") == "IMMEDIATE":
            connection.exec_driver_sql(WRITE_LOCK_SQL)

    # The office hears of every watched table a transaction wrote (app.store.notify), whether the
    # statement came through SQLAlchemy (noted here) or a driver inside its transaction (driver_of).
    @event.listens_for(engine, "before_cursor_execute")
    def _on_execute(connection: Connection, _cursor: Any, statement: str, *_args: Any) -> None:
        table = written_table(statement)
        if table is not None:
            connection.info.setdefault(WRITTEN_INFO, set()).add(table)

    @event.listens_for(engine, "commit")
    def _on_commit(connection: Connection) -> None:  # before the COMMIT itself: inside the transaction
        written = connection.info.get(WRITTEN_INFO)
        if written:
            send_before_commit(connection.connection.driver_connection, written)

    @event.listens_for(engine, "rollback")
    def _on_rollback(connection: Connection) -> None:
        connection.info.pop(WRITTEN_INFO, None)

    return engine


def pg_connector(url: URL) -> tuple[Callable[[], PgDriver], tuple[type[Exception], ...]]:
    """What the ``DriverPool`` needs on the server: a factory of ``PgDriver``s (autocommit psycopg
    connections) and the driver's error class."""
    import psycopg

    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    link = link_options(url)
    connect = lambda: PgDriver(psycopg.connect(conninfo, autocommit=True, options=SESSION_OPTIONS, **link))  # noqa: E731
    return connect, (psycopg.Error,)


def pg_feed(url: URL) -> ChangeFeed:
    """The process's ear on the office server (started on its first subscriber): its own
    autocommit connection, never in a transaction (a LISTEN waits outside any)."""
    import psycopg

    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    link = link_options(url)
    connect = lambda: psycopg.connect(conninfo, autocommit=True, application_name=FEED_NAME, **link)  # noqa: E731
    return ChangeFeed(connect, (psycopg.Error,))


def upsert(entity: Any, dialect_name: str) -> Any:
    """``INSERT`` into ``entity`` with ``on_conflict_do_update``/``do_nothing``, in the dialect's own
    construct (SQLite and PostgreSQL spell ON CONFLICT alike; SQLAlchemy has one class each)."""
    if dialect_name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(entity)
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(entity)


# ---------------------------------------------------------------- a JSON array parameter as a table


class _JsonArray(FunctionElement[Any]):
    """The elements of a JSON array parameter as rows of one column ``value``."""

    name = "json_each"
    inherit_cache = True


@compiles(_JsonArray)
def _json_array(element: _JsonArray, compiler: Any, **kw: Any) -> str:
    return f"json_each({compiler.process(element.clauses, **kw)})"


@compiles(_JsonArray, "postgresql")
def _json_array_on_postgresql(element: _JsonArray, compiler: Any, **kw: Any) -> str:
    return f"json_array_elements_text(CAST({compiler.process(element.clauses, **kw)} AS json))"


class _JsonValue(ColumnElement[Any]):
    """The ``value`` column of ``_JsonArray``: JSON's own type on SQLite, text cast on PostgreSQL."""

    inherit_cache = True
    _traverse_internals = [("type", InternalTraversal.dp_type)]  # noqa: RUF012 (SQLAlchemy's own)

    def __init__(self, type_: Any) -> None:
        self.type = type_


@compiles(_JsonValue)
def _json_value(_element: _JsonValue, _compiler: Any, **_kw: Any) -> str:
    return "value"


@compiles(_JsonValue, "postgresql")
def _json_value_on_postgresql(element: _JsonValue, compiler: Any, **_kw: Any) -> str:
    return f"CAST(value AS {compiler.dialect.type_compiler_instance.process(element.type)})"


def json_values(name: str, type_: Any) -> Select[Any]:
    """``SELECT value FROM json_each(:name)``: one parameter holding a JSON array of ``type_``
    values, so a statement is prepared once for any number of them (``IN (...)``)."""
    return select(_JsonValue(type_)).select_from(_JsonArray(bindparam(name)))
