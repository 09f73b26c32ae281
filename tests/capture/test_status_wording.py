"""The status line of a company free to be queried agrees with its label ("Em espera")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.service import CaptureService
from app.capture.status import due_wait
from tests.support.nfe_harness import nfe_harness

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def test_due_wait_names_the_next_pass_of_a_running_capture() -> None:
    until, reason = due_wait(NOW + timedelta(minutes=2), NOW)
    assert until == NOW + timedelta(minutes=2)
    assert reason == "Consulta liberada: na próxima passagem da captura, às 09:02."


def test_due_wait_without_a_capture_running_says_what_will_query() -> None:
    until, reason = due_wait(None, NOW)
    assert until is None and "capture --once" in reason
    assert due_wait(NOW, NOW) == (None, "Consulta liberada: começa agora.")


def test_a_service_refused_the_folder_shows_who_captures_it(tmp_path: Path) -> None:
    # The window opened read-only beside a demo or a daemon: its status must not judge the other
    # process's certificates, and a company due is queried by that one.
    with nfe_harness(tmp_path) as harness:
        data_dir = harness.office.data_dir
        with DataFolderLock(data_dir, owner="demonstração do Captura DF-e"):
            service = CaptureService(harness.ctx, data_lock=DataFolderLock(data_dir))
            with pytest.raises(AlreadyRunning):
                service.start()
            assert service.captured_elsewhere is not None
            assert service.captured_elsewhere.startswith("demonstração do Captura DF-e, PID")
            [status] = service.status()
            assert status.label == "Em espera"
            assert status.reason.startswith("Consulta liberada, feita por quem captura nesta pasta: demonstração")
