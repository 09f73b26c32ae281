"""The one page printed for a resNFe: what the summary says, and why there is no DANFE yet.

A recipient receives only the summary (resNFe) of an NF-e until it manifests: the SEFAZ sends
the full XML after a Ciência da Operação or a Confirmação. A DANFE drawn from the summary
would be a fake, so this page says plainly what is known and what to do.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from lxml import etree
from reportlab.lib.pagesizes import A4

from app.core.clock import BRASILIA
from app.core.documents import DocumentStatus, PartyRole
from app.core.manifestation import CIENCIA, CONFIRMACAO
from app.documents.model import PartyInfo
from app.documents.values import cents_text
from app.pdf import formats as fmt
from app.pdf.danfe_blocks import watermark
from app.pdf.danfe_data import is_cancelled, read_meta
from app.pdf.events import registered_event
from app.pdf.layout import Sheet, new_canvas

SITUATION = {"1": "Autorizada", "2": "Denegada", "3": "Cancelada"}
DIRECTION = {"0": "0 - Entrada", "1": "1 - Saída"}
EXPLANATION = (
    "A SEFAZ enviou apenas o resumo desta NF-e (resNFe). O XML completo, necessário para imprimir o DANFE, "
    "só é distribuído ao destinatário depois que ele registra a manifestação: Ciência da Operação ou "
    "Confirmação da Operação. Enquanto a manifestação estiver pendente, este documento não é um DANFE e "
    "não acompanha mercadoria.\n\n"
    "O que fazer: registre a Ciência da Operação (ou a Confirmação) desta nota no Captura DF-e; o XML "
    "completo chega numa das próximas consultas à SEFAZ e o DANFE passa a ser gerado a partir dele."
)
REGISTERED = (
    "A SEFAZ enviou apenas o resumo desta NF-e (resNFe). A {event} desta nota já foi registrada{when}: "
    "o XML completo chega numa das próximas consultas à SEFAZ, e o DANFE passa a ser gerado a partir dele. "
    "Até lá, este documento não é um DANFE e não acompanha mercadoria.\n\n"
    "Nada a fazer: o Captura DF-e busca o XML completo sozinho."
)
# The recipient's events after which the SEFAZ distributes the complete XML.
OPENING_EVENTS = {CIENCIA: "Ciência da Operação", CONFIRMACAO: "Confirmação da Operação"}


def render_summary(root: etree._Element, events: Sequence[bytes] = ()) -> bytes:
    """The page of a resNFe, every value as the NF-e reader (``app.documents.nfe``) reads it."""
    meta = read_meta(root)
    key = meta.access_key
    emitter = meta.emitter or PartyInfo(PartyRole.EMITTER, None)
    direction = "" if meta.operation_type is None else str(meta.operation_type)
    situation = meta.situation or ""
    cancelled = meta.status is DocumentStatus.CANCELLED or is_cancelled(key, events)
    opening = registered_event(key, events, OPENING_EVENTS)
    if opening is not None:
        event = OPENING_EVENTS[opening.tp_evento]
        at = opening.event_at
        when = f" em {at.astimezone(BRASILIA):%d/%m/%Y %H:%M}" if at is not None else ""
        explanation = REGISTERED.format(event=event, when=when)
        to_get = f"{event} registrada: XML completo a caminho"
    else:
        explanation, to_get = EXPLANATION, "Registrar a Ciência ou a Confirmação da Operação"
    out = io.BytesIO()
    canvas = new_canvas(out, A4, f"Resumo da NF-e {key}")
    sheet = Sheet(canvas, *A4)
    sheet.line_width(0.5)
    x, w, y = 10.0, 190.0, 12.0
    sheet.block(x, y, w, 8, "RESUMO DA NF-e — XML COMPLETO AINDA NÃO DISPONÍVEL", 14, bold=True, align="center")
    y += 9
    sheet.block(x, y, w, 5, "Este documento não é um DANFE", 10, align="center")
    y += 8
    sheet.rect(x, y, w, 34)
    sheet.block(x + 2, y + 2, w - 4, 30, explanation, 9, keep_newlines=True, min_size=7)
    y += 38
    rows: list[list[tuple[float, str, object]]] = [
        [(w, "Chave de acesso", fmt.key_groups(key))],
        [(w * 0.7, "Emitente", emitter.name or ""), (w * 0.3, "CNPJ / CPF", fmt.tax_id(emitter.doc))],
        [(w * 0.35, "Inscrição estadual", emitter.ie or ""),
         (w * 0.35, "Data de emissão", fmt.date_time(fmt.written(meta.issued_at))),
         (w * 0.3, "Tipo da operação", DIRECTION.get(direction, direction))],
        [(w * 0.35, "Valor total da nota", f"R$ {fmt.money(cents_text(meta.total_cents))}"),
         (w * 0.35, "Protocolo de autorização", meta.protocol or ""),
         (w * 0.3, "Data de autorização", fmt.date_time(fmt.written(meta.authorised_at)))],
        [(w * 0.35, "Situação na SEFAZ", "Cancelada" if cancelled else SITUATION.get(situation, situation or "-")),
         (w * 0.65, "Para obter o XML completo", to_get)],
    ]  # fmt: skip
    for row in rows:
        sheet.fields(x, y, 10, row, size=10)
        y += 10
    if cancelled:
        watermark(sheet, "CANCELADA", red=True)
    canvas.showPage()
    canvas.save()
    return out.getvalue()
