"""The office's companies as the window manages them: certificates, settings, removal.

Every function is slow (the vault, the keyring, the database): call them from a worker. Each
raises a ``CapturaError`` whose message a clerk can read; nothing is half-done on a refusal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from app.core.ids import Cnpj
from app.core.products import Environment, Product
from app.store.records import CaptureSettings, Company

if TYPE_CHECKING:
    from app.desk.desk import Desk


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
    )


def add_company(
    desk: Desk,
    pfx: bytes,
    password: str,
    *,
    cnpj: str | None,
    name: str | None,
    environment: Environment,
    products: Iterable[Product],
) -> Company:
    company = desk.office.register_company(
        pfx,
        password,
        cnpj=Cnpj.parse(cnpj) if cnpj else None,
        name=name or None,
        environment=environment,
        products=tuple(products),
    )
    _replan(desk, company.id)
    return company


def replace_certificate(desk: Desk, company_id: int, pfx: bytes, password: str) -> CertificatePreview:
    company = desk.ctx.companies.get(company_id)
    cert = desk.office.replace_certificate(company_id, pfx, password)
    for ref in {company.certificate_ref, cert.cnpj.value if cert.cnpj else None} - {None}:
        desk.ctx.certificates.forget(ref)  # type: ignore[arg-type]
    _replan(desk, company_id)
    return preview_certificate(pfx, password, desk.now())


def settings_of(desk: Desk, company_id: int) -> dict[Product, CaptureSettings]:
    """Every product's settings; a product never configured gets the defaults, disabled."""
    stored = {s.product: s for s in desk.ctx.companies.list_settings(company_id)}
    return {p: stored.get(p) or CaptureSettings(company_id, p, enabled=False) for p in Product}


def save_settings(desk: Desk, settings: Iterable[CaptureSettings]) -> None:
    changed: set[int] = set()
    for one in settings:
        desk.office.save_settings(one)
        changed.add(one.company_id)
    for company_id in changed:
        _replan(desk, company_id)


def resume(desk: Desk, company_id: int, product: Product | None = None) -> list[Product]:
    """What ``company resume`` does: take up a capture the cadence stopped or the user paused."""
    service = desk.service
    if service is not None and desk.capturing:
        return service.resume(company_id, product)
    return desk.office.resume_capture(company_id, [product] if product else list(Product))


def remove_company(desk: Desk, company_id: int, *, delete_documents: bool) -> int:
    deleted = desk.office.remove_company(company_id, delete_documents=delete_documents)
    if not delete_documents:
        _replan(desk, company_id)
    return deleted


def document_count(desk: Desk, company_id: int) -> int:
    return desk.ctx.companies.document_count(company_id)


def _replan(desk: Desk, company_id: int) -> None:
    service = desk.service
    if service is not None and desk.capturing:
        service.replan(company_id)
