"""A user's "buscar pela chave", for every product: one entry point for the command line and the window.

A 44-character NF-e key goes to NF-e's point query (the database first, then ``consChNFe`` within
the point-query quota of rule book §4.6, saying when it can run when there is no slot); a
50-character key to the NFS-e capture by key (the database first, then the Sefin Nacional, §6.6).
CT-e has no query by key. ``queued`` asks for the query to be left to the capture service that
runs elsewhere (on the same data folder, or the office's capture node): it dispatches it within
the quota.
"""

from __future__ import annotations

import re

from app.capture.context import CaptureContext
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.lookup import ReprocessResult
from app.capture.nfe.recovery import NfePointQueries
from app.capture.nfse.fetch import NfseFetch
from app.core.errors import InvalidIdentifier
from app.core.keys import AccessKey
from app.core.products import Product

_PREFIXES = ("NFE", "NFS")


def key_product(text: str) -> tuple[Product, str]:
    """The product a key belongs to and the key itself; raises ``InvalidIdentifier`` in Portuguese."""
    plain = re.sub(r"\s", "", text).upper()
    for prefix in _PREFIXES:
        if plain.startswith(prefix) and len(plain) in (47, 53):
            plain = plain[len(prefix) :]
    if len(plain) == 50:
        return Product.NFSE, plain
    if len(plain) == 44:
        model = AccessKey.parse(plain).model
        if model != "55":
            raise InvalidIdentifier(
                f"A busca pela chave existe para NF-e (modelo 55) e NFS-e; esta chave é do modelo {model}."
            )
        return Product.NFE, plain
    raise InvalidIdentifier(f"Chave de acesso inválida: {text!r} (NF-e: 44 caracteres; NFS-e: 50).")


def fetch_by_key(
    ctx: CaptureContext, company_id: int, key: str, *, locks: CompanyLocks | None = None, queued: bool = False
) -> ReprocessResult:
    """Answer from the database, or fetch from the service; never raises for a bad key."""
    try:
        product, plain = key_product(key)
    except InvalidIdentifier as error:
        return ReprocessResult("rejected", error.message)
    if product is Product.NFSE:
        fetcher = NfseFetch(ctx)
        return fetcher.queue(company_id, plain) if queued else fetcher.fetch(company_id, plain)
    return NfePointQueries(ctx, locks or CompanyLocks()).reprocess_key(company_id, plain, queue=queued)
