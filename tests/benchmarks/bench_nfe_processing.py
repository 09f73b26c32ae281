"""Throughput of NF-e (and CT-e) document processing on one core, beside nfelib's bindings (issue 4).

    .venv/bin/python tests/benchmarks/bench_nfe_processing.py [--n 5000] [--cte-n 2000] [--profile]

Builds N docZips (base64 of gzip) with the sandbox generator, like a real stream: ~60% resNFe,
25% nfeProc with 3-20 items, 15% events (cancellation, CC-e, Ciência, Confirmação; half as
procEventoNFe, half as resEvento). Generation is not measured. Then, single-threaded:

- ours, parse only: decode (base64 → gunzip, bounded) + safe parse + classify + extract;
- ours, full pipeline: the engine's own path, ``decode_document`` (base64 → gzip bytes kept →
  bounded gunzip) + ``process_document`` (safe parse + classify + extract + the store's inputs) +
  ``DocumentRepository.store_batch`` in lots of 50 with the cursor state (one transaction per lot,
  WAL checkpoints included), into a real SQLite file. Creating that file (Alembic migrations) and
  its company happen once per run before the clock starts: a capture process opens its database
  once, and those 35-100 ms are not per-document work. The rate with the set-up counted is
  printed beside it (``ours_pipeline_with_setup_per_s``);
- nfelib: decode + ``XmlParser.from_bytes(data, Class)`` with one reused parser, dispatching on the
  docZip schema to NfeProc / ResNfe / ResEvento / ProcEventoNfe.

With ``--reform-share`` above 0 (issue 23), the same stream without the IBS/CBS groups runs its
pipeline between the reform stream's runs: ``plain_pipeline_cpu_per_s`` is this machine's speed
at the same load, and ``reform_share_of_plain`` the reform rate as a share of it, beside the goals'
own ratio (4,000 against issue 4's 5,000: 0.8), which no machine's speed moves.

The CT-e row (issue 11) does the same on a CT-e stream (80% cteProc 4.00, road and air, 0-6 NF-e
keys carried; 20% procEventoCTe): ours (``read_cte_document``; the pipeline is
``app.capture.cte.processing`` + ``store_batch``) beside nfelib's ``CteProc`` / ``ProcEventoCte``.

The NFS-e row (issue 12) does the same on an ADN stream (``LoteDFe`` items with ``ArquivoXml``:
85% NFSe 1.01, a third with the IBS/CBS group, some with an intermediary; 15% registered
``evento``, cancellations and taker confirmations): ours (``read_nfse_payload``; the pipeline is
the engine's path, ``app.fiscal.adn.decode_document`` + ``app.capture.nfse.processing`` + the
lot's unit of work with the NFS-e details) beside nfelib's NFS-e bindings ``Nfse`` / ``Evento``.

Prints human lines, then ONE JSON object as the last line.
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gzip
import io
import json
import pstats
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.capture.cte.processing import process_document as process_cte  # noqa: E402
from app.capture.nfe.processing import process_document  # noqa: E402
from app.capture.nfse.adapter import store_nfse_extras  # noqa: E402
from app.capture.nfse.processing import process_document as process_nfse  # noqa: E402
from app.core.ids import Cnpj  # noqa: E402
from app.core.keys import AccessKey, DocumentModel  # noqa: E402
from app.documents import read_nfe_document  # noqa: E402
from app.documents.cte import read_cte_document  # noqa: E402
from app.documents.nfse import read_nfse_payload  # noqa: E402
from app.fiscal.adn import decode_document as decode_adn  # noqa: E402
from app.fiscal.distribution import decode_document  # noqa: E402
from app.safexml import decode_doczip  # noqa: E402
from app.sandbox.docgen import DocumentFactory, GeneratedNFe, Party  # noqa: E402
from app.sandbox.docgen.nfe import res_nfe  # noqa: E402
from app.sandbox.pki import TestPki  # noqa: E402
from app.store.companies import CompanyRepository  # noqa: E402
from app.store.db import open_database  # noqa: E402
from app.store.documents import DocumentRepository  # noqa: E402
from app.store.records import CaptureState, DocumentInput, EventInput, Product  # noqa: E402
from app.store.unit import write_unit  # noqa: E402

GOAL_PIPELINE = 5000
GOAL_REFORM = 4000  # issue 23: with the IBS/CBS groups in every nfeProc (--reform-share 1.0)
# The two goals side by side: a reform stream at 80% of the plain stream's rate, whatever the machine.
GOAL_REFORM_SHARE_OF_PLAIN = GOAL_REFORM / GOAL_PIPELINE
GOAL_SPEEDUP = 5
LOT = 50
MAX_COMPRESSED = 10 * 1024 * 1024
MAX_INFLATED = 20 * 1024 * 1024

COMPANY = Party("11444777000161", "CLIENTE BENCHMARK LTDA", "PR", "4106902", ie="9032000301")
START = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)

Doc = tuple[int, str, str]  # (NSU, schema, base64 text of the docZip, as the SOAP reply gives it)


# ---------------------------------------------------------------- building the stream


def _suppliers(rng: random.Random, count: int) -> list[Party]:
    ufs = [("SP", "3550308"), ("SC", "4205407"), ("PR", "4106902"), ("RS", "4314902"), ("MG", "3106200")]
    found = []
    for i in range(count):
        uf, mun = ufs[i % len(ufs)]
        cnpj = Cnpj.from_body(f"{rng.randrange(10**7, 10**8)}0001").value
        found.append(Party(cnpj, f"FORNECEDOR {i:03d} LTDA", uf, mun, ie=f"{rng.randrange(10**8, 10**9)}"))
    return found


def _zip(xml: bytes) -> str:
    return base64.b64encode(gzip.compress(xml, compresslevel=6)).decode("ascii")


def build_stream(n: int, seed: int = 7, reform_share: float = 0.0) -> list[Doc]:
    """``reform_share``: the nfeProc carrying the tax reform's IBS/CBS/IS groups (issue 23)."""
    rng = random.Random(seed)
    factory = DocumentFactory(TestPki.create(now=START - timedelta(days=30)), seed=seed, reform_share=reform_share)
    suppliers = _suppliers(rng, 25)
    carrier = Party("12ABC34501DE35", "TRANSPORTADORA ALFA LTDA", "SC", "4205407", ie="254123456")
    n_proc = n * 25 // 100
    n_events = n * 15 // 100
    n_res = n - n_proc - n_events
    docs: list[tuple[str, bytes]] = []
    generated: list[GeneratedNFe] = []
    at = START
    for i in range(n_proc):
        at += timedelta(seconds=rng.randrange(5, 90))
        nfe = factory.nfe(
            emitter=rng.choice(suppliers),
            recipient=COMPANY,
            issued_at=at,
            items=rng.randrange(3, 21),
            transporter=carrier if i % 4 == 0 else None,
            aut_xml=("11222333000181",) if i % 10 == 0 else (),
        )
        generated.append(nfe)
        docs.append(("procNFe_v4.00.xsd", nfe.nfe_proc))
    for i in range(n_res):
        at += timedelta(seconds=rng.randrange(5, 90))
        emitter = rng.choice(suppliers)
        key = AccessKey.build(
            uf=emitter.uf,
            year_month=at.strftime("%y%m"),
            issuer=emitter.doc,
            model=DocumentModel.NFE,
            serie=1,
            number=100_000 + i,
            tp_emis=1,
            code=rng.randrange(10_000_000, 99_999_999),
        ).value
        dig = base64.b64encode(rng.randbytes(20)).decode()
        protocol = f"1{emitter.cuf}{at:%y}{i:010d}"
        xml = res_nfe(key, emitter, at, rng.randrange(1_000, 5_000_000), dig, at + timedelta(seconds=30), protocol)
        docs.append(("resNFe_v1.01.xsd", xml))
    kinds = [
        ("110111", "emitter", {"justification": "Pedido cancelado pelo cliente antes da entrega"}),
        ("110110", "emitter", {"correction": "Corrigir o volume transportado para 4 volumes"}),
        ("210210", "company", {}),
        ("210200", "company", {}),
    ]
    for i in range(n_events):
        nfe = generated[i % len(generated)]
        tp, who, extra = kinds[i % len(kinds)]
        author = nfe.emitter if who == "emitter" else COMPANY
        event = factory.nfe_event(
            nfe,
            tp_evento=tp,
            author=author,
            seq=1 + i // (len(generated) * len(kinds)),
            at=nfe.authorised_at + timedelta(hours=1 + i % 48),
            **extra,
        )
        if i % 2 == 0 or event.res_evento is None:
            docs.append(("procEventoNFe_v1.00.xsd", event.proc_evento))
        else:
            docs.append(("resEvento_v1.01.xsd", event.res_evento))
    rng.shuffle(docs)
    return [(1000 + i, schema, _zip(xml)) for i, (schema, xml) in enumerate(docs)]


def build_cte_stream(n: int, seed: int = 9) -> list[Doc]:
    """CT-e docZips for the company: 80% cteProc (it is recipient or payer), 20% procEventoCTe."""
    rng = random.Random(seed)
    factory = DocumentFactory(TestPki.create(now=START - timedelta(days=30)), seed=seed)
    carriers = _suppliers(rng, 10)
    senders = _suppliers(rng, 20)
    n_events = n // 5
    docs: list[tuple[str, bytes]] = []
    generated = []
    at = START
    for _ in range(n - n_events):
        at += timedelta(seconds=rng.randrange(5, 90))
        keys = [
            AccessKey.build(
                uf="SP",
                year_month=at.strftime("%y%m"),
                issuer=rng.choice(senders).doc,
                model=DocumentModel.NFE,
                serie=1,
                number=rng.randrange(1, 10**6),
                tp_emis=1,
                code=rng.randrange(10**7, 10**8),
            ).value
            for _ in range(rng.randrange(0, 7))
        ]
        cte = factory.cte(
            emitter=rng.choice(carriers),
            sender=rng.choice(senders),
            recipient=COMPANY,
            taker_role=rng.choice((0, 3)),
            issued_at=at,
            modal=rng.choice(("01", "01", "02")),
            nfe_keys=keys,
        )
        generated.append(cte)
        docs.append(("procCTe_v4.00.xsd", cte.cte_proc))
    for i in range(n_events):
        cte = generated[i % len(generated)]
        tp = ("110111", "110110", "610110")[i % 3]
        event = factory.cte_event(
            cte, tp_evento=tp, author=cte.parties["emit"], seq=1 + i // len(generated), at=cte.authorised_at
        )
        docs.append(("procEventoCTe_v4.00.xsd", event.proc_payload.xml))
    rng.shuffle(docs)
    return [(1000 + i, schema, _zip(xml)) for i, (schema, xml) in enumerate(docs)]


def build_nfse_stream(n: int, seed: int = 13) -> list[Doc]:
    """ADN items for the company (taker): 85% NFSe, 15% registered events of those NFS-e."""
    rng = random.Random(seed)
    factory = DocumentFactory(TestPki.create(now=START - timedelta(days=30)), seed=seed)
    providers = _suppliers(rng, 20)
    n_events = n * 15 // 100
    docs: list[tuple[str, bytes]] = []
    generated = []
    at = START
    for i in range(n - n_events):
        at += timedelta(seconds=rng.randrange(5, 90))
        nfse = factory.nfse(
            provider=rng.choice(providers),
            taker=COMPANY,
            intermediary=rng.choice(providers) if i % 7 == 0 else None,
            issued_at=at,
            with_ibscbs=i % 3 == 0,
        )
        generated.append(nfse)
        docs.append(("NFSE", nfse.nfse))
    for i in range(n_events):
        nfse = generated[i % len(generated)]
        code, author = ("101101", nfse.parties["prest"]) if i % 2 == 0 else ("203202", COMPANY)
        docs.append(("EVENTO", factory.nfse_event(nfse, code=code, author=author, at=nfse.processed_at).evento))
    rng.shuffle(docs)
    return [(1000 + i, kind, _zip(xml)) for i, (kind, xml) in enumerate(docs)]


# ---------------------------------------------------------------- ours


def ours_parse(docs: Sequence[Doc]) -> int:
    count = 0
    for _nsu, schema, text in docs:
        xml = decode_doczip(text, max_compressed=MAX_COMPRESSED, max_inflated=MAX_INFLATED)
        read_nfe_document(xml, schema)
        count += 1
    return count


def ours_cte_parse(docs: Sequence[Doc]) -> int:
    for _nsu, schema, text in docs:
        read_cte_document(decode_doczip(text, max_compressed=MAX_COMPRESSED, max_inflated=MAX_INFLATED), schema)
    return len(docs)


def ours_nfse_parse(docs: Sequence[Doc]) -> int:
    for _nsu, _kind, text in docs:
        read_nfse_payload(text)
    return len(docs)


def ours_nfse_pipeline(docs: Sequence[Doc], db_path: Path) -> tuple[int, int, float]:
    """(stored, quarantined, pipeline seconds): the NFS-e engine's path per lot of 50, in one unit
    of work each (lot, cursor, details, delivery flags, cancellations), into a real SQLite file."""
    db = open_database(db_path)
    try:
        company_cnpj = Cnpj(COMPANY.doc)
        company = CompanyRepository(db).add(company_cnpj, COMPANY.name)
        quarantined = stored = 0
        started = time.perf_counter()
        for start in range(0, len(docs), LOT):
            lot = docs[start : start + LOT]
            items = [
                process_nfse(company_cnpj, decode_adn({"NSU": nsu, "TipoDocumento": kind, "ArquivoXml": text}), None)
                for nsu, kind, text in lot
            ]
            quarantined += sum(1 for item in items if isinstance(item, DocumentInput) and item.parse_error)
            with write_unit(db) as unit:
                outcomes = unit.store_lot(company.id, items)
                unit.save_state(CaptureState(company.id, Product.NFSE, ult_nsu=lot[-1][0], max_nsu=lot[-1][0]))
                store_nfse_extras(unit, company.id, items, outcomes)
            stored += len(outcomes)
        return stored, quarantined, time.perf_counter() - started
    finally:
        db.close()


def ours_pipeline(
    docs: Sequence[Doc], db_path: Path, product: Product = Product.NFE, cpu: list[float] | None = None
) -> tuple[int, int, float, float]:
    """Returns (stored, quarantined, set-up seconds, pipeline seconds): the database is created and
    migrated, and the company added, before the pipeline's clock starts. ``cpu`` gets the
    pipeline's CPU seconds (the process's: steadier than the wall on a shared machine)."""
    started = time.perf_counter()
    db = open_database(db_path)
    try:
        company_cnpj = Cnpj(COMPANY.doc)
        company = CompanyRepository(db).add(company_cnpj, COMPANY.name)
        repo = DocumentRepository(db)
        quarantined = 0
        stored = 0
        max_nsu = docs[-1][0]
        setup = time.perf_counter() - started
        started = time.perf_counter()
        cpu_started = time.process_time()
        for start in range(0, len(docs), LOT):
            lot = docs[start : start + LOT]
            items: list[DocumentInput | EventInput] = []
            for nsu, schema, text in lot:
                # The engine's own path (app.fiscal.distribution, then app.capture.<product>.processing).
                doc = decode_document(nsu, schema, text)
                item = process_document(company_cnpj, doc) if product is Product.NFE else process_cte(company_cnpj, doc)
                quarantined += isinstance(item, DocumentInput) and item.parse_error is not None
                items.append(item)
            state = CaptureState(company.id, product, ult_nsu=lot[-1][0], max_nsu=max_nsu)
            stored += len(repo.store_batch(company.id, items, state))
        seconds = time.perf_counter() - started
        if cpu is not None:
            cpu.append(time.process_time() - cpu_started)
        return stored, quarantined, setup, seconds
    finally:
        db.close()


# ---------------------------------------------------------------- nfelib


def _nfelib_runner(classes: dict[str, type]) -> Callable[[Sequence[Doc]], tuple[int, int]]:
    """nfelib's way for a stream: decode, then ``from_bytes`` with one reused parser into the
    binding the docZip's schema (or the ADN's TipoDocumento) names, before its first ``_``."""
    from xsdata.formats.dataclass.parsers import XmlParser

    parser = XmlParser()

    def run(docs: Sequence[Doc]) -> tuple[int, int]:
        ok = failed = 0
        for _nsu, schema, text in docs:
            xml = gzip.decompress(base64.b64decode(text))
            try:
                parser.from_bytes(xml, classes[schema.split("_", 1)[0]])
                ok += 1
            except Exception:  # noqa: BLE001 - a binding failure is counted, not fatal
                failed += 1
        return ok, failed

    return run


def nfelib_parse_fn() -> Callable[[Sequence[Doc]], tuple[int, int]]:
    from nfelib.nfe.bindings.v4_0.proc_nfe_v4_00 import NfeProc
    from nfelib.nfe_dist_dfe.bindings.v1_0 import ResEvento, ResNfe
    from nfelib.nfe_evento_generico.bindings.v1_0.proc_evento_nfe_v1_00 import ProcEventoNfe

    return _nfelib_runner(
        {"procNFe": NfeProc, "resNFe": ResNfe, "resEvento": ResEvento, "procEventoNFe": ProcEventoNfe}
    )


def nfelib_cte_fn() -> Callable[[Sequence[Doc]], tuple[int, int]]:
    from nfelib.cte.bindings.v4_0.proc_cte_v4_00 import CteProc
    from nfelib.cte.bindings.v4_0.proc_evento_cte_v4_00 import ProcEventoCte

    return _nfelib_runner({"procCTe": CteProc, "procEventoCTe": ProcEventoCte})


def nfelib_nfse_fn() -> Callable[[Sequence[Doc]], tuple[int, int]]:
    from nfelib.nfse.bindings.v1_0 import Evento, Nfse

    return _nfelib_runner({"NFSE": Nfse, "EVENTO": Evento})


Pipeline = Callable[[Sequence[Doc], Path], tuple[int, int, float]]  # -> (stored, quarantined, seconds)


def product_row(
    label: str,
    docs: Sequence[Doc],
    parse: Callable[[Sequence[Doc]], int],
    pipeline: Pipeline,
    nfelib_run: Callable[[Sequence[Doc]], tuple[int, int]],
    repeat: int,
) -> dict[str, object]:
    """One product's row: ours (parse, pipeline) beside nfelib's bindings on the same documents."""
    parse_seconds = min(_timed(lambda: parse(docs)) for _ in range(repeat))
    with tempfile.TemporaryDirectory(prefix=f"bench-{label.lower()}-") as folder:
        runs = []
        for run in range(repeat):
            stored, quarantined, seconds = pipeline(docs, Path(folder) / f"run{run}" / "captura.db")
            assert stored == len(docs) and quarantined == 0, (stored, quarantined)
            runs.append(seconds)
    t = time.perf_counter()
    ok, failed = nfelib_run(docs)
    nfelib_seconds = time.perf_counter() - t
    row: dict[str, object] = {
        "documents": len(docs),
        "ours_parse_per_s": round(_rate(len(docs), parse_seconds)),
        "ours_pipeline_per_s": round(_rate(len(docs), min(runs))),
        "nfelib_parse_per_s": round(_rate(len(docs), nfelib_seconds)),
        "nfelib_failed": failed,
        "speedup_vs_nfelib": round(nfelib_seconds / parse_seconds, 1),
    }
    row["speedup_goal_met"] = nfelib_seconds / parse_seconds >= GOAL_SPEEDUP
    print(
        f"{label:<6} decode+parse+classify+extract : {row['ours_parse_per_s']:>9} docs/s; "
        f"pipeline {row['ours_pipeline_per_s']} docs/s; nfelib {row['nfelib_parse_per_s']} docs/s "
        f"({ok} parsed, {failed} failed); "
        f"speed-up {row['speedup_vs_nfelib']}x (goal ≥ {GOAL_SPEEDUP}x)"
    )
    return row


def _cte_pipeline(docs: Sequence[Doc], db_path: Path) -> tuple[int, int, float]:
    stored, quarantined, _setup, seconds = ours_pipeline(docs, db_path, Product.CTE)
    return stored, quarantined, seconds


def cte_row(n: int, repeat: int) -> dict[str, object]:
    """The CT-e row (issue 11)."""
    return product_row("CT-e", build_cte_stream(n), ours_cte_parse, _cte_pipeline, nfelib_cte_fn(), repeat)


def nfse_row(n: int, repeat: int) -> dict[str, object]:
    """The NFS-e row (issue 12)."""
    return product_row("NFS-e", build_nfse_stream(n), ours_nfse_parse, ours_nfse_pipeline, nfelib_nfse_fn(), repeat)


def _timed(work: Callable[[], object]) -> float:
    t = time.perf_counter()
    work()
    return time.perf_counter() - t


# ---------------------------------------------------------------- main


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def simulated_day_latency(seed: int = 5) -> dict[str, float | int]:
    """Steady state over a simulated day: one company, third parties publishing at random times,
    the engine driven on the virtual clock against the in-process sandbox; latency = first delivery
    to the company minus publication, as the sandbox's referee measured it."""
    from tests.support.nfe_harness import RECIPIENT, SUPPLIER, nfe_harness

    rng = random.Random(seed)
    with (
        tempfile.TemporaryDirectory(prefix="bench-latency-") as folder,
        nfe_harness(Path(folder), in_process=True) as h,
    ):
        h.run_pending()  # caught up at the start: the steady state begins
        start = h.clock.now()
        for _ in range(60):
            when = start + timedelta(seconds=rng.randint(0, 24 * 3600 - 1))
            h.at(when, lambda: h.sandbox.publish_nfe(SUPPLIER, RECIPIENT))
        h.run_until(start + timedelta(days=1, hours=2))
        report = h.sandbox.referee.report()
    latencies = sorted(report["companies"][RECIPIENT]["nfe"]["latency_seconds"].values())
    return {
        "published": len(latencies),
        "undelivered": len(report["companies"][RECIPIENT]["nfe"]["undelivered"]),
        "violations": len(report["violations"]),
        "latency_max_min": round(max(latencies) / 60, 2),
        "latency_median_min": round(statistics.median(latencies) / 60, 2),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--n", type=int, default=5000, help="documents in the stream (default 5000)")
    args.add_argument("--repeat", type=int, default=5, help="runs of each measurement (best kept; all printed)")
    args.add_argument("--cte-n", type=int, default=2000, help="CT-e documents for the CT-e row (0: skip it)")
    args.add_argument("--nfse-n", type=int, default=2000, help="NFS-e documents for the NFS-e row (0: skip it)")
    args.add_argument("--profile", action="store_true", help="cProfile one pipeline run and print the top")
    args.add_argument("--no-day", action="store_true", help="skip the simulated day's latency (a minute)")
    args.add_argument(
        "--reform-share", type=float, default=0.0, help="share of the nfeProc with the IBS/CBS groups (0 to 1)"
    )
    opts = args.parse_args(argv)

    t0 = time.perf_counter()
    docs = build_stream(opts.n, reform_share=opts.reform_share)
    mix: dict[str, int] = {}
    for _nsu, schema, _text in docs:
        mix[schema.split("_")[0]] = mix.get(schema.split("_")[0], 0) + 1
    inflated = sum(len(gzip.decompress(base64.b64decode(t))) for _n, _s, t in docs)
    print(
        f"built {len(docs)} docZips in {time.perf_counter() - t0:.1f}s (not measured): {mix}, "
        f"{inflated / len(docs) / 1024:.1f} KiB average inflated"
    )

    parse_times = []
    parse_cpu = []
    for _ in range(opts.repeat):
        t, c = time.perf_counter(), time.process_time()
        ours_parse(docs)
        parse_times.append(time.perf_counter() - t)
        parse_cpu.append(time.process_time() - c)
    ours_parse_rate = _rate(len(docs), min(parse_times))
    parse_cpu_rate = _rate(len(docs), min(parse_cpu))
    print(
        f"ours   decode+parse+classify+extract : {ours_parse_rate:9.0f} docs/s (best of {opts.repeat}; "
        f"{parse_cpu_rate:.0f} per CPU second)"
    )

    pipeline_times = []
    pipeline_cpu: list[float] = []
    setup_times = []
    quarantined = 0
    # With reform documents, the same stream without the groups runs between the runs, so both
    # rates see the same load: the reform's cost is read against this machine's own speed.
    plain = build_stream(opts.n) if opts.reform_share else None
    plain_cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-nfe-") as folder:
        for run in range(opts.repeat):
            stored, quarantined, setup, seconds = ours_pipeline(
                docs, Path(folder) / f"run{run}" / "captura.db", cpu=pipeline_cpu
            )
            pipeline_times.append(seconds)
            setup_times.append(setup)
            assert stored == len(docs), (stored, len(docs))
            if plain is not None:
                plain_stored, *_ = ours_pipeline(plain, Path(folder) / f"plain{run}" / "captura.db", cpu=plain_cpu)
                assert plain_stored == len(plain), (plain_stored, len(plain))
        db_size = (Path(folder) / "run0" / "captura.db").stat().st_size
        profile_text = None
        if opts.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            ours_pipeline(docs, Path(folder) / "profile" / "captura.db")
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(35)
            profile_text = out.getvalue()
    pipeline_rate = _rate(len(docs), min(pipeline_times))
    with_setup = [p + s for p, s in zip(pipeline_times, setup_times, strict=True)]
    with_setup_rate = _rate(len(docs), min(with_setup))
    print(
        f"ours   full pipeline into SQLite     : {pipeline_rate:9.0f} docs/s (best of {opts.repeat}; "
        f"runs {', '.join(f'{len(docs) / s:.0f}' for s in pipeline_times)}; quarantined {quarantined}; "
        f"db {db_size / 1024 / 1024:.1f} MiB)"
    )
    pipeline_cpu_rate = _rate(len(docs), min(pipeline_cpu))
    print(
        f"       per CPU second                : {pipeline_cpu_rate:9.0f} docs/s (best of {opts.repeat}; "
        f"runs {', '.join(f'{len(docs) / s:.0f}' for s in pipeline_cpu)}; the machine's load leaves it be)"
    )
    plain_cpu_rate = _rate(len(plain), min(plain_cpu)) if plain and plain_cpu else None
    reform_share_of_plain = round(pipeline_cpu_rate / plain_cpu_rate, 2) if plain_cpu_rate else None
    if plain_cpu_rate:
        print(
            f"       the same stream without reform: {plain_cpu_rate:9.0f} per CPU second (runs interleaved; "
            f"reform at {reform_share_of_plain:.0%} of it, the goals' ratio {GOAL_REFORM_SHARE_OF_PLAIN:.0%})"
        )
    print(
        f"       the same, set-up counted      : {with_setup_rate:9.0f} docs/s (database created and migrated "
        f"in {min(setup_times) * 1000:.0f}-{max(setup_times) * 1000:.0f} ms per run)"
    )

    nfelib_run = nfelib_parse_fn()
    t = time.perf_counter()
    ok, failed = nfelib_run(docs)
    nfelib_rate = _rate(len(docs), time.perf_counter() - t)
    print(f"nfelib decode+from_bytes (reused)    : {nfelib_rate:9.0f} docs/s ({ok} parsed, {failed} failed)")
    speedup = ours_parse_rate / nfelib_rate
    print(f"speed-up, parse vs parse             : {speedup:9.1f}x  (goal ≥ {GOAL_SPEEDUP}x)")
    print(
        f"pipeline goal                        : {GOAL_PIPELINE} docs/s -> "
        f"{'MET' if pipeline_rate >= GOAL_PIPELINE else 'NOT MET'} (per CPU second: "
        f"{'MET' if pipeline_cpu_rate >= GOAL_PIPELINE else 'NOT MET'}); with reform documents "
        f"{GOAL_REFORM} docs/s (issue 23)"
    )
    cte = cte_row(opts.cte_n, opts.repeat) if opts.cte_n else None
    nfse = nfse_row(opts.nfse_n, opts.repeat) if opts.nfse_n else None
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    day: dict[str, float | int | None] = dict.fromkeys(
        ("latency_max_min", "latency_median_min", "published", "undelivered", "violations")
    )
    if not opts.no_day:
        day.update(simulated_day_latency())
        print(
            f"simulated day, publication→capture   : max {day['latency_max_min']} min, "
            f"median {day['latency_median_min']} min over {day['published']} documents "
            f"(undelivered {day['undelivered']}, violations {day['violations']}; seed baseline 62-65 min)"
        )
    if profile_text:
        print(profile_text)
    print(
        json.dumps(
            {
                "documents": len(docs),
                "mix": mix,
                "reform_share": opts.reform_share,
                "avg_inflated_kib": round(inflated / len(docs) / 1024, 2),
                "ours_parse_per_s": round(ours_parse_rate),
                "ours_pipeline_per_s": round(pipeline_rate),
                "ours_pipeline_runs_per_s": [round(len(docs) / s) for s in pipeline_times],
                "ours_pipeline_median_per_s": round(len(docs) / statistics.median(pipeline_times)),
                "ours_parse_cpu_per_s": round(parse_cpu_rate),
                "ours_pipeline_cpu_per_s": round(pipeline_cpu_rate),
                "ours_pipeline_cpu_runs_per_s": [round(len(docs) / s) for s in pipeline_cpu],
                "ours_pipeline_with_setup_per_s": round(with_setup_rate),
                "ours_pipeline_setup_ms": [round(s * 1000) for s in setup_times],
                "nfelib_parse_per_s": round(nfelib_rate),
                "nfelib_failed": failed,
                "speedup_vs_nfelib": round(speedup, 1),
                "goal_pipeline_per_s": GOAL_PIPELINE,
                "goal_speedup": GOAL_SPEEDUP,
                "pipeline_goal_met": pipeline_rate >= GOAL_PIPELINE,
                "goal_reform_per_s": GOAL_REFORM,
                "reform_goal_met_cpu": pipeline_cpu_rate >= GOAL_REFORM if opts.reform_share else None,
                "plain_pipeline_cpu_per_s": round(plain_cpu_rate) if plain_cpu_rate else None,
                "plain_pipeline_cpu_runs_per_s": [round(len(plain) / s) for s in plain_cpu] if plain else None,
                "reform_share_of_plain": reform_share_of_plain,
                "goal_reform_share_of_plain": GOAL_REFORM_SHARE_OF_PLAIN,
                "speedup_goal_met": speedup >= GOAL_SPEEDUP,
                "peak_rss_mb": round(peak_rss_mb, 1),
                "day_latency_max_min": day["latency_max_min"],
                "day_latency_median_min": day["latency_median_min"],
                "day_documents": day["published"],
                "day_undelivered": day["undelivered"],
                "day_violations": day["violations"],
                "cte": cte,
                "nfse": nfse,
            }
        )
    )
    return 0


if __name__ == "__main__":
    from tests.benchmarks.standin import use_memory_keyring

    use_memory_keyring()  # the sandbox's throwaway certificates, never a user's keyring
    raise SystemExit(main())
