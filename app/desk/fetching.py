"""The one "buscar pela chave" of every front end: which company asks, then the fetch itself.

The key names its issuer (an NF-e key holds the emitter's CNPJ or CPF, an NFS-e key the
prestador's). The company that asks is, in this order: the one that already holds the key; for an
NFS-e, the office's company that issued it; the one company left that captures the product (an
NF-e's emitter never asks: the Ambiente Nacional answers it cStat 641, protocol.md §2). Otherwise a
person chooses: :class:`CompanyChoiceNeeded` lists the candidates (the command line asks for
``--company``, the window offers a chooser).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from app.core.errors import InvalidIdentifier
from app.core.keys import AccessKey, NfseKey
from app.core.products import Product
from app.desk.errors import DeskError
from app.desk.views import GridRow
from app.store.records import Company

if TYPE_CHECKING:
    from app.capture.context import CaptureContext
    from app.capture.engine.locks import CompanyLocks
    from app.desk.sending import Sender  # the window imports this module at start: no capture stack


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
    issuing = [c for c in active if c.cnpj.value == issuer]
    if product is Product.NFSE and len(issuing) == 1:  # the prestador reads its own NFS-e
        return issuing[0].id
    if product is Product.NFE:  # never the NF-e's emitter (cStat 641)
        active = [c for c in active if c not in issuing]
    able = [c for c in active if c.id in set(capturing)]
    if len(able) == 1:
        return able[0].id
    if len(active) == 1:
        return active[0].id
    if not active:
        if issuing:
            raise DeskError(
                f"A NF-e {key} foi emitida por {issuing[0].cnpj.formatted()}: o Ambiente Nacional não a entrega "
                "ao emitente (cStat 641). Consulte-a como destinatária."
            )
        raise DeskError("Nenhuma empresa cadastrada: cadastre a empresa que consulta antes de buscar pela chave.")
    candidates = [c for c in active if c.id in held] or able or active
    raise CompanyChoiceNeeded(key, tuple(CompanyChoice(c.id, c.cnpj.value, c.name) for c in candidates))


def product_of(key: str) -> Product:
    """The product a key belongs to (NF-e 44 characters, NFS-e 50); raises with the reason."""
    from app.capture.by_key import key_product

    return key_product(key)[0]


def fetch(
    ctx: CaptureContext,
    sender: Sender,
    locks: CompanyLocks | None,
    find_key: Callable[[str, tuple[int, ...]], list[GridRow]],
    key: str,
    company_id: int | None = None,
) -> FetchOutcome:
    """The fetch by key as the company given or the one the key names; sent now when the desk may
    (``locks``: its running engine's), otherwise the capture service running here queries."""
    from app.capture.by_key import fetch_by_key, key_product

    product, plain = key_product(key)  # raises with the reason for a bad key
    if company_id is None:
        holders = {r.company_id for r in find_key(plain, ()) if r.product is product and not r.is_event_row}
        capturing = [c.id for c, _settings in ctx.companies.enabled_for(product)]
        company_id = asking_company(plain, product, ctx.companies.list_companies(), holders, capturing)
    asking = company_id
    sent = sender.now_or_leave(lambda: fetch_by_key(ctx, asking, plain, locks=locks), "buscando pela chave")
    # Left to the sender elsewhere: queued in the database, one row per key (asked twice, one query).
    result = sent.value if sent.value is not None else fetch_by_key(ctx, asking, plain, queued=True)
    found = [r for r in find_key(plain, (asking,)) if r.product is product and not r.is_event_row]
    row = found[0] if found and result.status in ("local", "fetched") else None
    return FetchOutcome(product, plain, asking, result.status, result.message, result.available_at, row, not sent.here)
