from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.clock import FakeClock
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.manifestations import ManifestationRepository
from app.store.records import Company, ManifestationStatus, Product

KEY = "42210775277525000178550030000266631762885493"


def test_request_is_idempotent_and_waits_for_its_time(
    db: Database, company: Company, clock: FakeClock
) -> None:
    repo = ManifestationRepository(db)
    at = clock.now() + timedelta(minutes=30)
    first = repo.request(company.id, Product.NFE, KEY, "210210", not_before=at, automatic=True)
    again = repo.request(company.id, Product.NFE, KEY, "210210", not_before=clock.now())
    assert again == first  # the guard against sending twice
    assert repo.due(clock.now()) == []
    clock.advance(timedelta(minutes=30))
    assert [m.id for m in repo.due(clock.now())] == [first.id]


def test_send_and_settle_keeps_the_result_xml(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    m = repo.request(
        company.id,
        Product.NFE,
        KEY,
        "210240",
        not_before=clock.now(),
        justification="Operação não realizada por desistência do comprador",
    )
    sent = repo.mark_sent(m.id)
    assert sent.status is ManifestationStatus.SENT and sent.attempts == 1 and sent.sent_at == clock.now()
    proc = b"<procEventoNFe>...</procEventoNFe>"
    done = repo.settle(
        m.id,
        ManifestationStatus.ACCEPTED,
        cstat="135",
        x_motivo="Evento registrado",
        protocol="891210000000001",
        result_xml=proc,
    )
    assert done.status is ManifestationStatus.ACCEPTED and done.protocol == "891210000000001"
    assert repo.result_xml(m.id) == proc
    assert repo.for_key(company.id, Product.NFE, KEY) == [done]
    assert repo.due(clock.now() + timedelta(days=1)) == []


def test_retry_goes_back_to_pending_with_a_time(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    m = repo.request(company.id, Product.NFE, KEY, "210210", not_before=clock.now())
    repo.mark_sent(m.id)
    with pytest.raises(InvalidRecord):
        repo.settle(m.id, ManifestationStatus.PENDING, cstat=None, x_motivo="timeout")
    retry = clock.now() + timedelta(minutes=2)
    back = repo.settle(m.id, ManifestationStatus.PENDING, cstat=None, x_motivo="timeout", retry_at=retry)
    assert back.not_before == retry and repo.due(retry)[0].id == m.id


def test_bad_event_type_is_refused(db: Database, company: Company, clock: FakeClock) -> None:
    with pytest.raises(InvalidRecord):
        ManifestationRepository(db).request(company.id, Product.NFE, KEY, "ciencia", not_before=clock.now())


def test_a_request_left_sent_by_a_crash_is_queued_again(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    request = repo.request(company.id, Product.NFE, KEY, "210210", not_before=clock.now())
    repo.mark_sent(request.id)  # the process dies before the answer is recorded
    assert repo.due(clock.now()) == []
    clock.advance(timedelta(minutes=3))
    assert repo.reclaim_sent() == 1
    [due] = repo.due(clock.now())
    assert due.id == request.id and due.status is ManifestationStatus.PENDING and due.attempts == 1
