"""The delivery rules on real CT-e: the event-type and interested-party filters (seed 000 §5.1, §5.4)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.export.automatic import AutomaticExport
from app.export.items import ItemSource
from app.export.rules import deliverable
from app.store.records import PartyRole, Product
from tests.export.conftest import add_profile, files_under
from tests.support.nfe_harness import CARRIER, SUPPLIER, Harness, cte_harness


@pytest.fixture
def cte(tmp_path: Path) -> Iterator[Harness]:
    with cte_harness(tmp_path) as harness:
        harness.sandbox.party(CARRIER)
        yield harness


def test_only_ctes_where_the_company_holds_a_chosen_role_and_chosen_events_go_out(cte: Harness, tmp_path: Path) -> None:
    me = cte.company.cnpj.value
    taken = cte.sandbox.publish_cte(CARRIER, SUPPLIER, me, taker_role=3)  # the company is the taker
    only_recipient = cte.sandbox.publish_cte(CARRIER, SUPPLIER, me, taker_role=0)  # the sender pays
    cte.run_pending()
    cte.clock.advance(timedelta(hours=1, minutes=5))
    cte.sandbox.publish_cte_event(taken, "110111")  # cancellation: a type the company chose
    cte.sandbox.publish_cte_event(taken, "110110")  # CC-e: not chosen, kept but not delivered
    cte.sandbox.publish_cte_event(only_recipient, "110111")  # follows its CT-e: not delivered
    cte.run_pending()
    cte.settings(cte_party_roles=(PartyRole.TAKER,), cte_event_types=("110111",))
    destination = tmp_path / "arquivo"
    add_profile(cte, destination, cancelled_mode="beside")

    AutomaticExport(cte.office.db, cte.clock).run()

    names = files_under(destination)
    assert [n.rsplit("/", 1)[1] for n in names] == sorted([f"{taken.key}.xml", f"{taken.key}-110111-1.xml"]), names
    # The rule itself, on every stored CT-e item: exactly those two are deliverable.
    source = ItemSource(cte.office.db)
    settings = cte.office.companies.get_settings(cte.company.id, Product.CTE)
    stored = [
        source.document(d.id)
        for d in [source.documents.find(cte.company.id, Product.CTE, str(k)) for k in (taken.key, only_recipient.key)]
        if d
    ]
    assert [deliverable(i, settings) for i in stored if i] == [True, False]


def test_nfse_before_the_cutoff_and_own_issued_ones_are_not_exported(tmp_path: Path) -> None:
    """Seed 000 §6.4 item 8: stored, not exported, until the history is released (and the
    company's own NFS-e only while that capture is on)."""
    from dataclasses import replace as with_changes

    from tests.support.nfe_harness import RECIPIENT, nfse_harness

    with nfse_harness(tmp_path) as nfse:
        settings = nfse.office.companies.get_settings(nfse.company.id, Product.NFSE)
        assert settings is not None
        cutoff = (nfse.clock.now() - timedelta(days=1)).date()
        nfse.office.companies.save_settings(with_changes(settings, nfse_cutoff_date=cutoff))
        old = nfse.sandbox.publish_nfse(SUPPLIER, RECIPIENT, at=nfse.clock.now() - timedelta(days=3))
        new = nfse.sandbox.publish_nfse(SUPPLIER, RECIPIENT)
        own = nfse.sandbox.publish_nfse(RECIPIENT, SUPPLIER)  # the company is the prestador
        nfse.capture.distribution.run_company(nfse.company.id)
        destination = tmp_path / "arquivo"
        add_profile(nfse, destination)
        AutomaticExport(nfse.office.db, nfse.clock).run()
        names = " ".join(files_under(destination))
        assert str(new.key) in names
        assert str(old.key) not in names and str(own.key) not in names
        assert nfse.sandbox.referee.violations() == []
