"""DANFSe v2.0 rendered from real and generated NFS-e, read back: text (pypdf), one page, QR (zxing)."""

from __future__ import annotations

import io
import re
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from lxml import etree
from pypdf import PdfReader

from app.pdf import PdfError, render_pdf
from app.pdf.danfse import render_danfse
from app.pdf.qr import nfse_consultation_url
from tests.pdf.pdftools import RENDERS, barcodes, flat, page_images, page_texts, write_pngs
from tests.pdf.sandbox_docs import CARRIER, CLIENT, FIXTURES, ISSUED_AT, SUPPLIER, factory
from tests.pdf.strategies import xml_text

NS = "http://www.sped.fazenda.gov.br/nfse"
NFSE_FIXTURES = [
    FIXTURES / "nfse" / "nfse-homolog-2025.xml",
    FIXTURES / "nfse" / "nfse-prestador-pessoa-fisica.xml",
    FIXTURES / "pdf" / "bfr-real_nfse.xml",
    FIXTURES / "pdf" / "bfr-nfse_cancelada_242.xml",
    FIXTURES / "pdf" / "bfr-6187ae43-fd6b-4819-8e9e-9a0911eceec3.xml",
]
CANCELLED = FIXTURES / "pdf" / "bfr-nfse_cancelada_242.xml"
CANCEL_EVENT = FIXTURES / "pdf" / "bfr-5e6ca60e-7148-4d44-8bd8-d3aff2a6c16f_cancel.xml"
MALFORMED = FIXTURES / "nfse" / "malformed-nfse-unescaped-ampersand.xml"


def _text(pdf: bytes) -> str:
    return flat(" ".join(page_texts(pdf)))


def _money(text: str) -> str:
    whole, _, cents = f"{float(text):.2f}".partition(".")
    return f"R$ {int(whole):,}".replace(",", ".") + f",{cents}"


def _get(root: etree._Element, path: str) -> str:
    found = root.find(path, {"n": NS})
    return "" if found is None or found.text is None else found.text.strip()


@pytest.mark.parametrize("path", NFSE_FIXTURES, ids=lambda p: p.name)
def test_every_fixture_prints_one_page_with_key_parties_and_totals(path: Path) -> None:
    xml = path.read_bytes()
    root = etree.fromstring(xml)
    inf = root.find("n:infNFSe", {"n": NS})
    assert inf is not None
    key = str(inf.get("Id", ""))[3:]
    pages = page_texts(render_danfse(xml))
    assert len(pages) == 1
    text = flat(pages[0])
    assert key in text
    assert _get(root, "n:infNFSe/n:emit/n:xNome") in text
    taker = _get(root, "n:infNFSe/n:DPS/n:infDPS/n:toma/n:xNome")
    assert taker and taker[:40] in text
    assert _money(_get(root, "n:infNFSe/n:valores/n:vLiq")) in text  # Valor Líquido da NFS-e
    assert _money(_get(root, ".//n:vServPrest/n:vServ")) in text
    assert "DANFSe v2.0" in text and "Documento Auxiliar da NFS-e" in text
    assert " - " in text or " -" in text  # absent fields print "-"


def test_the_qr_code_decodes_to_the_national_consultation_url() -> None:
    xml = (FIXTURES / "pdf" / "bfr-real_nfse.xml").read_bytes()
    found = barcodes(page_images(render_danfse(xml), dpi=200)[0])
    key = "31062002211111111000111000000000023426054805029948"
    assert found == [("QRCode", f"https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave={key}")]


def test_a_generated_nfse_with_ibs_cbs_and_an_alphanumeric_provider() -> None:
    provider = CARRIER  # alphanumeric CNPJ: the key carries letters, never stripped
    nfse = factory().nfse(
        provider=provider, taker=CLIENT, issued_at=ISSUED_AT, service_cents=1_234_567, with_ibscbs=True
    )
    assert re.search("[A-Z]", nfse.key)
    pdf = render_pdf(nfse.nfse)  # through the dispatcher, as the app calls it
    text = _text(pdf)
    # the sandbox draws the document's rates (2026's or 2027-2028's): the values its XML carries
    totals = etree.fromstring(nfse.nfse).find(".//n:infNFSe/n:IBSCBS", {"n": NS})
    assert totals is not None
    cbs, ibs, p_cbs = (
        totals.findtext(f".//n:{tag}", namespaces={"n": NS}) or "" for tag in ("vCBS", "vIBSTot", "pCBS")
    )
    for value in (
        nfse.key,
        provider.name,
        CLIENT.name,
        "R$ 12.345,67",
        "TRIBUTAÇÃO IBS / CBS",
        "000 / 000001",
        "R$ " + f"{Decimal(cbs):,.2f}".replace(",", "_").replace(".", ",").replace("_", "."),
        "R$ " + f"{Decimal(ibs):,.2f}".replace(",", "_").replace(".", ",").replace("_", "."),
        p_cbs.replace(".", ",") + "%",
        "NFS-e SEM VALIDADE JURÍDICA",
        "Produção Restrita",
        "12.ABC.345/01DE-35",
    ):
        assert value in text, value
    found = barcodes(page_images(pdf, dpi=200)[0])
    assert ("QRCode", nfse_consultation_url(nfse.key)) in found
    assert nfse_consultation_url(nfse.key).endswith(nfse.key)


def test_without_ibs_cbs_the_block_is_left_out_and_production_has_no_warning() -> None:
    text = _text(render_danfse((FIXTURES / "pdf" / "bfr-real_nfse.xml").read_bytes()))
    assert "TRIBUTAÇÃO IBS / CBS" not in text
    assert "SEM VALIDADE JURÍDICA" not in text  # tpAmb 1
    assert "O DESTINATÁRIO É O PRÓPRIO TOMADOR/ADQUIRENTE DA OPERAÇÃO" in text
    assert "INTERMEDIÁRIO DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e" in text
    assert "Totais Aproximados dos Tributos" in text


def test_a_recipient_other_than_the_taker_gets_its_own_block() -> None:
    nfse = factory().nfse(provider=SUPPLIER, taker=CLIENT, issued_at=ISSUED_AT, with_ibscbs=True)
    root = etree.fromstring(nfse.nfse)
    ibscbs = root.find(".//n:infDPS/n:IBSCBS", {"n": NS})
    ind_dest = root.find(".//n:infDPS/n:IBSCBS/n:indDest", {"n": NS})
    assert ibscbs is not None and ind_dest is not None
    dest = etree.fromstring(
        f'<dest xmlns="{NS}"><CPF>12345678909</CPF><xNome>JOSÉ DA SILVA DESTINATÁRIO</xNome>'
        "<end><endNac><cMun>3550308</cMun><CEP>01310100</CEP></endNac><xLgr>AVENIDA PAULISTA</xLgr>"
        "<nro>1000</nro><xBairro>BELA VISTA</xBairro></end><email>jose@example.com</email></dest>"
    )
    ind_dest.addnext(dest)
    text = _text(render_danfse(etree.tostring(root)))
    for value in (
        "DESTINATÁRIO DA OPERAÇÃO",
        "JOSÉ DA SILVA DESTINATÁRIO",
        "123.456.789-09",
        "AVENIDA PAULISTA, 1000, BELA VISTA",
        "3550308 / 01310-100",
        "jose@example.com",
    ):
        assert value in text, value
    assert "O DESTINATÁRIO É O PRÓPRIO TOMADOR" not in text


def test_cancelled_and_substituted_marks_come_from_the_events() -> None:
    event = CANCEL_EVENT.read_bytes()
    assert "CANCELADA" in _text(render_danfse(CANCELLED.read_bytes(), events=[event]))
    # the same event belongs to another NFS-e: no mark here
    assert "CANCELADA" not in _text(
        render_danfse((FIXTURES / "pdf" / "bfr-real_nfse.xml").read_bytes(), events=[event, b"<lixo"])
    )
    key = "31062002211111111000111000000000024226067411147892"
    substitution = (
        f'<evento xmlns="{NS}" versao="1.01"><infEvento Id="EVT{key}105102001"><verAplic>SefinNacional_1.6.0'
        "</verAplic><ambGer>2</ambGer><nSeqEvento>1</nSeqEvento><dhProc>2026-06-06T10:00:00-03:00</dhProc>"
        f'<nDFSe>0</nDFSe><pedRegEvento versao="1.01"><infPedReg Id="PRE{key}105102"><tpAmb>1</tpAmb>'
        "<verAplic>teste</verAplic><dhEvento>2026-06-06T09:59:00-03:00</dhEvento><CNPJAutor>11111111000111"
        f"</CNPJAutor><chNFSe>{key}</chNFSe><e105102><xDesc>Cancelamento de NFS-e por Substituição</xDesc>"
        "<cMotivo>01</cMotivo><chSubstituta>31062002211111111000111000000000024326069400065407</chSubstituta>"
        "</e105102></infPedReg></pedRegEvento></infEvento></evento>"
    ).encode()
    text = _text(render_danfse(CANCELLED.read_bytes(), events=[substitution]))
    assert "SUBSTITUÍDA" in text and "CANCELADA" not in text


def test_long_texts_are_cut_with_dots_and_the_page_stays_one() -> None:
    root = etree.fromstring((FIXTURES / "nfse" / "nfse-prestador-pessoa-fisica.xml").read_bytes())
    description = root.find(".//n:xDescServ", {"n": NS})
    name = root.find(".//n:toma/n:xNome", {"n": NS})
    assert description is not None and name is not None
    description.text = "SERVIÇO DE ENFERMAGEM DOMICILIAR CONFORME CONTRATO " * 120
    name.text = "FUNDO MUNICIPAL DE SAÚDE DE VÁRZEA ALEGRE - SECRETARIA DE SAÚDE " * 4
    service = root.find(".//n:serv", {"n": NS})
    assert service is not None
    service.append(
        etree.fromstring(f'<infoCompl xmlns="{NS}"><xInfComp>{"EMPENHO 2024/0001 " * 400}</xInfComp></infoCompl>')
    )
    pages = page_texts(render_danfse(etree.tostring(root)))
    assert len(pages) == 1
    text = flat(pages[0])
    assert "..." in text
    assert text.count("SERVIÇO DE ENFERMAGEM DOMICILIAR") < 120
    assert "Inf. Cont.: EMPENHO 2024/0001" in text and text.count("EMPENHO") < 400
    assert text.endswith("Municipais: -")  # the approximate taxes still close the page (NT 008)


def test_a_malformed_nfse_is_refused_with_a_clear_message() -> None:
    with pytest.raises(PdfError, match=r"XML ilegível \(XML malformado na linha 98"):
        render_danfse(MALFORMED.read_bytes())
    with pytest.raises(PdfError, match="XML ilegível"):
        render_pdf(MALFORMED.read_bytes())
    with pytest.raises(PdfError, match="não é uma NFS-e Nacional"):
        render_danfse(CANCEL_EVENT.read_bytes())  # an event is not a note
    with pytest.raises(PdfError, match="infNFSe e DPS"):
        render_danfse(f'<NFSe xmlns="{NS}"><infNFSe Id="NFS1"/></NFSe>'.encode())


def test_png_render_for_a_person_to_look_at(capsys: pytest.CaptureFixture[str]) -> None:
    nfse = factory().nfse(provider=SUPPLIER, taker=CLIENT, issued_at=ISSUED_AT, with_ibscbs=True)
    written = write_pngs(render_danfse(nfse.nfse), "danfse-ibscbs")
    written += write_pngs(render_danfse(CANCELLED.read_bytes(), events=[CANCEL_EVENT.read_bytes()]), "danfse-cancelada")
    with capsys.disabled():
        print(f"\nDANFSe PNG renders in {RENDERS}: {', '.join(p.name for p in written)}")
    assert len(written) == 2 and all(p.stat().st_size > 20_000 for p in written)


def test_an_intermediary_and_a_foreign_taker_get_their_blocks() -> None:
    nfse = factory().nfse(provider=SUPPLIER, taker=CLIENT, intermediary=CARRIER, issued_at=ISSUED_AT)
    root = etree.fromstring(nfse.nfse)
    taker = root.find(".//n:infDPS/n:toma", {"n": NS})
    assert taker is not None
    for child in list(taker):
        taker.remove(child)
    for element in etree.fromstring(
        f'<toma xmlns="{NS}"><NIF>DE123456789</NIF><xNome>MÜLLER GMBH 😀</xNome><end><endExt><cPais>DE</cPais>'
        "<cEndPost>10115</cEndPost><xCidade>BERLIN</xCidade><xEstProvReg>BERLIN</xEstProvReg></endExt>"
        "<xLgr>INVALIDENSTRASSE</xLgr><nro>42</nro><xBairro>MITTE</xBairro></end></toma>"
    ):
        taker.append(element)
    text = _text(render_danfse(etree.tostring(root)))
    for value in (
        "INTERMEDIÁRIO DA OPERAÇÃO",
        CARRIER.name,
        "12.ABC.345/01DE-35",
        "DE123456789",
        "MÜLLER GMBH",
        "BERLIN / BERLIN / DE",
        "INVALIDENSTRASSE, 42, MITTE",
        "10115",
    ):
        assert value in text, value
    assert "INTERMEDIÁRIO DA OPERAÇÃO NÃO IDENTIFICADO" not in text


@pytest.mark.parametrize("code", ["105104", "305101"])
def test_cancellations_by_the_tax_office_mark_it_cancelled_too(code: str) -> None:
    event = CANCEL_EVENT.read_bytes().replace(b"e101101>", f"e{code}>".encode())
    assert "CANCELADA" in _text(render_danfse(CANCELLED.read_bytes(), events=[event]))


@settings(max_examples=15, deadline=None)
@given(xml_text())
def test_any_text_in_every_field_keeps_the_danfse_on_one_page(hostile: str) -> None:
    root = etree.fromstring((FIXTURES / "nfse" / "nfse-homolog-2025.xml").read_bytes())
    for element in root.iter():
        if isinstance(element.tag, str) and len(element) == 0:
            element.text = hostile
    pages = page_texts(render_danfse(etree.tostring(root)))
    assert len(pages) == 1 and "15054862231305199000190000000000000225121645026250" in flat(pages[0])


def test_only_the_embedded_font_family_is_used() -> None:
    page = PdfReader(io.BytesIO(render_danfse(CANCELLED.read_bytes(), events=[CANCEL_EVENT.read_bytes()]))).pages[0]
    names = {str(f.get_object()["/BaseFont"]) for f in page["/Resources"]["/Font"].values()}
    assert names and all("DejaVuSansCondensed" in n for n in names)
