"""Every fault kind is observable by a plain client, in-process and over HTTPS."""

from __future__ import annotations

import base64
import binascii
import gzip
import zlib
from typing import Any

import httpx
import pytest
from lxml import etree

from app.sandbox.faults import UnknownFault
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox


def _post(c: httpx.Client, h: Any, ult: int = 0) -> httpx.Response:
    return c.post(h.DIST_PATH, content=h.dist_envelope(ult=ult))


def _zips(response: httpx.Response, h: Any) -> list[etree._Element]:
    return list(etree.fromstring(response.content).iter(f"{{{h.NFE}}}docZip"))


@pytest.fixture
def two_docs(sandbox: Sandbox, h: Any) -> Sandbox:
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    return sandbox


def test_content_faults(two_docs: Sandbox, inproc: httpx.Client, h: Any) -> None:
    two_docs.inject_fault("nfe_dist", "corrupt_gzip")
    zips = _zips(_post(inproc, h), h)
    with pytest.raises((OSError, EOFError, zlib.error)):
        gzip.decompress(base64.b64decode(zips[0].text or ""))
    assert gzip.decompress(base64.b64decode(zips[1].text or ""))  # only the first is spoiled

    two_docs.ctx.guards.clear()
    two_docs.inject_fault("nfe_dist", "corrupt_base64")
    with pytest.raises(binascii.Error):
        base64.b64decode(_zips(_post(inproc, h), h)[0].text or "", validate=True)

    two_docs.ctx.guards.clear()
    two_docs.inject_fault("nfe_dist", "wrong_schema")
    first = _zips(_post(inproc, h), h)[0]
    content = etree.fromstring(gzip.decompress(base64.b64decode(first.text or "")))
    assert first.get("schema") == "procNFe_v4.00.xsd" and etree.QName(content).localname == "resNFe"

    two_docs.ctx.guards.clear()
    two_docs.inject_fault("nfe_dist", "duplicate_nsu")
    assert [z.get("NSU") for z in _zips(_post(inproc, h), h)] == ["000000000000001"] * 2 + ["000000000000002"]
    assert len(two_docs.fired_faults) == 4


def test_transport_faults_in_process(two_docs: Sandbox, inproc: httpx.Client, h: Any) -> None:
    two_docs.inject_fault("nfe_dist", "http_503")
    assert _post(inproc, h).status_code == 503
    assert two_docs.referee.delivery_count("nfe", h.RECIPIENT, 1) == 0  # the service never ran
    two_docs.inject_fault("nfe_dist", "timeout")
    with pytest.raises(httpx.ReadTimeout):
        _post(inproc, h)
    two_docs.inject_fault("nfe_dist", "close")
    with pytest.raises(httpx.RemoteProtocolError):
        _post(inproc, h)
    two_docs.inject_fault("nfe_dist", "truncated")
    response = _post(inproc, h)
    assert response.status_code == 200
    with pytest.raises(etree.XMLSyntaxError):
        etree.fromstring(response.content)
    with pytest.raises(UnknownFault):
        two_docs.inject_fault("nfe_dist", "gremlins")


def test_transport_faults_over_https(two_docs: Sandbox, recipient_cert: IssuedCert, client_for: Any, h: Any) -> None:
    two_docs.inject_fault("nfe_dist", "timeout", stall_seconds=2.0)
    with pytest.raises(httpx.ReadTimeout):
        _post(client_for(recipient_cert, timeout=0.3), h)
    c = client_for(recipient_cert)
    two_docs.inject_fault("nfe_dist", "close")
    with pytest.raises(httpx.RemoteProtocolError):
        _post(c, h)
    two_docs.inject_fault("nfe_dist", "http_500", cnpj=h.RECIPIENT)
    assert _post(c, h).status_code == 500
    two_docs.inject_fault("nfe_dist", "truncated")
    with pytest.raises(etree.XMLSyntaxError):
        etree.fromstring(_post(c, h).content)
    # The AN did its work before the answers were lost: it delivered NSUs 1-2 and reached maxNSU,
    # so an immediate retry is a premature query; the 656 tells the caller where the sequence is.
    lost = h.read_dist(_post(c, h))
    assert (lost.cstat, lost.ult_nsu) == (656, 2)
    assert two_docs.referee.delivery_count("nfe", h.RECIPIENT, 1) == 1  # the first (timed-out) answer


def test_adn_content_fault(sandbox: Sandbox, inproc: httpx.Client, h: Any) -> None:
    sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT)
    sandbox.inject_fault("adn", "corrupt_gzip")
    item = inproc.get("/contribuintes/DFe/0").json()["LoteDFe"][0]
    with pytest.raises((OSError, EOFError, zlib.error)):
        gzip.decompress(base64.b64decode(item["ArquivoXml"]))
