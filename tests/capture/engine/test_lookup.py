"""``ReprocessResult``: what a user's request for one document by its key came to, every product."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.capture.engine.lookup import ReprocessResult
from app.capture.nfse.fetch import NfseFetch
from app.core.keys import AccessKey
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfse_harness


def test_a_result_is_frozen_and_says_only_what_happened() -> None:
    result = ReprocessResult("local", "Já está no banco de dados.", document_id=7)
    assert result.available_at is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.status = "fetched"  # type: ignore[misc]


def test_an_nfe_key_is_fetched_then_answered_from_the_database(harness: Harness) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)  # the note, and its Ciência releases the nfeProc
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.sandbox.publish_nfe_event(nfe, "210210", RECIPIENT)
    fetched = harness.capture.points.reprocess_key(harness.company.id, str(nfe.key))
    assert isinstance(fetched, ReprocessResult)
    assert fetched.status == "fetched" and fetched.document_id is not None, fetched.message
    asked = len(harness.sandbox.referee.requests)
    again = harness.capture.points.reprocess_key(harness.company.id, str(nfe.key))
    assert (again.status, again.document_id) == ("local", fetched.document_id)
    assert len(harness.sandbox.referee.requests) == asked  # the database answered


def test_an_unknown_nfe_key_is_not_found_with_the_services_words(harness: Harness) -> None:
    key = AccessKey.build(
        uf="SP", year_month="2611", issuer=SUPPLIER, model="55", serie=1, number=999, tp_emis=1, code=12345678
    )
    result = harness.capture.points.reprocess_key(harness.company.id, key.value)
    assert (result.status, result.document_id, result.available_at) == ("not_found", None, None)
    assert result.message.startswith("cStat 217")


def test_an_nfse_key_comes_back_through_the_same_result(tmp_path: Path, office_database: str | None) -> None:
    with nfse_harness(tmp_path, database=office_database) as nfse:
        note = nfse.sandbox.publish_nfse(provider=SUPPLIER, taker=RECIPIENT)
        fetch = NfseFetch(nfse.ctx)
        fetched = fetch.fetch(nfse.company.id, note.key)
        assert isinstance(fetched, ReprocessResult)
        assert fetched.status == "fetched" and fetched.document_id is not None, fetched.message
        again = fetch.fetch(nfse.company.id, note.key)
        assert (again.status, again.document_id) == ("local", fetched.document_id)
