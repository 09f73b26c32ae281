"""DANFSe v2.0 (NT SE/CGNFS-e 008): the printed NFS-e Nacional, always one A4 portrait page.

A four-column grid of labelled fields under shaded block titles, separated by thin rules, inside
a frame. Absent data prints "-"; long texts are cut with "..." so the page never overflows; the
description of the service and the additional information share what is left. The QR code
points at the national public consultation with the key as it is. Produção restrita prints
"NFS-e SEM VALIDADE JURÍDICA"; the stored events mark it CANCELADA or SUBSTITUÍDA.

    pdf = render_danfse(nfse_bytes, events=[evento_bytes])
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from lxml import etree
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm

from app.pdf.danfse_data import Danfse, Person, read_danfse
from app.pdf.errors import parsed
from app.pdf.fonts import BOLD, REGULAR, sanitize
from app.pdf.layout import LEADING, Sheet, fit, new_canvas
from app.pdf.qr import draw_qr, nfse_consultation_url

X0 = 5.0
Y0 = 5.0
W = 200.0
H = 287.0
COL = W / 4
ROW = 6.4
STRIP = 3.6
SHADE = 0.95
LABEL_SIZE = 6.0
VALUE_SIZE = 7.0
TEXT_STEP = float(VALUE_SIZE * LEADING / mm)
QR_TEXT = (
    "A autenticidade desta NFS-e pode ser verificada pela leitura deste código QR ou pela consulta da "
    "chave de acesso no portal nacional da NFS-e"
)
NO_VALIDITY = "NFS-e SEM VALIDADE JURÍDICA"


def render_danfse(xml: bytes, *, events: Sequence[bytes] = ()) -> bytes:
    """The DANFSe of an NFS-e Nacional as PDF bytes; :class:`PdfError` (Portuguese) for bad input."""
    return render_danfse_root(parsed(xml, "DANFSe"), events=events)


def render_danfse_root(root: etree._Element, *, events: Sequence[bytes] = ()) -> bytes:
    """:func:`render_danfse` of the XML already parsed."""
    return draw_danfse(read_danfse(root, events))


def draw_danfse(danfse: Danfse) -> bytes:
    out = io.BytesIO()
    canvas = new_canvas(out, A4, f"DANFSe {danfse.number} - {danfse.key}")
    page = _Page(Sheet(canvas, *A4), danfse)
    page.draw()
    canvas.save()
    return out.getvalue()


# The ISSQN and IBS/CBS blocks: (label, key of Danfse.issqn / Danfse.ibscbs), line by line.
Table = tuple[tuple[tuple[str, str], ...], ...]
MUNICIPAL: Table = (
    (("Tipo de Tributação do ISSQN", "taxation"), ("Município / Sigla UF / País da Incidência do ISSQN", "town")),
    (("Regime Especial de Tributação do ISSQN", "special"), ("Tipo de Imunidade do ISSQN", "immunity"),
     ("Suspensão da Exigibilidade do ISSQN", "suspension"), ("Número Processo Suspensão", "process")),
    (("Benefício Municipal", "benefit"), ("Cálculo do BM", "benefit_value"),
     ("Total Deduções/Reduções", "deductions"), ("Desconto Incondicionado", "discount")),
    (("BC ISSQN", "base"), ("Alíquota Aplicada", "rate"), ("Retenção do ISSQN", "retention"),
     ("ISSQN Apurado", "value")),
)  # fmt: skip
IBSCBS: Table = (
    (("CST / cClassTrib", "cst"),
     ("Indicador de Operação / Código IBGE Incidência / Município Incidência / Sigla UF", "operation")),
    (("Exclusões e Reduções da Base de Cálculo", "exclusions"), ("Base de Cálculo Após Exclusões e Reduções", "base"),
     ("Red. Alíquota IBS UF / Mun / CBS", "reductions"), ("Alíquota - IBS UF / IBS Mun", "ibs_rates")),
    (("Alíq. Efetiva Municipal - IBS", "ibs_mun_rate"), ("Valor Apurado Municipal - IBS", "ibs_mun"),
     ("Alíq. Efetiva Estadual - IBS", "ibs_uf_rate"), ("Valor Apurado Estadual - IBS", "ibs_uf")),
    (("Valor Total Apurado - IBS", "ibs_total"), ("Alíquota - CBS", "cbs_rate"),
     ("Alíquota Efetiva - CBS", "cbs_effective"), ("Valor Total Apurado - CBS", "cbs")),
)  # fmt: skip


class _Page:
    """One DANFSe page drawn top to bottom; ``y`` is the top of the next block (mm)."""

    def __init__(self, sheet: Sheet, danfse: Danfse) -> None:
        self.sheet = sheet
        self.d = danfse
        self.y = Y0

    def draw(self) -> None:
        sheet, d = self.sheet, self.d
        sheet.line_width(0.5)
        self._header()
        self._identification()
        self._provider()
        self._person_block("TOMADOR / ADQUIRENTE", d.taker, "TOMADOR/ADQUIRENTE DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e")
        if d.recipient is None:
            self._strip(
                "O DESTINATÁRIO É O PRÓPRIO TOMADOR/ADQUIRENTE DA OPERAÇÃO"
                if d.taker
                else "DESTINATÁRIO DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e"
            )
        else:
            self._person_block("DESTINATÁRIO DA OPERAÇÃO", d.recipient, "", registration=False)
        self._person_block(
            "INTERMEDIÁRIO DA OPERAÇÃO", d.intermediary, "INTERMEDIÁRIO DA OPERAÇÃO NÃO IDENTIFICADO NA NFS-e"
        )
        self._service()
        self._municipal()
        self._federal()
        if d.ibscbs is not None:
            self._ibscbs()
        self._totals()
        self._additional()
        sheet.line_width(1.0)
        sheet.rect(X0, Y0, W, H)
        self._marks()

    # ------------------------------------------------------------ primitives over the Sheet

    def _rule(self) -> None:
        self.sheet.line_width(0.5)
        self.sheet.hline(X0, self.y, W)

    def _shade(self, x: float, y: float, w: float, h: float) -> None:
        canvas = self.sheet.canvas
        canvas.saveState()
        canvas.setFillGray(SHADE)
        canvas.rect(x * mm, (self.sheet.height - y - h) * mm, w * mm, h * mm, stroke=0, fill=1)
        canvas.restoreState()

    def _field(
        self,
        col: int,
        span: int,
        label: str,
        value: str,
        *,
        shaded: bool = False,
        y: float | None = None,
        label_size: float = LABEL_SIZE,
        h: float = ROW,
    ) -> None:
        top = self.y if y is None else y
        x, w = X0 + col * COL, span * COL
        if shaded:
            self._shade(x, top, w, h)
        label_h = label_size * LEADING / mm + 0.1
        self.sheet.block(
            x + 0.8,
            top + 0.3,
            w - 1.6,
            label_h,
            label,
            label_size,
            bold=True,
            min_size=4.5,
            wrap_lines=False,
            ellipsis=True,
        )
        value_top = top + 0.4 + label_h
        self.sheet.block(
            x + 0.8,
            value_top,
            w - 1.6,
            top + h - value_top,
            value or "-",
            VALUE_SIZE,
            min_size=5.5,
            wrap_lines=False,
            ellipsis=True,
        )

    def _title(self, text: str, h: float = ROW) -> None:
        self._shade(X0, self.y, COL, h)
        self.sheet.block(
            X0 + 0.8, self.y, COL - 1.6, h, text, 7.0, bold=True, valign="middle", wrap_lines=False, min_size=5.5
        )

    def _strip(self, text: str) -> None:
        self.sheet.block(
            X0,
            self.y + 0.2,
            W,
            STRIP - 0.3,
            text,
            7.0,
            bold=True,
            align="center",
            valign="middle",
            wrap_lines=False,
            min_size=5.5,
        )
        self.y += STRIP
        self._rule()

    def _paragraph(self, x: float, y: float, w: float, h: float, text: str, size: float = VALUE_SIZE) -> float:
        """Wrapped text in a box, the last line cut with "..." when it does not fit; returns its height."""
        fitted = fit(sanitize(text), w * mm, h * mm, size, min_size=size, ellipsis=True)
        self.sheet.draw_lines(x, y, w, h, fitted, bold=False, align="left", valign="top")
        return float(len(fitted.lines) * fitted.size * LEADING / mm)

    # ------------------------------------------------------------ blocks

    def _header(self) -> None:
        sheet, d = self.sheet, self.d
        band = 12.0
        self._shade(X0, self.y, W, band)
        canvas = sheet.canvas
        canvas.saveState()
        canvas.setFillColorRGB(0.13, 0.35, 0.55)
        canvas.setFont(BOLD, 17)
        canvas.drawString((X0 + 2.0) * mm, (sheet.height - self.y - 8.6) * mm, "NFS-e")
        canvas.setFont(REGULAR, 5.6)
        canvas.drawString((X0 + 22.5) * mm, (sheet.height - self.y - 5.2) * mm, "Nota Fiscal de")
        canvas.drawString((X0 + 22.5) * mm, (sheet.height - self.y - 7.6) * mm, "Serviço Eletrônica")
        canvas.restoreState()
        sheet.block(X0 + COL, self.y + 1.2, 2 * COL, 3.6, "DANFSe v2.0", 9.0, bold=True, align="center")
        sheet.block(X0 + COL, self.y + 4.8, 2 * COL, 3.6, "Documento Auxiliar da NFS-e", 9.0, bold=True, align="center")
        if d.restricted:
            canvas.saveState()
            canvas.setFillColorRGB(0.8, 0.0, 0.0)
            sheet.block(X0 + COL, self.y + 8.5, 2 * COL, 3.2, NO_VALIDITY, 8.0, bold=True, align="center")
            canvas.restoreState()
        right = X0 + 3 * COL + 0.8
        if d.header_town:
            sheet.block(
                right,
                self.y + 1.0,
                COL - 1.6,
                3.4,
                f"Município: {d.header_town}",
                8.0,
                wrap_lines=False,
                ellipsis=True,
                min_size=6.0,
            )
        sheet.block(
            right, self.y + 6.0, COL - 1.6, 2.6, f"Ambiente Gerador: {d.generator}", 6.0, wrap_lines=False, min_size=4.5
        )
        sheet.block(
            right,
            self.y + 8.8,
            COL - 1.6,
            2.6,
            f"Tipo de Ambiente: {d.environment_name}",
            6.0,
            wrap_lines=False,
            min_size=4.5,
        )
        self.y += band
        self._rule()

    def _identification(self) -> None:
        sheet, d = self.sheet, self.d
        top = self.y
        sheet.block(X0 + 0.8, top + 0.8, 3 * COL, 2.8, "CHAVE DE ACESSO DA NFS-e", 7.0, bold=True)
        sheet.block(X0 + 0.8, top + 3.8, 3 * COL - 1.6, 3.0, d.key, 7.5, wrap_lines=False)
        rows = top + 7.6
        step = 6.9
        grid = (
            (
                ("NÚMERO DA NFS-e", d.number),
                ("COMPETÊNCIA DA NFS-e", d.competence),
                ("DATA E HORA DA EMISSÃO DA NFS-e", d.issued_at),
            ),
            (
                ("NÚMERO DA DPS", d.dps_number),
                ("SÉRIE DA DPS", d.dps_serie),
                ("DATA E HORA DA EMISSÃO DA DPS", d.dps_issued_at),
            ),
            (("EMITENTE DA NFS-e", d.emitter_type), ("SITUAÇÃO DA NFS-e", d.status), ("FINALIDADE", d.purpose)),
        )
        for r, row in enumerate(grid):
            for c, (label, value) in enumerate(row):
                self._field(c, 1, label, value, y=rows + r * step, label_size=6.5, h=step, shaded=(r == 2 and c == 0))
        qr = 20.0
        qx = X0 + 3 * COL + (COL - qr) / 2
        draw_qr(sheet.canvas, qx * mm, (sheet.height - top - 1.0 - qr) * mm, qr * mm, nfse_consultation_url(d.key))
        self._paragraph(X0 + 3 * COL + 0.8, top + qr + 1.4, COL - 1.6, 7.5, QR_TEXT, 5.6)
        self.y = rows + 3 * step
        self._rule()

    def _person_rows(self, person: Person, *, registration: bool = True) -> None:
        self._field(1, 1, "CNPJ / CPF / NIF", person.doc)
        if registration:
            self._field(2, 1, "Inscrição Municipal", person.municipal_id)
        self._field(3, 1, "Telefone", person.phone)
        self.y += ROW
        self._field(0, 2, "Nome / Nome Empresarial", person.name)
        self._field(2, 1, "Município / Sigla UF", person.town)
        self._field(3, 1, "Código IBGE / CEP", person.ibge_cep)
        self.y += ROW
        self._field(0, 2, "Endereço", person.address)
        self._field(2, 2, "E-mail", person.email)
        self.y += ROW

    def _provider(self) -> None:
        self._title("PRESTADOR / FORNECEDOR")
        self._person_rows(self.d.provider)
        self._field(0, 2, "Simples Nacional na Data de Competência", self.d.simples)
        self._field(2, 2, "Regime de Apuração Tributária pelo SN", self.d.simples_regime)
        self.y += ROW
        self._rule()

    def _person_block(self, title: str, person: Person | None, absent: str, *, registration: bool = True) -> None:
        if person is None:
            self._strip(absent)
            return
        self._title(title)
        self._person_rows(person, registration=registration)
        self._rule()

    def _reserved_below_service(self) -> float:
        d = self.d
        height = (4 * ROW if d.issqn else STRIP) + ROW * (2 if d.show_pis_cofins else 1)
        height += 4 * ROW if d.ibscbs is not None else 0.0
        return height + 2 * ROW + STRIP + 4 * TEXT_STEP + 1.0

    def _service(self) -> None:
        d = self.d
        self._title("SERVIÇO PRESTADO")
        self._field(1, 1, "Código de Tributação Nacional / Municipal", d.service_code)
        self._field(2, 1, "Código da NBS", d.nbs)
        self._field(3, 1, "Local da Prestação / Sigla UF / País", d.service_place)
        self.y += ROW
        self.y += self._paragraph(X0 + 0.8, self.y + 0.4, W - 1.6, 2 * TEXT_STEP, d.service_code_text) + 0.6
        self.sheet.block(X0 + 0.8, self.y + 0.3, W - 1.6, 2.6, "Descrição do Serviço", LABEL_SIZE, bold=True)
        self.y += 3.0
        room = Y0 + H - self._reserved_below_service() - self.y
        used = self._paragraph(X0 + 0.8, self.y + 0.2, W - 1.6, max(TEXT_STEP, min(room, 30.0)), d.description)
        self.y += max(used, TEXT_STEP) + 1.0
        self._rule()

    def _municipal(self) -> None:
        if self.d.issqn is None:
            self._strip("TRIBUTAÇÃO MUNICIPAL (ISSQN) - OPERAÇÃO NÃO SUJEITA AO ISSQN")
            return
        self._table("TRIBUTAÇÃO MUNICIPAL (ISSQN)", self.d.issqn, MUNICIPAL)

    def _table(self, title: str, values: dict[str, str], cells: Table) -> None:
        """A titled block: a line of two fields (the second twice as wide) from column 1, then
        lines of four; ``cells`` are (label, key in ``values``)."""
        self._title(title)
        (first_label, first), (second_label, second) = cells[0]
        self._field(1, 1, first_label, values[first])
        self._field(2, 2, second_label, values[second])
        self.y += ROW
        for line in cells[1:]:
            self._row(tuple((label, values[key]) for label, key in line))
        self._rule()

    def _row(self, cells: Sequence[tuple[str, str]]) -> None:
        for c, (label, value) in enumerate(cells):
            self._field(c, 1, label, value)
        self.y += ROW

    def _federal(self) -> None:
        f = self.d.federal
        self._title("TRIBUTAÇÃO FEDERAL (EXCETO CBS)")
        self._field(1, 1, "IRRF", f["irrf"])
        self._field(2, 1, "Contribuição Previdenciária - Retida", f["cp"])
        self._field(3, 1, "Contribuições Sociais - Retidas", f["csll"])
        self.y += ROW
        if self.d.show_pis_cofins:
            self._field(0, 1, "PIS - Débito Apuração Própria", f["pis"])
            self._field(1, 1, "COFINS - Débito Apuração Própria", f["cofins"])
            self._field(2, 2, "Descrição Contrib. Sociais - Retidas", f["retention"])
            self.y += ROW
        self._rule()

    def _ibscbs(self) -> None:
        self._table("TRIBUTAÇÃO IBS / CBS", self.d.ibscbs or {}, IBSCBS)

    def _totals(self) -> None:
        t = self.d.totals
        self._title("VALOR TOTAL DA NFS-E")
        self._field(1, 1, "Valor da Operação / Serviço", t["service"])
        self._field(2, 1, "Desconto Incondicionado", t["unconditional"])
        self._field(3, 1, "Desconto Condicionado", t["conditional"])
        self.y += ROW
        self._field(0, 1, "Total das Retenções (ISSQN / Federais)", t["retentions"])
        self._field(1, 1, "Valor Líquido da NFS-e", t["net"])
        self._field(2, 1, "Total do IBS/CBS", t["ibscbs"])
        self._field(3, 1, "Valor Líquido da NFS-e + IBS/CBS", t["net_ibscbs"], shaded=True)
        self.y += ROW
        self._rule()

    def _additional(self) -> None:
        """The optional fields fill what the page has left, cut with "..."; the approximate taxes
        line always closes the block (NT 008), so it is placed first, at the foot."""
        self.sheet.block(X0 + 0.8, self.y + 0.5, W - 1.6, 3.0, "INFORMAÇÕES COMPLEMENTARES", 7.0, bold=True)
        self.y += STRIP + 0.2
        bottom = Y0 + H - 1.0
        approx = fit(sanitize(self.d.approx_taxes), (W - 1.6) * mm, 20 * mm, VALUE_SIZE, min_size=VALUE_SIZE)
        approx_h = len(approx.lines) * approx.size * LEADING / mm
        body = self.d.additional
        if body:
            used = self._paragraph(X0 + 0.8, self.y, W - 1.6, bottom - self.y - approx_h, f"{body} |")
            self.y += used
        self.sheet.draw_lines(X0 + 0.8, self.y, W - 1.6, approx_h + 0.5, approx, bold=False, align="left", valign="top")

    def _marks(self) -> None:
        d = self.d
        text = "SUBSTITUÍDA" if d.substituted else "CANCELADA" if d.cancelled else ""
        if not text:
            return
        canvas = self.sheet.canvas
        width, height = A4
        canvas.saveState()
        canvas.translate(width / 2, height / 2)
        canvas.rotate(55)
        canvas.setFillColorRGB(0, 0, 0, alpha=0.35)
        canvas.setFont(REGULAR, 64)
        canvas.drawCentredString(0, -22, text)
        canvas.restoreState()
