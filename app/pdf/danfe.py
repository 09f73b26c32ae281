"""The DANFE (MOC 7.0 Anexo II; NT 2026.010 for NF-e issued from 2026-12-01), with reportlab.

Portrait, or landscape when ``tpImp`` = 2 (the receipt stub then runs up the left edge). The
first page carries every section; the item table continues on as many pages as needed, each
with the header and "FOLHA X/Y", and additional information that does not fit its box is
continued after the last item. A resNFe gets a one-page summary instead (``danfe_summary``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from lxml import etree
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.units import mm

from app.pdf import danfe_blocks as blocks
from app.pdf import danfe_items as items
from app.pdf.danfe_columns import Column
from app.pdf.danfe_data import N, Nfe, read_nfe
from app.pdf.errors import parsed
from app.pdf.layout import LEADING, TITLE_SIZE, Sheet, new_canvas, wrap

MARGIN = 5.0
STUB_H = 17.0
INFO_SIZE = 6.5
INFO_LINE = INFO_SIZE * LEADING / mm
INFO_TITLE = TITLE_SIZE * LEADING / mm + 1.0
HEADER_H = 33.0 + 2 * blocks.ROW


@dataclass(slots=True)
class Page:
    rows: list[items.Row] = field(default_factory=list)
    info: list[str] = field(default_factory=list)  # continued additional information (pages 2+)


@dataclass(frozen=True, slots=True)
class Geometry:
    page: tuple[float, float]  # points
    x: float  # body left, mm
    w: float  # body width, mm
    top: float
    bottom: float
    info_h: float  # the first page's DADOS ADICIONAIS box
    landscape: bool


def _geometry(nfe: Nfe) -> Geometry:
    if nfe.landscape:
        page = landscape(A4)
        return Geometry(page, MARGIN + STUB_H + 2.5, page[0] / mm - 2 * MARGIN - STUB_H - 2.5, MARGIN,
                        page[1] / mm - MARGIN, 24.0, True)  # fmt: skip
    return Geometry(A4, MARGIN, A4[0] / mm - 2 * MARGIN, MARGIN, A4[1] / mm - MARGIN, 30.0, False)


def render_danfe(xml: bytes, *, events: Sequence[bytes] = ()) -> bytes:
    """The DANFE of an nfeProc (or the summary page of a resNFe) as PDF bytes."""
    return render_danfe_root(parsed(xml, "DANFE"), events=events)


def render_danfe_root(root: etree._Element, *, events: Sequence[bytes] = ()) -> bytes:
    """:func:`render_danfe` of the XML already parsed."""
    if root.tag == N + "resNFe":
        from app.pdf.danfe_summary import render_summary

        return render_summary(root, events)
    return draw_danfe(read_nfe(root, events))


def _first_page_fixed(sheet: Sheet | None, geo: Geometry, nfe: Nfe, pages: int) -> tuple[float, float]:
    """Draw (or only measure, with ``sheet`` None) page 1 above the items; returns the items'
    top and bottom."""
    y = geo.top
    if not geo.landscape:
        if sheet is not None:
            blocks.stub(sheet, geo.x, y, geo.w, STUB_H, nfe)
            sheet.hline(geo.x, y + STUB_H + 1.5, geo.w, dash=True)
        y += STUB_H + 3.0
    probe = sheet if sheet is not None else _Probe.sheet()
    y = blocks.header(probe, geo.x, y, geo.w, nfe, 1, pages) + blocks.GAP
    y = blocks.recipient(probe, geo.x, y, geo.w, nfe)
    y = blocks.places(probe, geo.x, y, geo.w, nfe)
    y = blocks.invoices(probe, geo.x, y, geo.w, nfe)
    y = blocks.taxes(probe, geo.x, y, geo.w, nfe)
    y = blocks.carrier(probe, geo.x, y, geo.w, nfe)
    bottom = geo.bottom - blocks.CAPTION - geo.info_h - blocks.GAP
    if nfe.issqn:
        bottom -= blocks.ISSQN_HEIGHT
    return y, bottom


class _Probe:
    """A throwaway canvas to run the first page's blocks once for their heights."""

    @staticmethod
    def sheet() -> Sheet:
        canvas = new_canvas(io.BytesIO(), A4, "")
        return Sheet(canvas, *A4)


def _paginate(
    nfe: Nfe, geo: Geometry, rows: list[items.Row], info: list[str], first: tuple[float, float]
) -> list[Page]:
    box_lines = max(2, int((geo.info_h - INFO_TITLE - 0.8) / INFO_LINE))
    info_w_lines = box_lines if len(info) <= box_lines else box_lines - 1  # as ``_additional`` shows them
    pages = [Page()]
    room = first[1] - first[0] - blocks.CAPTION - items.HEAD_H
    queue = list(rows)
    while queue and (queue[0].height <= room or not pages[0].rows):
        room -= queue[0].height
        pages[0].rows.append(queue.pop(0))
    rest = info[info_w_lines:]
    if rest:  # continued across the page's full width
        rest = wrap(" ".join(rest), (geo.w - 1.6) * mm, INFO_SIZE)
    later_top = geo.top + HEADER_H + blocks.GAP
    while queue or rest:
        page = Page()
        pages.append(page)
        room = geo.bottom - later_top
        if queue:
            room -= blocks.CAPTION + items.HEAD_H
            while queue and (queue[0].height <= room or not page.rows):
                room -= queue[0].height
                page.rows.append(queue.pop(0))
        if not queue and rest:
            fits = int((room - blocks.CAPTION - INFO_TITLE - blocks.GAP - 1.0) / INFO_LINE)
            if fits >= 3 or not page.rows:
                take = max(fits, 1)
                page.info, rest = rest[:take], rest[take:]
    return pages


def draw_danfe(nfe: Nfe) -> bytes:
    geo = _geometry(nfe)
    cols = items.columns(nfe, geo.w)
    rows = items.measure(nfe, cols)
    info_w = geo.w * 0.7
    info = wrap(blocks.additional_text(nfe), (info_w - 1.6) * mm, INFO_SIZE) if blocks.additional_text(nfe) else []
    first = _first_page_fixed(None, geo, nfe, 1)
    pages = _paginate(nfe, geo, rows, info, first)
    # The landscape stub is on page 1 only: later pages use the whole width (rows measured for the
    # narrower table still fit the wider description column).
    later = replace(geo, x=MARGIN, w=geo.page[0] / mm - 2 * MARGIN) if geo.landscape else geo
    later_cols = items.columns(nfe, later.w) if geo.landscape else cols
    out = io.BytesIO()
    canvas = new_canvas(out, geo.page, f"DANFE {nfe.key}")
    for number, page in enumerate(pages, start=1):
        sheet = Sheet(canvas, *geo.page)
        sheet.line_width(0.5)
        if number == 1:
            top, bottom = _first_page_fixed(sheet, geo, nfe, len(pages))
            if geo.landscape:
                _landscape_stub(sheet, geo, nfe)
            _item_block(sheet, geo, cols, page.rows, top, bottom)
            y = bottom + blocks.GAP
            if nfe.issqn:
                y = blocks.issqn(sheet, geo.x, y, geo.w, nfe)
            _additional(sheet, geo, info, info_w, y)
        else:
            _later_page(sheet, later, later_cols, nfe, page, number, len(pages))
        _marks(sheet, nfe)
        canvas.showPage()
    canvas.save()
    return out.getvalue()


def _later_page(sheet: Sheet, geo: Geometry, cols: list[Column], nfe: Nfe, page: Page, number: int, pages: int) -> None:
    """Pages 2+: the header with FOLHA X/Y, the rows that continue, then continued information."""
    y = blocks.header(sheet, geo.x, geo.top, geo.w, nfe, number, pages) + blocks.GAP
    if page.rows:
        rows_h = blocks.CAPTION + items.HEAD_H + sum(r.height for r in page.rows)
        end = geo.bottom if not page.info else y + rows_h
        _item_block(sheet, geo, cols, page.rows, y, end)
        y = end + blocks.GAP
    if page.info:
        _continuation(sheet, geo, page.info, y)


def _item_block(sheet: Sheet, geo: Geometry, cols: list[Column], rows: list[items.Row], top: float,
                bottom: float) -> None:  # fmt: skip
    sheet.section(geo.x, top, "Dados do produto / serviço")
    y = items.draw_head(sheet, geo.x, top + blocks.CAPTION, cols)
    items.draw_rows(sheet, geo.x, y, cols, rows, bottom)


def _additional(sheet: Sheet, geo: Geometry, info: list[str], info_w: float, y: float) -> None:
    sheet.section(geo.x, y, "Dados adicionais")
    y += blocks.CAPTION
    h = geo.bottom - y
    sheet.field(geo.x, y, info_w, h, "Informações complementares", "")
    lines = max(1, int((h - INFO_TITLE - 0.8) / INFO_LINE))
    shown = info[:lines] if len(info) <= lines else info[: lines - 1]  # a line for "continua"
    for k, line in enumerate(shown):
        sheet.text(geo.x + 0.8, y + INFO_TITLE + INFO_LINE * k + INFO_SIZE * 0.93 / mm, line, INFO_SIZE)
    if len(info) > len(shown):
        sheet.block(geo.x + 0.8, y + h - 3.2, info_w - 1.6, 3, "(continua na próxima folha)", 5.5, align="right")
    sheet.field(geo.x + info_w, y, geo.w - info_w, h, "Reservado ao fisco", "")


def _continuation(sheet: Sheet, geo: Geometry, lines: list[str], y: float) -> None:
    sheet.section(geo.x, y, "Dados adicionais (continuação)")
    y += blocks.CAPTION
    h = INFO_TITLE + INFO_LINE * len(lines) + 1.0
    sheet.field(geo.x, y, geo.w, h, "Informações complementares (continuação)", "")
    for k, line in enumerate(lines):
        sheet.text(geo.x + 0.8, y + INFO_TITLE + INFO_LINE * k + INFO_SIZE * 0.93 / mm, line, INFO_SIZE)


def _landscape_stub(sheet: Sheet, geo: Geometry, nfe: Nfe) -> None:
    """The stub up the left edge: drawn in a frame rotated 90° so it reads bottom to top."""
    c = sheet.canvas
    length = geo.bottom - geo.top
    c.saveState()
    c.translate((MARGIN + STUB_H) * mm, (sheet.height - geo.bottom) * mm)
    c.rotate(90)
    rotated = Sheet(c, length * mm, STUB_H * mm)
    blocks.stub(rotated, 0, 0, length, STUB_H, nfe)
    c.restoreState()
    sheet.canvas.saveState()
    sheet.canvas.setDash(2, 2)
    sheet.vline(MARGIN + STUB_H + 1.25, geo.top, length)
    sheet.canvas.restoreState()


def _marks(sheet: Sheet, nfe: Nfe) -> None:
    if nfe.homologation:
        blocks.watermark(sheet, "SEM VALOR FISCAL", red=False)
    if nfe.cancelled:
        blocks.watermark(sheet, "CANCELADA", red=True)
