"""Real NF-e, CT-e and an event from tests/fixtures through the capture's own processing into a
real SQLite file, then exported: named by key, byte-exact, once."""

from __future__ import annotations

import base64
import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.capture.cte.processing import process_document as process_cte
from app.capture.nfe.processing import process_document as process_nfe
from app.core.clock import FakeClock
from app.core.ids import Cnpj
from app.export.manual import Selection, export_selection
from app.fiscal.distribution import decode_document
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.documents import DocumentRepository
from tests.export.conftest import files_under

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NFE = [
    "41170706117473000150550010000463202612756525-procNFe.xml",
    "42210775277525000178550030000266631762885493-procNFe.xml",
]
CTE = ["bfr-dacte_test_1.xml"]  # the other cteProc fixtures share its key
EVENT = "procEventoNFe-210200-real-2016.xml"
OFFICE = Cnpj.from_body("112223330001")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "captura.sqlite3", clock=FakeClock())
    try:
        yield database
    finally:
        database.close()


def _stored(db: Database) -> int:
    company = CompanyRepository(db).add(OFFICE, "ESCRITORIO CLIENTE LTDA")
    repo = DocumentRepository(db)
    nsu = 0
    for folder, names, schema, process in (
        ("nfe", [*NFE, EVENT], None, process_nfe),
        ("cte", CTE, "procCTe_v4.00.xsd", process_cte),
    ):
        for name in names:
            nsu += 1
            xml = (FIXTURES / folder / name).read_bytes()
            kind = schema or ("procEventoNFe_v1.00.xsd" if name == EVENT else "procNFe_v4.00.xsd")
            text = base64.b64encode(gzip.compress(xml)).decode("ascii")
            item = process(OFFICE, decode_document(nsu, kind, text))
            repo.store_batch(company.id, [item])
    return company.id


def test_real_documents_are_exported_by_key_byte_exact_and_once(db: Database, tmp_path: Path) -> None:
    _stored(db)
    destination = tmp_path / "saida"

    report = export_selection(db, destination, Selection(), pattern="{produto}/{tipo}/{chave}.xml")

    names = files_under(destination)
    nfe_keys = [n.split("-")[0] for n in NFE]
    assert [f"NFe/NFe/{k}-procNFe.xml" for k in sorted(nfe_keys)] == [n for n in names if n.startswith("NFe/NFe/")]
    [event] = [n for n in names if "/Eventos/" in n]
    assert event.endswith("-210200-1.xml")
    ctes = [n for n in names if n.startswith("CTe/CTe/")]
    assert ctes == ["CTe/CTe/42240302484555000343570020003396861082134657.xml"]
    assert (destination / ctes[0]).read_bytes() == (FIXTURES / "cte" / CTE[0]).read_bytes()
    for name, fixture in zip(sorted(nfe_keys), sorted(NFE), strict=True):
        assert (destination / f"NFe/NFe/{name}-procNFe.xml").read_bytes() == (FIXTURES / "nfe" / fixture).read_bytes()
    assert report.documents == 3 and report.events == 1 and len(report.files.written) == 4

    again = export_selection(db, destination, Selection(), pattern="{produto}/{tipo}/{chave}.xml")
    assert files_under(destination) == names and again.files.written == [] and len(again.files.unchanged) == 4
