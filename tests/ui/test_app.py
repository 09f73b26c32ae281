from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import keyring
from pytestqt.qtbot import QtBot

from app.capture.office import Office
from app.demo.environment import DemoOptions
from app.ui.app import run_gui


def test_demo_window_runs_the_capture_in_the_background_and_stops_it_on_close(qtbot: QtBot, tmp_path: Path) -> None:
    real_keyring = keyring.get_keyring()
    demo_dir = tmp_path / "dados-demo"
    assert run_gui(demo_dir, demo=True, demo_options=DemoOptions(speed=600), duration=4.0) == 0
    # Closed: the service, its pools and the sandbox are gone, the keyring is the real one again.
    assert keyring.get_keyring() is real_keyring
    assert not [t.name for t in threading.enumerate() if t.name.startswith(("captura-", "demo-"))]
    with Office(demo_dir) as office:
        assert len(office.companies.list_companies()) == 3
    window_log = (demo_dir / "logs" / "captura.log").read_text(encoding="utf-8")
    assert "Janela aberta" in window_log and "Janela fechada" in window_log  # the window logs like the daemon


def test_a_demo_window_ended_before_its_folder_opened_still_closes_the_demo(qtbot: QtBot, tmp_path: Path) -> None:
    # Ended while the opening worker still builds the demo (a loaded machine, a clerk quitting at once):
    # the desk made on the worker is closed all the same, so no sandbox, service or memory keyring outlives it.
    real_keyring = keyring.get_keyring()
    assert run_gui(tmp_path / "dados-demo", demo=True, demo_options=DemoOptions(speed=600), duration=0.0) == 0
    assert keyring.get_keyring() is real_keyring
    assert not [t.name for t in threading.enumerate() if t.name.startswith(("captura-", "demo-"))]


def test_the_demo_window_lists_the_demo_documents_as_they_arrive(qtbot: QtBot, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings

    from app.core.products import Product
    from app.desk import Desk
    from app.ui.main_window import MainWindow

    desk = Desk(tmp_path / "dados-demo", demo=DemoOptions(speed=600))
    window = MainWindow(desk, demo=True, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    try:
        assert window.windowTitle() == "Captura DF-e — Demonstração"
        qtbot.waitUntil(lambda: window.company_list.count() == 4, timeout=30_000)  # all + 3 demo companies
        model = window.models[Product.NFE]
        qtbot.waitUntil(lambda: len(model.rows) > 0, timeout=30_000)  # the backlog, captured in the background
        assert desk.capturing and window.capture_label.text() == "Captura em segundo plano ligada"
    finally:
        window.close()
        desk.close()


def _loaded_in_a_fresh_process(setup: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter holds after running ``setup``."""
    import json
    import subprocess
    import sys

    probe = f"import json, sys\n{setup}\nprint(json.dumps([m for m in {modules!r} if sys.modules.get(m)]))\n"
    # A guard against a hang, not a time limit: under Wine on the loaded 2-core machine the Windows
    # interpreter took 71 s to import the whole app (2 s on Linux).
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300)
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_the_window_starts_without_loading_the_store_or_the_capture() -> None:
    """Cold start: the window paints first; SQLAlchemy, Alembic, the capture service and the
    protocols load on the worker that opens the desk (tests/benchmarks/bench_grid.py measures it)."""
    setup = (
        "from app.cli.main import build_parser\n"
        "import app.launcher, app.ui.app, app.ui.main_window\n"
        "build_parser(commands=False).parse_known_args([])"
    )
    # The keyring and cryptography too (issue 24): the vault and the trust bundle load when used.
    heavy = ("sqlalchemy", "alembic", "httpx", "lxml", "apscheduler", "app.capture.service", "keyring", "cryptography")
    assert _loaded_in_a_fresh_process(setup, heavy) == []


def test_the_whole_app_loads_no_module_it_never_runs() -> None:
    """httpx's command-line client pulls in click, rich and pygments when they are installed (the
    development environment has them): ~7 MB the tray would carry all day (issue 20)."""
    setup = "import app.launcher, app.ui.main_window, app.ui.tray, app.desk.desk, app.capture.service, app.cli.main"
    assert _loaded_in_a_fresh_process(setup, ("httpx",)) == ["httpx"]  # the app does use httpx itself
    unused = ("httpx._main", "click", "rich", "pygments", "alembic", "mako")
    assert _loaded_in_a_fresh_process(setup, unused) == []


def test_the_demo_window_shows_each_product_a_completed_resumo_and_a_block_respected(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """Over two simulated hours of the demo: NF-e, CT-e and NFS-e arrive, a resumo becomes the complete
    NF-e after the automatic Ciência, and the dashboard shows the 656 block another system
    caused, held for its hour (the sandbox's referee sees no violation of ours)."""
    from PySide6.QtCore import QSettings

    from app.core.cadence import HOUR, SAFETY_MARGIN, Action
    from app.core.products import Product
    from app.desk import Desk
    from app.store.records import RowKind
    from app.ui.main_window import MainWindow

    desk = Desk(tmp_path / "dados-demo", demo=DemoOptions(speed=900))
    window = MainWindow(desk, demo=True, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    try:
        nfe = window.models[Product.NFE]
        qtbot.waitUntil(lambda: any(r.row_kind is RowKind.COMPLETE for r in nfe.rows), timeout=60_000)
        assert any(r.row_kind is RowKind.SUMMARY for r in nfe.rows) or len(nfe.rows) > 1
        for product in (Product.CTE, Product.NFSE):
            window.tabs.setCurrentIndex(list(Product).index(product))
            qtbot.waitUntil(lambda p=product: len(window.models[p].rows) > 0, timeout=60_000)  # type: ignore[misc]
        window.pages.setCurrentIndex(1)
        board = window.dashboard
        # The block lasts 4 s of real time at speed 900, less than the dashboard's 5-s refresh timer:
        # asked to refresh on every look (a refresh still loading is not started twice), it cannot
        # miss the block between two timer refreshes (under Wine it did, every run).

        def blocked_shown() -> bool:
            board.refresh()
            return any(ln.action is Action.BLOCKED for ln in board.lines)

        qtbot.waitUntil(blocked_shown, timeout=60_000)
        [blocked] = [ln for ln in board.lines if ln.action is Action.BLOCKED]
        assert blocked.product is Product.NFE and "656" in blocked.last_answer
        # The block lasts the rule book's hour from the 656 answer, plus the cadence's safety margin.
        # At speed 900 that hour is 4 s of real time, so it is measured against what the app stamped,
        # not against a loaded machine's "now": the state's last answer (stamped on receipt). The call
        # log's ``at`` is when the request left: under Wine a 0.1-s call is 90 virtual seconds more.
        demo = desk._demo
        assert demo is not None and demo.sandbox is not None
        state = demo.ctx.cursors.get(blocked.company_id, Product.NFE)
        assert state.last_cstat == "656" and state.last_query_at is not None
        assert blocked.until is not None and state.blocked_until == blocked.until
        assert HOUR <= blocked.until - state.last_query_at <= HOUR + SAFETY_MARGIN + timedelta(seconds=1)
        asked = max(c.at for c in desk.dashboard.calls(product=Product.NFE) if c.cstat == "656")
        assert asked <= state.last_query_at  # that answer is the 656 call's
        assert demo.sandbox.referee.report()["violations"] == []
    finally:
        window.close()
        desk.close()


def test_the_tray_option_still_shows_the_window_where_there_is_no_tray(qtbot: QtBot, tmp_path: Path) -> None:
    """Start with Windows opens only the tray icon (Windows always has a tray); where there is
    none (offscreen here) the window shows, or nothing at all would."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.ui.main_window import MainWindow

    seen: list[bool] = []
    earlier = QApplication.topLevelWidgets()  # windows of earlier tests not yet deleted (wrappers kept alive)

    def look() -> None:
        new = [w for w in QApplication.topLevelWidgets() if not any(w is e for e in earlier)]
        seen.extend(w.isVisible() for w in new if isinstance(w, MainWindow))

    QTimer.singleShot(500, look)
    assert run_gui(tmp_path / "dados", tray_only=True, duration=1.5) == 0
    assert seen == [True]
