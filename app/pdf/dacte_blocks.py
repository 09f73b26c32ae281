"""The DACTE's blocks below the header, each drawn at a given top and returning its bottom (mm).

Portrait A4 of the MOC do CT-e (Anexo do DACTE): receipt stub, parties two by two, the payer,
cargo and quantities, the value components, the tax, the carried documents in two columns,
observations, the modal-specific block and the reserved areas.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.pdf import formats
from app.pdf.dacte_modal import ModalBlock
from app.pdf.dacte_model import CarriedDoc, Dacte, Party
from app.pdf.layout import Sheet

X0 = 6.0
WIDTH = 198.0
HALF = WIDTH / 2
BOTTOM = 292.0
CAPTION = 3.2
DOC_ROW = 3.4
DOC_HEAD = 3.6
OBS_SIZE = 6.0
OBS_LINE = OBS_SIZE * 1.15 * 25.4 / 72  # mm per observation line
RESERVED_H = 14.0
VALUE_SIZE = 7.0

_PARTY_ROW = 3.5
PARTY_H = 5 * _PARTY_ROW + 1.2


def caption(sheet: Sheet, y: float, title: str, *, x: float = X0, w: float = WIDTH) -> float:
    """A centred section caption in a thin box ("COMPONENTES DO VALOR DA PRESTAÇÃO DO SERVIÇO")."""
    sheet.rect(x, y, w, CAPTION, fill=0.92)
    sheet.block(x, y + 0.2, w, CAPTION - 0.3, title, 6.0, bold=True, align="center", valign="middle")
    return y + CAPTION


def _label_value(sheet: Sheet, x: float, y: float, label_w: float, w: float, label: str, value: str) -> None:
    sheet.block(x, y, label_w, _PARTY_ROW, label, 5.2, min_size=4.0, wrap_lines=False, valign="middle")
    sheet.block(
        x + label_w, y, w - label_w, _PARTY_ROW, value, 6.5, bold=True, min_size=4.5, wrap_lines=False, valign="middle"
    )


def party_box(sheet: Sheet, x: float, y: float, w: float, title: str, party: Party) -> float:
    """REMETENTE / DESTINATÁRIO / EXPEDIDOR / RECEBEDOR: five label-value lines in one box."""
    sheet.rect(x, y, w, PARTY_H)
    left, right_x = x + 1.0, x + w * 0.66
    a = party.address
    top = y + 0.6
    rows = (
        ((title, party.name), None),
        (("ENDEREÇO", a.line), None),
        (("MUNICÍPIO", a.town), ("CEP", formats.cep(a.cep))),
        (("CNPJ/CPF", formats.tax_id(party.doc)), ("IE", party.ie)),
        (("PAÍS", a.country or ("BRASIL" if party.present else "")), ("FONE", formats.phone(party.phone))),
    )
    for i, (first, second) in enumerate(rows):
        row_y = top + i * _PARTY_ROW
        first_w = (right_x - left) if second else (w - 2.0)
        _label_value(sheet, left, row_y, 15.0, first_w, *first)
        if second:
            _label_value(sheet, right_x, row_y, 8.0, x + w - 1.0 - right_x, *second)
    return y + PARTY_H


def taker_box(sheet: Sheet, y: float, dacte: Dacte) -> float:
    """TOMADOR DO SERVIÇO across the page: who pays, and in what role."""
    party = dacte.taker
    h = 3 * _PARTY_ROW + 1.0
    sheet.rect(X0, y, WIDTH, h)
    a = party.address
    left, mid, right = X0 + 1.0, X0 + 100.0, X0 + 150.0
    role = f" ({dacte.taker_role})" if dacte.taker_role and not dacte.is_os else ""
    _label_value(sheet, left, y + 0.5, 28.0, 98.0, f"TOMADOR DO SERVIÇO{role}", party.name)
    _label_value(sheet, mid, y + 0.5, 16.0, 49.0, "MUNICÍPIO", a.town)
    _label_value(sheet, right, y + 0.5, 8.0, 46.0, "CEP", formats.cep(a.cep))
    _label_value(sheet, left, y + 0.5 + _PARTY_ROW, 15.0, 148.0, "ENDEREÇO", a.line)
    country = a.country or ("BRASIL" if party.present else "")
    _label_value(sheet, right, y + 0.5 + _PARTY_ROW, 8.0, 46.0, "PAÍS", country)
    _label_value(sheet, left, y + 0.5 + 2 * _PARTY_ROW, 15.0, 98.0, "CNPJ/CPF", formats.tax_id(party.doc))
    _label_value(sheet, mid, y + 0.5 + 2 * _PARTY_ROW, 8.0, 49.0, "IE", party.ie)
    _label_value(sheet, right, y + 0.5 + 2 * _PARTY_ROW, 8.0, 46.0, "FONE", formats.phone(party.phone))
    return y + h


def cargo(sheet: Sheet, y: float, dacte: Dacte) -> float:
    h = 8.0
    if dacte.is_os:
        amount = " / ".join(formats.quantity(q.amount) for q in dacte.quantities)
        sheet.fields(
            X0,
            y,
            h,
            [
                (150.0, "DESCRIÇÃO DO SERVIÇO PRESTADO", dacte.service_description),
                (48.0, "QUANTIDADE (PASSAGEIROS / VOLUMES)", amount),
            ],
            size=VALUE_SIZE,
        )
        y += h
        for responsible, insurer, policy in dacte.insurance or (("", "", ""),):
            sheet.fields(
                X0,
                y,
                h,
                [
                    (50.0, "RESPONSÁVEL PELO SEGURO", responsible),
                    (70.0, "NOME DA SEGURADORA", insurer),
                    (40.0, "NÚMERO DA APÓLICE", policy),
                    (38.0, "PERCURSO DO VEÍCULO (UF)", dacte.route),
                ],
                size=VALUE_SIZE,
            )
            y += h
        return y
    sheet.fields(
        X0,
        y,
        h,
        [
            (92.0, "PRODUTO PREDOMINANTE", dacte.product),
            (60.0, "OUTRAS CARACTERÍSTICAS DA CARGA", dacte.other_features),
            (46.0, "VALOR TOTAL DA CARGA", formats.money(dacte.cargo_value, blank="")),
        ],
        size=VALUE_SIZE,
    )
    y += h
    quantities = list(dacte.quantities)
    per_row = 5
    for start in range(0, len(quantities), per_row):
        chunk = quantities[start : start + per_row]
        cell_w = WIDTH / per_row
        sheet.fields(
            X0,
            y,
            7.5,
            [(cell_w, q.measure or "QUANTIDADE", f"{formats.quantity(q.amount)} {q.unit}".strip()) for q in chunk]
            + [(cell_w, "", "")] * (per_row - len(chunk)),
            size=VALUE_SIZE,
        )
        y += 7.5
    return y


def components(sheet: Sheet, y: float, dacte: Dacte) -> float:
    """COMPONENTES DO VALOR DA PRESTAÇÃO DO SERVIÇO: name/value pairs in three columns, totals at the right."""
    y = caption(sheet, y, "COMPONENTES DO VALOR DA PRESTAÇÃO DO SERVIÇO")
    items = list(dacte.components)
    rows = max(4, -(-len(items) // 3))
    row_h = 3.4
    h = 3.4 + rows * row_h + 0.6
    list_w = 132.0
    sheet.rect(X0, y, list_w, h)
    col_w = list_w / 3
    for col in range(3):
        cx = X0 + col * col_w
        if col:
            sheet.vline(cx, y, h)
        sheet.block(cx + 1.0, y + 0.4, col_w * 0.6, 3.0, "NOME", 5.2, valign="middle")
        sheet.block(cx + col_w * 0.6, y + 0.4, col_w * 0.4 - 1.0, 3.0, "VALOR", 5.2, align="right", valign="middle")
        for row in range(rows):
            index = col * rows + row
            if index >= len(items):
                break
            item = items[index]
            ry = y + 3.4 + row * row_h
            sheet.block(cx + 1.0, ry, col_w * 0.6 - 1.0, row_h, item.name, 6.5, wrap_lines=False, valign="middle")
            sheet.block(
                cx + col_w * 0.6,
                ry,
                col_w * 0.4 - 1.0,
                row_h,
                formats.money(item.value),
                6.5,
                align="right",
                wrap_lines=False,
                valign="middle",
            )
    total_w = WIDTH - list_w
    sheet.field(
        X0 + list_w,
        y,
        total_w,
        h / 2,
        "VALOR TOTAL DO SERVIÇO",
        f"R$ {formats.money(dacte.total)}",
        size=9.0,
        bold=True,
        align="right",
    )
    sheet.field(
        X0 + list_w,
        y + h / 2,
        total_w,
        h / 2,
        "VALOR A RECEBER",
        f"R$ {formats.money(dacte.receivable)}",
        size=9.0,
        bold=True,
        align="right",
    )
    return y + h


def taxes(sheet: Sheet, y: float, dacte: Dacte) -> float:
    y = caption(sheet, y, "INFORMAÇÕES RELATIVAS AO IMPOSTO")
    icms = dacte.icms
    h = 8.0
    sheet.fields(
        X0,
        y,
        h,
        [
            (62.0, "SITUAÇÃO TRIBUTÁRIA", icms.situation),
            (27.0, "BASE DE CÁLCULO", formats.money(icms.base, blank="")),
            (18.0, "ALÍQ. ICMS", formats.decimal(icms.rate, 2)),
            (27.0, "VALOR ICMS", formats.money(icms.value, blank="")),
            (18.0, "% RED. BC ICMS", formats.decimal(icms.base_reduction, 2)),
            (23.0, "ICMS ST", formats.money(icms.st_value, blank="")),
            (23.0, "CRÉDITO PRESUMIDO", formats.money(icms.credit, blank="")),
        ],
        size=VALUE_SIZE,
    )
    y += h
    if dacte.federal_taxes:  # CT-e OS: federal taxes of the service
        cell = WIDTH / len(dacte.federal_taxes)
        sheet.fields(
            X0,
            y,
            h,
            [(cell, f"VALOR DO {label}", formats.money(value, blank="")) for label, value in dacte.federal_taxes],
            size=VALUE_SIZE,
        )
        y += h
    ibs = dacte.ibscbs
    if ibs is not None:
        sheet.fields(
            X0,
            y,
            h,
            [
                (32.0, "CST / CCLASSTRIB IBS/CBS", " / ".join(p for p in (ibs.cst, ibs.class_code) if p)),
                (24.0, "BASE DE CÁLCULO IBS/CBS", formats.money(ibs.base, blank="")),
                (17.0, "ALÍQ. IBS UF", formats.decimal(ibs.ibs_uf_rate, 2)),
                (22.0, "VALOR IBS UF", formats.money(ibs.ibs_uf, blank="")),
                (17.0, "ALÍQ. IBS MUN.", formats.decimal(ibs.ibs_mun_rate, 2)),
                (22.0, "VALOR IBS MUN.", formats.money(ibs.ibs_mun, blank="")),
                (22.0, "VALOR TOTAL IBS", formats.money(ibs.ibs_total, blank="")),
                (17.0, "ALÍQ. CBS", formats.decimal(ibs.cbs_rate, 2)),
                (25.0, "VALOR CBS", formats.money(ibs.cbs, blank="")),
            ],
            size=VALUE_SIZE,
        )
        y += h
    return y


def documents_height(rows: int) -> float:
    return CAPTION + DOC_HEAD + rows * DOC_ROW + 0.6


def documents(
    sheet: Sheet, y: float, docs: Sequence[CarriedDoc], rows: int, *, title: str, dacte_os: bool = False
) -> float:
    """DOCUMENTOS ORIGINÁRIOS in two columns of ``rows`` lines each, left column first."""
    y = caption(sheet, y, title)
    h = DOC_HEAD + rows * DOC_ROW + 0.6
    sheet.rect(X0, y, WIDTH, h)
    sheet.vline(X0 + HALF, y, h)
    widths = (16.0, 60.0, HALF - 76.0)
    for col in range(2):
        cx = X0 + col * HALF + 1.0
        x = cx
        for w, title_text in zip(widths, ("TIPO DOC", "CNPJ/CHAVE", "SÉRIE/NRO. DOCUMENTO"), strict=True):
            sheet.block(x, y + 0.3, w - 1.0, DOC_HEAD - 0.4, title_text, 5.0, valign="middle", wrap_lines=False)
            x += w
        for row in range(rows):
            index = col * rows + row
            if index >= len(docs):
                break
            doc = docs[index]
            ry = y + DOC_HEAD + row * DOC_ROW
            x = cx
            for w, value in zip(
                widths,
                (doc.kind, formats.tax_id(doc.ident) if len(doc.ident) in (11, 14) else doc.ident, doc.serie_number),
                strict=True,
            ):
                sheet.block(x, ry, w - 1.0, DOC_ROW, value, 6.0, wrap_lines=False, valign="middle", min_size=4.0)
                x += w
    if not docs:
        note = "NENHUM DOCUMENTO REFERENCIADO NO CT-E OS" if dacte_os else "NENHUM DOCUMENTO INFORMADO NO CT-E"
        sheet.block(
            X0 + 1.0, y + DOC_HEAD, HALF - 2.0, min(h - DOC_HEAD, 6.0), note, 6.5, align="center", valign="middle"
        )
    return y + h


def observations(sheet: Sheet, y: float, lines: Sequence[str], h: float, *, title: str = "OBSERVAÇÕES") -> float:
    """Already wrapped observation lines in a box of height ``h`` (below its caption)."""
    y = caption(sheet, y, title)
    sheet.rect(X0, y, WIDTH, h)
    for i, line in enumerate(lines):
        sheet.block(
            X0 + 1.0, y + 0.4 + i * OBS_LINE, WIDTH - 2.0, OBS_LINE, line, OBS_SIZE, wrap_lines=False, min_size=4.0
        )
    return y + h


def modal_height(block: ModalBlock | None) -> float:
    if block is None:
        return 0.0
    rows = -(-len(block.fields) // 4) if block.fields else 0
    if block.note and len(block.fields) <= 2:
        rows = 1
    table = (DOC_HEAD + len(block.table) * DOC_ROW + 0.6) if block.table else 0.0
    return CAPTION + rows * 8.0 + table


def modal(sheet: Sheet, y: float, block: ModalBlock | None) -> float:
    if block is None:
        return y
    y = caption(sheet, y, block.title)
    fields = list(block.fields)
    cell_w = WIDTH / 4
    if block.note and len(fields) <= 2:  # road: two fields and the legal note side by side
        x = X0
        for label, value in fields:
            sheet.field(x, y, cell_w, 8.0, label, _modal_value(label, value), size=VALUE_SIZE)
            x += cell_w
        sheet.rect(x, y, X0 + WIDTH - x, 8.0)
        sheet.block(x + 1.0, y + 0.5, X0 + WIDTH - x - 2.0, 7.0, block.note, 5.5, valign="middle")
        y += 8.0
    else:
        for start in range(0, len(fields), 4):
            chunk = fields[start : start + 4]
            cells = [(cell_w, label, _modal_value(label, value)) for label, value in chunk]
            cells += [(cell_w, "", "")] * (4 - len(chunk))
            sheet.fields(X0, y, 8.0, cells, size=VALUE_SIZE)
            y += 8.0
    if block.table:
        y = _table(sheet, y, block.table_header, block.table)
    return y


def _modal_value(label: str, value: str) -> str:
    if "CNPJ" in label:
        return formats.tax_id(value)
    if label.startswith(("VALOR", "BASE DE CÁLCULO")):
        return formats.money(value, blank="")
    if label.startswith("DATA") and len(value) >= 10 and value[4:5] == "-":
        return formats.date_time(value) if "T" in value else formats.date(value)
    return value


def _table(sheet: Sheet, y: float, header: Sequence[str], rows: Sequence[Sequence[str]]) -> float:
    h = DOC_HEAD + len(rows) * DOC_ROW + 0.6
    sheet.rect(X0, y, WIDTH, h)
    col_w = WIDTH / max(1, len(header))
    for c, title in enumerate(header):
        sheet.block(
            X0 + c * col_w + 1.0, y + 0.3, col_w - 2.0, DOC_HEAD - 0.4, title, 5.0, valign="middle", wrap_lines=False
        )
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            sheet.block(
                X0 + c * col_w + 1.0,
                y + DOC_HEAD + r * DOC_ROW,
                col_w - 2.0,
                DOC_ROW,
                value,
                6.0,
                wrap_lines=False,
                valign="middle",
                min_size=4.0,
            )
    return y + h


def reserved(sheet: Sheet, y: float, dacte: Dacte, h: float = RESERVED_H) -> float:
    """USO EXCLUSIVO DO EMISSOR DO CT-E and RESERVADO AO FISCO, at the foot of the first page."""
    sheet.rect(X0, y, 120.0, h)
    sheet.block(X0 + 1.0, y + 0.4, 118.0, 2.5, "USO EXCLUSIVO DO EMISSOR DO CT-E", 5.0, wrap_lines=False)
    fisco = " | ".join(dacte.fisco_observations)
    sheet.rect(X0 + 120.0, y, WIDTH - 120.0, h)
    sheet.block(X0 + 121.0, y + 0.4, WIDTH - 122.0, 2.5, "RESERVADO AO FISCO", 5.0, wrap_lines=False)
    sheet.block(X0 + 121.0, y + 3.0, WIDTH - 122.0, h - 3.4, fisco, 6.0, min_size=4.0, ellipsis=True)
    return y + h


def receipt(sheet: Sheet, y: float, dacte: Dacte) -> float:
    """The stub the recipient signs, above a dashed cut line."""
    sheet.rect(X0, y, WIDTH, 4.0)
    sheet.block(
        X0 + 1.0,
        y + 0.3,
        WIDTH - 2.0,
        3.4,
        "DECLARO QUE RECEBI OS VOLUMES DESTE CONHECIMENTO EM PERFEITO ESTADO PELO QUE DOU POR CUMPRIDO O "
        "PRESENTE CONTRATO DE TRANSPORTE",
        5.6,
        align="center",
        valign="middle",
        wrap_lines=False,
    )
    y += 4.0
    sheet.field(X0, y, 62.0, 8.0, "NOME", "")
    sheet.field(X0, y + 8.0, 62.0, 8.0, "RG", "")
    sheet.rect(X0 + 62.0, y, 56.0, 16.0)
    sheet.block(X0 + 62.0, y + 12.0, 56.0, 3.5, "ASSINATURA / CARIMBO", 5.2, align="center", wrap_lines=False)
    sheet.field(X0 + 118.0, y, 40.0, 8.0, "CHEGADA DATA/HORA", "")
    sheet.field(X0 + 118.0, y + 8.0, 40.0, 8.0, "SAÍDA DATA/HORA", "")
    sheet.rect(X0 + 158.0, y, 40.0, 16.0)
    sheet.block(X0 + 158.0, y + 0.8, 40.0, 4.5, "CT-E", 9.0, bold=True, align="center", wrap_lines=False)
    sheet.block(X0 + 159.0, y + 6.0, 38.0, 4.0, f"Nº DOCUMENTO  {dacte.number}", 7.0, align="center", wrap_lines=False)
    sheet.block(X0 + 159.0, y + 10.5, 38.0, 4.0, f"SÉRIE  {dacte.serie}", 7.0, align="center", wrap_lines=False)
    y += 16.0
    sheet.hline(X0, y + 1.5, WIDTH, dash=True)
    return y + 3.0
