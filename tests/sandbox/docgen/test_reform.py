"""The tax reform's IBS/CBS groups in generated NF-e and CT-e: valid, summed to the centavo, drawn by seed."""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal

from lxml import etree

from app.documents.nfse import read_nfse
from app.documents.nfse_model import NfseMeta
from app.documents.reform import read_cte_reform, read_nfe_reform
from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki

from .conftest import ISSUED_AT

NFE = "http://www.portalfiscal.inf.br/nfe"
CTE = "http://www.portalfiscal.inf.br/cte"
NS = {"n": NFE, "c": CTE}


def _sum(root: etree._Element, path: str) -> Decimal:
    return sum((Decimal(t) for t in root.xpath(path + "/text()", namespaces=NS)), Decimal(0))


def _one(root: etree._Element, path: str) -> Decimal:
    [value] = root.xpath(path + "/text()", namespaces=NS)
    return Decimal(value)


def test_reform_nfe_is_valid_and_its_totals_are_the_items_sums(
    factory: DocumentFactory, supplier: Party, client: Party, xsd: Callable[[bytes, str], None]
) -> None:
    nfe = factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT, items=30, reform=True)
    xsd(nfe.nfe_proc, "nfe/schemas/v4_0/procNFe_v4.00.xsd")
    root = etree.fromstring(nfe.nfe_proc)
    inf = root.find("n:NFe/n:infNFe", NS)
    item = "n:NFe/n:infNFe/n:det/n:imposto/n:IBSCBS/n:gIBSCBS"
    total = "n:NFe/n:infNFe/n:total/n:IBSCBSTot"
    assert len(root.xpath(item, namespaces=NS)) == 30
    assert _one(root, total + "/n:vBCIBSCBS") == _sum(root, item + "/n:vBC") == Decimal(nfe.total_cents) / 100
    assert _one(root, total + "/n:gIBS/n:gIBSUF/n:vIBSUF") == _sum(root, item + "/n:gIBSUF/n:vIBSUF")
    assert _one(root, total + "/n:gIBS/n:gIBSMun/n:vIBSMun") == _sum(root, item + "/n:gIBSMun/n:vIBSMun")
    assert _one(root, total + "/n:gIBS/n:vIBS") == _sum(root, item + "/n:vIBS")
    assert _one(root, total + "/n:gCBS/n:vCBS") == _sum(root, item + "/n:gCBS/n:vCBS") > 0
    # 30 items of 10 products: the oil pays IS, the coffee a presumed credit.
    assert _one(root, "n:NFe/n:infNFe/n:total/n:ISTot/n:vIS") == _sum(root, "n:NFe/n:infNFe/n:det/n:imposto/n:IS/n:vIS")
    presumed = "n:NFe/n:infNFe/n:det/n:imposto/n:IBSCBS/n:gCredPresOper"
    assert _one(root, total + "/n:gIBS/n:vCredPres") == _sum(root, presumed + "/n:gIBSCredPres/n:vCredPres") > 0
    expected_total = (
        _one(root, "n:NFe/n:infNFe/n:total/n:ICMSTot/n:vNF")
        + _one(root, total + "/n:gIBS/n:vIBS")
        + _one(root, total + "/n:gCBS/n:vCBS")
        + _one(root, "n:NFe/n:infNFe/n:total/n:ISTot/n:vIS")
    )
    assert _one(root, "n:NFe/n:infNFe/n:total/n:vNFTot") == expected_total
    warnings: list[str] = []
    values = read_nfe_reform(inf, inf.find("n:total", NS), NFE, warnings)
    assert values is not None and not values.unreadable and not warnings
    assert len(values.items) == 30 and values.cbs_cents == int(_one(root, total + "/n:gCBS/n:vCBS") * 100)


def test_reform_cte_is_valid_with_its_group(
    factory: DocumentFactory, carrier: Party, supplier: Party, client: Party, xsd: Callable[[bytes, str], None]
) -> None:
    cte = factory.cte(
        emitter=carrier, sender=supplier, recipient=client, taker_role=3, issued_at=ISSUED_AT, total_cents=98_765,
        reform=True,
    )  # fmt: skip
    xsd(cte.cte_proc, "cte/schemas/v4_0/procCTe_v4.00.xsd")
    root = etree.fromstring(cte.cte_proc)
    imp = "c:CTe/c:infCte/c:imp"
    group = imp + "/c:IBSCBS/c:gIBSCBS"
    assert _one(root, group + "/c:vBC") == Decimal("987.65")
    ibs, cbs = _one(root, group + "/c:vIBS"), _one(root, group + "/c:gCBS/c:vCBS")
    assert ibs == _one(root, group + "/c:gIBSUF/c:vIBSUF") + _one(root, group + "/c:gIBSMun/c:vIBSMun")
    assert _one(root, imp + "/c:vTotDFe") == Decimal("987.65") + ibs + cbs
    inf = root.find("c:CTe/c:infCte", NS)
    values = read_cte_reform(inf, CTE, [])
    assert values is not None and values.cbs_cents == int(cbs * 100)


def test_plain_documents_have_no_groups(factory: DocumentFactory, supplier: Party, client: Party) -> None:
    nfe = factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT, reform=False)
    assert b"IBSCBS" not in nfe.nfe_proc and b"vNFTot" not in nfe.nfe_proc


def test_share_is_drawn_per_document_and_repeats_with_the_seed(pki: TestPki, supplier: Party, client: Party) -> None:
    def drawn(seed: int) -> list[bool]:
        factory = DocumentFactory(pki, seed=seed, reform_share=0.5)
        return [
            b"IBSCBSTot" in factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT).nfe_proc
            for _ in range(12)
        ] + [factory.nfse(provider=supplier, taker=client, issued_at=ISSUED_AT).with_ibscbs for _ in range(8)]

    first = drawn(3)
    assert first == drawn(3)
    assert any(first[:12]) and not all(first[:12]) and any(first[12:]) and not all(first[12:])
    assert drawn(4) != first


def test_notes_of_credit_and_debit_name_the_nfe_they_adjust(
    factory: DocumentFactory, supplier: Party, client: Party, xsd: Callable[[bytes, str], None]
) -> None:
    adjusted = factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT, reform=True)
    for purpose, kind in (("5", "tpNFCredito"), ("6", "tpNFDebito")):
        note = factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT, note=(purpose, adjusted.key))
        xsd(note.nfe_proc, "nfe/schemas/v4_0/procNFe_v4.00.xsd")
        root = etree.fromstring(note.nfe_proc)
        ide = "n:NFe/n:infNFe/n:ide"
        assert root.xpath(f"string({ide}/n:finNFe)", namespaces=NS) == purpose
        assert root.xpath(f"string({ide}/n:{kind})", namespaces=NS) == "04"
        assert root.xpath(f"{ide}/n:NFref/n:refNFe/text()", namespaces=NS) == [adjusted.key]
        assert note.reform and root.find("n:NFe/n:infNFe/n:total/n:IBSCBSTot", NS) is not None


def test_nfse_ibs_is_drawn_with_the_rates_and_the_municipality_gets_its_part(
    factory: DocumentFactory, supplier: Party, client: Party, xsd: Callable[[bytes, str], None]
) -> None:
    """The NFS-e's IBS/CBS at the document's drawn rates (2026's: all the IBS the state's; 2027-2028's:
    half of it the municipality's), each value the service × its rate, the IBS total their sum, as
    the reader finds them."""
    ns = {"s": "http://www.sped.fazenda.gov.br/nfse"}
    municipal = 0
    for _ in range(16):
        nfse = factory.nfse(provider=supplier, taker=client, issued_at=ISSUED_AT, with_ibscbs=True)
        xsd(nfse.nfse, "nfse/schemas/v1_0/NFSe_v1.01.xsd")
        root = etree.fromstring(nfse.nfse)
        group = "s:infNFSe/s:IBSCBS"
        service = _one_ns(root, f"{group}/s:valores/s:vBC", ns)
        rates = {
            k: _one_ns(root, f"{group}/s:valores/s:{p}", ns)
            for k, p in (("uf", "uf/s:pIBSUF"), ("mun", "mun/s:pIBSMun"), ("cbs", "fed/s:pCBS"))
        }
        assert rates in (
            {"uf": Decimal("0.10"), "mun": 0, "cbs": Decimal("0.90")},
            {"uf": Decimal("0.05"), "mun": Decimal("0.05"), "cbs": Decimal("8.80")},
        )
        ibs_uf = _one_ns(root, f"{group}/s:totCIBS/s:gIBS/s:gIBSUFTot/s:vIBSUF", ns)
        ibs_mun = _one_ns(root, f"{group}/s:totCIBS/s:gIBS/s:gIBSMunTot/s:vIBSMun", ns)
        assert ibs_uf == (service * rates["uf"] / 100).quantize(Decimal("0.01"), ROUND_HALF_UP)
        assert ibs_mun == (service * rates["mun"] / 100).quantize(Decimal("0.01"), ROUND_HALF_UP)
        assert _one_ns(root, f"{group}/s:totCIBS/s:gIBS/s:vIBSTot", ns) == ibs_uf + ibs_mun
        read = read_nfse(nfse.nfse)
        assert (
            isinstance(read, NfseMeta) and read.ibscbs is not None and read.ibscbs.ibs_mun_cents == int(ibs_mun * 100)
        )
        municipal += ibs_mun > 0
    assert municipal > 0  # the 2027-2028 rates were drawn for some: the municipality's IBS is not always zero


def _one_ns(root: etree._Element, path: str, ns: dict[str, str]) -> Decimal:
    [value] = root.xpath(path + "/text()", namespaces=ns)
    return Decimal(value)
