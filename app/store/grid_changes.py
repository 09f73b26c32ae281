"""What changed in the store since the grids last looked: a cheap mark, then the documents touched.

A grid left open all day re-reads only what changed under its loaded pages. ``mark`` is five
values read through the primary keys (plus the manifestations' last update, a small table): when
it is the one seen before, nothing changed and nothing else is read. ``touched`` turns the
difference between two marks into the ids of the documents to read again: new documents, new
versions (a resumo that became its complete NF-e), and the documents of the keys that got an
event or a manifestation request or answer (a Ciência registered, a cancellation).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.store.db import Database
from app.store.grid import per_key
from app.store.records import Product

_MARK = (
    "SELECT (SELECT max(id) FROM documents), (SELECT max(id) FROM document_versions), "
    "(SELECT max(id) FROM events), (SELECT max(id) FROM manifestations), "
    "(SELECT max(updated_at) FROM manifestations)"
)
_NEW_DOCUMENTS = "SELECT id FROM documents WHERE id > ? AND id <= ? AND product = ?"
_NEW_VERSIONS = (
    "SELECT d.id FROM document_versions v JOIN documents d ON d.id = v.document_id "
    "WHERE v.id > ? AND v.id <= ? AND d.product = ?"
)
_EVENT_KEYS = "SELECT DISTINCT company_id, access_key FROM events WHERE id > ? AND id <= ? AND product = ?"
_MANIFESTATION_KEYS = (
    "SELECT DISTINCT company_id, access_key FROM manifestations WHERE product = ? AND (id > ? OR updated_at > ?)"
)
_DOCUMENTS_OF_KEYS = "SELECT id FROM documents WHERE company_id = ? AND product = ? AND access_key IN ({keys})"


@dataclass(frozen=True, slots=True)
class ChangeMark:
    """The store's high-water marks; equal marks mean nothing a grid shows has changed."""

    document_id: int = 0
    version_id: int = 0
    event_id: int = 0
    manifestation_id: int = 0
    manifestation_updated: str = ""
    key_index: int = 0  # the facade's key-event rows, built apart: their generation (the store says 0)


@dataclass(frozen=True, slots=True)
class Touched:
    """One product's documents to read again, and the keys that got events (their key-event rows)."""

    document_ids: frozenset[int]
    event_keys: frozenset[tuple[int, str]]


class ChangeRepository:
    """Reads only: the mark and the documents touched between two marks."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def mark(self) -> ChangeMark:
        with self._db.driver_connection() as driver:
            row = driver.execute(_MARK).fetchone()
        return ChangeMark(int(row[0] or 0), int(row[1] or 0), int(row[2] or 0), int(row[3] or 0), str(row[4] or ""))

    def touched(self, product: Product, before: ChangeMark, after: ChangeMark) -> Touched:
        """The documents of ``product`` new or changed after ``before`` (up to ``after``)."""
        ids: set[int] = set()
        keys: set[tuple[int, str]] = set()
        event_keys: set[tuple[int, str]] = set()
        with self._db.driver_connection() as driver:
            for sql, low, high in (
                (_NEW_DOCUMENTS, before.document_id, after.document_id),
                (_NEW_VERSIONS, before.version_id, after.version_id),
            ):
                if high > low:
                    ids.update(r[0] for r in driver.execute(sql, (low, high, product.value)))
            if after.event_id > before.event_id:
                args = (before.event_id, after.event_id, product.value)
                event_keys.update((cid, key) for cid, key in driver.execute(_EVENT_KEYS, args))
            if (after.manifestation_id, after.manifestation_updated) != (
                before.manifestation_id,
                before.manifestation_updated,
            ):
                changed = (product.value, before.manifestation_id, before.manifestation_updated)
                keys.update((cid, key) for cid, key in driver.execute(_MANIFESTATION_KEYS, changed))
            if keys or event_keys:
                ids.update(r[0] for r in per_key(driver, _DOCUMENTS_OF_KEYS, product, keys | event_keys))
        return Touched(frozenset(ids), frozenset(event_keys))
