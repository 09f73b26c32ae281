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

_SQLITE = sqlite.dialect()


def _processor(column: Any) -> Callable[[Any], Any] | None:
    return column.type.dialect_impl(_SQLITE).result_processor(_SQLITE, None)  # type: ignore[no-any-return]


class Prepared:
    """One statement compiled once; ``rows``/``first`` for selects, ``run`` for writes."""

    def __init__(self, statement: ClauseElement) -> None:
        compiled = statement.compile(dialect=_SQLITE)
        self.sql = str(compiled)
        self._names: tuple[str, ...] = tuple(getattr(compiled, "positiontup", None) or ())
        selected: Sequence[Any] = getattr(statement, "selected_columns", ())
        self._processors = [_processor(c) for c in selected]
        self._plain = all(p is None for p in self._processors)

    def _params(self, params: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(params[name] for name in self._names)

    def rows(self, connection: Connection, params: Mapping[str, Any] | None = None) -> list[tuple[Any, ...]]:
        raw = connection.exec_driver_sql(self.sql, self._params(params or {})).fetchall()
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

    def first(self, connection: Connection, params: Mapping[str, Any] | None = None) -> tuple[Any, ...] | None:
        found = self.rows(connection, params)
        return found[0] if found else None

    def run(self, connection: Connection, params: Mapping[str, Any] | None = None) -> int:
        """Execute a write; returns the cursor's lastrowid (the new row's id after an INSERT)."""
        result = connection.exec_driver_sql(self.sql, self._params(params or {}))
        return int(result.lastrowid or 0)
