"""A month of the sandbox with reform documents (issue 23's "done when"): a company receives NF-e,
CT-e and NFS-e through November over mutual TLS, part with the IBS/CBS groups, some NF-e
cancelled, some adjusted by a nota de crédito or de débito; the report "Créditos de IBS e CBS"
written by ``report ibs-cbs`` and read back with openpyxl has totals equal to the sums over its
second sheet, and that sheet lists exactly the authorised, not cancelled documents whose XML
(read here with lxml) carries the groups."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from openpyxl import load_workbook

from app.capture.office import Office
from app.capture.service import CaptureService
from app.capture.simulation import drive
from app.cli.context import Runtime
from app.core.clock import FakeClock
from app.core.products import Environment, Product
from app.export.reform_report import DOCUMENT_HEADERS, MONEY, TOTAL_HEADERS
from app.launcher import main
from app.sandbox.pki import TestPki
from app.sandbox.sandbox import Sandbox
from app.sandbox.scenario import Scenario
from app.sandbox.serve import write_settings
from app.store.records import CaptureSettings, DocumentStatus

START = datetime(2026, 11, 1, 3, 0, tzinfo=UTC)  # 1 November, midnight in Brasília
LAST_ISSUE = datetime(2026, 11, 30, 22, 0, tzinfo=UTC)  # the last document of November (19:00 in Brasília)
CNPJ = "11222333000181"
GROUPS = (b"<IBSCBSTot>", b"<IBSCBS>")  # NF-e's total; CT-e's imp and NFS-e's infNFSe group


def _rows(sheet: Any) -> list[tuple[object, ...]]:
    return list(sheet.iter_rows(min_row=2, values_only=True))


def _money(value: object) -> Decimal:
    return Decimal(0) if value is None else Decimal(str(value)).quantize(Decimal("0.01"))


@pytest.mark.slow  # a month of hourly passes over TLS: about a minute
def test_a_month_of_reform_documents_totals_equal_the_documents_sheet(tmp_path: Path) -> None:
    clock = FakeClock(START)
    sandbox = Sandbox(clock, TestPki.create(now=START - timedelta(days=30)), seed=23)
    sandbox.start_https()
    office = None
    try:
        scenario = Scenario(
            companies=1, company_cnpjs=(CNPJ,), third_parties=3, seed=23, nfe_per_day=2, cte_per_day=0.5,
            nfse_per_day=0.5, cancel_ratio=0.1, reform_share=0.5, note_ratio=0.4,
        )  # fmt: skip
        run = scenario.attach(sandbox, START)
        data_dir = tmp_path / "dados"
        data_dir.mkdir()
        (tmp_path / "ca.pem").write_bytes(sandbox.ca_cert_pem)
        write_settings(sandbox, data_dir, tmp_path / "ca.pem")
        office = Office(data_dir, clock=clock)
        cert = run.certificates[CNPJ]
        products = (Product.NFE, Product.CTE, Product.NFSE)
        company = office.register_company(
            cert.pfx, cert.password, environment=Environment.HOMOLOGACAO, products=products
        )
        for product in products:
            office.companies.save_settings(
                CaptureSettings(company.id, product, environment=Environment.HOMOLOGACAO, c_uf_autor="35",
                                auto_ciencia=product is Product.NFE)  # the Ciência releases each nfeProc
            )  # fmt: skip
        ctx = office.capture_context(rng=random.Random(5))
        steps = int((LAST_ISSUE - START) / timedelta(hours=2))
        instants = [START + timedelta(hours=2 * i) for i in range(1, steps + 1)]
        timeline = [(at, lambda at=at: run.run_until(at)) for at in instants]  # the scenario publishes as time goes
        drive(CaptureService(ctx, workers=1), clock, LAST_ISSUE + timedelta(hours=3), timeline=timeline)

        # What a reader of the published XML expects: every document the company holds in full,
        # authorised and not cancelled, with the groups in its XML.
        expected: set[str] = set()
        plain = 0
        for _at, product_name, key in run.published:
            product = Product(product_name)
            stored = ctx.documents.find(company.id, product, key)
            assert stored is not None, (product, key)
            if stored.status is not DocumentStatus.AUTHORISED:
                assert stored.status is DocumentStatus.CANCELLED
                continue
            state = {"nfe": sandbox.ctx.state.nfe, "cte": sandbox.ctx.state.cte, "nfse": sandbox.ctx.state.nfse}
            generated = state[product_name][key].generated
            xml = {"nfe": "nfe_proc", "cte": "cte_proc", "nfse": "nfse"}[product_name]
            root = etree.fromstring(getattr(generated, xml))
            names = {etree.QName(e).localname for e in root.iter() if isinstance(e.tag, str)}
            if "IBSCBSTot" in names or "IBSCBS" in names:
                expected.add(key)
            else:
                plain += 1
        assert len(expected) >= 10 and plain >= 10, (len(expected), plain)

        target = tmp_path / "creditos.xlsx"
        argv = ["--data-dir", str(data_dir), "report", "ibs-cbs", "--xlsx", str(target), "--company", CNPJ]
        assert main(argv, runtime=Runtime(clock=clock)) == 0
    finally:
        if office is not None:
            office.close()
        sandbox.stop()

    book = load_workbook(target)
    totals = [dict(zip(TOTAL_HEADERS, r, strict=True)) for r in _rows(book["Créditos IBS e CBS"])]
    documents = [dict(zip(DOCUMENT_HEADERS, r, strict=True)) for r in _rows(book["Documentos"])]
    assert {d["Chave de acesso"] for d in documents} == expected
    assert {t["Produto"] for t in totals} == {"NF-e", "CT-e", "NFS-e"}
    assert {t["Mês"].date() for t in totals} == {START.date()}  # all of November (Brasília)
    sums: dict[tuple[object, ...], dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    counted: dict[tuple[object, ...], int] = defaultdict(int)
    for d in documents:
        group = (d["CNPJ da empresa"], d["Mês"], d["Produto"])
        counted[group] += 1
        for _, title in MONEY:
            sums[group][title] += _money(d[title])
    assert sum(t["Documentos com IBS/CBS"] for t in totals) == len(documents)
    assert sum(t["Sem grupos da reforma"] for t in totals) == plain
    for t in totals:
        group = (t["CNPJ da empresa"], t["Mês"], t["Produto"])
        assert t["Documentos com IBS/CBS"] == counted[group]
        for _, title in MONEY:
            assert _money(t[title]) == sums[group][title], (group, title)
    assert sum(_money(t["CBS (R$)"]) for t in totals) > 0
    # Notes: a credit subtracts (its row is negative), a debit adds; both also shown apart.
    for kind, count, ibs, cbs in (
        ("nota de crédito", "Notas de crédito", "IBS em notas de crédito (R$)", "CBS em notas de crédito (R$)"),
        ("nota de débito", "Notas de débito", "IBS em notas de débito (R$)", "CBS em notas de débito (R$)"),
    ):
        notes = [d for d in documents if d["Finalidade"] == kind]
        assert notes and sum(t[count] for t in totals) == len(notes)
        assert sum(_money(t[ibs]) for t in totals) == sum(abs(_money(d["IBS total (R$)"])) for d in notes)
        assert sum(_money(t[cbs]) for t in totals) == sum(abs(_money(d["CBS (R$)"])) for d in notes) > 0
    assert all(_money(d["CBS (R$)"]) < 0 for d in documents if d["Finalidade"] == "nota de crédito")
