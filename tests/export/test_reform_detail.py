"""The reform in the document's detail (desk, window block, ``documents show --json``'s source):
a nota de crédito and the NF-e it references, linked both ways, with the values a reader of the
XML finds; stored through the capture's unit of work into the harness's data folder."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from app.capture.engine import inputs
from app.core.keys import key44_check_digit
from app.core.products import Product
from app.desk.desk import Desk
from app.desk.views import GridFilter
from app.documents.model import NfeMeta
from app.documents.nfe import read_nfe_document
from tests.support.nfe_harness import Harness, nfe_harness

FIXTURE = (Path(__file__).resolve().parents[1] / "fixtures" / "nfe" / "nfe_reforma_tributaria.xml").read_bytes()
KEY = "15231207933914000154550010006643501427015088"
FIRST_REF = b"35250137241249000107550014231152171571688010"


def _key(number: int) -> str:
    body = KEY[:25] + f"{number:09d}" + KEY[34:43]
    return body + str(key44_check_digit(body))


@pytest.fixture
def harness(tmp_path: Path) -> Harness:
    with nfe_harness(tmp_path) as harness:
        yield harness


def _store(harness: Harness, *documents: bytes) -> None:
    items = []
    for nsu, data in enumerate(documents, start=900):
        meta = read_nfe_document(data)
        assert isinstance(meta, NfeMeta)
        items.append(
            inputs.document(Product.NFE, harness.company.cnpj, meta, data, nsu, "procNFe_v4.00.xsd", None,
                            shown=meta.recipient, situation=None)
        )  # fmt: skip
    with harness.ctx.unit() as unit:
        unit.store_lot(harness.company.id, items)


def test_a_credit_note_and_its_nfe_show_each_other_and_the_values(harness: Harness) -> None:
    normal, note = _key(11), _key(12)
    _store(
        harness,
        FIXTURE.replace(KEY.encode(), normal.encode()),
        FIXTURE.replace(KEY.encode(), note.encode())
        .replace(b"<finNFe>1</finNFe>", b"<finNFe>5</finNFe>")
        .replace(FIRST_REF, normal.encode()),
    )
    desk = Desk(harness.office.data_dir, clock=harness.clock, capture=False)
    desk.open()
    try:
        [note_row] = desk.cursor(GridFilter(Product.NFE, search=note)).next_page(1)
        detail = desk.detail(note_row)
        assert detail.purpose == "5"
        assert detail.reform is not None
        assert (detail.reform.ibs_cents, detail.reform.cbs_cents, detail.reform.is_cents) == (5000, 8729, 100000)
        assert [(r.access_key, r.row is not None) for r in detail.references] == [
            (normal, True),
            ("21323412888283895737729149494949494171688099", False),
        ]
        [normal_row] = desk.cursor(GridFilter(Product.NFE, search=normal)).next_page(1)
        back = desk.detail(normal_row)
        assert back.purpose == "1"
        # what it references itself (the sample's NFref), then the note that adjusts it
        assert [r.access_key for r in back.references] == [
            "21323412888283895737729149494949494171688099",
            FIRST_REF.decode(),
            note,
        ]

        from app.ui.detail import summary_html  # the window's block, as HTML

        html = summary_html(detail, datetime.now(harness.clock.now().tzinfo))
        assert "Reforma tributária" in html and "nota de crédito" in html
        assert "CBS: R$ 87,29" in html and "IBS estadual: R$ 30,00" in html
        assert "000/000001" in html and normal in html
    finally:
        desk.close()
