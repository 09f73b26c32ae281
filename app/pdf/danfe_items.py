"""DADOS DO PRODUTO / SERVIÇO: the DANFE's item table, measured first, then drawn page by page.

Rows are measured before anything is drawn so the page count ("FOLHA X/Y") is known on the
first page. The description wraps (xProd and infAdProd are never cut); every other cell
shrinks to fit its column on one line.
"""

from __future__ import annotations

from dataclasses import dataclass

from reportlab.lib.units import mm

from app.pdf import formats as fmt
from app.pdf.danfe_data import Item, Nfe
from app.pdf.fonts import sanitize
from app.pdf.layout import LEADING, Sheet, wrap

SIZE = 6.0  # points: the table's text
HEAD_H = 6.0  # mm: the column titles
PAD = 0.7  # mm: vertical padding inside a row
LINE = SIZE * LEADING / mm  # mm per line of text
MAX_LINES = 60  # per row: 60 lines is about 150 mm, less than any page's room for rows


@dataclass(frozen=True, slots=True)
class Column:
    title: str
    width: float  # mm; 0 for the description, which takes what is left
    align: str


def columns(nfe: Nfe, width: float) -> list[Column]:
    """MOC 7.0's columns; NT 2026.010 adds the item's cClassTrib. Extra width (landscape) is
    shared by the description and the value columns."""
    cst_title = "CSOSN" if nfe.emitter.crt in ("1", "4") else "O/CST"
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
    if nfe.nt_2026_010:
        cols.insert(3, Column("CLASS. TRIB.", 10, "center"))
    fixed = sum(c.width for c in cols)
    spare = width - fixed
    if spare > 90:  # landscape: widen the numbers a little, the rest to the description
        extra = (spare - 90) / 3
        cols = [Column(c.title, c.width + extra / 7 if c.align == "right" else c.width, c.align) for c in cols]
        spare = width - sum(c.width for c in cols)
    return [Column(c.title, spare, c.align) if c.width == 0 else c for c in cols]


def cells(item: Item, nt_2026_010: bool) -> list[str]:
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
    if nt_2026_010:
        values.insert(3, item.class_trib)
    return [sanitize(v, keep_newlines=True) for v in values]


@dataclass(frozen=True, slots=True)
class Row:
    values: list[str]
    description: tuple[str, ...]  # wrapped lines
    code: tuple[str, ...]
    height: float  # mm


def measure(nfe: Nfe, cols: list[Column]) -> list[Row]:
    rows = []
    desc_w = (cols[1].width - 1.4) * mm
    code_w = (cols[0].width - 1.4) * mm
    for item in nfe.items:
        values = cells(item, nfe.nt_2026_010)
        description = _at_most(wrap(values[1], desc_w, SIZE))
        code = _at_most(wrap(values[0], code_w, SIZE))
        lines = max(len(description), len(code), 1)
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
                sheet.block(cx + 0.6, top + PAD, inner, LINE, row.values[index], SIZE, min_size=3.8,
                            align=col.align, wrap_lines=False)  # fmt: skip
            cx += col.width
        top += row.height
