"""The month benchmark in small, over real HTTPS with mutual TLS: a few companies, a few days.

``tests/benchmarks/bench_month.py`` runs 200 companies for 30 days against the sandbox's handlers
in-process; this is the same kind of run through real sockets (each company presenting its own
A1 in the TLS handshake), asserting the same zeros: nothing lost, nothing stored twice, no 656
caused by us, no rule broken.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from app.capture.service import CaptureService
from app.capture.simulation import drive
from app.config.paths import database_path
from app.core.products import Product
from tests.support.fleet import SUPPLIER, Fleet, fleet

DAYS = 3
OTHER_SUPPLIER = "11444777000161"
BUYER = "44555666000181"


def _timeline(f: Fleet, start: datetime, published: list[object]) -> list[tuple[datetime, Callable[[], object]]]:
    rng = random.Random(2026)
    sandbox = f.sandbox
    timeline: list[tuple[datetime, Callable[[], object]]] = []
    for day in range(DAYS):
        for company in f.companies:
            for _ in range(rng.randint(0, 10)):
                at = start + timedelta(days=day, minutes=rng.randint(0, 24 * 60 - 1))
                supplier = rng.choice([SUPPLIER, OTHER_SUPPLIER])
                cnpj = company.cnpj.value
                if rng.random() < 0.2:  # the company carries it: the full NF-e at once

                    def publish(s: str = supplier, c: str = cnpj) -> None:
                        published.append(sandbox.publish_nfe(s, BUYER, transporter=c))
                else:

                    def publish(s: str = supplier, c: str = cnpj) -> None:
                        published.append(sandbox.publish_nfe(s, c))

                timeline.append((at, publish))
    first = f.companies[0].cnpj.value
    timeline += [
        (start + timedelta(hours=5), lambda: sandbox.outage("nfe_dist", 108, f.clock.now() + timedelta(minutes=30))),
        (start + timedelta(hours=30), lambda: sandbox.outage("nfe_dist", 109, f.clock.now() + timedelta(minutes=50))),
        (start + timedelta(hours=9), lambda: sandbox.inject_fault("nfe_dist", "http_503", count=2)),
        (start + timedelta(hours=13), lambda: sandbox.inject_fault("nfe_dist", "timeout", stall_seconds=0.1)),
        (start + timedelta(hours=17), lambda: sandbox.inject_fault("nfe_dist", "close")),
        (start + timedelta(hours=20), lambda: sandbox.inject_fault("nfe_dist", "corrupt_gzip", cnpj=first)),
        (start + timedelta(hours=34), lambda: sandbox.inject_fault("nfe_dist", "corrupt_base64", cnpj=first)),
        (start + timedelta(hours=26), lambda: sandbox.inject_fault("nfe_evento", "http_502")),
        (start + timedelta(hours=11, minutes=17), lambda: sandbox.competitor_query(first, "nfe")),
        (start + timedelta(hours=40, minutes=3), lambda: sandbox.competitor_query(f.companies[1].cnpj.value, "nfe")),
    ]
    return sorted(timeline, key=lambda item: item[0])


def test_a_few_days_over_mutual_tls_lose_and_repeat_nothing(tmp_path: Path) -> None:
    with fleet(tmp_path, 4, in_process=False, seed=9) as f:
        assert f.sandbox.base_url is not None and f.sandbox.base_url.startswith("https://127.0.0.1:")
        f.settings(f.companies[0], auto_ciencia=True, ciencia_wait_minutes=5)
        start = f.clock.now()
        published: list[object] = []
        service = CaptureService(f.ctx, workers=1)
        stats = drive(
            service, f.fake_clock, start + timedelta(days=DAYS, hours=4), timeline=_timeline(f, start, published)
        )

        report = f.sandbox.referee.report()
        assert report["violations"] == [], report["violations"][:3]
        # Every 656 we received was provoked by the competing system (the referee counts it apart).
        received_656 = [r for r in f.sandbox.referee.requests if not r.competitor and r.cstat == 656]
        assert len(received_656) <= len(report["revealing_656"])
        assert {fault.kind for fault in f.sandbox.fired_faults} >= {"http_503", "timeout", "close", "corrupt_gzip"}
        assert stats.failures == 0
        total = 0
        for company in f.companies:
            data = report["companies"][company.cnpj.value]["nfe"]
            nsus = sorted(p["nsu"] for p in data["published"])
            total += len(nsus)
            assert data["undelivered"] == []
            state = f.ctx.cursors.get(company.id, Product.NFE)
            assert f.ctx.items.received(company.id, Product.NFE, 1, max([*nsus, state.ult_nsu, 1])) == nsus
        assert total > len(published) > 10  # the Ciência released full NF-e under new NSUs
        with sqlite3.connect(database_path(f.office.data_dir)) as db:
            twice = db.execute(
                "SELECT count(*) FROM (SELECT 1 FROM distribution_items "
                "GROUP BY company_id, product, nsu HAVING count(*) > 1)"
            ).fetchone()[0]
            keys_twice = db.execute(
                "SELECT count(*) FROM (SELECT 1 FROM documents WHERE access_key IS NOT NULL "
                "GROUP BY company_id, product, access_key HAVING count(*) > 1)"
            ).fetchone()[0]
        assert (twice, keys_twice) == (0, 0)
        # The automatic Ciência went out over TLS as well and was accepted.
        assert report["requests_by_service"].get("nfe_evento", 0) > 0
