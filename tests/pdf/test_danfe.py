"""The DANFE read back: every NF-e fixture and the sandbox's, checked from the PDF's own text."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from pypdf import PdfReader

from app.pdf import PdfError, render_pdf
from app.pdf import formats as fmt
from app.pdf.danfe_data import parse_nfe
from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki
from tests.pdf.pdftools import RENDERS, barcodes, flat, page_images, page_texts, write_pngs

FIXTURES = Path(__file__).parents[1] / "fixtures"
NFE_FILES = [
    FIXTURES / "nfe" / "41170706117473000150550010000463202612756525-procNFe.xml",
    FIXTURES / "nfe" / "42210775277525000178550030000266631762885493-procNFe.xml",
    FIXTURES / "nfe" / "42211275277525000178550030000276771368212013-procNFe.xml",
    FIXTURES / "nfe" / "bfr-danfe_cnpj_alfanumerico.xml",
    FIXTURES / "nfe" / "nfe_reforma_tributaria.xml",
    FIXTURES / "pdf" / "bfr-nfe_multi_page_products.xml",
    FIXTURES / "pdf" / "bfr-nfe_overload.xml",
    FIXTURES / "pdf" / "bfr-nfe_reforma_tributaria.xml",
]
ISSUED = datetime(2026, 11, 10, 13, 30, tzinfo=UTC)


def _pages(pdf: bytes) -> list[str]:
    return [flat(text) for text in page_texts(pdf)]


def _check_danfe(xml: bytes, pdf: bytes) -> list[str]:
    """What every DANFE must show, read back from the PDF: the key, parties, totals, FOLHA X/Y."""
    nfe = parse_nfe(xml)
    pages = _pages(pdf)
    assert len(PdfReader(io.BytesIO(pdf)).pages) == len(pages)
    for number, text in enumerate(pages, start=1):
        assert f"FOLHA {number}/{len(pages)}" in text
        assert fmt.key_groups(nfe.key) in text
    first = pages[0]
    assert flat(nfe.emitter.name) in first
    assert flat(nfe.recipient.name)[:40] in first
    assert fmt.money(nfe.totals["vNF"]) in first
    assert fmt.money(nfe.totals["vProd"]) in first
    if nfe.protocol:
        assert nfe.protocol in first
    everything = " ".join(pages)
    for item in nfe.items:
        assert flat(item.code) in everything.replace(" ", "") or flat(item.code) in everything
    return pages


@pytest.mark.parametrize("path", NFE_FILES, ids=[p.name[:24] for p in NFE_FILES])
def test_every_nfe_fixture_renders_with_its_facts(path: Path) -> None:
    xml = path.read_bytes()
    pdf = render_pdf(xml)
    pages = _check_danfe(xml, pdf)
    nfe = parse_nfe(xml)
    assert ("SEM VALOR FISCAL" in pages[0]) == nfe.homologation


def test_many_items_span_pages_with_the_header_repeated() -> None:
    xml = (FIXTURES / "pdf" / "bfr-nfe_multi_page_products.xml").read_bytes()
    pages = _check_danfe(xml, render_pdf(xml))
    assert len(pages) >= 2
    assert all("DADOS DO PRODUTO / SERVIÇO" in text for text in pages)


def test_barcode_of_a_fixture_decodes_to_its_key() -> None:
    xml = NFE_FILES[1].read_bytes()
    image = page_images(render_pdf(xml), dpi=300, last=1)[0]
    assert ("Code128", parse_nfe(xml).key) in barcodes(image)


@pytest.fixture(scope="module")
def factory() -> DocumentFactory:
    return DocumentFactory(TestPki.create(now=datetime(2026, 10, 1, tzinfo=UTC)), seed=13)


SUPPLIER = Party("11222333000181", "FORNECEDORA DE TESTE LTDA", "SP", "3550308", ie="110042490114")
ALNUM_SUPPLIER = Party("12ABC34501DE35", "DISTRIBUIDORA ALFA ÇÃO LTDA", "SC", "4205407", ie="254123456")
CLIENT = Party("11444777000161", "CLIENTE & FILHOS LTDA", "PR", "4106902", ie="9032000301")


@pytest.mark.parametrize("emitter", [SUPPLIER, ALNUM_SUPPLIER], ids=["cnpj-numerico", "cnpj-alfanumerico"])
def test_sandbox_nfe_renders_and_its_barcode_decodes(factory: DocumentFactory, emitter: Party) -> None:
    generated = factory.nfe(emitter=emitter, recipient=CLIENT, issued_at=ISSUED, items=4)
    xml = generated.nfe_proc
    pdf = render_pdf(xml)
    pages = _check_danfe(xml, pdf)
    assert fmt.cnpj(emitter.doc) in pages[0]
    found = barcodes(page_images(pdf, dpi=300, last=1)[0])
    assert ("Code128", generated.key) in found


def _with_info(xml: bytes, info: str) -> bytes:
    """The NF-e with its infCpl replaced by ``info`` (the text is data here, the signature is not checked)."""
    root = etree.fromstring(xml)
    ns = {"n": "http://www.portalfiscal.inf.br/nfe"}
    (cpl,) = root.xpath("//n:infAdic/n:infCpl", namespaces=ns)
    cpl.text = info
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def test_200_items_span_pages_and_the_additional_information_is_intact(factory: DocumentFactory) -> None:
    generated = factory.nfe(emitter=SUPPLIER, recipient=CLIENT, issued_at=ISSUED, items=200)
    sentences = [f"Observacao numero {n:03d} do pedido de compra." for n in range(1, 161)]
    xml = _with_info(generated.nfe_proc, " ".join(sentences))
    pdf = render_pdf(xml)
    pages = _check_danfe(xml, pdf)
    assert len(pages) >= 3
    nfe = parse_nfe(xml)
    assert len(nfe.items) == 200
    words = iter(" ".join(pages).split())
    missing = [word for word in " ".join(sentences).split() if word not in words]
    assert not missing, missing[:5]  # every word, in reading order, across the pages
    whole = sum(sentence in " ".join(pages) for sentence in sentences)
    assert whole >= len(sentences) - (len(pages) - 1)  # only a page break splits a sentence
    assert "DADOS ADICIONAIS (CONTINUAÇÃO)" in pages[-1]


HOSTILE = "Ação ç ã º ª € nº 1ª \x85\x9b &#x1F600; &#x1F468;&#x200D;&#x1F469; &#x1FAE0; &#xFEFF; a&#x301; fim"


def test_hostile_characters_never_raise() -> None:
    xml = NFE_FILES[2].read_bytes().decode()
    xml = re.sub(r"<xNome>MARIA DE PEREIRA SILVA</xNome>", f"<xNome>{HOSTILE}</xNome>", xml)
    xml = re.sub(r"<xProd>([^<]*)</xProd>", f"<xProd>{HOSTILE}</xProd>", xml, count=1)
    pdf = render_pdf(xml.encode())
    text = _pages(pdf)[0]
    assert "Ação ç ã º ª € nº 1ª" in text
    assert "á fim" in text  # the combining accent merged (NFC)


def test_homologation_is_marked_and_production_is_not() -> None:
    homolog = _pages(render_pdf(NFE_FILES[0].read_bytes()))
    production = _pages(render_pdf(NFE_FILES[4].read_bytes()))
    assert all("SEM VALOR FISCAL" in p for p in homolog)
    assert not any("SEM VALOR FISCAL" in p for p in production)


def _cancellation(key: str, c_stat: str = "135") -> bytes:
    return (
        '<procEventoNFe xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.00"><evento versao="1.00">'
        f"<infEvento><chNFe>{key}</chNFe><tpEvento>110111</tpEvento><nSeqEvento>1</nSeqEvento></infEvento>"
        f"</evento><retEvento versao="
        f'"1.00"><infEvento><cStat>{c_stat}</cStat><chNFe>{key}</chNFe><tpEvento>110111</tpEvento></infEvento>'
        "</retEvento></procEventoNFe>"
    ).encode()


def test_cancellation_event_marks_every_page() -> None:
    xml = (FIXTURES / "pdf" / "bfr-nfe_multi_page_products.xml").read_bytes()
    key = parse_nfe(xml).key
    assert not any("CANCELADA" in p for p in _pages(render_pdf(xml)))
    marked = _pages(render_pdf(xml, events=[_cancellation(key)]))
    assert all("CANCELADA" in p for p in marked)
    refused = _pages(render_pdf(xml, events=[_cancellation(key, "573"), b"<not-xml"]))
    assert not any("CANCELADA" in p for p in refused)
    other = _pages(render_pdf(xml, events=[_cancellation("4" * 44)]))
    assert not any("CANCELADA" in p for p in other)


def _set(xml: bytes, tag: str, value: str) -> bytes:
    return re.sub(rf"<{tag}>[^<]*</{tag}>".encode(), f"<{tag}>{value}</{tag}>".encode(), xml, count=1)


def test_landscape_when_tp_imp_is_2() -> None:
    xml = _set((FIXTURES / "pdf" / "bfr-nfe_multi_page_products.xml").read_bytes(), "tpImp", "2")
    pdf = render_pdf(xml)
    box = PdfReader(io.BytesIO(pdf)).pages[0].mediabox
    assert float(box.width) > float(box.height)
    _check_danfe(xml, pdf)
    assert "RECEBEMOS DE" in _pages(pdf)[0]


def test_nt_2026_010_from_december_2026() -> None:
    before = (FIXTURES / "nfe" / "nfe_reforma_tributaria.xml").read_bytes()
    after = _set(before, "dhEmi", "2026-12-02T09:00:00-03:00")
    old, new = _pages(render_pdf(before))[0], _pages(render_pdf(after))[0]
    assert "TOTAL DO IBS / CBS / IS" not in old and "cClassTrib" not in old and "CÁLCULO DO IMPOSTO" in old
    assert "TOTAL DO IBS / CBS / IS" in new and "CÁLCULO DO IMPOSTO" not in new
    assert "TOTAL DOS PRODUTOS E TOTAL DA NOTA" in new and "TOTAL DO ICMS / IPI" in new
    assert "BASES DE CÁLCULO" in new and "ALÍQUOTAS" in new and "VALOR DOS TRIBUTOS" in new
    assert "[NCM 08119000]" in new and "IBS MUN" in new
    assert "CÓDIGO DO REGIME TRIBUTÁRIO" in new and "3 - Regime Normal" in new
    assert "TIPO DE REGIME DE APURAÇÃO DO IBS E DA CBS" in new
    nfe = parse_nfe(after)
    assert nfe.items[0].class_trib and nfe.items[0].class_trib in new
    assert fmt.money(nfe.ibscbs["vCBS"]) in new and fmt.money(nfe.ibscbs["vIS"]) in new


def test_res_nfe_gets_a_summary_never_a_fake_danfe(factory: DocumentFactory) -> None:
    generated = factory.nfe(emitter=SUPPLIER, recipient=CLIENT, issued_at=ISSUED)
    pdf = render_pdf(generated.res_nfe)
    pages = _pages(pdf)
    assert len(pages) == 1
    text = pages[0]
    assert "XML COMPLETO AINDA NÃO DISPONÍVEL" in text and "não é um DANFE" in text
    assert "Ciência da Operação" in text and "manifestação" in text
    assert fmt.key_groups(generated.key) in text and SUPPLIER.name in text
    assert "FOLHA" not in text
    assert not barcodes(page_images(pdf, dpi=150)[0])  # no barcode: nothing to pass for a DANFE


def test_nfe_without_inf_nfe_is_refused_in_portuguese() -> None:
    with pytest.raises(PdfError, match="infNFe"):
        render_pdf(b'<nfeProc xmlns="http://www.portalfiscal.inf.br/nfe"><NFe/></nfeProc>')


def test_png_renders_for_a_person_to_look_at(capsys: pytest.CaptureFixture[str]) -> None:
    portrait = render_pdf(NFE_FILES[2].read_bytes())
    wide = render_pdf(_set((FIXTURES / "pdf" / "bfr-nfe_multi_page_products.xml").read_bytes(), "tpImp", "2"))
    reform = _set((FIXTURES / "nfe" / "nfe_reforma_tributaria.xml").read_bytes(), "dhEmi", "2026-12-02T09:00:00-03:00")
    written = write_pngs(portrait, "danfe-retrato") + write_pngs(wide, "danfe-paisagem")
    written += write_pngs(render_pdf(reform), "danfe-nt-2026-010")
    assert all(p.stat().st_size > 10_000 for p in written)
    with capsys.disabled():
        print(f"\nDANFE PNGs em {RENDERS}")


def _xml_legal(ch: str) -> bool:
    code = ord(ch)
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000


@settings(max_examples=20)
@given(st.text(st.characters(exclude_categories=("Cs",)).filter(_xml_legal), min_size=1, max_size=400))
def test_any_text_in_any_field_never_raises(hostile: str) -> None:
    root = etree.fromstring(NFE_FILES[2].read_bytes())
    ns = "{http://www.portalfiscal.inf.br/nfe}"
    for tag in ("xNome", "xProd", "infCpl", "xLgr", "natOp", "cProd", "xMun", "esp"):
        for element in root.iter(ns + tag):
            element.text = hostile
    pdf = render_pdf(etree.tostring(root))
    assert "FOLHA 1/" in flat(page_texts(pdf)[0])


def test_an_item_longer_than_a_page_is_cut_visibly_and_stays_on_its_page() -> None:
    xml = re.sub(
        rb"<xProd>[^<]*</xProd>",
        b"<xProd>" + b"descricao muito longa " * 800 + b"</xProd>",
        NFE_FILES[1].read_bytes(),
        count=1,
    )
    pages = _pages(render_pdf(xml))
    assert re.search(r"muito l?o?n?g?a?\.\.\.", pages[0])  # cut, with the dots
    assert all(f"FOLHA {n}/{len(pages)}" in text for n, text in enumerate(pages, start=1))


def test_pickup_and_delivery_places_and_contingency_are_printed() -> None:
    ns = "http://www.portalfiscal.inf.br/nfe"
    root = etree.fromstring(NFE_FILES[2].read_bytes())
    (dest,) = root.iter(f"{{{ns}}}dest")
    for tag, name in (("entrega", "DEPOSITO CENTRAL DO CLIENTE"), ("retirada", "ARMAZEM GERAL DO FORNECEDOR")):
        place = etree.fromstring(
            f'<{tag} xmlns="{ns}"><CNPJ>11444777000161</CNPJ><xNome>{name}</xNome><xLgr>Rua das Docas</xLgr>'
            f"<nro>12</nro><xBairro>Porto</xBairro><cMun>4106902</cMun><xMun>Curitiba</xMun><UF>PR</UF></{tag}>"
        )
        dest.addnext(place)
    (ide,) = root.iter(f"{{{ns}}}ide")
    ide.find(f"{{{ns}}}tpEmis").text = "9"  # type: ignore[union-attr]
    for tag, value in (("dhCont", "2021-12-15T10:00:00-03:00"), ("xJust", "SEFAZ fora do ar desde as 9 horas")):
        element = etree.SubElement(ide, f"{{{ns}}}{tag}")
        element.text = value
    text = _pages(render_pdf(etree.tostring(root)))[0]
    assert "INFORMAÇÕES DO LOCAL DE RETIRADA" in text and "ARMAZEM GERAL DO FORNECEDOR" in text
    assert "INFORMAÇÕES DO LOCAL DE ENTREGA" in text and "DEPOSITO CENTRAL DO CLIENTE" in text
    assert text.index("LOCAL DE RETIRADA") < text.index("LOCAL DE ENTREGA") < text.index("CÁLCULO DO IMPOSTO")
    assert "EMITIDA EM CONTINGÊNCIA (tpEmis 9) em 15/12/2021 10:00:00: SEFAZ fora do ar desde as 9 horas" in text


def test_absurd_numbers_print_as_written() -> None:
    xml = _set(_set(NFE_FILES[1].read_bytes(), "vNF", "9" * 60), "qCom", "1e999999999")
    text = _pages(render_pdf(xml))[0]
    assert "999.999.999" in text and "1e999999999" in text


def test_sandbox_nfe_of_december_2026_uses_the_nt_2026_010_layout(factory: DocumentFactory) -> None:
    issued = datetime(2026, 12, 5, 13, 30, tzinfo=UTC)
    generated = factory.nfe(emitter=ALNUM_SUPPLIER, recipient=CLIENT, issued_at=issued, items=90)
    xml = generated.nfe_proc
    pages = _check_danfe(xml, render_pdf(xml))
    assert len(pages) >= 2 and all("VALOR DOS TRIBUTOS" in text for text in pages)
