"""Payload: documents kept compressed, compressed once, identical docZips for every reader."""

from __future__ import annotations

import base64
import gzip
import threading

import pytest

from app.sandbox.payload import AheadMaker, Payload, as_payload

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


def test_a_document_made_ahead_is_made_once_off_the_callers_thread_with_the_same_bytes() -> None:
    threads: list[str] = []

    def make() -> bytes:
        threads.append(threading.current_thread().name)
        return b"<nfeProc>assinada</nfeProc>"

    maker = AheadMaker()
    try:
        payload = Payload(make=make)
        payload.make_ahead(maker)
        payload.make_ahead(maker)  # asked twice (two parties): made once
        assert payload.xml == b"<nfeProc>assinada</nfeProc>"
        assert payload.made and gzip.decompress(payload.gzip()) == payload.xml
        assert len(threads) == 1 and threads[0].startswith("sandbox-ahead")
    finally:
        maker.close()


def test_after_the_sandbox_stops_documents_are_still_made() -> None:
    maker = AheadMaker()
    maker.close()
    payload = Payload(make=lambda: b"<x/>")
    payload.make_ahead(maker)
    assert payload.xml == b"<x/>"
