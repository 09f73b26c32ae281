"""NFeRecepcaoEvento4: the real AN's answer shape, signature checks and the manifestation rules,
and the procNFe released under a new NSU."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from lxml import etree

from app.core.clock import FakeClock
from app.fiscal.xmldsig import extract_signed_element
from app.sandbox import xsd
from app.sandbox.events_service import _signed_evento
from app.sandbox.pki import IssuedCert, TestPki
from app.sandbox.sandbox import Sandbox

WSDL = "http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4"


def _send(c: httpx.Client, h: Any, body: bytes, *, soap11: bool = False) -> etree._Element:
    headers = (
        {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": f'"{WSDL}/nfeRecepcaoEventoNF"'}
        if soap11
        else {"Content-Type": f'application/soap+xml; charset=utf-8; action="{WSDL}/nfeRecepcaoEvento"'}
    )
    response = c.post(h.EVENT_PATH, content=body, headers=headers)
    assert response.status_code == 200, response.text
    return etree.fromstring(response.content)


def _ret(root: etree._Element, h: Any) -> tuple[int, list[etree._Element]]:
    env = next(root.iter(f"{{{h.NFE}}}retEnvEvento"))
    return int(env.findtext(f"{{{h.NFE}}}cStat") or 0), env.findall(f"{{{h.NFE}}}retEvento")


def _cstat(root: etree._Element, h: Any) -> int:
    lot, events = _ret(root, h)
    assert lot == 128
    return int(events[0].findtext(f"{{{h.NFE}}}infEvento/{{{h.NFE}}}cStat") or 0)


def test_ciencia_answers_like_the_real_an_and_releases_the_proc_nfe(
    https: Sandbox, clock: FakeClock, recipient_cert: IssuedCert, client_for: Any, h: Any, fixtures_dir: Path
) -> None:
    nfe = https.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    c = client_for(recipient_cert)
    clock.advance(timedelta(minutes=5))
    root = _send(
        c, h, h.manifestation_envelope(recipient_cert, nfe.key, "210210", at=clock.now(), soap11=True), soap11=True
    )

    real = etree.parse(str(fixtures_dir / "recorded" / "an-nfeRecepcaoEvento4-573-real-2020.xml")).getroot()

    def shape(r: etree._Element) -> list[tuple[str | None, str]]:
        node = next(r.iter(f"{{{h.NFE}}}retEnvEvento"))
        out = []
        while node is not None:
            out.append((etree.QName(node).namespace, etree.QName(node).localname))
            node = node.getparent()
        return out

    assert shape(root) == shape(real)  # SOAP 1.1 envelope, nfeRecepcaoEventoNFResult wrapper
    lot, events = _ret(root, h)
    assert lot == 128 and len(events) == 1
    inf = events[0].find(f"{{{h.NFE}}}infEvento")
    assert inf is not None
    assert inf.findtext(f"{{{h.NFE}}}cStat") == "135"
    assert (inf.findtext(f"{{{h.NFE}}}nProt") or "").startswith("891")
    ret_env = next(root.iter(f"{{{h.NFE}}}retEnvEvento"))
    assert xsd.errors(etree.fromstring(etree.tostring(ret_env)), "retEnvConfRecebto_v1.00") == []

    # the recipient now gets the full NF-e under a NEW NSU, plus the procEventoNFe
    clock.advance(timedelta(hours=1))
    body = h.dist_envelope(ult=0)
    answer = h.read_dist(c.post(h.DIST_PATH, content=body))
    docs = answer.docs()
    assert [(n, s) for n, s, _ in docs] == [
        (1, "resNFe_v1.01.xsd"),
        (2, "procNFe_v4.00.xsd"),
        (3, "procEventoNFe_v1.00.xsd"),
    ]
    for _, schema, xml in docs:
        assert xsd.errors(xml, schema) == [], schema
    emitter_kinds = [(e.kind, e.tp_evento) for e in https.entries("nfe", h.SUPPLIER)]
    assert emitter_kinds == [("procEventoNFe", "210210")]


def test_a_bad_signature_gets_297(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, recipient_cert: IssuedCert, h: Any
) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    body = h.manifestation_envelope(recipient_cert, nfe.key, "210200", at=clock.now())
    tampered = body.replace(b"<verEvento>1.00</verEvento>", b"<verEvento>1.00</verEvento> ")
    assert tampered != body
    assert _cstat(_send(inproc, h, tampered), h) == 297
    assert sandbox.entries("nfe", h.SUPPLIER) == []  # nothing registered


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("wrong_id", 572),
        ("corgao", 250),
        ("tpamb", 252),
        ("unknown_key", 494),
        ("not_recipient", 575),
        ("foreign_signer", 213),
        ("future", 578),
        ("before_emission", 577),
        ("no_just", 595),
        ("seq3", 594),
        ("late_ciencia", 596),
    ],
)
def test_event_rules(
    case: str,
    expected: int,
    sandbox: Sandbox,
    clock: FakeClock,
    inproc: httpx.Client,
    recipient_cert: IssuedCert,
    h: Any,
) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    now = clock.now()
    kwargs: dict[str, Any] = {"at": now}
    cert, key, tp = recipient_cert, nfe.key, "210200"
    if case == "wrong_id":
        kwargs["event_id"] = f"ID210200{nfe.key}02"
    elif case == "corgao":
        kwargs["c_orgao"] = "35"
    elif case == "tpamb":
        kwargs["tp_amb"] = 1
    elif case == "unknown_key":
        other = sandbox.factory.nfe(
            emitter=sandbox.party(h.SUPPLIER), recipient=sandbox.party(h.RECIPIENT), issued_at=now
        )
        key = other.key
    elif case == "not_recipient":
        kwargs["author"] = h.BRANCH  # same base as the certificate, but not the NF-e's recipient
    elif case == "foreign_signer":
        kwargs["author"] = h.OTHER
    elif case == "future":
        kwargs["at"] = now + timedelta(minutes=10)
    elif case == "before_emission":
        kwargs["at"] = now - timedelta(days=1)
    elif case == "no_just":
        tp = "210240"
    elif case == "seq3":
        kwargs["seq"] = 3
    elif case == "late_ciencia":
        tp = "210210"
        clock.advance(timedelta(days=11))
        kwargs["at"] = clock.now()
    root = _send(inproc, h, h.manifestation_envelope(cert, key, tp, **kwargs))
    assert _cstat(root, h) == expected


def test_duplicate_ciencia_after_conclusive_and_repeated_rejection(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, recipient_cert: IssuedCert, h: Any
) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    confirm = h.manifestation_envelope(recipient_cert, nfe.key, "210200", at=clock.now())
    assert _cstat(_send(inproc, h, confirm), h) == 135
    assert _cstat(_send(inproc, h, confirm), h) == 573
    ciencia = h.manifestation_envelope(recipient_cert, nfe.key, "210210", at=clock.now())
    assert _cstat(_send(inproc, h, ciencia), h) == 655
    clock.advance(timedelta(minutes=1))
    assert _cstat(_send(inproc, h, confirm), h) == 573  # the same rejected event again within the hour
    assert [v.rule for v in sandbox.referee.violations()] == ["repeated_rejected_event"]
    # a second conclusive event (v1.50) is accepted; the released procNFe is not queued twice
    second = h.manifestation_envelope(recipient_cert, nfe.key, "210200", seq=2, at=clock.now())
    assert _cstat(_send(inproc, h, second), h) == 135
    kinds = [e.kind for e in sandbox.entries("nfe", h.RECIPIENT)]
    assert kinds == ["resNFe", "procNFe", "procEventoNFe", "procEventoNFe"]


def test_desconhecimento_does_not_release_the_nfe(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, recipient_cert: IssuedCert, h: Any
) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    body = h.manifestation_envelope(recipient_cert, nfe.key, "210220", at=clock.now())
    assert _cstat(_send(inproc, h, body), h) == 135
    assert [e.kind for e in sandbox.entries("nfe", h.RECIPIENT)] == ["resNFe", "procEventoNFe"]
    answer = h.read_dist(inproc.post(h.DIST_PATH, content=h.dist_envelope(key=nfe.key)))
    assert answer.docs()[0][1] == "resNFe_v1.01.xsd"


def test_schema_invalid_lot_gets_215(
    inproc: httpx.Client, recipient_cert: IssuedCert, clock: FakeClock, sandbox: Sandbox, h: Any
) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    body = h.manifestation_envelope(recipient_cert, nfe.key, "210200", at=clock.now())
    lot, events = _ret(_send(inproc, h, body.replace(b"<idLote>1</idLote>", b"<idLote>x</idLote>")), h)
    assert (lot, events) == (215, [])


def test_a_signer_outside_the_ca_gets_293_even_after_good_signers(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, recipient_cert: IssuedCert, h: Any
) -> None:
    first = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    second = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    clock.advance(timedelta(minutes=5))
    good = h.manifestation_envelope(recipient_cert, first.key, "210210", at=clock.now())
    assert _cstat(_send(inproc, h, good), h) == 135
    stranger = TestPki.create(now=clock.now() - timedelta(days=30)).company_cert(h.RECIPIENT, "MESMO CNPJ OUTRA AC")
    foreign = h.manifestation_envelope(stranger, second.key, "210210", at=clock.now())
    assert _cstat(_send(inproc, h, foreign), h) == 293
    # the certificate already seen is still checked for real: a changed signed text is refused
    tampered = h.manifestation_envelope(recipient_cert, second.key, "210210", at=clock.now()).replace(
        b"<verEvento>1.00</verEvento>", b"<verEvento>1.00</verEvento> "
    )
    assert _cstat(_send(inproc, h, tampered), h) == 297


def test_the_evento_is_cut_as_the_full_extraction_would(recipient_cert: IssuedCert, clock: FakeClock, h: Any) -> None:
    key = "35261199888777000100550010000000011000000019"
    body = h.manifestation_envelope(recipient_cert, key, "210200", at=clock.now())
    assert _signed_evento(body) == extract_signed_element(body, "evento")
    # an evento inheriting its namespace, or using prefixes, takes the full extraction
    inherited = body.replace(b'<evento xmlns="http://www.portalfiscal.inf.br/nfe" ', b"<evento ")
    assert _signed_evento(inherited) is None
    assert extract_signed_element(inherited, "evento") == extract_signed_element(body, "evento")
    prefixed = body.replace(b"<evento ", b'<evento xmlns:x="urn:x" x:a="1" ')
    assert _signed_evento(prefixed) is None
    assert _signed_evento(body.replace(b"</envEvento>", b"") + body) is None  # two eventos
