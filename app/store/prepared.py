"""Statements compiled once and run on the driver: the capture loop's hot reads and writes.

Building, compiling and caching-key a SQLAlchemy statement per call, and loading its rows into
ORM objects, costs far more than SQLite's own work for a one-row read. ``Prepared`` compiles the
statement once (SQLite dialect), passes parameters in the driver's form (instants through
``app.store.types.utc_text``) and converts result columns with each column type's own result
processor, so values read back exactly as the ORM reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.dialects import sqlite
from sqlalchemy.sql.expression import ClauseElement

from app.store.driver import as_driver, driver_of, register
from app.store.types import UtcDateTime, utc_from_text

_SQLITE = sqlite.dialect()


def _processor(column: Any) -> Callable[[Any], Any] | None:
    if isinstance(column.type, UtcDateTime):
        return utc_from_text  # the ORM's result, without its two-step processor chain
    return column.type.dialect_impl(_SQLITE).result_processor(_SQLITE, None)  # type: ignore[no-any-return]


class Prepared:
    """One statement compiled once; ``rows``/``first`` for selects, ``run`` for writes."""

    def __init__(self, statement: ClauseElement) -> None:
        compiled = statement.compile(dialect=_SQLITE)
        self.sql = str(compiled)
        self._names: tuple[str, ...] = tuple(getattr(compiled, "positiontup", None) or ())
        register(self.sql, statement, self._names)  # PostgreSQL compiles it for itself
        selected: Sequence[Any] = getattr(statement, "selected_columns", ())
        self._processors = [_processor(c) for c in selected]
        self._plain = all(p is None for p in self._processors)

    def _params(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(params[name] for name in self._names)

    def rows(self, connection: Connection, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        raw = driver_of(connection).execute(self.sql, self._params(params or {})).fetchall()
        if self._plain:
            return [tuple(r) for r in raw]
        processors = self._processors
        return [tuple(v if p is None or v is None else p(v) for p, v in zip(processors, r, strict=True)) for r in raw]

    def first_on_driver(self, connection: Any, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
        """``first`` on a DBAPI (sqlite3) connection: one statement in autocommit, no BEGIN."""
        raw = connection.execute(self.sql, self._params(params)).fetchone()
        if raw is None:
            return None
        return tuple(v if p is None or v is None else p(v) for p, v in zip(self._processors, raw, strict=True))

    def rows_on_driver(
        self, connection: Any, params: Mapping[str, Any], limit: int | None = None
    ) -> list[tuple[Any, ...]]:
        """Rows of a select on a DBAPI (sqlite3) connection; ``limit`` stops reading early (the
        ORDER BY follows an index, so SQLite produces rows one by one)."""
        cursor = connection.execute(self.sql, self._params(params))
        try:
            raw = cursor.fetchall() if limit is None else cursor.fetchmany(limit)
        finally:
            cursor.close()  # a statement left mid-scan would keep its read snapshot open
        processors = self._processors
        return [tuple(v if p is None or v is None else p(v) for p, v in zip(processors, r, strict=True)) for r in raw]

    def first(self, connection: Connection, params: Mapping[str, Any] | None = None) -> tuple[Any, ...] | None:
        found = self.rows(connection, params)
        return found[0] if found else None

    def run(self, connection: Connection | Any, params: Mapping[str, Any] | None = None) -> int:
        """Execute a write inside an open write transaction (a SQLAlchemy connection or the
        sqlite3 connection of a ``Database.write_driver`` unit); returns the cursor's lastrowid
        (the new row's id after an INSERT)."""
        # A psycopg cursor has a lastrowid only after an INSERT (app.store.dialect): getattr.
        return int(getattr(as_driver(connection).execute(self.sql, self._params(params or {})), "lastrowid", 0) or 0)

    def changed(self, connection: Connection | Any, params: Mapping[str, Any] | None = None) -> int:
        """Execute a write like ``run``; returns how many rows it changed."""
        return int(as_driver(connection).execute(self.sql, self._params(params or {})).rowcount)


def placeholders(count: int) -> str:
    """``?, ?, ...`` for an ``IN (...)`` list of ``count`` values."""
    return ", ".join("?" * count)


class RowInsert:
    """An INSERT of the named columns for the driver's ``executemany``, rows as plain tuples in
    the order of ``columns`` (values already in the driver's form: ``utc_text`` for instants).

    ``columns`` must be every column of the table but ``omit`` (what SQLite fills), so a column
    added to the model cannot be skipped silently: the import fails instead.
    """

    def __init__(self, table: Any, columns: Sequence[str], *, omit: tuple[str, ...] = ()) -> None:
        expected = {c.key for c in table.columns if c.key not in omit}
        if set(columns) != expected or len(columns) != len(expected):
            raise AssertionError(f"{table.name}: columns {sorted(columns)} != {sorted(expected)}")
        quote = _SQLITE.identifier_preparer.quote
        self.columns = tuple(columns)
        self.sql = (
            # Names from the model, values bound: nothing from input reaches the text.
            f"INSERT INTO {quote(table.name)} ({', '.join(quote(c) for c in columns)}) "  # noqa: S608
            f"VALUES ({placeholders(len(columns))})"
        )

    def run(self, driver: Any, row: Sequence[Any]) -> None:
        driver.execute(self.sql, row)

    def run_many(self, driver: Any, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            driver.executemany(self.sql, rows)
