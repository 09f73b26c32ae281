from __future__ import annotations

import hashlib
import zlib
from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.store.db import Database
from app.store.errors import StorageCorrupt
from app.store.items import DistributionItemRepository
from app.store.models import DistributionItemRow
from app.store.records import Company, Product
from app.store.types import BulkInsert, UtcDateTime, pack_xml, unpack_xml, utc_text


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


def test_blobs_packed_before_the_level_change_still_read() -> None:
    raw = b"<nfeProc>" + b"<det>item</det>" * 400 + b"</nfeProc>"
    old = zlib.compress(raw, 6)  # how pack_xml wrote documents until the bulk writer
    assert unpack_xml(old, hashlib.sha256(raw).hexdigest()) == raw
    new = pack_xml(raw)
    assert zlib.decompress(new.blob) == raw and len(new.blob) < len(raw) / 5


def test_utc_text_is_what_the_orm_writes() -> None:
    brt = datetime(2026, 1, 1, 9, 0, 0, 5, tzinfo=timezone(timedelta(hours=-3)))
    assert utc_text(brt) == "2026-01-01 12:00:00.000005"
    assert utc_text(None) is None
    with pytest.raises(ValueError, match="naive"):
        utc_text(datetime(2026, 1, 1))


def test_bulk_insert_refuses_a_row_missing_a_column(db: Database, company: Company) -> None:
    bulk = BulkInsert(DistributionItemRow, omit=("id",))
    assert bulk.sql.startswith("INSERT INTO distribution_items (company_id, product, nsu,")
    row = {"company_id": company.id, "product": "nfe", "nsu": 7, "schema": None, "document_id": None,
           "event_id": None, "received_at": utc_text(datetime(2026, 1, 1, tzinfo=UTC))}
    with db.session() as s:
        bulk.run(s.connection(), [row])
        with pytest.raises(KeyError, match="received_at"):
            bulk.run(s.connection(), [{k: v for k, v in row.items() if k != "received_at"}])
    assert DistributionItemRepository(db).received(company.id, Product.NFE, 1, 9) == [7]
