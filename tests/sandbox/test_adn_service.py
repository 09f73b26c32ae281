"""ADN contributor API and Sefin Nacional: JSON shapes per the official OpenAPI, 404/429/REJEICAO,
parties, and a signed pedRegEvento (203202) distributed back through the ADN."""

from __future__ import annotations

import base64
import gzip
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from lxml import etree

from app.core.clock import FakeClock, brasilia_iso
from app.fiscal.xmldsig import sign_enveloped
from app.sandbox import xsd
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox

NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"


def _unzip(text: str) -> bytes:
    return gzip.decompress(base64.b64decode(text))


def _spec_properties(fixtures_dir: Path, name: str) -> set[str]:
    spec = json.loads((fixtures_dir / "specs" / "adn-contribuinte-openapi-prod.json").read_text(encoding="utf-8"))
    return set(spec["components"]["schemas"][name]["properties"])


def test_adn_distribution_shape_404_and_429(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any, fixtures_dir: Path
) -> None:
    nfse = sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT)
    response = inproc.get("/contribuintes/DFe/0", params={"cnpjConsulta": h.RECIPIENT, "lote": "true"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == _spec_properties(fixtures_dir, "LoteDistribuicaoNSUResponse")
    assert body["StatusProcessamento"] == "DOCUMENTOS_LOCALIZADOS"
    (item,) = body["LoteDFe"]
    assert set(item) == _spec_properties(fixtures_dir, "DistribuicaoNSU")
    assert (item["NSU"], item["ChaveAcesso"], item["TipoDocumento"]) == (1, nfse.key, "NFSE")
    assert xsd.errors(_unzip(item["ArquivoXml"]), "NFSe_v1.01") == []

    empty = inproc.get("/contribuintes/DFe/1")
    assert empty.status_code == 404
    assert empty.json()["StatusProcessamento"] == "NENHUM_DOCUMENTO_LOCALIZADO"
    assert empty.json()["Erros"][0]["Codigo"] == "E2220"
    clock.advance(timedelta(minutes=10))
    limited = inproc.get("/contribuintes/DFe/1")
    assert limited.status_code == 429
    assert 3000 <= int(limited.headers["Retry-After"]) <= 3001
    assert [v.rule for v in sandbox.referee.violations()] == ["adn_premature_query"]
    clock.advance(timedelta(minutes=51))
    assert inproc.get("/contribuintes/DFe/1").status_code == 404
    report = sandbox.referee.report()
    assert report["companies"][h.RECIPIENT]["nfse"]["delivered"]["1"]["via"] == ["adn_dfe"]


def test_adn_rejects_another_root_and_the_provider_gets_its_own_nfse(
    sandbox: Sandbox, inproc: httpx.Client, h: Any
) -> None:
    nfse = sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT)
    rejected = inproc.get("/contribuintes/DFe/0", params={"cnpjConsulta": h.OTHER})
    assert rejected.status_code == 400
    assert rejected.json()["StatusProcessamento"] == "REJEICAO" and rejected.json()["LoteDFe"] == []
    provider = sandbox.company(h.SUPPLIER, "PRESTADOR")
    with httpx.Client(transport=sandbox.transport(provider), base_url="https://sandbox.local") as c:
        lote = c.get("/contribuintes/DFe/0").json()["LoteDFe"]
    assert [i["ChaveAcesso"] for i in lote] == [nfse.key]


def test_adn_rate_limit_per_minute(clock: FakeClock, h: Any) -> None:
    with Sandbox(clock, adn_rate_per_minute=3) as sandbox:
        cert = sandbox.company(h.RECIPIENT, "DESTINATARIA")
        for _ in range(3):
            sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT)
        with httpx.Client(transport=sandbox.transport(cert), base_url="https://sandbox.local") as c:
            statuses = [c.get(f"/contribuintes/DFe/{n}", params={"lote": "false"}).status_code for n in (1, 2, 3, 3)]
        assert statuses == [200, 200, 200, 429]
        assert sandbox.referee.violations()[0].rule == "adn_rate_limit"


def _ped_reg_evento(cert: IssuedCert, key: str, code: str, author: str, clock: FakeClock) -> bytes:
    desc = {"203202": "Manifestação de NFS-e - Confirmação do Tomador"}[code]
    ident = f"PRE{key}{code}"
    xml = (
        f'<pedRegEvento xmlns="{NFSE_NS}" versao="1.01"><infPedReg Id="{ident}"><tpAmb>2</tpAmb>'
        f"<verAplic>Teste_1.0</verAplic><dhEvento>{brasilia_iso(clock.now())}</dhEvento>"
        f"<CNPJAutor>{author}</CNPJAutor><chNFSe>{key}</chNFSe><e{code}><xDesc>{desc}</xDesc></e{code}>"
        f"</infPedReg></pedRegEvento>"
    ).encode()
    return sign_enveloped(xml, ident, cert.key_pem, cert.cert_pem)


def test_sefin_get_and_taker_confirmation(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, recipient_cert: IssuedCert, h: Any
) -> None:
    nfse = sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT)
    got = inproc.get(f"/SefinNacional/nfse/{nfse.key}")
    assert got.status_code == 200 and _unzip(got.json()["nfseXmlGZipB64"]) == nfse.nfse
    assert inproc.get("/SefinNacional/nfse/123").status_code == 400
    assert inproc.get(f"/SefinNacional/nfse/{nfse.key[:-1]}9").status_code in (404,)
    stranger = sandbox.company(h.OTHER, "ESTRANHA")
    with httpx.Client(transport=sandbox.transport(stranger), base_url="https://sandbox.local") as c:
        assert c.get(f"/SefinNacional/nfse/{nfse.key}").status_code == 403

    ped = _ped_reg_evento(recipient_cert, nfse.key, "203202", h.RECIPIENT, clock)
    payload = {"pedidoRegistroEventoXmlGZipB64": base64.b64encode(gzip.compress(ped)).decode()}
    created = inproc.post(f"/SefinNacional/nfse/{nfse.key}/eventos", json=payload)
    assert created.status_code == 201, created.text
    evento = _unzip(created.json()["eventoXmlGZipB64"])
    assert etree.QName(etree.fromstring(evento)).localname == "evento"
    assert xsd.errors(evento, "evento_v1.01") == []
    again = inproc.post(f"/SefinNacional/nfse/{nfse.key}/eventos", json=payload)
    assert again.status_code == 400 and again.json()["erro"]["codigo"] == "E1833"

    events = inproc.get(f"/contribuintes/NFSe/{nfse.key}/Eventos").json()["LoteDFe"]
    assert [(i["TipoDocumento"], i["TipoEvento"]) for i in events] == [("EVENTO", "CONFIRMACAO_TOMADOR")]
    assert [e.kind for e in sandbox.entries("nfse", h.SUPPLIER)] == ["NFSE", "EVENTO"]


def test_sefin_refuses_a_forged_or_foreign_event(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, recipient_cert: IssuedCert, h: Any
) -> None:
    nfse = sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT)
    ped = _ped_reg_evento(recipient_cert, nfse.key, "203202", h.RECIPIENT, clock)
    forged = ped.replace(b"<verAplic>Teste_1.0</verAplic>", b"<verAplic>Teste_2.0</verAplic>")
    payload = {"pedidoRegistroEventoXmlGZipB64": base64.b64encode(gzip.compress(forged)).decode()}
    bad = inproc.post(f"/SefinNacional/nfse/{nfse.key}/eventos", json=payload)
    assert bad.status_code == 400 and bad.json()["erro"]["codigo"] == "E0714"
    garbage = inproc.post(f"/SefinNacional/nfse/{nfse.key}/eventos", json={"pedidoRegistroEventoXmlGZipB64": "x"})
    assert garbage.status_code == 400
    provider = sandbox.company(h.SUPPLIER, "PRESTADOR")
    ped = _ped_reg_evento(provider, nfse.key, "203202", h.SUPPLIER, clock)
    with httpx.Client(transport=sandbox.transport(provider), base_url="https://sandbox.local") as c:
        payload = {"pedidoRegistroEventoXmlGZipB64": base64.b64encode(gzip.compress(ped)).decode()}
        not_taker = c.post(f"/SefinNacional/nfse/{nfse.key}/eventos", json=payload)
    assert not_taker.status_code == 400 and not_taker.json()["erro"]["codigo"] == "E1831"


def test_sefin_flags_the_same_rejected_pedido_sent_again_within_the_hour(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, recipient_cert: IssuedCert, h: Any
) -> None:
    nfse = sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT)
    sandbox.publish_nfse_event(nfse, "203202", author=h.RECIPIENT)  # already confirmed elsewhere
    ped = _ped_reg_evento(recipient_cert, nfse.key, "203202", h.RECIPIENT, clock)
    payload = {"pedidoRegistroEventoXmlGZipB64": base64.b64encode(gzip.compress(ped)).decode()}
    assert inproc.post(f"/SefinNacional/nfse/{nfse.key}/eventos", json=payload).status_code == 400
    assert sandbox.referee.violations() == []  # one rejection is the service's answer, not a fault
    clock.advance(timedelta(minutes=30))
    assert inproc.post(f"/SefinNacional/nfse/{nfse.key}/eventos", json=payload).status_code == 400
    [violation] = sandbox.referee.violations()
    assert violation.rule == "repeated_rejected_event" and f"PRE{nfse.key}203202" in violation.detail
    clock.advance(timedelta(hours=1, minutes=1))
    inproc.post(f"/SefinNacional/nfse/{nfse.key}/eventos", json=payload)
    assert len(sandbox.referee.violations()) == 1  # an hour after the last rejection it may go again


def test_routes_ignore_case_as_the_real_asp_net_core_services_do(
    sandbox: Sandbox, recipient_cert: IssuedCert, client_for: Any, h: Any
) -> None:
    # A published client (dfe-nfse) asks /contribuintes/dfe/0: the real ADN serves it.
    nfse = sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT)
    client = client_for(recipient_cert)
    lower = client.get("/contribuintes/dfe/0", params={"cnpjConsulta": h.RECIPIENT, "lote": "true"})
    assert lower.status_code == 200 and [i["NSU"] for i in lower.json()["LoteDFe"]] == [1]
    canonical = client.get(f"/contribuintes/NFSe/{nfse.key}/Eventos")
    mixed = client.get(f"/CONTRIBUINTES/nfse/{nfse.key}/eventos")
    assert (mixed.status_code, mixed.json()["StatusProcessamento"]) == (
        canonical.status_code,
        canonical.json()["StatusProcessamento"],
    )
    assert client.get(f"/sefinnacional/NFSe/{nfse.key}").status_code == 200
    # A path that is not a route is still a 404, whatever its case.
    assert client.get("/contribuintes/dfes/0").status_code == 404
