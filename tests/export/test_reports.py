"""Reports from real captured NF-e, opened back with openpyxl: numbers are numbers, dates are dates."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

from openpyxl import load_workbook

from app.export.reports import Filters, Reports
from app.export.sheets import save, to_csv
from app.store.records import Product
from app.store.recoveries import GapRecoveryRepository
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


def _captured(harness: Harness, count: int = 2) -> list[str]:
    keys = [str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(count)]
    harness.run_pending()
    harness.clock.advance(timedelta(hours=1, minutes=5))
    return keys


def test_the_document_list_has_one_typed_sheet_per_product(harness: Harness, tmp_path: Path) -> None:
    keys = _captured(harness)
    target = tmp_path / "documentos.xlsx"

    save(Reports(harness.office.db).documents(Filters()), target, csv_format=False)

    book = load_workbook(target)
    assert book.sheetnames == ["NF-e", "CT-e", "NFS-e"]
    sheet = book["NF-e"]
    header = [c.value for c in sheet[1]]
    rows = [[c for c in row] for row in sheet.iter_rows(min_row=2)]
    assert len(rows) == 2 and book["CT-e"].max_row == 1
    column = {name: header.index(name) for name in header}
    stored = {k: harness.ctx.documents.find(harness.company.id, Product.NFE, k) for k in keys}
    for row in rows:
        key = row[column["Chave de acesso"]].value
        doc = stored[key]
        assert doc is not None and doc.total_cents is not None and doc.issued_at is not None
        value = row[column["Valor (R$)"]]
        assert value.data_type == "n" and Decimal(str(value.value)) == Decimal(doc.total_cents) / 100
        assert value.number_format == "#,##0.00"
        issued = row[column["Emissão"]]
        assert isinstance(issued.value, datetime) and issued.is_date
        own_offset = timezone(timedelta(minutes=doc.issued_offset_minutes or 0))
        assert issued.value == doc.issued_at.astimezone(own_offset).replace(tzinfo=None)  # as printed on it
        assert isinstance(row[column["NSU"]].value, int) and isinstance(row[column["Número"]].value, int)
        assert row[column["CNPJ da empresa"]].value == RECIPIENT  # kept as text: leading zeros survive


def test_the_monthly_summary_counts_and_totals(harness: Harness, tmp_path: Path) -> None:
    keys = _captured(harness, 3)
    target = tmp_path / "resumo.xlsx"
    save(Reports(harness.office.db).summary(Filters()), target, csv_format=False)

    sheet = load_workbook(target)["Resumo mensal"]
    [row] = [[c.value for c in r] for r in sheet.iter_rows(min_row=2)]
    total = sum(harness.ctx.documents.find(harness.company.id, Product.NFE, k).total_cents for k in keys)  # type: ignore[union-attr]
    cnpj, _name, month, product, content, direction, count, cancelled, value = row
    assert (cnpj, product, content, direction, count, cancelled) == (RECIPIENT, "NF-e", "resumo", "recebida", 3, 0)
    assert isinstance(month, datetime) and month.day == 1  # a date cell: the first day of the month
    assert Decimal(str(value)) == Decimal(total) / 100


def test_gaps_and_open_deadlines(harness: Harness, tmp_path: Path) -> None:
    keys = _captured(harness, 2)
    GapRecoveryRepository(harness.office.db).add(
        harness.company.id, Product.NFE, next_attempt_at=harness.clock.now(), nsus=(7, 9)
    )
    reports = Reports(harness.office.db)

    gaps = reports.gaps(Filters())[0]
    assert [(r[3], r[5], r[6]) for r in gaps.rows] == [(7, "pendente", 0), (9, "pendente", 0)]

    [deadlines] = reports.deadlines(Filters(), harness.clock.now())
    assert sorted(r[2] for r in deadlines.rows) == sorted(keys)
    assert {r[8] for r in deadlines.rows} == {"Ciência da Operação"}
    assert all(isinstance(r[10], int) and 0 <= r[10] <= 10 for r in deadlines.rows)
    # Once the Ciência is registered, the conclusive deadline (90 days) is the one left.
    harness.sandbox.publish_nfe_event(keys[0], "210210")
    harness.run_pending()
    [after] = Reports(harness.office.db).deadlines(Filters(), harness.clock.now())
    by_key = {r[2]: r for r in after.rows}
    assert by_key[keys[0]][8] != "Ciência da Operação" and by_key[keys[0]][10] > 10
    target = tmp_path / "prazos.xlsx"
    save([after], target, csv_format=False)
    cell = load_workbook(target).active.cell(row=2, column=10)
    assert cell.is_date


def test_csv_is_what_excel_in_portuguese_opens(harness: Harness) -> None:
    _captured(harness, 1)
    text = to_csv(Reports(harness.office.db).documents(Filters(products=(Product.NFE,)))).decode("utf-8")
    assert text.startswith("\ufeffCNPJ da empresa;Empresa;")
    [_, line] = text.strip().split("\r\n")
    fields = line.split(";")
    assert "," in fields[14] and "." not in fields[14]  # decimal comma
    assert fields[9][2] == "/" and fields[9][5] == "/"  # dd/mm/aaaa hh:mm
