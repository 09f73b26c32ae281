"""Column types and the compression of stored XML.

SQLite has no time zone type: ``UtcDateTime`` accepts only aware datetimes, stores them as naive
UTC text (``YYYY-MM-DD HH:MM:SS.ffffff``, which sorts as time does) and gives them back aware.

``BulkInsert`` is the lot writer's executemany: rows of values already in the driver's form.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, DateTime, insert, inspect
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from app.store.errors import StorageCorrupt


class UtcDateTime(TypeDecorator[datetime]):
    """An aware datetime stored as naive UTC; naive input is a bug, so it raises."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime given to a UTC column: {value!r}")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        return value.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class PackedXml:
    """The exact bytes of a document, zlib-compressed, with the sha256 of the original."""

    blob: bytes
    sha256: str
    size: int


# zlib (not gzip): no timestamp in the header, so equal input gives equal blobs; level 6 is the
# usual speed/size balance and XML shrinks to roughly a fifth.
_LEVEL = 6

# Documents are stored on the capture's hot path and most are a few KiB: level 1 with an 8 KiB
# window and memLevel 6 costs roughly half of level 6 with the defaults, whose ~256 KiB state is
# allocated (mmap) and set up per call and dominates on small inputs, for ~7% bigger blobs. Any
# zlib.decompress reads it (the window size is in the stream header), and so old blobs still read.
_XML_LEVEL = 1
_XML_WBITS = 13
_XML_MEM_LEVEL = 6


def _compress_xml(raw: bytes) -> bytes:
    compressor = zlib.compressobj(_XML_LEVEL, zlib.DEFLATED, _XML_WBITS, _XML_MEM_LEVEL)
    return compressor.compress(raw) + compressor.flush()


def pack_xml(raw: bytes) -> PackedXml:
    return PackedXml(_compress_xml(raw), hashlib.sha256(raw).hexdigest(), len(raw))


def unpack_xml(blob: bytes, sha256: str) -> bytes:
    """The original bytes; a blob that does not decompress or hash back is reported as corrupt."""
    try:
        raw = zlib.decompress(blob)
    except zlib.error as error:
        raise StorageCorrupt(f"XML armazenado corrompido (não descompacta): {error}.") from error
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise StorageCorrupt("XML armazenado corrompido: o hash SHA-256 não confere com o gravado.")
    return raw


def compress(raw: bytes) -> bytes:
    return zlib.compress(raw, _LEVEL)


def decompress(blob: bytes) -> bytes:
    try:
        return zlib.decompress(blob)
    except zlib.error as error:
        raise StorageCorrupt(f"Conteúdo arquivado corrompido (não descompacta): {error}.") from error


# ---------------------------------------------------------------- bulk inserts

_SQLITE = sqlite.dialect()


def _utc_text_processor() -> Callable[[datetime | None], str | None]:
    process = UtcDateTime().dialect_impl(_SQLITE).bind_processor(_SQLITE)
    assert process is not None
    return process


# The exact text SQLAlchemy writes for a ``UtcDateTime`` (its own processor, not a copy of it).
utc_text: Callable[[datetime | None], str | None] = _utc_text_processor()


class BulkInsert:
    """An INSERT of every column of a table, compiled once, run with the driver's executemany.

    SQLAlchemy's executemany passes every value of every row through its type's processor, which
    costs more than SQLite's own insert; here the caller gives values already in the driver's form
    (``utc_text`` for instants; str, int, bool, bytes and None as they are) as one dict per row.
    A missing column is a ``KeyError``, so a column added to the model cannot be skipped silently.
    """

    def __init__(self, entity: type[Any], *, omit: tuple[str, ...] = ()) -> None:
        """``entity``: the mapped class; ``omit``: columns SQLite fills (an ``id`` nobody reads)."""
        columns = [c.key for c in inspect(entity).columns if c.key not in omit]
        compiled = insert(entity).compile(dialect=_SQLITE, column_keys=columns)
        assert compiled.positiontup == columns, (compiled.positiontup, columns)
        self.sql = str(compiled)
        self._values = itemgetter(*compiled.positiontup)

    def run(self, connection: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            connection.exec_driver_sql(self.sql, [self._values(row) for row in rows])
