"""A reform NF-e, CT-e and NFS-e captured from the sandbox over mutual TLS (issue 23's "done when"):
the detail, the window's block, ``documents list/show --json`` and the IBS/CBS report carry the
values a reader of the XML finds (read here with lxml, apart from the app's reader)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from lxml import etree
from openpyxl import load_workbook

from app.core.products import Product
from app.desk.desk import Desk
from app.desk.views import GridFilter
from app.export.reform_report import DOCUMENT_HEADERS
from app.store.records import DocumentKind
from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, product_harness

SENDER = "55666777000105"
NFE = {"n": "http://www.portalfiscal.inf.br/nfe"}
CTE = {"c": "http://www.portalfiscal.inf.br/cte"}
NFSE = {"s": "http://www.sped.fazenda.gov.br/nfse"}


@pytest.fixture(params=[Product.NFE, Product.CTE, Product.NFSE], ids=lambda p: p.value)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    with product_harness(tmp_path, request.param) as harness:
        yield harness


def _cents(root: etree._Element, path: str, ns: dict[str, str]) -> int | None:
    found = root.xpath(path + "/text()", namespaces=ns)
    return None if not found else int(Decimal(found[0]) * 100)


def _capture(h: Harness) -> tuple[str, bytes, tuple[int | None, int | None, int | None]]:
    """Publish one reform document of the harness's product and capture it in full; (key, the
    XML as published, (IBS, CBS, IS) in centavos as lxml reads them)."""
    if h.product is Product.NFE:
        nfe = h.sandbox.publish_nfe(SUPPLIER, RECIPIENT, items=30, reform=True)
        h.run_pending()
        h.capture.manifestation.request(h.company.id, nfe.key, "210210")  # Ciência releases the nfeProc
        h.capture.manifestation.dispatch()
        h.run_until(h.clock.now() + timedelta(hours=1, minutes=5))
        root = etree.fromstring(nfe.nfe_proc)
        total = "n:NFe/n:infNFe/n:total"
        values = (
            _cents(root, total + "/n:IBSCBSTot/n:gIBS/n:vIBS", NFE),
            _cents(root, total + "/n:IBSCBSTot/n:gCBS/n:vCBS", NFE),
            _cents(root, total + "/n:ISTot/n:vIS", NFE),
        )
        return nfe.key, nfe.nfe_proc, values
    if h.product is Product.CTE:
        h.sandbox.party(SENDER)
        cte = h.sandbox.publish_cte(SUPPLIER, SENDER, RECIPIENT, taker_role=3, reform=True)
        h.run_pending()
        return cte.key, cte.cte_proc, _group(cte.cte_proc, "c:CTe/c:infCte/c:imp/c:IBSCBS/c:gIBSCBS", "vIBS", CTE)
    nfse = h.sandbox.publish_nfse(SUPPLIER, RECIPIENT, with_ibscbs=True)
    h.run_pending()
    return nfse.key, nfse.nfse, _group(nfse.nfse, "s:infNFSe/s:IBSCBS/s:totCIBS", "gIBS/s:vIBSTot", NFSE)


def _group(xml: bytes, group: str, ibs: str, ns: dict[str, str]) -> tuple[int | None, int | None, None]:
    """(IBS, CBS, no IS) of a CT-e's or NFS-e's group: ``ibs`` is the IBS total's path in it."""
    root, prefix = etree.fromstring(xml), next(iter(ns))
    return _cents(root, f"{group}/{prefix}:{ibs}", ns), _cents(root, f"{group}/{prefix}:gCBS/{prefix}:vCBS", ns), None


def test_a_captured_reform_document_shows_its_values_everywhere(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    key, xml, (ibs, cbs, selective) = _capture(harness)
    assert ibs is not None and cbs is not None and cbs > 0
    assert (selective is not None) == (harness.product is Product.NFE)  # 30 items: the oil pays IS
    stored = harness.ctx.documents.find(harness.company.id, harness.product, key)
    assert stored is not None and stored.kind in (DocumentKind.NFE_PROC, DocumentKind.CTE_PROC, DocumentKind.NFSE)
    assert cli("documents", "xml", key, "-o", str(tmp_path / "doc.xml")) == 0
    assert (tmp_path / "doc.xml").read_bytes() == xml  # what was captured is what the values were read from

    desk = Desk(harness.office.data_dir, clock=harness.clock, capture=False)
    desk.open()
    try:
        [row] = desk.cursor(GridFilter(harness.product, search=key)).next_page(1)
        assert (row.ibs_cents, row.cbs_cents, row.is_cents) == (ibs, cbs, selective)  # the grid's columns
        detail = desk.detail(row)
        assert detail.reform is not None and not detail.reform.unreadable
        assert (detail.reform.ibs_cents, detail.reform.cbs_cents, detail.reform.is_cents) == (ibs, cbs, selective)
        from app.ui.detail import summary_html  # the window's "Reforma tributária" block

        html = summary_html(detail, harness.clock.now())
        assert (
            "Reforma tributária" in html and f"CBS: R$ {cbs // 100:,}".replace(",", ".") + f",{cbs % 100:02d}" in html
        )
    finally:
        desk.close()

    [listed] = cli.json("documents", "list", "--product", harness.product.value)  # type: ignore[misc]
    assert (listed["key"], listed["ibs_cents"], listed["cbs_cents"], listed["is_cents"]) == (key, ibs, cbs, selective)
    assert listed["cbs"] == f"{cbs // 100}.{cbs % 100:02d}" and listed["reform_unreadable"] is False
    shown = cli.json("documents", "show", key)
    assert isinstance(shown, dict)
    reform = shown["ibs_cbs"]
    assert (reform["ibs_cents"], reform["cbs_cents"], reform["is_cents"]) == (ibs, cbs, selective)

    target = tmp_path / "creditos.xlsx"
    assert cli("report", "ibs-cbs", "--xlsx", str(target), "--company", RECIPIENT) == 0, cli.err
    book = load_workbook(target)
    documents = list(book["Documentos"].iter_rows(min_row=2, values_only=True))
    [line] = [r for r in documents if r[DOCUMENT_HEADERS.index("Chave de acesso")] == key]
    column = {title: line[i] for i, title in enumerate(DOCUMENT_HEADERS)}
    read = [column[title] for title in ("IBS total (R$)", "CBS (R$)", "Imposto Seletivo (R$)")]
    assert [None if v is None else round(Decimal(str(v)) * 100) for v in read] == [ibs, cbs, selective]
    [total] = list(book["Créditos IBS e CBS"].iter_rows(min_row=2, values_only=True))
    assert total[4] == 1  # one document with the groups
