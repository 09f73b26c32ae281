"""Fast SEFAZ signatures (C14N 1.0, RSA-SHA1) for the documents the generator writes itself.

``app.fiscal.xmldsig.sign_enveloped`` (signxml) costs ~2 ms a document, mostly XML round trips.
The generator's documents are already in canonical shape (no whitespace between elements, text
escaped as C14N escapes it, one default namespace declared on the root), so their canonical
form is a string operation: the DigestValue is known at publication without signing, and the
signature is one RSA operation on a fixed SignedInfo. The output is byte-identical to
``sign_enveloped`` (PKCS#1 v1.5 is deterministic; tests/sandbox/docgen/test_signing.py compares
them), and before signing, the digest is checked against lxml's own canonicalisation.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric import rsa
from lxml import etree

from app.fiscal.xmldsig import sefaz_signature_element, sha1_digest

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
_ATTR = re.compile(r'([A-Za-z_][\w.\-]*)="([^"<&\t\n]*)"')
_START = re.compile(r"<([A-Za-z_][\w.\-]*)\s+([^>]*)>")
# Text C14N would write differently from the generator (carriage returns, character references,
# comments, CDATA...): such a document takes lxml's canonicalisation from the start.
_NOT_CANONICAL = ("\r", "&#", "&apos;", "&quot;", "<!", "<?")


class CanonicalMismatch(AssertionError):
    """The textual canonical form differs from lxml's: the generator wrote something unusual."""


@dataclass(frozen=True, slots=True)
class SignerKey:
    """A loaded private key and the base64 DER of its certificate (KeyInfo)."""

    key: rsa.RSAPrivateKey
    cert_b64: str


def canonical_part(document: str, reference_id: str) -> bytes:
    """Inclusive C14N 1.0 of the element ``Id=reference_id``, a child of the root of ``document``.

    ``document`` is ``<Root xmlns="NS"><Part ... Id="..."> ... </Part>...</Root>`` as the generator
    writes it; the part inherits the root's default namespace, which C14N writes on it first,
    before its attributes sorted by name.
    """
    if any(marker in document for marker in _NOT_CANONICAL):
        return lxml_canonical_part(document.encode("utf-8"), reference_id)
    root = _START.match(document)
    part = _START.match(document, root.end()) if root is not None else None
    if root is None or part is None or _ATTR.sub("", root.group(2) + part.group(2)).strip():
        return lxml_canonical_part(document.encode("utf-8"), reference_id)
    namespace = dict(_ATTR.findall(root.group(2))).get("xmlns")
    attrs = sorted(_ATTR.findall(part.group(2)))
    if any(name == "xmlns" for name, _ in attrs):
        return lxml_canonical_part(document.encode("utf-8"), reference_id)
    if dict(attrs).get("Id") != reference_id:
        raise CanonicalMismatch(f"elemento assinado sem Id {reference_id}")
    tag = part.group(1)
    close = f"</{tag}>"
    end = document.index(close, part.end())
    ns = f' xmlns="{namespace}"' if namespace else ""
    head = f"<{tag}{ns}" + "".join(f' {name}="{value}"' for name, value in attrs) + ">"
    return (head + document[part.end() : end + len(close)]).encode("utf-8")


def lxml_canonical_part(document: bytes, reference_id: str) -> bytes:
    """The same canonical form, computed by lxml's C14N (the independent check).

    The part is copied out as a root of its own: lxml's C14N of an element inside a tree writes
    ``xmlns=""`` on its grandchildren (libraries.md §4), while a copy carries the namespaces in
    scope, which for the generator's documents are the root's default namespace only.
    """
    root = etree.fromstring(document, _PARSER)
    part = root[0] if len(root) else None
    if part is None or part.get("Id") != reference_id or set(part.nsmap) - {None}:
        raise CanonicalMismatch(f"elemento assinado {reference_id} fora do formato do gerador")
    canonical: bytes = etree.tostring(copy.deepcopy(part), method="c14n")
    return canonical


def digest_of(canonical: bytes) -> str:
    return sha1_digest(canonical)


def signature_element(reference_id: str, dig_val: str, signer: SignerKey) -> str:
    """The enveloped ``<Signature>`` for a part whose canonical digest is ``dig_val``."""
    return sefaz_signature_element(reference_id, dig_val, signer.key, signer.cert_b64)


def sign_document(document: str, reference_id: str, dig_val: str, signer: SignerKey, *, check: bool = True) -> bytes:
    """``document`` with its Signature as the root's last child, as ``sign_enveloped`` returns it.

    ``dig_val`` was computed from :func:`canonical_part` (at publication); with ``check`` it is
    first confirmed against lxml's canonicalisation, so a signature never carries a wrong digest.
    """
    data = document.encode("utf-8")
    if check:
        actual = digest_of(lxml_canonical_part(data, reference_id))
        if actual != dig_val:
            raise CanonicalMismatch(f"DigestValue {dig_val} difere do C14N do lxml ({actual}) em {reference_id}")
    cut = data.rindex(b"</")
    return data[:cut] + signature_element(reference_id, dig_val, signer).encode("ascii") + data[cut:]
