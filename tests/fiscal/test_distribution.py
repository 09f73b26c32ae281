"""NFeDistribuicaoDFe / CTeDistribuicaoDFe client against the sandbox over real HTTPS with mutual TLS,
plus the real recorded AN answers and the request builders checked against the official XSDs."""

from __future__ import annotations

import base64
import gzip
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from lxml import etree

from app.certs.a1 import A1Certificate, load_a1
from app.config.endpoints import Service
from app.config.settings import CallTimeouts, Settings
from app.core.clock import BRASILIA, FakeClock
from app.core.ids import Cnpj, Cpf
from app.core.keys import AccessKey
from app.core.nsu import Nsu
from app.core.products import Environment, Product
from app.fiscal.distribution import (
    ConsChNFe,
    ConsNsu,
    DistNsu,
    DistributionClient,
    Operation,
    Query,
    build_request,
    decode_document,
    parse_ret_dist,
)
from app.fiscal.errors import (
    HttpStatusError,
    MalformedResponse,
    RequestInvalid,
    ServiceTimeout,
    TlsRefused,
)
from app.fiscal.http import HttpClientFactory
from app.fiscal.schemas import Schema, errors
from app.fiscal.soap import parse_reply
from app.safexml import CorruptPayload, parse_xml
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox

NFE = "http://www.portalfiscal.inf.br/nfe"
RECIPIENT = Cnpj("11222333000181")
SUPPLIER = "99888777000100"
OTHER = Cnpj("44555666000181")
HOMOLOG = Environment.HOMOLOGACAO
FIXTURES = Path(__file__).parent.parent / "fixtures"


@dataclass
class World:
    clock: FakeClock
    sandbox: Sandbox
    cert: IssuedCert
    a1: A1Certificate
    ca_file: Path

    def factory(self, *, timeout: float = 10.0, inprocess: bool = False) -> HttpClientFactory:
        settings = Settings(call_timeouts=CallTimeouts(nfe=timeout, cte=timeout))
        urls = self.sandbox.urls
        for service, key in ((Service.NFE_DISTRIBUICAO, "nfe_dist"), (Service.CTE_DISTRIBUICAO, "cte_dist")):
            settings = settings.with_endpoint(service, HOMOLOG, url=urls[key], ca_bundle=self.ca_file)
        if inprocess:
            return HttpClientFactory(settings, transport_for=lambda a1: self.sandbox.transport(self.cert))
        return HttpClientFactory(settings)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    clock = FakeClock()
    with Sandbox(clock, seed=3) as sandbox:
        cert = sandbox.company(RECIPIENT.value, "DESTINATARIA TESTE LTDA")
        sandbox.start_https()
        ca_file = tmp_path / "sandbox-ca.pem"
        ca_file.write_bytes(sandbox.ca_cert_pem)
        yield World(clock, sandbox, cert, load_a1(cert.pfx, cert.password, now=clock.now()), ca_file)


@pytest.fixture
def factory(world: World) -> Iterator[HttpClientFactory]:
    with world.factory() as made:
        yield made


@pytest.fixture
def nfe(world: World, factory: HttpClientFactory) -> DistributionClient:
    return DistributionClient.from_factory(factory, world.a1, Product.NFE, HOMOLOG)


# --- request builders ------------------------------------------------------------------------------


def test_requests_are_zero_padded_and_valid_against_the_official_xsds() -> None:
    key = AccessKey.build(
        uf="SP", year_month="2611", issuer=SUPPLIER, model="55", serie=1, number=42, tp_emis=1, code=12345678
    )
    cases: list[tuple[Product, Query, str, Schema]] = [
        (Product.NFE, DistNsu(Nsu(7)), "<distNSU><ultNSU>000000000000007</ultNSU></distNSU>", Schema.NFE_DIST_REQUEST),
        (Product.NFE, ConsNsu(Nsu(12)), "<consNSU><NSU>000000000000012</NSU></consNSU>", Schema.NFE_DIST_REQUEST),
        (Product.NFE, ConsChNFe(key), f"<consChNFe><chNFe>{key}</chNFe></consChNFe>", Schema.NFE_DIST_REQUEST),
        (Product.CTE, DistNsu(Nsu(0)), "<distNSU><ultNSU>000000000000000</ultNSU></distNSU>", Schema.CTE_DIST_REQUEST),
    ]
    for product, query, fragment, schema in cases:
        request = build_request(product, HOMOLOG, RECIPIENT, query, "SP")
        assert fragment.encode() in request
        assert b"<tpAmb>2</tpAmb><cUFAutor>35</cUFAutor><CNPJ>11222333000181</CNPJ>" in request
        assert errors(request, schema) == []
    person = build_request(Product.NFE, Environment.PRODUCAO, Cpf("52998224725"), DistNsu(Nsu(0)))
    assert b"<tpAmb>1</tpAmb><CPF>52998224725</CPF>" in person  # cUFAutor is optional for NF-e
    alnum = build_request(Product.NFE, HOMOLOG, Cnpj.from_body("12ABC3450001"), DistNsu(Nsu(0)), 35)
    assert b"<CNPJ>12ABC345000188</CNPJ>" in alnum  # distDFeInt 1.01 takes the alphanumeric CNPJ


def test_requests_of_a_validated_shape_stay_valid_for_every_nsu() -> None:
    # A company's requests differ only by the NSU once their shape is validated (``Nsu`` is 15
    # digits by construction); each still is exactly what the schema accepts.
    for nsu in (0, 1, 49, 10**14, 10**15 - 1):
        for query in (DistNsu(Nsu(nsu)), ConsNsu(Nsu(nsu))):
            request = build_request(Product.NFE, HOMOLOG, RECIPIENT, query, "SP")
            assert f"{nsu:015d}".encode() in request
            assert errors(request, Schema.NFE_DIST_REQUEST) == []
    # A shape never validated is still checked: the same company on CT-e without its UF.
    with pytest.raises(RequestInvalid, match="exige a UF do autor"):
        build_request(Product.CTE, HOMOLOG, RECIPIENT, DistNsu(Nsu(3)))


def test_local_refusals_name_the_problem() -> None:
    with pytest.raises(RequestInvalid, match="exige a UF do autor"):
        build_request(Product.CTE, HOMOLOG, RECIPIENT, DistNsu(Nsu(0)))
    key = AccessKey.build(uf="SP", year_month="2611", issuer=SUPPLIER, model="57", serie=1, number=1, tp_emis=1, code=1)
    with pytest.raises(RequestInvalid, match="não oferece consulta por chave"):
        build_request(Product.CTE, HOMOLOG, RECIPIENT, ConsChNFe(key), 35)
    with pytest.raises(RequestInvalid, match="modelo 55"):
        build_request(Product.NFE, HOMOLOG, RECIPIENT, ConsChNFe(key), 35)
    with pytest.raises(RequestInvalid, match="cUFAutor"):
        build_request(Product.NFE, HOMOLOG, RECIPIENT, DistNsu(Nsu(0)), "XX")
    with pytest.raises(RequestInvalid):
        build_request(Product.NFSE, HOMOLOG, RECIPIENT, DistNsu(Nsu(0)))


def test_a_request_invalid_against_the_xsd_never_reaches_the_network(world: World, factory: HttpClientFactory) -> None:
    cte = DistributionClient.from_factory(factory, world.a1, Product.CTE, HOMOLOG)
    with pytest.raises(RequestInvalid) as caught:
        cte.dist_nsu(Cnpj.from_body("12ABC3450001"), 0, c_uf_autor="SP")
    assert "distDFeInt_v1.00.xsd" in caught.value.message
    assert "ainda não aceita CNPJ alfanumérico" in caught.value.message
    assert caught.value.errors and not caught.value.retryable
    assert world.sandbox.referee.requests == []


# --- distribution against the sandbox ---------------------------------------------------------------


def test_dist_nsu_138_decodes_every_document_byte_exact(world: World, nfe: DistributionClient) -> None:
    published = [world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value) for _ in range(3)]
    carried = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=OTHER.value, transporter=RECIPIENT.value)
    world.clock.advance(30)

    reply = nfe.dist_nsu(RECIPIENT, 0, c_uf_autor="SP")

    assert reply.cstat == 138 and reply.xmotivo == "Documento(s) localizado(s)"
    assert reply.operation is Operation.DIST_NSU and reply.product is Product.NFE
    assert (reply.ult_nsu, reply.max_nsu) == (4, 4) and reply.caught_up
    assert reply.tp_amb == 2 and reply.ver_aplic
    assert reply.dh_resp == world.clock.now().replace(microsecond=0)
    assert reply.dh_resp is not None and reply.dh_resp.utcoffset() == timedelta(hours=-3)
    assert [(d.nsu, d.schema) for d in reply.documents] == [
        (1, "resNFe_v1.01.xsd"),
        (2, "resNFe_v1.01.xsd"),
        (3, "resNFe_v1.01.xsd"),
        (4, "procNFe_v4.00.xsd"),
    ]
    assert [d.xml for d in reply.documents] == [g.res_nfe for g in published] + [carried.nfe_proc]
    assert all(d.ok and d.raw_b64 for d in reply.documents)
    assert b"<ultNSU>000000000000000</ultNSU>" in reply.request_bytes
    assert b"retDistDFeInt" in reply.response_bytes and reply.elapsed_ms > 0
    assert world.sandbox.referee.report()["violations"] == []


def test_137_on_an_empty_queue_then_656_on_a_premature_query(world: World, nfe: DistributionClient) -> None:
    empty = nfe.dist_nsu(RECIPIENT, 0)
    assert empty.cstat == 137 and empty.documents == () and empty.caught_up
    assert empty.ult_nsu == 0 and empty.max_nsu == 0

    world.clock.advance(timedelta(minutes=10))
    premature = nfe.dist_nsu(RECIPIENT, 0)
    assert premature.cstat == 656
    assert "Consumo Indevido" in premature.xmotivo
    assert premature.ult_nsu == 0  # NT 2014.002 v1.14: the 656 carries the last ultNSU
    rules = [v["rule"] for v in world.sandbox.referee.report()["violations"]]
    assert rules == ["premature_query"]


def test_cons_nsu_and_cons_ch_nfe(world: World, nfe: DistributionClient) -> None:
    first = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    second = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    world.clock.advance(30)

    by_nsu = nfe.cons_nsu(RECIPIENT, 2, c_uf_autor=35)
    assert by_nsu.cstat == 138 and by_nsu.operation is Operation.CONS_NSU
    assert [(d.nsu, d.xml) for d in by_nsu.documents] == [(2, second.res_nfe)]
    assert b"<consNSU><NSU>000000000000002</NSU></consNSU>" in by_nsu.request_bytes

    by_key = nfe.cons_ch_nfe(RECIPIENT, first.key)
    assert by_key.cstat == 138 and by_key.operation is Operation.CONS_CHAVE
    assert [(d.nsu, d.schema, d.xml) for d in by_key.documents] == [(1, "resNFe_v1.01.xsd", first.res_nfe)]

    never = nfe.cons_nsu(RECIPIENT, 9)
    assert never.cstat == 589 and never.documents == ()


def test_593_when_the_cnpj_base_is_not_the_certificates(nfe: DistributionClient) -> None:
    reply = nfe.dist_nsu(OTHER, 0)
    assert reply.cstat == 593
    assert "CNPJ-Base" in reply.xmotivo


@pytest.mark.parametrize(("kind", "reason"), [("corrupt_gzip", "corrupt_gzip"), ("corrupt_base64", "corrupt_base64")])
def test_a_corrupt_doczip_spoils_only_its_own_document(
    world: World, nfe: DistributionClient, kind: str, reason: str
) -> None:
    published = [world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value) for _ in range(3)]
    world.sandbox.inject_fault("nfe_dist", kind)

    reply = nfe.dist_nsu(RECIPIENT, 0)

    assert reply.cstat == 138 and [d.nsu for d in reply.documents] == [1, 2, 3]
    broken, *good = reply.documents
    assert broken.xml is None and isinstance(broken.error, CorruptPayload)
    assert broken.error.reason == reason and broken.raw_b64 and not broken.ok
    assert [d.xml for d in good] == [g.res_nfe for g in published[1:]]


def test_a_truncated_body_is_a_malformed_response(world: World, nfe: DistributionClient) -> None:
    world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    world.sandbox.inject_fault("nfe_dist", "truncated")
    with pytest.raises(MalformedResponse) as caught:
        nfe.dist_nsu(RECIPIENT, 0)
    assert caught.value.retryable and "ilegível" in caught.value.message
    assert caught.value.url == world.sandbox.urls["nfe_dist"]


def test_a_5xx_is_an_http_status_error(world: World, nfe: DistributionClient) -> None:
    world.sandbox.inject_fault("nfe_dist", "http_503")
    with pytest.raises(HttpStatusError) as caught:
        nfe.dist_nsu(RECIPIENT, 0)
    assert caught.value.status == 503 and caught.value.retryable
    assert "503" in caught.value.message


def test_a_stall_longer_than_the_timeout_is_a_service_timeout(world: World) -> None:
    world.sandbox.inject_fault("nfe_dist", "timeout", stall_seconds=5.0)
    with world.factory(timeout=0.5) as quick:
        client = DistributionClient.from_factory(quick, world.a1, Product.NFE, HOMOLOG)
        with pytest.raises(ServiceTimeout) as caught:
            client.dist_nsu(RECIPIENT, 0)
    assert caught.value.retryable and "tempo limite" in caught.value.message


def test_without_a_client_certificate_the_handshake_is_refused(world: World) -> None:
    context = ssl.create_default_context(cadata=world.sandbox.ca_cert_pem.decode("ascii"))
    with httpx.Client(verify=context, timeout=5.0) as anonymous:
        client = DistributionClient(anonymous, world.sandbox.urls["nfe_dist"], Product.NFE, HOMOLOG)
        with pytest.raises(TlsRefused) as caught:
            client.dist_nsu(RECIPIENT, 0)
    assert not caught.value.retryable
    assert "recusou o certificado digital da empresa" in caught.value.message
    assert world.sandbox.referee.requests == []


def test_the_in_process_transport_gives_the_same_answers(world: World, nfe: DistributionClient) -> None:
    published = world.sandbox.publish_nfe(emitter=SUPPLIER, recipient=RECIPIENT.value)
    over_tls = nfe.cons_nsu(RECIPIENT, 1)
    with world.factory(inprocess=True) as direct:
        client = DistributionClient.from_factory(direct, world.a1, Product.NFE, HOMOLOG)
        in_process = client.cons_nsu(RECIPIENT, 1)
    assert over_tls.cstat == in_process.cstat == 138
    assert over_tls.documents == in_process.documents
    assert in_process.documents[0].xml == published.res_nfe
    assert over_tls.request_bytes == in_process.request_bytes
    assert over_tls.response_bytes == in_process.response_bytes


def test_cte_distribution_reuses_the_client_with_the_1_00_layout(world: World, factory: HttpClientFactory) -> None:
    cte = world.sandbox.publish_cte(emitter=SUPPLIER, sender=OTHER.value, recipient=RECIPIENT.value)
    world.clock.advance(30)
    client = DistributionClient.from_factory(factory, world.a1, Product.CTE, HOMOLOG)

    reply = client.dist_nsu(RECIPIENT, 0, c_uf_autor="SP")

    assert reply.cstat == 138 and reply.product is Product.CTE
    assert b'versao="1.00"' in reply.request_bytes and b"cteDistDFeInteresse" in reply.request_bytes
    assert [d.nsu for d in reply.documents] == [1]
    assert reply.documents[0].xml == cte.cte_proc
    assert reply.documents[0].schema.startswith("procCTe")
    # the CT-e dhResp has no UTC offset: read as Brasília time
    assert reply.dh_resp == world.clock.now().replace(microsecond=0)
    assert reply.dh_resp is not None and reply.dh_resp.tzinfo is BRASILIA


# --- tolerant reading, real recorded answers ---------------------------------------------------------


def test_the_real_2017_production_reply_decodes_all_50_documents() -> None:
    content = (FIXTURES / "nfe" / "soap-retDistDFeInt-138-prod-2017.xml").read_bytes()
    _, ret = parse_reply(200, content, "retDistDFeInt")
    reply = parse_ret_dist(ret, product=Product.NFE, operation=Operation.DIST_NSU, response_bytes=content)
    assert (reply.cstat, reply.ult_nsu, reply.max_nsu, reply.ver_aplic) == (138, 6811, 6991, "1.1.9")
    assert reply.dh_resp is not None and reply.dh_resp.isoformat() == "2017-04-09T18:39:56-03:00"
    assert [d.nsu for d in reply.documents] == list(range(6762, 6812))
    assert all(d.ok for d in reply.documents)
    roots = {etree.QName(parse_xml(d.xml or b"")).localname for d in reply.documents}
    assert roots == {"resNFe", "resEvento", "procEventoNFe"}
    assert {d.schema.split("_")[0] for d in reply.documents} == roots
    assert not reply.caught_up


def test_the_real_2020_soap11_137_reply_parses() -> None:
    content = (FIXTURES / "recorded" / "an-nfeDistDFeInteresse-137-real-2020.xml").read_bytes()
    soap_ns, ret = parse_reply(200, content, "retDistDFeInt")
    assert soap_ns == "http://schemas.xmlsoap.org/soap/envelope/"
    reply = parse_ret_dist(ret, product=Product.NFE, operation=Operation.CONS_NSU)
    assert (reply.cstat, reply.ult_nsu, reply.max_nsu, reply.tp_amb) == (137, 51, 20175, 1)
    assert reply.documents == () and reply.caught_up


def test_absent_nsus_and_other_prefixes_are_tolerated() -> None:
    content = (
        b'<S:Envelope xmlns:S="http://www.w3.org/2003/05/soap-envelope"><S:Body><w:anyWrapper xmlns:w="urn:x">'
        b'<n:retDistDFeInt xmlns:n="http://www.portalfiscal.inf.br/nfe" versao="1.02"><n:tpAmb>2</n:tpAmb>'
        b"<n:verAplic>X</n:verAplic><n:cStat>108</n:cStat><n:xMotivo>Servico Paralisado</n:xMotivo>"
        b"<n:dhResp>2026-11-02T09:00:00</n:dhResp></n:retDistDFeInt></w:anyWrapper></S:Body></S:Envelope>"
    )
    _, ret = parse_reply(200, content, "retDistDFeInt")
    reply = parse_ret_dist(ret, product=Product.NFE, operation=Operation.DIST_NSU)
    assert (reply.cstat, reply.ult_nsu, reply.max_nsu) == (108, None, None)
    assert reply.dh_resp is not None and reply.dh_resp.utcoffset() == timedelta(hours=-3)
    assert not reply.caught_up


def test_comments_and_unqualified_elements_in_a_reply_are_read_as_before() -> None:
    packed = base64.b64encode(gzip.compress(b"<resNFe/>")).decode()
    content = (
        b'<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>'
        b"<!-- gateway --><retDistDFeInt><!-- first --><?pi x?><cStat>138</cStat><ultNSU>7</ultNSU>"
        b"<maxNSU>9</maxNSU><loteDistDFeInt><!-- c --><docZip NSU='7' schema='resNFe_v1.01.xsd'>"
        + packed.encode()
        + b"</docZip></loteDistDFeInt></retDistDFeInt></soap:Body></soap:Envelope>"
    )
    soap_ns, ret = parse_reply(200, content, "retDistDFeInt")
    reply = parse_ret_dist(ret, product=Product.NFE, operation=Operation.DIST_NSU)
    assert soap_ns == "http://schemas.xmlsoap.org/soap/envelope/"
    assert (reply.cstat, reply.ult_nsu, reply.max_nsu) == (138, 7, 9)
    assert [(d.nsu, d.xml) for d in reply.documents] == [(7, b"<resNFe/>")]


def test_a_doczip_without_nsu_makes_the_reply_unusable() -> None:
    ret = etree.fromstring(
        f'<retDistDFeInt xmlns="{NFE}" versao="1.01"><cStat>138</cStat><loteDistDFeInt>'
        '<docZip schema="resNFe_v1.01.xsd">H4sI</docZip></loteDistDFeInt></retDistDFeInt>'.encode()
    )
    with pytest.raises(MalformedResponse, match="NSU"):
        parse_ret_dist(ret, product=Product.NFE, operation=Operation.DIST_NSU)


def test_decode_document_keeps_the_gzip_it_inflated() -> None:
    xml = b'<resNFe xmlns="http://www.portalfiscal.inf.br/nfe"/>'
    packed = gzip.compress(xml)
    doc = decode_document(5, "resNFe_v1.01.xsd", base64.b64encode(packed).decode())
    assert (doc.nsu, doc.schema, doc.xml, doc.xml_gzip, doc.ok) == (5, "resNFe_v1.01.xsd", xml, packed, True)
    corrupt = decode_document(6, "resNFe_v1.01.xsd", base64.b64encode(packed[:-3]).decode())
    assert corrupt.xml is None and corrupt.xml_gzip is None and isinstance(corrupt.error, CorruptPayload)
    assert "xml_gzip" not in repr(doc)
