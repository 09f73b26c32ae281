"""The contract every product gives the engine (``DistributionAdapter``), through each real adapter."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.capture.cte import CteAdapter
from app.capture.engine.adapter import DistributionAdapter, LotAnswer, RunSoFar, StoredLot
from app.capture.nfe import NfeAdapter
from app.capture.nfse import NfseAdapter
from app.capture.products import REGISTRY
from app.core.products import Product
from app.store.records import CallOutcome, CaptureSettings
from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER, Harness, product_harness

ADAPTERS: dict[Product, type[NfeAdapter] | type[CteAdapter] | type[NfseAdapter]] = {
    Product.NFE: NfeAdapter,
    Product.CTE: CteAdapter,
    Product.NFSE: NfseAdapter,
}


def _publish(h: Harness, product: Product) -> None:
    if product is Product.NFE:
        h.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    elif product is Product.CTE:
        h.sandbox.party(CARRIER)
        h.sandbox.publish_cte(CARRIER, SUPPLIER, RECIPIENT)
    else:
        h.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT)


def _settings(h: Harness, product: Product) -> CaptureSettings:
    settings = h.office.companies.get_settings(h.company.id, product)
    assert settings is not None
    return settings


def test_every_registered_product_has_an_adapter_logged_under_its_own_names(
    tmp_path: Path, office_database: str | None
) -> None:
    assert set(ADAPTERS) == set(REGISTRY)
    with product_harness(tmp_path, Product.NFE, database=office_database) as h:
        adapters: list[DistributionAdapter] = [ADAPTERS[p](h.ctx) for p in REGISTRY]
    assert [a.product for a in adapters] == list(REGISTRY)
    assert [a.job_type for a in adapters] == [f"{p.value}_distribution" for p in REGISTRY]
    assert len({a.service for a in adapters}) == len(adapters)  # each product's calls apart in the log
    assert all(a.operation for a in adapters)


@pytest.mark.parametrize("product", list(Product))
def test_one_lot_comes_back_in_the_engines_terms_and_stores_in_one_unit(
    tmp_path: Path, office_database: str | None, product: Product
) -> None:
    with product_harness(tmp_path, product, database=office_database) as h:
        adapter = ADAPTERS[product](h.ctx)
        for _ in range(2):
            _publish(h, product)
        settings = _settings(h, product)
        state = h.ctx.cursors.get(h.company.id, product)
        answer = adapter.query(h.company, settings, state, RunSoFar())
        assert isinstance(answer, LotAnswer) and answer.outcome is CallOutcome.OK, answer.error
        assert sorted(item.nsu or 0 for item in answer.items) == [1, 2]
        after = answer.transition.state
        assert (after.company_id, after.product, after.ult_nsu) == (h.company.id, product, 2)
        assert all(adapter.notable(h.company, settings, item) for item in answer.items)  # received: notified
        # What the engine does with it: the product's reads first, then one transaction.
        prepared = adapter.prepare_lot(h.company, answer.items)
        with h.ctx.unit() as unit:
            stored = unit.store_lot(h.company.id, answer.items)
            adapter.within_lot(StoredLot(unit, h.company, settings, answer.items, stored, h.clock.now(), prepared))
        assert h.ctx.items.received(h.company.id, product, 1, 2) == [1, 2]
        assert h.ctx.cursors.get(h.company.id, product).ult_nsu == 0  # the cursor is the engine's to save
        assert h.sandbox.referee.violations() == []


def test_what_a_run_did_so_far_is_a_frozen_count() -> None:
    so_far = RunSoFar()
    assert (so_far.lots, so_far.documents) == (0, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        so_far.lots = 1  # type: ignore[misc]
