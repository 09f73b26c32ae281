"""Opening an ICP-Brasil A1 certificate (.pfx/.p12) and reading who it belongs to.

e-CNPJ certificates carry the CNPJ in a subjectAltName otherName (OID 2.16.76.1.3.3) and,
by convention, in the common name as ``RAZAO SOCIAL:CNPJ``; e-CPF certificates carry the CPF
inside OID 2.16.76.1.3.1 (after the 8-digit birth date). The OID wins over the common name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from app.certs import pkcs12_der
from app.core.clock import to_brasilia
from app.core.errors import CapturaError, InvalidIdentifier
from app.core.ids import Cnpj, Cpf

OID_CPF_DATA = "2.16.76.1.3.1"  # e-CPF: birth date (8) + CPF (11) + NIS + RG + issuer
OID_RESPONSIBLE_NAME = "2.16.76.1.3.2"
OID_CNPJ = "2.16.76.1.3.3"
OID_RESPONSIBLE_DATA = "2.16.76.1.3.4"

_Id = TypeVar("_Id", Cnpj, Cpf)
_CN_ID = re.compile(r"^(?P<name>.*?)\s*:\s*(?P<id>[0-9A-Za-z]{11,14})\s*$")


class CertificateError(CapturaError):
    """Base of the certificate errors: the message says what the user should do."""


class InvalidCertificateFile(CertificateError):
    """Not a PKCS#12 file, or one without the private key."""


class WrongPassword(CertificateError):
    def __init__(self) -> None:
        super().__init__("Senha do certificado incorreta.")


class LegacyEncryption(CertificateError):
    """A PFX protected with RC2/RC4 that this machine's OpenSSL cannot decrypt."""

    def __init__(self, algorithms: tuple[str, ...]) -> None:
        self.algorithms = algorithms
        super().__init__(
            "O arquivo do certificado usa uma criptografia antiga e obsoleta "
            f"({', '.join(algorithms)}) que este computador não consegue abrir. "
            "Exporte o certificado novamente: no Windows, abra o Gerenciador de Certificados "
            "(certmgr.msc), clique com o botão direito no certificado, Todas as Tarefas > Exportar, "
            "marque 'Sim, exportar a chave privada' e escolha a criptografia AES256-SHA256 "
            "(ou TripleDES-SHA1). Com o OpenSSL: "
            "openssl pkcs12 -legacy -in antigo.pfx -nodes | openssl pkcs12 -export -out novo.pfx"
        )


class CertificateExpired(CertificateError):
    def __init__(self, not_after: datetime) -> None:
        self.not_after = not_after
        super().__init__(
            f"Certificado vencido em {_br_date(not_after)}. "
            "Renove o certificado A1 com a autoridade certificadora e instale o novo arquivo."
        )


class CertificateNotYetValid(CertificateError):
    def __init__(self, not_before: datetime) -> None:
        self.not_before = not_before
        super().__init__(
            f"Certificado ainda não é válido: a validade começa em {_br_date(not_before)}. "
            "Confira a data e a hora deste computador."
        )


class NotIcpBrasilCnpj(CertificateError):
    def __init__(self, common_name: str) -> None:
        super().__init__(
            f"O certificado '{common_name}' não é um e-CNPJ ICP-Brasil: não traz o CNPJ "
            "(OID 2.16.76.1.3.3) nem o nome no formato RAZÃO SOCIAL:CNPJ. "
            "Use o certificado A1 e-CNPJ (ou e-CPF) emitido por uma autoridade da ICP-Brasil."
        )


def _br_date(instant: datetime) -> str:
    return to_brasilia(instant).strftime("%d/%m/%Y")


@dataclass(frozen=True)
class A1Certificate:
    """An opened A1 certificate: identity for the UI plus the key material, in memory only.

    ``private_key`` never appears in ``repr``; hand this object only to app.certs.tls and the
    signer, never to a logger or the database.
    """

    subject: str
    common_name: str
    cnpj: Cnpj | None
    cpf: Cpf | None
    holder_name: str
    issuer: str
    serial: str
    not_before: datetime
    not_after: datetime
    sha1_fingerprint: str
    sha256_fingerprint: str
    private_key: PrivateKeyTypes = field(repr=False, compare=False)
    certificate: x509.Certificate = field(repr=False, compare=False)
    chain: tuple[x509.Certificate, ...] = field(repr=False, compare=False, default=())

    @property
    def uf(self) -> str | None:
        """The holder's state (the subject's ST, as ICP-Brasil certificates carry it), e.g. "SP"."""
        value = _first(self.certificate.subject, NameOID.STATE_OR_PROVINCE_NAME)
        return value.strip().upper() if value and len(value.strip()) == 2 else None

    def __repr__(self) -> str:
        holder = self.cnpj or self.cpf
        return (
            f"A1Certificate(holder={str(holder)!r}, name={self.holder_name!r}, serial={self.serial!r}, "
            f"not_after={self.not_after.isoformat()!r})"
        )

    @property
    def holder_id(self) -> str:
        """CNPJ (14 characters) or CPF (11 digits): the key the vault stores it under."""
        holder = self.cnpj or self.cpf
        assert holder is not None  # load_a1 refuses certificates without either
        return holder.value

    def days_left(self, now: datetime) -> int:
        return (self.not_after - now).days

    def describe(self) -> list[str]:
        """Lines in Portuguese for the certificate panel of the UI."""
        lines = [f"Titular: {self.holder_name}"]
        if self.cnpj is not None:
            lines.append(f"CNPJ: {self.cnpj.formatted()}")
        if self.cpf is not None:
            lines.append(f"CPF: {self.cpf.formatted()}")
        lines += [
            f"Emitido por: {self.issuer}",
            f"Válido de {_br_date(self.not_before)} até {_br_date(self.not_after)}",
            f"Número de série: {self.serial}",
            f"Impressão digital (SHA-1): {self.sha1_fingerprint}",
        ]
        return lines


def load_a1(pfx: bytes, password: str, *, now: datetime) -> A1Certificate:
    """Opens ``pfx`` with ``password`` and checks it is a valid ICP-Brasil e-CNPJ/e-CPF at ``now``."""
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    key, cert, extra = _open(pfx, password)
    return a1_from_parts(key, cert, extra, now=now)


def a1_from_parts(
    key: PrivateKeyTypes, cert: x509.Certificate, chain: Sequence[x509.Certificate], *, now: datetime
) -> A1Certificate:
    """The checks of ``load_a1`` on already-decoded parts: key matches certificate, ICP-Brasil
    identity, validity at ``now``. The vault calls it with parts it stored after ``load_a1``."""
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")
    if cert.public_key() != key.public_key():
        raise InvalidCertificateFile("A chave privada do arquivo não corresponde ao certificado.")
    common_name = _first(cert.subject, NameOID.COMMON_NAME) or cert.subject.rfc4514_string()
    cnpj, cpf, holder_name = _identity(cert, common_name)
    not_before = cert.not_valid_before_utc
    not_after = cert.not_valid_after_utc
    if now >= not_after:
        raise CertificateExpired(not_after)
    if now < not_before:
        raise CertificateNotYetValid(not_before)
    return A1Certificate(
        subject=cert.subject.rfc4514_string(),
        common_name=common_name,
        cnpj=cnpj,
        cpf=cpf,
        holder_name=holder_name,
        issuer=_first(cert.issuer, NameOID.COMMON_NAME) or cert.issuer.rfc4514_string(),
        serial=f"{cert.serial_number:X}",
        not_before=not_before.astimezone(UTC),
        not_after=not_after.astimezone(UTC),
        sha1_fingerprint=cert.fingerprint(hashes.SHA1()).hex().upper(),  # noqa: S303 - identification only
        sha256_fingerprint=cert.fingerprint(hashes.SHA256()).hex().upper(),
        private_key=key,
        certificate=cert,
        chain=tuple(chain),
    )


def _open(pfx: bytes, password: str) -> tuple[PrivateKeyTypes, x509.Certificate, list[x509.Certificate]]:
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(pfx, password.encode("utf-8"))
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise _diagnose(pfx, password) from None
    if key is None or cert is None:
        raise InvalidCertificateFile(
            "O arquivo não contém a chave privada do certificado. Exporte o certificado novamente "
            "marcando a opção de exportar a chave privada (arquivo .pfx ou .p12)."
        )
    return key, cert, extra


def _diagnose(pfx: bytes, password: str) -> CertificateError:
    """Why cryptography refused the file: not a PFX, wrong password, or an obsolete encryption."""
    try:
        outline = pkcs12_der.outline(pfx)
    except (pkcs12_der.DerError, IndexError):
        return InvalidCertificateFile(
            "O arquivo escolhido não é um certificado digital A1 (.pfx ou .p12) ou está danificado."
        )
    password_ok = pkcs12_der.mac_matches(outline, password)
    if password_ok and outline.legacy_algorithms:
        return LegacyEncryption(outline.legacy_algorithms)
    if password_ok:
        return InvalidCertificateFile(
            "A senha está correta, mas o conteúdo do certificado não pôde ser lido: o arquivo está "
            "danificado ou usa um formato não suportado. Exporte o certificado novamente."
        )
    return WrongPassword()


def _first(name: x509.Name, oid: x509.ObjectIdentifier) -> str | None:
    attrs = name.get_attributes_for_oid(oid)
    if not attrs:
        return None
    value = attrs[0].value
    return value if isinstance(value, str) else value.decode("utf-8", "replace")


def other_names(cert: x509.Certificate) -> dict[str, str]:
    """ICP-Brasil otherName fields of the subjectAltName, decoded to text, keyed by OID."""
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return {}
    out: dict[str, str] = {}
    for other in san.get_values_for_type(x509.OtherName):
        text = _decode_string(other.value)
        if text is not None:
            out[other.type_id.dotted_string] = text
    return out


def _decode_string(der: bytes) -> str | None:
    """ICP-Brasil CAs use OCTET STRING, PrintableString, UTF8String or IA5String for these values."""
    try:
        tlv, _ = pkcs12_der.read_tlv(der)
    except pkcs12_der.DerError:
        return None
    if tlv.tag == 0xA0:  # some encoders leave the [0] EXPLICIT wrapper in place
        return _decode_string(tlv.content)
    if tlv.tag == 0x1E:
        return tlv.content.decode("utf-16-be", "replace")
    if tlv.tag in (0x04, 0x0C, 0x13, 0x16):
        return tlv.content.decode("utf-8", "replace")
    return None


def _identity(cert: x509.Certificate, common_name: str) -> tuple[Cnpj | None, Cpf | None, str]:
    fields = other_names(cert)
    match = _CN_ID.match(common_name)
    holder_name = match.group("name") if match else common_name
    cnpj = _parse(Cnpj, fields.get(OID_CNPJ, "").strip())
    if cnpj is None and match:
        cnpj = _parse(Cnpj, match.group("id"))
    if cnpj is not None:
        return cnpj, None, holder_name
    cpf_data = fields.get(OID_CPF_DATA, "")
    cpf = _parse(Cpf, cpf_data[8:19]) if len(cpf_data) >= 19 else None
    if cpf is None and match:
        cpf = _parse(Cpf, match.group("id"))
    if cpf is not None:
        return None, cpf, holder_name
    raise NotIcpBrasilCnpj(common_name)


def _parse(kind: type[_Id], text: str) -> _Id | None:
    if not text:
        return None
    try:
        return kind.parse(text)
    except InvalidIdentifier:
        return None
