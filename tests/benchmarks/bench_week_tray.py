"""A week in the tray: the real window closed to the tray, 50 companies, seven days on a sped-up clock.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_week_tray.py [--companies 50]
        [--days 7] [--speed 1440] [--nfe-per-day 10]

The app as a clerk leaves it on Monday morning: the real desk (``Desk(data_dir, clock=...)``, the
capture service, not the demo) over a data folder whose companies were registered from the test
PKI, the main window closed to the tray (hidden, offscreen) and the tray looking at the capture.
The sandbox serves the companies over HTTPS with mutual TLS from ANOTHER process
(``tests/support/remote_sandbox.py``) on the same sped-up clock, so every figure is the app's own.
The tray's look is divided by ``--timer-scale`` (its work per simulated day grows with the speed);
the live grids' 2-s look and the window's midnight timer run as they are (the midnight timer
waits the real time to the clock's next midnight: ``--speed`` times shorter).

Per simulated day (sampled when the window's day clock turns): the process's RSS, its Qt object
count (every QObject under the application and the top-level widgets), threads and open files.
At the end, with no interaction since the window was closed: the period's end is day 7 and the
NF-e grid's loaded rows are the first rows the desk lists now (day 7's arrivals on top).

Goals (issue 20): RSS growth <= 5 MB per day after day 1; threads and open files flat; no Qt
warning. The pools are counted against their bounds, not required flat (see ``POOLED_FILES``):
SQLite's descriptors are the high-water mark of connections open at once, the sockets one per
company. Prints human lines, then ONE JSON line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import sys
import tempfile
import threading
import time
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QObject, QSettings, QTimer, QtMsgType, qInstallMessageHandler  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from tests.support.bench_loop import rss_mb, run_loop, wait  # noqa: E402

GOAL_RSS_MB_PER_DAY = 5.0
SAMPLE_AFTER_MS = 5_000
# The offscreen platform's own notices (no window manager, no system tray): not the app's warnings.
PLATFORM_NOTICES = (
    "This plugin does not support propagateSizeHints",
    "QObject::connect: No such signal QPlatformNativeInterface::systemTrayWindowChanged",
)


def open_files() -> dict[str, int]:
    """This process's descriptors by kind: the SQLite files, sockets, pipes, others."""
    kinds: dict[str, int] = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed while listed (the listing's own descriptor, a socket just closed)
            continue
        if target.startswith("socket:"):
            kind = "socket"
        elif target.startswith(("pipe:", "anon_inode:")):
            kind = target.split(":")[0] + ":" + target.split(":")[1].strip("[]")
        else:
            kind = Path(target).name
        kinds[kind] = kinds.get(kind, 0) + 1
    return dict(sorted(kinds.items()))


# Pooled resources, counted against their bounds rather than required flat: SQLite's Unix VFS
# keeps a closed connection's descriptors open for reuse while other connections hold POSIX locks
# on the file (closing one would drop the process's locks), so its descriptors are the high-water
# mark of connections open at once (the pools' bound: SQLAlchemy's pool_size + max_overflow, the
# driver pool's kept ones, one per thread in use); the HTTP sockets are one keep-alive connection
# per company and service.
POOLED_FILES = ("captura.sqlite3", "captura.sqlite3-wal", "socket")


def qt_objects(app: QApplication) -> int:
    count = len(app.findChildren(QObject))
    for widget in app.topLevelWidgets():
        count += 1 + len(widget.findChildren(QObject))
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--companies", type=int, default=50)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--speed", type=float, default=1440.0, help="simulated seconds per real second")
    parser.add_argument("--nfe-per-day", type=float, default=10.0, help="NF-e per company per day")
    parser.add_argument("--timer-scale", type=float, default=10.0, help="the tray's look this much faster")
    args = parser.parse_args()

    import app.ui.tray as tray_module
    from app.core.clock import BRASILIA, to_brasilia
    from app.core.products import Product
    from app.desk import Desk
    from app.ui.main_window import MainWindow
    from tests.support.remote_sandbox import register_companies, remote_sandbox

    # At this speed the scheduler's cycles are milliseconds: its "skipped, still running" is noise.
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    tray_module.POLL_MS = int(tray_module.POLL_MS / args.timer_scale)
    warnings: list[str] = []

    def on_message(kind: QtMsgType, _context: Any, message: str) -> None:
        if kind in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            if not message.startswith(PLATFORM_NOTICES):
                warnings.append(message)

    qInstallMessageHandler(on_message)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    origin = datetime(2026, 11, 2, 8, 0, tzinfo=BRASILIA).astimezone(UTC)  # a Monday, 08:00 in Brasília
    samples: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with remote_sandbox(
            root, companies=args.companies, speed=args.speed, nfe_per_day=args.nfe_per_day, origin=origin
        ) as sandbox:
            setup_started = time.perf_counter()
            register_companies(sandbox)
            desk = Desk(sandbox.data_dir, clock=sandbox.clock)
            window = MainWindow(desk, settings=QSettings(str(root / "ui.ini"), QSettings.Format.IniFormat))
            tray = tray_module.Tray(window, system_tray=True)  # offscreen: no icon drawn, the real hide path
            window.resize(1366, 768)
            window.show()
            wait(lambda: window.opened is not None, 600, "a pasta de dados abrir")
            wait(lambda: window.models[Product.NFE].total is not None, 120, "a primeira página")
            assert not window.close() and not window.isVisible(), "a janela deveria ir para a bandeja"
            setup_seconds = time.perf_counter() - setup_started
            first_day = to_brasilia(desk.now()).date()

            def sqlite_bound() -> int:
                db = desk._ctx.db  # the bench reads the pools' sizes
                pool = db.engine.pool
                return int(pool.size() + pool._max_overflow + db.drivers.max_idle + len(os.listdir("/proc/self/task")))

            def sample() -> None:
                day = to_brasilia(desk.now()).date()
                kinds = open_files()
                samples.append(
                    {
                        "day": (day - first_day).days + 1,
                        "date": day.isoformat(),
                        "rss_mb": round(rss_mb(), 1),
                        "qt_objects": qt_objects(app),
                        "threads": len(os.listdir("/proc/self/task")),
                        "open_files": len(os.listdir("/proc/self/fd")),
                        "open_files_by_kind": kinds,
                        "open_files_outside_pools": sum(n for k, n in kinds.items() if k not in POOLED_FILES),
                        "sqlite_connections": kinds.get("captura.sqlite3", 0),
                        "sqlite_bound": sqlite_bound(),
                        "sockets": kinds.get("socket", 0),
                        "python_threads": sorted(t.name for t in threading.enumerate()),
                        "sandbox_rss_mb": round(sandbox.rss_mb(), 1),
                        "grid_rows": len(window.models[Product.NFE].rows),
                        "grid_total": window.models[Product.NFE].total,
                    }
                )
                print(f"  dia {samples[-1]}", file=sys.stderr, flush=True)

            sample()  # day 1, once the window is in the tray
            # A few seconds after each midnight: the grid has reloaded the new day's period.
            window.day_clock.turned.connect(lambda _day: QTimer.singleShot(SAMPLE_AFTER_MS, sample))
            started = time.perf_counter()
            wait(lambda: len(samples) > args.days, args.days * 86400 / args.speed * 3 + 120, "os dias simulados")
            week_seconds = time.perf_counter() - started
            last_day: date = to_brasilia(desk.now()).date()
            # The capture stops (so that the grid and the desk can be compared at one instant); the
            # window is left alone: its grid must come to the desk's first rows by itself.
            desk.pause_all()
            model = window.models[Product.NFE]

            def current() -> bool:
                fresh = [r.row_id for r in desk.cursor(model.grid_filter).next_page(50)]
                return bool(fresh) and [r.row_id for r in model.rows[:50]] == fresh

            deadline = time.monotonic() + 30
            while not current() and time.monotonic() < deadline:
                run_loop(500)
            listed_day = window.filters.date_to.date().toPython()
            day_filter = replace(model.grid_filter, issued_from=last_day, issued_to=last_day, by_capture=True)
            in_day = desk.cursor(day_filter).count()
            day_ids = {r.row_id for r in desk.cursor(day_filter).next_page(max(in_day, 1))}
            shown_of_day = sum(r.row_id in day_ids for r in model.rows)
            end_ok = listed_day == last_day and current() and shown_of_day > 0
            tray.quit()
            desk.close()
    daily = samples[1:]
    growth = [(b["rss_mb"] - a["rss_mb"]) for a, b in itertools.pairwise(daily)]
    per_day = (daily[-1]["rss_mb"] - daily[0]["rss_mb"]) / max(1, len(daily) - 1) if len(daily) > 1 else 0.0
    flat = {
        key: max(s[key] for s in daily) - min(s[key] for s in daily) if daily else 0
        for key in ("threads", "open_files", "qt_objects", "open_files_outside_pools")
    }
    pools_bounded = all(
        s["sqlite_connections"] <= s["sqlite_bound"] and s["sockets"] <= 2 * args.companies for s in samples
    )
    result = {
        "benchmark": "week_tray",
        "companies": args.companies,
        "days": args.days,
        "speed": args.speed,
        "nfe_per_company_day": args.nfe_per_day,
        "setup_seconds": round(setup_seconds, 1),
        "week_real_seconds": round(week_seconds, 1),
        "samples": samples,
        "rss_growth_mb_per_day_after_day_1": round(per_day, 2),
        "rss_daily_steps_mb": [round(g, 1) for g in growth],
        "range_after_day_1": flat,
        # The pools (HTTP keep-alive per company, SQLite connections) fill up to their bounds first.
        "range_from_day_3": {
            key: max(s[key] for s in samples[2:]) - min(s[key] for s in samples[2:]) if len(samples) > 2 else 0
            for key in ("threads", "open_files", "qt_objects")
        },
        "qt_warnings": warnings[:20],
        "qt_warning_count": len(warnings),
        "grid_follows_the_day": listed_day.isoformat(),
        "last_day": last_day.isoformat(),
        "documents_captured_last_day": in_day,
        "grid_rows_of_last_day": shown_of_day,
        "grid_current_without_interaction": end_ok,
        "goals": {
            "rss_mb_per_day": GOAL_RSS_MB_PER_DAY,
            "threads": "flat",
            "open_files": "flat outside the pools; SQLite connections and sockets within their bounds",
            "qt_warnings": 0,
        },
        "pools_within_bounds": pools_bounded,
        "met": per_day <= GOAL_RSS_MB_PER_DAY
        and flat["threads"] == 0
        and flat["open_files_outside_pools"] == 0
        and pools_bounded
        and not warnings
        and end_ok,
    }
    print(
        f"{args.days} dias simulados em {week_seconds:.0f} s: RSS {samples[0]['rss_mb']} -> {samples[-1]['rss_mb']} MB "
        f"({per_day:+.2f} MB/dia depois do dia 1); threads {flat['threads']}, arquivos {flat['open_files']}, "
        f"objetos Qt {flat['qt_objects']} de variação; {len(warnings)} aviso(s) do Qt; grade no dia "
        f"{listed_day} com as linhas atuais: {end_ok}"
    )
    print(json.dumps(result, ensure_ascii=False), flush=True)
    # PySide6 6.12 can crash while the interpreter tears its objects down (a refcount bug in the
    # binding, after everything here is closed): the figures are printed, leave without it.
    os._exit(0)


if __name__ == "__main__":
    from tests.benchmarks.standin import use_memory_keyring

    use_memory_keyring()  # the sandbox's throwaway certificates, never a user's keyring
    sys.exit(main())
