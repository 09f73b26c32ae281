"""Bulk export of N complete NF-e (issue 16): XML through a profile, and the PDFs beside
brazilfiscalreport rendering the same XML in the same run.

    .venv/bin/python tests/benchmarks/bench_export.py [--n 1000]

N nfeProc (3-20 items) are generated with the sandbox and stored through the capture's own
pipeline into a real SQLite file (not measured). Then, single-threaded:

- XML, first export: ``AutomaticExport`` of an archive profile into an empty folder (queueing from
  the arrival stream, reading each document, temp file + rename per file);
- XML, again: the same documents exported by a second profile into the same folder (every file
  already there with the same bytes: nothing rewritten);
- PDF, ours: ``app.export.pdf.render_pdf`` per document, each DANFE written to a file;
- bulk export with PDFs: a profile with ``include_pdf`` (XML and DANFE per document, the real path);
- PDF, brazilfiscalreport: ``DanfeGenerator`` on the same XML, when that package is installed
  (a benchmark-only comparison, never a dependency of the app).

Prints human lines, then ONE JSON object as the last line.

Measured 2026-12-01 (shared 2-core machine, --n 1000, NF-e of 3-20 items): XML 1,642 doc/s first
and 2,020 again; our DANFE rendered and written 39.7 doc/s, a profile exporting XML + DANFE 36.1
doc/s; brazilfiscalreport 1.3.1 on the same XML 4.6 doc/s (8.6x slower).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.capture.nfe.processing import process_document  # noqa: E402
from app.core.clock import FakeClock  # noqa: E402
from app.core.ids import Cnpj  # noqa: E402
from app.export.automatic import AutomaticExport  # noqa: E402
from app.export.patterns import DEFAULT_PATTERN  # noqa: E402
from app.export.pdf import PdfUnavailable, render_pdf  # noqa: E402
from app.fiscal.distribution import decode_document  # noqa: E402
from app.sandbox.docgen import DocumentFactory, Party  # noqa: E402
from app.sandbox.pki import TestPki  # noqa: E402
from app.store.companies import CompanyRepository  # noqa: E402
from app.store.db import open_database  # noqa: E402
from app.store.documents import DocumentRepository  # noqa: E402
from app.store.exports import ExportProfile, ExportRepository  # noqa: E402
from app.store.records import CaptureState, Product  # noqa: E402

COMPANY = Party("11444777000161", "CLIENTE BENCHMARK LTDA", "PR", "4106902", ie="9032000301")
START = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
LOT = 50


def build(n: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    factory = DocumentFactory(TestPki.create(now=START - timedelta(days=30)), seed=seed)
    suppliers = [
        Party(Cnpj.from_body(f"{rng.randrange(10**7, 10**8)}0001").value, f"FORNECEDOR {i:03d} LTDA", "SP", "3550308",
              ie=f"{rng.randrange(10**8, 10**9)}")
        for i in range(20)
    ]  # fmt: skip
    at, found = START, []
    for _ in range(n):
        at += timedelta(seconds=rng.randrange(5, 90))
        nfe = factory.nfe(emitter=rng.choice(suppliers), recipient=COMPANY, issued_at=at, items=rng.randrange(3, 21))
        found.append(nfe.nfe_proc)
    return found


def store(db_path: Path, clock: FakeClock, xmls: list[bytes]) -> None:
    db = open_database(db_path, clock=clock)
    try:
        company = CompanyRepository(db).add(Cnpj.parse(COMPANY.doc), COMPANY.name)
        repo = DocumentRepository(db)
        cnpj = Cnpj.parse(COMPANY.doc)
        for start in range(0, len(xmls), LOT):
            lot = xmls[start : start + LOT]
            items = []
            for offset, xml in enumerate(lot, start=start + 1):
                text = base64.b64encode(gzip.compress(xml)).decode("ascii")
                items.append(process_document(cnpj, decode_document(offset, "procNFe_v4.00.xsd", text)))
            state = CaptureState(company.id, Product.NFE, ult_nsu=start + len(lot), max_nsu=len(xmls))
            repo.store_batch(company.id, items, state)
    finally:
        db.close()


def export_rate(
    db_path: Path, clock: FakeClock, destination: Path, name: str, *, pdf: bool = False
) -> tuple[int, float]:
    db = open_database(db_path, clock=clock)
    try:
        profile = ExportProfile(name=name, destination=str(destination), pattern=DEFAULT_PATTERN, include_pdf=pdf)
        ExportRepository(db).add(profile)
        started = time.perf_counter()
        [run] = [r for r in AutomaticExport(db, clock).run() if r.profile == name]
        return run.written, time.perf_counter() - started
    finally:
        db.close()


def ours_pdf(xmls: list[bytes], out: Path) -> float | None:
    """Render and write each DANFE, as brazilfiscalreport's side does below."""
    started = time.perf_counter()
    try:
        for i, xml in enumerate(xmls):
            (out / f"{i}.pdf").write_bytes(render_pdf(xml))
    except PdfUnavailable:
        return None
    return time.perf_counter() - started


def brazilfiscalreport_pdf(xmls: list[bytes], out: Path) -> float | None:
    try:
        from brazilfiscalreport.danfe import Danfe  # type: ignore[import-not-found]
    except ImportError:
        return None
    started = time.perf_counter()
    for i, xml in enumerate(xmls):
        Danfe(xml=xml.decode("utf-8")).output(str(out / f"{i}.pdf"))
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    args = parser.parse_args()
    xmls = build(args.n)
    clock = FakeClock(START + timedelta(days=1))
    result: dict[str, object] = {"n": args.n}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db_path = root / "captura.sqlite3"
        store(db_path, clock, xmls)
        written, first = export_rate(db_path, clock, root / "saida", "primeira")
        print(f"XML, primeira exportação: {written} documentos em {first:.2f} s = {written / first:.0f} doc/s")
        again, second = export_rate(db_path, clock, root / "saida", "de-novo")
        print(f"XML, de novo (nada a regravar): {again} documentos em {second:.2f} s = {again / second:.0f} doc/s")
        result |= {"xml_first_per_s": round(written / first), "xml_again_per_s": round(again / second)}
        (root / "nosso").mkdir()
        pdf = ours_pdf(xmls, root / "nosso")
        if pdf is None:
            print("PDF, nosso: indisponível")
        else:
            print(f"PDF, nosso (DANFE gerado e gravado): {args.n / pdf:.1f} doc/s")
        with_pdf, bulk = export_rate(db_path, clock, root / "com-pdf", "com-pdf", pdf=True)
        print(f"Exportação com PDF (XML + DANFE por perfil): {with_pdf} arquivos em {bulk:.2f} s")
        result |= {"export_with_pdf_docs_per_s": round(args.n / bulk, 1)}
        (root / "bfr").mkdir()
        theirs = brazilfiscalreport_pdf(xmls, root / "bfr")
        if theirs is None:
            print("PDF, brazilfiscalreport: não instalado (pip install brazilfiscalreport para comparar)")
        else:
            print(f"PDF, brazilfiscalreport: {args.n / theirs:.1f} doc/s")
        result |= {
            "ours_pdf_per_s": round(args.n / pdf, 1) if pdf else None,
            "brazilfiscalreport_pdf_per_s": round(args.n / theirs, 1) if theirs else None,
        }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    from tests.benchmarks.standin import use_memory_keyring

    use_memory_keyring()  # the sandbox's throwaway certificates, never a user's keyring
    raise SystemExit(main())
