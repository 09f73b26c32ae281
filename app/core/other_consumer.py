"""Another system consuming a company's distribution with the same certificate (issue 22).

The Ambiente Nacional keeps ONE NSU sequence per CNPJ, shared by every system that queries it:
what the client's ERP (or another platform) takes by distNSU never comes back by distNSU. The
answer policies (:mod:`app.core.cadence_soap`) notice it (a 656 on a distNSU our cadence allowed,
a lot starting past our cursor) and turn the NSUs it took into gap recoveries; this module says
what that means to the clerk, from the store's tally of those recoveries. NFS-e has no such
problem: the ADN serves any NSU to whoever asks (rule book §6.7), so nothing is taken from us.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from app.core.clock import brasilia_iso, to_brasilia
from app.core.products import Product
from app.core.quota import POINT_QUOTA_PER_HOUR

# The clerk is told while the other system keeps showing up, and while what it took is still
# being fetched: a week after the last sighting with nothing pending, the episode is over.
REMEMBERED = timedelta(days=7)

OTHER_CONSUMER_TEXT = "Outro sistema está consultando"  # how the clerk's sentence begins
WHAT_TO_DO = (
    "Mantenha um só sistema consultando: desligue a consulta de distribuição no outro sistema "
    "(o ERP do cliente ou outra plataforma) e entregue os XML a ele pelas pastas de exportação ou "
    "pela entrega ao ERP deste aplicativo."
)


@dataclass(frozen=True, slots=True)
class OtherConsumerSummary:
    """One company and product: since when another system consumes it and where the NSUs it took are.

    ``skipped``: NSUs it took that we never received by distNSU; ``recovered``/``pending``: their
    gap recoveries (consNSU); ``out_of_reach``: those the service no longer serves (past the
    per-jump limit, or consNSU answered 137: out of its 3-month window) or given up.
    """

    company_id: int
    product: Product
    since: datetime
    last_seen: datetime
    sightings: int
    skipped: int
    recovered: int
    pending: int
    out_of_reach: int

    def active(self, now: datetime) -> bool:
        """Still worth telling: seen within a week, or NSUs it took still being fetched."""
        return self.pending > 0 or now - self.last_seen <= REMEMBERED

    def text(self) -> str:
        """The clerk's sentence (company state, Painel, notification)."""
        since = to_brasilia(self.since).strftime("%d/%m %H:%M")
        documents = "documento recuperado" if self.recovered == 1 else "documentos recuperados"
        pending = "pendente" if self.pending == 1 else "pendentes"
        line = (
            f"{OTHER_CONSUMER_TEXT} as {self.product.label} desta empresa com o mesmo certificado "
            f"(desde {since}): {self.recovered} {documents}, {self.pending} {pending} "
            f"(até {POINT_QUOTA_PER_HOUR} por hora)"
        )
        if self.out_of_reach:
            line += (
                f"; {self.out_of_reach} fora do alcance (o serviço não os entrega mais: mais antigos que a "
                "janela de 3 meses ou além do limite de recuperação)"
            )
        return f"{line}. {WHAT_TO_DO}"

    def to_json(self) -> dict[str, Any]:
        return {
            "since": brasilia_iso(self.since),
            "last_seen": brasilia_iso(self.last_seen),
            "sightings": self.sightings,
            "skipped": self.skipped,
            "recovered": self.recovered,
            "pending": self.pending,
            "out_of_reach": self.out_of_reach,
            "message": self.text(),
        }
