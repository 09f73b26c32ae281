from __future__ import annotations

import gzip
import hashlib
import random
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import text
from sqlalchemy.dialects import sqlite

from app.store.cursors import CaptureStateRepository
from app.store.db import Database
from app.store.errors import StorageCorrupt
from app.store.items import DistributionItemRepository
from app.store.models import CaptureStateRow, DistributionItemRow
from app.store.records import Company, Product
from app.store.types import (
    BulkInsert,
    UtcDateTime,
    pack_xml,
    unpack_xml,
    utc_from_text,
    utc_text,
)


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


def test_utc_text_and_utc_from_text_match_sqlalchemys_processors() -> None:
    reference_write = UtcDateTime().dialect_impl(sqlite.dialect()).bind_processor(sqlite.dialect())
    assert reference_write is not None
    reference_read = UtcDateTime().dialect_impl(sqlite.dialect()).result_processor(sqlite.dialect(), None)
    assert reference_read is not None
    rng = random.Random(3)
    for _ in range(2000):
        offset = timezone(timedelta(minutes=rng.randrange(-14 * 60, 14 * 60 + 1)))
        instant = datetime(
            rng.randrange(1, 9999), rng.randrange(1, 13), rng.randrange(1, 29), rng.randrange(24),
            rng.randrange(60), rng.randrange(60), rng.choice([0, 5, 999_999, rng.randrange(10**6)]), tzinfo=offset,
        )  # fmt: skip
        if not datetime(2, 1, 1, tzinfo=UTC) < instant < datetime(9998, 12, 31, tzinfo=UTC):
            continue  # astimezone would leave datetime's range
        text = utc_text(instant)
        assert text == reference_write(instant)
        assert utc_from_text(text) == reference_read(text) == instant
    assert utc_from_text("2026-01-01 00:00:00") == datetime(2026, 1, 1, tzinfo=UTC)  # no fraction
    assert utc_from_text(None) is None


def test_utc_text_is_what_the_orm_writes() -> None:
    brt = datetime(2026, 1, 1, 9, 0, 0, 5, tzinfo=timezone(timedelta(hours=-3)))
    assert utc_text(brt) == "2026-01-01 12:00:00.000005"
    assert utc_text(None) is None
    with pytest.raises(ValueError, match="naive"):
        utc_text(datetime(2026, 1, 1))


def test_bulk_insert_refuses_a_row_missing_a_column(db: Database, company: Company) -> None:
    bulk = BulkInsert(DistributionItemRow, omit=("id",))
    assert bulk.sql.startswith("INSERT INTO distribution_items (company_id, product, nsu,")
    row = {
        "company_id": company.id,
        "product": "nfe",
        "nsu": 7,
        "schema": None,
        "document_id": None,
        "event_id": None,
        "received_at": utc_text(datetime(2026, 1, 1, tzinfo=UTC)),
    }
    with db.session() as s:
        bulk.run(s.connection(), [row])
        with pytest.raises(KeyError, match="received_at"):
            bulk.run(s.connection(), [{k: v for k, v in row.items() if k != "received_at"}])
    assert DistributionItemRepository(db).received(company.id, Product.NFE, 1, 9) == [7]


def _gzip(raw: bytes) -> bytes:
    return gzip.compress(raw, compresslevel=6)


def test_a_docZip_gzip_is_stored_as_it_arrived_and_reads_back_byte_exact() -> None:
    raw = "\ufeff<resNFe>\r\n<xNome>AÇÚCAR & CIA</xNome>  </resNFe>\n".encode()
    arrived = _gzip(raw)
    packed = pack_xml(raw, arrived)
    assert packed.blob is arrived  # not compressed again
    assert packed.sha256 == hashlib.sha256(raw).hexdigest() and packed.size == len(raw)
    assert unpack_xml(packed.blob, packed.sha256) == raw


@pytest.mark.parametrize(
    "other",
    [
        pytest.param(lambda raw: _gzip(raw + b" "), id="another-documents-gzip"),
        pytest.param(lambda raw: _gzip(raw) + b"\x00\x00", id="nul-padding"),
        pytest.param(lambda raw: _gzip(raw[:5]) + _gzip(raw[5:]), id="two-members"),
        pytest.param(lambda raw: zlib.compress(raw), id="zlib-not-gzip"),
        pytest.param(lambda raw: b"\x1f\x8b", id="too-short"),
    ],
)
def test_a_gzip_whose_trailer_is_not_the_documents_is_compressed_again(other: Callable[[bytes], bytes]) -> None:
    raw = b"<nfeProc>" + b"<det>item</det>" * 50 + b"</nfeProc>"
    packed = pack_xml(raw, other(raw))
    assert packed == pack_xml(raw)  # the zlib path, as without a gzip
    assert not packed.blob.startswith(b"\x1f\x8b")
    assert unpack_xml(packed.blob, packed.sha256) == raw


def test_gzip_blobs_with_several_members_or_padding_still_read() -> None:
    # What app.safexml's inflate accepts, the reader accepts too (the sha256 decides).
    raw = b"<a>" + b"x" * 3000 + b"</a>"
    sha = hashlib.sha256(raw).hexdigest()
    assert unpack_xml(_gzip(raw[:100]) + _gzip(raw[100:]), sha) == raw
    assert unpack_xml(_gzip(raw) + b"\x00" * 7, sha) == raw


def test_a_corrupt_or_foreign_gzip_blob_is_reported() -> None:
    raw = b"<a>conteudo</a>"
    sha = hashlib.sha256(raw).hexdigest()
    blob = bytearray(_gzip(raw))
    blob[-8] ^= 0xFF  # CRC-32 of the trailer
    with pytest.raises(StorageCorrupt, match="não descompacta"):
        unpack_xml(bytes(blob), sha)
    with pytest.raises(StorageCorrupt, match="não descompacta"):
        unpack_xml(_gzip(raw)[:-5], sha)  # truncated
    with pytest.raises(StorageCorrupt, match="SHA-256"):
        unpack_xml(_gzip(b"<a>outro</a>"), sha)


def test_bulk_upsert_replaces_the_conflicting_row(db: Database, company: Company) -> None:
    upsert = BulkInsert(CaptureStateRow, omit=("id",), upsert_on=("company_id", "product"))
    assert "ON CONFLICT (company_id, product) DO UPDATE SET ult_nsu = excluded.ult_nsu" in upsert.sql
    stamp = utc_text(datetime(2026, 1, 1, tzinfo=UTC))
    row = {f: None for f in upsert.sql.split("(", 1)[1].split(")", 1)[0].split(", ")}
    row.update(
        company_id=company.id,
        product="nfe",
        ult_nsu=5,
        max_nsu=9,
        paused=False,
        consecutive_failures=0,
        updated_at=stamp,
    )
    with db.session() as s:
        upsert.run_one(s.connection(), row)
        upsert.run_one(s.connection(), {**row, "ult_nsu": 9, "last_cstat": "137"})
    state = CaptureStateRepository(db).get(company.id, Product.NFE)
    assert (state.ult_nsu, state.max_nsu, state.last_cstat) == (9, 9, "137")
    with db.reader() as s:
        assert s.execute(text("SELECT count(*) FROM capture_state")).scalar_one() == 1
