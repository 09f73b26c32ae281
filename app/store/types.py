"""Column types and the compression of stored XML.

SQLite has no time zone type: ``UtcDateTime`` accepts only aware datetimes, stores them as naive
UTC text (``YYYY-MM-DD HH:MM:SS.ffffff``, which sorts as time does) and gives them back aware.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime
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


def pack_xml(raw: bytes) -> PackedXml:
    return PackedXml(zlib.compress(raw, _LEVEL), hashlib.sha256(raw).hexdigest(), len(raw))


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
