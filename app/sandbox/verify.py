"""The sandbox's check of a client's SEFAZ event signature: signxml's verdict, a fraction of its cost.

``app.fiscal.xmldsig.verify_enveloped`` (signxml) costs ~0.5-1 ms an event, mostly XML round
trips and a schema validation. An event signed the SEFAZ way (enveloped, C14N 1.0 inclusive,
RSA-SHA1, SHA-1 digest, one ``Reference URI="#Id"`` on the root's first child, the leaf
certificate in KeyInfo, no prefixes), written as the signers write it, is checked here in one
parse: the digest of lxml's C14N of the referenced element, the RSA signature over lxml's C14N
of SignedInfo, both of standalone copies as signxml computes them.

The fast path only ever *accepts*. Any other shape (algorithms, extra elements or attributes,
whitespace inside the Signature, comments, prefixes, ``xml:`` attributes, character references)
and any mismatch go to ``verify_enveloped``, whose exception (297, or the certificate cStats) is
the answer: nothing is accepted that signxml would refuse, and refusals keep their exact error.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography import x509
from cryptography.exceptions import InvalidSignature as CryptoInvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from lxml import etree

from app.fiscal.xmldsig import C14N_10, DS_NS, SignatureProfile, VerifiedSignature, cert_cnpj, verify_enveloped

RSA_SHA1 = DS_NS + "rsa-sha1"
SHA1 = DS_NS + "sha1"
ENVELOPED = DS_NS + "enveloped-signature"
_SIGNATURE_TAG = f"{{{DS_NS}}}Signature"
_MAX_SIZE = 64 * 1024
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)

# The one Signature shape taken here, as sign_enveloped and the app's event signer write it:
# the pieces between the reference Id, DigestValue, SignatureValue and X509Certificate texts.
_SIGNATURE_OPEN = (
    f'<Signature xmlns="{DS_NS}"><SignedInfo><CanonicalizationMethod Algorithm="{C14N_10}"/>'
    f'<SignatureMethod Algorithm="{RSA_SHA1}"/><Reference URI="#'
).encode()
_SIGNATURE_PIECES = tuple(
    piece.encode()
    for piece in (
        f'"><Transforms><Transform Algorithm="{ENVELOPED}"/><Transform Algorithm="{C14N_10}"/></Transforms>'
        f'<DigestMethod Algorithm="{SHA1}"/><DigestValue>',
        "</DigestValue></Reference></SignedInfo><SignatureValue>",
        "</SignatureValue><KeyInfo><X509Data><X509Certificate>",
        "</X509Certificate></X509Data></KeyInfo></Signature>",
    )
)
_ID = re.compile(rb"[A-Za-z0-9_.\-]+")
# Comments, CDATA, DOCTYPE, processing instructions or declarations; xml:* attributes (C14N 1.0
# carries an ancestor's onto a subset's apex); character references (an Id written as one would
# escape the textual count below).
_UNUSUAL = (b"<!", b"<?", b"xml:", b"&#")


@dataclass(frozen=True, slots=True)
class _Signer:
    """A KeyInfo certificate, loaded once."""

    public_key: rsa.RSAPublicKey
    cert_pem: bytes
    subject_cnpj: str | None
    not_before: datetime
    not_after: datetime


@functools.lru_cache(maxsize=2048)
def _signer(cert_b64: bytes) -> _Signer | None:
    """The RSA certificate of a KeyInfo written as strict base64 on one line, else None."""
    try:
        cert = x509.load_der_x509_certificate(binascii.a2b_base64(cert_b64, strict_mode=True))
    except (ValueError, binascii.Error):
        return None
    key = cert.public_key()
    if not isinstance(key, rsa.RSAPublicKey):
        return None
    pem = cert.public_bytes(serialization.Encoding.PEM)
    return _Signer(key, pem, cert_cnpj(cert), cert.not_valid_before_utc, cert.not_valid_after_utc)


def _canonical(element: etree._Element) -> bytes | None:
    """Inclusive C14N 1.0 of ``element`` as signxml computes it: of a standalone copy.

    (lxml's C14N of an element in place writes ``xmlns=""`` on grandchildren; libraries.md §4.)
    """
    copy = etree.fromstring(etree.tostring(element, with_tail=False), _PARSER)
    canonical: bytes = etree.tostring(copy, method="c14n")
    # signxml strips every ' xmlns=""' from its C14N; a document holding one is left to it.
    return None if b' xmlns=""' in canonical else canonical


def _signature_fields(raw: bytes) -> tuple[bytes, list[bytes]] | None:
    """The root's close tag and [Id, DigestValue, SignatureValue, X509Certificate] of the only
    Signature, when it is written exactly as the one shape taken, just before that close tag."""
    start = raw.find(_SIGNATURE_OPEN)
    if start < 0 or raw.rfind(_SIGNATURE_OPEN) != start:
        return None
    fields = []
    position = start + len(_SIGNATURE_OPEN)
    for piece in _SIGNATURE_PIECES:
        end = raw.find(piece, position)
        if end < 0:
            return None
        fields.append(raw[position:end])
        position = end + len(piece)
    # Each field is an Id or base64 (checked by the caller), so holds no markup: the pieces
    # found are the Signature's own, and what follows is the root's close tag.
    if any(b"<" in field for field in fields):
        return None
    return raw[position:].rstrip(), fields


def fast_verify(raw: bytes, *, at: datetime, trusted: frozenset[bytes] | set[bytes]) -> VerifiedSignature | None:
    """The signature of ``raw`` checked without signxml, or None when signxml must decide.

    Returns a result only for the one usual SEFAZ shape, a certificate among ``trusted`` (PEM,
    known to chain to the CA) valid at ``at``, a matching digest and a matching RSA-SHA1 signature.
    """
    if len(raw) > _MAX_SIZE or any(marker in raw for marker in _UNUSUAL):
        return None
    found = _signature_fields(raw)
    if found is None:
        return None
    close, (id_bytes, digest_text, value_text, cert_text) = found
    if not _ID.fullmatch(id_bytes):
        return None
    signer = _signer(cert_text)
    if signer is None or signer.cert_pem not in trusted:
        return None
    if not signer.not_before <= at.astimezone(UTC) <= signer.not_after:
        return None
    try:
        value = binascii.a2b_base64(value_text, strict_mode=True)
        root = etree.fromstring(raw, _PARSER)
    except (ValueError, binascii.Error, etree.XMLSyntaxError):
        return None
    # Two namespace declarations in all: the root's default one and the Signature's. With no
    # ``xmlns:`` (nor ``xml:``) anywhere, no element or attribute carries a prefix.
    if raw.count(b"xmlns") != 2 or set(root.nsmap) != {None} or root.nsmap[None] == DS_NS:
        return None
    if len(root) != 2 or root[1].tag != _SIGNATURE_TAG or close != f"</{etree.QName(root).localname}>".encode():
        return None
    signed, reference_id = root[0], id_bytes.decode("ascii")
    if signed.get("Id") != reference_id or not (root.text is None or root.text.isspace()):
        return None
    if not (signed.tail is None or signed.tail.isspace()):
        return None
    # signxml refuses an Id held by two elements. With no character references, an attribute
    # holding this Id shows it as written: here only infEvento's Id and the Reference URI do.
    if raw.count(id_bytes) != 2:
        return None
    content = _canonical(signed)
    if content is None:
        return None
    # SHA-1 digest and RSA-SHA1: what the event layout mandates.
    digest = base64.b64encode(hashlib.sha1(content, usedforsecurity=False).digest())
    if digest != digest_text:
        return None
    signed_info = _canonical(root[1][0])
    if signed_info is None:
        return None
    try:
        signer.public_key.verify(value, signed_info, padding.PKCS1v15(), hashes.SHA1())  # noqa: S303
    except CryptoInvalidSignature:
        return None
    return VerifiedSignature(
        cert_pem=signer.cert_pem,
        subject_cnpj=signer.subject_cnpj,
        reference_id=reference_id,
        signature_method=RSA_SHA1,
    )


class EventSignatureVerifier:
    """``verify_enveloped(raw, ca_pem=<ca>, at=..., profile=SEFAZ_SHA1)``, fast for the usual event.

    A signer certificate once found to chain to the CA is remembered (a CA certificate does not
    change) and not walked up again; its validity, the digest and the signature are checked on
    every event.
    """

    def __init__(self) -> None:
        self._trusted: dict[x509.Certificate, set[bytes]] = {}  # CA -> leaf PEMs that chain to it

    def verify(self, raw: bytes, *, ca: x509.Certificate, at: datetime) -> VerifiedSignature:
        """Raises ``SignatureInvalid`` / ``SignatureCertificateInvalid`` exactly as ``verify_enveloped``."""
        trusted = self._trusted.setdefault(ca, set())
        if trusted:
            verified = fast_verify(raw, at=at, trusted=trusted)
            if verified is not None:
                return verified
        ca_pem = ca.public_bytes(serialization.Encoding.PEM)
        verified = verify_enveloped(raw, ca_pem=ca_pem, at=at, profile=SignatureProfile.SEFAZ_SHA1)
        trusted.add(verified.cert_pem)
        return verified
