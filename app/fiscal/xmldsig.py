"""Enveloped XML-DSig as the fiscal services use it: sign and verify, keeping the original bytes.

Two profiles (protocol.md §3.4, §4.9):
  SEFAZ_SHA1   C14N 1.0 (REC-xml-c14n-20010315), RSA-SHA1, SHA-1 digest: NF-e, CT-e, events, DPS,
               pedRegEvento.
  SEFIN_SHA256 exclusive C14N with comments, RSA-SHA256, SHA-256: how the Sefin Nacional signs the
               NFS-e it generates (real homologation NFS-e in tests/fixtures/nfse).
Both produce an unprefixed ``<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">`` as the last
child of the parent of the signed element (after infEvento/infNFe/infCte/infDPS/infPedReg),
``Reference URI="#Id"`` with the enveloped-signature + C14N transforms and a KeyInfo holding only
the leaf certificate.

signxml does the cryptography, with two adjustments (libraries.md §4): its signer refuses SHA-1
unless subclassed, and its verifier needs ``excise_empty_xmlns_declarations`` for unprefixed
signatures. A signature covers bytes, so callers keep the bytes ``sign_enveloped`` returns and
verify a signed element found inside a larger document after extracting it textually
(``extract_signed_element``); re-serialising a subtree drags the ancestors' namespace declarations
into the inclusive C14N and breaks the digest.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature as CryptoInvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from lxml import etree
from signxml.algorithms import (
    CanonicalizationMethod,
    DigestAlgorithm,
    SignatureConstructionMethod,
    SignatureMethod,
)
from signxml.exceptions import (
    InvalidCertificate,
    InvalidDigest,
    InvalidInput,
    InvalidSignature,
    SignXMLException,
)
from signxml.signer import XMLSigner
from signxml.verifier import SignatureConfiguration, XMLVerifier

from app.certs.a1 import A1Certificate
from app.core.errors import CapturaError

DS_NS = "http://www.w3.org/2000/09/xmldsig#"
_DS = f"{{{DS_NS}}}"
# ICP-Brasil otherName carrying the company's CNPJ (DOC-ICP-04, 2.16.76.1.3.3).
OID_ICP_CNPJ = "2.16.76.1.3.3"

_SHA256 = hashes.SHA256()
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


class SignatureInvalid(CapturaError):
    """The XML signature is missing, malformed, or does not match the signed content or certificate."""


class SignatureCertificateInvalid(SignatureInvalid):
    """The signature matches, but its certificate is not the expected one, expired or not from the CA.

    A separate class so a service can answer the certificate cStat (290-296) apart from 297.
    """


class SignedElementNotFound(SignatureInvalid):
    """``extract_signed_element`` did not find the element in the document."""


class SignatureProfile(Enum):
    """Algorithms of a signature: the SEFAZ standard or the one the Sefin Nacional uses for NFS-e."""

    SEFAZ_SHA1 = "sefaz-sha1"
    SEFIN_SHA256 = "sefin-sha256"

    @property
    def c14n(self) -> CanonicalizationMethod:
        if self is SignatureProfile.SEFAZ_SHA1:
            return CanonicalizationMethod.CANONICAL_XML_1_0
        return CanonicalizationMethod.EXCLUSIVE_XML_CANONICALIZATION_1_0_WITH_COMMENTS

    @property
    def signature_method(self) -> SignatureMethod:
        return SignatureMethod.RSA_SHA1 if self is SignatureProfile.SEFAZ_SHA1 else SignatureMethod.RSA_SHA256

    @property
    def digest(self) -> DigestAlgorithm:
        return DigestAlgorithm.SHA1 if self is SignatureProfile.SEFAZ_SHA1 else DigestAlgorithm.SHA256


@dataclass(frozen=True, slots=True)
class VerifiedSignature:
    """What a successful verification established: who signed, and what."""

    cert_pem: bytes
    subject_cnpj: str | None
    reference_id: str
    signature_method: str


class _Signer(XMLSigner):
    """Enveloped, unprefixed signature; SHA-1 allowed because the SEFAZ layouts require it."""

    def __init__(self, profile: SignatureProfile) -> None:
        super().__init__(
            method=SignatureConstructionMethod.enveloped,
            signature_algorithm=profile.signature_method,
            digest_algorithm=profile.digest,
            c14n_algorithm=profile.c14n,
        )
        self.namespaces = {None: DS_NS}  # type: ignore[dict-item]  # signxml's annotation omits None

    def check_deprecated_methods(self) -> None:
        # signxml >= 3.1 raises for SHA-1; the fiscal layouts mandate it (signxml #234, #252).
        pass


class _Verifier(XMLVerifier):
    # lxml's inclusive C14N of a sub-tree adds xmlns="" to grandchildren of a default-namespace
    # Signature; without this every SEFAZ signature fails (libraries.md §4).
    excise_empty_xmlns_declarations = True


@functools.lru_cache(maxsize=512)
def _load_key(key_pem: bytes) -> rsa.RSAPrivateKey:
    key = serialization.load_pem_private_key(key_pem, password=None)
    if not isinstance(key, rsa.RSAPrivateKey):
        raise SignatureInvalid("A chave privada do certificado não é RSA.")
    return key


@functools.lru_cache(maxsize=512)
def _cert_text(cert_pem: bytes) -> str:
    cert = x509.load_pem_x509_certificate(cert_pem)
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode("ascii")


def _parse(xml: bytes) -> Any:
    try:
        root = etree.fromstring(xml, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise SignatureInvalid(f"XML malformado, assinatura não verificável: {exc}") from exc
    docinfo = root.getroottree().docinfo
    if docinfo.internalDTD is not None or docinfo.doctype:
        raise SignatureInvalid("XML com DOCTYPE recusado.")
    return root


def sign_enveloped(
    xml: bytes,
    reference_id: str,
    key_pem: bytes | rsa.RSAPrivateKey,
    cert_pem: bytes,
    *,
    profile: SignatureProfile = SignatureProfile.SEFAZ_SHA1,
    xml_declaration: bool | None = None,
) -> bytes:
    """Sign the element whose ``Id`` is ``reference_id``; return the whole document as UTF-8 bytes.

    The Signature becomes the last child of that element's parent. ``xml_declaration=None`` keeps
    the input's choice (a declaration is written only if the input had one).
    """
    root = _parse(xml)
    targets = root.xpath("//*[@Id=$id]", id=reference_id)
    if len(targets) != 1:
        raise SignatureInvalid(f"Elemento com Id {reference_id!r} não encontrado (ou repetido) no XML a assinar.")
    parent = targets[0].getparent()
    if parent is None:
        raise SignatureInvalid("O elemento assinado não pode ser a raiz do documento (envelopada).")
    # signxml replaces a placeholder Signature with the real one, which fixes its position.
    etree.SubElement(parent, f"{_DS}Signature", Id="placeholder", nsmap={None: DS_NS})
    key = key_pem if isinstance(key_pem, rsa.RSAPrivateKey) else _load_key(bytes(key_pem))
    try:
        signed = _Signer(profile).sign(
            root, key=key, cert=[_cert_text(bytes(cert_pem))], reference_uri="#" + reference_id
        )
    except SignXMLException as exc:
        raise SignatureInvalid(f"Falha ao assinar o XML: {exc}") from exc
    # Base64 on one line, as the authorities write it; both elements lie outside SignedInfo.
    for tag in ("SignatureValue", "X509Certificate"):
        for node in signed.iter(f"{_DS}{tag}"):
            node.text = "".join((node.text or "").split())
    body: bytes = etree.tostring(signed, encoding="UTF-8", xml_declaration=False)
    if xml_declaration is None:
        xml_declaration = xml.lstrip().startswith(b"<?xml")
    return b'<?xml version="1.0" encoding="UTF-8"?>' + body if xml_declaration else body


def sign_with_a1(xml: bytes, reference_id: str, a1: A1Certificate) -> bytes:
    """:func:`sign_enveloped` (SEFAZ profile) with a company's A1, as every event we send is signed
    (NF-e ``evento``, NFS-e ``pedRegEvento``); raises :class:`SignatureInvalid` with the reason."""
    if not isinstance(a1.private_key, rsa.RSAPrivateKey):
        raise SignatureInvalid("A chave privada do certificado A1 não é RSA; os eventos exigem assinatura RSA-SHA1.")
    return sign_enveloped(xml, reference_id, a1.private_key, a1.certificate.public_bytes(serialization.Encoding.PEM))


# ---------------------------------------------------------------- known-canonical documents
# An event we build, or a document the sandbox generates, is written already in canonical form, so
# its digest needs no XML round trip and the SEFAZ_SHA1 signature is one RSA operation over a fixed
# SignedInfo. signxml costs ~1-2 ms a document in parsing and serialising (tens of thousands of
# events and sandbox documents a month); these give the same bytes sign_enveloped gives, which the
# tests of both callers compare byte for byte.

C14N_10 = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
_FIXED_ALGORITHMS = (
    ("CanonicalizationMethod", C14N_10),
    ("SignatureMethod", f"{DS_NS}rsa-sha1"),
)
_FIXED_TRANSFORMS = (f"{DS_NS}enveloped-signature", C14N_10)


def sha1_digest(canonical: bytes) -> str:
    """A DigestValue of the SEFAZ profile: base64 SHA-1 of the canonical bytes."""
    return base64.b64encode(hashlib.sha1(canonical, usedforsecurity=False).digest()).decode("ascii")


def _fixed_signed_info(reference_id: str, digest: str, *, canonical: bool) -> str:
    """SignedInfo in C14N form (what is signed) or as sign_enveloped serialises it."""

    def leaf(tag: str, algorithm: str) -> str:
        return f'<{tag} Algorithm="{algorithm}"' + (f"></{tag}>" if canonical else "/>")

    return (
        (f'<SignedInfo xmlns="{DS_NS}">' if canonical else "<SignedInfo>")
        + "".join(leaf(tag, algorithm) for tag, algorithm in _FIXED_ALGORITHMS)
        + f'<Reference URI="#{reference_id}"><Transforms>'
        + "".join(leaf("Transform", algorithm) for algorithm in _FIXED_TRANSFORMS)
        + "</Transforms>"
        + leaf("DigestMethod", f"{DS_NS}sha1")
        + f"<DigestValue>{digest}</DigestValue></Reference></SignedInfo>"
    )


def sefaz_signature_element(reference_id: str, digest: str, key: rsa.RSAPrivateKey, cert_b64: str) -> str:
    """The enveloped ``<Signature>`` (SEFAZ_SHA1) of the part ``Id=reference_id`` whose canonical
    digest is ``digest`` (:func:`sha1_digest`); ``cert_b64`` is the signer's DER in base64."""
    signed_info = _fixed_signed_info(reference_id, digest, canonical=True).encode("ascii")
    value = key.sign(signed_info, padding.PKCS1v15(), hashes.SHA1())  # noqa: S303 - the layouts mandate it
    return (
        f'<Signature xmlns="{DS_NS}">'
        + _fixed_signed_info(reference_id, digest, canonical=False)
        + f"<SignatureValue>{base64.b64encode(value).decode('ascii')}</SignatureValue>"
        + f"<KeyInfo><X509Data><X509Certificate>{cert_b64}</X509Certificate></X509Data></KeyInfo>"
        + "</Signature>"
    )


def _pick_signature(root: Any) -> tuple[Any, str]:
    """The Signature to check: a child of the root, else the only one in the document."""
    direct = root.findall(f"{_DS}Signature")
    if len(direct) == 1:
        return direct[0], "./"
    anywhere = root.findall(f".//{_DS}Signature")
    if len(anywhere) == 1:
        return anywhere[0], ".//"
    if not anywhere:
        raise SignatureInvalid("Documento sem assinatura digital (elemento Signature ausente).")
    raise SignatureInvalid("Documento com várias assinaturas: extraia o elemento assinado antes de verificar.")


def _leaf_cert(signature: Any) -> x509.Certificate:
    text = signature.findtext(f"{_DS}KeyInfo/{_DS}X509Data/{_DS}X509Certificate")
    if not text or not text.strip():
        raise SignatureInvalid("Assinatura sem certificado (KeyInfo/X509Data/X509Certificate).")
    try:
        return x509.load_der_x509_certificate(base64.b64decode("".join(text.split())))
    except ValueError as exc:
        raise SignatureInvalid("Certificado da assinatura ilegível.") from exc


def _check_issued_by(cert: x509.Certificate, ca_pem: bytes) -> None:
    """Walk from ``cert`` up through the certificates in ``ca_pem`` to a self-signed one."""
    pool = x509.load_pem_x509_certificates(ca_pem)
    current = cert
    for _ in range(len(pool) + 1):
        issuer = next((c for c in pool if c.subject == current.issuer and _issued(current, c)), None)
        if issuer is None:
            break
        if issuer.subject == issuer.issuer:
            return
        current = issuer
    raise SignatureCertificateInvalid(
        "O certificado da assinatura não foi emitido pela autoridade certificadora esperada."
    )


def _issued(child: x509.Certificate, parent: x509.Certificate) -> bool:
    try:
        child.verify_directly_issued_by(parent)
    except (ValueError, TypeError, CryptoInvalidSignature):
        return False
    return True


def verify_enveloped(
    xml: bytes,
    *,
    expected_cert_pem: bytes | None = None,
    ca_pem: bytes | None = None,
    at: datetime | None = None,
    profile: SignatureProfile | None = None,
) -> VerifiedSignature:
    """Check the enveloped signature of ``xml`` (the signed element's parent, or a document holding one).

    The signature checked is the root's Signature child, else the document's only Signature.
    ``expected_cert_pem`` pins the signer; ``ca_pem`` (one or more PEM certificates) requires the
    signer to chain to them; ``at`` is when the certificate must be valid (default: now), e.g.
    the event's dhEvento for an old document. ``profile`` demands that profile's algorithms and,
    for SEFAZ, no namespace prefix (the real services answer 404/298 to anything else).
    Raises SignatureInvalid (or SignatureCertificateInvalid) on any mismatch.
    """
    root = _parse(xml)
    signature, location = _pick_signature(root)
    if profile is SignatureProfile.SEFAZ_SHA1 and signature.prefix is not None:
        raise SignatureInvalid("Assinatura com prefixo de namespace (ds:), fora do padrão SEFAZ.")
    leaf = _leaf_cert(signature)
    leaf_pem = leaf.public_bytes(serialization.Encoding.PEM)
    if expected_cert_pem is not None:
        expected = x509.load_pem_x509_certificate(expected_cert_pem)
        if expected.fingerprint(_SHA256) != leaf.fingerprint(_SHA256):
            raise SignatureCertificateInvalid("A assinatura foi feita com outro certificado, não o esperado.")
    when = (at or datetime.now(UTC)).astimezone(UTC)
    if not leaf.not_valid_before_utc <= when <= leaf.not_valid_after_utc:
        raise SignatureCertificateInvalid(
            f"Certificado da assinatura fora da validade em {when:%d/%m/%Y %H:%M} UTC "
            f"(válido de {leaf.not_valid_before_utc:%d/%m/%Y} a {leaf.not_valid_after_utc:%d/%m/%Y})."
        )
    if ca_pem is not None:
        _check_issued_by(leaf, ca_pem)
    methods = (profile,) if profile else tuple(SignatureProfile)
    config = SignatureConfiguration(
        location=location,
        signature_methods=frozenset(p.signature_method for p in methods),
        digest_algorithms=frozenset(p.digest for p in methods),
        verification_time=when,
    )
    try:
        result = _Verifier().verify(xml, x509_cert=leaf, expect_config=config)
    except InvalidDigest as exc:
        raise SignatureInvalid("Assinatura digital inválida: o conteúdo assinado foi alterado.") from exc
    except InvalidCertificate as exc:
        raise SignatureCertificateInvalid(f"Certificado da assinatura inválido: {exc}") from exc
    except (InvalidSignature, InvalidInput, SignXMLException, etree.DocumentInvalid, ValueError) as exc:
        raise SignatureInvalid(f"Assinatura digital inválida: {exc}") from exc
    reference = signature.find(f"{_DS}SignedInfo/{_DS}Reference")
    method = signature.find(f"{_DS}SignedInfo/{_DS}SignatureMethod")
    del result  # signxml's re-canonicalised payload; callers keep their own bytes
    return VerifiedSignature(
        cert_pem=leaf_pem,
        subject_cnpj=cert_cnpj(leaf),
        reference_id=(reference.get("URI") or "").lstrip("#") if reference is not None else "",
        signature_method=method.get("Algorithm", "") if method is not None else "",
    )


def _der_string(value: bytes) -> str | None:
    """Content of a DER OCTET STRING / PrintableString / UTF8String (the otherName values)."""
    if len(value) < 2:
        return None
    length = value[1]
    start = 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(value[2 : 2 + count], "big")
        start = 2 + count
    return value[start : start + length].decode("latin-1")


def cert_cnpj(cert: x509.Certificate | bytes) -> str | None:
    """The CNPJ of an e-CNPJ: the ICP-Brasil otherName 2.16.76.1.3.3, else the ``NAME:CNPJ`` CN."""
    if isinstance(cert, bytes):
        cert = x509.load_pem_x509_certificate(cert)
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        san = None
    if san is not None:
        for other in san.get_values_for_type(x509.OtherName):
            if other.type_id.dotted_string == OID_ICP_CNPJ:
                text = _der_string(other.value)
                if text and re.fullmatch(r"[0-9A-Z]{12}[0-9]{2}", text.strip()):
                    return text.strip()
    for attribute in cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME):
        found = re.search(r":([0-9A-Z]{12}[0-9]{2})$", str(attribute.value))
        if found:
            return found.group(1)
    return None


# --- textual extraction ----------------------------------------------------------------------

_TOKEN = re.compile(
    rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>"
    rb"|<(?P<close>/)?(?P<name>[A-Za-z_][\w.\-]*(?::[A-Za-z_][\w.\-]*)?)"
    rb"(?P<attrs>(?:\s+[^\s=/>]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*)\s*(?P<empty>/)?>",
    re.DOTALL,
)
_XMLNS_ATTR = re.compile(rb"\sxmlns(?::([\w.\-]+))?\s*=")


def extract_signed_element(document: bytes, local_name: str, *, index: int = 0) -> bytes:
    """The bytes of the ``index``-th element named ``local_name``, standalone.

    The element is cut out of ``document`` as it is written (no re-serialisation) and its start
    tag gets the namespace declarations it inherited and uses, e.g. ``<evento versao="1.00">``
    inside an envEvento becomes ``<evento xmlns="http://www.portalfiscal.inf.br/nfe" ...>``, which
    is what the signer canonicalised.
    """
    seen = -1
    stack_depth = 0
    start = start_tag_end = -1
    qname = b""
    for match in _TOKEN.finditer(document):
        name = match.group("name")
        if name is None:
            continue
        local = name.rsplit(b":", 1)[-1].decode("ascii", "replace")
        if start < 0:
            if match.group("close") or local != local_name:
                continue
            seen += 1
            if seen != index:
                continue
            start, start_tag_end, qname = match.start(), match.end(), name
            if match.group("empty"):
                return _with_namespaces(document, start, start_tag_end, match.end())
            stack_depth = 1
            continue
        if name != qname:
            continue
        if match.group("close"):
            stack_depth -= 1
            if stack_depth == 0:
                return _with_namespaces(document, start, start_tag_end, match.end())
        elif not match.group("empty"):
            stack_depth += 1
    raise SignedElementNotFound(f"Elemento {local_name!r} não encontrado no documento.")


def _with_namespaces(document: bytes, start: int, start_tag_end: int, end: int) -> bytes:
    fragment = document[start:end]
    root = _parse(document)
    # The same element in the parsed tree tells its in-scope namespaces.
    target = _element_at_offset(root, document, start)
    declared = {m.group(1) for m in _XMLNS_ATTR.finditer(document[start:start_tag_end])}
    used: set[str | None] = set()
    for element in target.iter():
        if isinstance(element.tag, str):
            used.add(element.prefix)
            for attribute in element.attrib:
                if attribute.startswith("{"):
                    used.add(_prefix_for(element, attribute))
    additions = []
    for prefix in sorted(used, key=lambda p: p or ""):
        uri = target.nsmap.get(prefix)
        key = prefix.encode() if prefix else None
        if uri is None or key in declared:
            continue
        attr = f' xmlns:{prefix}="{uri}"' if prefix else f' xmlns="{uri}"'
        additions.append(attr.encode())
    if not additions:
        return fragment
    name_end = re.match(rb"<[^\s/>]+", fragment)
    assert name_end is not None
    cut = name_end.end()
    return fragment[:cut] + b"".join(additions) + fragment[cut:]


def _prefix_for(element: Any, attribute: str) -> str | None:
    uri = attribute[1:].split("}", 1)[0]
    for prefix, value in element.nsmap.items():
        if value == uri and prefix is not None:
            return str(prefix)
    return None


def _element_at_offset(root: Any, document: bytes, offset: int) -> Any:
    """The parsed element whose start tag begins at byte ``offset`` (counted by start tags)."""
    ordinal = sum(
        1 for m in _TOKEN.finditer(document, 0, offset) if m.group("name") is not None and not m.group("close")
    )
    elements = [e for e in root.iter() if isinstance(e.tag, str)]
    return elements[ordinal]
