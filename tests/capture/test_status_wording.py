"""The status line of a company free to be queried agrees with its label ("Em espera")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.capture.status import due_wait

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)


def test_due_wait_names_the_next_pass_of_a_running_capture() -> None:
    until, reason = due_wait(NOW + timedelta(minutes=2), NOW)
    assert until == NOW + timedelta(minutes=2)
    assert reason == "Consulta liberada: na próxima passagem da captura, às 09:02."


def test_due_wait_without_a_capture_running_says_what_will_query() -> None:
    until, reason = due_wait(None, NOW)
    assert until is None and "capture --once" in reason
    assert due_wait(NOW, NOW) == (None, "Consulta liberada: começa agora.")
