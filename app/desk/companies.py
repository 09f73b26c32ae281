"""The office's companies as the window manages them: certificates, settings, removal.

Every function is slow (the vault, the keyring, the database): call them from a worker. Each
raises a ``CapturaError`` whose message a clerk can read; nothing is half-done on a refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.core.products import Environment, Product
from app.desk.views import CompanyLine, ProductBadge
from app.store.records import CaptureSettings, Company, Withheld

if TYPE_CHECKING:
    from app.capture.context import CaptureContext
    from app.capture.office import CompanyOverview, Office
    from app.capture.service import CaptureService


@dataclass(frozen=True, slots=True)
class CertificatePreview:
    """What the dialog shows of a certificate file before anything is saved."""

    holder_name: str
    cnpj: str | None
    cpf: str | None
    issuer: str
    not_before: datetime
    not_after: datetime
    days_left: int
    uf: str | None
    lines: tuple[str, ...]  # the certificate panel's text (titular, CNPJ, emissor, validade...)
    subject: str = ""
    sha1_fingerprint: str = ""


def preview_certificate(pfx: bytes, password: str, now: datetime) -> CertificatePreview:
    """Open and check a ``.pfx``; raises the certificate's own typed errors (wrong password,
    expired, not yet valid, not ICP-Brasil, legacy RC2...), each with its Portuguese message."""
    from app.certs.a1 import load_a1  # cryptography: loaded on the worker, not at window start

    cert = load_a1(pfx, password, now=now)
    return CertificatePreview(
        holder_name=cert.holder_name,
        cnpj=cert.cnpj.value if cert.cnpj else None,
        cpf=cert.cpf.value if cert.cpf else None,
        issuer=cert.issuer,
        not_before=cert.not_before,
        not_after=cert.not_after,
        days_left=cert.days_left(now),
        uf=cert.uf,
        lines=tuple(cert.describe()),
        subject=cert.subject,
        sha1_fingerprint=cert.sha1_fingerprint,
    )


class CompanyAdmin:
    """The office's companies as the window and the command line manage them (``Desk.admin``),
    over the office, its capture context and the desk's service (replanned when it runs here)."""

    def __init__(
        self, office: Office, ctx: CaptureContext, service: CaptureService, capturing: Callable[[], bool]
    ) -> None:
        self._office = office
        self._ctx = ctx
        self._service = service
        self._capturing = capturing

    def add_company(
        self,
        pfx: bytes,
        password: str,
        *,
        cnpj: str | None,
        name: str | None,
        environment: Environment,
        products: Iterable[Product],
    ) -> Company:
        company = self._office.register_company(
            pfx,
            password,
            cnpj=Cnpj.parse(cnpj) if cnpj else None,
            name=name or None,
            environment=environment,
            products=tuple(products),
        )
        self._replan(company.id)
        return company

    def import_certificate(self, pfx: bytes, password: str, *, cnpj: str | None) -> Company | None:
        """A company another workstation registered in the office database: its certificate into
        this workstation's vault (``company add`` at a second workstation); None when the company
        is not registered yet (or the database is this folder's own file): ``add_company`` then."""
        company = self._office.registered_elsewhere(pfx, password, cnpj=Cnpj.parse(cnpj) if cnpj else None)
        if company is not None:
            self.replace_certificate(company.id, pfx, password)
        return company

    def replace_certificate(self, company_id: int, pfx: bytes, password: str) -> CertificatePreview:
        company = self._ctx.companies.get(company_id)
        cert = self._office.replace_certificate(company_id, pfx, password)
        for ref in {company.certificate_ref, cert.cnpj.value if cert.cnpj else None} - {None}:
            self._ctx.certificates.forget(ref)  # type: ignore[arg-type]
        self._replan(company_id)
        return preview_certificate(pfx, password, self._ctx.clock.now())

    def settings_of(self, company_id: int) -> dict[Product, CaptureSettings]:
        """Every product's settings; a product never configured gets the defaults, disabled."""
        stored = {s.product: s for s in self._ctx.companies.list_settings(company_id)}
        return {p: stored.get(p) or CaptureSettings(company_id, p, enabled=False) for p in Product}

    def save_settings(self, settings: Iterable[CaptureSettings]) -> int:
        """Save each product's settings (checked by the office), the NFS-e delivery rules following
        them; returns how many NFS-e the release of the history made visible."""
        changed: set[int] = set()
        released = 0
        for one in settings:
            previous = self._ctx.companies.get_settings(one.company_id, one.product)
            saved = self._office.save_settings(one, previous=previous)
            if saved.product is Product.NFSE:
                released += self._nfse_visibility(saved.company_id, previous or saved, saved)
            changed.add(one.company_id)
        for company_id in changed:
            self._replan(company_id)
        return released

    def change_settings(self, company_id: int, product: Product, **changes: Any) -> tuple[CaptureSettings, int]:
        """Change some of one product's settings (``company set``); returns them as saved and how
        many NFS-e the release of the history made visible."""
        current = self._ctx.companies.get_settings(company_id, product) or CaptureSettings(company_id, product)
        released = self.save_settings([replace(current, **changes)])
        saved = self._ctx.companies.get_settings(company_id, product)
        assert saved is not None
        return saved, released

    def overview(self) -> list[CompanyOverview]:
        """Every company with its certificate's state and its settings (``company list``)."""
        return self._office.overview()

    def _nfse_visibility(self, company_id: int, before: CaptureSettings, after: CaptureSettings) -> int:
        """What the NFS-e delivery rules hold back follows the settings (the documents stay);
        returns how many NFS-e before the cutoff the release of the history made visible."""
        from app.store.nfse import NfseRepository  # SQL: loaded when settings are saved

        repo = NfseRepository(self._ctx.db)
        released = 0
        if after.nfse_history_released:
            released = repo.release(company_id, Withheld.CUTOFF)
        if after.nfse_capture_own_issued and not before.nfse_capture_own_issued:
            repo.release(company_id, Withheld.OWN_ISSUED)
        elif before.nfse_capture_own_issued and not after.nfse_capture_own_issued:
            repo.withhold_own_issued(company_id)
        return released

    def resume(self, company_id: int, product: Product | None = None) -> list[Product]:
        """What ``company resume`` does: take up a capture the cadence stopped or the user paused."""
        if self._capturing():
            return self._service.resume(company_id, product)
        return self._office.resume_capture(company_id, [product] if product else list(Product))

    def remove_company(self, company_id: int, *, delete_documents: bool) -> int:
        deleted = self._office.remove_company(company_id, delete_documents=delete_documents)
        if not delete_documents:
            self._replan(company_id)
        return deleted

    def document_count(self, company_id: int) -> int:
        return self._ctx.companies.document_count(company_id)

    def _replan(self, company_id: int) -> None:
        if self._capturing():
            self._service.replan(company_id)


def engine_missing(product: Product) -> str | None:
    """Why this version captures no ``product`` (no engine for it), or None."""
    from app.capture.status import missing_engine_reason

    return missing_engine_reason(product)


def uf_code(text: str) -> str | None:
    """The IBGE code of a UF typed by a person ("SP" or "35"); empty text clears it."""
    from app.fiscal.distribution import c_uf_code
    from app.fiscal.errors import RequestInvalid

    try:
        return c_uf_code(text) if text.strip() else None
    except RequestInvalid as error:
        raise CapturaError(error.message) from error


def company_lines(ctx: CaptureContext, service: CaptureService, now: datetime, *, read_only: bool) -> list[CompanyLine]:
    """Every company with its certificate and a badge per configured product (``read_only``:
    another process captures here, with its certificates, not this one's vault)."""
    badges: dict[int, list[ProductBadge]] = {}
    for status in service.status():
        badges.setdefault(status.company_id, []).append(
            ProductBadge(
                product=status.product,
                action=status.action,
                capturing=status.capturing,
                until=status.until,
                reason=status.reason,
                last_cstat=status.last_cstat,
                last_message=status.last_message,
                documents_today=status.documents_today,
                pending_recoveries=status.pending_recoveries,
                next_query_at=status.next_query_at,
                stalled=status.stalled,
            )
        )
    lines = []
    for company in ctx.companies.list_companies():
        # The capture's own certificate cache: a status refresh every few seconds decrypts nothing.
        not_after: datetime | None = None
        problem: str | None = None
        try:
            if not read_only:  # another process captures: its certificates, not this one's vault
                not_after = ctx.certificates.get(company, now).not_after
        except CapturaError as error:
            not_after, problem = getattr(error, "not_after", None), error.message
        lines.append(
            CompanyLine(
                company_id=company.id,
                cnpj=company.cnpj.value,
                name=company.name,
                active=company.active,
                certificate_not_after=not_after,
                certificate_problem=problem,
                badges=tuple(badges.get(company.id, ())),
            )
        )
    return lines
