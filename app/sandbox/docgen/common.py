"""Shared pieces of the document generator: parties, text escaping, dates, signers, protocol numbers."""

from __future__ import annotations

import base64
import random
import threading
from dataclasses import dataclass
from datetime import datetime
from xml.sax.saxutils import escape, quoteattr

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lxml import etree

from app.core.clock import brasilia_iso
from app.core.ids import Cnpj
from app.core.keys import CODE_BY_UF, AccessKey, DocumentModel
from app.fiscal.xmldsig import DS_NS, SignatureProfile, sign_enveloped
from app.sandbox.docgen.signing import SignerKey, canonical_part, digest_of, sign_document
from app.sandbox.pki import IssuedCert, TestPki

# The Sefin Nacional and the SEFAZ authorisers sign what they return with their own certificates.
SEFIN_CNPJ = Cnpj.from_body("003944600058").value
AUTHORITY_NAME = "SEFIN NACIONAL NFS-E (TESTE)"

MUNICIPALITIES: dict[str, str] = {
    "3550308": "SAO PAULO",
    "3509502": "CAMPINAS",
    "3304557": "RIO DE JANEIRO",
    "3106200": "BELO HORIZONTE",
    "4106902": "CURITIBA",
    "4205407": "FLORIANOPOLIS",
    "4209102": "JOINVILLE",
    "4202404": "BLUMENAU",
    "4314902": "PORTO ALEGRE",
    "5300108": "BRASILIA",
    "2927408": "SALVADOR",
    "2611606": "RECIFE",
    "2304400": "FORTALEZA",
    "1302603": "MANAUS",
    "1501402": "BELEM",
    "5208707": "GOIANIA",
    "5002704": "CAMPO GRANDE",
    "5103403": "CUIABA",
    "3205309": "VITORIA",
}
_STREETS = (
    "RUA DAS FLORES",
    "AVENIDA BRASIL",
    "RUA XV DE NOVEMBRO",
    "AVENIDA PAULISTA",
    "RUA DO COMERCIO",
    "RODOVIA BR 101",
    "RUA SETE DE SETEMBRO",
    "AVENIDA DAS NACOES",
    "RUA DA INDUSTRIA",
)
_DISTRICTS = ("CENTRO", "DISTRITO INDUSTRIAL", "JARDIM AMERICA", "VILA NOVA", "BELA VISTA", "SAO JOSE")


@dataclass(frozen=True)
class Party:
    """A taxpayer appearing in a document: ``doc`` is a CNPJ (14) or a CPF (11)."""

    doc: str
    name: str
    uf: str = "SP"
    c_mun: str = "3550308"
    ie: str | None = None

    @property
    def is_cpf(self) -> bool:
        return len(self.doc) == 11

    @property
    def doc_tag(self) -> str:
        return "CPF" if self.is_cpf else "CNPJ"

    @property
    def cuf(self) -> str:
        return CODE_BY_UF[self.uf]

    @property
    def x_mun(self) -> str:
        return MUNICIPALITIES.get(self.c_mun, f"MUNICIPIO {self.c_mun}")

    def doc_xml(self, tag: str | None = None) -> str:
        """``<CNPJ>..</CNPJ>`` or ``<CPF>..</CPF>``; ``tag`` overrides the suffix-free name."""
        name = tag + self.doc_tag if tag else self.doc_tag
        return f"<{name}>{self.doc}</{name}>"

    def ie_or_derived(self) -> str:
        """The party's IE, else a stable made-up one (the NF-e emitter must have one)."""
        if self.ie:
            return self.ie
        digits = "".join(str(ord(c) % 10) for c in self.doc)
        return ("1" + digits)[:12]


def esc(text: str) -> str:
    return escape(text)


def attr(text: str) -> str:
    return quoteattr(text)


def money(cents: int) -> str:
    """``1234.56`` from 123456 (integer arithmetic: exact, and cheaper than Decimal)."""
    sign, value = ("-", -cents) if cents < 0 else ("", cents)
    return f"{sign}{value // 100}.{value % 100:02d}"


def dt(value: datetime) -> str:
    """``AAAA-MM-DDThh:mm:ss-03:00``, the layouts' time format."""
    return brasilia_iso(value)


def year_month(value: datetime) -> str:
    return brasilia_iso(value)[2:7].replace("-", "")


def issued_key(emitter: Party, issued_at: datetime, model: DocumentModel, serie: int, number: int, code: int) -> str:
    """The access key of a document ``emitter`` issues at ``issued_at`` in normal emission (tpEmis 1)."""
    return AccessKey.build(
        uf=emitter.uf,
        year_month=year_month(issued_at),
        issuer=emitter.doc,
        model=model,
        serie=serie,
        number=number,
        tp_emis=1,
        code=code,
    ).value


def random_code(rng: random.Random, number: int) -> int:
    """An 8-digit cNF/cCT that follows NT 2019.001: not trivial and different from the number."""
    while True:
        code = rng.randrange(10_000_000, 99_999_999)
        if code != number and len(set(str(code))) > 2:
            return code


def address(rng: random.Random) -> tuple[str, str, str, str]:
    """(street, number, district, CEP)."""
    return (
        rng.choice(_STREETS),
        str(rng.randrange(1, 3000)),
        rng.choice(_DISTRICTS),
        f"{rng.randrange(1_000_000, 99_999_999):08d}",
    )


def phone(rng: random.Random) -> str:
    return f"{rng.randrange(11, 99)}9{rng.randrange(10_000_000, 99_999_999)}"


class Signers:
    """Test certificates per issuer, created on first use and cached with their loaded keys."""

    def __init__(self, pki: TestPki) -> None:
        self._pki = pki
        self._certs: dict[str, IssuedCert] = {}
        self._keys: dict[str, SignerKey] = {}
        self._signed = 0
        self._lock = threading.Lock()

    def cert_for(self, doc: str, name: str) -> IssuedCert:
        with self._lock:
            cert = self._certs.get(doc)
            if cert is None:
                if len(doc) == 11:
                    cert = self._pki.person_cert(doc, name.upper()[:60])
                else:
                    cert = self._pki.company_cert(doc, name.upper()[:60])
                self._certs[doc] = cert
            return cert

    def cross_check(self) -> bool:
        """Whether this signature also confirms the textual C14N with lxml's (parse, copy, C14N:
        a few hundred microseconds). The first hundred of every sandbox and one in a hundred
        after: the textual form is a fixed function of the generator's own text, and the tests
        compare both on every kind of document."""
        with self._lock:
            self._signed += 1
            return self._signed <= 100 or self._signed % 100 == 0

    def key_for(self, doc: str, name: str) -> SignerKey:
        """The issuer's loaded key and certificate text, for :mod:`app.sandbox.docgen.signing`."""
        key = self._keys.get(doc)
        if key is None:
            cert = self.cert_for(doc, name)
            # The sandbox made this key a moment ago: OpenSSL's RSA consistency check (~50 ms a
            # key, once per issuer but in the middle of a simulation) would prove nothing.
            private = serialization.load_pem_private_key(
                cert.key_pem, password=None, unsafe_skip_rsa_key_validation=True
            )
            assert isinstance(private, rsa.RSAPrivateKey)
            der = x509.load_pem_x509_certificate(cert.cert_pem).public_bytes(serialization.Encoding.DER)
            key = self._keys[doc] = SignerKey(private, base64.b64encode(der).decode("ascii"))
        return key

    def sign_sefaz(self, document: str, reference_id: str, doc: str, name: str) -> bytes:
        """:meth:`sign` (SEFAZ profile) for a document the generator wrote: same bytes, ~5x cheaper."""
        dig_val = digest_of(canonical_part(document, reference_id))
        return sign_document(document, reference_id, dig_val, self.key_for(doc, name), check=self.cross_check())

    def sign(
        self,
        xml: str | bytes,
        reference_id: str,
        doc: str,
        name: str,
        profile: SignatureProfile = SignatureProfile.SEFAZ_SHA1,
    ) -> bytes:
        cert = self.cert_for(doc, name)
        data = xml.encode("utf-8") if isinstance(xml, str) else xml
        return sign_enveloped(data, reference_id, cert.key_pem, cert.cert_pem, profile=profile)


def digest_value(signed: bytes) -> str:
    """The DigestValue of the (first) signature: what protNFe/protCTe call ``digVal``."""
    root = etree.fromstring(signed)
    value = root.findtext(f".//{{{DS_NS}}}DigestValue")
    return value or ""


def strip_declaration(data: bytes) -> bytes:
    """Signed pieces are embedded textually in their wrapper, without an XML declaration."""
    if data.startswith(b"<?xml"):
        return data[data.index(b"?>") + 2 :].lstrip()
    return data


XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'


def protocol_number(prefix: str, at: datetime, sequence: int) -> str:
    """15 digits: authoriser prefix (3: kind + cUF, or 891 for the AN), year (2), sequence (10)."""
    return f"{prefix}{at:%y}{sequence % 10**10:010d}"
