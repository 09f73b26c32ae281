"""Hand-built SOAP 1.2 envelopes and the tolerant reading of answers (SOAP 1.1/1.2, faults, errors)."""

from __future__ import annotations

import httpx
import pytest
from lxml import etree

from app.config.endpoints import SOAP_BINDINGS, Service
from app.fiscal.errors import HttpStatusError, MalformedResponse, SoapFault
from app.fiscal.http import ServiceClient
from app.fiscal.soap import SOAP11_NS, SOAP12_NS, envelope, parse_reply, post_soap, request_bytes, wrap

NFE = "http://www.portalfiscal.inf.br/nfe"
DIST = SOAP_BINDINGS[Service.NFE_DISTRIBUICAO]
EVENTO = SOAP_BINDINGS[Service.NFE_RECEPCAO_EVENTO]
PAYLOAD = f'<distDFeInt xmlns="{NFE}" versao="1.01"><tpAmb>2</tpAmb></distDFeInt>'.encode()
RET = f'<retDistDFeInt xmlns="{NFE}" versao="1.01"><cStat>137</cStat></retDistDFeInt>'


def _soap(ns: str, inner: str) -> bytes:
    head = f'<?xml version="1.0" encoding="utf-8"?><e:Envelope xmlns:e="{ns}"><e:Body>'
    return f"{head}{inner}</e:Body></e:Envelope>".encode()


def test_envelope_is_soap12_without_header() -> None:
    root = etree.fromstring(envelope(b"<x/>"))
    assert etree.QName(root).namespace == SOAP12_NS
    assert [etree.QName(c).localname for c in root] == ["Body"]
    assert etree.QName(root[0][0]).localname == "x"


def test_bindings_wrap_the_payload_as_the_wsdls_say() -> None:
    body = etree.fromstring(request_bytes(DIST, b'<?xml version="1.0"?>' + PAYLOAD))[0]
    operation = body[0]
    assert etree.QName(operation).text == f"{{{DIST.namespace}}}nfeDistDFeInteresse"
    assert etree.QName(operation[0]).localname == "nfeDadosMsg"
    assert etree.QName(operation[0][0]).text == f"{{{NFE}}}distDFeInt"
    # the event service has no operation wrapper: nfeDadosMsg sits in the Body
    event = etree.fromstring(wrap(EVENTO, PAYLOAD))
    assert etree.QName(event).text == f"{{{EVENTO.namespace}}}nfeDadosMsg"


def test_post_sends_the_action_in_the_content_type() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=_soap(SOAP12_NS, f"<r:Wrap xmlns:r='urn:any'>{RET}</r:Wrap>"))

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        reply = post_soap(client, "https://an.example/dist", DIST, PAYLOAD, expect="retDistDFeInt")
    assert seen[0].headers["Content-Type"] == (
        'application/soap+xml; charset=utf-8; action="'
        'http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe/nfeDistDFeInteresse"'
    )
    assert seen[0].content == reply.request
    assert reply.status == 200 and reply.soap_namespace == SOAP12_NS
    assert reply.element.findtext(f"{{{NFE}}}cStat") == "137"


def test_a_service_client_posts_the_same_bytes_as_a_plain_client() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=_soap(SOAP12_NS, RET))

    replies = []
    transport = httpx.MockTransport(answer)
    for client in (httpx.Client(transport=transport), ServiceClient(transport=transport)):
        with client:
            replies.append(post_soap(client, "https://an.example/dist", DIST, PAYLOAD, expect="retDistDFeInt"))
    plain, service = seen
    assert service.url == plain.url and service.headers.raw == plain.headers.raw
    assert service.content == plain.content == replies[1].request
    assert service.extensions == plain.extensions
    assert replies[1].element.findtext(f"{{{NFE}}}cStat") == "137"


def test_soap11_answers_are_read_too() -> None:
    namespace, element = parse_reply(
        200, _soap(SOAP11_NS, f"<Resp xmlns='urn:w'><Result>{RET}</Result></Resp>"), "retDistDFeInt"
    )
    assert namespace == SOAP11_NS and etree.QName(element).localname == "retDistDFeInt"


def test_soap12_fault_carries_its_text() -> None:
    fault = (
        f'<e:Fault xmlns:e="{SOAP12_NS}"><e:Code><e:Value>e:Sender</e:Value></e:Code>'
        '<e:Reason><e:Text xml:lang="pt">Requisicao invalida</e:Text></e:Reason></e:Fault>'
    )
    with pytest.raises(SoapFault) as caught:
        parse_reply(500, _soap(SOAP12_NS, fault), "retDistDFeInt")
    assert caught.value.code == "e:Sender" and caught.value.text == "Requisicao invalida"
    assert not caught.value.retryable and "Requisicao invalida" in caught.value.message


def test_soap11_fault_carries_its_text() -> None:
    fault = (
        f'<s:Fault xmlns:s="{SOAP11_NS}"><faultcode>soap:Server</faultcode>'
        "<faultstring>Server was unable</faultstring></s:Fault>"
    )
    with pytest.raises(SoapFault) as caught:
        parse_reply(500, _soap(SOAP11_NS, fault), "retEnvEvento")
    assert caught.value.text == "Server was unable" and caught.value.retryable


def test_an_html_error_page_is_an_http_status_error() -> None:
    html = b"<html><head><title>Service Unavailable</title></head><body><h1>503</h1></body></html>"
    with pytest.raises(HttpStatusError) as caught:
        parse_reply(503, html, "retDistDFeInt")
    assert caught.value.status == 503 and caught.value.retryable
    with pytest.raises(HttpStatusError):
        parse_reply(502, b"", "retDistDFeInt")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (_soap(SOAP12_NS, RET)[:-40], "ilegível"),
        (b"", "vazia"),
        (b"<html><body>ok</body></html>", "não é um envelope SOAP"),
        (_soap(SOAP12_NS, "<other/>"), "não contém o elemento retDistDFeInt"),
        (b'<!DOCTYPE x [<!ENTITY a "b">]>' + _soap(SOAP12_NS, RET)[38:], "ilegível"),
    ],
)
def test_unusable_answers_are_malformed(content: bytes, words: str) -> None:
    with pytest.raises(MalformedResponse) as caught:
        parse_reply(200, content, "retDistDFeInt")
    assert words in caught.value.message and caught.value.retryable


def test_an_oversized_answer_is_refused_while_reading() -> None:
    big = _soap(SOAP12_NS, RET + "<pad>" + "x" * 5000 + "</pad>")

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=big)

    with (
        httpx.Client(transport=httpx.MockTransport(answer)) as client,
        pytest.raises(MalformedResponse, match="grande"),
    ):
        post_soap(client, "https://an.example/dist", DIST, PAYLOAD, expect="retDistDFeInt", max_bytes=1000)
