"""Payload: documents kept compressed, compressed once, identical docZips for every reader."""

from __future__ import annotations

import base64
import gzip

import pytest

from app.sandbox.payload import Payload, as_payload

XML = b'<?xml version="1.0" encoding="UTF-8"?><resNFe xmlns="http://www.portalfiscal.inf.br/nfe">x</resNFe>'


def test_doczip_is_the_gzip_of_the_document_and_the_xml_survives_compression() -> None:
    payload = Payload(XML)
    text = payload.doczip()
    assert gzip.decompress(base64.b64decode(text)) == XML
    assert text == base64.b64encode(gzip.compress(XML, compresslevel=1, mtime=0)).decode("ascii")
    assert payload.doczip() == text and payload.gzip() is payload.gzip()  # compressed once
    assert payload.xml == XML


def test_a_made_payload_is_made_once_on_first_use() -> None:
    calls: list[int] = []

    def make() -> bytes:
        calls.append(1)
        return XML

    payload = Payload(make=make)
    assert not payload.made and calls == []
    assert payload.xml == XML and payload.xml == XML and payload.doczip()
    assert payload.made and calls == [1]


def test_bytes_or_maker_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        Payload(XML, make=lambda: XML)
    with pytest.raises(ValueError, match="not both"):
        Payload()
    same = Payload(XML)
    assert as_payload(same) is same and as_payload(XML).xml == XML
