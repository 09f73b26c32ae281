"""The DANFE's boxed sections (MOC 7.0, Anexo II; NT 2026.010 additions), one function each.

Every function draws at (x, y) with width ``w`` in mm from the page's top-left and returns
the y where the next section starts. Titles and their order follow the manual.
"""

from __future__ import annotations

from collections.abc import Sequence

from reportlab.lib.units import mm

from app.pdf import formats as fmt
from app.pdf.barcode import draw_code128
from app.pdf.danfe_data import Nfe
from app.pdf.fonts import BOLD, sanitize
from app.pdf.layout import Sheet

ROW = 7.0  # height of a row of labelled boxes
GAP = 1.0  # space between sections (the caption sits in it)
CAPTION = 3.2
FREIGHT = {
    "0": "0 - Por conta do Remetente",
    "1": "1 - Por conta do Destinatário",
    "2": "2 - Por conta de Terceiros",
    "3": "3 - Próprio por conta do Remetente",
    "4": "4 - Próprio por conta do Destinatário",
    "9": "9 - Sem Ocorrência de Transporte",
}
CRT = {
    "1": "1 - Simples Nacional",
    "2": "2 - Simples Nacional - excesso de sublimite",
    "3": "3 - Regime Normal",
    "4": "4 - Simples Nacional - MEI",
}
PAYMENT = {
    "01": "Dinheiro", "02": "Cheque", "03": "Cartão de Crédito", "04": "Cartão de Débito",
    "05": "Crédito Loja", "10": "Vale Alimentação", "11": "Vale Refeição", "12": "Vale Presente",
    "13": "Vale Combustível", "15": "Boleto Bancário", "16": "Depósito Bancário", "17": "PIX Dinâmico",
    "18": "Transferência bancária", "19": "Programa de fidelidade", "20": "PIX Estático",
    "21": "Crédito em Loja", "22": "Pagamento Eletrônico não Informado", "90": "Sem pagamento", "99": "Outros",
}  # fmt: skip


def number_text(number: str) -> str:
    """nNF as the DANFE prints it: 000.000.001."""
    raw = number.zfill(9) if number.isdigit() else number
    return f"{raw[:3]}.{raw[3:6]}.{raw[6:]}" if len(raw) == 9 and raw.isdigit() else raw


def series_text(series: str) -> str:
    return series.zfill(3) if series.isdigit() else series


def stub(sheet: Sheet, x: float, y: float, w: float, h: float, nfe: Nfe) -> None:
    """The receipt stub (canhoto): who received, when; NF-e number at the right."""
    right = 38.0
    half = h / 2
    recipient = nfe.recipient
    where = ", ".join(p for p in (recipient.street, recipient.district, recipient.city, recipient.uf) if p)
    statement = (
        f"RECEBEMOS DE {nfe.emitter.name} OS PRODUTOS E/OU SERVIÇOS CONSTANTES DA NOTA FISCAL ELETRÔNICA "
        f"INDICADA AO LADO. EMISSÃO: {fmt.date(nfe.issued)} VALOR TOTAL: R$ {fmt.money(nfe.totals.get('vNF'))} "
        f"DESTINATÁRIO: {recipient.name} - {where}"
    )
    sheet.rect(x, y, w - right, half)
    sheet.block(x + 0.8, y + 0.5, w - right - 1.6, half - 1.0, statement, 6.0, min_size=4.0, valign="middle")
    sheet.field(x, y + half, 40, h - half, "Data de recebimento", "")
    sheet.field(x + 40, y + half, w - right - 40, h - half, "Identificação e assinatura do recebedor", "")
    sheet.rect(x + w - right, y, right, h)
    sheet.block(x + w - right, y + 1.0, right, 5, "NF-e", 10, bold=True, align="center")
    sheet.block(x + w - right, y + 6.5, right, 4.5, f"Nº {number_text(nfe.number)}", 9, bold=True, align="center")
    sheet.block(x + w - right, y + 11.5, right, 4.5, f"SÉRIE {series_text(nfe.series)}", 9, bold=True, align="center")


def header(sheet: Sheet, x: float, y: float, w: float, nfe: Nfe, page: int, pages: int) -> float:
    """Emitter, the DANFE box (entrada/saída, number, FOLHA X/Y), barcode and key; then the
    operation, protocol and the emitter's registrations."""
    h = 33.0
    right = 86.0 if w < 250 else 110.0
    middle = 34.0
    left = w - right - middle
    emitter = nfe.emitter
    sheet.rect(x, y, left, h)
    sheet.text(x + 1, y + 2.6, "IDENTIFICAÇÃO DO EMITENTE", 5.0)
    sheet.block(x + 1.5, y + 3.5, left - 3, 9, emitter.name, 10, bold=True, align="center", valign="middle", min_size=6)
    city = " - ".join(p for p in (emitter.city, emitter.uf) if p)
    lines = "\n".join(
        p
        for p in (
            emitter.street,
            " - ".join(q for q in (emitter.district, fmt.cep(emitter.cep)) if q),
            city,
            f"Fone: {fmt.phone(emitter.phone)}" if emitter.phone else "",
        )
        if p
    )
    sheet.block(x + 1.5, y + 13, left - 3, h - 14, lines, 7, align="center", valign="middle", keep_newlines=True)
    # the DANFE box
    mx = x + left
    sheet.rect(mx, y, middle, h)
    sheet.block(mx, y + 0.8, middle, 5, "DANFE", 12, bold=True, align="center")
    sheet.block(mx + 1, y + 5.8, middle - 2, 6, "DOCUMENTO AUXILIAR DA NOTA FISCAL ELETRÔNICA", 6.0, align="center")
    sheet.block(mx + 2, y + 12.5, 18, 6, "0 - ENTRADA\n1 - SAÍDA", 6.5, keep_newlines=True)
    sheet.rect(mx + middle - 9, y + 13, 6, 5)
    sheet.block(mx + middle - 9, y + 13, 6, 5, nfe.direction, 10, bold=True, align="center", valign="middle")
    sheet.block(mx + 1, y + 19.5, middle - 2, 4.2, f"Nº {number_text(nfe.number)}", 8.5, bold=True, align="center")
    sheet.block(mx + 1, y + 23.8, middle - 2, 4, f"SÉRIE {series_text(nfe.series)}", 8, bold=True, align="center")
    sheet.block(mx + 1, y + 28, middle - 2, 4, f"FOLHA {page}/{pages}", 8, bold=True, align="center")
    # barcode, key and the consultation line
    rx = x + left + middle
    sheet.rect(rx, y, right, h)
    bar_h = 12.0
    draw_code128(
        sheet.canvas, (rx + 2) * mm, (sheet.height - y - 1.2 - bar_h) * mm, (right - 4) * mm, bar_h * mm, nfe.key
    )
    sheet.field(rx, y + 14, right, 7.5, "Chave de acesso", fmt.key_groups(nfe.key), size=8, bold=True, align="center")
    consult = (
        "Consulta de autenticidade no portal nacional da NF-e www.nfe.fazenda.gov.br/portal "
        "ou no site da Sefaz Autorizadora"
    )
    sheet.block(rx + 2, y + 22.5, right - 4, h - 23.5, consult, 7.5, align="center", valign="middle")
    y += h
    protocol = " - ".join(p for p in (nfe.protocol, fmt.date_time(nfe.protocol_at)) if p)
    sheet.field(x, y, w - right, ROW, "Natureza da operação", nfe.operation)
    sheet.field(
        x + w - right, y, right, ROW, "Protocolo de autorização de uso", protocol or "-", align="center", bold=True
    )
    y += ROW
    cells: list[tuple[float, str, object]]
    if nfe.nt_2026_010:
        fifth = w / 5
        cells = [
            (fifth, "Inscrição estadual", emitter.ie),
            (fifth, "Inscrição estadual do subst. trib.", emitter.iest),
            (fifth, "CNPJ / CPF", fmt.tax_id(emitter.tax_id)),
            (fifth, "Código do regime tributário", CRT.get(emitter.crt, emitter.crt)),
            # reserved by the NT until a tag carries it: printed blank, never guessed
            (w - 4 * fifth, "Tipo de regime de apuração do IBS e da CBS", ""),
        ]
    else:
        third = w / 3
        cells = [
            (third, "Inscrição estadual", emitter.ie),
            (third, "Inscrição estadual do subst. trib.", emitter.iest),
            (w - 2 * third, "CNPJ / CPF", fmt.tax_id(emitter.tax_id)),
        ]
    sheet.fields(x, y, ROW, cells)
    return y + ROW


def rows(sheet: Sheet, x: float, y: float, title: str, lines: Sequence[Sequence[tuple[float, str, object]]]) -> float:
    """A captioned section of rows of labelled boxes, (width, title, value) each; returns the top
    of the next section."""
    sheet.section(x, y, title)
    y += CAPTION
    for cells in lines:
        sheet.fields(x, y, ROW, cells)
        y += ROW
    return y + GAP


def recipient(sheet: Sheet, x: float, y: float, w: float, nfe: Nfe) -> float:
    party = nfe.recipient
    date_w, id_w = 26.0, 38.0
    return rows(sheet, x, y, "Destinatário / Remetente", [
        [(w - date_w - id_w, "Nome / Razão social", party.name), (id_w, "CNPJ / CPF", fmt.tax_id(party.tax_id)),
         (date_w, "Data da emissão", fmt.date(nfe.issued))],
        [(w - date_w - id_w - 50, "Endereço", party.street), (50, "Bairro / Distrito", party.district),
         (id_w, "CEP", fmt.cep(party.cep)), (date_w, "Data da saída / entrada", fmt.date(nfe.moved))],
        [(w - date_w - id_w - 50, "Município", party.city), (30, "Fone / Fax", fmt.phone(party.phone)),
         (20, "UF", party.uf), (id_w, "Inscrição estadual", party.ie),
         (date_w, "Hora da saída / entrada", fmt.time(nfe.moved))],
    ])  # fmt: skip


def places(sheet: Sheet, x: float, y: float, w: float, nfe: Nfe) -> float:
    """INFORMAÇÕES DO LOCAL DE RETIRADA / DE ENTREGA, when the NF-e names them."""
    for title, party in (
        ("Informações do local de retirada", nfe.pickup),
        ("Informações do local de entrega", nfe.delivery),
    ):
        if party is None:
            continue
        id_w, ie_w = 38.0, 34.0
        y = rows(sheet, x, y, title, [
            [(w - id_w - ie_w, "Nome / Razão social", party.name), (id_w, "CNPJ / CPF", fmt.tax_id(party.tax_id)),
             (ie_w, "Inscrição estadual", party.ie)],
            [(w - 135, "Endereço", party.street), (38, "Bairro / Distrito", party.district),
             (20, "CEP", fmt.cep(party.cep)), (40, "Município", party.city), (9, "UF", party.uf),
             (28, "Fone / Fax", fmt.phone(party.phone))],
        ])  # fmt: skip
    return y


def invoices(sheet: Sheet, x: float, y: float, w: float, nfe: Nfe) -> float:
    """FATURA / DUPLICATAS: the invoice line, every instalment, and the payment forms."""
    cells = [f"Nº {n or '-'}\nVenc. {fmt.date(d)}\nR$ {fmt.money(v)}" for n, d, v in nfe.duplicates]
    if not nfe.duplicates:
        cells += [f"{PAYMENT.get(kind, kind or 'Pagamento')}\nR$ {fmt.money(value)}" for kind, value in nfe.payments]
    if not cells and not nfe.invoice:
        return y
    sheet.section(x, y, "Fatura / Duplicatas" if nfe.duplicates or nfe.invoice else "Pagamento")
    y += CAPTION
    if nfe.invoice:
        inv = nfe.invoice
        quarter = w / 4
        sheet.field(x, y, quarter, ROW, "Número", inv.get("nFat", ""))
        sheet.fields(x + quarter, y, ROW, [
            (quarter, "Valor original", fmt.money(inv.get("vOrig"), blank="")),
            (quarter, "Valor do desconto", fmt.money(inv.get("vDesc"), blank="")),
            (w - 3 * quarter, "Valor líquido", fmt.money(inv.get("vLiq"), blank="")),
        ], align="right")  # fmt: skip
        y += ROW
    if cells:
        per_row = max(1, int(w // 28))
        cell_w = w / per_row
        cell_h = 8.0 if nfe.duplicates else 6.0
        for start in range(0, len(cells), per_row):
            for i, text in enumerate(cells[start : start + per_row]):
                cx = x + i * cell_w
                sheet.rect(cx, y, cell_w, cell_h)
                sheet.block(cx + 0.8, y + 0.4, cell_w - 1.6, cell_h - 0.8, text, 6.0, keep_newlines=True)
            y += cell_h
    return y + GAP


def taxes(sheet: Sheet, x: float, y: float, w: float, nfe: Nfe) -> float:
    """CÁLCULO DO IMPOSTO (two rows), and the IBS/CBS/IS totals of NT 2026.010."""
    if nfe.nt_2026_010:
        from app.pdf.danfe_nt2026 import totals

        return totals(sheet, x, y, w, nfe)
    sheet.section(x, y, "Cálculo do imposto")
    y += CAPTION
    t = nfe.totals

    def row(cells: list[tuple[str, str]]) -> None:
        cw = w / len(cells)
        for i, (title, tag) in enumerate(cells):
            sheet.field(x + i * cw, y, cw, ROW, title, fmt.money(t.get(tag)), align="right", min_size=5.5)

    row([
        ("Base de cálc. do ICMS", "vBC"), ("Valor do ICMS", "vICMS"), ("Base de cálc. ICMS S.T.", "vBCST"),
        ("Valor do ICMS subst.", "vST"), ("V. imp. importação", "vII"), ("V. ICMS UF remet.", "vICMSUFRemet"),
        ("V. FCP UF dest.", "vFCPUFDest"), ("Valor do PIS", "vPIS"), ("V. total produtos", "vProd"),
    ])  # fmt: skip
    y += ROW
    row([
        ("Valor do frete", "vFrete"), ("Valor do seguro", "vSeg"), ("Desconto", "vDesc"),
        ("Outras despesas", "vOutro"), ("Valor total IPI", "vIPI"), ("V. ICMS UF dest.", "vICMSUFDest"),
        ("V. tot. trib.", "vTotTrib"), ("Valor da COFINS", "vCOFINS"), ("V. total da nota", "vNF"),
    ])  # fmt: skip
    y += ROW
    return y + GAP


def carrier(sheet: Sheet, x: float, y: float, w: float, nfe: Nfe) -> float:
    c, party, vol = nfe.carrier, nfe.carrier.party, nfe.volumes
    fixed = 44 + 20 + 22 + 9 + 36
    sixth = w / 6
    return rows(sheet, x, y, "Transportador / Volumes transportados", [
        [(w - fixed, "Nome / Razão social", party.name), (44, "Frete", FREIGHT.get(c.freight, c.freight)),
         (20, "Código ANTT", c.antt), (22, "Placa do veículo", c.plate), (9, "UF", c.plate_uf),
         (36, "CNPJ / CPF", fmt.tax_id(party.tax_id))],
        [(w - fixed, "Endereço", party.street), (86, "Município", party.city), (9, "UF", party.uf),
         (36, "Inscrição estadual", party.ie)],
        [(sixth, "Quantidade", fmt.decimal(vol.quantity, 0)), (sixth, "Espécie", vol.species),
         (sixth, "Marca", vol.brand), (sixth, "Numeração", vol.numbering),
         (sixth, "Peso bruto", fmt.decimal(vol.gross, 3)), (w - 5 * sixth, "Peso líquido", fmt.decimal(vol.net, 3))],
    ])  # fmt: skip


def issqn(sheet: Sheet, x: float, y: float, w: float, nfe: Nfe) -> float:
    if not nfe.issqn:
        return y
    quarter = w / 4
    return rows(sheet, x, y, "Cálculo do ISSQN", [
        [(quarter, "Inscrição municipal", nfe.emitter.im),
         (quarter, "Valor total dos serviços", fmt.money(nfe.issqn.get("vServ"))),
         (quarter, "Base de cálculo do ISSQN", fmt.money(nfe.issqn.get("vBC"))),
         (w - 3 * quarter, "Valor do ISSQN", fmt.money(nfe.issqn.get("vISS")))],
    ])  # fmt: skip


ISSQN_HEIGHT = CAPTION + ROW + GAP


def additional_text(nfe: Nfe) -> str:
    """INFORMAÇÕES COMPLEMENTARES: the fisco's notes first, then the taxpayer's."""
    parts = [nfe.contingency] if nfe.contingency else []
    if nfe.fisco_info:
        parts.append(f"Inf. fisco: {nfe.fisco_info}")
    if nfe.complementary_info:
        parts.append(f"Inf. contribuinte: {nfe.complementary_info}")
    return sanitize("  ".join(parts))


def watermark(sheet: Sheet, text: str, *, red: bool) -> None:
    """A large diagonal mark (SEM VALOR FISCAL, CANCELADA) the page's content stays readable under."""
    c = sheet.canvas
    c.saveState()
    c.setFillAlpha(0.28)
    if red:
        c.setFillColorRGB(0.8, 0.05, 0.05)
    else:
        c.setFillGray(0.35)
    c.translate(sheet.width * mm / 2, sheet.height * mm / 2)
    c.rotate(35 if sheet.height > sheet.width else 20)
    size = min(sheet.width, sheet.height) * 0.42 * mm / max(1, len(text)) * 2.0
    c.setFont(BOLD, size)
    c.drawCentredString(0, -size / 3, text)
    c.restoreState()
