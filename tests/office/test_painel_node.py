"""The Painel says which workstation captures for the office and since when (offscreen, 1366×768)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.desk import Desk
from tests.support.nfe_harness import Harness, nfe_harness
from tests.support.screens import keep_screenshot, open_window


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    with nfe_harness(tmp_path) as h:
        yield h


def test_the_painel_of_a_standing_by_workstation_names_the_node(qtbot: QtBot, harness: Harness, tmp_path: Path) -> None:
    node = Desk(harness.office.data_dir, clock=harness.clock, owner="teste (nó)")
    client = Desk(
        tmp_path / "estacao-b", clock=harness.clock, owner="teste (cliente)", database=str(harness.office.db.path)
    )
    try:
        node.open()
        client.open()
        assert node.capturing and not client.capturing and not client.read_only
        window = open_window(qtbot, client, tmp_path)
        window.pages.setCurrentIndex(1)
        label = window.dashboard.node
        qtbot.waitUntil(lambda: label.text().startswith("Captura: estação"), timeout=20_000)
        assert f"(PID {os.getpid()})" in label.text()
        assert label.text().endswith("; esta estação assume se ela parar.")
        assert label.isVisible()
        # The certificates are the node's: the client's empty vault is no problem of the company.
        assert [line.certificate_problem for line in client.companies()] == [None]
        keep_screenshot(window, "painel-no-de-captura.png")
        window.close()
    finally:
        client.close()
        node.close()
