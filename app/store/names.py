"""The grid's name search: the text typed in the filter, anywhere in the emitter's or the
recipient's name, in any case, its ``%`` and ``_`` taken literally.

SQLite matches it with ``LIKE`` on each row of the period, read beside the grid's order in the
names' indexes (revision 0017); its LIKE already ignores case. PostgreSQL first looks the text up
in the dictionary of the names (``document_names``, kept by triggers, revision 0018): an office's
documents carry a few thousand distinct names, and the documents of the names found are then read
from the (product, name, issue date) indexes. At ten million documents a supplier's name over a
month of every company took 347 ms by trigram indexes on the documents, 12 ms this way.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, Text, any_, false, literal, or_
from sqlalchemy.dialects.postgresql import ARRAY

from app.store.db import Database
from app.store.models import DocumentRow

# Above this many names matched (a word of most names: "LTDA", a single letter) the documents are
# matched by ``ILIKE`` as they are read in the grid's order: such a text fills a page at once.
MATCHED_NAMES_MAX = 2000
_MATCHING = "SELECT name FROM document_names WHERE name ILIKE ? ESCAPE '\\' LIMIT ?"
# Every name of the stored documents: what the bench's copies, made with the triggers off, add.
REFILL_SQL = (
    "INSERT INTO document_names (name) SELECT name FROM (SELECT emitter_name AS name FROM documents "
    "UNION SELECT recipient_name FROM documents) AS stored WHERE name IS NOT NULL ON CONFLICT DO NOTHING"
)


def like_pattern(text: str) -> str:
    """``%text%`` with LIKE's own characters escaped by a backslash."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def name_clause(text: str, *, like_ignores_case: bool, names: Sequence[str] | None) -> ColumnElement[bool]:
    """The documents whose emitter or recipient name holds ``text``: by the ``names`` the
    dictionary matched when given (PostgreSQL), else by LIKE (ILIKE where LIKE minds case)."""
    columns = (DocumentRow.emitter_name, DocumentRow.recipient_name)
    if names is not None:
        if not names:
            return false()
        matched = literal(list(names), ARRAY(Text))
        return or_(*(column == any_(matched) for column in columns))
    pattern = like_pattern(text)
    if like_ignores_case:
        return or_(*(column.like(pattern, escape="\\") for column in columns))
    return or_(*(column.ilike(pattern, escape="\\") for column in columns))


class NameDictionary:
    """PostgreSQL's names of the stored documents; on SQLite there is none (``matching`` is None)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._kept = db.engine.dialect.name == "postgresql"

    def matching(self, text: str) -> list[str] | None:
        """The names that hold ``text`` (ILIKE), or None: no dictionary, or too many names."""
        if not self._kept or not text:
            return None
        with self._db.driver_connection() as driver:
            rows = driver.execute(_MATCHING, (like_pattern(text), MATCHED_NAMES_MAX + 1)).fetchall()
        if len(rows) > MATCHED_NAMES_MAX:
            return None
        return [row[0] for row in rows]
