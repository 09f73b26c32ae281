"""`documents pdf KEY -o FILE` for the three products, through the desk and its kept DANFEs."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from app.core.products import Environment, Product
from app.desk.pdfs import CACHE_DIR
from app.pdf import formats as fmt
from app.store.records import CaptureSettings, DocumentInput, DocumentKind
from tests.cli.conftest import Cli
from tests.pdf.pdftools import flat, page_texts
from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER, Harness, nfe_harness

FIXTURES = Path(__file__).parents[1] / "fixtures"


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with nfe_harness(tmp_path) as h:
        yield h


@pytest.fixture
def cli(harness: Harness, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(harness, capsys)


def _text(path: Path) -> str:
    return " ".join(flat(t) for t in page_texts(path.read_bytes()))


def _kept(harness: Harness, key: str) -> list[Path]:
    return sorted((harness.office.data_dir / CACHE_DIR).glob(f"{key}-*.pdf"))


def test_nfe_summary_then_danfe_kept_then_regenerated_when_cancelled(
    harness: Harness, cli: Cli, tmp_path: Path
) -> None:
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    key = str(nfe.key)
    harness.run_pending()
    summary = tmp_path / "resumo.pdf"
    assert cli("documents", "pdf", key, "-o", str(summary)) == 0, cli.err
    text = _text(summary)
    assert "XML COMPLETO AINDA NÃO DISPONÍVEL" in text and "FOLHA" not in text

    harness.capture.manifestation.request(harness.company.id, key, "210210")
    harness.capture.manifestation.dispatch()
    harness.run_until(harness.clock.now() + timedelta(hours=1, minutes=5))
    danfe = tmp_path / "danfe.pdf"
    assert cli("documents", "pdf", key, "-o", str(danfe)) == 0, cli.err
    text = _text(danfe)
    assert fmt.key_groups(key) in text and "FOLHA 1/1" in text and "CANCELADA" not in text
    [kept] = _kept(harness, key)
    assert kept.read_bytes() == danfe.read_bytes()
    stamp = kept.stat().st_mtime_ns
    again = tmp_path / "de-novo.pdf"
    assert cli("documents", "pdf", key, "-o", str(again)) == 0
    assert again.read_bytes() == danfe.read_bytes() and kept.stat().st_mtime_ns == stamp  # read, not redrawn

    harness.sandbox.publish_nfe_event(nfe, "110111", author=SUPPLIER, justification="Pedido cancelado pelo cliente")
    harness.run_until(harness.clock.now() + timedelta(hours=1, minutes=5))
    cancelled = tmp_path / "cancelada.pdf"
    assert cli("documents", "pdf", key, "-o", str(cancelled)) == 0
    assert "CANCELADA" in _text(cancelled)
    [newer] = _kept(harness, key)  # the cancellation made a new one and the old one is gone
    assert newer != kept and not kept.exists()


def test_cte_pdf_is_the_dacte(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    from app.capture.cte import CteCapture
    from app.capture.simulation import run_pending

    harness.sandbox.party(CARRIER)
    harness.office.companies.save_settings(
        CaptureSettings(harness.company.id, Product.CTE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
    )
    cte = harness.sandbox.publish_cte(CARRIER, SUPPLIER, RECIPIENT)
    run_pending(CteCapture(harness.ctx))
    out = tmp_path / "dacte.pdf"
    assert cli("documents", "pdf", str(cte.key), "-o", str(out)) == 0, cli.err
    assert "DACTE gravado em" in cli.out
    text = _text(out)
    assert "DACTE" in text and (str(cte.key) in text.replace(" ", ""))
    assert not _kept(harness, str(cte.key))  # DACTE: generated on each request, never kept


def test_nfse_pdf_is_the_danfse(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    xml = (FIXTURES / "nfse" / "nfse-homolog-2025.xml").read_bytes()
    key = "15054862231305199000190000000000000225121645026250"
    harness.ctx.documents.store(
        harness.company.id, DocumentInput(Product.NFSE, DocumentKind.NFSE, xml, key, issued_at=harness.clock.now())
    )
    out = tmp_path / "danfse.pdf"
    assert cli("documents", "pdf", key, "-o", str(out)) == 0, cli.err
    assert "DANFSe gravado em" in cli.out
    assert key in _text(out).replace(" ", "")


def test_unknown_key_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "x.pdf"
    assert cli("documents", "pdf", "35261199888777000100550010000000011000000010", "-o", str(out)) == 1
    assert "não encontrado" in cli.err and not out.exists()
    assert RECIPIENT  # the harness's company is the one asked about


def test_a_cache_that_cannot_be_written_still_gives_the_pdf(tmp_path: Path) -> None:
    from app.desk.pdfs import PdfCache

    blocked = tmp_path / "dados"
    blocked.write_bytes(b"")  # a file where the data folder should be: nothing can be kept under it
    xml = (FIXTURES / "nfe" / "42210775277525000178550030000266631762885493-procNFe.xml").read_bytes()
    pdf = PdfCache(blocked).pdf(Product.NFE, "42210775277525000178550030000266631762885493", xml)
    assert "FOLHA 1/1" in flat(page_texts(pdf)[0])
