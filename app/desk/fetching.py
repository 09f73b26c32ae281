"""The one "buscar pela chave" of every front end: which company asks, then the fetch itself.

The key names its issuer (an NF-e key holds the emitter's CNPJ or CPF, an NFS-e key the
prestador's). The company that asks is, in this order: the one that already holds the key, the
office's company that issued it, the one company that captures the product (or the office's one
company). Otherwise a person chooses: :class:`CompanyChoiceNeeded` lists the candidates (the
command line asks for ``--company``, the window offers a chooser).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from app.core.errors import InvalidIdentifier
from app.core.keys import AccessKey, NfseKey
from app.core.products import Product
from app.desk.errors import DeskError
from app.desk.views import GridRow
from app.store.records import Company


@dataclass(frozen=True, slots=True)
class CompanyChoice:
    company_id: int
    cnpj: str
    name: str

    def text(self) -> str:
        from app.core.ids import Cnpj

        return f"{Cnpj(self.cnpj).formatted()} {self.name}"


class CompanyChoiceNeeded(DeskError):
    """Several of the office's companies could ask for this key: a person chooses one."""

    def __init__(self, key: str, candidates: tuple[CompanyChoice, ...]) -> None:
        listed = "; ".join(c.text() for c in candidates)
        super().__init__(f"Mais de uma empresa do escritório pode consultar a chave {key} ({listed}).")
        self.key = key
        self.candidates = candidates


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    """What a fetch by key came to: ``status`` "local" (already here), "fetched", "deferred" (the
    quota: ``available_at`` says when), "not_found" or "rejected"; ``row`` once the document is here."""

    product: Product
    key: str
    company_id: int
    status: str
    message: str
    available_at: datetime | None = None
    row: GridRow | None = None
    queued_elsewhere: bool = False  # the capture service running elsewhere makes the query

    @property
    def found(self) -> bool:
        return self.status in ("local", "fetched")


def issuer_id(product: Product, key: str) -> str | None:
    """The CNPJ (or CPF) the key names as its issuer, or None when it cannot be read."""
    try:
        return (NfseKey.parse(key) if product is Product.NFSE else AccessKey.parse(key)).issuer().value
    except InvalidIdentifier:
        return None


def asking_company(
    key: str,
    product: Product,
    companies: Iterable[Company],
    holders: Iterable[int],
    capturing: Iterable[int],
) -> int:
    """The company that asks for ``key`` (see the module); raises :class:`CompanyChoiceNeeded`.
    ``holders``: companies that already hold the key; ``capturing``: those capturing ``product``."""
    active = [c for c in companies if c.active] or list(companies)
    held = set(holders)
    if len(held) == 1:
        return held.pop()
    issuer = issuer_id(product, key)
    issuing = [c.id for c in active if c.cnpj.value == issuer]
    if len(issuing) == 1:
        return issuing[0]
    able = [c for c in active if c.id in set(capturing)]
    if len(able) == 1:
        return able[0].id
    if len(active) == 1:
        return active[0].id
    if not active:
        raise DeskError("Nenhuma empresa cadastrada: cadastre a empresa que consulta antes de buscar pela chave.")
    candidates = [c for c in active if c.id in held] or able or active
    raise CompanyChoiceNeeded(key, tuple(CompanyChoice(c.id, c.cnpj.value, c.name) for c in candidates))
