"""The sandbox's fast event-signature check gives signxml's verdict (verify_enveloped) on real events."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from app.certs.a1 import A1Certificate, load_a1
from app.core.ids import Cnpj
from app.core.keys import AccessKey
from app.fiscal.mde import build_event, prepare_event, sign_event
from app.fiscal.xmldsig import (
    SignatureCertificateInvalid,
    SignatureInvalid,
    SignatureProfile,
    VerifiedSignature,
    sign_enveloped,
    verify_enveloped,
)
from app.sandbox.pki import IssuedCert, TestPki
from app.sandbox.verify import EventSignatureVerifier, fast_verify

START = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
COMPANIES = ("11222333000181", "44555666000181", "12000000000170")
KINDS = ("210200", "210210", "210220", "210240")
JUSTIFICATIONS = ("Mercadoria nao recebida pela empresa", "Devolução & troca <parcial> 'ME' \"EPP\" açúcar")


@dataclass
class Signer:
    cert: IssuedCert
    a1: A1Certificate
    cnpj: Cnpj


@pytest.fixture(scope="module")
def pki() -> TestPki:
    return TestPki.create(now=START - timedelta(days=30))


@pytest.fixture(scope="module")
def signers(pki: TestPki) -> list[Signer]:
    out = []
    for index, cnpj in enumerate(COMPANIES):
        cert = pki.company_cert(cnpj, f"EMPRESA {index} LTDA")
        out.append(Signer(cert, load_a1(cert.pfx, cert.password, now=START), Cnpj.parse(cnpj)))
    return out


def _key(rng: random.Random) -> str:
    issuer = Cnpj.from_body(f"{rng.randrange(10**7, 10**8)}0001").value
    return AccessKey.build(
        uf="35",
        year_month="2611",
        issuer=issuer,
        model="55",
        serie=rng.randrange(1, 999),
        number=rng.randrange(1, 10**9),
        tp_emis=1,
        code=rng.randrange(10**8),
    ).value


def _events(signers: list[Signer], count: int, seed: int) -> list[tuple[bytes, Signer]]:
    """Events signed by the app's own signers: prepare_event, sign_event and sign_enveloped."""
    rng = random.Random(seed)
    out = []
    for index in range(count):
        signer = signers[index % len(signers)]
        kind = KINDS[index % len(KINDS)]
        args = (
            _key(rng),
            kind,
            signer.cnpj,
            rng.randrange(1, 3),
            START - timedelta(minutes=rng.randrange(0, 600)),
            2,
            rng.choice(JUSTIFICATIONS) if kind == "210240" else None,
        )
        way = index % 3
        if way == 0:
            raw = prepare_event(signer.a1, build_event(*args))
        elif way == 1:
            raw = sign_event(build_event(*args), signer.a1)
        else:
            evento = build_event(*args)
            ident = evento.split(b'Id="', 1)[1].split(b'"', 1)[0].decode()
            raw = sign_enveloped(evento, ident, signer.cert.key_pem, signer.cert.cert_pem)
        out.append((raw, signer))
    return out


def _signxml(raw: bytes, pki: TestPki, at: datetime = START) -> VerifiedSignature:
    return verify_enveloped(raw, ca_pem=pki.ca_cert_pem, at=at, profile=SignatureProfile.SEFAZ_SHA1)


def test_real_events_take_the_fast_path_with_signxml_s_result(signers: list[Signer], pki: TestPki) -> None:
    trusted = {s.cert.cert_pem for s in signers}
    for raw, _ in _events(signers, 60, seed=1):
        expected = _signxml(raw, pki)
        assert fast_verify(raw, at=START, trusted=trusted) == expected


def _replace(old: bytes, new: bytes) -> Callable[[bytes, Signer, list[Signer]], bytes]:
    def change(raw: bytes, signer: Signer, signers: list[Signer]) -> bytes:
        assert old in raw
        return raw.replace(old, new, 1)

    return change


def _flip(tag: bytes, offset: int) -> Callable[[bytes, Signer, list[Signer]], bytes]:
    def change(raw: bytes, signer: Signer, signers: list[Signer]) -> bytes:
        at = raw.index(b"<" + tag + b">") + len(tag) + 2 + offset
        swapped = b"B" if raw[at : at + 1] == b"A" else b"A"
        return raw[:at] + swapped + raw[at + 1 :]

    return change


def _other_certificate(raw: bytes, signer: Signer, signers: list[Signer]) -> bytes:
    other = next(s for s in signers if s is not signer)
    mine = raw.split(b"<X509Certificate>", 1)[1].split(b"</X509Certificate>", 1)[0]
    theirs = "".join(other.cert.cert_pem.decode().splitlines()[1:-1]).encode()
    return raw.replace(mine, theirs)


def _duplicate_id(raw: bytes, signer: Signer, signers: list[Signer]) -> bytes:
    # KeyInfo is not signed: only signxml's refusal of an ambiguous reference can catch this
    ident = raw.split(b'Id="', 1)[1].split(b'"', 1)[0]
    return raw.replace(b"<KeyInfo>", b'<KeyInfo Id="' + ident + b'">', 1)


TAMPERINGS: dict[str, Callable[[bytes, Signer, list[Signer]], bytes]] = {
    "value_text": _replace(b"<tpAmb>2</tpAmb>", b"<tpAmb>1</tpAmb>"),
    "attribute": _replace(b'<detEvento versao="1.00">', b'<detEvento versao="1.01">'),
    "digest": _flip(b"DigestValue", 3),
    "signature_value": _flip(b"SignatureValue", 10),
    "certificate_swap": _other_certificate,
    "whitespace_in_infevento": _replace(b"</verEvento>", b"</verEvento> "),
    "whitespace_in_signedinfo": _replace(b"<SignedInfo>", b"<SignedInfo>\n"),
    "ambiguous_id": _duplicate_id,
    "reference_elsewhere": _replace(b'<Reference URI="#ID', b'<Reference URI="#XD'),
}


@pytest.mark.parametrize("tampering", sorted(TAMPERINGS))
def test_tampered_events_are_refused_by_both_with_signxml_s_error(
    tampering: str, signers: list[Signer], pki: TestPki
) -> None:
    trusted = {s.cert.cert_pem for s in signers}
    verifier = EventSignatureVerifier()
    for raw, _ in _events(signers, 3, seed=2):
        verifier.verify(raw, ca=pki.ca_certificate, at=START)  # every signer now known to chain
    for raw, signer in _events(signers, 12, seed=3):
        bad = TAMPERINGS[tampering](raw, signer, signers)
        assert bad != raw
        assert fast_verify(bad, at=START, trusted=trusted) is None
        with pytest.raises(SignatureInvalid) as by_signxml:
            _signxml(bad, pki)
        with pytest.raises(SignatureInvalid) as ours:
            verifier.verify(bad, ca=pki.ca_certificate, at=START)
        assert (type(ours.value), ours.value.message) == (type(by_signxml.value), by_signxml.value.message)


def test_unusual_but_valid_shapes_are_left_to_signxml_which_accepts_them(signers: list[Signer], pki: TestPki) -> None:
    trusted = {s.cert.cert_pem for s in signers}
    verifier = EventSignatureVerifier()
    raw, _ = _events(signers, 1, seed=4)[0]
    verifier.verify(raw, ca=pki.ca_certificate, at=START)
    variants = [
        raw.replace(b"<cOrgao>", b"<!-- comentario --><cOrgao>", 1),  # C14N drops comments
        raw.replace(b"<KeyInfo>", b"<KeyInfo>\n  ", 1),  # KeyInfo is not signed
        b'<?xml version="1.0" encoding="UTF-8"?>' + raw,
    ]
    for variant in variants:
        assert fast_verify(variant, at=START, trusted=trusted) is None
        assert verifier.verify(variant, ca=pki.ca_certificate, at=START) == _signxml(variant, pki)


def test_certificates_untrusted_or_out_of_validity_get_signxml_s_certificate_error(
    signers: list[Signer], pki: TestPki
) -> None:
    verifier = EventSignatureVerifier()
    raw, signer = _events(signers, 1, seed=5)[0]
    assert fast_verify(raw, at=START, trusted=set()) is None  # not yet known to chain to the CA
    assert verifier.verify(raw, ca=pki.ca_certificate, at=START).cert_pem == signer.cert.cert_pem
    assert fast_verify(raw, at=START, trusted={signer.cert.cert_pem}) is not None
    # expired at the event's time: 291's "validade" message, from signxml's path
    late = START + timedelta(days=5 * 365)
    assert fast_verify(raw, at=late, trusted={signer.cert.cert_pem}) is None
    with pytest.raises(SignatureCertificateInvalid, match="validade"):
        verifier.verify(raw, ca=pki.ca_certificate, at=late)
    # same CNPJ, another CA: refused even after the good signer was remembered
    stranger = TestPki.create(now=START - timedelta(days=30)).company_cert(COMPANIES[0], "OUTRA AC")
    foreign = load_a1(stranger.pfx, stranger.password, now=START)
    bad = prepare_event(foreign, build_event(_key(random.Random(6)), "210210", Cnpj.parse(COMPANIES[0]), 1, START, 2))
    with pytest.raises(SignatureCertificateInvalid) as ours:
        verifier.verify(bad, ca=pki.ca_certificate, at=START)
    assert "validade" not in ours.value.message
