"""The IBS/CBS credit report over bench_grid's documents (issue 23): goal <= 5 s for a million.

    .venv/bin/python tests/benchmarks/bench_reform_report.py [--documents 1000000] [--share 0.3] [--runs 3]

Generates bench_grid's documents (``bench_grid.generate``: the same companies, shares, kinds and
values) into a PRIVATE folder under /tmp/bench-reform-cache, keyed by the parameters and this
code's head revision (bench_grid's own cache is shared with other branches whose migrations
differ), copies its database into a temporary folder, then gives ``--share`` of the received
nfeProc the reform's values straight through sqlite3 (one ``document_reform`` row and one item
each; 2% notas de crédito, 1% de débito, 0.1% unreadable). Then, single-threaded, each run:
``Reports(db).ibs_cbs(Filters())`` (every company, all time: the widest report) and, apart,
writing its XLSX (``app.export.xlsx``'s streaming writer). Prints the median of ``--runs``
(after one cold run), wall and CPU seconds, and ONE JSON object as the last line. ``--evict``
drops the file's pages from the OS cache before each run (the disk-bound case).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_grid  # noqa: E402  (the grid's generator and cache)

CACHE = Path("/tmp/bench-reform-cache")

_FILL = """
INSERT INTO document_reform (document_id, has_groups, unreadable, purpose, base_cents, ibs_uf_cents,
    ibs_mun_cents, ibs_cents, cbs_cents, ibs_presumed_cents, ibs_presumed_suspended_cents, cbs_presumed_cents,
    cbs_presumed_suspended_cents, is_cents, total_cents)
SELECT id, 1, CASE WHEN id % 1000 = 7 THEN 1 ELSE 0 END,
    CASE WHEN id % 100 < 2 THEN '5' WHEN id % 100 = 2 THEN '6' ELSE '1' END,
    total_cents, total_cents / 1000, total_cents / 2000, total_cents / 1000 + total_cents / 2000,
    total_cents * 9 / 1000, CASE WHEN id % 10 = 0 THEN total_cents / 100 END, NULL, NULL, NULL,
    CASE WHEN id % 50 = 0 THEN total_cents / 20 END, total_cents
FROM documents WHERE kind = 'nfeProc' AND direction = 'received' AND abs(id * 2654435761 % 1000) < ?
"""
_ITEMS = """
INSERT INTO document_reform_items (document_id, item_number, cst, class_code, base_cents, ibs_uf_cents,
    ibs_mun_cents, ibs_cents, cbs_cents, is_cents)
SELECT document_id, 1, '000', '000001', base_cents, ibs_uf_cents, ibs_mun_cents, ibs_cents, cbs_cents, is_cents
FROM document_reform
"""


def _evict(database: Path) -> None:
    """Drop the database's pages from the OS cache (``--evict``): each run reads what it needs from
    the disk, as on a machine whose memory holds other work (a loaded one: the wall time then is
    the bytes read). Only this file's pages, written back first; the machine's cache stays."""
    for path in (database, database.with_name(database.name + "-wal")):
        if path.exists():
            descriptor = os.open(path, os.O_RDONLY)
            try:
                os.fsync(descriptor)
                os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(descriptor)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--companies", type=int, default=200)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--share", type=float, default=0.3, help="share of received nfeProc with the groups")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-xlsx", action="store_true", help="skip writing the XLSX")
    parser.add_argument(
        "--evict", action="store_true", help="drop the database file's pages from the OS cache before each run"
    )
    args = parser.parse_args()
    from app.export.reports import Filters, Reports
    from app.export.sheets import to_xlsx
    from app.store.db import head_revision, open_database

    name = f"docs{args.documents}-co{args.companies}-seed{args.seed}-r{head_revision()}"
    folder = CACHE / name
    if not (folder / "meta.json").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        started = time.perf_counter()
        meta = bench_grid.generate(folder, args.documents, args.companies, args.seed, datetime.now(UTC))
        meta["generation_seconds"] = round(time.perf_counter() - started, 1)
        (folder / "meta.json").write_text(json.dumps(meta, default=str), encoding="utf-8")
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))

    with tempfile.TemporaryDirectory(prefix="bench-reform-") as tmp:
        target = Path(tmp) / "captura.sqlite3"
        shutil.copyfile(bench_grid.database_path(folder), target)
        db = open_database(target)
        try:
            with db.write_driver() as driver:
                driver.execute(_FILL, (int(args.share * 1000),))
                driver.execute(_ITEMS)
                reform_rows = driver.execute("SELECT count(*) FROM document_reform").fetchone()[0]
            load = os.getloadavg()
            times, cpu_times, xlsx_times = [], [], []
            sheets = []
            for _ in range(args.runs + 1):
                if args.evict:
                    _evict(target)
                started, cpu = time.perf_counter(), time.process_time()
                sheets = Reports(db).ibs_cbs(Filters())
                times.append(time.perf_counter() - started)
                cpu_times.append(time.process_time() - cpu)
            started, cpu = time.perf_counter(), time.process_time()
            size = 0 if args.no_xlsx else len(to_xlsx(sheets))
            xlsx_times.append(time.perf_counter() - started)
            xlsx_cpu = time.process_time() - cpu
        finally:
            db.close()
    totals, documents = sheets
    result = {
        "bench": "reform_report",
        "documents": meta["documents"],
        "reform_documents": reform_rows,
        "total_rows": len(totals.rows),
        "document_rows": len(documents.rows),
        "report_cold_s": round(times[0], 2),
        "report_median_s": round(statistics.median(times[1:]), 2),
        "report_runs_s": [round(t, 2) for t in times],
        # CPU seconds of this process (SQLite runs in it): what the wall time is on an idle machine,
        # when the 2 cores are shared with other sessions (loadavg_before)
        "report_cpu_median_s": round(statistics.median(cpu_times[1:]), 2),
        "xlsx_s": round(xlsx_times[0], 2),
        "xlsx_cpu_s": round(xlsx_cpu, 2),
        "xlsx_bytes": size,
        "goal_s": 5.0,
        "evicted": args.evict,
        "loadavg_before": [round(v, 1) for v in load],
    }
    print(
        f"{meta['documents']} documents, {reform_rows} with the reform's values: report in "
        f"{result['report_median_s']} s (cold {result['report_cold_s']} s), {len(totals.rows)} total rows, "
        f"{len(documents.rows)} document rows; XLSX {result['xlsx_s']} s"
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
