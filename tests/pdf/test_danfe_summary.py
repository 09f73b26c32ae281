"""A resumo's page: it tells to register the Ciência only while none is registered."""

from __future__ import annotations

from datetime import UTC, datetime

from app.pdf import render_pdf
from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki
from tests.pdf.pdftools import flat, page_texts, write_pngs

ISSUED = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def _answer(key: str, tp_evento: str, cstat: str) -> bytes:
    """The service's answer to a recipient's event, as the manifestation store keeps it."""
    return (
        '<retEvento xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.00"><infEvento>'
        f"<tpAmb>2</tpAmb><cStat>{cstat}</cStat><chNFe>{key}</chNFe><tpEvento>{tp_evento}</tpEvento>"
        "<dhRegEvento>2026-11-02T10:15:00-03:00</dhRegEvento></infEvento></retEvento>"
    ).encode()


def test_a_resumo_whose_ciencia_is_registered_no_longer_asks_for_it() -> None:
    factory = DocumentFactory(TestPki.create(now=datetime(2026, 10, 1, tzinfo=UTC)), seed=13)
    supplier = Party("11222333000181", "FORNECEDORA DE TESTE LTDA", "SP", "3550308", ie="110042490114")
    client = Party("11444777000161", "CLIENTE & FILHOS LTDA", "PR", "4106902", ie="9032000301")
    generated = factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED)
    pending = flat(page_texts(render_pdf(generated.res_nfe))[0])
    assert "O que fazer: registre a Ciência da Operação" in pending
    registered_pdf = render_pdf(generated.res_nfe, events=[_answer(generated.key, "210210", "135")])
    registered = flat(page_texts(registered_pdf)[0])
    assert "registre a Ciência" not in registered and "Registrar a Ciência" not in registered
    assert "A Ciência da Operação desta nota já foi registrada em 02/11/2026 10:15" in registered
    assert "Ciência da Operação registrada: XML completo a caminho" in registered
    assert "não é um DANFE" in registered  # still not a DANFE
    write_pngs(registered_pdf, "resumo-ciencia-registrada")
    # A refused Ciência, or another key's, changes nothing.
    refused = [_answer(generated.key, "210210", "494"), _answer("1" * 44, "210210", "135")]
    assert "O que fazer: registre" in flat(page_texts(render_pdf(generated.res_nfe, events=refused))[0])
