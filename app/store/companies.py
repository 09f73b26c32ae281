"""Companies and their per-product capture settings."""

from __future__ import annotations

import threading
from typing import Any

from sqlalchemy import func, select

from app.core.ids import Cnpj
from app.core.manifestation import MIN_CIENCIA_WAIT_MINUTES  # rule book §4.1, declared once
from app.store.db import Database
from app.store.dialect import upsert
from app.store.errors import InvalidRecord
from app.store.models import CaptureSettingsRow, CompanyRow, DocumentRow, EventRow
from app.store.records import CaptureSettings, Company, Environment, PartyRole, Product

# What says whether the companies or their settings changed: rows added or removed move the
# counts, updates move the newest updated_at (another process writes on its own clock). Changes
# made in this process also bump ``Database.companies_generation``.
_FINGERPRINT = (
    "SELECT (SELECT count(*) FROM companies), (SELECT max(updated_at) FROM companies), "
    "(SELECT count(*) FROM capture_settings), (SELECT max(updated_at) FROM capture_settings)"
)

EnabledList = tuple[tuple[Company, CaptureSettings], ...]


class CompanyExists(InvalidRecord):
    """The CNPJ is already registered."""


class UnknownCompany(InvalidRecord, LookupError):
    """No company with that id or CNPJ."""


def _company(row: CompanyRow) -> Company:
    return Company(
        id=row.id,
        cnpj=Cnpj(row.cnpj),
        name=row.name,
        certificate_ref=row.certificate_ref,
        active=row.active,
        created_at=row.created_at,
    )


def _settings(row: CaptureSettingsRow) -> CaptureSettings:
    return CaptureSettings(
        company_id=row.company_id,
        product=Product(row.product),
        environment=Environment.from_key(row.environment),
        enabled=row.enabled,
        auto_ciencia=row.auto_ciencia,
        ciencia_wait_minutes=row.ciencia_wait_minutes,
        cte_event_types=tuple(row.cte_event_types),
        cte_party_roles=tuple(PartyRole(r) for r in row.cte_party_roles),
        nfse_cutoff_date=row.nfse_cutoff_date,
        nfse_capture_own_issued=row.nfse_capture_own_issued,
        c_uf_autor=row.c_uf_autor,
        nfse_history_released=row.nfse_history_released,
    )


class CompanyRepository:
    """Add, find and list companies; save and read their capture settings."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._enabled: dict[
            Product, tuple[tuple[int, Any], tuple[EnabledList, dict[int, tuple[Company, CaptureSettings]]]]
        ] = {}
        self._enabled_lock = threading.Lock()

    def _changed(self) -> None:
        self._db.companies_generation += 1

    def add(self, cnpj: Cnpj, name: str, certificate_ref: str | None = None) -> Company:
        now = self._db.clock.now()
        with self._db.session() as s:
            if s.scalar(select(CompanyRow.id).where(CompanyRow.cnpj == cnpj.value)) is not None:
                raise CompanyExists(f"A empresa {cnpj.formatted()} já está cadastrada.")
            row = CompanyRow(
                cnpj=cnpj.value,
                name=name.strip(),
                certificate_ref=certificate_ref,
                active=True,
                created_at=now,
                updated_at=now,
            )
            s.add(row)
            s.flush()
            company = _company(row)
        self._changed()
        return company

    def get(self, company_id: int) -> Company:
        with self._db.reader() as s:
            row = s.get(CompanyRow, company_id)
            if row is None:
                raise UnknownCompany(f"Empresa não encontrada (id {company_id}).")
            return _company(row)

    def find(self, cnpj: Cnpj) -> Company | None:
        with self._db.reader() as s:
            row = s.scalar(select(CompanyRow).where(CompanyRow.cnpj == cnpj.value))
            return _company(row) if row is not None else None

    def list_companies(self, *, active_only: bool = False) -> list[Company]:
        query = select(CompanyRow).order_by(CompanyRow.name, CompanyRow.id)
        if active_only:
            query = query.where(CompanyRow.active.is_(True))
        with self._db.reader() as s:
            return [_company(r) for r in s.scalars(query)]

    def update(
        self,
        company_id: int,
        *,
        name: str | None = None,
        certificate_ref: str | None = None,
        active: bool | None = None,
    ) -> Company:
        with self._db.session() as s:
            row = s.get(CompanyRow, company_id)
            if row is None:
                raise UnknownCompany(f"Empresa não encontrada (id {company_id}).")
            if name is not None:
                row.name = name.strip()
            if certificate_ref is not None:
                row.certificate_ref = certificate_ref
            if active is not None:
                row.active = active
            row.updated_at = self._db.clock.now()
            company = _company(row)
        self._changed()
        return company

    def document_count(self, company_id: int) -> int:
        """Documents and events stored for the company (what removing it with its data deletes)."""
        with self._db.reader() as s:
            documents = s.scalar(select(func.count()).where(DocumentRow.company_id == company_id)) or 0
            events = s.scalar(select(func.count()).where(EventRow.company_id == company_id)) or 0
        return int(documents) + int(events)

    def delete(self, company_id: int) -> None:
        """The company and everything stored for it (the foreign keys cascade)."""
        with self._db.session() as s:
            row = s.get(CompanyRow, company_id)
            if row is None:
                raise UnknownCompany(f"Empresa não encontrada (id {company_id}).")
            s.delete(row)
        self._changed()

    # ------------------------------------------------------------------ settings

    def save_settings(self, settings: CaptureSettings) -> CaptureSettings:
        """Insert or replace the settings of ``settings.company_id`` and ``settings.product``."""
        if settings.ciencia_wait_minutes < MIN_CIENCIA_WAIT_MINUTES:
            raise InvalidRecord(
                f"O tempo de espera da Ciência da Operação deve ser de pelo menos "
                f"{MIN_CIENCIA_WAIT_MINUTES} minutos (informado: {settings.ciencia_wait_minutes})."
            )
        if settings.c_uf_autor is not None and not (len(settings.c_uf_autor) == 2 and settings.c_uf_autor.isdigit()):
            raise InvalidRecord(f"cUFAutor inválido: {settings.c_uf_autor!r} (código IBGE de 2 dígitos).")
        values = {
            "company_id": settings.company_id,
            "product": settings.product.value,
            "environment": settings.environment.key,
            "enabled": settings.enabled,
            "auto_ciencia": settings.auto_ciencia,
            "ciencia_wait_minutes": settings.ciencia_wait_minutes,
            "cte_event_types": list(settings.cte_event_types),
            "cte_party_roles": [r.value for r in settings.cte_party_roles],
            "nfse_cutoff_date": settings.nfse_cutoff_date,
            "nfse_capture_own_issued": settings.nfse_capture_own_issued,
            "c_uf_autor": settings.c_uf_autor,
            "nfse_history_released": settings.nfse_history_released,
            "updated_at": self._db.clock.now(),
        }
        statement = upsert(CaptureSettingsRow, self._db.dialect).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=["company_id", "product"],
            set_={k: statement.excluded[k] for k in values if k not in ("company_id", "product")},
        )
        with self._db.session() as s:
            if s.get(CompanyRow, settings.company_id) is None:
                raise UnknownCompany(f"Empresa não encontrada (id {settings.company_id}).")
            s.execute(statement)
        self._changed()
        return settings

    def get_settings(self, company_id: int, product: Product) -> CaptureSettings | None:
        with self._db.reader() as s:
            row = s.scalar(
                select(CaptureSettingsRow).where(
                    CaptureSettingsRow.company_id == company_id,
                    CaptureSettingsRow.product == product.value,
                )
            )
            return _settings(row) if row is not None else None

    def list_settings(self, company_id: int) -> list[CaptureSettings]:
        with self._db.reader() as s:
            rows = s.scalars(
                select(CaptureSettingsRow)
                .where(CaptureSettingsRow.company_id == company_id)
                .order_by(CaptureSettingsRow.product)
            )
            return [_settings(r) for r in rows]

    def settings_for(self, product: Product) -> dict[int, CaptureSettings]:
        """Every company's settings for ``product``, enabled or not, by company id (one read)."""
        with self._db.reader() as s:
            rows = s.scalars(select(CaptureSettingsRow).where(CaptureSettingsRow.product == product.value))
            return {r.company_id: _settings(r) for r in rows}

    def enabled_for(self, product: Product) -> list[tuple[Company, CaptureSettings]]:
        """Active companies with ``product`` capture enabled: what a scheduler tick looks at."""
        query = (
            select(CompanyRow, CaptureSettingsRow)
            .join(CaptureSettingsRow, CaptureSettingsRow.company_id == CompanyRow.id)
            .where(
                CompanyRow.active.is_(True),
                CaptureSettingsRow.enabled.is_(True),
                CaptureSettingsRow.product == product.value,
            )
            .order_by(CompanyRow.id)
        )
        with self._db.reader() as s:
            return [(_company(c), _settings(st)) for c, st in s.execute(query)]

    def enabled_snapshot(self, product: Product) -> EnabledList:
        """``enabled_for``, read again only when companies or settings changed since the last
        read (one tiny query checks): what a scheduler pass over hundreds of companies looks at."""
        return self._snapshot(product)[0]

    def enabled_configuration(self, product: Product, company_id: int) -> tuple[Company, CaptureSettings] | None:
        """One enabled company and its settings from the same snapshot (None: not enabled)."""
        return self._snapshot(product)[1].get(company_id)

    def _snapshot(self, product: Product) -> tuple[EnabledList, dict[int, tuple[Company, CaptureSettings]]]:
        with self._db.driver_connection() as connection:  # autocommit: the statement is its snapshot
            mark = (self._db.companies_generation, tuple(connection.execute(_FINGERPRINT).fetchone()))
        with self._enabled_lock:
            cached = self._enabled.get(product)
            if cached is not None and cached[0] == mark:
                return cached[1]
        fresh = tuple(self.enabled_for(product))
        entry = (fresh, {company.id: (company, settings) for company, settings in fresh})
        with self._enabled_lock:
            self._enabled[product] = (mark, entry)
        return entry

    def forget_snapshots(self) -> None:
        """Read the companies again on the next ``enabled_snapshot`` (after a replan)."""
        with self._enabled_lock:
            self._enabled.clear()
