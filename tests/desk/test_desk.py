from __future__ import annotations

import keyring
import keyring.backends.null
import pytest

from app.core.manifestation import ManifestationState
from app.core.products import Product
from app.desk import Desk
from app.desk.grid import GridFilter
from app.store.records import Direction, DocumentStatus, GridSort, RowKind
from tests.desk.conftest import Office


def _all(desk: Desk, grid: GridFilter) -> list:
    cursor = desk.cursor(grid)
    rows = []
    while not cursor.at_end:
        rows += cursor.next_page(2)  # small pages: the merge across pages is exercised
    return rows


def test_grid_lists_documents_and_the_event_only_key_in_issue_order(desk: Desk, office: Office) -> None:
    rows = _all(desk, GridFilter(Product.NFE))
    keys = [r.access_key for r in rows]
    assert set(keys) == {*office.received, office.event_only}
    assert desk.cursor(GridFilter(Product.NFE)).count() == len(rows) == 4
    [event_row] = [r for r in rows if r.is_event_row]
    assert event_row.row_kind is RowKind.EVENT and event_row.direction is Direction.EMITTED
    assert event_row.event_count == 1
    dated = [r.issued_at for r in rows]
    assert dated == sorted(dated, reverse=True)


def test_filters_are_applied_in_sql_and_exclude_event_rows_when_they_need_a_document(
    desk: Desk, office: Office
) -> None:
    cancelled = _all(desk, GridFilter(Product.NFE, statuses=(DocumentStatus.CANCELLED,)))
    assert [r.access_key for r in cancelled] == [office.cancelled]
    assert cancelled[0].cancelled_after_capture
    received = _all(desk, GridFilter(Product.NFE, direction=Direction.RECEIVED))
    assert {r.access_key for r in received} == set(office.received)
    events = _all(desk, GridFilter(Product.NFE, row_kinds=(RowKind.EVENT,)))
    assert [r.access_key for r in events] == [office.event_only]
    none = _all(desk, GridFilter(Product.NFE, manifestation=ManifestationState.NONE))
    assert {r.access_key for r in none} == set(office.received) - {office.cancelled} | {office.cancelled}
    by_value = _all(desk, GridFilter(Product.NFE, sort=GridSort.VALUE, descending=True))
    values = [r.total_cents for r in by_value if not r.is_event_row]
    assert values == sorted(values, reverse=True) and by_value[-1].is_event_row


def test_search_takes_a_key_with_spaces_a_number_a_cnpj_and_a_name(desk: Desk, office: Office) -> None:
    key = office.received[1]
    spaced = " ".join(key[i : i + 4] for i in range(0, 44, 4))
    [row] = _all(desk, GridFilter(Product.NFE, search=spaced))
    assert row.access_key == key
    assert [r.access_key for r in _all(desk, GridFilter(Product.NFE, search=str(row.number)))] == [key]
    by_cnpj = _all(desk, GridFilter(Product.NFE, search="99.888.777/0001-00"))
    assert {r.access_key for r in by_cnpj} == set(office.received)
    name = (row.emitter_name or "")[2:8].lower()
    assert key in {r.access_key for r in _all(desk, GridFilter(Product.NFE, search=name))}


def test_detail_of_an_event_only_key_shows_its_events(desk: Desk, office: Office) -> None:
    [row] = desk.find_key(office.event_only)
    detail = desk.detail(row)
    assert [e.tp_evento for e in detail.events] == ["210210"]
    assert b"210210" in desk.xml(row)
    assert detail.allowed_manifestations == ()


def test_manifestation_is_sent_and_the_row_shows_it(desk: Desk, office: Office) -> None:
    key = office.received[1]
    [row] = desk.find_key(key)
    assert row.manifestation is ManifestationState.NONE and row.deadline is not None
    assert "210210" in desk.detail(row).allowed_manifestations
    outcome = desk.request_manifestation(row.company_id, key, "210210")
    assert outcome.accepted and outcome.protocol, outcome.message
    fresh = desk.row(row)
    assert fresh.manifestation is ManifestationState.CIENCIA
    detail = desk.detail(fresh)
    assert "210210" not in detail.allowed_manifestations
    [line] = detail.manifestations
    assert line.attempts == ""  # a registered Ciência shows no "0 de 1 tentativas"
    assert office.harness.sandbox.referee.report()["violations"] == []


def test_a_request_that_cannot_reach_the_service_is_refused_and_recorded_nowhere(
    desk: Desk, office: Office, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = office.received[2]
    [row] = desk.find_key(key)
    desk._context().certificates.forget(office.harness.company.certificate_ref or "")  # its own cache
    monkeypatch.setattr(keyring, "get_password", lambda *_a: None)  # the vault lost its key
    outcome = desk.request_manifestation(row.company_id, key, "210200")
    assert outcome.refused and not outcome.accepted
    assert "não enviada" in outcome.message
    assert office.harness.ctx.manifestations.for_key(row.company_id, Product.NFE, key) == []


def test_a_second_desk_on_a_captured_folder_is_read_only_and_says_who_captures(office: Office) -> None:
    data_dir = office.harness.office.data_dir
    first = Desk(data_dir, clock=office.harness.clock, owner="teste")
    try:
        assert not first.open().read_only and first.capturing
        second = Desk(data_dir, clock=office.harness.clock)
        try:
            opened = second.open()
            assert opened.read_only and not second.capturing
            assert opened.holder and "teste" in opened.holder
            # The company line does not judge the certificate by this process's vault (the
            # demo's live in the demo process's memory): no problem is invented.
            keyring.set_keyring(keyring.backends.null.Keyring())
            second._context().certificates.forget(office.harness.company.certificate_ref or "")  # its own cache
            [line] = second.companies()
            assert line.certificate_problem is None
        finally:
            second.close()
    finally:
        first.close()


def test_alerts_count_cancellations_after_capture_and_deadlines_within_5_days(desk: Desk, office: Office) -> None:
    from datetime import timedelta

    alerts = desk.alerts(Product.NFE)
    assert (alerts.cancelled_after_capture, alerts.deadlines_within_5_days, alerts.quarantined) == (1, 0, 0)
    office.harness.clock.advance(timedelta(days=6))  # the Ciência deadline (10 days) is 4 days away
    alerts = desk.alerts(Product.NFE)
    assert alerts.deadlines_within_5_days == 2  # the two not cancelled; the cancelled one needs nothing
    [row] = desk.find_key(office.received[1])
    assert row.deadline is not None and row.deadline.days_left(desk.now()) == 3
    office.harness.clock.advance(timedelta(days=5))  # past the Ciência: the conclusive one (90 days) is next
    [row] = desk.find_key(office.received[1])
    assert row.deadline is not None and row.deadline.tp_evento == "210200"
    assert desk.alerts(Product.NFE).deadlines_within_5_days == 0


def test_a_cte_row_shows_modal_payer_and_the_nfe_it_carries_linked_both_ways(desk: Desk, office: Office) -> None:
    from app.capture.cte import CteCapture
    from app.capture.simulation import run_pending
    from app.core.products import Environment
    from app.store.records import CaptureSettings
    from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER

    h = office.harness
    nfe_key = office.received[1]
    h.sandbox.party(CARRIER)
    h.office.companies.save_settings(
        CaptureSettings(h.company.id, Product.CTE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
    )
    cte = h.sandbox.publish_cte(CARRIER, SUPPLIER, RECIPIENT, nfe_keys=(nfe_key,), taker_role=3)
    run_pending(CteCapture(h.ctx))
    [row] = desk.find_key(str(cte.key))
    assert row.product is Product.CTE and row.modal == "Rodoviário"
    assert row.payer_id == RECIPIENT and row.carried_keys == (nfe_key,)
    [related] = desk.detail(row).related
    assert related.product is Product.NFE and related.access_key == nfe_key and related.row is not None
    [nfe_row] = desk.find_key(nfe_key)
    assert nfe_row.carried_keys == (str(cte.key),)
    [back] = desk.detail(nfe_row).related
    assert back.product is Product.CTE and back.row is not None and back.row.row_id == row.row_id
    assert h.sandbox.referee.report()["violations"] == []


def test_a_quarantined_document_is_shown_with_its_error_and_can_be_asked_again(desk: Desk, office: Office) -> None:
    from app.store.records import DocumentInput, DocumentKind

    # Kept as it came when even the recovery's copy was unreadable (the engine heals most at once).
    h = office.harness
    bad = DocumentInput(
        Product.NFE, DocumentKind.UNKNOWN, b"<resNFe><chNFe>35", None, nsu=90, parse_error="XML mal formado (linha 1)."
    )
    h.ctx.documents.store(h.company.id, bad)
    [row] = _all(desk, GridFilter(Product.NFE, row_kinds=(RowKind.UNREADABLE,)))
    assert row.quarantined and row.parse_error == "XML mal formado (linha 1)." and row.nsu == 90
    assert desk.xml(row) == bad.xml  # kept byte for byte
    # Undated, it still shows in the window's period grid (last, where a missing date sorts).
    from datetime import date

    period = GridFilter(Product.NFE, issued_from=date(2026, 10, 1), issued_to=date(2026, 11, 30))
    shown = _all(desk, period)
    assert shown[-1].row_id == row.row_id and len(shown) == 5 == desk.cursor(period).count()
    assert desk.alerts(Product.NFE).quarantined == 1
    assert "pedido de novo" in desk.retry_quarantined(row)
    assert [g.nsu for g in office.harness.ctx.recoveries.pending(row.company_id, Product.NFE)] == [90]
