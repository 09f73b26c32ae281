"""The consumption-tax reform's IBS, CBS and IS values of one document, in centavos.

NF-e (NT 2025.002-RTC): ``total/IBSCBSTot`` (base, ``gIBS`` with ``gIBSUF``/``gIBSMun``, ``gCBS``,
presumed credits ``vCredPres``/``vCredPresCondSus``), ``total/ISTot/vIS`` and ``vNFTot``; per item
``det/imposto/IBSCBS`` (``CST``, ``cClassTrib``, ``gIBSCBS``) and ``det/imposto/IS/vIS``.
CT-e (NT 2025.001-RTC): ``imp/IBSCBS`` (the same ``gIBSCBS`` as an NF-e item) and ``imp/vTotDFe``.
NFS-e Nacional: already read by ``app.documents.nfse`` (``NfseIbsCbs``): :func:`from_nfse` maps it.

A document without the groups has no :class:`ReformValues` (None: not zero). A value whose text is
not a plain decimal makes ``unreadable`` True and stays None: it is never counted as zero.
"""

from __future__ import annotations

from dataclasses import replace

from lxml import etree

from app.documents.nfse_model import NfseIbsCbs
from app.documents.reform_model import ReformItem, ReformValues
from app.documents.values import to_cents, to_int


class _Reader:
    """Look-ups in one namespace that remember whether any value was unreadable."""

    __slots__ = ("bad", "prefix", "warnings")

    def __init__(self, namespace: str, warnings: list[str]) -> None:
        self.prefix = f"{{{namespace}}}"
        self.warnings = warnings
        self.bad = False

    def find(self, element: etree._Element | None, *path: str) -> etree._Element | None:
        for local in path:
            if element is None:
                return None
            element = element.find(self.prefix + local)
        return element

    def text(self, element: etree._Element | None, *path: str) -> str | None:
        found = self.find(element, *path)
        if found is None or found.text is None:
            return None
        return found.text.strip() or None

    def cents(self, element: etree._Element | None, *path: str) -> int | None:
        text = self.text(element, *path)
        if text is None:
            return None
        value = to_cents(text)
        if value is None:
            self.bad = True
            self.warnings.append(f"Valor da reforma tributária ilegível em {'/'.join(path)}: {text!r}.")
        return value

    def group(self, element: etree._Element | None) -> tuple[int | None, ...]:
        """``gIBSCBS``: vBC, vIBSUF, vIBSMun, vIBS, vCBS."""
        return (
            self.cents(element, "vBC"),
            self.cents(element, "gIBSUF", "vIBSUF"),
            self.cents(element, "gIBSMun", "vIBSMun"),
            self.cents(element, "vIBS"),
            self.cents(element, "gCBS", "vCBS"),
        )


def read_nfe_reform(
    inf: etree._Element, total: etree._Element | None, namespace: str, warnings: list[str]
) -> ReformValues | None:
    """The NF-e's reform values (``inf`` is ``infNFe``, ``total`` its ``total``); None when the
    document carries neither ``IBSCBSTot`` nor ``ISTot`` (a pre-reform or Simples document).
    Items are read only then: the hot path of an older NF-e pays two look-ups."""
    r = _Reader(namespace, warnings)
    tot = r.find(total, "IBSCBSTot")
    selective = r.find(total, "ISTot")
    if tot is None and selective is None:
        return None
    ibs, cbs = r.find(tot, "gIBS"), r.find(tot, "gCBS")
    items: list[ReformItem] = []
    for det in inf.iterfind(r.prefix + "det"):
        tax = r.find(det, "imposto")
        group = r.find(tax, "IBSCBS")
        selective_item = r.find(tax, "IS")
        if group is None and selective_item is None:
            continue
        base, ibs_uf, ibs_mun, ibs_item, cbs_item = r.group(r.find(group, "gIBSCBS"))
        items.append(
            ReformItem(
                number=to_int(det.get("nItem") or "") or len(items) + 1,
                cst=r.text(group, "CST"),
                class_code=r.text(group, "cClassTrib"),
                base_cents=base,
                ibs_uf_cents=ibs_uf,
                ibs_mun_cents=ibs_mun,
                ibs_cents=ibs_item,
                cbs_cents=cbs_item,
                is_cents=r.cents(selective_item, "vIS"),
            )
        )
    values = ReformValues(
        base_cents=r.cents(tot, "vBCIBSCBS"),
        ibs_uf_cents=r.cents(ibs, "gIBSUF", "vIBSUF"),
        ibs_mun_cents=r.cents(ibs, "gIBSMun", "vIBSMun"),
        ibs_cents=r.cents(ibs, "vIBS"),
        cbs_cents=r.cents(cbs, "vCBS"),
        ibs_presumed_cents=r.cents(ibs, "vCredPres"),
        ibs_presumed_suspended_cents=r.cents(ibs, "vCredPresCondSus"),
        cbs_presumed_cents=r.cents(cbs, "vCredPres"),
        cbs_presumed_suspended_cents=r.cents(cbs, "vCredPresCondSus"),
        is_cents=r.cents(selective, "vIS"),
        total_cents=r.cents(total, "vNFTot"),
        items=tuple(items),
    )
    return _flagged(values, r.bad)


def read_cte_reform(inf: etree._Element, namespace: str, warnings: list[str]) -> ReformValues | None:
    """The CT-e's ``imp/IBSCBS`` (``inf`` is ``infCte``); None without it."""
    r = _Reader(namespace, warnings)
    imp = r.find(inf, "imp")
    group = r.find(imp, "IBSCBS")
    if group is None:
        return None
    base, ibs_uf, ibs_mun, ibs, cbs = r.group(r.find(group, "gIBSCBS"))
    values = ReformValues(
        base_cents=base,
        ibs_uf_cents=ibs_uf,
        ibs_mun_cents=ibs_mun,
        ibs_cents=ibs,
        cbs_cents=cbs,
        total_cents=r.cents(imp, "vTotDFe"),
        items=(ReformItem(1, r.text(group, "CST"), r.text(group, "cClassTrib"), base, ibs_uf, ibs_mun, ibs, cbs),),
    )
    return _flagged(values, r.bad)


def from_nfse(group: NfseIbsCbs | None, unreadable: bool = False) -> ReformValues | None:
    """The NFS-e reader's IBS/CBS group as reform values (one item: its CST and cClassTrib)."""
    if group is None:
        return None
    item = ReformItem(
        1, group.cst, group.class_code, group.base_cents, group.ibs_uf_cents, group.ibs_mun_cents,
        group.ibs_cents, group.cbs_cents,
    )  # fmt: skip
    return ReformValues(
        base_cents=group.base_cents,
        ibs_uf_cents=group.ibs_uf_cents,
        ibs_mun_cents=group.ibs_mun_cents,
        ibs_cents=group.ibs_cents,
        cbs_cents=group.cbs_cents,
        total_cents=group.total_cents,
        unreadable=unreadable,
        items=(item,),
    )


def _flagged(values: ReformValues, bad: bool) -> ReformValues:
    return replace(values, unreadable=True) if bad else values
