"""`documents fetch KEY` on a data folder with several companies: the key names the company that
asks (the one holding it; never an NF-e's emitter, which the service answers 641; the one left
capturing the product), otherwise the command asks for it (``--company``), listing the candidates."""

from __future__ import annotations

from app.core.products import Environment, Product
from app.desk.fetching import CompanyChoiceNeeded, asking_company
from app.store.records import CaptureSettings, Company
from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness

OTHER = "55666777000181"


def _second_company(harness: Harness) -> Company:
    cert = harness.sandbox.company(OTHER, "SEGUNDA CLIENTE LTDA")
    office = harness.office
    company = office.register_company(
        cert.pfx, cert.password, environment=Environment.HOMOLOGACAO, products=(Product.NFE,)
    )
    office.companies.save_settings(
        CaptureSettings(company.id, Product.NFE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
    )
    return company


def _point_queries(harness: Harness) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "nfe_dist")


def test_several_companies_ask_which_one_then_the_key_or_the_holder_picks(harness: Harness, cli: Cli) -> None:
    _second_company(harness)
    key = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
    before = _point_queries(harness)

    assert cli("documents", "fetch", key) == 1  # neither issued it, both capture NF-e: ask
    assert "Informe a empresa que consulta: --company CNPJ" in cli.err
    assert "11.222.333/0001-81" in cli.err and "55.666.777/0001-81" in cli.err
    assert _point_queries(harness) == before  # nothing was asked of the service

    assert cli("documents", "fetch", key, "--company", RECIPIENT) == 0, cli.err
    assert key in cli.out
    # Now one company holds it: no --company needed, it asks again.
    result = cli.json("documents", "fetch", key)
    assert isinstance(result, dict) and result["status"] in ("local", "fetched"), result
    assert result["document"]["company"] == RECIPIENT


def test_an_nfe_issued_by_one_company_is_asked_by_the_other(harness: Harness, cli: Cli) -> None:
    other = _second_company(harness)
    key = str(harness.sandbox.publish_nfe(RECIPIENT, OTHER).key)  # one client sold to the other
    result = cli.json("documents", "fetch", key)
    assert isinstance(result, dict) and result["status"] == "fetched", result
    assert result["document"]["company"] == OTHER
    assert harness.ctx.documents.find(other.id, Product.NFE, key) is not None
    assert harness.ctx.documents.find(harness.company.id, Product.NFE, key) is None  # never as the emitter (641)


def _company(company_id: int, cnpj: str) -> Company:
    from datetime import UTC, datetime

    from app.core.ids import Cnpj

    at = datetime(2026, 11, 2, tzinfo=UTC)
    return Company(company_id, Cnpj(cnpj), f"EMPRESA {company_id}", cnpj, True, at)


def test_asking_company_rules() -> None:
    a, b = _company(1, RECIPIENT), _company(2, OTHER)
    from_supplier = "35261199888777000100550010000000011000000010"
    from_other = "35261155666777000181550010000000011000000014"
    assert asking_company(from_supplier, Product.NFE, [a, b], holders=[2], capturing=[1, 2]) == 2
    assert asking_company(from_other, Product.NFE, [a, b], holders=[], capturing=[1, 2]) == 1  # not the emitter
    assert asking_company(from_supplier, Product.NFE, [a, b], holders=[], capturing=[1]) == 1
    assert asking_company(from_supplier, Product.NFE, [a], holders=[], capturing=[]) == 1
    try:
        asking_company(from_supplier, Product.NFE, [a, b], holders=[], capturing=[1, 2])
    except CompanyChoiceNeeded as error:
        assert [c.company_id for c in error.candidates] == [1, 2]
    else:
        raise AssertionError("two candidates: a person chooses")
