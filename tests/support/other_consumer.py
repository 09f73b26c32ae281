"""Another system consuming a company's NF-e or CT-e in the middle of our chain (issue 22), over
mutual TLS, driven by the service's own jobs on the virtual clock (``app.capture.simulation``).

The company reads its queue, goes quiet for the hour, more documents arrive, and another system
with the same certificate reads them first (the moment the AN lets it). Our next distNSU meets
the 656, the cursor jumps to the ultNSU it carries, and the NSUs the other system took come back
by consNSU, at most 20 per hour, while the company's state says what happened.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from app.capture.context import CaptureNotice
from app.capture.service import CaptureService
from app.capture.simulation import drive
from app.capture.status import CompanyStatus
from app.core.cadence import Action
from app.core.products import Environment, Product
from app.store.records import CaptureSettings
from tests.support.fleet import SUPPLIER, Fleet, fleet

OTHER_PARTY = "44555666000181"
FIRST = 3  # documents before the other system shows up
TAKEN = 25  # documents it takes: more than one hour of point queries (20)
SERVICE = {Product.NFE: "nfe_dist", Product.CTE: "cte_dist"}


@dataclass
class Outcome:
    """What the scenario saw, for the product's test to assert."""

    fleet: Fleet
    blocked: CompanyStatus  # right after the 656
    final: CompanyStatus  # once everything came back
    notices: list[CaptureNotice] = field(default_factory=list)
    ult_before: int = 0
    ult_after_656: int = 0
    consnsu_hits: list[datetime] = field(default_factory=list)  # our consNSU that returned a document


def _publish(f: Fleet, product: Product, cnpj: str) -> Callable[[], object]:
    if product is Product.NFE:
        return lambda: f.sandbox.publish_nfe(SUPPLIER, cnpj)
    return lambda: f.sandbox.publish_cte(emitter=SUPPLIER, sender=OTHER_PARTY, recipient=cnpj)


def run(tmp_path: Path, product: Product) -> Outcome:
    with fleet(tmp_path, 1, in_process=False, seed=13) as f:
        assert (f.sandbox.base_url or "").startswith("https://127.0.0.1:")  # mutual TLS on loopback
        company = f.companies[0]
        cnpj = company.cnpj.value
        if product is Product.CTE:  # the fleet's companies capture NF-e; this one CT-e only
            f.settings(company, enabled=False)
            f.office.companies.save_settings(
                CaptureSettings(company.id, Product.CTE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
            )
        notices: list[CaptureNotice] = []
        f.ctx.listeners.append(notices.append)
        service = CaptureService(f.ctx, workers=1)
        start = f.clock.now()
        publish = _publish(f, product, cnpj)
        for _ in range(FIRST):
            publish()
        drive(service, f.fake_clock, start + timedelta(minutes=10))
        ult_before = f.ctx.cursors.get(company.id, product).ult_nsu
        assert ult_before == FIRST
        timeline = [(start + timedelta(minutes=20), publish)] * TAKEN
        timeline.append((start + timedelta(minutes=25), lambda: f.sandbox.other_consumer(cnpj, product.value)))
        # Until our hourly query met the 656 (the other system read at the end of the hour).
        drive(service, f.fake_clock, start + timedelta(hours=1, minutes=15), timeline=timeline)
        state = f.ctx.cursors.get(company.id, product)
        (blocked,) = service.status(company_id=company.id, product=product)
        drive(service, f.fake_clock, start + timedelta(hours=7))
        (final,) = service.status(company_id=company.id, product=product)
        hits = [
            r.at
            for r in f.sandbox.referee.requests
            if r.service == SERVICE[product] and not r.competitor and r.operation == "consNSU" and r.cstat == 138
        ]
        outcome = Outcome(f, blocked, final, notices, ult_before, state.ult_nsu, hits)
        check(outcome, product)
        return outcome


def check(o: Outcome, product: Product) -> None:
    """What issue 22 asks of every product; the product's test adds its own."""
    f, company = o.fleet, o.fleet.companies[0]
    report = f.sandbox.referee.report()
    assert report["violations"] == [], report["violations"][:3]
    revealing = [v for v in report["revealing_656"] if v["service"] == SERVICE[product]]
    assert len(revealing) == 1 and revealing[0]["rule"] == "premature_query"
    data = report["companies"][company.cnpj.value][product.value]
    taken = sorted(map(int, data["competitor_delivered"]))
    assert taken == list(range(FIRST + 1, FIRST + TAKEN + 1))
    # The cursor jumped over what the other system took, forward only.
    assert o.ult_after_656 == FIRST + TAKEN
    # Right after the 656: blocked, and the state says another system consumes the company.
    assert o.blocked.action is Action.BLOCKED and o.blocked.other_consumer is not None
    assert o.blocked.other_consumer.pending == TAKEN and o.blocked.other_consumer.recovered == 0
    expected = f"Outro sistema está consultando as {product.label} desta empresa com o mesmo certificado (desde "
    assert (
        expected in o.blocked.reason and "0 documentos recuperados, 25 pendentes (até 20 por hora)" in o.blocked.reason
    )
    assert o.blocked.to_json()["other_consumer"]["pending"] == TAKEN
    (notice,) = [n for n in o.notices if n.kind == "other_consumer"]
    assert notice.company_id == company.id and notice.product is product and expected in notice.message
    # Everything came back by consNSU, each NSU once, within the 20-per-hour quota.
    assert data["undelivered"] == []
    recovered = {n: d["via"] for n, d in data["delivered"].items() if int(n) > FIRST}
    assert recovered == {str(n): ["consNSU"] for n in taken}
    assert all(d["count"] == 1 for d in data["delivered"].values())
    assert len(o.consnsu_hits) == TAKEN
    for at in o.consnsu_hits:
        assert sum(1 for t in o.consnsu_hits if at <= t < at + timedelta(hours=1)) <= 20
    assert f.ctx.items.received(company.id, product, 1, FIRST + TAKEN) == list(range(1, FIRST + TAKEN + 1))
    assert o.final.other_consumer is not None
    assert (o.final.other_consumer.recovered, o.final.other_consumer.pending) == (TAKEN, 0)
    assert "25 documentos recuperados, 0 pendentes" in o.final.reason
