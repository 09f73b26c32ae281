"""NF-e events: procEventoNFe 1.00 and resEvento 1.01 for cancellation, CC-e and manifestations."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from lxml import etree

from app.core.errors import CapturaError
from app.fiscal.xmldsig import extract_signed_element, sign_enveloped, verify_enveloped
from app.sandbox.docgen import DocumentFactory, GeneratedNFe, Party
from app.sandbox.pki import TestPki

from .conftest import ISSUED_AT

NS = {"n": "http://www.portalfiscal.inf.br/nfe"}
GENERIC = "nfe_evento_generico/schemas/v1_0/procEventoNFe_v1.00.xsd"
RES = "nfe_dist_dfe/schemas/v1_0/resEvento_v1.01.xsd"
SPECIFIC = {
    "110111": "nfe_evento_cancel/schemas/v1_0/procEventoCancNFe_v1.00.xsd",
    "110110": "nfe_evento_cce/schemas/v1_0/procCCeNFe_v1.00.xsd",
    "210200": "nfe_evento_mde/schemas/v1_0/procConfRecebtoNFe_v1.00.xsd",
    "210210": "nfe_evento_mde/schemas/v1_0/procConfRecebtoNFe_v1.00.xsd",
    "210220": "nfe_evento_mde/schemas/v1_0/procConfRecebtoNFe_v1.00.xsd",
    "210240": "nfe_evento_mde/schemas/v1_0/procConfRecebtoNFe_v1.00.xsd",
}
CASES = [
    ("110111", "emitter", "Erro no valor da mercadoria", None, "Cancelamento", "35"),
    ("110110", "emitter", None, "Corrigir o endereco de entrega", "Carta de Correcao", "35"),
    ("210200", "recipient", None, None, "Confirmacao da Operacao", "91"),
    ("210210", "recipient", None, None, "Ciencia da Operacao", "91"),
    ("210220", "recipient", "Nao reconheco esta operacao", None, "Desconhecimento da Operacao", "91"),
    ("210240", "recipient", "Mercadoria nao foi entregue", None, "Operacao nao Realizada", "91"),
    ("610600", "emitter", None, None, "Registro de Autorização de CT-e para a NF-e", "91"),
]


@pytest.fixture(scope="module")
def nfe(factory: DocumentFactory, supplier: Party, client: Party) -> GeneratedNFe:
    return factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT)


@pytest.mark.parametrize(("tp", "who", "just", "correction", "desc", "c_orgao"), CASES)
def test_event_kinds_validate_and_are_signed_by_the_author(
    tp: str,
    who: str,
    just: str | None,
    correction: str | None,
    desc: str,
    c_orgao: str,
    factory: DocumentFactory,
    nfe: GeneratedNFe,
    xsd: Callable[[bytes, str], None],
) -> None:
    author = nfe.emitter if who == "emitter" else nfe.recipient
    at = ISSUED_AT + timedelta(hours=3)
    event = factory.nfe_event(nfe, tp_evento=tp, author=author, seq=1, at=at, justification=just, correction=correction)
    xsd(event.proc_evento, GENERIC)
    if tp in SPECIFIC:
        xsd(event.proc_evento, SPECIFIC[tp])
    assert event.res_evento is not None
    xsd(event.res_evento, RES)
    root = etree.fromstring(event.proc_evento)
    assert root.xpath("string(n:evento/n:infEvento/@Id)", namespaces=NS) == f"ID{tp}{nfe.key}01"
    assert root.xpath("string(n:evento/n:infEvento/n:cOrgao)", namespaces=NS) == c_orgao
    assert root.xpath("string(n:evento/n:infEvento/n:detEvento/n:descEvento)", namespaces=NS) == desc
    assert root.xpath("string(n:retEvento/n:infEvento/n:cStat)", namespaces=NS) == "135"
    assert root.xpath("string(n:retEvento/n:infEvento/n:nProt)", namespaces=NS) == event.protocol
    assert event.protocol.startswith("891") == (c_orgao == "91")
    res = etree.fromstring(event.res_evento)
    assert res.xpath("string(n:xEvento)", namespaces=NS) == desc
    assert res.xpath("string(n:CNPJ)", namespaces=NS) == author.doc
    verified = verify_enveloped(
        extract_signed_element(event.proc_evento, "evento"),
        expected_cert_pem=factory.certificate(author).cert_pem,
        at=at,
    )
    assert verified.subject_cnpj == author.doc


def test_required_texts_are_enforced(factory: DocumentFactory, nfe: GeneratedNFe) -> None:
    at = ISSUED_AT + timedelta(hours=1)
    with pytest.raises(CapturaError, match="justificativa"):
        factory.nfe_event(nfe, tp_evento="210240", author=nfe.recipient, seq=1, at=at)
    with pytest.raises(CapturaError, match="justificativa"):
        factory.nfe_event(nfe, tp_evento="110111", author=nfe.emitter, seq=1, at=at)
    with pytest.raises(CapturaError, match="correção"):
        factory.nfe_event(nfe, tp_evento="110110", author=nfe.emitter, seq=1, at=at)


def test_event_signed_by_the_app_is_wrapped_byte_for_byte(
    factory: DocumentFactory, nfe: GeneratedNFe, pki: TestPki, xsd: Callable[[bytes, str], None]
) -> None:
    cert = pki.company_cert(nfe.recipient.doc, nfe.recipient.name)
    event_id = f"ID210210{nfe.key}01"
    unsigned = (
        f'<evento xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.00"><infEvento Id="{event_id}">'
        f"<cOrgao>91</cOrgao><tpAmb>2</tpAmb><CNPJ>{nfe.recipient.doc}</CNPJ><chNFe>{nfe.key}</chNFe>"
        f"<dhEvento>2026-11-10T12:00:00-03:00</dhEvento><tpEvento>210210</tpEvento><nSeqEvento>1</nSeqEvento>"
        f'<verEvento>1.00</verEvento><detEvento versao="1.00"><descEvento>Ciencia da Operacao</descEvento>'
        f"</detEvento></infEvento></evento>"
    ).encode()
    signed = sign_enveloped(unsigned, event_id, cert.key_pem, cert.cert_pem)
    event = factory.nfe_event_from_signed(nfe.key, signed, at=ISSUED_AT + timedelta(hours=2))
    xsd(event.proc_evento, GENERIC)
    xsd(event.proc_evento, SPECIFIC["210210"])
    assert event.res_evento is not None
    xsd(event.res_evento, RES)
    assert signed in event.proc_evento
    assert extract_signed_element(event.proc_evento, "evento") == signed
    assert (event.tp_evento, event.seq, event.author.doc) == ("210210", 1, nfe.recipient.doc)
    assert event.protocol.startswith("891")
