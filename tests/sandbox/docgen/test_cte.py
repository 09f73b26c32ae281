"""CT-e 4.00 generation: cteProc for road and air, toma3/toma4, and procEventoCTe."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from lxml import etree

from app.core.errors import CapturaError
from app.core.keys import AccessKey
from app.fiscal.xmldsig import extract_signed_element, verify_enveloped
from app.sandbox.docgen import DocumentFactory, GeneratedCTe, Party

from .conftest import ISSUED_AT

NS = {"c": "http://www.portalfiscal.inf.br/cte"}
PROC = "cte/schemas/v4_0/procCTe_v4.00.xsd"
EVENT = "cte/schemas/v4_0/procEventoCTe_v4.00.xsd"
MODALS = {
    "01": "cte/schemas/v4_0/cteModalRodoviario_v4.00.xsd",
    "02": "cte/schemas/v4_0/cteModalAereo_v4.00.xsd",
}
EVENT_DETAILS = {
    "110111": "cte/schemas/v4_0/evCancCTe_v4.00.xsd",
    "110110": "cte/schemas/v4_0/evCCeCTe_v4.00.xsd",
    "610110": "cte/schemas/v4_0/evPrestDesacordo_v4.00.xsd",
}


@pytest.mark.parametrize(("modal", "taker_role"), [("01", 0), ("01", 3), ("02", 4), ("02", 1)])
def test_cte_proc_valid_for_modal_and_taker(
    modal: str,
    taker_role: int,
    factory: DocumentFactory,
    carrier: Party,
    supplier: Party,
    client: Party,
    person: Party,
    xsd: Callable[[bytes, str], None],
) -> None:
    third = Party("11444777000161", "TOMADOR TERCEIRO LTDA", "RJ", "3304557", ie="12345678")
    nfe_keys = ["35261111222333000181550010000001231863972509"] if modal == "01" else []
    cte = factory.cte(
        emitter=carrier,
        sender=supplier,
        recipient=client,
        taker_role=taker_role,
        taker=third if taker_role == 4 else None,
        expeditor=person if taker_role == 1 else None,
        issued_at=ISSUED_AT,
        modal=modal,
        total_cents=54_321,
        nfe_keys=nfe_keys,
    )
    xsd(cte.cte_proc, PROC)
    key = AccessKey(cte.key)
    assert (key.model, key.issuer_id, key.uf) == ("57", carrier.doc, "SC")
    root = etree.fromstring(cte.cte_proc)
    assert root.xpath("string(c:CTe/c:infCte/@Id)", namespaces=NS) == "CTe" + cte.key
    assert root.xpath("string(c:CTe/c:infCte/c:ide/c:modal)", namespaces=NS) == modal
    assert root.xpath("string(c:CTe/c:infCte/c:vPrest/c:vTPrest)", namespaces=NS) == "543.21"
    assert root.xpath("string(c:protCTe/c:infProt/c:cStat)", namespaces=NS) == "100"
    infmodal = root.find("c:CTe/c:infCte/c:infCTeNorm/c:infModal", NS)
    xsd(etree.tostring(infmodal[0]), MODALS[modal])
    if taker_role == 4:
        assert root.xpath("string(//c:toma4/c:CNPJ)", namespaces=NS) == third.doc
        assert cte.parties["toma"] == third
    else:
        assert root.xpath("string(//c:toma3/c:toma)", namespaces=NS) == str(taker_role)
        role = {0: "rem", 1: "exped", 3: "dest"}[taker_role]
        assert cte.parties["toma"] == cte.parties[role]
    assert set(cte.parties) >= {"emit", "rem", "dest", "toma"}
    assert root.xpath("string(//c:infNFe/c:chave)", namespaces=NS) == "".join(nfe_keys)
    verified = verify_enveloped(cte.cte_proc, expected_cert_pem=factory.certificate(carrier).cert_pem, at=ISSUED_AT)
    assert verified.subject_cnpj == carrier.doc


def test_cte_rejects_an_absent_taker(factory: DocumentFactory, carrier: Party, supplier: Party, client: Party) -> None:
    with pytest.raises(CapturaError, match="Tomador"):
        factory.cte(emitter=carrier, sender=supplier, recipient=client, taker_role=2, issued_at=ISSUED_AT)
    with pytest.raises(CapturaError, match="Modal"):
        factory.cte(emitter=carrier, sender=supplier, recipient=client, taker_role=0, issued_at=ISSUED_AT, modal="03")


@pytest.fixture(scope="module")
def cte(factory: DocumentFactory, carrier: Party, supplier: Party, client: Party) -> GeneratedCTe:
    return factory.cte(emitter=carrier, sender=supplier, recipient=client, taker_role=3, issued_at=ISSUED_AT)


@pytest.mark.parametrize("tp", sorted(EVENT_DETAILS))
def test_proc_evento_cte_valid(
    tp: str, factory: DocumentFactory, cte: GeneratedCTe, xsd: Callable[[bytes, str], None]
) -> None:
    author = cte.parties["toma"] if tp == "610110" else cte.parties["emit"]
    at = ISSUED_AT + timedelta(hours=5)
    event = factory.cte_event(cte, tp_evento=tp, author=author, seq=1, at=at)
    xsd(event.proc_evento, EVENT)
    root = etree.fromstring(event.proc_evento)
    detail = root.find("c:eventoCTe/c:infEvento/c:detEvento", NS)
    xsd(etree.tostring(detail[0]), EVENT_DETAILS[tp])
    assert root.xpath("string(c:eventoCTe/c:infEvento/@Id)", namespaces=NS) == f"ID{tp}{cte.key}001"
    assert root.xpath("string(c:retEventoCTe/c:infEvento/c:nProt)", namespaces=NS) == event.protocol
    signed = extract_signed_element(event.proc_evento, "eventoCTe")
    assert verify_enveloped(signed, expected_cert_pem=factory.certificate(author).cert_pem, at=at)
