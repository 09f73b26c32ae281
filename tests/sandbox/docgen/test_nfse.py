"""NFS-e Nacional generation: NFSe + DPS (with and without IBS/CBS) and registered events."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from lxml import etree

from app.core.keys import NfseKey
from app.fiscal.xmldsig import SignatureProfile, extract_signed_element, verify_enveloped
from app.sandbox.docgen import DocumentFactory, GeneratedNfse, Party

from .conftest import ISSUED_AT

NS = {"s": "http://www.sped.fazenda.gov.br/nfse"}
NFSE = "nfse/schemas/v1_0/NFSe_v1.01.xsd"
DPS = "nfse/schemas/v1_0/DPS_v1.01.xsd"
EVENTO = "nfse/schemas/v1_0/evento_v1.01.xsd"
PED = "nfse/schemas/v1_0/pedRegEvento_v1.01.xsd"


@pytest.mark.parametrize("with_ibscbs", [False, True])
def test_nfse_and_dps_valid_and_key_matches_content(
    with_ibscbs: bool,
    factory: DocumentFactory,
    supplier: Party,
    person: Party,
    client: Party,
    xsd: Callable[[bytes, str], None],
) -> None:
    nfse = factory.nfse(
        provider=supplier,
        taker=person,
        intermediary=client if with_ibscbs else None,
        issued_at=ISSUED_AT,
        service_cents=250_000,
        with_ibscbs=with_ibscbs,
    )
    xsd(nfse.nfse, NFSE)
    xsd(nfse.dps, DPS)
    root = etree.fromstring(nfse.nfse)
    inf = root.find("s:infNFSe", NS)
    key = NfseKey(nfse.key)
    assert inf.get("Id") == "NFS" + nfse.key
    assert key.c_mun == inf.findtext("s:emit/s:enderNac/s:cMun", namespaces=NS) == supplier.c_mun
    assert key.amb_ger == int(inf.findtext("s:ambGer", namespaces=NS))
    assert (key.tp_insc, key.insc_fed) == (2, supplier.doc)
    assert key.number == int(inf.findtext("s:nNFSe", namespaces=NS)) == nfse.number
    processed = datetime.fromisoformat(inf.findtext("s:dhProc", namespaces=NS))
    assert key.year_month == processed.strftime("%y%m")
    assert inf.findtext("s:DPS/s:infDPS/s:prest/s:CNPJ", namespaces=NS) == supplier.doc
    assert inf.findtext("s:DPS/s:infDPS/s:toma/s:CPF", namespaces=NS) == person.doc
    assert inf.findtext("s:DPS/s:infDPS/s:valores/s:vServPrest/s:vServ", namespaces=NS) == "2500.00"
    assert (inf.find("s:IBSCBS", NS) is not None) == with_ibscbs
    assert (inf.find("s:DPS/s:infDPS/s:IBSCBS", NS) is not None) == with_ibscbs
    assert ("interm" in nfse.parties) == with_ibscbs
    # The Sefin signs the NFS-e (RSA-SHA256); the provider signs its DPS (SEFAZ profile).
    sefin = verify_enveloped(nfse.nfse, at=ISSUED_AT, profile=SignatureProfile.SEFIN_SHA256)
    assert sefin.reference_id == "NFS" + nfse.key and sefin.subject_cnpj != supplier.doc
    dps = extract_signed_element(nfse.nfse, "DPS")
    assert dps == nfse.dps.removeprefix(b'<?xml version="1.0" encoding="UTF-8"?>')
    verified = verify_enveloped(
        dps, expected_cert_pem=factory.certificate(supplier).cert_pem, at=ISSUED_AT, profile=SignatureProfile.SEFAZ_SHA1
    )
    assert verified.subject_cnpj == supplier.doc


@pytest.fixture(scope="module")
def nfse(factory: DocumentFactory, supplier: Party, client: Party) -> GeneratedNfse:
    return factory.nfse(provider=supplier, taker=client, issued_at=ISSUED_AT)


@pytest.mark.parametrize(("code", "who"), [("101101", "prest"), ("203202", "toma"), ("203206", "toma")])
def test_registered_events_wrap_a_signed_ped_reg_evento(
    code: str, who: str, factory: DocumentFactory, nfse: GeneratedNfse, xsd: Callable[[bytes, str], None]
) -> None:
    author = nfse.parties[who]
    at = ISSUED_AT + timedelta(days=1)
    event = factory.nfse_event(nfse, code=code, author=author, at=at)
    xsd(event.evento, EVENTO)
    ped = extract_signed_element(event.evento, "pedRegEvento")
    xsd(ped, PED)
    root = etree.fromstring(event.evento)
    assert root.find("s:infEvento", NS).get("Id") == f"EVT{nfse.key}{code}{event.seq:03d}"
    assert etree.fromstring(ped).find("s:infPedReg", NS).get("Id") == f"PRE{nfse.key}{code}"
    assert verify_enveloped(event.evento, at=at, profile=SignatureProfile.SEFIN_SHA256)
    assert (
        verify_enveloped(ped, expected_cert_pem=factory.certificate(author).cert_pem, at=at).subject_cnpj == author.doc
    )
    # A pedRegEvento sent by a client is kept byte for byte.
    again = factory.nfse_event(nfse, code=code, author=author, at=at, ped_reg_evento=ped)
    assert extract_signed_element(again.evento, "pedRegEvento") == ped
    assert again.seq == event.seq + 1
