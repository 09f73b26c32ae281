"""The streaming XLSX writer (``app.export.xlsx``) read back with openpyxl: typed cells, formats,
the frozen header, widths, empty cells left out, text that XML cannot hold made safe."""

from __future__ import annotations

import io
from datetime import date, datetime
from decimal import Decimal

from openpyxl import load_workbook

from app.export.sheets import Sheet, to_xlsx


def test_cells_come_back_typed_and_formatted() -> None:
    rows = [
        [Decimal("1234.56"), date(2026, 11, 30), datetime(2026, 11, 30, 19, 42), 7, "A & B <ltda>", None, "fim"],
        [Decimal("-0.05"), None, None, 0, "tab\there\x01bell", "", "x" * 300],
    ]
    headers = ["Valor", "Dia", "Emissão", "Qtd", "Nome", "Vazio", "Longo"]
    book = load_workbook(io.BytesIO(to_xlsx([Sheet("Créditos & débitos", headers, rows), Sheet("Outra", ["a"])])))
    assert book.sheetnames == ["Créditos & débitos", "Outra"]
    page = book["Créditos & débitos"]
    assert [c.value for c in page[1]] == headers and page["A1"].font.b
    first = [c.value for c in page[2]]
    assert first == [1234.56, datetime(2026, 11, 30), datetime(2026, 11, 30, 19, 42), 7, "A & B <ltda>", None, "fim"]
    assert [page[f"{c}2"].number_format for c in "ABC"] == ["#,##0.00", "dd/mm/yyyy", "dd/mm/yyyy hh:mm"]
    second = [c.value for c in page[3]]
    assert second[0] == -0.05 and second[1:3] == [None, None] and second[3] == 0
    assert second[4] == "tab\therebell"  # a control character XML cannot carry is dropped, the tab kept
    assert page.freeze_panes == "A2"
    assert page.column_dimensions["G"].width == 60 and page.column_dimensions["D"].width == len("Qtd") + 2
    assert page.max_row == 3
    assert [c.value for c in book["Outra"][1]] == ["a"] and book["Outra"].max_row == 1


def test_no_sheets_is_one_saying_so() -> None:
    book = load_workbook(io.BytesIO(to_xlsx([])))
    assert book.sheetnames == ["Vazio"] and book["Vazio"]["A1"].value == "Nenhum registro"
