"""The reform's values in the store (revision 0011): written with the document's lot, read by the
detail, the JSON listing and the IBS/CBS credit report.

``save_reform_in`` runs inside ``store_lot_on``'s transaction after the lot's rows are inserted:
a document whose current version carries the reform's groups (or that is a nota de crédito or de
débito, or references other NF-e) gets its rows; any other document costs one attribute test.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, func, select, text

from app.documents.reform_model import ReformItem, ReformValues
from app.store.db import Database
from app.store.items import IN_CHUNK
from app.store.models import DocumentReformRow, DocumentRow
from app.store.prepared import placeholders
from app.store.records import DocumentInput, EventInput, GridSort, StoredDocument, StoredEvent

CREDIT_NOTE = "5"  # finNFe 5: nota de crédito
DEBIT_NOTE = "6"  # finNFe 6: nota de débito
NOTES = (CREDIT_NOTE, DEBIT_NOTE)

VALUE_COLUMNS = (
    "base_cents", "ibs_uf_cents", "ibs_mun_cents", "ibs_cents", "cbs_cents", "ibs_presumed_cents",
    "ibs_presumed_suspended_cents", "cbs_presumed_cents", "cbs_presumed_suspended_cents", "is_cents", "total_cents",
)  # fmt: skip
# After (item_number, cst, class_code): the tuple's own fields, so a ReformItem is its row.
_ITEM_COLUMNS = ReformItem._fields[3:]

_INSERT = (
    "INSERT INTO document_reform (document_id, has_groups, unreadable, purpose, "  # noqa: S608 (constants)
    f"{', '.join(VALUE_COLUMNS)}) VALUES ({', '.join('?' * (4 + len(VALUE_COLUMNS)))})"
)
_INSERT_ITEM = (
    "INSERT INTO document_reform_items (document_id, item_number, cst, class_code, "  # noqa: S608 (constants)
    f"{', '.join(_ITEM_COLUMNS)}) VALUES ({', '.join('?' * (4 + len(_ITEM_COLUMNS)))})"
)
_DELETE = "DELETE FROM document_reform WHERE document_id = ?"
_DELETE_ITEMS = "DELETE FROM document_reform_items WHERE document_id = ?"
_KNOWN_REFS = "SELECT referenced_key FROM nfe_references WHERE company_id = ? AND nfe_key = ?"
_LINK = "INSERT INTO nfe_references (company_id, nfe_key, referenced_key) VALUES (?, ?, ?)"


def _wanted(doc: DocumentInput) -> bool:
    return doc.reform is not None or doc.purpose in NOTES


def save_reform_in(
    driver: Any,
    company_id: int,
    items: Sequence[DocumentInput | EventInput],
    results: Sequence[StoredDocument | StoredEvent],
) -> None:
    """The reform rows of each document of the lot whose stored version became current (a new
    version replaces the old rows), and the NF-e references it names."""
    rows: list[tuple[Any, ...]] = []
    item_rows: list[tuple[Any, ...]] = []
    for doc, stored in zip(items, results, strict=True):
        if not isinstance(doc, DocumentInput) or not isinstance(stored, StoredDocument):
            continue
        if doc.referenced_keys and doc.access_key:
            _link_references(driver, company_id, doc.access_key, doc.referenced_keys)
        if not stored.became_current or not (_wanted(doc) or not stored.created):
            continue
        document_id = stored.document_id
        if not stored.created:
            driver.execute(_DELETE_ITEMS, (document_id,))
            driver.execute(_DELETE, (document_id,))
            if not _wanted(doc):
                continue
        values = doc.reform
        if values is None:
            rows.append((document_id, False, False, doc.purpose, *([None] * len(VALUE_COLUMNS))))
            continue
        rows.append((document_id, True, values.unreadable, doc.purpose, *(getattr(values, c) for c in VALUE_COLUMNS)))
        item_rows.extend((document_id, *item) for item in values.items)  # ReformItem: the row's order
    if rows:
        driver.executemany(_INSERT, rows)
    if item_rows:
        driver.executemany(_INSERT_ITEM, item_rows)


def _link_references(driver: Any, company_id: int, nfe_key: str, keys: Sequence[str]) -> None:
    known = {row[0] for row in driver.execute(_KNOWN_REFS, (company_id, nfe_key)).fetchall()}
    rows = [(company_id, nfe_key, key[:50]) for key in dict.fromkeys(keys) if key[:50] not in known]
    if rows:
        driver.executemany(_LINK, rows)


_READ = text(
    f"SELECT has_groups, unreadable, purpose, {', '.join(VALUE_COLUMNS)} "  # noqa: S608 (constants)
    "FROM document_reform WHERE document_id = :id"
)
_READ_ITEMS = text(
    f"SELECT item_number, cst, class_code, {', '.join(_ITEM_COLUMNS)} "  # noqa: S608 (constants)
    "FROM document_reform_items WHERE document_id = :id ORDER BY item_number"
)
_GRID_VALUES = (
    "SELECT document_id, ibs_cents, cbs_cents, is_cents, unreadable FROM document_reform "
    "WHERE has_groups = ? AND document_id IN ({ids})"
)
_REFERENCED = text(
    "SELECT referenced_key FROM nfe_references WHERE company_id = :company AND nfe_key = :key ORDER BY referenced_key"
)
_REFERENCING = text(
    "SELECT nfe_key FROM nfe_references WHERE company_id = :company AND referenced_key = :key ORDER BY nfe_key"
)


def grid_sort_column(sort: GridSort) -> ColumnElement[int]:
    """The grid's ORDER BY for an IBS, CBS or IS column: the document's value (``grid_values``'),
    looked up by primary key; a document without it (no groups, or unreadable there) as -1, below
    every amount, so it comes first ascending on both engines, as SQLite puts a NULL (and as
    the window merges live rows), where PostgreSQL would put it last."""
    column = getattr(DocumentReformRow, sort.value)
    value = (
        select(column)
        .where(DocumentReformRow.document_id == DocumentRow.id, DocumentReformRow.has_groups.is_(True))
        .scalar_subquery()
    )
    return func.coalesce(value, -1)


@dataclass(frozen=True, slots=True)
class GridReform:
    """What the grid and ``documents list --json`` show of a document's reform values (centavos)."""

    ibs_cents: int | None
    cbs_cents: int | None
    is_cents: int | None
    unreadable: bool


class ReformRepository:
    """Reads of one data folder's reform values and NF-e references."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def values_of(self, document_id: int) -> tuple[str | None, ReformValues | None]:
        """(finNFe, the reform values) of one document; (None, None) when it has no row, and
        values None when the row is a note without the groups."""
        with self._db.read_connection() as connection:
            row = connection.execute(_READ, {"id": document_id}).fetchone()
            if row is None:
                return None, None
            if not row[0]:
                return row[2], None
            items = tuple(ReformItem(*r) for r in connection.execute(_READ_ITEMS, {"id": document_id}))
        values = dict(zip(VALUE_COLUMNS, row[3:], strict=True))
        return row[2], ReformValues(**values, unreadable=bool(row[1]), items=items)

    def grid_values(self, document_ids: Sequence[int]) -> dict[int, GridReform]:
        """IBS, CBS and IS (centavos) of the documents of a grid page that carry the groups, by
        primary key (a page's worth: one read per ``IN_CHUNK`` ids); the others are absent."""
        found: dict[int, GridReform] = {}
        ids = list(document_ids)
        with self._db.driver_connection() as driver:
            for start in range(0, len(ids), IN_CHUNK):
                chunk = ids[start : start + IN_CHUNK]
                sql = _GRID_VALUES.format(ids=placeholders(len(chunk)))
                for document_id, ibs, cbs, selective, unreadable in driver.execute(sql, (True, *chunk)):
                    found[document_id] = GridReform(ibs, cbs, selective, bool(unreadable))
        return found

    def referenced_by(self, company_id: int, nfe_key: str) -> list[str]:
        """The NF-e keys ``nfe_key`` references (a nota de crédito/débito: the notes it adjusts)."""
        return self._keys(_REFERENCED, company_id, nfe_key)

    def referencing(self, company_id: int, nfe_key: str) -> list[str]:
        """The NF-e keys that reference ``nfe_key`` (the notas de crédito/débito adjusting it)."""
        return self._keys(_REFERENCING, company_id, nfe_key)

    def _keys(self, sql: Any, company_id: int, key: str) -> list[str]:
        with self._db.read_connection() as connection:
            return [row[0] for row in connection.execute(sql, {"company": company_id, "key": key})]
