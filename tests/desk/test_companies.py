"""Companies as the window manages them: certificates checked before saving, replaced without
losing anything, settings refused against the rules, removal with and without documents."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from app.capture.office import RegistrationRefused
from app.certs.a1 import CertificateExpired, WrongPassword
from app.core.errors import CapturaError
from app.core.products import Environment, Product
from app.desk import Desk
from app.desk import companies as admin
from tests.desk.conftest import Office
from tests.support.nfe_harness import RECIPIENT

BRANCH = "11222333000262"  # same root as RECIPIENT


def test_preview_shows_the_certificate_and_names_each_problem(office: Office, desk: Desk) -> None:
    sandbox, now = office.harness.sandbox, desk.now()
    cert = sandbox.company("55666777000181", "NOVA CLIENTE LTDA")
    preview = admin.preview_certificate(cert.pfx, cert.password, now)
    assert preview.cnpj == "55666777000181" and preview.holder_name.startswith("NOVA CLIENTE")
    assert preview.days_left > 30 and any("Emitido por" in line for line in preview.lines)
    with pytest.raises(WrongPassword, match="Senha do certificado incorreta"):
        admin.preview_certificate(cert.pfx, "errada", now)
    old = sandbox.company("55666777000181", "NOVA CLIENTE LTDA", not_after=now - timedelta(days=2))
    with pytest.raises(CertificateExpired, match="Certificado vencido em"):
        admin.preview_certificate(old.pfx, old.password, now)


def test_add_a_branch_and_its_settings(office: Office, desk: Desk) -> None:
    sandbox = office.harness.sandbox
    cert = sandbox.company("55666777000181", "NOVA CLIENTE LTDA")
    company = desk.admin.add_company(
        cert.pfx,
        cert.password,
        cnpj="55666777000262",
        name="Nova Cliente Filial",
        environment=Environment.HOMOLOGACAO,
        products=(Product.NFE, Product.CTE),
    )
    assert company.cnpj.value == "55666777000262"
    line = next(c for c in desk.companies() if c.company_id == company.id)
    assert line.name == "Nova Cliente Filial" and line.certificate_problem is None
    settings = desk.admin.settings_of(company.id)
    assert settings[Product.NFE].enabled and settings[Product.CTE].enabled
    assert not settings[Product.NFSE].enabled  # never configured: shown disabled
    with pytest.raises(CapturaError, match="pelo menos 5 minutos"):
        desk.admin.save_settings([replace(settings[Product.NFE], auto_ciencia=True, ciencia_wait_minutes=3)])
    desk.admin.save_settings([replace(settings[Product.NFE], auto_ciencia=True, ciencia_wait_minutes=10)])
    assert desk.admin.settings_of(company.id)[Product.NFE].ciencia_wait_minutes == 10
    with pytest.raises(RegistrationRefused, match="raiz do CNPJ"):
        other = sandbox.company("99000111000165", "OUTRA LTDA")
        desk.admin.add_company(
            other.pfx, other.password, cnpj=BRANCH, name=None, environment=Environment.HOMOLOGACAO, products=()
        )


def test_replacing_the_certificate_keeps_the_cursor_and_every_document(office: Office, desk: Desk) -> None:
    harness = office.harness
    company_id = harness.company.id
    before = harness.ctx.cursors.get(company_id, Product.NFE)
    stored = desk.admin.document_count(company_id)
    assert before.ult_nsu > 0 and stored > 0
    renewed = harness.sandbox.company(
        RECIPIENT, "DESTINATARIA EXEMPLO LTDA", not_after=desk.now() + timedelta(days=700)
    )
    preview = desk.admin.replace_certificate(company_id, renewed.pfx, renewed.password)
    assert preview.days_left >= 699
    line = next(c for c in desk.companies() if c.company_id == company_id)
    assert line.certificate_not_after == preview.not_after  # the cache forgot the old one
    assert harness.ctx.cursors.get(company_id, Product.NFE).ult_nsu == before.ult_nsu
    assert desk.admin.document_count(company_id) == stored
    stranger = harness.sandbox.company("99000111000165", "OUTRA LTDA")
    with pytest.raises(RegistrationRefused, match="raiz do CNPJ"):
        desk.admin.replace_certificate(company_id, stranger.pfx, stranger.password)
    line = next(c for c in desk.companies() if c.company_id == company_id)
    assert line.certificate_not_after == preview.not_after  # the refusal changed nothing


def test_removing_keeps_the_documents_unless_asked(office: Office, desk: Desk) -> None:
    harness = office.harness
    company_id = harness.company.id
    stored = desk.admin.document_count(company_id)
    assert desk.admin.remove_company(company_id, delete_documents=False) == 0
    line = next(c for c in desk.companies() if c.company_id == company_id)
    assert not line.active
    assert all(not s.enabled for s in harness.office.companies.list_settings(company_id))
    assert desk.admin.document_count(company_id) == stored
    # Added again: the same company comes back, with its documents.
    cert = harness.sandbox.company(RECIPIENT, "DESTINATARIA EXEMPLO LTDA")
    again = desk.admin.add_company(
        cert.pfx,
        cert.password,
        cnpj=None,
        name=None,
        environment=Environment.HOMOLOGACAO,
        products=(Product.NFE,),
    )
    assert again.id == company_id and again.active
    assert desk.admin.document_count(company_id) == stored
    assert desk.admin.remove_company(company_id, delete_documents=True) == stored
    assert all(c.company_id != company_id for c in desk.companies())


def test_enabling_nfse_from_the_dialog_is_refused_without_a_usable_certificate(office: Office, desk: Desk) -> None:
    company_id = office.harness.company.id
    nfse = desk.admin.settings_of(company_id)[Product.NFSE]
    assert not nfse.enabled
    office.harness.clock.advance(timedelta(days=3 * 365))  # the test A1 has expired by then
    with pytest.raises(RegistrationRefused, match="Captura de NFS-e não ativada"):
        desk.admin.save_settings([replace(nfse, enabled=True)])
    assert not desk.admin.settings_of(company_id)[Product.NFSE].enabled
