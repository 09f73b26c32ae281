"""A month of the capture service against the sandbox: the proof issue 5 asks for.

    .venv/bin/python tests/benchmarks/bench_month.py [--companies 200] [--days 30] [--seed 5] [--profile]

Every product the service drives (NF-e now), reached in-process (the sandbox's own request
handlers through ``Sandbox.transport``, no sockets) on a ``FakeClock`` driven by
``app.capture.simulation.drive``, exactly as the scheduler's jobs run. Over the month: third
parties issue 0-30 NF-e per company per day (written in set-up, published at their minutes; some
with the company as transporter, a few cancelled later), part of the companies have automatic
Ciência on (manifestations release the full NF-e under new NSUs), the national environment stops
(108 and 109), answers HTTP 5xx, times out, drops connections and sends corrupt docZips (bad
gzip and base64), and another system using the same certificate queries now and then (its 656s
are its own).

After the last publication the run drains for a few hours, then compares what the sandbox
published with what the store holds. Prints human lines, then ONE JSON object as the last line.
Goals (issue 5): 0 lost, 0 duplicated, 0 x 656 caused by us, 0 violations, NF-e latency max
<= 61 min, simulation wall time <= 5 min on the 2-core reference machine.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.capture.context import CaptureContext  # noqa: E402
from app.capture.office import Office  # noqa: E402
from app.capture.service import CaptureService  # noqa: E402
from app.capture.simulation import drive  # noqa: E402
from app.certs.a1 import A1Certificate  # noqa: E402
from app.config.paths import database_path  # noqa: E402
from app.config.runtime import tune_garbage_collector  # noqa: E402
from app.core.clock import FakeClock  # noqa: E402
from app.core.ids import Cnpj  # noqa: E402
from app.core.products import Environment, Product  # noqa: E402
from app.sandbox.pki import IssuedCert  # noqa: E402
from app.sandbox.rules import DURING_BLOCK, OUT_OF_SEQUENCE, POINT_QUOTA, PREMATURE  # noqa: E402
from app.sandbox.sandbox import Sandbox  # noqa: E402
from app.sandbox.serve import write_settings  # noqa: E402
from app.store.records import CaptureSettings, Company  # noqa: E402

START = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)  # 00:00 in Brasília
DRAIN = timedelta(hours=4)  # after the last publication: waits, recoveries and Ciências settle
GOAL_WALL_SECONDS = 300
GOAL_LATENCY_SECONDS = 61 * 60
RULES_656 = (PREMATURE, DURING_BLOCK, OUT_OF_SEQUENCE, POINT_QUOTA)
# NF-e arrive on a one-minute grid (all of one minute in one timeline event): the arrival process
# stays realistic while the virtual clock needs at most one stop per minute for publications.
PUBLISH_GRID = timedelta(minutes=1)

Timeline = list[tuple[datetime, Callable[[], object]]]
_EVERYONE = "*"


def company_cnpj(index: int) -> str:
    return Cnpj.from_body(f"{12_000_000 + index:08d}0001").value


def supplier_cnpj(index: int) -> str:
    return Cnpj.from_body(f"{98_000_000 + index:08d}0001").value


class Month:
    """The office (real SQLite in a temp folder), the sandbox and the month's timeline."""

    def __init__(self, base: Path, companies: int, days: int, seed: int, args: argparse.Namespace) -> None:
        self.rng = random.Random(seed)
        self.days = days
        self.args = args
        self.clock = FakeClock(START)
        self.sandbox = Sandbox(self.clock, seed=seed)
        self.sandbox.serve_in_process()
        self.suppliers = [supplier_cnpj(i) for i in range(args.suppliers)]
        for cnpj in self.suppliers:  # the world exists before the month: their keys too
            self.sandbox.issuer(cnpj)
        data_dir = base / "dados"
        data_dir.mkdir()
        ca = base / "sandbox-ca.pem"
        ca.write_bytes(self.sandbox.ca_cert_pem)
        write_settings(self.sandbox, data_dir, ca)
        self.data_dir = data_dir
        self.office = Office(data_dir, clock=self.clock)
        self.certs: dict[str, IssuedCert] = {}
        self.companies: list[Company] = []
        self.auto_ciencia: set[str] = set()
        for index in range(companies):
            cnpj = company_cnpj(index)
            cert = self.certs[cnpj] = self.sandbox.company(cnpj, f"EMPRESA {index:03d} LTDA")
            company = self.office.register_company(
                cert.pfx, cert.password, environment=Environment.HOMOLOGACAO, products=(Product.NFE,)
            )
            ciencia = self.rng.random() < args.ciencia_share
            if ciencia:
                self.auto_ciencia.add(cnpj)
            self.office.companies.save_settings(
                CaptureSettings(
                    company.id,
                    Product.NFE,
                    environment=Environment.HOMOLOGACAO,
                    c_uf_autor="35",
                    auto_ciencia=ciencia,
                    ciencia_wait_minutes=self.rng.choice((5, 10, 30, 60)),
                )
            )
            self.companies.append(company)
        self.ctx: CaptureContext = self.office.capture_context(
            transport_for=self._transport, rng=random.Random(seed + 1)
        )
        self.nfe_published = 0
        self.as_transporter = 0
        self.cancelled = 0
        self.competitor_queries = 0
        self.competitor_656 = 0
        self.outages: list[tuple[int, int]] = []  # (cStat, minutes)
        self.faults: dict[str, int] = defaultdict(int)
        self.service: CaptureService | None = None  # the person resumes stopped companies through it
        self.resumed = 0

    def _transport(self, a1: A1Certificate) -> Any:
        return self.sandbox.transport(self.certs[a1.holder_id])

    # ------------------------------------------------------------------ the month's script

    def timeline(self) -> Timeline:
        rng = self.rng
        by_minute: dict[datetime, list[tuple[str, str]]] = defaultdict(list)  # minute -> (company, role)
        for day in range(self.days):
            day_start = START + timedelta(days=day)
            for company in self.companies:
                for _ in range(rng.randint(0, self.args.max_per_day)):
                    # Business hours weigh more: three quarters of the notes between 08:00 and 20:00.
                    if rng.random() < 0.75:
                        minute = rng.randint(8 * 60, 20 * 60 - 1)
                    else:
                        minute = rng.randint(0, 24 * 60 - 1)
                    role = "transporter" if rng.random() < self.args.transporter_share else "recipient"
                    by_minute[day_start + minute * PUBLISH_GRID].append((company.cnpj.value, role))
        # The third parties write the month's notes before it starts (set-up: their issuers' work,
        # not the capture's); each is published, and gets its NSUs, at its minute.
        timeline: Timeline = [
            (at, self._publisher(at, self._issue(at, batch))) for at, batch in sorted(by_minute.items())
        ]
        end = START + timedelta(days=self.days)
        for day in range(self.days):
            day_start = START + timedelta(days=day)
            # Outages: a short 108 most days, a 109 about once a week.
            if rng.random() < 0.5:
                at = day_start + timedelta(minutes=rng.randint(0, 24 * 60 - 60))
                timeline.append((at, self._outage(108, rng.randint(5, 45))))
            if rng.random() < 1 / 7:
                at = day_start + timedelta(minutes=rng.randint(0, 24 * 60 - 120))
                timeline.append((at, self._outage(109, rng.randint(20, 90))))
            # Transport and content faults, a dozen a day, each on a random company's next call
            # (untargeted, they would all hit the first company of every pass).
            for _ in range(12):
                at = day_start + timedelta(seconds=rng.randint(0, 24 * 3600 - 1))
                kind = rng.choice(
                    (
                        "http_500",
                        "http_502",
                        "http_503",
                        "timeout",
                        "close",
                        "truncated",
                        "corrupt_gzip",
                        "corrupt_base64",
                    )
                )
                service = "nfe_evento" if kind.startswith("http_") and rng.random() < 0.25 else "nfe_dist"
                target = rng.choice(self.companies).cnpj.value
                timeline.append((at, self._fault(service, kind, rng.randint(1, 3), target)))
            # The competing system: a few queries a day on random companies.
            for _ in range(self.args.competitor_per_day):
                at = day_start + timedelta(seconds=rng.randint(0, 24 * 3600 - 1))
                cnpj = rng.choice(self.companies).cnpj.value
                timeline.append((at, self._competitor(cnpj)))
        assert all(at < end for at, _ in timeline)
        # Someone looks at the panel every hour, the drain included, and takes up any company the
        # cadence stopped after 5 failures in a row (its alert says "retome a captura"): counted.
        for hour in range(int((end + DRAIN - START) / timedelta(hours=1))):
            timeline.append((START + timedelta(hours=hour, minutes=30), self._person))
        timeline.sort(key=lambda item: item[0])
        return timeline

    def _issue(self, at: datetime, batch: list[tuple[str, str]]) -> list[Any]:
        issued = []
        for cnpj, role in batch:
            supplier = self.rng.choice(self.suppliers)
            if role == "transporter":
                # The company carries it: the full NF-e comes at once (the buyer is a third party).
                buyer = self.rng.choice([s for s in self.suppliers if s != supplier])
                issued.append(self.sandbox.publisher.issue_nfe(supplier, buyer, transporter=cnpj, at=at))
            else:
                issued.append(self.sandbox.publisher.issue_nfe(supplier, cnpj, at=at))
        return issued

    def _publisher(self, at: datetime, issued: list[Any]) -> Callable[[], object]:
        def publish() -> None:
            for generated in issued:
                nfe = self.sandbox.publisher.publish_issued_nfe(generated, at)
                if generated.transporter is not None:
                    self.as_transporter += 1
                self.nfe_published += 1
                if self.rng.random() < self.args.cancel_share:
                    self.cancelled += 1
                    self.sandbox.publish_nfe_event(
                        nfe, "110111", at=at, justification="Cancelamento por erro de digitacao"
                    )

        return publish

    def _person(self) -> None:
        assert self.service is not None
        for state in self.ctx.cursors.list_states(Product.NFE):
            if state.disabled_reason and self.service.resume(state.company_id, Product.NFE):
                self.resumed += 1

    def _outage(self, cstat: int, minutes: int) -> Callable[[], object]:
        def stop() -> None:
            self.outages.append((cstat, minutes))
            self.sandbox.outage("nfe_dist", cstat, self.clock.now() + timedelta(minutes=minutes))

        return stop

    def _fault(self, service: str, kind: str, count: int, cnpj: str) -> Callable[[], object]:
        def inject() -> None:
            self.faults[kind] += count
            self.sandbox.inject_fault(service, kind, count=count, cnpj=cnpj)

        return inject

    def _competitor(self, cnpj: str) -> Callable[[], object]:
        def query() -> None:
            self.competitor_queries += 1
            if self.sandbox.competitor_query(cnpj, "nfe") == 656:
                self.competitor_656 += 1

        return query

    # ------------------------------------------------------------------ the verdict

    def verdict(self) -> dict[str, Any]:
        report = self.sandbox.referee.report()
        published = delivered = lost = 0
        latencies: list[float] = []
        quiet: list[float] = []
        self._disturbances = self._disturbed_at()
        lost_examples: list[str] = []
        stored_by_company = self._stored_nsus()
        for company in self.companies:
            data = report["companies"].get(company.cnpj.value, {}).get("nfe")
            if data is None:
                continue
            nsus = {p["nsu"] for p in data["published"]}
            published += len(nsus)
            delivered += len(data["delivered"])
            stored = stored_by_company.get(company.id, set())
            missing = sorted(nsus - stored)
            lost += len(missing)
            if missing and len(lost_examples) < 5:
                lost_examples.append(f"{company.cnpj.value}: {missing[:5]}")
            latencies += data["latency_seconds"].values()
            quiet += self._undisturbed(company.cnpj.value, data)
        ours = [r for r in self.sandbox.referee.requests if not r.competitor]
        received_656 = sum(1 for r in ours if r.cstat == 656)
        violations = report["violations"]
        caused_656 = sum(1 for v in violations if v["rule"] in RULES_656)
        duplicated = self._duplicates()
        # Companies the cadence stopped (e.g. 5 communication failures in a row): they need a person.
        stopped = [s.company_id for s in self.ctx.cursors.list_states(Product.NFE) if s.disabled_reason]
        return {
            "published": published,
            "stored": published - lost,
            "delivered": delivered,
            "lost": lost,
            "lost_examples": lost_examples,
            "companies_stopped": len(stopped),
            "duplicated": duplicated,
            "received_656": received_656,
            "caused_656_by_us": caused_656,
            "competitor_violations": len(report["competitor_violations"]),
            "violations": len(violations),
            "violations_by_rule": report["violations_by_rule"],
            "violation_examples": violations[:3],
            "requests": report["requests"],
            "requests_by_service": report["requests_by_service"],
            "latency": {
                "nfe": {
                    "max_seconds": max(latencies, default=0.0),
                    "median_seconds": statistics.median(latencies) if latencies else 0.0,
                    "samples": len(latencies),
                    # Deliveries no 656, outage, 5xx, lost answer or competing system touched
                    # (from an hour before publication to the delivery): the cadence alone.
                    "undisturbed_max_seconds": max(quiet, default=0.0),
                    "undisturbed_median_seconds": statistics.median(quiet) if quiet else 0.0,
                    "undisturbed_samples": len(quiet),
                }
            },
        }

    def _disturbed_at(self) -> dict[str, list[datetime]]:
        """Per CNPJ: when something other than a plain 137/138 happened on its distribution."""
        marks: dict[str, list[datetime]] = defaultdict(list)
        for r in self.sandbox.referee.requests:
            if r.service != "nfe_dist":
                continue
            if r.competitor or r.cstat not in (137, 138) or r.http_status != 200:
                marks[r.queried or r.caller_doc].append(r.at)
            if r.cstat in (108, 109):  # an outage pauses every company of the environment
                marks[_EVERYONE].append(r.at)
        for fault in self.sandbox.fired_faults:
            marks[fault.doc].append(fault.at)
        return marks

    def _undisturbed(self, cnpj: str, data: dict[str, Any]) -> list[float]:
        marks = self._disturbances.get(cnpj, []) + self._disturbances.get(_EVERYONE, [])
        published = {p["nsu"]: datetime.fromisoformat(p["published_at"]) for p in data["published"]}
        quiet = []
        for nsu, seconds in data["latency_seconds"].items():
            delivery = data["delivered"][nsu]
            if delivery["via"] != ["distNSU"]:
                continue
            start = published[int(nsu)] - timedelta(minutes=61)
            end = datetime.fromisoformat(delivery["first_at"])
            if not any(start <= mark <= end for mark in marks):
                quiet.append(seconds)
        return quiet

    def _stored_nsus(self) -> dict[int, set[int]]:
        with sqlite3.connect(database_path(self.data_dir)) as db:
            rows = db.execute("SELECT company_id, nsu FROM distribution_items WHERE product = 'nfe'").fetchall()
        stored: dict[int, set[int]] = defaultdict(set)
        for company_id, nsu in rows:
            stored[company_id].add(nsu)
        return stored

    def _duplicates(self) -> dict[str, int]:
        """Stored twice, straight from the database (the unique keys should make it impossible)."""
        queries = {
            "nsus": "SELECT count(*) FROM (SELECT 1 FROM distribution_items "
            "GROUP BY company_id, product, nsu HAVING count(*) > 1)",
            "documents": "SELECT count(*) FROM (SELECT 1 FROM documents WHERE access_key IS NOT NULL "
            "GROUP BY company_id, product, access_key HAVING count(*) > 1)",
            "events": "SELECT count(*) FROM (SELECT 1 FROM events "
            "GROUP BY company_id, product, access_key, tp_evento, n_seq_evento HAVING count(*) > 1)",
        }
        with sqlite3.connect(database_path(self.data_dir)) as db:
            return {name: int(db.execute(sql).fetchone()[0]) for name, sql in queries.items()}

    def close(self) -> None:
        self.office.close()
        self.sandbox.stop()


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--companies", type=int, default=200)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--max-per-day", type=int, default=30, help="NF-e per company per day: uniform 0..N")
    parser.add_argument("--transporter-share", type=float, default=0.1)
    parser.add_argument("--cancel-share", type=float, default=0.02)
    parser.add_argument("--ciencia-share", type=float, default=0.3, help="companies with automatic Ciência")
    parser.add_argument("--competitor-per-day", type=int, default=4)
    parser.add_argument("--suppliers", type=int, default=25)
    parser.add_argument("--profile", action="store_true", help="cProfile the simulation; top 40 by own time")
    parser.add_argument("--profile-out", type=Path, help="also write the cProfile stats to this file")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = _parse(argv)
    tune_garbage_collector()  # as app.launcher does for the service's process
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-month-") as tmp:
        month = Month(Path(tmp), args.companies, args.days, args.seed, args)
        try:
            timeline = month.timeline()
            setup_seconds = time.perf_counter() - wall
            print(
                f"setup: {args.companies} companies registered and the month's NF-e written in {setup_seconds:.1f} s",
                flush=True,
            )
            service = CaptureService(month.ctx, workers=1)
            month.service = service
            gc.freeze()  # the month's fixtures (certificates, timeline) are no garbage to look through
            end = START + timedelta(days=args.days) + DRAIN
            profiler = cProfile.Profile() if args.profile else None
            started = time.perf_counter()
            cpu_started = time.process_time()
            if profiler is not None:
                profiler.enable()
            stats = drive(service, month.clock, end, timeline=timeline)
            if profiler is not None:
                profiler.disable()
            simulation_seconds = time.perf_counter() - started
            cpu_seconds = time.process_time() - cpu_started  # all threads: steadier than wall on a shared VM
            print(
                f"simulated {args.days} day(s) + {DRAIN} drain in {simulation_seconds:.1f} s "
                f"({cpu_seconds:.1f} s CPU): "
                f"{stats.steps} steps, {stats.passes} passes, {stats.runs} runs, {stats.queries} distNSU, "
                f"{stats.documents} documents, {stats.failures} failures",
                flush=True,
            )
            verdict = month.verdict()
            result: dict[str, Any] = {
                "benchmark": "month",
                "seed": args.seed,
                "companies": args.companies,
                "simulated_days": args.days,
                "products": [p.value for p in service.captures],
                "wall_seconds": round(simulation_seconds, 1),
                "cpu_seconds": round(cpu_seconds, 1),
                "setup_seconds": round(setup_seconds, 1),
                "nfe_issued": month.nfe_published,
                "nfe_as_transporter": month.as_transporter,
                "cancellations": month.cancelled,
                "auto_ciencia_companies": len(month.auto_ciencia),
                "outages": len(month.outages),
                "faults": dict(month.faults),
                "competitor_queries": month.competitor_queries,
                "competitor_656": month.competitor_656,
                "resumed_by_person": month.resumed,
                "steps": stats.steps,
                "passes": stats.passes,
                "runs": stats.runs,
                "distnsu_queries": stats.queries,
                "run_failures": stats.failures,
                **verdict,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            }
            lat = verdict["latency"]["nfe"]
            result["goals_met"] = {
                "lost": verdict["lost"] == 0,
                "duplicated": not any(verdict["duplicated"].values()),
                "caused_656_by_us": verdict["caused_656_by_us"] == 0,
                "violations": verdict["violations"] == 0,
                "latency_max": lat["max_seconds"] <= GOAL_LATENCY_SECONDS,
                "latency_max_undisturbed": lat["undisturbed_max_seconds"] <= GOAL_LATENCY_SECONDS,
                "wall_time": simulation_seconds <= GOAL_WALL_SECONDS,
            }
        finally:
            month.close()
    if profiler is not None:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(40)
        if args.profile_out is not None:
            profiler.dump_stats(args.profile_out)
        print(out.getvalue())
    print(
        f"NF-e issued {result['nfe_issued']} ({result['nfe_as_transporter']} as transporter, "
        f"{result['cancellations']} cancelled); NSUs published {result['published']}, stored "
        f"{result['stored']}, lost {result['lost']}, duplicated {result['duplicated']}"
    )
    print(
        f"656 received {result['received_656']} (caused by us {result['caused_656_by_us']}; competitor's own "
        f"violations {result['competitor_violations']}); referee violations {result['violations']}"
    )
    print(
        f"NF-e latency: max {lat['max_seconds'] / 60:.1f} min, median {lat['median_seconds'] / 60:.1f} min "
        f"(undisturbed by 656/outages/faults/competitor: max {lat['undisturbed_max_seconds'] / 60:.1f} min "
        f"of {lat['undisturbed_samples']}); "
        f"wall {result['wall_seconds']} s (goal {GOAL_WALL_SECONDS}); peak RSS {result['peak_rss_mb']} MB"
    )
    print(json.dumps(result, ensure_ascii=False, default=str))
    return result


if __name__ == "__main__":
    main()
