"""DADOS DO PRODUTO / SERVIÇO: the DANFE's item table, measured first, then drawn page by page.

Rows are measured before anything is drawn so the page count ("FOLHA X/Y") is known on the
first page. The description wraps (xProd and infAdProd are never cut); every other cell
shrinks to fit its column on one line.
"""

from __future__ import annotations

from dataclasses import dataclass

from reportlab.lib.units import mm

from app.pdf import danfe_nt2026
from app.pdf import formats as fmt
from app.pdf.danfe_columns import Cell, Column, Pairs, fill_width
from app.pdf.danfe_data import Item, Nfe
from app.pdf.fonts import sanitize
from app.pdf.layout import LEADING, Sheet, wrap

SIZE = 6.0  # points: the table's text
HEAD_H = 6.0  # mm: the column titles
PAD = 0.45  # mm: vertical padding inside a row
LINE = SIZE * LEADING / mm  # mm per line of text
MAX_LINES = 60  # per row: 60 lines is about 150 mm, less than any page's room for rows


def columns(nfe: Nfe, width: float) -> list[Column]:
    """MOC 7.0's columns (NT 2026.010's for NF-e issued from 2026-12-01). Extra width (landscape)
    is shared by the description and the value columns."""
    if nfe.nt_2026_010:
        return danfe_nt2026.columns(nfe, width)
    cst_title = "CSOSN" if nfe.emitter.simples else "O/CST"
    cols = [
        Column("CÓDIGO PRODUTO", 15, "left"),
        Column("DESCRIÇÃO DO PRODUTO / SERVIÇO", 0, "left"),
        Column("NCM/SH", 11.5, "center"),
        Column(cst_title, 7, "center"),
        Column("CFOP", 7, "center"),
        Column("UN", 7, "center"),
        Column("QUANT.", 13, "right"),
        Column("VALOR UNIT.", 14, "right"),
        Column("VALOR TOTAL", 14.5, "right"),
        Column("B.CÁLC. ICMS", 14, "right"),
        Column("VALOR ICMS", 12, "right"),
        Column("VALOR IPI", 11, "right"),
        Column("ALÍQ. ICMS", 7.5, "right"),
        Column("ALÍQ. IPI", 7.5, "right"),
    ]
    return fill_width(cols, width, [c.align == "right" for c in cols])


def cells(item: Item) -> list[str]:
    values = [
        item.code,
        item.description,
        item.ncm,
        item.cst,
        item.cfop,
        item.unit,
        fmt.quantity(item.quantity),
        fmt.quantity(item.unit_value),
        fmt.money(item.total),
        fmt.money(item.icms_base),
        fmt.money(item.icms_value),
        fmt.money(item.ipi_value),
        fmt.decimal(item.icms_rate, 2),
        fmt.decimal(item.ipi_rate, 2),
    ]
    return [sanitize(v, keep_newlines=True) for v in values]


def _clean(value: Cell) -> Cell:
    if isinstance(value, Pairs):
        return Pairs(tuple(tuple((sanitize(a), sanitize(b)) for a, b in line) for line in value.lines))
    return sanitize(value, keep_newlines=True)


def _lines(value: Cell) -> int:
    return len(value.lines) if isinstance(value, Pairs) else value.count("\n") + 1


@dataclass(frozen=True, slots=True)
class Row:
    values: list[Cell]
    description: tuple[str, ...]  # wrapped lines
    code: tuple[str, ...]
    height: float  # mm


def measure(nfe: Nfe, cols: list[Column]) -> list[Row]:
    rows = []
    desc_w = (cols[1].width - 1.4) * mm
    code_w = (cols[0].width - 1.4) * mm
    if nfe.nt_2026_010:
        make = danfe_nt2026.cells
    else:
        make = cells  # type: ignore[assignment]
    for item in nfe.items:
        values: list[Cell] = [_clean(v) for v in make(item)]
        description = _at_most(wrap(str(values[1]), desc_w, SIZE))
        code = _at_most(wrap(str(values[0]), code_w, SIZE))
        lines = max(len(description), len(code), *(_lines(v) for v in values[2:]))
        rows.append(Row(values, description, code, lines * LINE + 2 * PAD))
    return rows


def _at_most(lines: list[str]) -> tuple[str, ...]:
    """A row never taller than a page: beyond what the XSD allows (infAdProd is 500 characters)
    the text is cut, visibly."""
    if len(lines) <= MAX_LINES:
        return tuple(lines)
    return (*lines[: MAX_LINES - 1], lines[MAX_LINES - 1][:-3] + "...")


def draw_head(sheet: Sheet, x: float, y: float, cols: list[Column]) -> float:
    cx = x
    for col in cols:
        sheet.rect(cx, y, col.width, HEAD_H)
        sheet.block(cx + 0.3, y + 0.4, col.width - 0.6, HEAD_H - 0.8, col.title, 5.0, min_size=3.8,
                    align="center", valign="middle")  # fmt: skip
        cx += col.width
    return y + HEAD_H


def draw_rows(sheet: Sheet, x: float, y: float, cols: list[Column], rows: list[Row], bottom: float) -> None:
    """The rows inside one bordered body that reaches ``bottom`` (columns ruled full height)."""
    width = sum(c.width for c in cols)
    sheet.rect(x, y, width, bottom - y)
    cx = x
    for col in cols[:-1]:
        cx += col.width
        sheet.vline(cx, y, bottom - y)
    top = y
    for number, row in enumerate(rows):
        if number:
            sheet.canvas.saveState()
            sheet.canvas.setLineWidth(0.2)
            sheet.canvas.setStrokeGray(0.65)
            sheet.hline(x, top, width)
            sheet.canvas.restoreState()
        cx = x
        for index, col in enumerate(cols):
            inner = col.width - 1.2
            if index in (0, 1):
                lines = row.code if index == 0 else row.description
                for k, line in enumerate(lines):
                    sheet.text(cx + 0.6, top + PAD + LINE * k + SIZE * 0.93 / mm, line, SIZE)
            else:
                _cell(sheet, cx + 0.6, top + PAD, inner, row.values[index], col.align)
            cx += col.width
        top += row.height


def _cell(sheet: Sheet, x: float, y: float, w: float, value: Cell, align: str) -> None:
    """One cell, line by line; a Pairs line is split evenly, each label left and value right."""
    if isinstance(value, Pairs):
        for k, line in enumerate(value.lines):
            gap = 1.2 if len(line) > 1 else 0.0  # between the two values of a line
            part = (w - gap) / len(line)
            for i, (label, shown) in enumerate(line):
                px = x + i * (part + gap)
                sheet.block(px, y + LINE * k, part - 0.4, LINE, label, SIZE - 0.5, min_size=3.5, wrap_lines=False)
                label_w = min(part * 0.45, 4.0 + 1.2 * len(label))
                sheet.block(px + label_w, y + LINE * k, part - label_w - 0.4, LINE, shown, SIZE - 0.5,
                            min_size=3.5, align="right", wrap_lines=False)  # fmt: skip
        return
    for k, text in enumerate(value.split("\n")):
        sheet.block(x, y + LINE * k, w, LINE, text, SIZE, min_size=3.8, align=align, wrap_lines=False)
