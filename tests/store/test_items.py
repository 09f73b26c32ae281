from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import text

from app.core.clock import FakeClock
from app.store.db import Database
from app.store.errors import InvalidRecord, StorageBug
from app.store.items import DistributionItemRepository
from app.store.records import Company, Product


def test_each_nsu_is_stored_once_per_company_and_product(db: Database, company: Company) -> None:
    items = DistributionItemRepository(db)
    assert items.record(company.id, Product.NFE, 5, "resNFe_v1.01.xsd") is True
    assert items.record(company.id, Product.NFE, 5, "resNFe_v1.01.xsd") is False
    assert items.record(company.id, Product.CTE, 5) is True  # another product, another sequence
    with pytest.raises(StorageBug, match=r"(?i)unique"), db.session() as s:
        s.execute(
            text(
                "INSERT INTO distribution_items (company_id, product, nsu, received_at) "
                "VALUES (:c, 'nfe', 5, '2026-01-01 00:00:00.000000')"
            ),
            {"c": company.id},
        )
    with db.reader() as s:
        assert s.execute(text("SELECT count(*) FROM distribution_items")).scalar() == 2


def test_missing_nsus_in_a_range(db: Database, company: Company) -> None:
    items = DistributionItemRepository(db)
    for nsu in (1, 2, 4, 7, 8, 12):
        items.record(company.id, Product.NFE, nsu)
    assert items.received(company.id, Product.NFE, 2, 8) == [2, 4, 7, 8]
    assert items.missing(company.id, Product.NFE, 1, 12) == [3, 5, 6, 9, 10, 11]
    assert items.missing(company.id, Product.CTE, 1, 3) == [1, 2, 3]


def test_first_nsu_received_since_a_time(db: Database, company: Company, clock: FakeClock) -> None:
    items = DistributionItemRepository(db)
    items.record(company.id, Product.NFE, 10)
    clock.advance(timedelta(days=4))
    since = clock.now() - timedelta(days=3)
    assert items.first_received_since(company.id, Product.NFE, since) is None
    items.record(company.id, Product.NFE, 30)
    items.record(company.id, Product.NFE, 20)
    assert items.first_received_since(company.id, Product.NFE, since) == 20


def test_nsu_out_of_range_is_refused(db: Database, company: Company) -> None:
    with pytest.raises(InvalidRecord):
        DistributionItemRepository(db).record(company.id, Product.NFE, 10**15)


def test_a_readable_copy_heals_a_quarantined_nsu(db: Database, company: Company) -> None:
    from app.store.documents import DocumentRepository
    from app.store.records import DocumentInput, DocumentKind, DocumentQuery, Product

    docs = DocumentRepository(db)
    items = DistributionItemRepository(db)
    docs.store_batch(
        company.id,
        [
            DocumentInput(
                Product.NFE, DocumentKind.UNKNOWN, b"H4sI-corrupt", None, nsu=7, parse_error="gzip corrompido"
            ),
        ],
    )
    assert items.quarantined(company.id, Product.NFE, [7]) == {7}
    key = "35170307705364000116550010000158771254375877"
    [stored] = docs.store_batch(
        company.id,
        [
            DocumentInput(Product.NFE, DocumentKind.RES_NFE, b"<resNFe/>", key, nsu=7),
        ],
    )
    assert items.quarantined(company.id, Product.NFE, [7]) == set()
    ids = docs.page_ids(DocumentQuery(company_id=company.id, product=Product.NFE), 0, 10)
    assert ids == [stored.document_id]  # the corrupt copy is gone, the NSU points at the good one
    assert items.received(company.id, Product.NFE, 1, 10) == [7]
