"""A simulated week of one company: outages, a competing system, corrupt docZips, manifestations.

The proof the issue asks for: every NSU the sandbox published for the company is stored exactly
once, and the referee reports no rule broken by us.
"""

from __future__ import annotations

import random
from datetime import timedelta

from app.core.products import Product
from app.store.records import DocumentKind, DocumentQuery
from tests.capture.conftest import CARRIER, RECIPIENT, SUPPLIER, Harness

OTHER_SUPPLIER = "11444777000161"


def test_a_week_delivers_every_published_nsu_exactly_once(harness: Harness) -> None:
    rng = random.Random(2026)
    harness.settings(auto_ciencia=True, ciencia_wait_minutes=10)
    sandbox = harness.sandbox
    start = harness.clock.now()
    published = []
    for day in range(7):
        for _ in range(rng.randint(8, 16)):
            when = start + timedelta(days=day, minutes=rng.randint(0, 24 * 60 - 1))
            supplier = rng.choice([SUPPLIER, OTHER_SUPPLIER])
            as_carrier = rng.random() < 0.2

            def publish(supplier: str = supplier, as_carrier: bool = as_carrier) -> None:
                if as_carrier:  # the company carries it: the full NF-e comes at once
                    published.append(sandbox.publish_nfe(supplier, CARRIER, transporter=RECIPIENT))
                else:
                    published.append(sandbox.publish_nfe(supplier, RECIPIENT))

            harness.at(when, publish)
    # A supplier cancels one of its notes on day 3 (the recipient receives the event).
    harness.at(
        start + timedelta(days=3, hours=9),
        lambda: sandbox.publish_nfe_event(published[3], "110111", justification="Pedido cancelado pelo cliente"),
    )
    # The national environment stops twice.
    harness.at(
        start + timedelta(days=1, hours=10),
        lambda: sandbox.outage("nfe_dist", 108, harness.clock.now() + timedelta(minutes=40)),
    )
    harness.at(
        start + timedelta(days=4, hours=14),
        lambda: sandbox.outage("nfe_dist", 109, harness.clock.now() + timedelta(hours=1)),
    )
    # Corrupt payloads in two lots.
    harness.at(start + timedelta(days=2), lambda: sandbox.inject_fault("nfe_dist", "corrupt_gzip"))
    harness.at(start + timedelta(days=5), lambda: sandbox.inject_fault("nfe_dist", "corrupt_base64"))
    # Another system uses the same certificate now and then (sometimes prematurely: its 656s are its own).
    for day, hour in ((2, 15), (3, 3), (6, 8)):
        harness.at(start + timedelta(days=day, hours=hour), lambda: sandbox.competitor_query(RECIPIENT, "nfe"))

    harness.run_until(start + timedelta(days=7, hours=6))

    report = sandbox.referee.report()
    assert report["violations"] == [], report["violations"][:5]
    company = report["companies"][RECIPIENT]["nfe"]
    published_nsus = sorted(p["nsu"] for p in company["published"])
    assert published_nsus, "the scenario published nothing"
    state = harness.ctx.cursors.get(harness.company.id, Product.NFE)
    stored = harness.ctx.items.received(harness.company.id, Product.NFE, 1, max([*published_nsus, state.ult_nsu]))
    assert stored == published_nsus  # each NSU once: the store's key forbids a second copy
    assert company["undelivered"] == []

    ids = harness.ctx.documents.page_ids(DocumentQuery(company_id=harness.company.id, product=Product.NFE), 0, 10_000)
    summaries = harness.ctx.documents.summaries(ids)
    # Both corrupt docZips were kept in quarantine, then fetched again by consNSU and healed.
    assert not [s for s in summaries if s.quarantined]
    refetched = [nsu for nsu, d in company["delivered"].items() if d["via"] == ["consNSU", "distNSU"]]
    assert len(refetched) == 2
    nfe_keys = {str(n.key) for n in published}
    full = {s.access_key for s in summaries if s.kind is DocumentKind.NFE_PROC}
    assert nfe_keys <= full  # every resNFe became the full NF-e after the automatic Ciência
    cancelled = harness.ctx.documents.find(harness.company.id, Product.NFE, str(published[3].key))
    assert cancelled is not None and cancelled.status.value == "cancelled"
