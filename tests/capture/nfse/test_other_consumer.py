"""NFS-e: another system with the same certificate hides nothing (issue 22), over mutual TLS.

Unlike the AN's one NSU sequence per CNPJ, the ADN serves any NSU to whoever asks: another
system reading the company's NFS-e takes nothing from our capture, which gets every note by its
routine distribution, meets no rejection and has nothing to recover or to tell the clerk.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import httpx

from app.capture.service import CaptureService
from app.capture.simulation import drive
from app.core.products import Environment, Product
from app.store.records import CaptureSettings
from tests.support.fleet import SUPPLIER, fleet


def test_another_system_reading_the_adn_takes_nothing_from_us(tmp_path: Path) -> None:
    with fleet(tmp_path, 1, in_process=False, seed=17) as f:
        company = f.companies[0]
        cnpj = company.cnpj.value
        f.settings(company, enabled=False)
        f.office.companies.save_settings(CaptureSettings(company.id, Product.NFSE, environment=Environment.HOMOLOGACAO))
        service = CaptureService(f.ctx, workers=1)
        start = f.clock.now()
        notes = [f.sandbox.publish_nfse(provider=SUPPLIER, taker=cnpj) for _ in range(7)]

        # Another system, same certificate, reads the whole queue first (what the AN would
        # never hand out again by distNSU).
        other = httpx.Client(transport=f.sandbox.transport(f.certs[cnpj], competitor=True), base_url="https://adn")
        with other:
            taken = other.get("/contribuintes/DFe/0", params={"cnpjConsulta": cnpj, "lote": "true"})
        assert [item["NSU"] for item in taken.json()["LoteDFe"]] == list(range(1, len(notes) + 1))

        drive(service, f.fake_clock, start + timedelta(hours=3))
        report = f.sandbox.referee.report()
        assert report["violations"] == [] and report["revealing_656"] == []
        data = report["companies"][cnpj]["nfse"]
        assert data["undelivered"] == []
        assert {via for d in data["delivered"].values() for via in d["via"]} == {"adn_dfe"}
        stored = f.ctx.items.received(company.id, Product.NFSE, 1, len(notes))
        assert stored == list(range(1, len(notes) + 1))
        assert f.ctx.recoveries.pending(company.id, Product.NFSE) == []
        (status,) = service.status(company_id=company.id, product=Product.NFSE)
        assert status.other_consumer is None and status.to_json()["other_consumer"] is None
        assert "Outro sistema" not in status.reason
