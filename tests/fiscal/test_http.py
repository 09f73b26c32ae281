"""HttpClientFactory (mutual TLS from the A1, caching, closing, injected transport) and the translation
of httpx failures into the communication error tree, against the sandbox over real HTTPS."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from app.certs.a1 import A1Certificate, load_a1
from app.certs.tls import TrustBundleError
from app.config.endpoints import Service
from app.config.settings import CallTimeouts, Settings
from app.core.clock import FakeClock
from app.core.products import Environment
from app.fiscal.errors import ConnectionFailed, HttpStatusError, ServiceTimeout, SoapFault, TlsRefused
from app.fiscal.http import HttpClientFactory, ServiceClient, translate
from app.sandbox.pki import IssuedCert, TestPki
from app.sandbox.sandbox import Sandbox

HOMOLOG = Environment.HOMOLOGACAO
RECIPIENT = "11222333000181"


@dataclass
class World:
    clock: FakeClock
    sandbox: Sandbox
    cert: IssuedCert
    a1: A1Certificate
    ca_file: Path

    def settings(self, *, ca_file: Path | None = None, timeout: float = 20.0) -> Settings:
        settings = Settings(call_timeouts=CallTimeouts(nfe=timeout, cte=timeout))
        for service, key in (
            (Service.NFE_DISTRIBUICAO, "nfe_dist"),
            (Service.CTE_DISTRIBUICAO, "cte_dist"),
            (Service.NFE_RECEPCAO_EVENTO, "nfe_evento"),
        ):
            settings = settings.with_endpoint(service, HOMOLOG, url=self.sandbox.urls[key], ca_bundle=ca_file)
        return settings


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    clock = FakeClock()
    with Sandbox(clock) as sandbox:
        cert = sandbox.company(RECIPIENT, "DESTINATARIA TESTE LTDA")
        sandbox.start_https()
        ca_file = tmp_path / "sandbox-ca.pem"
        ca_file.write_bytes(sandbox.ca_cert_pem)
        yield World(clock, sandbox, cert, load_a1(cert.pfx, cert.password, now=clock.now()), ca_file)


def test_the_client_presents_the_a1_over_mutual_tls_and_is_cached(world: World) -> None:
    with HttpClientFactory(world.settings(ca_file=world.ca_file)) as factory:
        client = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        assert isinstance(client, ServiceClient)
        response = client.get(factory.url(Service.NFE_DISTRIBUICAO, HOMOLOG))
        assert response.status_code == 200 and b"use POST SOAP" in response.content
        assert response.http_version == "HTTP/1.1"
        assert factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG) is client
        other_service = factory.client(world.a1, Service.NFE_RECEPCAO_EVENTO, HOMOLOG)
        assert other_service is not client
        assert client.timeout.read == 20.0 and client.timeout.connect == 20.0
    assert client.is_closed and other_service.is_closed
    with pytest.raises(RuntimeError):
        factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)


def test_the_icp_bundle_is_the_default_trust_and_a_new_certificate_rebuilds_the_client(world: World) -> None:
    with HttpClientFactory(world.settings(), icp_bundle=world.ca_file, connect_timeout=5.0) as factory:
        first = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        assert first.get(factory.url(Service.NFE_DISTRIBUICAO, HOMOLOG)).status_code == 200
        assert first.timeout.connect == 5.0
        renewed = world.sandbox.company(RECIPIENT, "DESTINATARIA TESTE LTDA")
        a1 = load_a1(renewed.pfx, renewed.password, now=world.clock.now())
        second = factory.client(a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        assert second is not first and first.is_closed
        factory.discard(a1.holder_id)
        assert second.is_closed


def test_settings_changes_rebuild_the_client(world: World) -> None:
    with HttpClientFactory(world.settings(ca_file=world.ca_file)) as factory:
        first = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        factory.update_settings(world.settings(ca_file=world.ca_file, timeout=7.0))
        second = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        assert second is not first and second.timeout.read == 7.0


def test_idle_clients_are_closed_and_built_again_on_the_next_request(world: World) -> None:
    # 200 companies' idle TLS clients held ~12 MB all day in the tray (issue 20).
    with HttpClientFactory(world.settings(ca_file=world.ca_file)) as factory:
        url = factory.url(Service.NFE_DISTRIBUICAO, HOMOLOG)
        client = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        assert client.get(url).status_code == 200
        assert factory.release_idle(30.0) == 0 and not client.is_closed  # just used
        assert factory.release_idle(30.0, now=time.monotonic() + 31) == 1 and client.is_closed
        again = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        assert again is not client and again.get(url).status_code == 200


def test_a_client_is_never_closed_while_its_answer_is_being_read(world: World) -> None:
    with HttpClientFactory(world.settings(ca_file=world.ca_file)) as factory:
        url = factory.url(Service.NFE_DISTRIBUICAO, HOMOLOG)
        client = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        later = time.monotonic() + 3600
        with client.stream("GET", url) as response:
            assert factory.release_idle(30.0, now=later) == 0 and not client.is_closed
            assert b"use POST SOAP" in response.read()
        assert factory.release_idle(30.0, now=later) == 1 and client.is_closed


def test_an_untrusted_server_certificate_is_a_tls_refusal(world: World, tmp_path: Path) -> None:
    stranger = tmp_path / "other-ca.pem"
    stranger.write_bytes(TestPki.create().ca_cert_pem)
    with HttpClientFactory(world.settings(ca_file=stranger)) as factory:
        client = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        with pytest.raises(httpx.ConnectError) as raw:
            client.get(factory.url(Service.NFE_DISTRIBUICAO, HOMOLOG))
    error = translate(raw.value)
    assert isinstance(error, TlsRefused) and not error.retryable
    assert "não é confiável" in error.message and "ICP-Brasil" in error.message


def test_a_missing_trust_bundle_is_reported_before_any_call(world: World, tmp_path: Path) -> None:
    with HttpClientFactory(world.settings(ca_file=tmp_path / "nowhere.pem")) as factory:
        with pytest.raises(TrustBundleError, match="ICP-Brasil"):
            factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)


def test_the_injected_transport_replaces_the_network(world: World) -> None:
    made: list[str] = []

    def transport_for(a1: A1Certificate) -> httpx.BaseTransport:
        made.append(a1.holder_id)
        return world.sandbox.transport(world.cert)

    with HttpClientFactory(world.settings(), transport_for=transport_for) as factory:
        client = factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
        assert isinstance(client, ServiceClient)
        assert client.get(factory.url(Service.NFE_DISTRIBUICAO, HOMOLOG)).status_code == 200
        factory.client(world.a1, Service.NFE_DISTRIBUICAO, HOMOLOG)
    assert made == [RECIPIENT]


def test_a_closed_port_is_a_retryable_connection_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with httpx.Client(timeout=5.0) as client, pytest.raises(httpx.ConnectError) as raw:
        client.get(f"http://127.0.0.1:{port}/")
    error = translate(raw.value, "http://127.0.0.1/")
    assert isinstance(error, ConnectionFailed) and error.retryable
    assert error.url == "http://127.0.0.1/" and "conectar" in error.message


def test_timeouts_and_statuses_say_whether_to_retry() -> None:
    request = httpx.Request("POST", "https://an.example/x")
    timeout = translate(httpx.ReadTimeout("slow", request=request))
    assert isinstance(timeout, ServiceTimeout) and timeout.retryable and timeout.url == "https://an.example/x"
    assert isinstance(translate(httpx.ConnectTimeout("slow", request=request)), ServiceTimeout)
    assert isinstance(translate(httpx.RemoteProtocolError("gone", request=request)), ConnectionFailed)
    assert HttpStatusError(502).retryable and HttpStatusError(429).retryable
    assert not HttpStatusError(404).retryable and "configurações" in HttpStatusError(404).message
    assert SoapFault("soap:Receiver", "x").retryable and not SoapFault("soap:Sender", "x").retryable


SOAP_TYPE = 'application/soap+xml; charset=utf-8; action="urn:op"'


def _same_request(fast: httpx.Request, general: httpx.Request) -> None:
    assert fast.method == general.method and fast.url == general.url
    assert fast.headers.raw == general.headers.raw  # same headers, same order, same case
    assert fast.content == general.content and fast.extensions == general.extensions


def test_build_post_is_the_request_build_request_makes() -> None:
    url = "https://an.example/ws/dist.asmx"
    with ServiceClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)), headers={"User-Agent": "T"}) as c:
        for body in (b"<a/>", b"<longer-body/>" * 40, b"<a/>", b""):  # the second call reuses the cached form
            _same_request(
                c.build_post(url, body, SOAP_TYPE),
                c.build_request("POST", url, content=body, headers={"Content-Type": SOAP_TYPE}),
            )
        assert c.build_post(url, b"<a/>", SOAP_TYPE).headers["Content-Length"] == "4"
        # a change to the client's headers or timeout reaches the next request
        c.headers["X-Trace"] = "1"
        c.timeout = httpx.Timeout(3.0)
        fast = c.build_post(url, b"<a/>", SOAP_TYPE)
        _same_request(fast, c.build_request("POST", url, content=b"<a/>", headers={"Content-Type": SOAP_TYPE}))
        assert fast.headers["X-Trace"] == "1" and fast.extensions["timeout"]["read"] == 3.0
        c.base_url = "https://other.example/"
        relative = c.build_post("ws/dist.asmx", b"<a/>", SOAP_TYPE)
        _same_request(
            relative, c.build_request("POST", "ws/dist.asmx", content=b"<a/>", headers={"Content-Type": SOAP_TYPE})
        )
        c.base_url = "https://third.example/"
        assert c.build_post("ws/dist.asmx", b"<a/>", SOAP_TYPE).url.host == "third.example"
        # another URL or content type is another request
        other = c.build_post("https://an.example/ws/evento.asmx", b"<a/>", "text/xml")
        assert other.url.path == "/ws/evento.asmx" and other.headers["Content-Type"] == "text/xml"


def test_a_cookie_a_service_sets_is_still_kept_and_sent_back() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) == 2:
            return httpx.Response(200, headers={"Set-Cookie": "lb=node7; Path=/"})
        return httpx.Response(200)

    url = "https://an.example/ws/dist.asmx"
    with ServiceClient(transport=httpx.MockTransport(answer)) as client:
        client.send(client.build_post(url, b"<a/>", SOAP_TYPE)).close()
        assert not client.cookies  # an answer without Set-Cookie stores nothing
        client.send(client.build_post(url, b"<a/>", SOAP_TYPE)).close()
        assert client.cookies.get("lb") == "node7"
        request = client.build_post(url, b"<a/>", SOAP_TYPE)
        _same_request(request, client.build_request("POST", url, content=b"<a/>", headers={"Content-Type": SOAP_TYPE}))
        client.send(request).close()
    assert "cookie" not in seen[0].headers and "cookie" not in seen[1].headers
    assert seen[2].headers["Cookie"] == "lb=node7"
