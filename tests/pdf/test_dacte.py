"""DACTE rendered from real and generated CT-e, read back: text (pypdf), pages, barcode and QR (zxing)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from lxml import etree
from pypdf import PdfReader

from app.documents.cte import read_cte_document
from app.documents.model import CteMeta
from app.pdf import PdfError, render_pdf
from app.pdf import formats as fmt
from app.pdf.dacte import render_dacte
from tests.pdf.pdftools import RENDERS, barcodes, flat, page_images, page_texts, write_pngs
from tests.pdf.sandbox_docs import CARRIER, CLIENT, FIXTURES, ISSUED_AT, SUPPLIER, factory
from tests.pdf.strategies import xml_text

CTE_NS = "http://www.portalfiscal.inf.br/cte"
CTE_FIXTURES = sorted((FIXTURES / "cte").glob("*.xml"))
CTE_OS = FIXTURES / "pdf" / "cteos-fretamento-ficticio.xml"
MULTI = FIXTURES / "cte" / "bfr-dacte_test_multi_pages.xml"
ROAD = FIXTURES / "cte" / "bfr-dacte_test_1.xml"
PAGES = {MULTI.name: 2}


def _text(pdf: bytes) -> str:
    return flat(" ".join(page_texts(pdf)))


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("path", [*CTE_FIXTURES, CTE_OS], ids=lambda p: p.name)
def test_every_fixture_prints_key_parties_and_totals(path: Path) -> None:
    xml = path.read_bytes()
    meta = read_cte_document(xml)  # the documents reader, independent of the renderer, says what to expect
    assert isinstance(meta, CteMeta)
    pdf = render_dacte(xml)
    pages = page_texts(pdf)
    text = flat(" ".join(pages))
    assert len(pages) == PAGES.get(path.name, 1)
    assert meta.access_key in _compact(text)
    assert fmt.key_groups(meta.access_key) in text
    for party in (meta.emitter, meta.sender, meta.recipient, meta.taker):
        if party is not None and party.name:
            assert party.name in text, party
    assert meta.total_cents is not None
    assert f"R$ {fmt.money(str(meta.total_cents / 100))}" in text
    folio = f"{len(pages)}/{len(pages)}"
    assert re.search(rf"FOLHA.*{folio}", flat(pages[-1]))


def test_a_long_list_of_nfe_continues_on_a_second_page_numbered_folha() -> None:
    xml = MULTI.read_bytes()
    meta = read_cte_document(xml)
    assert isinstance(meta, CteMeta)
    pages = page_texts(render_dacte(xml))
    assert len(pages) == 2
    first, second = flat(pages[0]), flat(pages[1])
    assert re.search(r"FOLHA.*1/2", first) and re.search(r"FOLHA.*2/2", second)
    assert "DOCUMENTOS ORIGINÁRIOS (CONTINUAÇÃO)" in second
    assert fmt.key_groups(meta.access_key) in second  # the header is repeated
    printed = re.findall(r"\b\d{44}\b", first + " " + second)
    carried = re.findall(rb"<chave>(\d{44})</chave>", xml)
    assert sorted(printed) == sorted(k.decode() for k in carried)  # all 29, none lost, none twice
    assert "Tratamento de dados exemplo" in first  # observations stay on page 1


def test_the_barcode_decodes_to_the_key_and_the_qr_to_the_ctes_url() -> None:
    xml = ROAD.read_bytes()
    found = barcodes(page_images(render_dacte(xml), dpi=200, last=1)[0])
    key = re.search(rb'Id="CTe(\d{44})"', xml)
    qr = re.search(rb"<qrCodCTe>\s*(\S+?)\s*</qrCodCTe>", xml)
    assert key and qr
    assert ("Code128", key.group(1).decode()) in found
    assert ("QRCode", qr.group(1).decode().replace("&amp;", "&")) in found


def test_a_generated_cte_with_an_alphanumeric_cnpj_prints_and_scans() -> None:
    cte = factory().cte(
        emitter=CARRIER,
        sender=SUPPLIER,
        recipient=CLIENT,
        taker_role=3,
        issued_at=ISSUED_AT,
        modal="02",
        nfe_keys=["35261111222333000181550010000012341123456780"],
    )
    assert re.search("[A-Z]", cte.key)
    pdf = render_pdf(cte.cte_proc)  # through the dispatcher, as the app calls it
    text = _text(pdf)
    for name in (CARRIER.name, SUPPLIER.name, CLIENT.name):
        assert name in text
    assert f"R$ {fmt.money(str(cte.total_cents / 100))}" in text
    assert "DADOS ESPECÍFICOS DO MODAL AÉREO" in text and "SEM VALOR FISCAL" in text
    assert "TOMADOR DO SERVIÇO (DESTINATÁRIO)" in text
    found = barcodes(page_images(pdf, dpi=200)[0])
    assert ("Code128", cte.key) in found
    assert any(kind == "QRCode" and cte.key in value for kind, value in found)


def test_a_registered_cancellation_marks_every_page() -> None:
    cte = factory().cte(emitter=CARRIER, sender=SUPPLIER, recipient=CLIENT, taker_role=0, issued_at=ISSUED_AT)
    cancel = factory().cte_event(cte, tp_evento="110111", author=CARRIER, seq=1, at=ISSUED_AT)
    correction = factory().cte_event(cte, tp_evento="110110", author=CARRIER, seq=1, at=ISSUED_AT)
    other = factory().cte(emitter=CARRIER, sender=SUPPLIER, recipient=CLIENT, taker_role=0, issued_at=ISSUED_AT)
    other_cancel = factory().cte_event(other, tp_evento="110111", author=CARRIER, seq=1, at=ISSUED_AT)
    assert "CANCELADO" in _text(render_dacte(cte.cte_proc, events=[cancel.proc_payload.xml]))
    unrelated = [correction.proc_payload.xml, other_cancel.proc_payload.xml, b"<lixo", b"<a/>"]
    assert "CANCELADO" not in _text(render_dacte(cte.cte_proc, events=unrelated))


def test_cancellation_mark_on_both_pages_of_a_long_dacte() -> None:
    xml = MULTI.read_bytes()
    found = re.search(rb'Id="CTe(\d{44})"', xml)
    assert found
    key = found.group(1).decode()
    event = (
        f'<procEventoCTe xmlns="{CTE_NS}" versao="4.00"><eventoCTe versao="4.00"><infEvento Id="ID110111{key}001">'
        f"<cOrgao>42</cOrgao><tpAmb>2</tpAmb><CNPJ>92382301841312</CNPJ><chCTe>{key}</chCTe>"
        "<dhEvento>2024-03-28T10:00:00-03:00</dhEvento><tpEvento>110111</tpEvento><nSeqEvento>1</nSeqEvento>"
        '<detEvento versaoEvento="4.00"><evCancCTe><descEvento>Cancelamento</descEvento><nProt>2324240111249023</nProt>'
        "<xJust>Erro na emissao do documento</xJust></evCancCTe></detEvento></infEvento></eventoCTe>"
        '<retEventoCTe versao="4.00"><infEvento><tpAmb>2</tpAmb><verAplic>X</verAplic><cOrgao>42</cOrgao>'
        "<cStat>135</cStat><xMotivo>Evento registrado</xMotivo></infEvento></retEventoCTe></procEventoCTe>"
    ).encode()
    pages = page_texts(render_dacte(xml, events=[event]))
    assert len(pages) == 2 and all("CANCELADO" in p for p in pages)


def test_homologation_says_sem_valor_fiscal_and_production_does_not() -> None:
    assert "SEM VALOR FISCAL" in _text(render_dacte(ROAD.read_bytes()))  # tpAmb 2
    production = FIXTURES / "cte" / "35190602427026001207570040000522031000522035-cte-multimodal.xml"
    text = _text(render_dacte(production.read_bytes()))
    assert "SEM VALOR FISCAL" not in text
    assert "DADOS ESPECÍFICOS DO TRANSPORTE MULTIMODAL" in text and "1234-1234" in text and "NÃO NEGOCIÁVEL" in text


_MODALS = {
    "aquav": (
        "<aquav><vPrest>221.19</vPrest><vAFRMM>55.30</vAFRMM><xNavio>NAVIO ESTRELA DO SUL</xNavio>"
        "<balsa><xBalsa>BALSA 7</xBalsa></balsa><nViag>4521</nViag><direc>N</direc><irin>PP1234</irin>"
        "<detCont><nCont>MSKU1234567</nCont><lacre><nLacre>L998877</nLacre></lacre></detCont><tpNav>1</tpNav></aquav>",
        (
            "DADOS ESPECÍFICOS DO MODAL AQUAVIÁRIO",
            "NAVIO ESTRELA DO SUL",
            "55,30",
            "NORTE",
            "CABOTAGEM",
            "MSKU1234567",
            "L998877",
            "BALSA 7",
        ),
    ),
    "ferrov": (
        "<ferrov><tpTraf>1</tpTraf><trafMut><respFat>1</respFat><ferrEmi>2</ferrEmi><vFrete>1500.00</vFrete>"
        "<ferroEnv><CNPJ>11222333000181</CNPJ><IE>110042490114</IE><xNome>FERROVIA CENTRO OESTE SA</xNome>"
        "<enderFerro><xLgr>RUA A</xLgr><cMun>3550308</cMun><xMun>SAO PAULO</xMun><UF>SP</UF></enderFerro></ferroEnv>"
        "</trafMut><fluxo>FLX-998</fluxo></ferrov>",
        (
            "DADOS ESPECÍFICOS DO MODAL FERROVIÁRIO",
            "MÚTUO",
            "FLX-998",
            "1.500,00",
            "FERROVIA CENTRO OESTE SA",
            "11.222.333/0001-81",
            "FERROVIA DE ORIGEM",
        ),
    ),
    "duto": (
        "<duto><vTar>12.345678</vTar><dIni>2024-03-01</dIni><dFim>2024-03-31</dFim></duto>",
        ("DADOS ESPECÍFICOS DO MODAL DUTOVIÁRIO", "01/03/2024", "31/03/2024", "12,35"),
    ),
}


@pytest.mark.parametrize("modal", sorted(_MODALS))
def test_each_modal_prints_its_own_block(modal: str) -> None:
    snippet, expected = _MODALS[modal]
    root = etree.fromstring(ROAD.read_bytes())
    ns = {"c": CTE_NS}
    inf_modal = root.find(".//c:infModal", ns)
    assert inf_modal is not None
    for child in list(inf_modal):
        inf_modal.remove(child)
    inf_modal.append(etree.fromstring(snippet.replace(f"<{modal}>", f'<{modal} xmlns="{CTE_NS}">', 1)))
    text = _text(render_dacte(etree.tostring(root, xml_declaration=True, encoding="UTF-8")))
    for value in expected:
        assert value in text, value


def test_air_and_ibs_cbs_fixtures_print_their_groups() -> None:
    air = _text(render_dacte((FIXTURES / "cte" / "bfr-dacte_aereo_test.xml").read_bytes()))
    for value in ("DADOS ESPECÍFICOS DO MODAL AÉREO", "TEST123", "OCA56789", "22/11/2024", "1234", "5678"):
        assert value in air
    reform = _text(render_dacte((FIXTURES / "cte" / "bfr-dacte_reforma_tributaria.xml").read_bytes()))
    for value in ("VALOR CBS", "5,53", "VALOR IBS UF", "2,21", "100 / 000001"):
        assert value in reform


def test_cte_os_prints_its_taker_service_and_road_os_block() -> None:
    text = _text(render_dacte(CTE_OS.read_bytes()))
    for value in (
        "DACTE OS",
        "ASSOCIAÇÃO DOS CONTABILISTAS DE TESTE",
        "TRANSPORTE DE PESSOAS",
        "TRANSPORTE DE PASSAGEIROS EM FRETAMENTO EVENTUAL",
        "123456789012",
        "ABC1D23",
        "EVENTUAL",
        "R$ 4.850,00",
        "582,00",
        "12/11/2026 06:00:00",
        "EMITENTE DO CT-E OS",
        "SEGURADORA EXEMPLO DE VIAGENS SA",
        "APL-2026-0001",
        "SP > RJ",
        "NENHUM DOCUMENTO REFERENCIADO NO CT-E OS",
        "VALOR DO COFINS 145,50",
        "VALOR DO CSLL 48,50",
    ):
        assert value in text, value
    assert "DECLARO QUE RECEBI" not in text  # a CT-e OS has no receipt stub


def test_hostile_characters_in_a_party_never_break_the_dacte() -> None:
    xml = ROAD.read_bytes().replace(
        b"INDUSTRIA FANTASMA DE TESTE",
        "Ação & Cia \x01 ºª € 😀 Ltda".encode().replace(b"&", b"&amp;").replace(b"\x01", b""),
    )
    text = _text(render_dacte(xml))
    assert "Ação & Cia ºª €" in text


def test_what_is_not_a_printable_cte_is_refused_in_portuguese() -> None:
    with pytest.raises(PdfError, match="XML ilegível"):
        render_dacte(b"<cteProc")
    with pytest.raises(PdfError, match="não é um CT-e"):
        render_dacte((FIXTURES / "nfse" / "nfse-homolog-2025.xml").read_bytes())
    with pytest.raises(PdfError, match="infCte"):
        render_dacte(f'<cteProc xmlns="{CTE_NS}"><CTe/></cteProc>'.encode())


def test_png_renders_for_a_person_to_look_at(capsys: pytest.CaptureFixture[str]) -> None:
    written = write_pngs(render_dacte(MULTI.read_bytes()), "dacte-multi-paginas")
    written += write_pngs(render_dacte(CTE_OS.read_bytes()), "dacte-os")
    with capsys.disabled():
        print(f"\nDACTE PNG renders in {RENDERS}: {', '.join(p.name for p in written)}")
    assert len(written) == 3 and all(p.stat().st_size > 20_000 for p in written)


def test_a_complement_cte_lists_the_cte_it_complements() -> None:
    complemented = "42240302484555000343570020003396861082134657"
    xml = re.sub(
        rb"<infCTeNorm>.*</infCTeNorm>",
        f"<infCteComp><chCTe>{complemented}</chCTe></infCteComp>".encode(),
        ROAD.read_bytes(),
        flags=re.S,
    ).replace(b"<tpCTe>0</tpCTe>", b"<tpCTe>1</tpCTe>")
    text = _text(render_dacte(xml))
    assert "COMPLEMENTO DE VALORES" in text
    assert re.search(rf"CT-E COMPLEMENTADO {complemented} 2/339686", text)  # serie/number read from the key
    assert "DADOS ESPECÍFICOS DO MODAL" not in text  # a complement carries no modal group


def test_a_bare_cte_with_almost_nothing_still_prints() -> None:
    key = "42240302484555000343570020003396861082134657"
    pages = page_texts(render_dacte(f'<CTe xmlns="{CTE_NS}"><infCte Id="CTe{key}" versao="4.00"/></CTe>'.encode()))
    assert len(pages) == 1 and fmt.key_groups(key) in flat(pages[0])


def test_a_cte_without_documents_or_qr_says_so() -> None:
    text = _text(render_dacte((FIXTURES / "cte" / "43120178408960000182570010000000041000000047-cte.xml").read_bytes()))
    assert "DOCUMENTOS ORIGINÁRIOS NENHUM DOCUMENTO INFORMADO NO CT-E" in text.replace(
        " TIPO DOC CNPJ/CHAVE SÉRIE/NRO. DOCUMENTO", ""
    )
    assert "QR CODE NÃO INFORMADO NO XML DO CT-E" in text
    assert "PROTOCOLO DE AUTORIZAÇÃO DE USO XML SEM PROTOCOLO DE AUTORIZAÇÃO" in text  # a bare CTe, no protCTe


def test_hundreds_of_documents_and_long_observations_spread_over_numbered_pages() -> None:
    xml = MULTI.read_text(encoding="utf-8")
    keys = [f"{i:044d}" for i in range(1, 301)]
    xml = re.sub(
        r"<infDoc>.*</infDoc>",
        "<infDoc>" + "".join(f"<infNFe><chave>{k}</chave></infNFe>" for k in keys) + "</infDoc>",
        xml,
        flags=re.S,
    )
    notes = "".join(
        f'<ObsCont xCampo="C{i}"><xTexto>Observação número {i} do contribuinte</xTexto></ObsCont>' for i in range(60)
    )
    pages = [flat(p) for p in page_texts(render_dacte(xml.replace("</compl>", notes + "</compl>").encode()))]
    total = len(pages)
    assert total >= 3
    for number, page in enumerate(pages, start=1):
        assert re.search(rf"FOLHA.*{number}/{total}", page)
    printed = re.findall(r"\b\d{44}\b", " ".join(pages))
    assert sorted(printed) == keys
    assert "(continua na folha seguinte)" in pages[0]
    assert "OBSERVAÇÕES (CONTINUAÇÃO)" in pages[-1] and "C59: Observação número 59" in pages[-1]
    shown = re.findall(r"C(\d+): Observação número", " ".join(pages))
    assert sorted(map(int, shown)) == list(range(60))  # every note exactly once


def test_the_road_block_shows_the_expected_delivery_of_layout_4() -> None:
    entrega = (
        b"<Entrega><noPeriodo><tpPer>4</tpPer><dIni>2024-04-10</dIni><dFim>2024-04-12</dFim></noPeriodo>"
        b"<comHora><tpHor>2</tpHor><hProg>14:30:00</hProg></comHora></Entrega>"
    )
    xml = re.sub(rb"<Entrega>.*?</Entrega>", entrega, ROAD.read_bytes(), flags=re.S)
    assert "DATA PREVISTA DE ENTREGA DE 10/04/2024 ATÉ 12/04/2024 14:30" in _text(render_dacte(xml))


@settings(max_examples=15, deadline=None)
@given(xml_text())
def test_any_text_in_every_field_never_breaks_the_dacte(hostile: str) -> None:
    root = etree.fromstring(MULTI.read_bytes())
    for element in root.iter():
        if isinstance(element.tag, str) and len(element) == 0:
            element.text = hostile  # money, dates, codes and names alike
    pages = [flat(p) for p in page_texts(render_dacte(etree.tostring(root)))]
    assert pages and "4224 0302 4845 5500 0343 5700 2000 3396 8610 8213 4657" in pages[0]
    assert all(re.search(rf"FOLHA.*{n}/{len(pages)}", p) for n, p in enumerate(pages, start=1))


def test_a_fourth_party_taker_and_the_shipper_and_receiver_are_printed() -> None:
    payer = type(CLIENT)("33000167000101", "PAGADORA DO FRETE S.A.", "RJ", "3304557", ie="81234567")
    cte = factory().cte(
        emitter=CARRIER,
        sender=SUPPLIER,
        recipient=CLIENT,
        taker_role=4,
        taker=payer,
        expeditor=SUPPLIER,
        receiver=CLIENT,
        issued_at=ISSUED_AT,
    )
    text = _text(render_dacte(cte.cte_proc))
    assert "TOMADOR DO SERVIÇO (OUTROS) PAGADORA DO FRETE S.A." in text
    assert "33.000.167/0001-01" in text and "RIO DE JANEIRO - RJ" in text
    assert f"EXPEDIDOR {SUPPLIER.name}" in text and f"RECEBEDOR {CLIENT.name}" in text


def test_a_denied_cte_is_marked_uso_denegado() -> None:
    xml = ROAD.read_bytes().replace(b"<cStat>100</cStat>", b"<cStat>301</cStat>")
    assert "USO DENEGADO" in _text(render_dacte(xml))
    assert "USO DENEGADO" not in _text(render_dacte(ROAD.read_bytes()))


def test_only_the_embedded_font_family_is_used() -> None:
    reader = PdfReader(io.BytesIO(render_dacte(MULTI.read_bytes())))
    names = {str(f.get_object()["/BaseFont"]) for page in reader.pages for f in page["/Resources"]["/Font"].values()}
    assert names and all("DejaVuSansCondensed" in n for n in names)
