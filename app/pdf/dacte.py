"""DACTE: the printed CT-e (model 57) and CT-e OS (model 67), portrait A4, from the stored XML.

The first page carries the whole layout; carried documents and observations that do not fit
continue on later pages under the same header, each numbered in its FOLHA box ("2/3").
Homologation prints "SEM VALOR FISCAL"; a registered cancellation (110111) among ``events``
prints CANCELADO across every page.

    pdf = render_dacte(cte_proc_bytes, events=[proc_evento_bytes])
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from app.pdf import dacte_blocks as blocks
from app.pdf import formats
from app.pdf.barcode import draw_code128
from app.pdf.dacte_blocks import BOTTOM, HALF, OBS_LINE, OBS_SIZE, WIDTH, X0
from app.pdf.dacte_data import MODALS, DacteError, read_dacte
from app.pdf.dacte_model import CarriedDoc, Dacte
from app.pdf.errors import PdfError, parsed
from app.pdf.fonts import BOLD, sanitize
from app.pdf.layout import Sheet, new_canvas, wrap
from app.pdf.qr import draw_qr

HEADER_H = 62.0
CONSULT = (
    "Consulta de autenticidade no portal nacional do CT-e, no site da Sefaz Autorizadora "
    "ou em http://www.cte.fazenda.gov.br/portal"
)
_MIN_OBS_H = 12.0
_DENIED = frozenset({"110", "301", "302"})  # protCTe cStat of a denied use, as app.documents.cte reads it


@dataclass(frozen=True, slots=True)
class _Page:
    docs: tuple[CarriedDoc, ...]
    doc_rows: int
    obs: tuple[str, ...]
    obs_h: float


def render_dacte(xml: bytes, *, events: Sequence[bytes] = ()) -> bytes:
    """The DACTE of a cteProc / cteOSProc (or bare CTe / CTeOS) as PDF bytes.

    Raises :class:`PdfError` with a Portuguese sentence for XML that is not a printable CT-e.
    """
    return render_dacte_root(parsed(xml, "DACTE"), events=events)


def render_dacte_root(root: etree._Element, *, events: Sequence[bytes] = ()) -> bytes:
    """:func:`render_dacte` of the XML already parsed."""
    try:
        dacte = read_dacte(root, events)
    except DacteError as error:
        raise PdfError(f"Não foi possível gerar o DACTE: {error.message}") from error
    return draw_dacte(dacte)


def draw_dacte(dacte: Dacte) -> bytes:
    out = io.BytesIO()
    canvas = new_canvas(out, A4, f"DACTE {dacte.number} - {dacte.key}")
    canvas.setLineWidth(0.5)
    sheet = Sheet(canvas, *A4)
    obs_lines = _observation_lines(dacte)
    header_y, top = _first_page_top(sheet, dacte)
    pages = _paginate(dacte, obs_lines, top)
    _first_page_rest(sheet, dacte, pages[0], header_y, top, f"1/{len(pages)}")
    _marks(canvas, dacte)
    for number, page in enumerate(pages[1:], start=2):
        canvas.showPage()
        canvas.setLineWidth(0.5)
        _continuation(sheet, dacte, page, f"{number}/{len(pages)}")
        _marks(canvas, dacte)
    canvas.save()
    return out.getvalue()


# ---------------------------------------------------------------- pagination


def _paginate(dacte: Dacte, obs_lines: list[str], top: float) -> list[_Page]:
    """Split the carried documents and the observation lines over page 1 (below ``top``) and
    continuation pages. Page 1 gives the observations what they need (at least 12 mm, at most
    about half the room) and the documents the rest, as the official layout's large DOCUMENTOS
    ORIGINÁRIOS area does."""
    docs = list(dacte.documents)
    bottom = BOTTOM - blocks.RESERVED_H - blocks.modal_height(dacte.modal_block)
    room = bottom - top - blocks.CAPTION
    obs_needed = max(_MIN_OBS_H, len(obs_lines) * OBS_LINE + 1.0)
    obs_h = min(obs_needed, max(_MIN_OBS_H, room - blocks.documents_height(4)), room / 2 + 10.0)
    doc_rows = max(1, int((room - obs_h - blocks.documents_height(0)) / blocks.DOC_ROW))
    obs_h = room - blocks.documents_height(doc_rows)
    obs_fit = int((obs_h - 1.0) / OBS_LINE)
    page_obs, rest = obs_lines[:obs_fit], obs_lines[obs_fit:]
    if rest and page_obs:
        page_obs, rest = [*page_obs[:-1], "(continua na folha seguinte)"], obs_lines[obs_fit - 1 :]
    pages = [_Page(tuple(docs[: 2 * doc_rows]), doc_rows, tuple(page_obs), obs_h)]
    docs = docs[2 * doc_rows :]
    while docs or rest:
        room = BOTTOM - (5.0 + HEADER_H)
        rows = 0
        if docs:
            cap = int((room - blocks.documents_height(0)) / blocks.DOC_ROW)  # documents first, then the rest
            rows = max(1, min(-(-len(docs) // 2), cap))
            room -= blocks.documents_height(rows)
        page_docs, docs = docs[: 2 * rows], docs[2 * rows :]
        obs: list[str] = []
        if rest and room > blocks.CAPTION + 8.0:
            fit = int((room - blocks.CAPTION - 1.0) / OBS_LINE)
            obs, rest = rest[:fit], rest[fit:]
        pages.append(_Page(tuple(page_docs), rows, tuple(obs), len(obs) * OBS_LINE + 1.0))
    return pages


def _observation_lines(dacte: Dacte) -> list[str]:
    texts = list(dacte.observations)
    if dacte.approx_taxes and not any("aproximado" in t.lower() for t in texts):
        texts.append(
            "O valor aproximado de tributos incidentes sobre o preço deste serviço é de "
            f"R$ {formats.money(dacte.approx_taxes)} (Lei 12.741/2012)."
        )
    lines: list[str] = []
    for text in texts:
        lines.extend(wrap(sanitize(text), (WIDTH - 2.0) * mm, OBS_SIZE))
    return lines


# ---------------------------------------------------------------- pages


def _first_page_top(sheet: Sheet, dacte: Dacte) -> tuple[float, float]:
    """Draw page 1 down to the tax block, leaving the header's place; (header top, bottom drawn)."""
    y = 5.0
    if not dacte.is_os:
        y = blocks.receipt(sheet, y, dacte)
    header_y = y
    y += HEADER_H
    if not dacte.is_os:
        blocks.party_box(sheet, X0, y, HALF, "REMETENTE", dacte.sender)
        y = blocks.party_box(sheet, X0 + HALF, y, HALF, "DESTINATÁRIO", dacte.recipient)
        blocks.party_box(sheet, X0, y, HALF, "EXPEDIDOR", dacte.shipper)
        y = blocks.party_box(sheet, X0 + HALF, y, HALF, "RECEBEDOR", dacte.receiver)
    y = blocks.taker_box(sheet, y, dacte)
    y = blocks.cargo(sheet, y, dacte)
    y = blocks.components(sheet, y, dacte)
    return header_y, blocks.taxes(sheet, y, dacte)


def _first_page_rest(sheet: Sheet, dacte: Dacte, page: _Page, header_y: float, y: float, folio: str) -> None:
    _header(sheet, header_y, dacte, folio)
    title = "DOCUMENTOS REFERENCIADOS" if dacte.is_os else "DOCUMENTOS ORIGINÁRIOS"
    y = blocks.documents(sheet, y, page.docs, page.doc_rows, title=title, dacte_os=dacte.is_os)
    y = blocks.observations(sheet, y, page.obs, page.obs_h)
    y = blocks.modal(sheet, y, dacte.modal_block)
    blocks.reserved(sheet, y, dacte, BOTTOM - y)


def _continuation(sheet: Sheet, dacte: Dacte, page: _Page, folio: str) -> None:
    y = _header(sheet, 5.0, dacte, folio)
    if page.docs:
        title = "DOCUMENTOS REFERENCIADOS" if dacte.is_os else "DOCUMENTOS ORIGINÁRIOS"
        y = blocks.documents(sheet, y, page.docs, page.doc_rows, title=f"{title} (CONTINUAÇÃO)")
    if page.obs:
        blocks.observations(sheet, y, page.obs, page.obs_h, title="OBSERVAÇÕES (CONTINUAÇÃO)")


def _header(sheet: Sheet, y: float, dacte: Dacte, folio: str) -> float:
    """Emitter, DACTE identification, barcode, key, protocol and QR code; start and end of the service."""
    left_w, mid_w = 78.0, 84.0
    xm, xr = X0 + left_w, X0 + left_w + mid_w
    right_w = WIDTH - left_w - mid_w
    _emitter(sheet, X0, y, left_w, 30.0, dacte)
    pairs = (
        (("TIPO DO CT-E", dacte.cte_type), ("TIPO DO SERVIÇO", dacte.service_type)),
        (("TOMADOR DO SERVIÇO", dacte.taker_role), ("TIPO DE EMISSÃO", dacte.emission_type)),
    )
    for row, pair in enumerate(pairs):
        sheet.fields(X0, y + 30.0 + 8.0 * row, 8.0, [(left_w / 2, title, value) for title, value in pair], size=7.0)
    sheet.field(X0, y + 46.0, left_w, 8.0, "CFOP - NATUREZA DA PRESTAÇÃO", f"{dacte.cfop} - {dacte.nature}", size=7.0)
    # identification
    title_w = 56.0
    sheet.rect(xm, y, title_w, 12.0)
    sheet.block(xm, y + 0.8, title_w, 5.0, "DACTE OS" if dacte.is_os else "DACTE", 11.0, bold=True, align="center")
    subtitle = (
        "DOCUMENTO AUXILIAR DO CONHECIMENTO DE TRANSPORTE ELETRÔNICO PARA OUTROS SERVIÇOS"
        if dacte.is_os
        else "DOCUMENTO AUXILIAR DO CONHECIMENTO DE TRANSPORTE ELETRÔNICO"
    )
    sheet.block(xm + 1.0, y + 6.0, title_w - 2.0, 5.6, subtitle, 5.6, align="center", valign="middle")
    sheet.field(
        xm + title_w,
        y,
        mid_w - title_w,
        12.0,
        "MODAL",
        MODALS.get(dacte.modal, dacte.modal),
        size=8.0,
        bold=True,
        align="center",
    )
    sheet.fields(
        xm,
        y + 12.0,
        8.0,
        [
            (10.0, "MODELO", dacte.model),
            (9.0, "SÉRIE", dacte.serie),
            (17.0, "NÚMERO", dacte.number),
            (11.0, "FOLHA", folio),
            (37.0, "DATA E HORA DE EMISSÃO", formats.date_time(dacte.issued_at)),
        ],
        size=7.0,
        align="center",
    )
    sheet.rect(xm, y + 20.0, mid_w, 13.0)
    canvas = sheet.canvas
    draw_code128(canvas, (xm + 2.0) * mm, (sheet.height - (y + 31.5)) * mm, (mid_w - 4.0) * mm, 10.0 * mm, dacte.key)
    sheet.field(
        xm, y + 33.0, mid_w, 8.0, "CHAVE DE ACESSO", formats.key_groups(dacte.key), size=7.5, bold=True, align="center"
    )
    protocol = " ".join(p for p in (dacte.protocol, formats.date_time(dacte.authorised_at)) if p)
    # a bare CTe (an import without protCTe) proves no authorisation: say so where the protocol goes
    protocol = protocol or "XML SEM PROTOCOLO DE AUTORIZAÇÃO"
    sheet.field(
        xm, y + 41.0, mid_w, 8.0, "PROTOCOLO DE AUTORIZAÇÃO DE USO", protocol, size=7.5, bold=True, align="center"
    )
    sheet.rect(xm, y + 49.0, mid_w, 5.0)
    sheet.block(xm + 1.0, y + 49.3, mid_w - 2.0, 4.4, CONSULT, 5.2, align="center", valign="middle")
    # QR code of the CT-e (mandatory since layout 3.00; older documents leave the box empty)
    sheet.rect(xr, y, right_w, 54.0)
    qr_size = min(right_w - 3.0, 32.0)
    if dacte.qr_url:
        draw_qr(
            canvas,
            (xr + (right_w - qr_size) / 2) * mm,
            (sheet.height - (y + 4.0 + qr_size)) * mm,
            qr_size * mm,
            dacte.qr_url,
        )
        sheet.block(xr + 1.0, y + 38.0, right_w - 2.0, 6.0, "CONSULTA VIA LEITOR DE QR CODE", 5.2, align="center")
    else:  # layouts before 3.00 and some bare imports carry no infCTeSupl
        sheet.block(
            xr + 2.0,
            y + 4.0,
            right_w - 4.0,
            30.0,
            "QR CODE NÃO INFORMADO NO XML DO CT-E",
            6.0,
            align="center",
            valign="middle",
        )
    y += 54.0
    sheet.fields(
        X0, y, 8.0, [(HALF, "INÍCIO DA PRESTAÇÃO", dacte.start), (HALF, "TÉRMINO DA PRESTAÇÃO", dacte.end)], size=7.5
    )
    return y + 8.0


def _emitter(sheet: Sheet, x: float, y: float, w: float, h: float, dacte: Dacte) -> None:
    e = dacte.emitter
    a = e.address
    sheet.rect(x, y, w, h)
    sheet.block(x + 1.5, y + 1.0, w - 3.0, 7.0, e.name, 9.0, bold=True, align="center", valign="middle", min_size=6.0)
    lines = [
        a.line,
        " - ".join(p for p in (a.town, formats.cep(a.cep)) if p),
        f"CNPJ/CPF: {formats.tax_id(e.doc)}   IE: {e.ie}",
        f"FONE: {formats.phone(e.phone)}" if e.phone else "",
    ]
    sheet.block(
        x + 1.5,
        y + 9.0,
        w - 3.0,
        h - 10.0,
        "\n".join(line for line in lines if line),
        7.5,
        align="center",
        valign="middle",
        min_size=5.0,
        keep_newlines=True,
    )


def _marks(canvas: Canvas, dacte: Dacte) -> None:
    """Diagonal marks over the content: CANCELADO or USO DENEGADO (red) and, in homologation,
    SEM VALOR FISCAL."""
    width, height = A4
    marks: list[tuple[str, float, tuple[float, float, float]]] = []
    if dacte.cancelled:
        marks.append(("CANCELADO", 80.0, (0.85, 0.1, 0.1)))
    elif dacte.protocol_status in _DENIED:
        marks.append(("USO DENEGADO", 64.0, (0.85, 0.1, 0.1)))
    if dacte.homologation:
        marks.append(("SEM VALOR FISCAL", 44.0, (0.6, 0.6, 0.6)))
    for i, (text, size, color) in enumerate(marks):
        canvas.saveState()
        canvas.translate(width / 2, height / 2 - i * 70.0 * mm)
        canvas.rotate(50)
        canvas.setFillColorRGB(*color, alpha=0.3)
        canvas.setFont(BOLD, size)
        canvas.drawCentredString(0, 0, text)
        if text == "SEM VALOR FISCAL":
            canvas.setFont(BOLD, 14.0)
            canvas.drawCentredString(0, -18.0, "AMBIENTE DE HOMOLOGAÇÃO")
        canvas.restoreState()
