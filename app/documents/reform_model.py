"""The reform's values of one document (IBS, CBS, IS, in centavos): plain frozen dataclasses.

Read by ``app.documents.reform``; kept apart so ``app.documents.model`` can name them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class ReformItem(NamedTuple):
    """One NF-e item's IBS/CBS (``det/imposto/IBSCBS``) and IS (``det/imposto/IS``): a tuple, as
    cheap to build as the row the store inserts from it (an NF-e may carry 990 of them)."""

    number: int  # det/@nItem
    cst: str | None
    class_code: str | None  # cClassTrib
    base_cents: int | None = None  # gIBSCBS/vBC
    ibs_uf_cents: int | None = None
    ibs_mun_cents: int | None = None
    ibs_cents: int | None = None
    cbs_cents: int | None = None
    is_cents: int | None = None


@dataclass(frozen=True, slots=True)
class ReformValues:
    """A document's reform totals (centavos); ``unreadable`` when some value could not be read."""

    base_cents: int | None = None  # vBCIBSCBS (NF-e), gIBSCBS/vBC (CT-e), vBC (NFS-e)
    ibs_uf_cents: int | None = None
    ibs_mun_cents: int | None = None
    ibs_cents: int | None = None
    cbs_cents: int | None = None
    ibs_presumed_cents: int | None = None  # gIBS/vCredPres
    ibs_presumed_suspended_cents: int | None = None  # gIBS/vCredPresCondSus
    cbs_presumed_cents: int | None = None  # gCBS/vCredPres
    cbs_presumed_suspended_cents: int | None = None  # gCBS/vCredPresCondSus
    is_cents: int | None = None  # ISTot/vIS
    total_cents: int | None = None  # vNFTot (NF-e), vTotDFe (CT-e), vTotNF (NFS-e)
    unreadable: bool = False
    items: tuple[ReformItem, ...] = ()
