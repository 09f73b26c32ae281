"""XML-DSig: round trips with TestPki certificates, tampering, real signatures, textual extraction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from lxml import etree

from app.fiscal.xmldsig import (
    DS_NS,
    SignatureCertificateInvalid,
    SignatureInvalid,
    SignatureProfile,
    SignedElementNotFound,
    _Signer,
    cert_cnpj,
    extract_signed_element,
    sign_enveloped,
    verify_enveloped,
)
from app.sandbox.pki import IssuedCert, TestPki

FIXTURES = Path(__file__).parent.parent / "fixtures"
NFE_NS = "http://www.portalfiscal.inf.br/nfe"
EVENT_ID = "ID2102103516125871652300011955000000043990187017606801"
EVENTO = (
    f'<evento xmlns="{NFE_NS}" versao="1.00"><infEvento Id="{EVENT_ID}"><cOrgao>91</cOrgao><tpAmb>2</tpAmb>'
    "<CNPJ>11222333000181</CNPJ><chNFe>35161258716523000119550000000439901870176068</chNFe>"
    "<dhEvento>2026-11-10T10:00:00-03:00</dhEvento><tpEvento>210210</tpEvento><nSeqEvento>1</nSeqEvento>"
    '<verEvento>1.00</verEvento><detEvento versao="1.00"><descEvento>Ciencia da Operacao</descEvento>'
    "</detEvento></infEvento></evento>"
).encode()


@pytest.fixture(scope="module")
def pki() -> TestPki:
    return TestPki.create()


@pytest.fixture(scope="module")
def company(pki: TestPki) -> IssuedCert:
    return pki.company_cert("11222333000181", "EMPRESA DE TESTE LTDA")


def _unindent(data: bytes) -> bytes:
    """Drop whitespace-only text nodes: undoes the re-indentation of a published copy."""
    root = etree.fromstring(data)
    for element in root.iter():
        if element.text is not None and not element.text.strip():
            element.text = None
        if element.tail is not None and not element.tail.strip():
            element.tail = None
    return bytes(etree.tostring(root, encoding="UTF-8"))


@pytest.mark.parametrize("profile", list(SignatureProfile))
def test_round_trip_places_an_unprefixed_signature_last(
    profile: SignatureProfile, pki: TestPki, company: IssuedCert
) -> None:
    signed = sign_enveloped(EVENTO, EVENT_ID, company.key_pem, company.cert_pem, profile=profile)

    assert b"ds:" not in signed and f'<Signature xmlns="{DS_NS}">'.encode() in signed
    root = etree.fromstring(signed)
    assert root[-1].tag == f"{{{DS_NS}}}Signature" and root[-2].get("Id") == EVENT_ID
    assert root.find(f".//{{{DS_NS}}}Reference").get("URI") == "#" + EVENT_ID
    key_info = root.find(f".//{{{DS_NS}}}KeyInfo")
    tags = [etree.QName(child).localname for child in key_info.iter()]
    assert tags == ["KeyInfo", "X509Data", "X509Certificate"]
    assert "\n" not in key_info.findtext(f".//{{{DS_NS}}}X509Certificate")
    expected_method = "rsa-sha1" if profile is SignatureProfile.SEFAZ_SHA1 else "rsa-sha256"
    assert root.find(f".//{{{DS_NS}}}SignatureMethod").get("Algorithm").endswith(expected_method)

    result = verify_enveloped(signed, expected_cert_pem=company.cert_pem, ca_pem=pki.ca_cert_pem, profile=profile)
    assert result.subject_cnpj == "11222333000181"
    assert result.reference_id == EVENT_ID
    assert result.cert_pem.startswith(b"-----BEGIN CERTIFICATE-----")


def test_sefaz_transforms_are_c14n_1_0(company: IssuedCert) -> None:
    signed = sign_enveloped(EVENTO, EVENT_ID, company.key_pem, company.cert_pem)
    algorithms = [t.get("Algorithm") for t in etree.fromstring(signed).iter(f"{{{DS_NS}}}Transform")]
    assert algorithms == [
        "http://www.w3.org/2000/09/xmldsig#enveloped-signature",
        "http://www.w3.org/TR/2001/REC-xml-c14n-20010315",
    ]


def test_xml_declaration_follows_the_input(company: IssuedCert) -> None:
    with_decl = sign_enveloped(
        b'<?xml version="1.0" encoding="UTF-8"?>' + EVENTO, EVENT_ID, company.key_pem, company.cert_pem
    )
    assert with_decl.startswith(b'<?xml version="1.0" encoding="UTF-8"?><evento')
    assert sign_enveloped(EVENTO, EVENT_ID, company.key_pem, company.cert_pem).startswith(b"<evento")


def test_tampered_value_is_refused(company: IssuedCert) -> None:
    signed = sign_enveloped(EVENTO, EVENT_ID, company.key_pem, company.cert_pem)
    tampered = signed.replace(b"<nSeqEvento>1</nSeqEvento>", b"<nSeqEvento>2</nSeqEvento>")
    with pytest.raises(SignatureInvalid, match="alterado") as caught:
        verify_enveloped(tampered)
    assert not isinstance(caught.value, SignatureCertificateInvalid)


def test_tampered_signed_info_is_refused(company: IssuedCert) -> None:
    signed = sign_enveloped(EVENTO, EVENT_ID, company.key_pem, company.cert_pem)
    digest = etree.fromstring(signed).findtext(f".//{{{DS_NS}}}DigestValue").encode()
    with pytest.raises(SignatureInvalid):
        verify_enveloped(signed.replace(digest, b"A" + digest[1:]))


def test_other_certificate_or_ca_is_a_certificate_error(pki: TestPki, company: IssuedCert) -> None:
    signed = sign_enveloped(EVENTO, EVENT_ID, company.key_pem, company.cert_pem)
    other = pki.company_cert("11444777000161", "OUTRA EMPRESA")
    with pytest.raises(SignatureCertificateInvalid, match="outro certificado"):
        verify_enveloped(signed, expected_cert_pem=other.cert_pem)
    with pytest.raises(SignatureCertificateInvalid, match="autoridade certificadora"):
        verify_enveloped(signed, ca_pem=TestPki.create().ca_cert_pem)


def test_expired_certificate_is_a_certificate_error(pki: TestPki) -> None:
    now = datetime.now(UTC)
    expired = pki.company_cert("11222333000181", "VENCIDA", not_after=now - timedelta(days=2))
    signed = sign_enveloped(EVENTO, EVENT_ID, expired.key_pem, expired.cert_pem)
    with pytest.raises(SignatureCertificateInvalid, match="validade"):
        verify_enveloped(signed)
    # Valid at the moment it was used: a verification "as of" that moment passes.
    assert verify_enveloped(signed, at=now - timedelta(days=3)).subject_cnpj == "11222333000181"


def test_prefixed_signature_verifies_but_not_under_the_sefaz_profile(company: IssuedCert) -> None:
    """Documented behaviour: ``ds:`` is valid XML-DSig, but the SEFAZ standard forbids it (404/298)."""
    signer = _Signer(SignatureProfile.SEFAZ_SHA1)
    signer.namespaces = {"ds": DS_NS}
    root = etree.fromstring(EVENTO)
    etree.SubElement(root, f"{{{DS_NS}}}Signature", Id="placeholder", nsmap={"ds": DS_NS})
    cert_b64 = "".join(company.cert_pem.decode().splitlines()[1:-1])
    signed_tree = signer.sign(root, key=company.key_pem, cert=[cert_b64], reference_uri="#" + EVENT_ID)
    signed = etree.tostring(signed_tree)
    assert b"<ds:Signature" in signed
    assert verify_enveloped(signed).reference_id == EVENT_ID
    with pytest.raises(SignatureInvalid, match="prefixo"):
        verify_enveloped(signed, profile=SignatureProfile.SEFAZ_SHA1)


def test_unknown_reference_and_unsigned_documents(company: IssuedCert) -> None:
    with pytest.raises(SignatureInvalid, match="não encontrado"):
        sign_enveloped(EVENTO, "ID000", company.key_pem, company.cert_pem)
    with pytest.raises(SignatureInvalid, match="sem assinatura"):
        verify_enveloped(EVENTO)


def test_real_2016_event_signature_verifies_once_unindented() -> None:
    published = (FIXTURES / "nfe" / "procEventoNFe-210200-real-2016.xml").read_bytes()
    signed_at = datetime(2016, 12, 30, 21, 19, 41, tzinfo=UTC)
    # The copy was re-indented for a web page; whitespace inside SignedInfo breaks the signature.
    with pytest.raises(SignatureInvalid):
        verify_enveloped(published, at=signed_at)
    original = _unindent(published)
    result = verify_enveloped(original, at=signed_at, profile=SignatureProfile.SEFAZ_SHA1)
    assert result.subject_cnpj == "89850341000160"  # the CNPJ of the event's author
    assert result.reference_id == "ID2102003516125871652300011955000000043990187017606801"
    # The same signature checked on the evento cut out of the procEventoNFe.
    evento = extract_signed_element(original, "evento")
    assert evento.startswith(b'<evento xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.00">')
    assert verify_enveloped(evento, at=signed_at).subject_cnpj == "89850341000160"


def test_real_sefin_nfse_signature_verifies() -> None:
    data = (FIXTURES / "nfse" / "nfse-homolog-2025.xml").read_bytes()
    processed = datetime.fromisoformat(etree.fromstring(data).findtext(".//{*}dhProc"))
    result = verify_enveloped(data, at=processed, profile=SignatureProfile.SEFIN_SHA256)
    assert result.reference_id.startswith("NFS")
    assert result.signature_method == "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"


def test_real_nfe_samples_carry_no_verifiable_signature() -> None:
    """The nfelib NF-e samples were edited: one lost its Signature, one its Reference URI (#NFei...)."""
    unsigned = (FIXTURES / "nfe" / "42210775277525000178550030000266631762885493-procNFe.xml").read_bytes()
    with pytest.raises(SignatureInvalid, match="sem assinatura"):
        verify_enveloped(unsigned)
    edited = (FIXTURES / "nfe" / "41170706117473000150550010000463202612756525-procNFe.xml").read_bytes()
    assert b'URI="#NFei41170706' in edited
    with pytest.raises(SignatureInvalid):
        verify_enveloped(_unindent(edited), at=datetime(2017, 7, 12, tzinfo=UTC))


def test_signed_element_embedded_in_soap_verifies_only_after_extraction(company: IssuedCert) -> None:
    signed = sign_enveloped(EVENTO, EVENT_ID, company.key_pem, company.cert_pem)
    # Embedded as a client would: the evento inherits the default namespace from envEvento.
    inner = signed.replace(f'<evento xmlns="{NFE_NS}" '.encode(), b"<evento ", 1)
    envelope = (
        b'<soap12:Envelope xmlns:soap12="http://www.w3.org/2003/05/soap-envelope" '
        b'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soap12:Body>'
        b'<nfeDadosMsg xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4">'
        + f'<envEvento xmlns="{NFE_NS}" versao="1.00"><idLote>1</idLote>'.encode()
        + inner
        + b"</envEvento></nfeDadosMsg></soap12:Body></soap12:Envelope>"
    )
    with pytest.raises(SignatureInvalid):
        verify_enveloped(envelope)
    extracted = extract_signed_element(envelope, "evento")
    assert extracted == signed
    assert verify_enveloped(extracted, expected_cert_pem=company.cert_pem).reference_id == EVENT_ID


def test_extract_handles_prefixed_elements_nesting_and_absence() -> None:
    doc = (
        b'<a:root xmlns:a="urn:a" xmlns:b="urn:b"><a:x Id="1"><a:x Id="2"/><b:y/></a:x>'
        b"<!-- <a:x> --><a:x Id='3'>t</a:x></a:root>"
    )
    first = extract_signed_element(doc, "x")
    assert first == b'<a:x xmlns:a="urn:a" xmlns:b="urn:b" Id="1"><a:x Id="2"/><b:y/></a:x>'
    assert extract_signed_element(doc, "x", index=2) == b"<a:x xmlns:a=\"urn:a\" Id='3'>t</a:x>"
    with pytest.raises(SignedElementNotFound):
        extract_signed_element(doc, "evento")


def test_cert_cnpj_reads_the_icp_oid_then_the_common_name(pki: TestPki) -> None:
    alnum = pki.company_cert("12ABC34501DE35", "ALFA LTDA")
    assert cert_cnpj(alnum.cert_pem) == "12ABC34501DE35"
    cn_only = pki.company_cert("11222333000181", "SO CN", include_cnpj_oid=False)
    assert cert_cnpj(cn_only.cert_pem) == "11222333000181"
    neither = pki.company_cert("11222333000181", "NADA", include_cnpj_oid=False, cn_style=False)
    assert cert_cnpj(neither.cert_pem) is None
