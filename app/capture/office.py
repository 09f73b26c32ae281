"""The office: one data folder's database, certificate vault and settings, opened together.

The facade both faces of the app (window and command line) use, so that registering a company
means the same thing in both.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from app.capture.context import CaptureContext, CertificateSource, resume_stopped
from app.certs.a1 import A1Certificate, CertificateError, load_a1
from app.certs.vault import CertificateVault
from app.config.paths import database_path, ensure_data_dir
from app.config.settings import Settings, load_settings, save_settings
from app.core.clock import Clock, SystemClock
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.core.keys import CODE_BY_UF
from app.core.products import Environment, Product
from app.fiscal.http import HttpClientFactory, TransportFactory
from app.store.companies import CompanyRepository
from app.store.cursors import CaptureStateRepository
from app.store.db import Database, open_database
from app.store.records import CaptureSettings, Company


class RegistrationRefused(CapturaError):
    """The company cannot be registered with that certificate."""


@dataclass(frozen=True, slots=True)
class CertificateStatus:
    """What the UI shows of a company's certificate; ``problem`` is a sentence when it is unusable."""

    not_after: datetime | None
    problem: str | None


@dataclass(frozen=True, slots=True)
class CompanyOverview:
    company: Company
    settings: tuple[CaptureSettings, ...]
    certificate: CertificateStatus


class Office:
    """Opens (and migrates) the data folder; call ``close()`` or use it as a context manager."""

    def __init__(
        self, data_dir: Path, *, clock: Clock | None = None, database: str | None = None, db: Database | None = None
    ) -> None:
        """``database``: an office server's URL (``postgresql+psycopg://…``); None keeps the data
        folder's own SQLite file. Certificates and settings stay in the data folder either way.
        ``db``: that database already open (the desk opens it first); the office closes it."""
        self.data_dir = ensure_data_dir(data_dir)
        self.clock = clock or SystemClock()
        self.settings: Settings = load_settings(self.data_dir)
        self.db: Database = db or open_database(database or database_path(self.data_dir), clock=self.clock)
        self.vault = CertificateVault(self.data_dir)
        self.companies = CompanyRepository(self.db)
        self.cursors = CaptureStateRepository(self.db)
        self._http: list[HttpClientFactory] = []
        self._contexts: list[CaptureContext] = []

    def capture_context(
        self, *, transport_for: TransportFactory | None = None, rng: random.Random | None = None
    ) -> CaptureContext:
        """This data folder's capture dependencies on the office's clock (window, CLI and demo alike).

        Its HTTP clients are closed with the office. ``transport_for`` replaces the network
        (the sandbox's in-process transport in simulations).
        """
        http = HttpClientFactory(self.settings, icp_bundle=self.settings.icp_brasil_bundle, transport_for=transport_for)
        self._http.append(http)
        ctx = CaptureContext(
            db=self.db,
            clock=self.clock,
            settings=self.settings,
            http=http,
            certificates=CertificateSource(self.vault),
            rng=rng or random.Random(),
        )
        self._contexts.append(ctx)
        return ctx

    def change_settings(self, updated: Settings) -> None:
        """Write ``settings.json`` and make it the settings of the office and of every capture
        context it opened (the retention and the notices read it from there): stored once."""
        save_settings(self.data_dir, updated)
        self.settings = updated
        for ctx in self._contexts:
            ctx.settings = updated

    def close(self) -> None:
        for http in self._http:
            http.close()
        self._http.clear()
        self._contexts.clear()
        self.db.close()

    def __enter__(self) -> Office:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def resume_capture(self, company_id: int, products: Iterable[Product] = tuple(Product)) -> list[Product]:
        """Take up a company's capture that stopped (communication failures, a refused request)
        or that the user paused; waits and blocks still in force are kept. Returns the products
        resumed. A running service looks again at a stopped company within the hour
        (``CaptureService.resume`` at once)."""
        return [product for product in products if resume_stopped(self.cursors, company_id, product)]

    def register_company(
        self,
        pfx: bytes,
        password: str,
        *,
        cnpj: Cnpj | None = None,
        name: str | None = None,
        environment: Environment = Environment.PRODUCAO,
        products: Iterable[Product] = tuple(Product),
    ) -> Company:
        """Store the certificate in the vault and the company with its capture settings.

        ``cnpj`` may name a branch: the national services authorise any establishment whose
        8-character base equals the certificate's (cStat 593 otherwise), so that is checked here.
        """
        now = self.clock.now()
        # Validate before touching the vault: a refused certificate leaves nothing behind.
        cert = load_a1(pfx, password, now=now)
        company_cnpj = self._company_cnpj(cert, cnpj)
        existing = self.companies.find(company_cnpj)
        if existing is not None and existing.active:
            raise RegistrationRefused(f"A empresa {company_cnpj.formatted()} já está cadastrada.")
        self.vault.store(pfx, password, now)
        assert cert.cnpj is not None
        if existing is not None:  # removed with its documents kept: it comes back with them
            company = self.companies.update(
                existing.id, name=name or existing.name, certificate_ref=cert.cnpj.value, active=True
            )
        else:
            company = self.companies.add(company_cnpj, name or cert.holder_name, certificate_ref=cert.cnpj.value)
        # cUFAutor (required by the CT-e distribution, sent by NF-e's too): the holder's state as
        # the certificate gives it; `company set --uf` corrects it.
        uf_code = CODE_BY_UF.get(cert.uf or "")
        for product in products:
            self.companies.save_settings(
                CaptureSettings(company.id, product, environment=environment, c_uf_autor=uf_code)
            )
        return company

    def save_settings(self, settings: CaptureSettings, *, previous: CaptureSettings | None = None) -> CaptureSettings:
        """One company's settings for one product, checked first (the store checks the Ciência
        wait of §4.1). Enabling NFS-e needs a usable certificate: the ADN speaks only mutual TLS
        with the company's A1 (§6.1)."""
        if settings.auto_ciencia and settings.product is not Product.NFE:
            raise RegistrationRefused("A Ciência da Operação automática só existe para NF-e.")
        if (settings.cte_event_types or settings.cte_party_roles) and settings.product is not Product.CTE:
            raise RegistrationRefused("Os filtros de tipo de evento e de papel só existem para CT-e.")
        was_enabled = previous.enabled if previous is not None else self._enabled(settings)
        if settings.product is Product.NFSE and settings.enabled and not was_enabled:
            company = self.companies.get(settings.company_id)
            problem = self._certificate_status(company, self.clock.now()).problem
            if problem:
                raise RegistrationRefused(
                    f"Captura de NFS-e não ativada para {company.cnpj.formatted()}: o ADN exige TLS mútuo com o "
                    f"certificado A1 da empresa, e ele não pode ser usado ({problem})"
                )
        return self.companies.save_settings(settings)

    def _enabled(self, settings: CaptureSettings) -> bool:
        stored = self.companies.get_settings(settings.company_id, settings.product)
        return stored is not None and stored.enabled

    def registered_elsewhere(self, pfx: bytes, password: str, *, cnpj: Cnpj | None = None) -> Company | None:
        """On an office database, the active company this certificate is for when another
        workstation registered it (its certificate then comes into this workstation's vault with
        ``replace_certificate``: one able to take the capture over); None otherwise, and always on
        the data folder's own SQLite file (a company added twice there is refused)."""
        if self.db.path is not None:
            return None
        cert = load_a1(pfx, password, now=self.clock.now())
        existing = self.companies.find(self._company_cnpj(cert, cnpj))
        return existing if existing is not None and existing.active else None

    def replace_certificate(self, company_id: int, pfx: bytes, password: str) -> A1Certificate:
        """A new A1 for a registered company (the old one expiring): the cursor, the documents
        and the settings stay; only the vault entry and the company's reference change."""
        cert = load_a1(pfx, password, now=self.clock.now())
        company = self.companies.get(company_id)
        self._company_cnpj(cert, company.cnpj)  # the same root, or a clear refusal
        self.vault.store(pfx, password, self.clock.now())
        assert cert.cnpj is not None
        previous = company.certificate_ref
        self.companies.update(company_id, certificate_ref=cert.cnpj.value)
        if previous and previous != cert.cnpj.value and not self._certificate_in_use(previous):
            self.vault.remove(previous)
        return cert

    def remove_company(self, company_id: int, *, delete_documents: bool) -> int:
        """Stop capturing for a company. Its documents stay (and come back if it is added again)
        unless ``delete_documents``; its certificate leaves the vault unless a branch uses it.
        Returns how many documents and events were deleted."""
        company = self.companies.get(company_id)
        deleted = 0
        if delete_documents:
            deleted = self.companies.document_count(company_id)
            self.companies.delete(company_id)
        else:
            for settings in self.companies.list_settings(company_id):
                self.companies.save_settings(replace(settings, enabled=False))
            self.companies.update(company_id, active=False)
        ref = company.certificate_ref
        if ref and not self._certificate_in_use(ref):
            self.vault.remove(ref)
        return deleted

    def _certificate_in_use(self, ref: str) -> bool:
        return any(c.certificate_ref == ref for c in self.companies.list_companies(active_only=True))

    @staticmethod
    def _company_cnpj(cert: A1Certificate, requested: Cnpj | None) -> Cnpj:
        if cert.cnpj is None:
            raise RegistrationRefused(
                "Este certificado é de pessoa física (e-CPF). Para capturar documentos de uma empresa, "
                "use o certificado e-CNPJ dela."
            )
        if requested is None:
            return cert.cnpj
        if requested.base != cert.cnpj.base:
            raise RegistrationRefused(
                f"O CNPJ {requested.formatted()} não pertence à mesma empresa do certificado "
                f"({cert.cnpj.formatted()}): a raiz do CNPJ (8 primeiros caracteres) precisa ser a mesma."
            )
        return requested

    def overview(self) -> list[CompanyOverview]:
        now = self.clock.now()
        result = []
        for company in self.companies.list_companies():
            settings = tuple(self.companies.list_settings(company.id))
            result.append(CompanyOverview(company, settings, self._certificate_status(company, now)))
        return result

    def _certificate_status(self, company: Company, now: datetime) -> CertificateStatus:
        if company.certificate_ref is None:
            return CertificateStatus(None, "Nenhum certificado instalado.")
        try:
            cert = self.vault.load(company.certificate_ref, now)
        except CertificateError as error:
            return CertificateStatus(getattr(error, "not_after", None), error.message)
        except CapturaError as error:
            return CertificateStatus(None, error.message)
        return CertificateStatus(cert.not_after, None)
