"""The PDF foundation: embedded fonts, the sanitiser, text fitting, pt-BR formats, dispatch."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from app.pdf import PdfError, document_type, render_pdf
from app.pdf import formats as fmt
from app.pdf.fonts import SUBSTITUTE, sanitize, width
from app.pdf.layout import Sheet, fit, new_canvas
from tests.pdf.pdftools import flat, page_texts

HOSTILE = "Ação ç ã º ª € nº 1ª \x00\x07\x1b tab\there 😀 👨\u200d👩\u200d👧 \U0001fae0 \ufeff fim"


def test_sanitiser_keeps_portuguese_and_drops_controls() -> None:
    clean = sanitize(HOSTILE)
    for kept in ("Ação", "ç", "ã", "º", "ª", "€", "nº 1ª", "tab here", "fim"):
        assert kept in clean
    assert not any(ord(ch) < 32 for ch in clean)
    assert "\u200d" not in clean and "\ufeff" not in clean
    assert SUBSTITUTE in clean  # the melting face (no glyph) is shown as "�", not dropped


def test_sanitiser_keeps_newlines_only_when_asked() -> None:
    assert sanitize("a\nb") == "a b"
    assert sanitize("a\r\nb", keep_newlines=True) == "a \nb"


def _sheet() -> tuple[io.BytesIO, Canvas, Sheet]:
    out = io.BytesIO()
    canvas = new_canvas(out, A4, "teste")
    return out, canvas, Sheet(canvas, *A4)


def test_hostile_text_draws_and_reads_back_with_fonts_embedded() -> None:
    out, canvas, sheet = _sheet()
    sheet.field(10, 10, 120, 12, "Razão social", HOSTILE)
    canvas.showPage()
    canvas.save()
    text = flat(page_texts(out.getvalue())[0])
    assert "Ação ç ã º ª €" in text
    fonts = PdfReader(io.BytesIO(out.getvalue())).pages[0]["/Resources"]["/Font"]
    names = [str(f.get_object()["/BaseFont"]) for f in fonts.values()]
    assert names and all("DejaVuSansCondensed" in n for n in names)  # embedded subsets, never Helvetica


def test_long_text_shrinks_then_wraps_inside_its_box() -> None:
    text = "COMERCIO DE PRODUTOS ALIMENTICIOS E BEBIDAS DO VALE DO PARAIBA LTDA " * 3
    box_w, box_h = 60 * mm, 9 * mm
    fitted = fit(sanitize(text), box_w, box_h, 8.0, min_size=5.0)
    assert not fitted.cut
    assert len(fitted.lines) > 1
    assert all(width(line, fitted.size) <= box_w + 0.01 for line in fitted.lines)
    assert len(fitted.lines) * fitted.size * 1.15 <= box_h + 0.01
    assert " ".join(fitted.lines).split() == text.split()  # nothing lost


def test_short_overflow_shrinks_on_one_line() -> None:
    fitted = fit("1.234.567,89", 14 * mm, 4 * mm, 8.0, min_size=5.0)
    assert fitted.lines == ("1.234.567,89",) and fitted.size < 8.0


def test_text_is_cut_with_dots_only_where_the_layout_says() -> None:
    text = "palavra " * 200
    cut = fit(text, 40 * mm, 6 * mm, 7.0, min_size=6.0, ellipsis=True)
    assert cut.cut and cut.lines[-1].endswith("...")
    assert all(width(line, cut.size) <= 40 * mm + 0.01 for line in cut.lines)


def test_formats_follow_pt_br() -> None:
    assert fmt.money("1234567.5") == "1.234.567,50"
    assert fmt.money(None) == "0,00"
    assert fmt.money("abc") == "abc"
    assert fmt.quantity("3.0000") == "3,00" and fmt.quantity("1.2345") == "1,2345"
    assert fmt.cnpj("12ABC34501DE35") == "12.ABC.345/01DE-35"
    assert fmt.tax_id("12345678909") == "123.456.789-09"
    assert fmt.date("2026-12-01T10:20:30-03:00") == "01/12/2026"
    assert fmt.time("2026-12-01T10:20:30-03:00") == "10:20:30"
    assert fmt.cep("01310100") == "01310-100"
    assert fmt.money("9" * 60) == "999.999.999.999.999.999.999.999.999.999.999.999.999.999.999.999.999.999.999.999,00"
    assert fmt.quantity("1e999999999") and fmt.decimal("NaN") == "NaN"  # absurd values print, never raise
    assert fmt.key_groups("3519 0602427026001207570040000522031000522035").count(" ") == 10


def test_what_is_not_a_document_is_refused_in_portuguese() -> None:
    with pytest.raises(PdfError, match="Não há PDF para este documento"):
        render_pdf(b"<a/>")
    with pytest.raises(PdfError, match="XML ilegível"):
        render_pdf(b"<a>")


def test_dispatch_by_root() -> None:
    assert document_type(b'<nfeProc xmlns="http://www.portalfiscal.inf.br/nfe"/>') == "DANFE"
    assert document_type(b'<cteProc xmlns="http://www.portalfiscal.inf.br/cte"/>') == "DACTE"
    assert document_type(b'<NFSe xmlns="http://www.sped.fazenda.gov.br/nfse"/>') == "DANFSe"
