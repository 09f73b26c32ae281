"""The report "Créditos de IBS e CBS por empresa e mês": a month of received NF-e (a normal one,
a nota de crédito, a nota de débito, one with an unreadable value, one without the reform's
groups, one cancelled), stored through the capture's own inputs into a real SQLite file; totals
equal the sums over the documents sheet; XLSX cells are typed; the CSV is two files."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from openpyxl import load_workbook

from app.capture.engine import inputs
from app.core.clock import FakeClock
from app.core.ids import Cnpj
from app.core.keys import key44_check_digit
from app.core.products import Product
from app.documents.model import NfeMeta
from app.documents.nfe import read_nfe_document
from app.export.reform_report import DOCUMENT_HEADERS, MONEY, TOTAL_HEADERS
from app.export.reports import Filters, Reports
from app.export.sheets import save
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.records import Company
from app.store.unit import write_unit

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nfe"
REFORM = (FIXTURES / "nfe_reforma_tributaria.xml").read_bytes()
OLD = (FIXTURES / "41170706117473000150550010000463202612756525-procNFe.xml").read_bytes()
REFORM_KEY = "15231207933914000154550010006643501427015088"
OLD_KEY = "41170706117473000150550010000463202612756525"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "dados" / "captura.db", clock=FakeClock())
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def company(db: Database) -> Company:
    return CompanyRepository(db).add(Cnpj.from_body("112223330001"), "Alfa Comércio Ltda", certificate_ref="c")


def _variant(data: bytes, key: str, number: int, issued: str, *swaps: tuple[bytes, bytes]) -> bytes:
    body = key[:25] + f"{number:09d}" + key[34:43]
    new_key = body + str(key44_check_digit(body))
    data = data.replace(key.encode(), new_key.encode())
    start = data.index(b"<dhEmi>") + len(b"<dhEmi>")
    data = data[:start] + issued.encode() + data[data.index(b"</dhEmi>") :]
    for old, new in swaps:
        assert old in data
        data = data.replace(old, new)
    return data


def _store(db: Database, company: Company, *documents: bytes) -> None:
    items = []
    for nsu, data in enumerate(documents, start=1):
        meta = read_nfe_document(data)
        assert isinstance(meta, NfeMeta)
        items.append(
            inputs.document(Product.NFE, company.cnpj, meta, data, nsu, "procNFe_v4.00.xsd", None, shown=None,
                            situation=None)
        )  # fmt: skip
    with write_unit(db) as unit:
        unit.store_lot(company.id, items)


def _month(db: Database, company: Company) -> None:
    january = "2026-01-15T10:00:00-03:00"
    _store(
        db,
        company,
        _variant(REFORM, REFORM_KEY, 1, january),
        _variant(REFORM, REFORM_KEY, 2, january, (b"<finNFe>1</finNFe>", b"<finNFe>5</finNFe>")),
        _variant(REFORM, REFORM_KEY, 3, january, (b"<finNFe>1</finNFe>", b"<finNFe>6</finNFe>")),
        _variant(REFORM, REFORM_KEY, 4, january, (b"<vCBS>87.29</vCBS>", b"<vCBS>87,29</vCBS>")),
        _variant(OLD, OLD_KEY, 5, january),
        _variant(REFORM, REFORM_KEY, 6, "2026-02-01T01:00:00-03:00"),  # February in Brasília
        _variant(REFORM, REFORM_KEY, 7, "2025-12-31T23:00:00-03:00"),  # before the period
    )


def _column(name: str) -> int:
    return TOTAL_HEADERS.index(name)


def test_totals_equal_the_sums_over_the_documents_sheet(db: Database, company: Company) -> None:
    _month(db, company)
    totals, documents = Reports(db).ibs_cbs(Filters((), (), date(2026, 1, 1), date(2026, 2, 28)))
    assert [tuple(r[2:4]) for r in totals.rows] == [(date(2026, 1, 1), "NF-e"), (date(2026, 2, 1), "NF-e")]
    january = totals.rows[0]
    assert january[_column("Documentos com IBS/CBS") : _column("Valores ilegíveis") + 1] == [3, 1, 1, 1, 1]
    # normal + débito − crédito: one document's values; a reader of the XML finds IBS 50,00, CBS 87,29
    assert january[_column("IBS total (R$)")] == Decimal("50.00")
    assert january[_column("CBS (R$)")] == Decimal("87.29")
    assert january[_column("IBS estadual (R$)")] == Decimal("30.00")
    assert january[_column("IBS municipal (R$)")] == Decimal("40.00")
    assert january[_column("Imposto Seletivo (R$)")] == Decimal("1000.00")
    assert january[_column("Crédito presumido IBS (R$)")] == Decimal("43.10")
    assert january[_column("CBS em notas de crédito (R$)")] == Decimal("87.29")
    assert january[_column("IBS em notas de débito (R$)")] == Decimal("50.00")

    sums: dict[tuple[object, ...], dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    first_money = DOCUMENT_HEADERS.index(MONEY[0][1])
    for row in documents.rows:
        for offset, (_, title) in enumerate(MONEY):
            value = row[first_money + offset]
            if value is not None:
                assert isinstance(value, Decimal)
                sums[tuple(row[:4])][title] += value
    assert len(documents.rows) == 5  # 3 read + 1 unreadable in January, 1 in February
    unreadable = [row for row in documents.rows if row[DOCUMENT_HEADERS.index("Valores")] != "lidos"]
    assert len(unreadable) == 1 and all(v is None for v in unreadable[0][first_money:])
    for row in totals.rows:
        for _, title in MONEY:
            assert row[_column(title)] == sums[tuple(row[:4])][title], title


def test_xlsx_cells_are_typed_and_csv_is_two_files(db: Database, company: Company, tmp_path: Path) -> None:
    _month(db, company)
    sheets = Reports(db).ibs_cbs(Filters((company.id,), (Product.NFE,), date(2026, 1, 1), date(2026, 1, 31)))
    target = tmp_path / "créditos.xlsx"
    assert save(sheets, target, csv_format=False) == [target]
    book = load_workbook(target)
    assert book.sheetnames == ["Créditos IBS e CBS", "Documentos"]
    row = [cell.value for cell in book["Créditos IBS e CBS"][2]]
    assert row[2].year == 2026 and row[2].month == 1  # a date cell
    assert row[_column("Documentos com IBS/CBS")] == 3
    assert abs(row[_column("CBS (R$)")] - 87.29) < 1e-9  # a number cell
    written = save(sheets, tmp_path / "creditos.csv", csv_format=True)
    assert [p.name for p in written] == ["creditos.csv", "creditos-documentos.csv"]
    text = written[0].read_bytes().decode("utf-8-sig")
    assert text.splitlines()[0].startswith("CNPJ da empresa;Empresa;Mês")
    assert ";87,29;" in text.splitlines()[1]
    assert len(written[1].read_text(encoding="utf-8-sig").splitlines()) == 1 + 4
