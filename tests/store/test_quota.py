from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.clock import FakeClock
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.quota import PointQueryLedger
from app.store.records import Product

from .conftest import CNPJ_A, CNPJ_B


def test_only_queries_that_returned_a_document_count_in_the_window(db: Database, clock: FakeClock) -> None:
    ledger = PointQueryLedger(db)
    start = clock.now()
    ledger.record(CNPJ_A, Product.NFE, queried_at=start, returned_document=True, nsu=10)
    ledger.record(CNPJ_A, Product.NFE, queried_at=start + timedelta(minutes=10), returned_document=False, nsu=11)
    ledger.record(
        CNPJ_A,
        Product.NFE,
        queried_at=start + timedelta(minutes=20),
        returned_document=True,
        access_key="1" * 44,
    )
    ledger.record(CNPJ_A, Product.CTE, queried_at=start + timedelta(minutes=20), returned_document=True, nsu=3)
    ledger.record(CNPJ_B, Product.NFE, queried_at=start + timedelta(minutes=20), returned_document=True, nsu=3)

    window_start = start + timedelta(minutes=70) - timedelta(hours=1)
    assert ledger.count_since(CNPJ_A, Product.NFE, start) == 2
    assert ledger.count_since(CNPJ_A, Product.NFE, window_start) == 1
    assert ledger.counted_since(CNPJ_A, Product.NFE, start) == [start, start + timedelta(minutes=20)]
    assert ledger.forget_before(start + timedelta(minutes=15)) == 2
    assert ledger.count_since(CNPJ_A, Product.NFE, start) == 1


def test_a_point_query_needs_an_nsu_or_a_key(db: Database, clock: FakeClock) -> None:
    with pytest.raises(InvalidRecord):
        PointQueryLedger(db).record(CNPJ_A, Product.NFE, queried_at=clock.now(), returned_document=True)
