from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest
from sqlalchemy import inspect, text

from app.store.companies import CompanyExists, CompanyRepository, UnknownCompany
from app.store.db import Database
from app.store.errors import InvalidRecord, StorageBug
from app.store.records import CaptureSettings, Company, Environment, PartyRole, Product

from .conftest import CNPJ_A, CNPJ_B


def test_add_get_find_and_list(db: Database, company: Company) -> None:
    repo = CompanyRepository(db)
    other = repo.add(CNPJ_B, "  Beta Serviços  ")
    assert other.cnpj == CNPJ_B and other.name == "Beta Serviços" and other.active
    assert repo.get(company.id) == company
    assert repo.find(CNPJ_B) == other
    assert [c.id for c in repo.list_companies()] == [company.id, other.id]  # by name
    repo.update(other.id, active=False, certificate_ref="cert-beta")
    assert [c.id for c in repo.list_companies(active_only=True)] == [company.id]
    assert repo.get(other.id).certificate_ref == "cert-beta"


def test_duplicate_cnpj_and_unknown_id_have_clear_messages(db: Database, company: Company) -> None:
    repo = CompanyRepository(db)
    with pytest.raises(CompanyExists, match="já está cadastrada"):
        repo.add(CNPJ_A, "Outra")
    with pytest.raises(UnknownCompany, match="não encontrada"):
        repo.get(999)


def test_settings_round_trip_and_update(db: Database, company: Company) -> None:
    repo = CompanyRepository(db)
    settings = CaptureSettings(
        company_id=company.id,
        product=Product.CTE,
        environment=Environment.HOMOLOGACAO,
        cte_event_types=("110111", "610110"),
        cte_party_roles=(PartyRole.TAKER, PartyRole.RECIPIENT),
        c_uf_autor="35",
    )
    repo.save_settings(settings)
    assert repo.get_settings(company.id, Product.CTE) == settings
    changed = replace(settings, enabled=False, c_uf_autor="41")
    repo.save_settings(changed)
    assert repo.get_settings(company.id, Product.CTE) == changed
    nfse = CaptureSettings(company.id, Product.NFSE, nfse_cutoff_date=date(2026, 1, 1), nfse_capture_own_issued=True)
    repo.save_settings(nfse)
    assert repo.list_settings(company.id) == [changed, nfse]  # ordered by product
    assert repo.get_settings(company.id, Product.NFE) is None


def test_enabled_for_lists_active_companies_with_the_product_on(db: Database, company: Company) -> None:
    repo = CompanyRepository(db)
    other = repo.add(CNPJ_B, "Beta")
    repo.save_settings(CaptureSettings(company.id, Product.NFE, auto_ciencia=True, ciencia_wait_minutes=30))
    repo.save_settings(CaptureSettings(other.id, Product.NFE, enabled=False))
    [(found, settings)] = repo.enabled_for(Product.NFE)
    assert found.id == company.id and settings.ciencia_wait_minutes == 30
    repo.update(company.id, active=False)
    assert repo.enabled_for(Product.NFE) == []


def test_ciencia_wait_under_five_minutes_is_refused(db: Database, company: Company) -> None:
    repo = CompanyRepository(db)
    with pytest.raises(InvalidRecord, match="pelo menos 5 minutos"):
        repo.save_settings(CaptureSettings(company.id, Product.NFE, ciencia_wait_minutes=4))
    repo.save_settings(CaptureSettings(company.id, Product.NFE, ciencia_wait_minutes=5))
    # The CHECK constraint holds even for a writer that skips the repository.
    with pytest.raises(StorageBug, match=r"(?i)check constraint"), db.session() as s:
        s.execute(text("UPDATE capture_settings SET ciencia_wait_minutes = 4"))
    assert repo.get_settings(company.id, Product.NFE) == CaptureSettings(company.id, Product.NFE)


def test_bad_cuf_autor_and_unknown_company_are_refused(db: Database) -> None:
    repo = CompanyRepository(db)
    with pytest.raises(InvalidRecord, match="cUFAutor"):
        repo.save_settings(CaptureSettings(1, Product.CTE, c_uf_autor="SP"))
    with pytest.raises(UnknownCompany):
        repo.save_settings(CaptureSettings(42, Product.CTE))


def test_no_secret_column_exists(db: Database) -> None:
    found = inspect(db.engine)
    columns = {column["name"] for table in ("companies", "capture_settings") for column in found.get_columns(table)}
    assert not {c for c in columns if any(w in c for w in ("password", "senha", "pfx", "private", "secret"))}
