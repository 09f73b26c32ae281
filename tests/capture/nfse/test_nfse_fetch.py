"""Capture by key on demand (rule book §6.6, §4.6) against the sandbox over mutual TLS: an NFS-e from
the Sefin Nacional, stored without a notice and counted once when the distribution brings it; an
NF-e by consChNFe within the point-query quota; both answered from the database when there."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.capture.by_key import fetch_by_key
from app.capture.context import CaptureNotice
from app.core.keys import AccessKey, NfseKey
from app.core.products import Product
from app.store.records import DocumentKind, DocumentQuery
from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER, Harness, nfe_harness, product_harness


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with product_harness(tmp_path, Product.NFSE) as h:
        yield h


def _sefin_gets(harness: Harness) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "sefin" and r.operation.startswith("GET"))


def _documents(harness: Harness, product: Product) -> int:
    return harness.ctx.documents.count(DocumentQuery(company_id=harness.company.id, product=product))


def test_fetched_by_key_then_distributed_is_one_document_notified_once(harness: Harness) -> None:
    seen: list[CaptureNotice] = []
    harness.ctx.listeners.append(seen.append)
    nfse = harness.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT)
    result = fetch_by_key(harness.ctx, harness.company.id, f"NFS{nfse.key}")
    assert result.status == "fetched" and result.document_id is not None, result.message
    summary = harness.ctx.documents.find(harness.company.id, Product.NFSE, nfse.key)
    assert summary is not None and summary.id == result.document_id
    assert summary.kind is DocumentKind.NFSE and summary.nsu is None
    assert harness.ctx.documents.get_xml(harness.company.id, Product.NFSE, nfse.key) == nfse.nfse  # byte-exact
    assert [n for n in seen if n.kind == "documents"] == []  # a fetch notifies nothing

    again = fetch_by_key(harness.ctx, harness.company.id, nfse.key)
    assert again.status == "local" and again.document_id == result.document_id
    assert _sefin_gets(harness) == 1  # the database answered

    harness.run_pending()  # the ADN distribution brings the same NFS-e
    assert _documents(harness, Product.NFSE) == 1
    summary = harness.ctx.documents.find(harness.company.id, Product.NFSE, nfse.key)
    assert summary is not None and summary.id == result.document_id
    assert harness.stored_nsus() == [1]  # its NSU recorded on the same document
    assert summary.nsu == 1  # and on the document itself: the grid shows it
    assert [n.count for n in seen if n.kind == "documents"] == [1]  # notified now, once
    assert harness.sandbox.referee.report()["violations"] == []


def test_keys_the_sefin_refuses_or_does_not_have(harness: Harness) -> None:
    cid = harness.company.id
    bad = fetch_by_key(harness.ctx, cid, "3550308")
    assert bad.status == "rejected" and "44 caracteres" in bad.message
    unknown = NfseKey.build(c_mun="3550308", amb_ger=2, insc_fed=SUPPLIER, number=5, year_month="2611", code=9)
    assert fetch_by_key(harness.ctx, cid, unknown.value).status == "not_found"
    foreign = harness.sandbox.publish_nfse(provider=SUPPLIER, taker=CARRIER)
    refused = fetch_by_key(harness.ctx, cid, foreign.key)
    assert refused.status == "rejected" and "não é permitida" in refused.message
    digit = unknown.value[:-1] + str((int(unknown.value[-1]) + 1) % 10)
    assert fetch_by_key(harness.ctx, cid, digit).status == "rejected"
    assert _sefin_gets(harness) == 2  # a malformed key never reached the service
    assert _documents(harness, Product.NFSE) == 0
    calls = harness.ctx.audit.calls_for("nfse_sefin", f"nfse:{foreign.key}", harness.clock.now() - timedelta(hours=1))
    assert [(c.http_status, c.cstat) for c in calls] == [(403, "E0403")]  # every call on record


def test_ten_queries_of_one_key_within_the_hour_then_it_waits(harness: Harness) -> None:
    unknown = NfseKey.build(c_mun="3550308", amb_ger=2, insc_fed=SUPPLIER, number=6, year_month="2611", code=9)
    results = []
    for _ in range(11):
        results.append(fetch_by_key(harness.ctx, harness.company.id, unknown.value))
        harness.clock.advance(timedelta(minutes=1))
    assert [r.status for r in results] == ["not_found"] * 10 + ["deferred"]
    assert "10 vezes na última hora" in results[-1].message and "disponível a partir de" in results[-1].message
    assert _sefin_gets(harness) == 10


def test_an_nfe_key_goes_to_the_nfe_point_query_within_its_quota(tmp_path: Path) -> None:
    with nfe_harness(tmp_path) as h:
        keys = [str(h.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(21)]
        fetched = [fetch_by_key(h.ctx, h.company.id, key) for key in keys[:20]]
        assert [r.status for r in fetched] == ["fetched"] * 20, fetched[0].message
        summary = h.ctx.documents.find(h.company.id, Product.NFE, keys[0])
        assert summary is not None and summary.id == fetched[0].document_id
        over = fetch_by_key(h.ctx, h.company.id, keys[20])  # no slot: told when it can run
        assert over.status == "deferred" and over.available_at is not None
        assert "Consulta disponível a partir de" in over.message
        assert h.ctx.documents.find(h.company.id, Product.NFE, keys[20]) is None
        # With a capture service running elsewhere on the folder, that service makes the query.
        queued = fetch_by_key(h.ctx, h.company.id, keys[20], queued=True)
        assert queued.status == "deferred" and "serviço de captura em execução" in queued.message
        [gap] = h.ctx.recoveries.due(h.clock.now(), product=Product.NFE)
        assert gap.access_key == keys[20]
        cte_key = AccessKey.build(
            uf="SP", year_month="2611", issuer=SUPPLIER, model="57", serie=1, number=1, tp_emis=1, code=10
        )
        assert "modelo 57" in fetch_by_key(h.ctx, h.company.id, cte_key.value).message
        assert h.sandbox.referee.report()["violations"] == []
