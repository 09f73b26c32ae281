"""The lot writer on the driver against the ORM's one-by-one path, lot after lot; cancellations."""

from __future__ import annotations

import gzip
import itertools
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.clock import FakeClock
from app.core.ids import Cnpj
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.documents import DocumentRepository, mark_cancelled_in, store_lot_on
from app.store.events import EventRepository, keys_with_event_in
from app.store.items import DistributionItemRepository
from app.store.records import (
    Company,
    DocumentInput,
    DocumentKind,
    DocumentQuery,
    DocumentStatus,
    EventInput,
    Party,
    PartyRole,
    Product,
    StoredDocument,
)
from tests.store.conftest import CNPJ_A
from tests.store.test_documents import _LOT_TABLES, _dump, _one_by_one

BRT = timezone(timedelta(hours=-3))
EMITTER = Party(PartyRole.EMITTER, "75277525000178", "EMITENTE")
RECIPIENT = Party(PartyRole.RECIPIENT, "11222333000181", "DESTINATARIO")


@pytest.fixture
def reference(second_target: Path | str, clock: FakeClock) -> Iterator[Database]:
    """A second database on the same engine, fed one item at a time through the ORM path."""
    database = open_database(second_target, clock=clock)
    try:
        CompanyRepository(database).add(CNPJ_A, "Alfa Comércio Ltda", certificate_ref="cert-alfa")
        yield database
    finally:
        database.close()


def _gzipped(xml: bytes) -> bytes:
    return gzip.compress(xml, mtime=0)


# Small pools of keys, NSUs and bodies, so lots keep meeting what earlier lots stored: upgrades,
# poorer versions, the same bytes again, NSUs repeated, quarantined copies healed.
_KEYS = st.sampled_from(["1" * 44, "2" * 44, "3" * 44])
_NSUS = st.none() | st.integers(1, 6)
_BODIES = st.sampled_from([b"<a/>", b"<b/>", b"<c/>"])


@st.composite
def _documents(draw: st.DrawFn) -> DocumentInput:
    xml = draw(_BODIES)
    broken = draw(st.sampled_from([False, False, False, True]))
    return DocumentInput(
        product=draw(st.sampled_from([Product.NFE, Product.NFE, Product.CTE])),
        kind=DocumentKind.UNKNOWN if broken else draw(st.sampled_from([DocumentKind.RES_NFE, DocumentKind.NFE_PROC])),
        xml=xml,
        access_key=None if broken else draw(st.none() | _KEYS),
        nsu=draw(_NSUS),
        schema=draw(st.sampled_from([None, "resNFe_v1.01.xsd"])),
        serie=draw(st.sampled_from([None, 1])),
        emitter_id=draw(st.sampled_from([None, EMITTER.tax_id])),
        recipient_name=draw(st.sampled_from([None, "DESTINATARIO"])),
        parties=draw(st.sampled_from([(), (EMITTER,), (EMITTER, RECIPIENT)])),
        total_cents=draw(st.sampled_from([None, 12_345])),
        issued_at=draw(st.sampled_from([None, datetime(2021, 7, 22, 15, 5, 23, 120_000, tzinfo=BRT)])),
        status=draw(st.sampled_from([DocumentStatus.SUMMARY, DocumentStatus.AUTHORISED])),
        parse_error="ilegível" if broken else None,
        xml_gzip=draw(st.sampled_from([None, _gzipped(xml), b"\x1f\x8b-not-this-one"])),
    )


@st.composite
def _events(draw: st.DrawFn) -> EventInput:
    xml = draw(_BODIES)
    return EventInput(
        product=Product.NFE,
        kind=draw(st.sampled_from([DocumentKind.RES_EVENTO, DocumentKind.PROC_EVENTO_NFE])),
        xml=xml,
        access_key=draw(_KEYS),
        tp_evento=draw(st.sampled_from(["110111", "210200"])),
        nsu=draw(_NSUS),
        description=draw(st.sampled_from([None, "Cancelamento"])),
        event_at=draw(st.sampled_from([None, datetime(2021, 7, 23, 10, 0, tzinfo=BRT)])),
        cstat=draw(st.sampled_from([None, "135"])),
        xml_gzip=draw(st.sampled_from([None, _gzipped(xml)])),
    )


_EXAMPLES = itertools.count(1)
_LOTS = st.lists(st.lists(st.one_of(_documents(), _events()), min_size=1, max_size=6), min_size=1, max_size=4)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lots=_LOTS)
def test_lot_after_lot_the_driver_path_writes_the_rows_the_orm_path_writes(
    db: Database, reference: Database, company: Company, clock: FakeClock, lots: list[list[DocumentInput | EventInput]]
) -> None:
    # Each example gets its own company in both databases (same id in each), so runs don't meet.
    body = f"{next(_EXAMPLES):012d}"
    ids = [CompanyRepository(d).add(Cnpj.from_body(body), "Empresa").id for d in (db, reference)]
    assert ids[0] == ids[1]
    for lot in lots:
        clock.advance(1)
        assert DocumentRepository(db).store_batch(ids[0], lot) == _one_by_one(reference, ids[0], lot)
    assert _dump(db) == _dump(reference)


def test_an_upgrade_on_the_driver_path_matches_the_orm_row_for_row(
    db: Database, reference: Database, company: Company, clock: FakeClock
) -> None:
    key = "4" * 44
    summary = DocumentInput(
        Product.NFE, DocumentKind.RES_NFE, b"<resNFe/>", key, nsu=1, emitter_id=EMITTER.tax_id,
        emitter_name="EMITENTE", total_cents=100, status=DocumentStatus.SUMMARY,
        issued_at=datetime(2026, 11, 2, 9, 0, tzinfo=BRT), xml_gzip=_gzipped(b"<resNFe/>"),
    )  # fmt: skip
    full = replace(
        summary, kind=DocumentKind.NFE_PROC, xml=b"<nfeProc/>", nsu=7, serie=1, number=42, model="55",
        recipient_id=RECIPIENT.tax_id, parties=(EMITTER, RECIPIENT), status=DocumentStatus.AUTHORISED,
        xml_gzip=_gzipped(b"<nfeProc/>"),
    )  # fmt: skip
    late_summary = replace(summary, xml=b"<resNFe>de novo</resNFe>", nsu=9, xml_gzip=None)
    for lot in ([summary], [full, late_summary]):
        clock.advance(60)
        stored = DocumentRepository(db).store_batch(company.id, list(lot))
        assert stored == _one_by_one(reference, company.id, list(lot))
    assert _dump(db) == _dump(reference)
    docs = DocumentRepository(db)
    found = docs.find(company.id, Product.NFE, key)
    assert found is not None
    assert (found.kind, found.nsu, found.version_count, found.number) == (DocumentKind.NFE_PROC, 7, 3, 42)
    assert [p.role for p in docs.parties(found.id)] == [PartyRole.EMITTER, PartyRole.RECIPIENT]
    assert [(v.nsu, v.is_current) for v in docs.versions(found.id)] == [(1, False), (7, True), (9, False)]
    assert docs.get_xml(company.id, Product.NFE, key) == b"<nfeProc/>"


def test_a_quarantined_copy_is_healed_and_its_freed_id_used_as_the_orm_would(
    db: Database, reference: Database, company: Company
) -> None:
    broken = DocumentInput(Product.NFE, DocumentKind.UNKNOWN, b"H4sI", None, nsu=5, parse_error="gzip")
    readable = DocumentInput(Product.NFE, DocumentKind.RES_NFE, b"<resNFe/>", "5" * 44, nsu=5)
    after = DocumentInput(Product.NFE, DocumentKind.RES_NFE, b"<resNFe>6</resNFe>", "6" * 44, nsu=6)
    for lot in ([broken], [readable, after]):
        stored = DocumentRepository(db).store_batch(company.id, list(lot))
        assert stored == _one_by_one(reference, company.id, list(lot))
    assert _dump(db) == _dump(reference)
    items = DistributionItemRepository(db)
    assert items.quarantined(company.id, Product.NFE, [5]) == set()
    assert DocumentRepository(db).count(DocumentQuery(company.id, Product.NFE)) == 2


# ---------------------------------------------------------------- cancellations


def _note(
    key: str, status: DocumentStatus = DocumentStatus.AUTHORISED, product: Product = Product.NFE
) -> DocumentInput:
    return DocumentInput(product, DocumentKind.NFE_PROC, f"<nfeProc>{key}</nfeProc>".encode(), key, status=status)


def test_mark_cancelled_changes_only_the_named_documents_not_cancelled_yet(
    db: Database, company: Company, clock: FakeClock
) -> None:
    docs = DocumentRepository(db)
    other = CompanyRepository(db).add(Cnpj.from_body("12ABC34501DE"), "Beta Ltda")
    stored = docs.store_batch(
        company.id,
        [
            _note("1" * 44),
            _note("2" * 44, DocumentStatus.CANCELLED),
            _note("3" * 44),
            _note("1" * 44, product=Product.CTE),
        ],
    )
    docs.store_batch(other.id, [_note("1" * 44)])
    created = docs.get(stored[0].document_id).updated_at
    clock.advance(90)
    with db.session() as s:
        changed = mark_cancelled_in(s, company.id, Product.NFE, ["1" * 44, "2" * 44, "9" * 44], now=clock.now())
    assert changed == 1  # "2" was cancelled already, "9" does not exist
    statuses = {
        (summary.company_id, summary.product, summary.access_key): summary.status
        for query in (DocumentQuery(company.id, Product.NFE), DocumentQuery(company.id, Product.CTE),
                      DocumentQuery(other.id, Product.NFE))
        for summary in docs.summaries(docs.page_ids(query, 0, 10))
    }  # fmt: skip
    assert statuses == {
        (company.id, Product.NFE, "1" * 44): DocumentStatus.CANCELLED,
        (company.id, Product.NFE, "2" * 44): DocumentStatus.CANCELLED,
        (company.id, Product.NFE, "3" * 44): DocumentStatus.AUTHORISED,
        (company.id, Product.CTE, "1" * 44): DocumentStatus.AUTHORISED,
        (other.id, Product.NFE, "1" * 44): DocumentStatus.AUTHORISED,
    }
    assert docs.get(stored[0].document_id).updated_at == created + timedelta(seconds=90)
    assert docs.get(stored[1].document_id).updated_at == created  # untouched
    with db.session() as s:
        assert mark_cancelled_in(s, company.id, Product.NFE, ["1" * 44]) == 0  # idempotent
        assert mark_cancelled_in(s, company.id, Product.NFE, []) == 0


def test_mark_cancelled_over_more_keys_than_one_statement_takes(db: Database, company: Company) -> None:
    keys = [f"{n:044d}" for n in range(1, 1203)]
    DocumentRepository(db).store_batch(company.id, [_note(k) for k in keys[::2]])
    with db.session() as s:
        assert mark_cancelled_in(s, company.id, Product.NFE, keys) == len(keys[::2])
    query = DocumentQuery(company.id, Product.NFE, status=DocumentStatus.CANCELLED)
    assert DocumentRepository(db).count(query) == len(keys[::2])


def test_keys_with_event_in_a_session_and_over_many_keys(db: Database, company: Company) -> None:
    keys = [f"{n:044d}" for n in range(1, 1103)]
    cancelled = {keys[3], keys[700], keys[1101]}
    lot: list[DocumentInput | EventInput] = [
        EventInput(Product.NFE, DocumentKind.RES_EVENTO, f"<e>{k}</e>".encode(), k, "110111") for k in cancelled
    ]
    lot.append(EventInput(Product.NFE, DocumentKind.RES_EVENTO, b"<e>cc-e</e>", keys[5], "110110"))
    DocumentRepository(db).store_batch(company.id, lot)
    events = EventRepository(db)
    assert events.keys_with_event(company.id, Product.NFE, keys, ("110111", "110112")) == cancelled
    assert events.keys_with_event(company.id, Product.CTE, keys, ("110111",)) == set()
    assert events.keys_with_event(company.id, Product.NFE, keys, ()) == set()
    with db.session() as s:
        assert keys_with_event_in(s, company.id, Product.NFE, keys[:10], ["110110", "110111"]) == {keys[3], keys[5]}
        assert keys_with_event_in(s, company.id, Product.NFE, [], ["110111"]) == set()


def test_a_lot_with_no_items_writes_nothing(db: Database, company: Company) -> None:
    assert DocumentRepository(db).store_batch(company.id, []) == []
    assert _dump(db) == {t: [] for t in _LOT_TABLES}
    assert isinstance(DocumentRepository(db).store(company.id, _note("7" * 44)), StoredDocument)


def test_a_lot_on_a_bare_write_connection_commits_with_it(db: Database, company: Company) -> None:
    with db.write_connection() as connection:
        [stored] = store_lot_on(connection, company.id, [_note("8" * 44)], db.clock.now())
    assert isinstance(stored, StoredDocument) and stored.created
    found = DocumentRepository(db).find(company.id, Product.NFE, "8" * 44)
    assert found is not None and found.id == stored.document_id
