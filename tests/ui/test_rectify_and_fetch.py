"""The window's Retificar manifestação and Buscar documento pela chave, over the sandbox (HTTPS with
mutual TLS on loopback, real SQLite, real widgets offscreen): the rectification is offered only
after a conclusive event and sent once; a key two companies could ask for asks which one first."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from pytestqt.qtbot import QtBot

from app.core.manifestation import CONFIRMACAO, NAO_REALIZADA
from app.core.products import Product
from app.desk import Desk
from app.ui.fetch_dialog import FetchDialog
from app.ui.main_window import MainWindow
from app.ui.rectify_dialog import RectifyDialog
from tests.cli.test_fetch_by_key import OTHER, _second_company
from tests.desk.conftest import fill
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness, nfe_harness

REASON = "Mercadoria devolvida ao fornecedor na entrega"


def _shot(widget: object, tmp_path: Path, name: str) -> Path:
    """The widget as PNG (``SCREENSHOTS`` names a folder to keep them for a person to look at)."""
    folder = Path(os.environ.get("SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    assert widget.grab().save(str(path))  # type: ignore[attr-defined]
    assert path.stat().st_size > 1000
    return path


@contextmanager
def _window(qtbot: QtBot, harness: Harness, tmp_path: Path) -> Iterator[MainWindow]:
    desk = Desk(harness.office.data_dir, clock=harness.clock, capture=False)
    desk.open()
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    try:
        window.resize(1366, 768)
        window.show()
        # Opened, and its company list read (the dialogs offer the companies as the window lists them).
        qtbot.waitUntil(lambda: window.opened is not None and bool(window.companies), timeout=20_000)
        yield window
    finally:
        window.close()
        desk.close()


def _events_sent(harness: Harness) -> int:
    return sum(1 for r in harness.sandbox.referee.requests if r.service == "nfe_evento")


def test_retificar_is_offered_once_after_a_conclusive_event_and_sends_one_rectification(
    qtbot: QtBot, tmp_path: Path
) -> None:
    with nfe_harness(tmp_path) as harness:
        key = fill(harness).received[1]
        with _window(qtbot, harness, tmp_path) as window:
            model = window.models[Product.NFE]
            qtbot.waitUntil(lambda: any(r.access_key == key for r in model.rows), timeout=20_000)
            window.views[Product.NFE].selectRow(next(i for i, r in enumerate(model.rows) if r.access_key == key))
            pane, actions, menu = window.detail, window.manifestations, window.menus.documents
            qtbot.waitUntil(lambda: pane.detail is not None and pane.detail.row.access_key == key, timeout=20_000)
            menu.aboutToShow.emit()
            assert actions.rectify in menu.actions() and not actions.rectify.isEnabled()  # nothing conclusive yet

            [row] = window.selected_rows()
            actions.send_manifestations(CONFIRMACAO, [row], None)
            qtbot.waitUntil(lambda: actions.last_outcomes is not None, timeout=20_000)
            [(_fresh, confirmed)] = actions.last_outcomes or []
            assert confirmed.accepted, confirmed.message
            qtbot.waitUntil(
                lambda: pane.detail is not None and bool(pane.detail.rectifiable_manifestations), timeout=20_000
            )
            menu.aboutToShow.emit()
            assert actions.rectify.isEnabled()
            assert _events_sent(harness) == 1

            seen: dict[str, object] = {}

            def answer() -> None:
                dialog = actions.last_dialog
                assert isinstance(dialog, RectifyDialog)
                seen["registered"] = dialog.findChild(object, "registered").text()  # type: ignore[union-attr]
                dialog.choices[NAO_REALIZADA].setChecked(True)
                seen["empty"] = dialog.send.isEnabled()  # Operação não Realizada needs its justification
                dialog.text.setPlainText(REASON)
                seen["typed"] = dialog.send.isEnabled()
                seen["png"] = _shot(dialog, tmp_path, "rectify_dialog.png")
                dialog.send.click()

            actions.last_outcomes = None
            QTimer.singleShot(0, answer)
            actions.rectify.trigger()
            assert seen["empty"] is False and seen["typed"] is True
            assert "Confirmação da Operação já foi registrada em" in str(seen["registered"])
            assert f"protocolo {confirmed.protocol}" in str(seen["registered"])
            qtbot.waitUntil(lambda: actions.last_outcomes is not None, timeout=20_000)
            [(_fresh, rectified)] = actions.last_outcomes or []
            assert rectified.accepted and rectified.tp_evento == NAO_REALIZADA, rectified.message
            assert _events_sent(harness) == 2  # exactly one rectification reached the service

            qtbot.waitUntil(
                lambda: pane.detail is not None and not pane.detail.rectifiable_manifestations, timeout=20_000
            )
            menu.aboutToShow.emit()
            assert not actions.rectify.isEnabled()  # a second rectification is not offered
            assert _events_sent(harness) == 2


def test_fetch_by_key_with_two_companies_asks_which_one_and_fetches(qtbot: QtBot, tmp_path: Path) -> None:
    with nfe_harness(tmp_path) as harness:
        _second_company(harness)
        key = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
        with _window(qtbot, harness, tmp_path) as window:
            window.menus.fetch.trigger()
            dialog = window.menus.fetch_by_key.dialog
            assert isinstance(dialog, FetchDialog) and dialog.isVisible()
            dialog.key.setText(key[:-1])
            assert dialog.problem.isVisibleTo(dialog) and "44" in dialog.problem.text()
            assert not dialog.search.isEnabled()
            _shot(dialog, tmp_path, "fetch_problem.png")
            dialog.key.setText(" ".join(key[i : i + 4] for i in range(0, 44, 4)))  # as printed on a DANFE
            assert not dialog.problem.isVisibleTo(dialog) and dialog.search.isEnabled()
            _shot(dialog, tmp_path, "fetch_dialog.png")

            dialog.search.click()
            qtbot.waitUntil(lambda: dialog.chooser is not None and dialog.chooser.isVisible(), timeout=20_000)
            chooser = dialog.chooser
            assert chooser is not None
            texts = [chooser.combo.itemText(i) for i in range(chooser.combo.count())]
            assert len(texts) == 2 and any("11.222.333/0001-81" in t for t in texts)
            assert any(OTHER[:2] + "." + OTHER[2:5] in t for t in texts)
            _shot(chooser, tmp_path, "fetch_chooser.png")
            chooser.combo.setCurrentIndex(next(i for i, t in enumerate(texts) if "11.222.333/0001-81" in t))
            chooser.accept()

            qtbot.waitUntil(lambda: dialog.outcome is not None, timeout=30_000)
            outcome = dialog.outcome
            assert outcome is not None and outcome.found and outcome.key == key, outcome
            assert "Documento baixado" in dialog.answer.text() or "já está na base" in dialog.answer.text()
            _shot(dialog, tmp_path, "fetch_dialog_done.png")
            model = window.models[Product.NFE]
            qtbot.waitUntil(lambda: any(r.access_key == key for r in model.rows), timeout=20_000)
            assert window.search.text() == key
