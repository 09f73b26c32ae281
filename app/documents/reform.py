"""The consumption-tax reform's IBS, CBS and IS values of one document, in centavos.

NF-e (NT 2025.002-RTC): ``total/IBSCBSTot`` (base, ``gIBS`` with ``gIBSUF``/``gIBSMun``, ``gCBS``,
presumed credits ``vCredPres``/``vCredPresCondSus``), ``total/ISTot/vIS`` and ``vNFTot``; per item
``det/imposto/IBSCBS`` (``CST``, ``cClassTrib``, ``gIBSCBS``) and ``det/imposto/IS/vIS``.
CT-e (NT 2025.001-RTC): ``imp/IBSCBS`` (the same ``gIBSCBS`` as an NF-e item) and ``imp/vTotDFe``.
NFS-e Nacional: already read by ``app.documents.nfse`` (``NfseIbsCbs``): :func:`from_nfse` maps it.

A document without the groups has no :class:`ReformValues` (None: not zero). A value whose text is
not a plain decimal makes ``unreadable`` True and stays None: it is never counted as zero.

The hot path (issue 23: an NF-e of 20 items carries 20 groups): each container's children are
read once into a dictionary by tag (the first of a repeated tag wins, as XPath's first node), one
pass with ``getnext``, never an ElementPath ``find`` (whose path parsing cost 10 µs a look-up);
each item is a ``ReformItem`` tuple.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Any, cast

from lxml import etree

from app.documents.nfse_model import NfseIbsCbs
from app.documents.reform_model import ReformItem, ReformValues
from app.documents.values import to_cents, to_int

Kids = dict[Any, etree._Element]
_NONE: Kids = {}


def _kids(element: etree._Element | None) -> Kids:
    """The children of ``element`` by tag, the first of each (comments are keyed by their own tag)."""
    if element is None or not len(element):
        return _NONE
    found: Kids = {}
    child = element[0]
    while child is not None:
        tag = child.tag
        if tag not in found:
            found[tag] = child
        child = child.getnext()
    return found


class _Tags:
    """The namespace-qualified tags of one layout's reform groups, built once per namespace."""

    def __init__(self, namespace: str) -> None:
        p = f"{{{namespace}}}"
        self.prefix = p
        self.det, self.imposto, self.group, self.selective = p + "det", p + "imposto", p + "IBSCBS", p + "IS"
        self.cst, self.class_code, self.values = p + "CST", p + "cClassTrib", p + "gIBSCBS"
        self.base, self.ibs, self.cbs = p + "vBC", p + "vIBS", p + "gCBS"
        self.ibs_uf, self.ibs_mun = p + "gIBSUF", p + "gIBSMun"
        self.v_ibs_uf, self.v_ibs_mun, self.v_cbs, self.v_is = p + "vIBSUF", p + "vIBSMun", p + "vCBS", p + "vIS"


@lru_cache(maxsize=8)
def _tags(namespace: str) -> _Tags:
    return _Tags(namespace)


def _text(kids: Kids, tag: str) -> str | None:
    """The element's own text, stripped; None when absent or blank."""
    found = kids.get(tag)
    if found is None:
        return None
    text = found.text
    if text is None:
        return None
    return text.strip() or None


class _Reader:
    """Look-ups in one namespace that remember whether any value was unreadable."""

    __slots__ = ("bad", "t", "warnings")

    def __init__(self, namespace: str, warnings: list[str]) -> None:
        self.t = _tags(namespace)
        self.warnings = warnings
        self.bad = False

    def kids(self, kids: Kids, local: str) -> Kids:
        return _kids(kids.get(self.t.prefix + local))

    def cents(self, kids: Kids, tag: str) -> int | None:
        text = _text(kids, tag)
        if text is None:
            return None
        value = to_cents(text)
        if value is None:
            self.bad = True
            local = tag.rpartition("}")[2]
            self.warnings.append(f"Valor da reforma tributária ilegível em {local}: {text!r}.")
        return value

    def leaf(self, kids: Kids, group: str, tag: str) -> int | None:
        """``group/tag`` of ``kids`` in centavos."""
        return self.cents(_kids(kids.get(group)), tag)

    def group(self, values: Kids) -> tuple[int | None, int | None, int | None, int | None, int | None]:
        """``gIBSCBS`` (its children): vBC, vIBSUF, vIBSMun, vIBS, vCBS."""
        t = self.t
        return (
            self.cents(values, t.base),
            self.leaf(values, t.ibs_uf, t.v_ibs_uf),
            self.leaf(values, t.ibs_mun, t.v_ibs_mun),
            self.cents(values, t.ibs),
            self.leaf(values, t.cbs, t.v_cbs),
        )

    def item(self, number: int, group: Kids, selective: Kids) -> ReformItem:
        t = self.t
        return ReformItem(
            number, _text(group, t.cst), _text(group, t.class_code), *self.group(_kids(group.get(t.values))),
            self.cents(selective, t.v_is),
        )  # fmt: skip


def read_nfe_reform(
    inf: etree._Element, total: etree._Element | None, namespace: str, warnings: list[str]
) -> ReformValues | None:
    """The NF-e's reform values (``inf`` is ``infNFe``, ``total`` its ``total``); None when the
    document carries neither ``IBSCBSTot`` nor ``ISTot`` (a pre-reform or Simples document).
    Items are read only then: the hot path of an older NF-e pays two look-ups."""
    r = _Reader(namespace, warnings)
    totals = _kids(total)
    tot = r.kids(totals, "IBSCBSTot")
    selective = r.kids(totals, "ISTot")
    if r.t.prefix + "IBSCBSTot" not in totals and r.t.prefix + "ISTot" not in totals:
        return None
    ibs, cbs = r.kids(tot, "gIBS"), r.kids(tot, "gCBS")
    p = r.t.prefix
    values = ReformValues(
        base_cents=r.cents(tot, p + "vBCIBSCBS"),
        ibs_uf_cents=r.leaf(ibs, p + "gIBSUF", p + "vIBSUF"),
        ibs_mun_cents=r.leaf(ibs, p + "gIBSMun", p + "vIBSMun"),
        ibs_cents=r.cents(ibs, p + "vIBS"),
        cbs_cents=r.cents(cbs, p + "vCBS"),
        ibs_presumed_cents=r.cents(ibs, p + "vCredPres"),
        ibs_presumed_suspended_cents=r.cents(ibs, p + "vCredPresCondSus"),
        cbs_presumed_cents=r.cents(cbs, p + "vCredPres"),
        cbs_presumed_suspended_cents=r.cents(cbs, p + "vCredPresCondSus"),
        is_cents=r.cents(selective, p + "vIS"),
        total_cents=r.cents(totals, p + "vNFTot"),
        items=_items(inf, r),
    )
    return _flagged(values, r.bad)


def _items(inf: etree._Element, r: _Reader) -> tuple[ReformItem, ...]:
    """Each ``det`` with ``imposto/IBSCBS`` or ``imposto/IS``, in document order."""
    t = r.t
    fast = _common_items(inf, t)
    if fast is not None:
        return fast
    items: list[ReformItem] = []
    for det in inf.iterchildren(t.det):
        number = to_int(det.get("nItem") or "") or len(items) + 1
        item = _positional(det, number, r)
        if item is None:
            tax = _kids(det).get(t.imposto)
            taxes = _kids(tax)
            group, selective = taxes.get(t.group), taxes.get(t.selective)
            if group is None and selective is None:
                continue
            item = r.item(number, _kids(group), _kids(selective))
        items.append(item)
    return tuple(items)


def _common_items(inf: etree._Element, t: _Tags) -> tuple[ReformItem, ...] | None:
    """Every item of the common shape (``_positional``'s) with every amount in the layouts' own
    form ("3290.20"), read in one pass with no side effect; None when any item is otherwise, and
    the items are then read one by one (the same values, and the warnings). The amounts are
    checked and converted once for the document, not one ``to_cents`` each (issue 23: five to
    six an item, a third of the reading's time)."""
    numbers: list[str | None] = []
    codes: list[str | None] = []  # CST and cClassTrib of each item
    texts: list[str | None] = []  # the five amounts of each item
    selective: dict[int, str] = {}  # IS/vIS by item position, for the items that pay it
    imposto, group_tag, cst_tag, class_tag, values_tag = t.imposto, t.group, t.cst, t.class_code, t.values
    base_tag, uf_tag, mun_tag, ibs_tag, cbs_tag = t.base, t.ibs_uf, t.ibs_mun, t.ibs, t.cbs
    v_uf_tag, v_mun_tag, v_cbs_tag, selective_tag = t.v_ibs_uf, t.v_ibs_mun, t.v_cbs, t.selective
    for index, det in enumerate(inf.iterchildren(t.det)):
        try:
            tax = det[1]
            group = tax[-1]
            if tax.tag != imposto or group.tag != group_tag:
                return None
            cst, class_code, values = group[0], group[1], group[2]
            if cst.tag != cst_tag or class_code.tag != class_tag or values.tag != values_tag:
                return None
            base, ibs_uf, ibs_mun, ibs, cbs = values[0], values[1], values[2], values[3], values[4]
            v_uf, v_mun, v_cbs = ibs_uf[-1], ibs_mun[-1], cbs[-1]
        except IndexError:
            return None
        if (
            base.tag != base_tag or ibs_uf.tag != uf_tag or ibs_mun.tag != mun_tag or ibs.tag != ibs_tag
            or cbs.tag != cbs_tag or v_uf.tag != v_uf_tag or v_mun.tag != v_mun_tag or v_cbs.tag != v_cbs_tag
        ):  # fmt: skip
            return None
        before = group.getprevious()
        if before is not None and before.tag == selective_tag:
            text = _text(_kids(before), t.v_is)
            if text is not None:
                selective[index] = text
        numbers.append(det.get("nItem"))
        codes += (cst.text, class_code.text)
        texts += (base.text, v_uf.text, v_mun.text, ibs.text, v_cbs.text)
    count = len(texts)
    if selective:
        texts += selective.values()
    cents = _plain_cents(texts)
    if cents is None:
        return None
    found_is = dict(zip(selective, cents[count:], strict=True))
    items = []
    new = tuple.__new__  # ReformItem's own __new__ is a Python function: one frame an item less
    for index, n_item in enumerate(numbers):
        at, code = 5 * index, 2 * index
        cst_text, class_text = codes[code], codes[code + 1]
        number = to_int(n_item) if n_item is not None else None
        items.append(
            new(ReformItem, (
                number or index + 1, (cst_text or "").strip() or None, (class_text or "").strip() or None,
                cents[at], cents[at + 1], cents[at + 2], cents[at + 3], cents[at + 4], found_is.get(index),
            ))
        )  # fmt: skip
    return tuple(items)


# The layouts' own amount form, one a line: what ``to_cents`` reads without its regular expression.
_PLAIN_AMOUNTS = re.compile(r"(?:[0-9]{1,15}\.[0-9]{2}\n)*[0-9]{1,15}\.[0-9]{2}")


def _plain_cents(texts: list[str | None]) -> list[int] | None:
    """Each text's centavos when all are the plain "3290.20" form (``to_cents``'s own reading of
    it), else None. A text holding a line break fails: the lines outnumber the texts."""
    if not texts:
        return []
    try:
        joined = "\n".join(cast(list[str], texts))
    except TypeError:  # an empty element's text (None)
        return None
    if _PLAIN_AMOUNTS.fullmatch(joined) is None:
        return None
    cents = list(map(int, joined.replace(".", "").split("\n")))
    return cents if len(cents) == len(texts) else None


def _positional(det: etree._Element, number: int, r: _Reader) -> ReformItem | None:
    """The common item shape read by position, each tag checked (NT 2025.002's order: ``imposto``
    after ``prod``, ``IBSCBS`` last in it with ``IS`` just before, then ``CST``, ``cClassTrib``,
    ``gIBSCBS`` with ``vBC, gIBSUF, gIBSMun, vIBS, gCBS``, each group's value last in it): a
    third of the elements a walk of every child creates. None for any other shape or an
    unreadable value, which the general reading takes (and warns of)."""
    t = r.t
    try:
        tax = det[1]
        group = tax[-1]
        if tax.tag != t.imposto or group.tag != t.group:
            return None
        cst, class_code, values = group[0], group[1], group[2]
        if cst.tag != t.cst or class_code.tag != t.class_code or values.tag != t.values:
            return None
        base, ibs_uf, ibs_mun, ibs, cbs = values[0], values[1], values[2], values[3], values[4]
        if base.tag != t.base or ibs_uf.tag != t.ibs_uf or ibs_mun.tag != t.ibs_mun or ibs.tag != t.ibs:
            return None
        v_uf, v_mun, v_cbs = ibs_uf[-1], ibs_mun[-1], cbs[-1]
    except IndexError:
        return None
    if cbs.tag != t.cbs or v_uf.tag != t.v_ibs_uf or v_mun.tag != t.v_ibs_mun or v_cbs.tag != t.v_cbs:
        return None
    cents = [to_cents(element.text or "") for element in (base, v_uf, v_mun, ibs, v_cbs)]
    if None in cents:
        return None
    before = group.getprevious()
    selective = _kids(before) if before is not None and before.tag == t.selective else _NONE
    return ReformItem(
        number, (cst.text or "").strip() or None, (class_code.text or "").strip() or None,
        cents[0], cents[1], cents[2], cents[3], cents[4], r.cents(selective, t.v_is),
    )  # fmt: skip


def read_cte_reform(inf: etree._Element, namespace: str, warnings: list[str]) -> ReformValues | None:
    """The CT-e's ``imp/IBSCBS`` (``inf`` is ``infCte``); None without it."""
    r = _Reader(namespace, warnings)
    imp = r.kids(_kids(inf), "imp")
    group_element = imp.get(r.t.group)
    if group_element is None:
        return None
    item = r.item(1, _kids(group_element), _NONE)
    values = ReformValues(
        base_cents=item.base_cents,
        ibs_uf_cents=item.ibs_uf_cents,
        ibs_mun_cents=item.ibs_mun_cents,
        ibs_cents=item.ibs_cents,
        cbs_cents=item.cbs_cents,
        total_cents=r.cents(imp, r.t.prefix + "vTotDFe"),
        items=(item,),
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
