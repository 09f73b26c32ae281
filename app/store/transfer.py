"""Moving an office over: a data folder's SQLite database copied into the office's PostgreSQL.

``copy_tables`` copies every table in the order of its foreign keys, in batches by primary key,
each batch its own transaction on the target: an interrupted copy is taken up where it stopped by
calling it again (the target's highest key says how far each table got). ``verify`` then compares
the row count of every table and every row, column by column (blobs by SHA-256): a row changed in
the SQLite file after it was copied shows up. The XML of each document version and event must
also hash back to its recorded SHA-256 on the server.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Column, LargeBinary, Table, func, insert, select, tuple_

from app.store.db import Database
from app.store.driver import follow_ids
from app.store.errors import StorageCorrupt
from app.store.models import Base
from app.store.types import unpack_xml

BATCH_ROWS = 2_000
# The target's own rows, written by its migrations, not copied: which app version made its schema,
# and the capture node's lease (the office's starts free: the workstation that held the SQLite
# file's was that folder's node, not the office's).
OWN_TABLES = frozenset({"schema_versions", "node_lease"})
Progress = Callable[[str, int, int], None]  # (table, rows copied so far, rows in the source)


@dataclass(frozen=True, slots=True)
class TableCount:
    table: str
    source: int
    target: int


@dataclass(frozen=True, slots=True)
class TransferReport:
    """What ``verify`` found: rows per table on both sides, rows and XML compared, what differs."""

    counts: tuple[TableCount, ...]
    xml_checked: int
    rows_checked: int
    mismatches: tuple[str, ...]  # "document_versions 12: ..." for each row that differs

    @property
    def ok(self) -> bool:
        return not self.mismatches and all(c.source == c.target for c in self.counts)


def tables() -> list[Table]:
    """The tables to copy, parents before children."""
    return [table for table in Base.metadata.sorted_tables if table.name not in OWN_TABLES]


def row_count(db: Database, table: Table) -> int:
    with db.read_connection() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def holds_rows(db: Database) -> list[str]:
    """The tables of ``db`` that have any row (an office server to copy into must have none)."""
    found = []
    with db.read_connection() as connection:
        for table in tables():
            if connection.execute(select(1).select_from(table).limit(1)).first() is not None:
                found.append(table.name)
    return found


def _key(table: Table) -> list[Column[Any]]:
    return list(table.primary_key.columns)


def _after(table: Table, last: Sequence[Any] | None) -> Any:
    """``SELECT * FROM table [WHERE key > last] ORDER BY key``: keyset pages, never OFFSET."""
    key = _key(table)
    query = select(table).order_by(*key)
    if last is None:
        return query
    if len(key) == 1:
        return query.where(key[0] > last[0])
    return query.where(tuple_(*key) > tuple_(*last))


def _last_key(db: Database, table: Table) -> tuple[Any, ...] | None:
    key = _key(table)
    with db.read_connection() as connection:
        row = connection.execute(select(*key).order_by(*(column.desc() for column in key)).limit(1)).first()
    return tuple(row) if row is not None else None


def _pages(db: Database, table: Table, batch_rows: int, last: Sequence[Any] | None = None) -> Iterator[list[Any]]:
    """The rows of ``table`` after ``last`` in key order, one short read transaction per page."""
    key = [column.name for column in _key(table)]
    while True:
        with db.read_connection() as connection:
            rows = list(connection.execute(_after(table, last).limit(batch_rows)))
        if not rows:
            return
        yield rows
        last = tuple(getattr(rows[-1], name) for name in key)


def copy_tables(
    source: Database, target: Database, *, batch_rows: int = BATCH_ROWS, progress: Progress | None = None
) -> None:
    """Copy every row of ``source`` missing from ``target`` (all of them the first time)."""
    for table in tables():
        total = row_count(source, table)
        copied = row_count(target, table)
        for rows in _pages(source, table, batch_rows, _last_key(target, table)):
            with target.write_connection() as connection:
                connection.execute(insert(table), [dict(row._mapping) for row in rows])
            copied += len(rows)
            if progress is not None:
                progress(table.name, copied, total)
        if total and target.dialect == "postgresql" and [c.name for c in _key(table)] == ["id"]:
            with target.write_connection() as connection:  # the server's next id follows the copied ones
                connection.exec_driver_sql(follow_ids(table.name))


def _digest(blob: bytes | None) -> str | None:
    return hashlib.sha256(blob).hexdigest() if blob is not None else None


def _comparable(row: Any, table: Table) -> tuple[Any, ...]:
    """A row as compared across engines: blobs by their SHA-256, the rest as the models read them."""
    return tuple(
        _digest(value) if isinstance(column.type, LargeBinary) else value
        for column, value in zip(table.columns, row, strict=True)
    )


def _compare_rows(source: Database, target: Database, table: Table, batch_rows: int) -> tuple[int, list[str]]:
    """(XML checked, mismatches) of one table: every target row against the source's, page by page;
    each stored XML must also hash back to its recorded SHA-256 on the server."""
    key = _key(table)
    names = [column.name for column in key]
    has_xml = "xml_zlib" in table.columns
    xml, wrong = 0, []
    for page in _pages(target, table, batch_rows):
        first = tuple(getattr(page[0], name) for name in names)
        last = tuple(getattr(page[-1], name) for name in names)
        with source.read_connection() as connection:
            query = _after(table, None).where(tuple_(*key) >= tuple_(*first), tuple_(*key) <= tuple_(*last))
            theirs = {tuple(getattr(row, name) for name in names): row for row in connection.execute(query)}
        for row in page:
            at = tuple(getattr(row, name) for name in names)
            where = f"{table.name} {'/'.join(str(part) for part in at)}"
            original = theirs.get(at)
            if original is None:
                wrong.append(f"{where}: não existe no banco de origem")
                continue
            if has_xml:
                xml += 1
                try:
                    unpack_xml(row.xml_zlib, row.xml_sha256)
                except StorageCorrupt as error:
                    wrong.append(f"{where}: {error.message}")
                    continue
            if _comparable(row, table) != _comparable(original, table):
                differ = [c.name for c, a, b in zip(table.columns, row, original, strict=True) if a != b]
                wrong.append(f"{where}: diferente do banco de origem ({', '.join(differ)})")
    return xml, wrong


def verify(source: Database, target: Database, *, batch_rows: int = BATCH_ROWS) -> TransferReport:
    """Row counts of every table and every blob of the target against the source."""
    counts, mismatches = [], []
    xml_checked = rows_checked = 0
    for table in tables():
        count = TableCount(table.name, row_count(source, table), row_count(target, table))
        counts.append(count)
        xml, wrong = _compare_rows(source, target, table, batch_rows)
        xml_checked, rows_checked = xml_checked + xml, rows_checked + count.target
        mismatches.extend(wrong)
    return TransferReport(tuple(counts), xml_checked, rows_checked, tuple(mismatches))
