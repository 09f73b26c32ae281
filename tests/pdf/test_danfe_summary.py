"""A resumo's page: it tells to register the Ciência only while none is registered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.pdf import render_pdf
from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki
from tests.pdf.pdftools import flat, page_texts, write_pngs

ISSUED = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
SUPPLIER = Party("11222333000181", "FORNECEDORA DE TESTE LTDA", "SP", "3550308", ie="110042490114")
CLIENT = Party("11444777000161", "CLIENTE & FILHOS LTDA", "PR", "4106902", ie="9032000301")


def test_a_resumo_whose_ciencia_is_registered_no_longer_asks_for_it() -> None:
    factory = DocumentFactory(TestPki.create(now=datetime(2026, 10, 1, tzinfo=UTC)), seed=13)
    generated = factory.nfe(emitter=SUPPLIER, recipient=CLIENT, issued_at=ISSUED)
    pending = flat(page_texts(render_pdf(generated.res_nfe))[0])
    assert "O que fazer: registre a Ciência da Operação" in pending
    # The recipient's Ciência, as the capture stores it (procEventoNFe, cStat 135).
    at = ISSUED + timedelta(hours=1, minutes=15)
    ciencia = factory.nfe_event(generated, tp_evento="210210", author=CLIENT, seq=1, at=at)
    registered_pdf = render_pdf(generated.res_nfe, events=[ciencia.proc_payload.xml])
    registered = flat(page_texts(registered_pdf)[0])
    assert "registre a Ciência" not in registered and "Registrar a Ciência" not in registered
    assert "A Ciência da Operação desta nota já foi registrada em 02/11/2026 10:15" in registered
    assert "Ciência da Operação registrada: XML completo a caminho" in registered
    assert "não é um DANFE" in registered  # still not a DANFE
    write_pngs(registered_pdf, "resumo-ciencia-registrada")
    # Another key's Ciência changes nothing.
    other = factory.nfe(emitter=SUPPLIER, recipient=CLIENT, issued_at=ISSUED)
    theirs = factory.nfe_event(other, tp_evento="210210", author=CLIENT, seq=1, at=at)
    assert "O que fazer: registre" in flat(
        page_texts(render_pdf(generated.res_nfe, events=[theirs.proc_payload.xml]))[0]
    )
