"""``DistributionCapture``: one product's distribution, dispatcher and point queries over one context,
scheduled by nothing but the service's job table."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from app.capture.cte import CteCapture
from app.capture.engine.capture import DistributionCapture, NoDispatch
from app.capture.engine.locks import CompanyLocks
from app.capture.jobs import jobs_of
from app.capture.products import REGISTRY, build_capture
from app.capture.service import CaptureService
from app.capture.simulation import run_pending
from app.core.products import Product
from app.store.records import ManifestationStatus
from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER, Harness, cte_harness


def test_a_product_without_manifestations_dispatches_nothing(tmp_path: Path, office_database: str | None) -> None:
    nothing = NoDispatch()
    assert (nothing.dispatch(), nothing.dispatch(5, company_id=1), nothing.next_due_at()) == (0, 0, None)
    with cte_harness(tmp_path, database=office_database) as cte:
        assert isinstance(cte.capture.manifestation, NoDispatch)


def test_every_registered_product_is_one_bundle_over_the_context(harness: Harness) -> None:
    for product in REGISTRY:
        capture = build_capture(harness.ctx, product)
        assert isinstance(capture, DistributionCapture)
        assert capture.product is product is capture.distribution.product
        assert capture.ctx is harness.ctx and capture.distribution.ctx is harness.ctx
        assert not hasattr(capture, "run_due")  # one schedule: the service's job table


def test_distribution_and_point_queries_of_a_product_share_one_lock_per_cnpj(
    tmp_path: Path, office_database: str | None
) -> None:
    with cte_harness(tmp_path, database=office_database) as cte:
        cte.sandbox.party(CARRIER)
        cte.sandbox.publish_cte(CARRIER, SUPPLIER, RECIPIENT)
        locks = CompanyLocks()
        capture = CteCapture(cte.ctx, locks)
        assert capture.distribution.locks is locks and capture.points.locks is locks
        with cte.ctx.unit() as unit:
            unit.add_recoveries(cte.company.id, Product.CTE, next_attempt_at=cte.clock.now(), nsus=(1,))
        held = locks.for_cnpj(cte.company.cnpj.value)
        assert held.acquire(blocking=False)  # a point query of this CNPJ is running...
        try:
            assert capture.distribution.run_company(cte.company.id).skipped  # ...so its distribution waits
            assert capture.points.dispatch() == 0
        finally:
            held.release()
        assert cte.sandbox.referee.requests == []


def test_the_service_job_table_drives_the_bundles_parts(harness: Harness) -> None:
    service = CaptureService(harness.ctx, captures={Product.NFE: harness.capture}, workers=1)
    [distribution] = [job for job in jobs_of(service) if job.product is Product.NFE]
    assert distribution.due_at == harness.capture.distribution.planned_next
    key = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
    run_pending(service)  # the distribution pass brings the resNFe
    request = harness.capture.manifestation.request(harness.company.id, key, "210210")
    assert request.status is ManifestationStatus.PENDING
    harness.clock.advance(timedelta(minutes=1))
    stats = run_pending(service)  # the manifestation job sends it; the company still waits its hour
    [sent] = harness.ctx.manifestations.for_key(harness.company.id, Product.NFE, key)
    assert sent.status is ManifestationStatus.ACCEPTED and stats.queries == 0
    kinds = [r.job_type for r in harness.ctx.runs.recent(20)]
    assert kinds.count("manifestacoes") == 2 and kinds.count("recuperacoes") == 2  # each a run row
