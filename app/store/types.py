"""Column types and the compression of stored XML.

SQLite has no time zone type: ``UtcDateTime`` accepts only aware datetimes, stores them as naive
UTC text (``YYYY-MM-DD HH:MM:SS.ffffff``, which sorts as time does) and gives them back aware.

``BulkInsert`` is the lot writer's executemany (or one upsert): rows of values already in the
driver's form.
"""

from __future__ import annotations

import gzip
import hashlib
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, DateTime, inspect
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from app.store.driver import as_driver, driver_of
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
    """The exact bytes of a document, compressed (zlib, or the gzip it arrived in), with the
    sha256 and size of the original."""

    blob: bytes
    sha256: str
    size: int


# zlib (not gzip): no timestamp in the header, so equal input gives equal blobs. Archived
# exchanges are written for every answer that carried documents (tens of thousands a month) and
# mostly hold base64 of docZips, which no level shrinks much beyond base64's own overhead. Measured
# on the real 50-document answer of 2017 (64 KB): level 1 takes 1.32 ms and 45.1 KB, level 6
# 1.53 ms and 44.1 KB.
_LEVEL = 1

# Documents are stored on the capture's hot path and most are a few KiB: level 1 with an 8 KiB
# window and memLevel 6 costs roughly half of level 6 with the defaults, whose ~256 KiB state is
# allocated (mmap) and set up per call and dominates on small inputs, for ~7% bigger blobs. Any
# zlib.decompress reads it (the window size is in the stream header), and so old blobs still read.
_XML_LEVEL = 1
_XML_WBITS = 13
_XML_MEM_LEVEL = 6

# A stored blob is either zlib (what pack_xml compresses itself) or gzip (a docZip kept as it
# arrived). A zlib stream's first byte has 8 (deflate) in its low nibble, so it never begins with
# gzip's 1f 8b: the magic bytes tell them apart without a schema column.
_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_MIN = 18  # 10-byte header + empty deflate block + 8-byte trailer
_GZIP_TRAILER = struct.Struct("<II")  # CRC-32 and size mod 2**32 of the inflated bytes


def _compress_xml(raw: bytes) -> bytes:
    compressor = zlib.compressobj(_XML_LEVEL, zlib.DEFLATED, _XML_WBITS, _XML_MEM_LEVEL)
    return compressor.compress(raw) + compressor.flush()


def _gzip_of(raw: bytes, gzipped: bytes | None) -> bytes | None:
    """``gzipped`` when it is a gzip stream whose trailer is ``raw``'s CRC-32 and size, else None.

    The caller inflated ``raw`` from these bytes (a docZip), so they already are its compressed
    form; the trailer check (a CRC-32 costs well under a microsecond on a few KiB) catches bytes
    that belong to another document, and padding or trailing junk after the last member, which
    then fall back to compressing ``raw`` here. ``unpack_xml`` checks the sha256 on every read.
    """
    if gzipped is None or len(gzipped) < _GZIP_MIN or not gzipped.startswith(_GZIP_MAGIC):
        return None
    crc, size = _GZIP_TRAILER.unpack_from(gzipped, len(gzipped) - _GZIP_TRAILER.size)
    if crc != zlib.crc32(raw) or size != len(raw) & 0xFFFFFFFF:
        return None
    return gzipped


def pack_xml(raw: bytes, gzipped: bytes | None = None) -> PackedXml:
    """``raw`` compressed with its sha256; ``gzipped`` (the gzip ``raw`` was inflated from, as a
    docZip brings it) is stored as it is instead of compressing again, when its trailer matches."""
    blob = _gzip_of(raw, gzipped)
    return PackedXml(blob or _compress_xml(raw), hashlib.sha256(raw).hexdigest(), len(raw))


def unpack_xml(blob: bytes, sha256: str) -> bytes:
    """The original bytes; a blob that does not decompress or hash back is reported as corrupt."""
    try:
        # gzip.decompress reads every member and skips zero padding, as app.safexml's inflate does.
        raw = gzip.decompress(blob) if blob.startswith(_GZIP_MAGIC) else zlib.decompress(blob)
    except (zlib.error, OSError, EOFError) as error:  # gzip.BadGzipFile is an OSError
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


def utc_text(value: datetime | None) -> str | None:
    """The exact text SQLAlchemy writes for a ``UtcDateTime`` ("YYYY-MM-DD HH:MM:SS.ffffff",
    UTC), without its processor chain: several per statement on the capture's hot path, and
    ``isoformat`` is one C call (tests compare it with SQLAlchemy's own processor)."""
    if value is None:
        return None
    zone = value.tzinfo
    if zone is not UTC:  # the clocks give UTC: the conversion is for anything else
        if zone is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime given to a UTC column: {value!r}")
        value = value.astimezone(UTC)
    # "YYYY-MM-DD HH:MM:SS.ffffff+00:00" without its offset: no naive copy made first
    return value.isoformat(" ", "microseconds")[:26]


def utc_from_text(value: str | None) -> datetime | None:
    """A ``UtcDateTime`` column's text read back as the ORM reads it (an aware UTC datetime)."""
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    except TypeError:  # PostgreSQL's driver reads a timestamp column as a datetime already
        return value.replace(tzinfo=UTC)  # type: ignore[call-arg,return-value]


class BulkInsert:
    """An INSERT of every column of a table, compiled once, run with the driver's executemany.

    SQLAlchemy's executemany passes every value of every row through its type's processor, which
    costs more than SQLite's own insert; here the caller gives values already in the driver's form
    (``utc_text`` for instants; str, int, bool, bytes and None as they are) as one dict per row.
    A missing column is a ``KeyError``, so a column added to the model cannot be skipped silently.
    ``upsert_on`` (the columns of a unique constraint) makes it an upsert: a row that conflicts
    there replaces every other column of the existing one.
    """

    def __init__(self, entity: type[Any], *, omit: tuple[str, ...] = (), upsert_on: tuple[str, ...] = ()) -> None:
        """``entity``: the mapped class; ``omit``: columns SQLite fills (an ``id`` nobody reads)."""
        columns = [c.key for c in inspect(entity).columns if c.key not in omit]
        statement = sqlite.insert(entity)
        if upsert_on:
            statement = statement.on_conflict_do_update(
                index_elements=list(upsert_on),
                set_={c: statement.excluded[c] for c in columns if c not in upsert_on},
            )
        compiled = statement.compile(dialect=_SQLITE, column_keys=columns)
        assert compiled.positiontup == columns, (compiled.positiontup, columns)
        self.sql = str(compiled)
        self._values = itemgetter(*compiled.positiontup)

    def run(self, connection: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            driver_of(connection).executemany(self.sql, [self._values(row) for row in rows])

    def run_one(self, connection: Connection | Any, row: Mapping[str, Any]) -> None:
        """One row, on a SQLAlchemy connection's open transaction or a sqlite3 connection's."""
        as_driver(connection).execute(self.sql, self._values(row))
