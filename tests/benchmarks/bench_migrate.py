"""``database migrate --to``: bench_grid's SQLite data folder copied to a PostgreSQL database, timed.

    .venv/bin/python tests/benchmarks/bench_migrate.py [--documents 1000000] [--companies 200] [--seed 14]

The data folder is bench_grid's generated one (cached under /tmp, built in a child process when
missing), copied so the cache stays untouched. A throwaway PostgreSQL cluster (Debian's binaries,
tests.support.postgres) is started on a loopback port, and the copy runs once through the facade
the command uses (``app.desk.migration.migrate_to_office``): ``copy_seconds`` until the last batch
is written (its progress callback), ``verify_seconds`` after it (every row compared, the SHA-256
of every stored XML), ``migrate_seconds`` the whole (with the source's own migration to head).
Prints human lines, then ONE JSON object as the last line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.config.paths import database_path  # noqa: E402
from app.desk.migration import migrate_to_office  # noqa: E402
from tests.benchmarks.bench_grid import cached_folder  # noqa: E402
from tests.support.postgres import PostgresCluster  # noqa: E402


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--companies", type=int, default=200)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--regenerate", action="store_true", help="build bench_grid's cached database again")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    folder, _meta, generated = cached_folder(args, date.today())
    print(f"data folder: {folder} ({'generated now' if generated else 'cached'})")
    cluster = PostgresCluster().start()
    work = Path(tempfile.mkdtemp(prefix="bench-migrate-"))
    try:
        data_dir = work / "dados"
        data_dir.mkdir()
        shutil.copy2(database_path(folder), database_path(data_dir))
        size_mb = database_path(data_dir).stat().st_size / 1e6
        url = cluster.url(cluster.name_of(cluster.new_database())).replace("postgresql+psycopg", "postgresql")
        batches: list[float] = []
        started = time.perf_counter()
        summary = migrate_to_office(data_dir, url, progress=lambda *_: batches.append(time.perf_counter()))
        total = time.perf_counter() - started
        print("\n".join(summary.lines()[-4:]))
        copied = (batches[-1] - started) if batches else 0.0
        documents = {c.table: c.target for c in summary.report.counts}["documents"]
        result = {
            "bench": "migrate",
            "documents": documents,
            "companies": args.companies,
            "sqlite_mb": round(size_mb, 1),
            "rows": sum(c.source for c in summary.report.counts),
            "migrate_seconds": round(total, 1),
            "copy_seconds": round(copied, 1),
            "verify_seconds": round(total - copied, 1),
            "xml_checked": summary.report.xml_checked,
            "verified": summary.report.ok,
        }
        print(json.dumps(result))
        return 0 if result["verified"] else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
        cluster.stop()


if __name__ == "__main__":
    sys.exit(main())
