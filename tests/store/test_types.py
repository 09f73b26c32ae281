from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.store.errors import StorageCorrupt
from app.store.types import UtcDateTime, pack_xml, unpack_xml


def test_pack_is_deterministic_and_round_trips() -> None:
    raw = b"\xef\xbb\xbf<a>\r\n\xe7</a>"
    packed = pack_xml(raw)
    assert packed == pack_xml(raw)
    assert packed.sha256 == hashlib.sha256(raw).hexdigest() and packed.size == len(raw)
    assert unpack_xml(packed.blob, packed.sha256) == raw


def test_unpack_detects_garbage_and_mismatch() -> None:
    packed = pack_xml(b"<a/>")
    with pytest.raises(StorageCorrupt, match="não descompacta"):
        unpack_xml(b"not zlib", packed.sha256)
    with pytest.raises(StorageCorrupt, match="SHA-256"):
        unpack_xml(pack_xml(b"<b/>").blob, packed.sha256)


def test_utc_column_refuses_naive_and_normalises_offsets() -> None:
    column = UtcDateTime()
    with pytest.raises(ValueError, match="naive"):
        column.process_bind_param(datetime(2026, 1, 1), None)  # type: ignore[arg-type]
    brt = datetime(2026, 1, 1, 9, 0, tzinfo=timezone(timedelta(hours=-3)))
    stored = column.process_bind_param(brt, None)  # type: ignore[arg-type]
    assert stored == datetime(2026, 1, 1, 12, 0)
    assert column.process_result_value(stored, None) == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)  # type: ignore[arg-type]
