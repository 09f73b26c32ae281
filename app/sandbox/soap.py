"""SOAP 1.1/1.2 envelopes as the Ambiente Nacional writes them (ASP.NET on IIS).

The AN answers in the SOAP version of the request; the body element names follow the WSDL.
"""

from __future__ import annotations

import base64
import gzip
from xml.sax.saxutils import escape

from lxml import etree

from app.safexml import XmlRejected, parse_xml
from app.sandbox.wire import SandboxResponse

SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
NFE_NS = "http://www.portalfiscal.inf.br/nfe"
CTE_NS = "http://www.portalfiscal.inf.br/cte"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
XSD = "http://www.w3.org/2001/XMLSchema"


_TEXT_ENTITIES = {"\r": "&#13;"}
_ATTRIBUTE_ENTITIES = {'"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#9;"}


class BadEnvelope(Exception):
    """The request is not XML or not a SOAP envelope."""


def parse_envelope(body: bytes) -> tuple[str, etree._Element]:
    """(soap namespace, Body element); raises :class:`BadEnvelope`."""
    try:
        root = parse_xml(body, max_bytes=2 * 1024 * 1024)
    except XmlRejected as exc:
        raise BadEnvelope(str(exc)) from None
    qname = etree.QName(root)
    if qname.localname != "Envelope" or qname.namespace not in (SOAP11, SOAP12):
        raise BadEnvelope("elemento raiz não é um envelope SOAP")
    bodies = root.findall(f"{{{qname.namespace}}}Body")
    if len(bodies) != 1:
        raise BadEnvelope("envelope SOAP sem Body")
    return qname.namespace, bodies[0]


def find_first(body: etree._Element, namespace: str, localname: str) -> etree._Element | None:
    return next(iter(body.iter(f"{{{namespace}}}{localname}")), None)


def envelope(soap_ns: str, payload: etree._Element) -> bytes:
    """Wrap ``payload`` (the operation's response element) in an IIS-style envelope."""
    env = etree.Element(f"{{{soap_ns}}}Envelope", nsmap={"soap": soap_ns, "xsi": XSI, "xsd": XSD})
    body = etree.SubElement(env, f"{{{soap_ns}}}Body")
    body.append(payload)
    text: bytes = etree.tostring(env, encoding="utf-8")
    return b'<?xml version="1.0" encoding="utf-8"?>' + text


def soap_response(soap_ns: str, payload: etree._Element, status: int = 200) -> SandboxResponse:
    content_type = "application/soap+xml; charset=utf-8" if soap_ns == SOAP12 else "text/xml; charset=utf-8"
    return SandboxResponse(status=status, headers={"Content-Type": content_type}, body=envelope(soap_ns, payload))


def soap_text_response(soap_ns: str, payload: str, status: int = 200) -> SandboxResponse:
    """:func:`soap_response` for a payload already written as text (byte-identical envelope)."""
    content_type = "application/soap+xml; charset=utf-8" if soap_ns == SOAP12 else "text/xml; charset=utf-8"
    body = (
        f'<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="{soap_ns}" xmlns:xsi="{XSI}" '
        f'xmlns:xsd="{XSD}"><soap:Body>{payload}</soap:Body></soap:Envelope>'
    )
    return SandboxResponse(status=status, headers={"Content-Type": content_type}, body=body.encode("utf-8"))


def text(value: str) -> str:
    """Character data escaped as lxml writes it."""
    return escape(value, _TEXT_ENTITIES)


def attribute(value: str) -> str:
    """A double-quoted attribute value escaped as lxml writes it."""
    return '"' + escape(value, _ATTRIBUTE_ENTITIES) + '"'


def soap_fault(soap_ns: str, text: str, status: int = 500) -> SandboxResponse:
    env = etree.Element(f"{{{soap_ns}}}Envelope", nsmap={"soap": soap_ns})
    body = etree.SubElement(env, f"{{{soap_ns}}}Body")
    fault = etree.SubElement(body, f"{{{soap_ns}}}Fault")
    if soap_ns == SOAP12:
        code = etree.SubElement(fault, f"{{{soap_ns}}}Code")
        etree.SubElement(code, f"{{{soap_ns}}}Value").text = "soap:Receiver"
        reason = etree.SubElement(fault, f"{{{soap_ns}}}Reason")
        etree.SubElement(reason, f"{{{soap_ns}}}Text").text = text
        content_type = "application/soap+xml; charset=utf-8"
    else:
        etree.SubElement(fault, "faultcode").text = "soap:Server"
        etree.SubElement(fault, "faultstring").text = text
        content_type = "text/xml; charset=utf-8"
    return SandboxResponse(
        status=status,
        headers={"Content-Type": content_type},
        body=b'<?xml version="1.0" encoding="utf-8"?>' + etree.tostring(env, encoding="utf-8"),
    )


def gzip_b64(xml: bytes) -> str:
    # mtime=0: the same document always compresses to the same bytes
    return base64.b64encode(gzip.compress(xml, mtime=0)).decode("ascii")


def sub(parent: etree._Element, tag: str, text: str | None = None, **attrs: str) -> etree._Element:
    element = etree.SubElement(parent, tag, **attrs)
    if text is not None:
        element.text = text
    return element
