"""Recipient manifestation: event layout, local refusals, signing with the A1, the AN's answers (sandbox
over real HTTPS with mutual TLS, and the real recorded answer) and the procEventoNFe to store."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from lxml import etree

from app.certs.a1 import A1Certificate, load_a1
from app.config.endpoints import Service
from app.config.settings import Settings
from app.core.clock import FakeClock
from app.core.ids import Cnpj, Cpf
from app.core.keys import AccessKey
from app.core.products import Environment
from app.fiscal.errors import RequestInvalid
from app.fiscal.http import HttpClientFactory
from app.fiscal.mde import (
    Manifestation,
    ManifestationClient,
    build_event,
    env_evento,
    event_id,
    parse_ret_env_evento,
    prepare_event,
    proc_evento_nfe,
    sign_event,
)
from app.fiscal.schemas import Schema, SchemaInvalid, errors
from app.fiscal.soap import SOAP12_NS, parse_reply
from app.fiscal.xmldsig import SignatureInvalid, extract_signed_element, verify_enveloped
from app.safexml import parse_xml
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox

NFE = "http://www.portalfiscal.inf.br/nfe"
N = f"{{{NFE}}}"
RECIPIENT = Cnpj("11222333000181")
SUPPLIER = "99888777000100"
HOMOLOG = Environment.HOMOLOGACAO
FIXTURES = Path(__file__).parent.parent / "fixtures"
KEY = AccessKey("35161258716523000119550000000439901870176068")


@dataclass
class World:
    clock: FakeClock
    sandbox: Sandbox
    cert: IssuedCert
    a1: A1Certificate
    client: ManifestationClient


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    clock = FakeClock()
    with Sandbox(clock, seed=5) as sandbox:
        cert = sandbox.company(RECIPIENT.value, "DESTINATARIA TESTE LTDA")
        sandbox.start_https()
        ca_file = tmp_path / "sandbox-ca.pem"
        ca_file.write_bytes(sandbox.ca_cert_pem)
        settings = Settings().with_endpoint(
            Service.NFE_RECEPCAO_EVENTO, HOMOLOG, url=sandbox.urls["nfe_evento"], ca_bundle=ca_file
        )
        a1 = load_a1(cert.pfx, cert.password, now=clock.now())
        with HttpClientFactory(settings) as factory:
            yield World(clock, sandbox, cert, a1, ManifestationClient.from_factory(factory, a1, HOMOLOG))


# --- layout and local refusals -----------------------------------------------------------------------


def test_the_event_follows_the_layout(world: World) -> None:
    at = world.clock.now()
    evento = parse_xml(build_event(KEY, "210220", RECIPIENT, 1, at, HOMOLOG, "  Mercadoria nao\nfoi encomendada  "))
    inf = evento.find(N + "infEvento")
    assert inf is not None and inf.get("Id") == event_id("210220", KEY, 1) == f"ID210220{KEY}01"
    assert len(inf.get("Id") or "") == 54
    fields = {etree.QName(c).localname: c.text for c in inf}
    assert fields["cOrgao"] == "91" and fields["tpAmb"] == "2" and fields["CNPJ"] == RECIPIENT.value
    assert fields["dhEvento"] == "2026-11-02T09:00:00-03:00" and fields["verEvento"] == "1.00"
    assert fields["nSeqEvento"] == "1" and fields["tpEvento"] == "210220"
    assert evento.findtext(f"{N}infEvento/{N}detEvento/{N}descEvento") == "Desconhecimento da Operacao"
    assert evento.findtext(f"{N}infEvento/{N}detEvento/{N}xJust") == "Mercadoria nao foi encomendada"
    ciencia = parse_xml(build_event(KEY, Manifestation.CIENCIA, Cpf("52998224725"), 1, at, 1))
    assert ciencia.find(f"{N}infEvento/{N}detEvento/{N}xJust") is None
    assert ciencia.findtext(f"{N}infEvento/{N}CPF") == "52998224725"
    assert ciencia.findtext(f"{N}infEvento/{N}detEvento/{N}descEvento") == "Ciencia da Operacao"


def test_local_refusals(world: World) -> None:
    at = world.clock.now()
    with pytest.raises(RequestInvalid, match="exige justificativa"):
        build_event(KEY, "210240", RECIPIENT, 1, at, HOMOLOG)
    with pytest.raises(RequestInvalid, match="de 15 a 255"):
        build_event(KEY, "210240", RECIPIENT, 1, at, HOMOLOG, "curta")
    with pytest.raises(RequestInvalid, match="não aceita justificativa"):
        build_event(KEY, "210210", RECIPIENT, 1, at, HOMOLOG, "Uma justificativa qualquer")
    with pytest.raises(RequestInvalid, match="caracteres não permitidos"):
        build_event(KEY, "210240", RECIPIENT, 1, at, HOMOLOG, "Operacao cancelada \u2014 devolvida")
    with pytest.raises(RequestInvalid, match="desconhecido"):
        build_event(KEY, "110111", RECIPIENT, 1, at, HOMOLOG)
    with pytest.raises(RequestInvalid, match="fuso"):
        build_event(KEY, "210210", RECIPIENT, 1, at.replace(tzinfo=None), HOMOLOG)
    with pytest.raises(RequestInvalid, match="sequência"):
        build_event(KEY, "210200", RECIPIENT, 0, at, HOMOLOG)


def test_an_alphanumeric_cnpj_is_refused_with_the_reason(world: World) -> None:
    at = world.clock.now()
    with pytest.raises(RequestInvalid, match="ainda não aceita CNPJ alfanumérico"):
        build_event(KEY, "210210", Cnpj.from_body("12ABC3450001"), 1, at, HOMOLOG)
    alnum_key = AccessKey.build(
        uf="SP", year_month="2611", issuer="12ABC345000188", model="55", serie=1, number=9, tp_emis=1, code=123
    )
    with pytest.raises(RequestInvalid, match="ainda não aceita CNPJ alfanumérico"):
        build_event(alnum_key, "210210", RECIPIENT, 1, at, HOMOLOG)


def test_the_signed_lot_validates_and_its_limits_hold(world: World) -> None:
    signed = prepare_event(world.a1, build_event(KEY, "210210", RECIPIENT, 1, world.clock.now(), HOMOLOG))
    assert signed.rstrip().endswith(b"</Signature></evento>")
    lot = env_evento([signed], 201704091147536)
    assert errors(lot, Schema.MDE_ENV_EVENTO) == []
    assert signed in lot  # embedded textually, byte for byte
    with pytest.raises(RequestInvalid, match="no máximo 20"):
        env_evento([signed] * 21, 1)
    with pytest.raises(RequestInvalid, match="vazio"):
        env_evento([], 1)
    with pytest.raises(RequestInvalid, match="recusado antes do envio"):
        env_evento([signed.replace(b"<cOrgao>91</cOrgao>", b"<cOrgao>99</cOrgao>")], 1)
    produced = prepare_event(
        world.a1, build_event(KEY, "210210", RECIPIENT, 1, world.clock.now(), Environment.PRODUCAO)
    )
    with pytest.raises(RequestInvalid, match="252"):
        world.client.send([produced], 1)
    assert world.sandbox.referee.requests == []


@pytest.mark.parametrize(
    ("tp_evento", "author", "seq", "justification"),
    [
        ("210210", RECIPIENT, 1, None),
        ("210200", Cpf("52998224725"), 2, None),
        ("210220", RECIPIENT, 1, None),
        ("210220", Cpf("52998224725"), 1, "Nao reconheco & <isto> \"aspas\" 'simples' ação ÇÃO ÿ"),
        ("210240", RECIPIENT, 99, "Operação não realizada: 5 > 3 & 2 < 4 ~ `x` ^ ¡¿ \x7f\x80\x9f fim"),
    ],
)
def test_prepare_event_signs_exactly_as_the_generic_signer(
    world: World, tp_evento: str, author: Cnpj | Cpf, seq: int, justification: str | None
) -> None:
    # prepare_event writes the signature itself (the event's text is already canonical): the
    # bytes must be those of sign_event (signxml through sign_enveloped), and verify.
    at = world.clock.now()
    fast = prepare_event(world.a1, build_event(KEY, tp_evento, author, seq, at, HOMOLOG, justification))
    generic = sign_event(build_event(KEY, tp_evento, author, seq, at, HOMOLOG, justification), world.a1)
    assert fast == generic
    cert_pem = world.a1.certificate.public_bytes(serialization.Encoding.PEM)
    assert verify_enveloped(fast, expected_cert_pem=cert_pem, at=at).reference_id == event_id(tp_evento, KEY, seq)
    tampered = fast.replace(f"<nSeqEvento>{seq}<".encode(), f"<nSeqEvento>{seq % 99 + 1}<".encode())
    with pytest.raises(SignatureInvalid):
        verify_enveloped(tampered, expected_cert_pem=cert_pem, at=at)


# --- against the sandbox -----------------------------------------------------------------------------


def test_ciencia_is_registered_and_the_proc_evento_is_stored_with_a_valid_signature(world: World) -> None:
    nfe = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    world.clock.advance(timedelta(minutes=6))
    signed = prepare_event(
        world.a1, build_event(nfe.key, Manifestation.CIENCIA, RECIPIENT, 1, world.clock.now(), HOMOLOG)
    )

    reply = world.client.send([signed], 42)

    assert reply.lot_cstat == 128 and reply.id_lote == "42" and reply.tp_amb == 2
    assert b"<idLote>42</idLote>" in reply.request_bytes and signed in reply.request_bytes
    (result,) = reply.results
    assert (result.key, result.tp_evento, result.seq, result.cstat) == (nfe.key, "210210", 1, 135)
    assert result.registered and result.protocol is not None and result.protocol.startswith("891")
    assert result.dh_reg_evento == world.clock.now().replace(microsecond=0)
    assert reply.result_for(nfe.key, Manifestation.CIENCIA, 1) is result

    proc = proc_evento_nfe(signed, result.ret_evento_bytes)
    assert errors(proc, Schema.MDE_PROC_EVENTO) == []
    assert signed in proc
    stored = extract_signed_element(proc, "evento")
    cert_pem = world.a1.certificate.public_bytes(serialization.Encoding.PEM)
    verified = verify_enveloped(stored, expected_cert_pem=cert_pem, at=world.clock.now())
    assert verified.reference_id == event_id("210210", nfe.key, 1)
    assert world.sandbox.referee.report()["violations"] == []


def test_a_lot_of_two_events_answers_in_order(world: World) -> None:
    first = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    second = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    world.clock.advance(timedelta(minutes=6))
    at = world.clock.now()
    events = [prepare_event(world.a1, build_event(g.key, "210210", RECIPIENT, 1, at, HOMOLOG)) for g in (first, second)]
    reply = world.client.send(events, 7)
    assert [(r.key, r.cstat) for r in reply.results] == [(first.key, 135), (second.key, 135)]
    assert reply.results[0].ret_evento_bytes != reply.results[1].ret_evento_bytes
    again = world.client.send(events[:1], 8)
    assert again.results[0].cstat == 573 and not again.results[0].registered


def test_210240_is_registered_with_its_justification(world: World) -> None:
    nfe = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    world.clock.advance(timedelta(minutes=6))
    just = "Mercadoria devolvida na portaria & recusada"
    signed = prepare_event(world.a1, build_event(nfe.key, "210240", RECIPIENT, 1, world.clock.now(), HOMOLOG, just))
    assert b"devolvida na portaria &amp; recusada" in signed
    (result,) = world.client.send([signed], 3).results
    assert result.cstat == 135
    proc = proc_evento_nfe(signed, result.ret_evento_bytes)
    assert parse_xml(proc).findtext(f"{N}evento/{N}infEvento/{N}detEvento/{N}xJust") == just


def test_a_tampered_signature_is_rejected_297(world: World) -> None:
    nfe = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    world.clock.advance(timedelta(minutes=6))
    signed = prepare_event(world.a1, build_event(nfe.key, "210210", RECIPIENT, 1, world.clock.now(), HOMOLOG))
    tampered = signed.replace(b":00-03:00</dhEvento>", b":01-03:00</dhEvento>")  # one second later
    assert tampered != signed and errors(env_evento([tampered], 1), Schema.MDE_ENV_EVENTO) == []
    (result,) = world.client.send([tampered], 1).results
    assert result.cstat == 297 and not result.registered and result.protocol is None
    with pytest.raises(SchemaInvalid):
        proc_evento_nfe(tampered, b"<retEvento/>")


# --- the AN's real answers ---------------------------------------------------------------------------


def test_the_real_2020_an_answer_parses() -> None:
    content = (FIXTURES / "recorded" / "an-nfeRecepcaoEvento4-573-real-2020.xml").read_bytes()
    _, ret_env = parse_reply(200, content, "retEnvEvento")
    reply = parse_ret_env_evento(ret_env, content)
    assert (reply.lot_cstat, reply.lot_xmotivo, reply.ver_aplic, reply.tp_amb) == (
        128,
        "Lote de evento processado",
        "AN_1.1.3",
        1,
    )
    (result,) = reply.results
    assert (result.key, result.tp_evento, result.seq, result.cstat) == (
        "35200309091076000144550010001807401003642343",
        "210210",
        1,
        573,
    )
    assert result.protocol is None and result.dh_reg_evento is not None
    assert result.dh_reg_evento.isoformat() == "2020-11-20T07:55:59-03:00"
    standalone = parse_xml(result.ret_evento_bytes)  # namespace declaration carried over
    assert standalone.tag == N + "retEvento"
    assert errors(ret_env, Schema.MDE_RET_ENV_EVENTO) == []


def test_the_generic_nfe_result_msg_wrapper_is_accepted() -> None:
    content = (FIXTURES / "recorded" / "an-nfeRecepcaoEvento4-573-real-2020.xml").read_bytes()
    inner = content[content.index(b"<retEnvEvento") : content.index(b"</nfeRecepcaoEventoNFResult>")]
    generic = (
        (
            f'<soap:Envelope xmlns:soap="{SOAP12_NS}"><soap:Body>'
            '<nfeResultMsg xmlns="http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4">'
        ).encode()
        + inner
        + b"</nfeResultMsg></soap:Body></soap:Envelope>"
    )
    _, ret_env = parse_reply(200, generic, "retEnvEvento")
    reply = parse_ret_env_evento(ret_env, generic)
    raw = reply.results[0].ret_evento_bytes
    assert reply.results[0].cstat == 573
    # cut out as written; only the inherited namespace declaration is added to the start tag
    assert raw.replace(b' xmlns="http://www.portalfiscal.inf.br/nfe"', b"") in generic
