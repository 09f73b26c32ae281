"""A throw-away certificate authority that issues ICP-Brasil-shaped certificates for tests and the sandbox.

Everything here is TEST MATERIAL: keys are handed out unencrypted (``IssuedCert.key_pem``) and
``save`` writes the CA key in clear (mode 0600). Never use it for real certificates.

e-CNPJ certificates follow DOC-ICP-04: CN ``RAZAO SOCIAL:CNPJ``, subjectAltName otherNames
2.16.76.1.3.4 (responsible's data), 2.16.76.1.3.2 (responsible's name), 2.16.76.1.3.3 (CNPJ),
2.16.76.1.3.7 (INSS); EKU clientAuth + emailProtection. e-CPF certificates carry 2.16.76.1.3.1.
The legacy RC2 file old Windows exports hold (cryptography cannot write RC2) is a committed test
fixture, ``tests/support/legacy_pfx.py``: no ``openssl`` command line is needed, Windows has none.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypedDict, Unpack

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_NAME = "AC de Teste Captura DF-e"
TEST_PASSWORD = "1234"  # noqa: S105 - the default PFX password of test certificates
_RESPONSIBLE_CPF = "52998224725"  # a valid, well-known test CPF
_CA_CERT_FILE = "test-ca-cert.pem"
_CA_KEY_FILE = "test-ca-key.pem"
_MASK = re.compile(r"[./\-\s]")


@dataclass(frozen=True)
class IssuedCert:
    """A leaf certificate with its key, in the forms tests and servers need."""

    cert_pem: bytes
    key_pem: bytes  # UNENCRYPTED PKCS8 PEM: test material only, never for real certificates
    pfx: bytes  # PKCS#12 with key + cert + CA chain, protected by ``password``
    password: str
    cnpj: str | None
    common_name: str

    def __repr__(self) -> str:
        return f"IssuedCert(common_name={self.common_name!r}, cnpj={self.cnpj!r})"


class HolderOptions(TypedDict, total=False):
    """How a company's or a person's test certificate departs from the usual one (defaults: the
    test password, valid from yesterday for a year, the holder's OID present, CN ``NAME:ID``)."""

    password: str
    not_before: datetime | None
    not_after: datetime | None
    include_cnpj_oid: bool
    cn_style: bool


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    key: rsa.RSAPrivateKey,
    validity: tuple[datetime, datetime],
    *,
    ca: bool,
    non_repudiation: bool = False,
) -> x509.CertificateBuilder:
    """What the CA's own certificate and every leaf share: names, key, serial, validity, basic
    constraints, key usage (a CA signs certificates, a leaf signs and enciphers) and key id."""
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca,
                content_commitment=non_repudiation,
                key_encipherment=not ca,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
    )


def _der_string(tag: int, text: str) -> bytes:
    """DER of a string value, for the otherName ``[0] EXPLICIT`` content cryptography wraps."""
    content = text.encode("utf-8")
    length = len(content)
    if length < 0x80:
        header = bytes([tag, length])
    else:
        size = (length.bit_length() + 7) // 8
        header = bytes([tag, 0x80 | size]) + length.to_bytes(size, "big")
    return header + content


def _other_name(oid: str, text: str, *, tag: int = 0x04) -> x509.OtherName:
    return x509.OtherName(x509.ObjectIdentifier(oid), _der_string(tag, text))


def _common_name(name: str, holder_id: str, cn_style: bool) -> str:
    """X.509 caps the CN at 64 characters; like the real CAs, the name is cut to fit."""
    if not cn_style:
        return name[:64]
    return f"{name[: 64 - len(holder_id) - 1].rstrip()}:{holder_id}"


def _person_data(cpf: str) -> str:
    """Birth date (8) + CPF (11) + NIS (11) + RG (15) + issuing body and UF (6), as DOC-ICP-04 lays out."""
    return "01011980" + cpf + "0" * 11 + "0" * 15 + "SSPSP "


class TestPki:
    """Root CA "AC de Teste Captura DF-e" (RSA 2048, 10 years) and the certificates it signs."""

    __test__ = False  # not a pytest test class despite the name

    def __init__(self, ca_key: rsa.RSAPrivateKey, ca_cert: x509.Certificate, now: datetime | None) -> None:
        self._ca_key = ca_key
        self._ca_cert = ca_cert
        self._now = now

    @classmethod
    def create(cls, *, now: datetime | None = None) -> TestPki:
        key = _new_key()
        start = (now or datetime.now(UTC)) - timedelta(days=1)
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.COUNTRY_NAME, "BR"),
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Captura DF-e (teste)"),
                x509.NameAttribute(NameOID.COMMON_NAME, CA_NAME),
            ]
        )
        cert = _builder(name, name, key, (start, start + timedelta(days=3653)), ca=True).sign(key, hashes.SHA256())
        return cls(key, cert, now)

    @property
    def ca_cert_pem(self) -> bytes:
        return self._ca_cert.public_bytes(serialization.Encoding.PEM)

    @property
    def ca_certificate(self) -> x509.Certificate:
        return self._ca_cert

    def save(self, directory: Path) -> None:
        """Writes the CA certificate and (clear, 0600) key so ``sandbox serve`` can reuse this PKI."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / _CA_CERT_FILE).write_bytes(self.ca_cert_pem)
        key_pem = self._ca_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        fd = os.open(directory / _CA_KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key_pem)

    @classmethod
    def load(cls, directory: Path) -> TestPki:
        cert = x509.load_pem_x509_certificate((directory / _CA_CERT_FILE).read_bytes())
        key = serialization.load_pem_private_key((directory / _CA_KEY_FILE).read_bytes(), password=None)
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ValueError("the saved test CA key is not RSA")
        return cls(key, cert, None)

    def server_cert(self, hostnames: Sequence[str] = ("localhost", "127.0.0.1", "::1")) -> IssuedCert:
        """A TLS server certificate for ``hostnames`` (IP literals become IP SAN entries)."""
        names: list[x509.GeneralName] = []
        for host in hostnames:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostnames[0])])
        return self._issue(subject, names, [ExtendedKeyUsageOID.SERVER_AUTH])

    def company_cert(self, cnpj: str, name: str, **options: Unpack[HolderOptions]) -> IssuedCert:
        """An e-CNPJ A1 as ICP-Brasil issues it. ``cnpj`` is not validated (tests need bad ones too)."""
        cnpj = _MASK.sub("", cnpj).upper()
        names: list[x509.GeneralName] = [
            _other_name("2.16.76.1.3.4", _person_data(_RESPONSIBLE_CPF)),
            _other_name("2.16.76.1.3.2", "RESPONSAVEL DE TESTE", tag=0x0C),
        ]
        if options.get("include_cnpj_oid", True):
            names.append(_other_name("2.16.76.1.3.3", cnpj))
        names.append(_other_name("2.16.76.1.3.7", "0" * 12))
        return self._holder_cert(name, cnpj, "RFB e-CNPJ A1", names, options, cnpj=cnpj)

    def person_cert(self, cpf: str, name: str, **options: Unpack[HolderOptions]) -> IssuedCert:
        """An e-CPF A1 (OID 2.16.76.1.3.1); ``include_cnpj_oid`` here means "include the CPF OID"."""
        cpf = _MASK.sub("", cpf)
        names: list[x509.GeneralName] = []
        if options.get("include_cnpj_oid", True):
            names.append(_other_name("2.16.76.1.3.1", _person_data(cpf)))
        names += [_other_name("2.16.76.1.3.6", "0" * 12), _other_name("2.16.76.1.3.5", "0" * 19)]
        return self._holder_cert(name, cpf, "RFB e-CPF A1", names, options, cnpj=None)

    def _holder_cert(
        self,
        name: str,
        holder_id: str,
        kind: str,
        names: list[x509.GeneralName],
        options: HolderOptions,
        *,
        cnpj: str | None,
    ) -> IssuedCert:
        """An ICP-Brasil A1 for a company or a person: client authentication, e-mail, non-repudiation."""
        common_name = _common_name(name, holder_id, options.get("cn_style", True))
        return self._issue(
            self._icp_subject(common_name, kind),
            names,
            [ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.EMAIL_PROTECTION],
            non_repudiation=True,
            password=options.get("password", TEST_PASSWORD),
            cnpj=cnpj,
            validity=(options.get("not_before"), options.get("not_after")),
        )

    def _icp_subject(self, common_name: str, kind: str) -> x509.Name:
        return x509.Name(
            [
                x509.NameAttribute(NameOID.COUNTRY_NAME, "BR"),
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "ICP-Brasil"),
                x509.NameAttribute(NameOID.STATE_OR_PROVINCE_NAME, "SP"),
                x509.NameAttribute(NameOID.LOCALITY_NAME, "SAO PAULO"),
                x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, CA_NAME),
                x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Secretaria da Receita Federal do Brasil - RFB"),
                x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, kind),
                x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Certificado de teste"),
                x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            ]
        )

    def _validity(self, not_before: datetime | None, not_after: datetime | None) -> tuple[datetime, datetime]:
        now = self._now or datetime.now(UTC)
        start = not_before or now - timedelta(days=1)
        if not_before is None and not_after is not None:
            start = min(start, not_after - timedelta(days=365))
        end = not_after or max(now, start) + timedelta(days=365)
        return start, end

    def _issue(
        self,
        subject: x509.Name,
        names: list[x509.GeneralName],
        usages: list[x509.ObjectIdentifier],
        *,
        non_repudiation: bool = False,
        password: str = TEST_PASSWORD,
        cnpj: str | None = None,
        validity: tuple[datetime | None, datetime | None] = (None, None),
    ) -> IssuedCert:
        key = _new_key()
        start, end = self._validity(*validity)
        ca_ski = self._ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        cert = (
            _builder(subject, self._ca_cert.subject, key, (start, end), ca=False, non_repudiation=non_repudiation)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
            .sign(self._ca_key, hashes.SHA256())
        )
        common_name = str(subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        cert_pem = cert.public_bytes(serialization.Encoding.PEM)
        encryption: serialization.KeySerializationEncryption = (
            serialization.BestAvailableEncryption(password.encode("utf-8"))
            if password
            else serialization.NoEncryption()
        )
        pfx = pkcs12.serialize_key_and_certificates(common_name.encode("utf-8"), key, cert, [self._ca_cert], encryption)
        return IssuedCert(cert_pem, key_pem, pfx, password, cnpj, common_name)
