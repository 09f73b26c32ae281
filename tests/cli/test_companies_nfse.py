"""`company set --product nfse`: cutoff date, own-issued NFS-e, the release of the history, and
enabling refused without a usable certificate (rule book §6.1)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.core.products import Product
from app.store.nfse import NfseRepository
from app.store.records import Withheld
from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfse_harness


@pytest.fixture
def nfse(tmp_path: Path) -> Iterator[Harness]:
    with nfse_harness(tmp_path) as h:
        yield h
        assert h.sandbox.referee.violations() == []


@pytest.fixture
def nfse_cli(nfse: Harness, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(nfse, capsys)


def test_cutoff_then_release_history_lists_the_older_nfse(nfse: Harness, nfse_cli: Cli) -> None:
    shown = nfse_cli.json("company", "set", RECIPIENT, "--product", "nfse", "--cutoff", "01/11/2026", "--own-issued")
    assert shown["nfse_cutoff_date"] == "2026-11-01" and shown["nfse_capture_own_issued"] is True  # type: ignore[index]
    nfse.sandbox.publish_nfse(SUPPLIER, RECIPIENT, at=nfse.clock.now() - timedelta(days=3))
    nfse.sandbox.publish_nfse(SUPPLIER, RECIPIENT)
    nfse.sandbox.publish_nfse(RECIPIENT, SUPPLIER)  # own-issued, listed: that capture is on
    assert nfse.capture.distribution.run_company(nfse.company.id).documents == 3
    repo = NfseRepository(nfse.ctx.db)
    assert repo.withheld_counts(nfse.company.id) == {Withheld.CUTOFF: 1}

    def listed() -> int:
        return len(nfse_cli.json("documents", "list", "--product", "nfse"))  # type: ignore[arg-type]

    assert listed() == 2  # stored, not listed: before the cutoff
    released = nfse_cli.json("company", "set", RECIPIENT, "--product", "nfse", "--release-history")
    assert released["released"] == 1 and released["nfse_history_released"] is True  # type: ignore[index]
    assert repo.withheld_counts(nfse.company.id) == {}
    assert listed() == 3
    nfse_cli.json("company", "set", RECIPIENT, "--product", "nfse", "--no-own-issued")
    assert repo.withheld_counts(nfse.company.id) == {Withheld.OWN_ISSUED: 1}
    assert listed() == 2


def test_nfse_options_are_refused_for_other_products(nfse_cli: Cli) -> None:
    assert nfse_cli("company", "set", RECIPIENT, "--product", "nfe", "--release-history") != 0
    assert "só existem para NFS-e" in nfse_cli.err


def test_enabling_nfse_is_refused_without_a_usable_certificate(nfse: Harness, nfse_cli: Cli) -> None:
    nfse_cli.json("company", "set", RECIPIENT, "--product", "nfse", "--disable")
    nfse.clock.advance(timedelta(days=3 * 365))  # the test A1 has expired by then
    assert nfse_cli("company", "set", RECIPIENT, "--product", "nfse", "--enable") != 0
    assert "Captura de NFS-e não ativada" in nfse_cli.err and "certificado" in nfse_cli.err
    settings = nfse.office.companies.get_settings(nfse.company.id, Product.NFSE)
    assert settings is not None and settings.enabled is False
