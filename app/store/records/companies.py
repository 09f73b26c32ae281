"""Companies and their capture settings and pauses."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from app.core.documents import PartyRole
from app.core.ids import Cnpj
from app.core.products import Environment, Product


@dataclass(frozen=True, slots=True)
class Company:
    """A client company. The certificate itself never enters the database: only its reference."""

    id: int
    cnpj: Cnpj
    name: str
    certificate_ref: str | None
    active: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class CaptureSettings:
    """Per company and product capture settings (rule book §4.1, §5.1, §6.1)."""

    company_id: int
    product: Product
    environment: Environment = Environment.PRODUCAO
    enabled: bool = True
    auto_ciencia: bool = False
    ciencia_wait_minutes: int = 5
    cte_event_types: tuple[str, ...] = ()  # empty: every event type notifies
    cte_party_roles: tuple[PartyRole, ...] = ()  # empty: every role notifies
    nfse_cutoff_date: date | None = None
    nfse_capture_own_issued: bool = False
    c_uf_autor: str | None = None
    # ``company set --product nfse --release-history``: documents before the cutoff are listed too
    nfse_history_released: bool = False


@dataclass(frozen=True, slots=True)
class ServicePause:
    """A global pause of one service (cStat 108/109) for every company."""

    product: Product
    environment: Environment
    paused_until: datetime
    reason: str
    cstat: str | None
