"""SOAP 1.2 by hand: build the envelope around a payload, post it, find the answer in any wrapper.

Why not zeep: see :mod:`app.fiscal.http` (no WSDL for CT-e, slower, and signed payloads must be
embedded as bytes). The request is ``<soap12:Envelope><soap12:Body><op><msg>payload`` exactly as
:class:`app.config.endpoints.SoapBinding` describes, with the action in the Content-Type.

Answers are read tolerantly: SOAP 1.1 or 1.2 (the AN answers in either), any prefix, any
wrapper element: the element of interest (``retDistDFeInt``, ``retEnvEvento``) is searched
anywhere under the Body. A SOAP Fault becomes :class:`SoapFault`; an HTTP error without a fault
:class:`HttpStatusError`; anything unreadable :class:`MalformedResponse`. Parsing goes through
:func:`app.safexml.parse_xml` only (no DTD, no entities, bounded size).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import httpx
from lxml import etree

from app.config.endpoints import SoapBinding
from app.fiscal.errors import HttpStatusError, MalformedResponse, SoapFault
from app.fiscal.http import ServiceClient, send_bounded
from app.safexml import DEFAULT_MAX, XmlRejected, parse_xml

SOAP12_NS = "http://www.w3.org/2003/05/soap-envelope"
SOAP11_NS = "http://schemas.xmlsoap.org/soap/envelope/"
_SOAP_NAMESPACES = (SOAP12_NS, SOAP11_NS)
_DECLARATION = b'<?xml version="1.0" encoding="utf-8"?>'
MAX_RESPONSE_BYTES = DEFAULT_MAX


@dataclass(frozen=True)
class SoapReply:
    """A SOAP answer: HTTP status, the exact bytes sent and received, and the element of interest.

    ``element`` belongs to the tree parsed from ``content``; keep ``content`` for the audit archive
    and extract signed parts textually from it (never re-serialise them).
    """

    status: int
    content: bytes
    element: etree._Element = field(repr=False)
    request: bytes = field(repr=False)
    soap_namespace: str
    elapsed_ms: float


def envelope(body: bytes) -> bytes:
    """A SOAP 1.2 envelope around ``body`` (the Body's content), without a Header block."""
    return (
        _DECLARATION
        + f'<soap12:Envelope xmlns:soap12="{SOAP12_NS}"><soap12:Body>'.encode()
        + body
        + b"</soap12:Body></soap12:Envelope>"
    )


def wrap(binding: SoapBinding, payload: bytes) -> bytes:
    """``payload`` inside the binding's message element (and operation element, when it has one)."""
    payload = _strip_declaration(payload)
    ns = binding.namespace
    inner = f'<{binding.message_element} xmlns="{ns}">'.encode() + payload + f"</{binding.message_element}>".encode()
    if binding.operation is None:
        return inner
    return f'<{binding.operation} xmlns="{ns}">'.encode() + inner + f"</{binding.operation}>".encode()


def request_bytes(binding: SoapBinding, payload: bytes) -> bytes:
    """The whole HTTP body for ``payload``: envelope + binding wrappers."""
    return envelope(wrap(binding, payload))


def content_type(binding: SoapBinding) -> str:
    return f'application/soap+xml; charset=utf-8; action="{binding.action}"'


def post_soap(
    client: httpx.Client,
    url: str,
    binding: SoapBinding,
    payload: bytes,
    *,
    expect: str,
    max_bytes: int = MAX_RESPONSE_BYTES,
) -> SoapReply:
    """POST ``payload`` wrapped for ``binding``; return the reply holding an element named ``expect``.

    ``expect`` is a local name (any namespace, any depth under the Body). Raises the
    :class:`app.fiscal.errors.CommunicationError` subclasses.
    """
    body = request_bytes(binding, payload)
    kind = content_type(binding)
    started = time.perf_counter()
    # what client.stream("POST", ...) does, with the request built from the client's cache
    if isinstance(client, ServiceClient):
        request = client.build_post(url, body, kind)
    else:
        request = client.build_request("POST", url, content=body, headers={"Content-Type": kind})
    response, content = send_bounded(client, request, max_bytes, url)
    status = response.status_code
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    soap_ns, element = _interpret(status, content, expect, url)
    return SoapReply(
        status=status,
        content=content,
        element=element,
        request=body,
        soap_namespace=soap_ns,
        elapsed_ms=elapsed_ms,
    )


def parse_reply(status: int, content: bytes, expect: str, url: str | None = None) -> tuple[str, etree._Element]:
    """(SOAP namespace, element named ``expect``) of a received answer; raises as :func:`post_soap`.

    Public so recorded answers (tests, audit re-reads) go through the same reading as live ones.
    """
    return _interpret(status, content, expect, url)


def _interpret(status: int, content: bytes, expect: str, url: str | None) -> tuple[str, etree._Element]:
    ok = 200 <= status < 300
    if not content or content.isspace():
        if not ok:
            raise HttpStatusError(status, url=url, detail="corpo vazio")
        raise MalformedResponse("O serviço devolveu uma resposta vazia.", url=url)
    try:
        root = parse_xml(content, max_bytes=max(len(content), 1))
    except XmlRejected as exc:
        if not ok:
            raise HttpStatusError(status, url=url, detail=content[:200].decode("utf-8", "replace")) from exc
        raise MalformedResponse(
            f"Resposta do serviço ilegível (XML incompleto ou inválido): {exc.message}", url=url, detail=str(exc)
        ) from exc
    soap_ns, local = _split_tag(root.tag)
    if local != "Envelope" or soap_ns not in _SOAP_NAMESPACES:
        if not ok:
            raise HttpStatusError(status, url=url, detail=content[:200].decode("utf-8", "replace"))
        raise MalformedResponse("A resposta do serviço não é um envelope SOAP.", url=url)
    body = root.find(f"{{{soap_ns}}}Body")
    if body is None:
        raise MalformedResponse("Envelope SOAP sem Body na resposta do serviço.", url=url)
    fault = body.find(f"{{{soap_ns}}}Fault")
    if fault is not None:
        code, text = _fault_text(fault, soap_ns)
        raise SoapFault(code, text, url=url)
    found = _find(body, expect)
    if found is None:
        if not ok:
            raise HttpStatusError(status, url=url)
        raise MalformedResponse(f"A resposta do serviço não contém o elemento {expect}.", url=url)
    # a result under an error status still is the service's answer: the result is what matters
    return soap_ns, found


def _split_tag(tag: str) -> tuple[str, str]:
    """(namespace, local name) of a Clark-notation tag, without building a QName."""
    if tag[:1] == "{":
        namespace, _, local = tag[1:].partition("}")
        return namespace, local
    return "", tag


def _find(body: etree._Element, local_name: str) -> etree._Element | None:
    # "{*}name": any namespace or none, elements only (lxml walks the tree in C)
    return next(body.iter(f"{{*}}{local_name}"), None)


def _fault_text(fault: etree._Element, soap_ns: str) -> tuple[str, str]:
    if soap_ns == SOAP12_NS:
        code = fault.findtext(f"{{{soap_ns}}}Code/{{{soap_ns}}}Value") or ""
        sub = fault.findtext(f"{{{soap_ns}}}Code/{{{soap_ns}}}Subcode/{{{soap_ns}}}Value")
        texts = [t.text or "" for t in fault.iterfind(f"{{{soap_ns}}}Reason/{{{soap_ns}}}Text")]
        text = " ".join(t.strip() for t in texts if t.strip())
        detail = fault.find(f"{{{soap_ns}}}Detail")
        if sub:
            code = f"{code}/{sub}"
    else:
        # SOAP 1.1 children are unqualified (some servers qualify them anyway)
        code = fault.findtext("faultcode") or fault.findtext(f"{{{soap_ns}}}faultcode") or ""
        text = (fault.findtext("faultstring") or fault.findtext(f"{{{soap_ns}}}faultstring") or "").strip()
        detail = fault.find("detail")
    if not text and detail is not None:
        text = " ".join("".join(detail.itertext()).split())
    return code.strip() or "desconhecido", text or "sem descrição"


def _strip_declaration(payload: bytes) -> bytes:
    stripped = payload.lstrip()
    if stripped.startswith(b"<?xml"):
        end = stripped.find(b"?>")
        return stripped[end + 2 :].lstrip()
    return stripped
