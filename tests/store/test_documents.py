from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import insert, text

import app.store.lots as lots_module
from app.core.clock import FakeClock
from app.core.ids import Cnpj
from app.core.keys import AccessKey
from app.store.companies import CompanyRepository
from app.store.cursors import CaptureStateRepository
from app.store.db import Database, open_database
from app.store.documents import DocumentRepository, store_document_in
from app.store.errors import InvalidRecord, StorageBug, StorageCorrupt
from app.store.events import EventRepository, store_event_in
from app.store.items import DistributionItemRepository
from app.store.models import DocumentRow, DocumentVersionRow
from app.store.records import (
    CaptureState,
    Company,
    Direction,
    DocumentInput,
    DocumentKind,
    DocumentQuery,
    DocumentStatus,
    EventInput,
    Party,
    PartyRole,
    Product,
    StoredDocument,
    StoredEvent,
)
from app.store.types import pack_xml
from tests.store.conftest import CNPJ_A

FIXTURE = "nfe/42210775277525000178550030000266631762885493-procNFe.xml"
KEY = "42210775277525000178550030000266631762885493"
BRT = timezone(timedelta(hours=-3))


def _proc(fixtures_dir: Path) -> bytes:
    return (fixtures_dir / FIXTURE).read_bytes()


def _res_nfe(key: str = KEY) -> bytes:
    return (
        b'<?xml version="1.0" encoding="UTF-8"?>'
        b'<resNFe xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.01">'
        + f"<chNFe>{key}</chNFe><CNPJ>75277525000178</CNPJ><xNome>EMITENTE</xNome>".encode()
        + b"<vNF>95700.68</vNF><cSitNFe>1</cSitNFe></resNFe>"
    )


def _summary_input(xml: bytes, nsu: int | None = 10) -> DocumentInput:
    return DocumentInput(
        product=Product.NFE,
        kind=DocumentKind.RES_NFE,
        xml=xml,
        access_key=KEY,
        nsu=nsu,
        schema="resNFe_v1.01.xsd",
        emitter_id="75277525000178",
        emitter_name="EMITENTE",
        total_cents=9_570_068,
        issued_at=datetime(2021, 7, 22, 15, 5, 23, tzinfo=BRT),
        status=DocumentStatus.SUMMARY,
    )


def _full_input(xml: bytes, nsu: int | None = 25) -> DocumentInput:
    return replace(
        _summary_input(xml, nsu),
        kind=DocumentKind.NFE_PROC,
        schema="procNFe_v4.00.xsd",
        model="55",
        serie=3,
        number=26663,
        recipient_id="11222333000181",
        recipient_name="Alfa Comércio Ltda",
        status=DocumentStatus.AUTHORISED,
        parties=(
            Party(PartyRole.EMITTER, "75277525000178", "EMITENTE"),
            Party(PartyRole.RECIPIENT, "11222333000181", "Alfa Comércio Ltda"),
            Party(PartyRole.TRANSPORTER, "99888777000161", "Transportes"),
        ),
    )


def test_xml_round_trip_is_byte_exact_with_its_sha256(db: Database, company: Company, fixtures_dir: Path) -> None:
    docs = DocumentRepository(db)
    real = _proc(fixtures_dir)
    # Bytes a re-serialiser would change: BOM, CRLF, latin-1, trailing blanks, odd spacing.
    odd = "\ufeff<?xml version='1.0' encoding='ISO-8859-1'?>\r\n<a  b=\"ç\" >x\t</a>  \r\n".encode("latin-1", "replace")
    for key, xml in ((KEY, real), ("1" * 44, odd)):
        stored = docs.store(company.id, replace(_full_input(xml, nsu=None), access_key=key))
        assert docs.get_xml(company.id, Product.NFE, key) == xml
        assert docs.get_document_xml(stored.document_id) == xml
        [version] = docs.versions(stored.document_id)
        assert version.sha256 == hashlib.sha256(xml).hexdigest()
        assert version.size == len(xml)
    with db.reader() as s:
        blob, sha = s.execute(text("SELECT xml_zlib, xml_sha256 FROM document_versions ORDER BY id LIMIT 1")).one()
    assert len(blob) < len(real) / 2  # compressed, not stored raw
    assert sha == hashlib.sha256(real).hexdigest()


def test_tampered_bytes_are_reported_as_corrupt(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    stored = docs.store(company.id, _summary_input(_res_nfe()))
    with db.session() as s:
        s.execute(
            text("UPDATE document_versions SET xml_zlib = :b WHERE id = :i"),
            {"b": pack_xml(b"<resNFe>outro</resNFe>").blob, "i": stored.version_id},
        )
    with pytest.raises(StorageCorrupt):
        docs.get_document_xml(stored.document_id)


def test_summary_upgraded_to_full_document_keeps_the_history(
    db: Database, company: Company, fixtures_dir: Path, clock: FakeClock
) -> None:
    docs = DocumentRepository(db)
    summary_xml, full_xml = _res_nfe(), _proc(fixtures_dir)
    first = docs.store(company.id, _summary_input(summary_xml))
    assert (first.created, first.new_version, first.became_current, first.nsu_was_new) == (
        True,
        True,
        True,
        True,
    )
    clock.advance(3600)
    second = docs.store(company.id, _full_input(full_xml))
    assert second.document_id == first.document_id
    assert (second.created, second.new_version, second.became_current) == (False, True, True)

    doc = docs.get(first.document_id)
    assert doc.kind is DocumentKind.NFE_PROC
    assert doc.status is DocumentStatus.AUTHORISED
    assert doc.nsu == 25
    assert doc.version_count == 2
    assert doc.recipient_name == "Alfa Comércio Ltda"
    assert docs.get_xml(company.id, Product.NFE, KEY) == full_xml

    history = docs.versions(first.document_id)
    assert [(v.kind, v.nsu, v.is_current) for v in history] == [
        (DocumentKind.RES_NFE, 10, False),
        (DocumentKind.NFE_PROC, 25, True),
    ]
    assert docs.get_version_xml(history[0].id) == summary_xml
    assert history[1].received_at - history[0].received_at == timedelta(hours=1)
    assert [p.role for p in docs.parties(first.document_id)] == [
        PartyRole.EMITTER,
        PartyRole.RECIPIENT,
        PartyRole.TRANSPORTER,
    ]


def test_a_summary_arriving_after_the_full_document_only_joins_the_history(
    db: Database, company: Company, fixtures_dir: Path
) -> None:
    docs = DocumentRepository(db)
    full = docs.store(company.id, _full_input(_proc(fixtures_dir)))
    late = docs.store(company.id, _summary_input(_res_nfe(), nsu=9))
    assert late.new_version and not late.became_current
    doc = docs.get(full.document_id)
    assert doc.kind is DocumentKind.NFE_PROC and doc.nsu == 25
    assert docs.get_xml(company.id, Product.NFE, KEY) == _proc(fixtures_dir)
    assert [v.is_current for v in docs.versions(full.document_id)] == [True, False]


def test_the_same_bytes_again_add_no_version_but_record_the_new_nsu(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    docs.store(company.id, _summary_input(_res_nfe(), nsu=10))
    again = docs.store(company.id, _summary_input(_res_nfe(), nsu=11))
    repeat = docs.store(company.id, _summary_input(_res_nfe(), nsu=11))
    assert (again.new_version, again.nsu_was_new) == (False, True)
    assert (repeat.new_version, repeat.nsu_was_new) == (False, False)
    assert len(docs.versions(again.document_id)) == 1


def test_only_one_current_version_per_document_is_enforced_by_the_schema(db: Database, company: Company) -> None:
    stored = DocumentRepository(db).store(company.id, _summary_input(_res_nfe()))
    packed = pack_xml(b"<outro/>")
    with pytest.raises(StorageBug), db.session() as s:
        s.execute(
            insert(DocumentVersionRow).values(
                document_id=stored.document_id,
                kind="resNFe",
                xml_zlib=packed.blob,
                xml_sha256=packed.sha256,
                xml_size=packed.size,
                is_current=True,
                received_at=datetime.now(UTC),
            )
        )


def test_corrupt_documents_are_quarantined_and_kept(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    broken = b"<nfeProc><NFe>MXM & JETTAX"
    stored = docs.store(
        company.id,
        DocumentInput(
            product=Product.NFE,
            kind=DocumentKind.UNKNOWN,
            xml=broken,
            access_key=None,
            nsu=77,
            parse_error="XML mal formado (linha 1)",
        ),
    )
    doc = docs.get(stored.document_id)
    assert doc.quarantined and doc.parse_error == "XML mal formado (linha 1)"
    assert docs.get_document_xml(stored.document_id) == broken
    query = DocumentQuery(company.id, Product.NFE, quarantined=True)
    assert docs.page_ids(query, 0, 10) == [stored.document_id]
    # A second unreadable document without key is another row, not a merge.
    other = docs.store(company.id, replace(_summary_input(b"<x"), access_key=None, nsu=78, parse_error="x"))
    assert other.document_id != stored.document_id


def test_an_unreadable_document_delivered_again_under_its_nsu_is_not_duplicated(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    broken = DocumentInput(
        product=Product.NFE, kind=DocumentKind.UNKNOWN, xml=b"<?", access_key=None, nsu=90, parse_error="x"
    )
    first = docs.store(company.id, broken)
    again = docs.store(company.id, broken)
    assert again.document_id == first.document_id and not again.new_version
    assert docs.count(DocumentQuery(company.id, Product.NFE)) == 1


def test_page_filters(db: Database, company: Company, fixtures_dir: Path) -> None:
    docs = DocumentRepository(db)
    summary = docs.store(company.id, replace(_summary_input(_res_nfe("5" * 44)), access_key="5" * 44))
    full = docs.store(company.id, _full_input(_proc(fixtures_dir)))
    emitted = docs.store(
        company.id,
        replace(_full_input(b"<nfeProc>own</nfeProc>"), access_key="6" * 44, nsu=26, direction=Direction.EMITTED),
    )
    base = DocumentQuery(company.id, Product.NFE)
    assert docs.page_ids(replace(base, direction=Direction.EMITTED), 0, 10) == [emitted.document_id]
    assert docs.page_ids(replace(base, kinds=(DocumentKind.RES_NFE,)), 0, 10) == [summary.document_id]
    authorised = docs.page_ids(replace(base, status=DocumentStatus.AUTHORISED), 0, 10)
    assert sorted(authorised) == sorted([full.document_id, emitted.document_id])
    assert docs.page_ids(replace(base, product=Product.CTE), 0, 10) == []
    with pytest.raises(ValueError):
        docs.page_ids(base, -1, 10)


def test_issue_time_is_kept_as_utc_plus_the_original_offset(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    stored = docs.store(company.id, _summary_input(_res_nfe()))
    doc = docs.get(stored.document_id)
    assert doc.issued_at == datetime(2021, 7, 22, 18, 5, 23, tzinfo=UTC)
    assert doc.issued_at is not None and doc.issued_at.tzinfo is UTC
    assert doc.issued_offset_minutes == -180
    assert doc.total_cents == 9_570_068
    with pytest.raises(InvalidRecord, match="fuso"):
        docs.store(company.id, replace(_summary_input(b"<a/>"), access_key="2" * 44, issued_at=datetime(2021, 1, 1)))


def test_a_batch_and_its_cursor_commit_together_or_not_at_all(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    states = CaptureStateRepository(db)
    good = replace(_summary_input(_res_nfe(), nsu=1), access_key="3" * 44)
    event = EventInput(
        product=Product.NFE,
        kind=DocumentKind.RES_EVENTO,
        xml=b"<resEvento/>",
        access_key="3" * 44,
        tp_evento="110111",
        nsu=2,
    )
    bad = replace(good, access_key="4" * 44, nsu=3, issued_at=datetime(2021, 1, 1))  # naive: refused
    cursor = CaptureState(company.id, Product.NFE, ult_nsu=3, max_nsu=9)
    with pytest.raises(InvalidRecord):
        docs.store_batch(company.id, [good, event, bad], cursor)
    assert states.get(company.id, Product.NFE).ult_nsu == 0
    assert docs.find(company.id, Product.NFE, "3" * 44) is None

    results = docs.store_batch(company.id, [good, event], replace(cursor, ult_nsu=2))
    assert len(results) == 2
    assert states.get(company.id, Product.NFE).ult_nsu == 2
    assert docs.find(company.id, Product.NFE, "3" * 44) is not None


def test_set_status_marks_a_cancellation(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    stored = docs.store(company.id, _summary_input(_res_nfe()))
    after = docs.set_status(stored.document_id, DocumentStatus.CANCELLED, "cancelada pelo emitente")
    assert after.status is DocumentStatus.CANCELLED
    assert docs.get(stored.document_id).situation == "cancelada pelo emitente"


def _bulk_insert(db: Database, company_id: int, count: int, start: datetime) -> None:
    now = datetime.now(UTC)
    packed = pack_xml(b"<resNFe/>")
    documents = [
        {
            "id": i + 1,
            "company_id": company_id,
            "product": "nfe",
            "kind": "resNFe",
            "access_key": AccessKey.build(
                uf="SP",
                year_month="2610",
                issuer="11222333000181",
                model="55",
                serie=1,
                number=i + 1,
                tp_emis=1,
                code=i,
            ).value,
            "nsu": i + 1,
            "issued_at": start + timedelta(minutes=i),
            "direction": "received",
            "status": "summary",
            "quarantined": False,
            "version_count": 1,
            "created_at": now,
            "updated_at": now,
            "total_cents": i,
        }
        for i in range(count)
    ]
    versions = [
        {
            "document_id": i + 1,
            "kind": "resNFe",
            "nsu": i + 1,
            "xml_zlib": packed.blob,
            "xml_sha256": packed.sha256,
            "xml_size": packed.size,
            "is_current": True,
            "received_at": now,
        }
        for i in range(count)
    ]
    with db.session() as s:
        s.execute(insert(DocumentRow), documents)
        s.execute(insert(DocumentVersionRow), versions)


def test_a_page_over_twenty_thousand_documents(db: Database, company: Company) -> None:
    count = 20_000
    start = datetime(2026, 1, 1, tzinfo=UTC)
    _bulk_insert(db, company.id, count, start)
    docs = DocumentRepository(db)
    query = DocumentQuery(company.id, Product.NFE)

    assert docs.count(query) == count
    # Newest first: row 0 is the last inserted (id 20000); page at offset 5000 starts at id 15000.
    assert docs.page_ids(query, 5_000, 100) == list(range(15_000, 14_900, -1))
    assert docs.page_ids(replace(query, newest_first=False), 0, 3) == [1, 2, 3]
    assert docs.page_ids(query, count - 2, 100) == [2, 1]

    window = replace(query, issued_from=start + timedelta(minutes=100), issued_to=start + timedelta(minutes=110))
    assert docs.count(window) == 10
    assert docs.page_ids(window, 0, 50) == list(range(110, 100, -1))

    rows = docs.summaries([15_000, 3, 99_999, 7])
    assert [r.id for r in rows] == [15_000, 3, 7]  # order kept, unknown ids skipped
    assert rows[1].issued_at == start + timedelta(minutes=2)
    assert rows[1].direction is Direction.RECEIVED
    assert len(docs.summaries(list(range(1, 1_201)))) == 1_200  # more ids than one IN chunk


def test_grid_page_is_served_by_the_covering_index(sqlite_db: Database) -> None:
    with sqlite_db.reader() as s:  # SQLite's query plan; PostgreSQL's is measured by bench_grid
        plan = " ".join(
            str(row[-1])
            for row in s.execute(
                text(
                    "EXPLAIN QUERY PLAN SELECT id FROM documents WHERE company_id = 1 AND product = 'nfe' "
                    "ORDER BY issued_at DESC, id DESC LIMIT 100 OFFSET 5000"
                )
            )
        )
    assert "COVERING INDEX ix_documents_grid" in plan
    assert "TEMP B-TREE" not in plan  # no sort step


# ---------------------------------------------------------------- lots: bulk path vs one by one

_LOT_TABLES = ("documents", "document_versions", "document_parties", "events", "distribution_items")


def _one_by_one(db: Database, company_id: int, items: list[DocumentInput | EventInput]) -> list[object]:
    """The per-row ORM path, item after item: the semantics a lot must reproduce."""
    now = db.clock.now()
    with db.session() as s:
        return [
            store_event_in(s, company_id, i, now)
            if isinstance(i, EventInput)
            else store_document_in(s, company_id, i, now)
            for i in items
        ]


def _dump(db: Database) -> dict[str, list[tuple[object, ...]]]:
    with db.reader() as s:
        return {t: [tuple(r) for r in s.execute(text(f"SELECT * FROM {t} ORDER BY id"))] for t in _LOT_TABLES}


def _event_input(key: str, tp: str, nsu: int | None, *, full: bool = False, xml: bytes | None = None) -> EventInput:
    return EventInput(
        product=Product.NFE,
        kind=DocumentKind.PROC_EVENTO_NFE if full else DocumentKind.RES_EVENTO,
        xml=xml or (b"<procEventoNFe/>" if full else b"<resEvento/>") + key.encode() + tp.encode(),
        access_key=key,
        tp_evento=tp,
        nsu=nsu,
        event_at=datetime(2021, 7, 23, 10, 0, tzinfo=BRT),
        protocol="135210000000001",
    )


@pytest.fixture
def reference(second_target: Path | str, clock: FakeClock) -> Iterator[Database]:
    """A second database on the same engine, fed one item at a time, to compare a lot with."""
    database = open_database(second_target, clock=clock)
    try:
        CompanyRepository(database).add(CNPJ_A, "Alfa Comércio Ltda", certificate_ref="cert-alfa")
        yield database
    finally:
        database.close()


def test_a_mixed_lot_stores_exactly_what_one_by_one_would(
    db: Database, reference: Database, company: Company, fixtures_dir: Path, clock: FakeClock
) -> None:
    quarantined = DocumentInput(
        product=Product.NFE, kind=DocumentKind.UNKNOWN, xml=b"<?", access_key=None, nsu=12, parse_error="x"
    )
    before: list[DocumentInput | EventInput] = [
        _summary_input(_res_nfe(), nsu=10),  # to be upgraded by the lot
        _event_input("2" * 44, "110111", 11),  # resEvento, to be replaced by its procEvento
        quarantined,  # delivered again in the lot
    ]
    for database in (db, reference):
        _one_by_one(database, company.id, before)
        DistributionItemRepository(database).record(company.id, Product.NFE, 13)  # an NSU with no links
    clock.advance(60)
    new_a = replace(_full_input(b"<nfeProc>A</nfeProc>", nsu=20), access_key="1" * 44)
    lot: list[DocumentInput | EventInput] = [
        new_a,
        _full_input(_proc(fixtures_dir), nsu=21),  # upgrade of a summary stored before
        replace(_summary_input(b"<resNFe>B</resNFe>", nsu=22), access_key="2" * 44),
        _event_input("1" * 44, "210200", 23),  # event for a key whose document is in this lot
        _event_input("2" * 44, "110111", 24, full=True),  # procEvento replacing a stored resEvento
        quarantined,  # the same unreadable NSU again
        replace(_summary_input(b"<resNFe>C</resNFe>", nsu=13), access_key="3" * 44),  # NSU known, unlinked
        replace(_summary_input(b"<resNFe>D</resNFe>", nsu=20), access_key="4" * 44),  # NSU repeated in the lot
        replace(_summary_input(b"<resNFe>E</resNFe>", nsu=25), access_key="5" * 44),
        replace(_full_input(b"<nfeProc>E</nfeProc>", nsu=26), access_key="5" * 44),  # upgrade in the lot
        _event_input("6" * 44, "210210", 27),
        _event_input("6" * 44, "210210", 28, full=True),  # replaced in the same lot
        replace(_summary_input(b"<resNFe>F</resNFe>", nsu=29), access_key="7" * 44),  # new after ORM rows
        replace(quarantined, nsu=None, xml=b"<sem-nsu"),  # keyless and without NSU: always a new row
        replace(_full_input(b"<cteProc/>", nsu=20), product=Product.CTE, kind=DocumentKind.CTE_PROC),
        replace(new_a, nsu=30),  # the same bytes under a new NSU
    ]
    cursor = CaptureState(company.id, Product.NFE, ult_nsu=30, max_nsu=30)
    results = DocumentRepository(db).store_batch(company.id, lot, cursor)

    assert results == _one_by_one(reference, company.id, lot)
    assert _dump(db) == _dump(reference)
    assert CaptureStateRepository(db).get(company.id, Product.NFE).ult_nsu == 30
    # And the outcome is the intended one, not merely the same one.
    flags = [
        (r.created, r.new_version, r.became_current, r.nsu_was_new) for r in results if isinstance(r, StoredDocument)
    ]
    assert flags == [
        (True, True, True, True),  # A
        (False, True, True, True),  # upgrade
        (True, True, True, True),  # B
        (False, False, False, False),  # quarantined again
        (True, True, True, False),  # C: its NSU was already recorded
        (True, True, True, False),  # D: NSU 20 came with A
        (True, True, True, True),  # E summary
        (False, True, True, True),  # E full
        (True, True, True, True),  # F
        (True, True, True, False),  # no NSU
        (True, True, True, True),  # CT-e: NSU 20 of another product
        (False, False, False, True),  # A's bytes again
    ]
    events = [r for r in results if isinstance(r, StoredEvent)]
    assert [(e.created, e.replaced) for e in events] == [(True, False), (False, True), (True, False), (False, True)]
    docs = DocumentRepository(db)
    assert docs.get_xml(company.id, Product.NFE, KEY) == _proc(fixtures_dir)
    assert docs.get_xml(company.id, Product.NFE, "5" * 44) == b"<nfeProc>E</nfeProc>"
    assert EventRepository(db).for_key(company.id, Product.NFE, "6" * 44)[0].kind is DocumentKind.PROC_EVENTO_NFE
    items = DistributionItemRepository(db)
    assert items.missing(company.id, Product.NFE, 20, 30) == []
    with db.reader() as s:
        assert s.execute(text("SELECT document_id FROM distribution_items WHERE nsu = 13")).scalar() == (
            results[6].document_id if isinstance(results[6], StoredDocument) else None
        )


_KEYS = st.sampled_from(["1" * 44, "2" * 44, "3" * 44])
_NSUS = st.none() | st.integers(1, 8)
_XML = st.sampled_from([b"<a/>", b"<b/>", b"<c/>"])
_DOCUMENT = st.builds(
    DocumentInput,
    product=st.sampled_from([Product.NFE, Product.NFE, Product.CTE]),
    kind=st.sampled_from([DocumentKind.RES_NFE, DocumentKind.NFE_PROC]),
    xml=_XML,
    access_key=st.none() | _KEYS,
    nsu=_NSUS,
    parties=st.sampled_from([(), (Party(PartyRole.EMITTER, "75277525000178", "EMITENTE"),)]),
    issued_at=st.sampled_from([None, datetime(2021, 7, 22, 15, 5, 23, 120_000, tzinfo=BRT)]),
    parse_error=st.sampled_from([None, None, "x"]),
)
_EVENT = st.builds(
    EventInput,
    product=st.just(Product.NFE),
    kind=st.sampled_from([DocumentKind.RES_EVENTO, DocumentKind.PROC_EVENTO_NFE]),
    xml=_XML,
    access_key=_KEYS,
    tp_evento=st.sampled_from(["110111", "210200"]),
    nsu=_NSUS,
)
_ITEMS = st.lists(st.one_of(_DOCUMENT, _EVENT), max_size=6)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=_ITEMS, lot=_ITEMS.filter(bool))
def test_any_lot_matches_one_by_one(
    db: Database,
    reference: Database,
    company: Company,
    clock: FakeClock,
    before: list[DocumentInput | EventInput],
    lot: list[DocumentInput | EventInput],
) -> None:
    # Each example gets its own company in both databases (same id in each), so runs don't meet.
    body = f"{clock.now().timestamp():012.0f}"[-12:]
    ids = [CompanyRepository(d).add(Cnpj.from_body(body), "Empresa").id for d in (db, reference)]
    assert ids[0] == ids[1]
    _one_by_one(db, ids[0], before)
    _one_by_one(reference, ids[0], before)
    clock.advance(1)
    assert DocumentRepository(db).store_batch(ids[0], lot) == _one_by_one(reference, ids[0], lot)
    assert _dump(db) == _dump(reference)
    clock.advance(1)


def test_a_lot_bigger_than_one_look_up_chunk(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    lot: list[DocumentInput | EventInput] = [
        DocumentInput(Product.NFE, DocumentKind.RES_NFE, f"<r>{n}</r>".encode(), f"{n:044d}", nsu=n)
        for n in range(1, 521)
    ]
    first = docs.store_batch(company.id, lot)
    again = docs.store_batch(company.id, lot)
    assert all(isinstance(r, StoredDocument) and r.created and r.nsu_was_new for r in first)
    assert all(isinstance(r, StoredDocument) and not (r.created or r.new_version or r.nsu_was_new) for r in again)
    assert [r.document_id for r in again] == [r.document_id for r in first]
    assert docs.count(DocumentQuery(company.id, Product.NFE)) == 520
    assert DistributionItemRepository(db).missing(company.id, Product.NFE, 1, 520) == []


def test_a_refused_item_anywhere_in_the_lot_writes_nothing(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    good = replace(_summary_input(_res_nfe(), nsu=1), access_key="3" * 44)
    cursor = CaptureState(company.id, Product.NFE, ult_nsu=3, max_nsu=9)
    with pytest.raises(InvalidRecord, match="NSU fora"):
        docs.store_batch(company.id, [good, replace(good, access_key="4" * 44, nsu=10**15)], cursor)
    with pytest.raises(InvalidRecord, match="Tipo de evento"):
        docs.store_batch(company.id, [good, _event_input("3" * 44, "1101", 2)], cursor)
    assert _dump(db) == {t: [] for t in _LOT_TABLES}
    assert CaptureStateRepository(db).get(company.id, Product.NFE).ult_nsu == 0


def test_a_fault_after_rows_were_flushed_rolls_back_the_lot_and_its_cursor(
    db: Database, company: Company, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = DocumentRepository(db)
    docs.store(company.id, replace(_summary_input(_res_nfe(), nsu=1), access_key="3" * 44))
    before = _dump(db)

    def failing(*_args: object, **_kwargs: object) -> StoredDocument:
        raise StorageBug("falha simulada")

    monkeypatch.setattr(lots_module._LotWriter, "known_document", failing)
    lot: list[DocumentInput | EventInput] = [
        replace(_summary_input(b"<novo/>", nsu=2), access_key="4" * 44),  # queued, flushed before...
        replace(_full_input(b"<nfeProc/>", nsu=3), access_key="3" * 44),  # ...this known key fails
    ]
    with pytest.raises(StorageBug, match="falha simulada"):
        docs.store_batch(company.id, lot, CaptureState(company.id, Product.NFE, ult_nsu=3, max_nsu=3))
    assert _dump(db) == before
    assert CaptureStateRepository(db).get(company.id, Product.NFE).ult_nsu == 0


def test_a_lot_for_an_unknown_company_fails_whole(db: Database, company: Company) -> None:
    lot: list[DocumentInput | EventInput] = [replace(_summary_input(_res_nfe(), nsu=1), access_key="3" * 44)]
    with pytest.raises(StorageBug):
        DocumentRepository(db).store_batch(company.id + 1, lot)
    assert _dump(db) == {t: [] for t in _LOT_TABLES}


def test_docZip_gzip_kept_as_the_blob_on_the_bulk_and_the_per_row_paths(
    db: Database, company: Company, fixtures_dir: Path
) -> None:
    docs, events = DocumentRepository(db), EventRepository(db)
    summary, full = _res_nfe(), _proc(fixtures_dir)
    event = _event_input(KEY, "110111", 3, xml=b"<resEvento>cancelamento</resEvento>")
    lot: list[DocumentInput | EventInput] = [
        replace(_summary_input(summary, nsu=1), xml_gzip=gzip.compress(summary)),
        replace(event, xml_gzip=gzip.compress(event.xml)),
    ]
    first, stored_event = docs.store_batch(company.id, lot, CaptureState(company.id, Product.NFE, ult_nsu=3))
    # The same key again takes the per-row path (a new version over the summary).
    upgrade = docs.store_batch(company.id, [replace(_full_input(full, nsu=2), xml_gzip=gzip.compress(full))])[0]
    assert isinstance(first, StoredDocument) and isinstance(stored_event, StoredEvent)
    assert isinstance(upgrade, StoredDocument) and upgrade.became_current
    assert docs.get_version_xml(first.version_id) == summary
    assert docs.get_xml(company.id, Product.NFE, KEY) == full
    assert events.get_xml(stored_event.event_id) == event.xml
    with db.reader() as s:
        blobs = s.execute(text("SELECT xml_zlib, xml_sha256, xml_size FROM document_versions ORDER BY id")).all()
    assert [bytes(b[:2]) for b, _, _ in blobs] == [b"\x1f\x8b", b"\x1f\x8b"]
    assert [(sha, size) for _, sha, size in blobs] == [(hashlib.sha256(x).hexdigest(), len(x)) for x in (summary, full)]
    assert gzip.decompress(blobs[1][0]) == full


def test_zlib_blobs_written_before_the_gzip_passthrough_still_read(db: Database, company: Company) -> None:
    docs = DocumentRepository(db)
    xml = _res_nfe()
    stored = docs.store(company.id, _summary_input(xml))  # no gzip: compressed here, as before
    with db.reader() as s:
        blob = s.execute(text("SELECT xml_zlib FROM document_versions")).scalar_one()
    assert zlib.decompress(blob) == xml
    assert docs.get_document_xml(stored.document_id) == xml


def test_the_cursor_saved_with_a_lot_keeps_every_field(db: Database, company: Company, clock: FakeClock) -> None:
    now = clock.now().astimezone(BRT)
    cursor = CaptureState(
        company.id,
        Product.NFE,
        ult_nsu=7,
        max_nsu=9,
        last_query_at=now,
        last_dh_resp=now + timedelta(seconds=1),
        clock_offset_ms=-1500,
        next_query_at=now + timedelta(hours=1),
        wait_reason="fila vazia (137)",
        blocked_until=None,
        point_queries_blocked_until=now,
        paused=True,
        consecutive_failures=2,
        last_cstat="138",
        last_message="Documento(s) localizado(s)",
    )
    DocumentRepository(db).store_batch(company.id, [_summary_input(_res_nfe(), nsu=7)], cursor)
    assert CaptureStateRepository(db).get(company.id, Product.NFE) == cursor
    DocumentRepository(db).store_batch(company.id, [], replace(cursor, ult_nsu=9, paused=False))
    assert CaptureStateRepository(db).get(company.id, Product.NFE) == replace(cursor, ult_nsu=9, paused=False)
