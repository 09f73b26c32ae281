"""An export profile made in the demo window runs by itself, as in the real window (issue 20 #10)."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.products import Product
from app.demo.environment import DemoOptions
from app.desk import Desk


def test_an_export_profile_made_in_the_demo_runs_on_its_own(qtbot: QtBot, tmp_path: Path) -> None:
    desk = Desk(tmp_path / "dados-demo", demo=DemoOptions(speed=600))
    target = tmp_path / "exportados"
    try:
        desk.open()
        desk.exports.add_profile(
            name="contabilidade",
            kind="arquivo",
            destination=str(target),
            pattern="",
            products=tuple(Product),
            include_pdf=False,
            cancelled_mode="move",
        )
        # No `export-profile run`: the demo's own service writes the captured documents.
        qtbot.waitUntil(lambda: target.exists() and any(target.rglob("*.xml")), timeout=60_000)
    finally:
        desk.close()
