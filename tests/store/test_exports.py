"""Export profiles and their queue on a real SQLite file: the watermark, idempotent queueing,
failures that keep the rows, and profiles that survive a reopened database."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from app.core.clock import FakeClock
from app.store.db import Database, open_database
from app.store.errors import InvalidRecord
from app.store.exports import DOCUMENT, EVENT, ExportProfile, ExportRepository, ProfileExists, UnknownProfile
from app.store.items import DistributionItemRepository
from app.store.records import Company, Direction, Product


def _profile(name: str = "arquivo", **changes: object) -> ExportProfile:
    return ExportProfile(name=name, destination="/tmp/x", pattern="{chave}.xml", **changes)  # type: ignore[arg-type]


def test_a_profile_round_trips_and_names_are_unique(db: Database, company: Company) -> None:
    repo = ExportRepository(db)
    saved = repo.add(
        _profile(products=(Product.CTE,), kinds=("complete",), directions=(Direction.RECEIVED,),
                 company_ids=(company.id,), only_authorised=True, cancelled_mode="beside", include_pdf=True)
    )  # fmt: skip
    assert repo.find("arquivo") == saved and repo.get(saved.id) == saved
    assert saved.products == (Product.CTE,) and saved.company_ids == (company.id,) and saved.include_pdf
    with pytest.raises(ProfileExists):
        repo.add(_profile())
    with pytest.raises(InvalidRecord, match="Canceladas"):
        repo.add(_profile("outro", cancelled_mode="apagar"))
    with pytest.raises(InvalidRecord, match="Tipo de conteúdo"):
        repo.add(_profile("outro", kinds=("pdf",)))
    repo.remove("arquivo")
    with pytest.raises(UnknownProfile):
        repo.remove("arquivo")


def test_the_stream_the_watermark_and_the_queue(
    db_target: Path | str, db: Database, clock: FakeClock, company: Company
) -> None:
    items = DistributionItemRepository(db)
    for nsu in (1, 2, 3):
        items.record(company.id, Product.NFE, nsu)
    repo = ExportRepository(db)
    profile = repo.add(_profile())
    arrived = repo.arrived_after(0)
    assert [a.nsu for a in arrived] == [1, 2, 3] and repo.last_arrival() == arrived[-1].item_id
    assert [a.nsu for a in repo.arrived_after(arrived[0].item_id, 1)] == [2]

    assert repo.enqueue(profile.id, [(DOCUMENT, 10), (EVENT, 10), (DOCUMENT, 10)], arrived[1].item_id) == 2
    assert repo.enqueue(profile.id, [(DOCUMENT, 10)], arrived[0].item_id) == 0  # already queued
    assert repo.get(profile.id).watermark == arrived[1].item_id  # never moves back
    with pytest.raises(InvalidRecord):
        repo.enqueue(profile.id, [("pdf", 1)], 0)

    [first, second] = repo.queued(profile.id)
    retry_at = clock.now() + timedelta(minutes=1)
    repo.failed(profile.id, first.id, "disco cheio", retry_at)
    failing = repo.get(profile.id)
    assert (failing.last_error, failing.next_attempt_at, failing.failing_since) == (
        "disco cheio",
        retry_at,
        clock.now(),
    )
    repo.written(profile.id, [second.id], clear_error=False)
    assert repo.get(profile.id).last_error == "disco cheio" and repo.get(profile.id).exported_count == 1

    db.close()
    reopened = open_database(db_target, clock=clock)  # a restart: the queue and its attempts are still there
    try:
        again = ExportRepository(reopened)
        [left] = again.queued(profile.id)
        assert (left.item_type, left.item_id, left.attempts) == (DOCUMENT, 10, 1)
        again.written(profile.id, [left.id])
        healed = again.get(profile.id)
        assert again.queue_size(profile.id) == 0
        assert (healed.last_error, healed.next_attempt_at, healed.exported_count) == (None, None, 2)
    finally:
        reopened.close()
