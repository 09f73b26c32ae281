"""The facade's live reads: what changed since a mark, read again by id, and what a period hides."""

from __future__ import annotations

from datetime import date, timedelta

from app.core.clock import to_brasilia
from app.core.products import Product
from app.desk import Desk
from app.desk.views import GridFilter
from tests.desk.conftest import Office
from tests.support.nfe_harness import RECIPIENT, SUPPLIER


def test_new_and_changed_documents_are_read_again_by_id(desk: Desk, office: Office) -> None:
    harness = office.harness
    today = to_brasilia(desk.now()).date()
    grid = GridFilter(Product.NFE, issued_from=today - timedelta(days=29), issued_to=today, by_capture=True)
    before = desk.change_mark()
    assert desk.live_rows(grid, (before, desk.change_mark(), ())).rows == ()  # nothing changed, nothing read
    new = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
    harness.sandbox.publish_nfe_event(office.received[1], "110111", justification="Cancelamento por erro de digitacao")
    harness.clock.advance(timedelta(hours=1, minutes=5))
    harness.run_pending()
    after = desk.change_mark()
    live = desk.live_rows(grid, (before, after, ()))
    keys = {r.access_key: r for r in live.rows}
    assert set(keys) == {new, office.received[1]}  # the arrival and the cancelled one, nothing else
    assert keys[office.received[1]].cancelled_after_capture
    assert [r.access_key for r in live.key_rows] == [office.event_only]
    assert live.total == desk.cursor(grid).count()
    # Outside the grid's filters: read, and not listed.
    elsewhere = GridFilter(Product.NFE, company_ids=(9999,), by_capture=True, issued_from=today, issued_to=today)
    assert desk.live_rows(elsewhere, (before, after, ())).rows == ()
    # F5: the ids asked for are read again though nothing changed since.
    assert {r.access_key for r in desk.live_rows(grid, (after, after, [r.row_id for r in live.rows])).rows} == set(keys)


def test_an_empty_period_says_how_many_documents_it_hides_and_since_when(desk: Desk) -> None:
    past = GridFilter(Product.NFE, issued_from=date(2025, 1, 1), issued_to=date(2025, 1, 31))
    assert desk.cursor(past).count() == 0
    outside = desk.outside_period(past)
    assert outside.count == 3 and outside.since == to_brasilia(desk.now()).date()
    assert desk.outside_period(GridFilter(Product.CTE, issued_from=date(2025, 1, 1))).count == 0
