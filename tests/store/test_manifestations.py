from __future__ import annotations

from datetime import timedelta

import pytest

from app.core.clock import FakeClock
from app.store.audit import AuditRepository
from app.store.companies import CompanyRepository
from app.store.db import Database
from app.store.errors import InvalidRecord
from app.store.manifestations import ManifestationRepository, UnknownManifestation
from app.store.records import CallOutcome, CallRecord, Company, ManifestationStatus, Product
from app.store.unit import write_unit
from tests.store.conftest import CNPJ_B

KEY = "42210775277525000178550030000266631762885493"
SERVICE = "nfe_recepcao_evento"


def test_request_is_idempotent_and_waits_for_its_time(db: Database, company: Company, clock: FakeClock) -> None:
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
    assert repo.claim(m.id)
    assert not repo.claim(m.id)  # sent already: a second pass cannot take it
    [sent] = repo.for_key(company.id, Product.NFE, KEY)
    assert sent.status is ManifestationStatus.SENT and sent.attempts == 1 and sent.sent_at == clock.now()
    proc = b"<procEventoNFe>...</procEventoNFe>"
    with write_unit(db) as unit:  # the engine settles inside the answer's unit
        unit.settle_manifestation(
            m.id,
            ManifestationStatus.ACCEPTED,
            cstat="135",
            x_motivo="Evento registrado",
            protocol="891210000000001",
            result_xml=proc,
        )
    [done] = repo.for_key(company.id, Product.NFE, KEY)
    assert done.status is ManifestationStatus.ACCEPTED and done.protocol == "891210000000001"
    assert repo.result_xml(m.id) == proc
    assert repo.for_key(company.id, Product.NFE, KEY) == [done]
    assert repo.due(clock.now() + timedelta(days=1)) == []


def test_retry_goes_back_to_pending_with_a_time(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    m = repo.request(company.id, Product.NFE, KEY, "210210", not_before=clock.now())
    assert repo.claim(m.id)
    with pytest.raises(InvalidRecord), write_unit(db) as unit:
        unit.settle_manifestation(m.id, ManifestationStatus.PENDING, cstat=None, x_motivo="timeout")
    retry = clock.now() + timedelta(minutes=2)
    with write_unit(db) as unit:
        unit.settle_manifestation(m.id, ManifestationStatus.PENDING, cstat=None, x_motivo="timeout", retry_at=retry)
    [back] = repo.for_key(company.id, Product.NFE, KEY)
    assert back.status is ManifestationStatus.PENDING and back.not_before == retry and repo.due(retry)[0].id == m.id


def test_bad_event_type_is_refused(db: Database, company: Company, clock: FakeClock) -> None:
    with pytest.raises(InvalidRecord):
        ManifestationRepository(db).request(company.id, Product.NFE, KEY, "ciencia", not_before=clock.now())


def test_a_request_left_sent_by_a_crash_is_queued_again(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    request = repo.request(company.id, Product.NFE, KEY, "210210", not_before=clock.now())
    assert repo.claim(request.id)  # the process dies before the answer is recorded
    assert repo.due(clock.now()) == []
    clock.advance(timedelta(minutes=3))
    assert repo.reclaim_sent() == 1
    [due] = repo.due(clock.now())
    assert due.id == request.id and due.status is ManifestationStatus.PENDING and due.attempts == 1


def test_a_request_is_claimed_once_and_only_while_pending(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    request = repo.request(company.id, Product.NFE, KEY, "210210", not_before=clock.now())
    assert repo.claim(request.id) is True
    [sent] = repo.for_key(company.id, Product.NFE, KEY)
    assert sent.status is ManifestationStatus.SENT and sent.attempts == 1 and sent.sent_at == clock.now()
    assert repo.claim(request.id) is False  # a second pass never sends it again
    with write_unit(db) as unit:
        unit.settle_manifestation(request.id, ManifestationStatus.ACCEPTED, cstat="135", x_motivo="Evento registrado")
    assert repo.claim(request.id) is False
    assert repo.claim(request.id + 1000) is False


def test_due_of_one_company_and_the_limit(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    other = CompanyRepository(db).add(CNPJ_B, "Beta Serviços Ltda")
    keys = [KEY[:-1] + str(digit) for digit in range(4)]
    mine = [repo.request(company.id, Product.NFE, key, "210210", not_before=clock.now()) for key in keys[:3]]
    theirs = repo.request(other.id, Product.NFE, keys[3], "210210", not_before=clock.now())
    later = repo.request(company.id, Product.NFE, KEY[:-1] + "9", "210210", not_before=clock.now() + timedelta(hours=1))
    assert [m.id for m in repo.due(clock.now(), limit=2)] == [mine[0].id, mine[1].id]
    assert [m.id for m in repo.due(clock.now(), company_id=other.id)] == [theirs.id]
    assert [m.id for m in repo.due(clock.now(), company_id=company.id)] == [m.id for m in mine]
    assert later.id not in [m.id for m in repo.due(clock.now(), limit=100)]
    assert repo.due(clock.now())[0] == mine[0]  # the same values the ORM wrote


def test_for_keys_reads_each_pair_asked_and_nothing_else(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    other = CompanyRepository(db).add(CNPJ_B, "Beta Serviços Ltda")
    other_key = KEY[:-1] + "1"
    ciencia = repo.request(company.id, Product.NFE, KEY, "210210", not_before=clock.now(), automatic=True)
    confirm = repo.request(company.id, Product.NFE, KEY, "210200", not_before=clock.now())
    repo.request(other.id, Product.NFE, KEY, "210210", not_before=clock.now())  # same key, another company
    repo.request(company.id, Product.NFE, other_key, "210210", not_before=clock.now())  # not asked for
    found = repo.for_keys(Product.NFE, [(company.id, KEY), (other.id, other_key)])
    assert found == {(company.id, KEY): [ciencia, confirm], (other.id, other_key): []}
    assert found[(company.id, KEY)] == repo.for_key(company.id, Product.NFE, KEY)
    assert repo.for_keys(Product.NFE, []) == {}


def test_event_calls_reads_the_guard_history_of_many_events(db: Database, company: Company, clock: FakeClock) -> None:
    audit, repo = AuditRepository(db), ManifestationRepository(db)
    first, second = f"ID210210{KEY}01", f"ID210200{KEY}01"
    start = clock.now()

    def log(operation: str, cstat: str | None) -> None:
        audit.log_call(
            CallRecord(SERVICE, CallOutcome.REJECTED, clock.now(), 5, company.id, Product.NFE, operation, cstat)
        )

    log(first, "655")
    clock.advance(timedelta(minutes=10))
    log(first, None)
    log(second, "135")
    log("ID110111" + KEY + "01", "135")  # not asked for
    found = repo.event_calls(SERVICE, [first, second, "ID210220" + KEY + "01"], start)
    assert found == {
        first: [(start, "655"), (start + timedelta(minutes=10), None)],
        second: [(start + timedelta(minutes=10), "135")],
        "ID210220" + KEY + "01": [],
    }
    assert repo.event_calls(SERVICE, [first], start + timedelta(minutes=1)) == {
        first: [(start + timedelta(minutes=10), None)]
    }
    assert repo.event_calls("nfe_distribuicao", [first], start) == {first: []}


def test_a_settle_in_a_unit_is_undone_with_the_unit(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    request = repo.request(company.id, Product.NFE, KEY, "210210", not_before=clock.now())
    repo.claim(request.id)
    with pytest.raises(RuntimeError), write_unit(db) as unit:
        unit.settle_manifestation(request.id, ManifestationStatus.ACCEPTED, cstat="135", x_motivo="ok")
        raise RuntimeError("crash before the commit")
    assert repo.for_key(company.id, Product.NFE, KEY)[0].status is ManifestationStatus.SENT
    proc = b"<procEventoNFe>...</procEventoNFe>"
    with write_unit(db) as unit:
        unit.settle_manifestation(
            request.id, ManifestationStatus.ACCEPTED, cstat="135", x_motivo="ok", protocol="1", result_xml=proc
        )
    done = repo.for_key(company.id, Product.NFE, KEY)[0]
    assert (done.status, done.cstat, done.protocol) == (ManifestationStatus.ACCEPTED, "135", "1")
    assert repo.result_xml(request.id) == proc
    with pytest.raises(UnknownManifestation), write_unit(db) as unit:
        unit.settle_manifestation(request.id + 1000, ManifestationStatus.REJECTED, cstat=None, x_motivo="x")
    with pytest.raises(InvalidRecord), write_unit(db) as unit:
        unit.settle_manifestation(request.id, ManifestationStatus.PENDING, cstat=None, x_motivo="sem horário")


def test_each_products_dispatcher_reads_only_its_own_requests(db: Database, company: Company, clock: FakeClock) -> None:
    repo = ManifestationRepository(db)
    nfse_key = "35503082299888777000100000000000000126110000000018"
    nfe = repo.request(company.id, Product.NFE, KEY, "210200", not_before=clock.now())
    taker = repo.request(company.id, Product.NFSE, nfse_key, "203202", not_before=clock.now() - timedelta(minutes=1))
    assert [m.id for m in repo.due(clock.now(), product=Product.NFE)] == [nfe.id]
    assert [m.id for m in repo.due(clock.now(), company_id=company.id, product=Product.NFSE)] == [taker.id]
    assert [m.id for m in repo.due(clock.now())] == [taker.id, nfe.id]  # no product: every request
    assert repo.next_not_before(Product.NFE) == clock.now()
    assert repo.next_not_before(Product.NFSE) == clock.now() - timedelta(minutes=1)
    assert repo.next_not_before(Product.CTE) is None
