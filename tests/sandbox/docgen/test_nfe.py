"""NF-e 4.00 generation: nfeProc and resNFe valid, keys and signatures right."""

from __future__ import annotations

from collections.abc import Callable

from lxml import etree

from app.core.ids import Cnpj
from app.core.keys import AccessKey
from app.fiscal.xmldsig import DS_NS, SignatureProfile, verify_enveloped
from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.pki import TestPki

from .conftest import ISSUED_AT

NS = {"n": "http://www.portalfiscal.inf.br/nfe", "ds": DS_NS}
PROC = "nfe/schemas/v4_0/procNFe_v4.00.xsd"
RES = "nfe_dist_dfe/schemas/v1_0/resNFe_v1.01.xsd"


def test_nfe_proc_and_res_nfe_are_valid_and_consistent(
    factory: DocumentFactory,
    supplier: Party,
    client: Party,
    carrier: Party,
    person: Party,
    xsd: Callable[[bytes, str], None],
) -> None:
    nfe = factory.nfe(
        emitter=supplier,
        recipient=client,
        issued_at=ISSUED_AT,
        total_cents=123_456,
        transporter=carrier,
        aut_xml=[person.doc],
        items=4,
    )
    xsd(nfe.nfe_proc, PROC)
    xsd(nfe.res_nfe, RES)
    assert nfe.nfe_proc.startswith(b'<?xml version="1.0" encoding="UTF-8"?><nfeProc')

    key = AccessKey(nfe.key)  # raises on a wrong check digit
    assert (key.uf, key.model, key.year_month, key.issuer_id) == ("SP", "55", "2611", supplier.doc)
    root = etree.fromstring(nfe.nfe_proc)
    assert root.xpath("string(n:NFe/n:infNFe/@Id)", namespaces=NS) == "NFe" + nfe.key
    assert root.xpath("string(n:NFe/n:infNFe/n:ide/n:cNF)", namespaces=NS) == key.code
    assert root.xpath("string(n:NFe/n:infNFe/n:ide/n:cDV)", namespaces=NS) == str(key.check_digit)
    assert root.xpath("string(n:NFe/n:infNFe/n:total/n:ICMSTot/n:vNF)", namespaces=NS) == "1234.56"
    assert len(root.xpath("n:NFe/n:infNFe/n:det", namespaces=NS)) == 4
    assert root.xpath("string(n:NFe/n:infNFe/n:transp/n:transporta/n:CNPJ)", namespaces=NS) == carrier.doc
    assert root.xpath("string(n:NFe/n:infNFe/n:autXML/n:CPF)", namespaces=NS) == person.doc
    # protNFe: authorised, digVal is the signature's digest of infNFe.
    assert root.xpath("string(n:protNFe/n:infProt/n:cStat)", namespaces=NS) == "100"
    assert root.xpath("string(n:protNFe/n:infProt/n:nProt)", namespaces=NS) == nfe.protocol
    digest = root.xpath("string(n:NFe/ds:Signature/ds:SignedInfo/ds:Reference/ds:DigestValue)", namespaces=NS)
    assert root.xpath("string(n:protNFe/n:infProt/n:digVal)", namespaces=NS) == digest == nfe.dig_val
    assert etree.QName(root.find("n:NFe", NS)[-1]).localname == "Signature"
    res = etree.fromstring(nfe.res_nfe)
    assert res.xpath("string(n:chNFe)", namespaces=NS) == nfe.key
    assert res.xpath("string(n:digVal)", namespaces=NS) == nfe.dig_val
    assert res.xpath("string(n:cSitNFe)", namespaces=NS) == "1"


def test_nfe_signature_is_the_emitters(factory: DocumentFactory, supplier: Party, client: Party, pki: TestPki) -> None:
    nfe = factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT)
    result = verify_enveloped(
        nfe.nfe_proc,
        expected_cert_pem=factory.certificate(supplier).cert_pem,
        ca_pem=pki.ca_cert_pem,
        at=ISSUED_AT,
        profile=SignatureProfile.SEFAZ_SHA1,
    )
    assert result.subject_cnpj == supplier.doc
    assert result.reference_id == "NFe" + nfe.key
    assert b"ds:" not in nfe.nfe_proc


def test_alphanumeric_cnpj_emitter(
    factory: DocumentFactory, carrier: Party, person: Party, xsd: Callable[[bytes, str], None]
) -> None:
    nfe = factory.nfe(emitter=carrier, recipient=person, issued_at=ISSUED_AT)
    xsd(nfe.nfe_proc, PROC)
    xsd(nfe.res_nfe, RES)
    key = AccessKey(nfe.key)
    assert not key.value.isdigit() and key.issuer() == Cnpj("12ABC34501DE35")
    assert verify_enveloped(nfe.nfe_proc, at=ISSUED_AT).subject_cnpj == "12ABC34501DE35"
    # A recipient without IE is a non-contributor.
    root = etree.fromstring(nfe.nfe_proc)
    assert root.xpath("string(//n:dest/n:indIEDest)", namespaces=NS) == "9"


def test_numbers_follow_per_issuer_and_seed_is_reproducible(pki: TestPki, supplier: Party, client: Party) -> None:
    first, second = DocumentFactory(pki, seed=7), DocumentFactory(pki, seed=7)
    a1 = first.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT)
    a2 = first.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT)
    b1 = second.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT)
    assert AccessKey(a2.key).number == AccessKey(a1.key).number + 1
    assert b1.key == a1.key and b1.res_nfe == a1.res_nfe
    other = DocumentFactory(pki, seed=8).nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT)
    assert other.key != a1.key
