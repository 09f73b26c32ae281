"""Sefin Nacional client: the pedRegEvento (layout, Id, signature, XSD), and GET /nfse/{chave} and
POST /nfse/{chave}/eventos against the sandbox over real HTTPS with mutual TLS."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from app.certs.a1 import A1Certificate, load_a1
from app.config.endpoints import Service
from app.config.settings import Settings
from app.core.clock import FakeClock
from app.core.ids import Cnpj
from app.core.keys import NfseKey
from app.core.products import Environment
from app.core.taker import CONFIRMACAO_TOMADOR, REJEICAO_TOMADOR, RejectionReason
from app.fiscal.errors import HttpStatusError, RequestInvalid
from app.fiscal.http import HttpClientFactory
from app.fiscal.schemas import Schema, errors
from app.fiscal.sefin import SefinClient, build_ped_reg_evento, prepare_ped_reg_evento
from app.fiscal.xmldsig import verify_enveloped
from app.safexml import parse_xml
from app.sandbox.sandbox import Sandbox

TAKER = Cnpj("11222333000181")
PROVIDER = "99888777000100"
HOMOLOG = Environment.HOMOLOGACAO
NS = "{http://www.sped.fazenda.gov.br/nfse}"


@dataclass
class World:
    clock: FakeClock
    sandbox: Sandbox
    a1: A1Certificate
    client: SefinClient


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    clock = FakeClock()
    with Sandbox(clock, seed=7) as sandbox:
        cert = sandbox.company(TAKER.value, "TOMADORA TESTE LTDA")
        sandbox.start_https()
        ca_file = tmp_path / "sandbox-ca.pem"
        ca_file.write_bytes(sandbox.ca_cert_pem)
        settings = Settings().with_endpoint(Service.NFSE_SEFIN, HOMOLOG, url=sandbox.urls["sefin"], ca_bundle=ca_file)
        a1 = load_a1(cert.pfx, cert.password, now=clock.now())
        with HttpClientFactory(settings) as factory:
            yield World(clock, sandbox, a1, SefinClient.from_factory(factory, a1, HOMOLOG))


def test_the_pedido_has_the_production_id_and_validates(world: World) -> None:
    key = world.sandbox.publish_nfse(provider=PROVIDER, taker=TAKER.value).key
    reason = RejectionReason("9", "Serviço não foi prestado nesta competência")
    signed = prepare_ped_reg_evento(
        world.a1, build_ped_reg_evento(key, REJEICAO_TOMADOR, TAKER, world.clock.now(), HOMOLOG, reason)
    )
    root = parse_xml(signed)
    inf = root.find(f"{NS}infPedReg")
    assert inf is not None and inf.get("Id") == f"PRE{key}203206" and len(inf.get("Id") or "") == 59
    assert inf.findtext(f"{NS}e203206/{NS}xDesc") == "Manifestação de NFS-e - Rejeição do Tomador"
    assert inf.findtext(f"{NS}e203206/{NS}cMotivo") == "9"
    assert errors(signed, Schema.NFSE_PED_REG_EVENTO) == []
    verified = verify_enveloped(signed, ca_pem=world.sandbox.ca_cert_pem, at=world.clock.now())
    assert verified.reference_id == f"PRE{key}203206" and verified.subject_cnpj == TAKER.value


def test_bad_requests_are_refused_before_anything_is_built(world: World) -> None:
    key = world.sandbox.publish_nfse(provider=PROVIDER, taker=TAKER.value).key
    now = world.clock.now()
    with pytest.raises(RequestInvalid, match="motivo"):
        build_ped_reg_evento(key, REJEICAO_TOMADOR, TAKER, now, HOMOLOG)
    with pytest.raises(RequestInvalid, match="15 a 255"):
        build_ped_reg_evento(key, REJEICAO_TOMADOR, TAKER, now, HOMOLOG, RejectionReason("1", "curto"))
    with pytest.raises(RequestInvalid, match="dígito verificador"):
        build_ped_reg_evento(key[:-1] + str((int(key[-1]) + 1) % 10), CONFIRMACAO_TOMADOR, TAKER, now, HOMOLOG)
    with pytest.raises(RequestInvalid, match="203202 ou 203206"):
        build_ped_reg_evento(key, "210200", TAKER, now, HOMOLOG)


def test_get_nfse_gives_the_issued_bytes_and_each_call_is_its_own_connection(world: World) -> None:
    nfse = world.sandbox.publish_nfse(provider=PROVIDER, taker=TAKER.value)
    answer = world.client.get_nfse(NfseKey(nfse.key))
    assert answer.ok and answer.xml == nfse.nfse
    assert world.client.http_client.timeout.read == 60.0  # NFS-e calls: 60 s (settings' default)
    pool = world.client.http_client._transport._pool  # type: ignore[attr-defined]
    assert pool.connections == []  # Connection: close: nothing kept for the next call
    again = world.client.get_nfse(NfseKey(nfse.key))
    assert again.xml == nfse.nfse and pool.connections == []
    missing = NfseKey.build(c_mun="3550308", amb_ger=2, insc_fed=PROVIDER, number=999, year_month="2611", code=1)
    not_found = world.client.get_nfse(missing)
    assert not not_found.ok and not_found.status == 404 and not_found.code == "E0404"


def test_a_foreign_nfse_is_403_and_an_outage_is_retryable(world: World) -> None:
    foreign = world.sandbox.publish_nfse(provider=PROVIDER, taker="44555666000181")
    answer = world.client.get_nfse(NfseKey(foreign.key))
    assert answer.status == 403 and "não é permitida" in answer.message
    world.sandbox.outage("sefin", 108, world.clock.now() + timedelta(minutes=5))
    with pytest.raises(HttpStatusError) as raised:
        world.client.get_nfse(NfseKey(foreign.key))
    assert raised.value.retryable


def test_register_the_taker_confirmation_then_the_second_is_e1833(world: World) -> None:
    nfse = world.sandbox.publish_nfse(provider=PROVIDER, taker=TAKER.value)
    key = NfseKey(nfse.key)
    signed = prepare_ped_reg_evento(
        world.a1, build_ped_reg_evento(key, CONFIRMACAO_TOMADOR, TAKER, world.clock.now(), HOMOLOG)
    )
    registered = world.client.register_event(key, signed)
    assert registered.status == 201 and registered.xml is not None
    evento = parse_xml(registered.xml)
    assert evento.tag == f"{NS}evento" and errors(registered.xml, Schema.NFSE_EVENTO) == []
    assert signed.split(b"?>")[-1] in registered.xml  # the signed pedido travels inside, byte-exact
    reason = RejectionReason("3", "Não ocorrência do fato gerador informado")
    rejection = prepare_ped_reg_evento(
        world.a1, build_ped_reg_evento(key, REJEICAO_TOMADOR, TAKER, world.clock.now(), HOMOLOG, reason)
    )
    refused = world.client.register_event(key, rejection)
    assert refused.status == 400 and refused.code == "E1833" and not refused.ok
    sent = [r for r in world.sandbox.referee.requests if r.service == "sefin"]
    assert [r.http_status for r in sent] == [201, 400]


def test_a_pedido_for_the_other_environment_is_not_sent(world: World) -> None:
    key = NfseKey(world.sandbox.publish_nfse(provider=PROVIDER, taker=TAKER.value).key)
    production = prepare_ped_reg_evento(
        world.a1, build_ped_reg_evento(key, CONFIRMACAO_TOMADOR, TAKER, world.clock.now(), Environment.PRODUCAO)
    )
    with pytest.raises(RequestInvalid, match="outro ambiente"):
        world.client.register_event(key, production)
    assert not [r for r in world.sandbox.referee.requests if r.service == "sefin"]


def test_an_alphanumeric_key_is_refused_by_the_current_schema_before_sending(world: World) -> None:
    key = NfseKey.build(c_mun="3550308", amb_ger=2, insc_fed="12ABC34501DE35", number=1, year_month="2611", code=1)
    with pytest.raises(RequestInvalid, match="recusado antes do envio"):
        prepare_ped_reg_evento(
            world.a1, build_ped_reg_evento(key, CONFIRMACAO_TOMADOR, TAKER, world.clock.now(), HOMOLOG)
        )
