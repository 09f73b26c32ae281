"""The DANFE of NT 2026.010 (NF-e issued from 2026-12-01): its totals and its item table.

The totals split into three blocks (products and note, ICMS / IPI, IBS / CBS / IS); the item
table groups the taxes of each item in three cells (bases, rates, values) where every tax is
named, the NCM and the cClassTrib go under the description, and, as the NT asks, nothing the
XML does not carry is printed (no invented zeros).
"""

from __future__ import annotations

from itertools import zip_longest

from app.pdf import formats as fmt
from app.pdf.danfe_columns import Column, Pairs, fill_width
from app.pdf.danfe_data import Item, Nfe
from app.pdf.layout import Sheet

ROW = 7.0
GAP = 1.0
CAPTION = 3.2


def columns(nfe: Nfe, width: float) -> list[Column]:
    cst_title = "CSOSN / CFOP" if nfe.emitter.simples else "CST / CFOP"
    cols = [
        Column("CÓDIGO", 13, "left"),
        Column("DESCRIÇÃO DO PRODUTO / SERVIÇO", 0, "left"),
        Column(cst_title, 13, "left"),
        Column("QTD / UN", 13, "right"),
        Column("VLR UNIT", 14, "right"),
        Column("VLR TOTAL", 15, "right"),
        Column("BASES DE CÁLCULO", 25, "right"),
        Column("ALÍQUOTAS", 29, "right"),
        Column("VALOR DOS TRIBUTOS", 33, "right"),
    ]
    return fill_width(cols, width, [i >= 6 for i in range(len(cols))])  # landscape: the tax cells grow


def _rate(value: str) -> str:
    return f"{fmt.decimal(value, 2)}%" if value else ""


def _stacked(left: list[tuple[str, str]], right: list[tuple[str, str]]) -> Pairs:
    """Two columns of (label, value), each compacted upwards, read line by line."""
    lines = []
    for a, b in zip_longest([p for p in left if p[1]], [p for p in right if p[1]]):
        lines.append(tuple(p for p in (a, b) if p is not None) if b is not None else ((a or ("", "")),))
    return Pairs(tuple(lines))


def cells(item: Item) -> list[str | Pairs]:
    r = item.reform
    under = " ".join(p for p in (f"[NCM {item.ncm}]" if item.ncm else "", f"[cClassTrib {item.class_trib}]"
                                 if item.class_trib else "") if p)  # fmt: skip
    description = f"{item.description}\n{under}" if under else item.description
    cst_label = "CSOSN" if len(item.cst) == 4 else "CST"
    bases = [("ICMS", fmt.money(item.icms_base, blank="")), ("IBS / CBS", fmt.money(r.get("vBC"), blank="")),
             ("IS", fmt.money(r.get("vBCIS"), blank=""))]  # fmt: skip
    rates = _stacked(
        [("ICMS", _rate(item.icms_rate)), ("IBS UF", _rate(r.get("pIBSUF", ""))),
         ("IBS MUN", _rate(r.get("pIBSMun", "")))],
        [("CBS", _rate(r.get("pCBS", ""))), ("IPI", _rate(item.ipi_rate)), ("IS", _rate(r.get("pIS", "")))],
    )  # fmt: skip
    values = _stacked(
        [("ICMS", fmt.money(item.icms_value, blank="")), ("IBS UF", fmt.money(r.get("vIBSUF"), blank="")),
         ("IBS MUN", fmt.money(r.get("vIBSMun"), blank=""))],
        [("CBS", fmt.money(r.get("vCBS"), blank="")), ("IPI", fmt.money(item.ipi_value, blank="")),
         ("IS", fmt.money(r.get("vIS"), blank=""))],
    )  # fmt: skip
    return [
        item.code,
        description,
        "\n".join(p for p in (f"{cst_label} {item.cst}" if item.cst else "", f"CFOP {item.cfop}") if p),
        f"{fmt.quantity(item.quantity)}\n{item.unit}",
        fmt.quantity(item.unit_value),
        fmt.money(item.total),
        Pairs(tuple(((label, value),) for label, value in bases if value)),
        rates,
        values,
    ]


def _block(sheet: Sheet, x: float, y: float, w: float, title: str, lines: list[list[tuple[str, str]]]) -> float:
    if not lines:
        return y
    sheet.section(x, y, title)
    y += CAPTION
    for line in lines:
        cw = w / len(line)
        for i, (label, value) in enumerate(line):
            sheet.field(x + i * cw, y, cw, ROW, label, value, align="right", min_size=5.5)
        y += ROW
    return y + GAP


def totals(sheet: Sheet, x: float, y: float, w: float, nfe: Nfe) -> float:
    """The three total blocks; a tag the XML lacks is not printed (NT 2026.010 item 4.4)."""
    t, ib = nfe.totals, nfe.ibscbs

    def money(values: dict[str, str], tag: str) -> str:
        return fmt.money(values.get(tag), blank="")

    second = [("Valor aprox. tributos", money(t, "vTotTrib"))] if t.get("vTotTrib") else []
    if t.get("vPIS") or t.get("vCOFINS"):
        second += [("Valor do PIS", money(t, "vPIS")), ("Valor da COFINS", money(t, "vCOFINS"))]
    second.append(("Valor total da nota", money(t, "vNF")))
    y = _block(sheet, x, y, w, "Total dos produtos e total da nota", [
        [("Valor total dos produtos", money(t, "vProd")), ("Valor do frete", money(t, "vFrete")),
         ("Valor do seguro", money(t, "vSeg")), ("Desconto", money(t, "vDesc")),
         ("Outras despesas acessórias", money(t, "vOutro"))],
        second,
    ])  # fmt: skip
    icms = [[("Base de cálculo do ICMS", money(t, "vBC")), ("Valor do ICMS", money(t, "vICMS")),
             ("Base de cálculo do ICMS ST", money(t, "vBCST")), ("Valor do ICMS ST", money(t, "vST")),
             ("Valor do IPI", money(t, "vIPI"))]]  # fmt: skip
    extra = [(label, money(t, tag)) for label, tag in (
        ("Valor do FCP", "vFCP"), ("Valor do FCP retido por ST", "vFCPST"),
        ("Valor do DIFAL na UF de destino", "vICMSUFDest"), ("Valor do FCP na UF de destino", "vFCPUFDest"),
    ) if _nonzero(t.get(tag))]  # fmt: skip
    if extra:
        icms.append(extra)
    y = _block(sheet, x, y, w, "Total do ICMS / IPI", icms)
    if ib:
        reform = [[("Valor da CBS", money(ib, "vCBS")), ("Valor do IBS UF", money(ib, "vIBSUF")),
                   ("Valor do IBS município", money(ib, "vIBSMun")), ("Valor do imposto seletivo", money(ib, "vIS")),
                   ("Valor total da NF-e", money(ib, "vNFTot"))]]  # fmt: skip
        if "vIBSMono" in ib or "vCBSMono" in ib:
            reform.append([("Valor do IBS monofásico", money(ib, "vIBSMono")),
                           ("Valor da CBS monofásica", money(ib, "vCBSMono"))])  # fmt: skip
        y = _block(sheet, x, y, w, "Total do IBS / CBS / IS", reform)
    return y


def _nonzero(value: str | None) -> bool:
    return value is not None and value.strip("0.") != ""
