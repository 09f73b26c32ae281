"""Transport-neutral request/response objects and the caller's identity from its client certificate.

The same handlers answer over HTTPS with mutual TLS and through the in-process httpx transport, so
everything a handler needs (path, query, body, who is calling) travels in :class:`SandboxRequest`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from cryptography import x509
from cryptography.x509.oid import NameOID

# ICP-Brasil otherName OIDs (DOC-ICP-04): 2.16.76.1.3.3 = CNPJ of the company, 2.16.76.1.3.1 = data
# of the holder (8 digits birth date + 11 digits CPF + ...).
OID_CNPJ = x509.ObjectIdentifier("2.16.76.1.3.3")
OID_PERSON = x509.ObjectIdentifier("2.16.76.1.3.1")
_CN_DOC = re.compile(r":([0-9A-Z]{14}|[0-9]{11})\s*$")


@dataclass(frozen=True)
class Caller:
    """Who is calling, as read from the TLS client certificate."""

    cnpj: str | None
    cpf: str | None
    common_name: str
    not_after: datetime | None = None
    competitor: bool = False  # a simulated "other system" sharing the CNPJ (see Sandbox.competitor_query)

    @property
    def doc(self) -> str:
        return self.cnpj or self.cpf or ""

    @property
    def base(self) -> str:
        return self.cnpj[:8] if self.cnpj else (self.cpf or "")

    @property
    def label(self) -> str:
        return ("competitor:" if self.competitor else "") + (self.doc or self.common_name or "anônimo")


ANONYMOUS = Caller(cnpj=None, cpf=None, common_name="")


@dataclass
class SandboxRequest:
    """One HTTP request as the handlers see it."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # keys lower-cased
    body: bytes
    caller: Caller = ANONYMOUS

    def header(self, name: str, default: str = "") -> str:
        return self.headers.get(name.lower(), default)


@dataclass
class SandboxResponse:
    """One HTTP response; ``fault`` asks the transport to misbehave instead of answering cleanly."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    fault: str | None = None  # "timeout" | "close"; content faults are applied to ``body`` already
    stall_seconds: float = 0.0


def _der_string(value: bytes) -> str:
    """The text inside an otherName value: ICP-Brasil wraps it as [0] EXPLICIT <string type>."""
    data = value
    for _ in range(4):  # peel tag/length headers until a primitive string remains
        if len(data) < 2:
            break
        tag, length_byte = data[0], data[1]
        offset = 2
        if length_byte & 0x80:
            n = length_byte & 0x7F
            offset = 2 + n
        inner = data[offset:]
        if tag in (0x04, 0x0C, 0x13, 0x16, 0x1A):  # OCTET/UTF8/Printable/IA5/Visible string
            return inner.decode("latin-1")
        data = inner
    return data.decode("latin-1", "replace")


def caller_from_certificate(cert: x509.Certificate) -> Caller:
    """Read the CNPJ (or CPF) the way the national services do: ICP-Brasil otherName, else the CN."""
    cnpj: str | None = None
    cpf: str | None = None
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        for other in san.get_values_for_type(x509.OtherName):
            text = _der_string(other.value)
            digits = re.sub(r"[^0-9A-Z]", "", text)
            if other.type_id == OID_CNPJ and len(digits) >= 14:
                cnpj = digits[:14]
            elif other.type_id == OID_PERSON and len(digits) >= 19 and cpf is None:
                cpf = digits[8:19]
    except x509.ExtensionNotFound:
        pass
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    cn = str(names[0].value) if names else ""
    if cnpj is None and cpf is None:
        match = _CN_DOC.search(cn)
        if match:
            doc = match.group(1)
            if len(doc) == 14:
                cnpj = doc
            else:
                cpf = doc
    return Caller(cnpj=cnpj, cpf=cpf, common_name=cn, not_after=cert.not_valid_after_utc)


def caller_from_pem(cert_pem: bytes) -> Caller:
    return caller_from_certificate(x509.load_pem_x509_certificate(cert_pem))


def caller_from_der(cert_der: bytes) -> Caller:
    return caller_from_certificate(x509.load_der_x509_certificate(cert_der))
