"""The key's barcode: Code 128C for numeric keys, hybrid A/C for alphanumeric CNPJs; decoded back."""

from __future__ import annotations

import io

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from app.core.keys import AccessKey
from app.pdf.barcode import CODE_A, CODE_C, MIN_MODULE, START_A, START_C, STOP, code128_values, draw_code128
from tests.pdf.pdftools import barcodes, page_images

NUMERIC = "35190602427026001207570040000522031000522035"
ALNUM = "35261212ABC34501DE35550010000001231000000127"  # CNPJ 12.ABC.345/01DE-35 (2026 layout)
START_B, CODE_B = 104, 100


def _symbol_subsets(values: list[int]) -> set[str]:
    """Which subsets the data symbols use (start and switches tell)."""
    used = {"C" if values[0] == START_C else "A" if values[0] == START_A else "B"}
    for v in values[1:-2]:
        if v == CODE_A:
            used.add("A")
        elif v == CODE_C:
            used.add("C")
        elif v == CODE_B:
            used.add("B")
    return used


def _pdf_with_barcode(key: str, width_mm: float = 85.0) -> tuple[bytes, float]:
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=A4)
    module = draw_code128(canvas, 20 * mm, 200 * mm, width_mm * mm, 12 * mm, key)
    canvas.showPage()
    canvas.save()
    return out.getvalue(), module


def test_numeric_key_is_pure_code_128c() -> None:
    values = code128_values(NUMERIC)
    assert values[0] == START_C and values[-1] == STOP
    assert _symbol_subsets(values) == {"C"}
    assert len(values) == 1 + 22 + 2  # start, 22 pairs, checksum, stop


def test_alphanumeric_key_uses_subsets_a_and_c_only() -> None:
    AccessKey(ALNUM)  # a valid key with an alphanumeric CNPJ
    values = code128_values(ALNUM)
    assert _symbol_subsets(values) == {"A", "C"}
    assert START_B not in values[:1] and CODE_B not in values[1:-2]


def test_checksum_follows_the_standard() -> None:
    values = code128_values("12")  # start C (105) + pair 12: (105 + 1*12) % 103 = 14
    assert values == [START_C, 12, 14, STOP]


@pytest.mark.parametrize("key", [NUMERIC, ALNUM], ids=["numerica", "alfanumerica"])
def test_barcode_decodes_back_to_the_key(key: str) -> None:
    pdf, module = _pdf_with_barcode(key)
    assert module >= MIN_MODULE
    assert module / mm >= 0.2
    found = barcodes(page_images(pdf, dpi=300)[0])
    assert ("Code128", key) in found, found


def test_a_narrow_box_keeps_bars_at_least_0_2_mm() -> None:
    _pdf, module = _pdf_with_barcode(ALNUM, width_mm=30.0)
    assert module == pytest.approx(MIN_MODULE)


def test_what_code_128_a_cannot_carry_is_refused() -> None:
    with pytest.raises(ValueError, match="Code 128 A"):
        code128_values("chave")  # lower case is subset B
