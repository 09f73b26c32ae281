from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.core.cadence import CaptureState
from app.core.health import health_alerts
from app.core.products import Product

NOW = datetime(2026, 11, 3, 2, 0, tzinfo=UTC)  # 23:00 in Brasília


def _state(**kw: object) -> CaptureState:
    return CaptureState(1, Product.CTE, **kw)  # type: ignore[arg-type]


def test_a_healthy_company_has_no_alert() -> None:
    assert health_alerts(_state(ult_nsu=9, max_nsu=9, last_query_at=NOW - timedelta(days=2)), NOW, label="CT-e") == []
    assert health_alerts(_state(ult_nsu=5, max_nsu=9, last_query_at=NOW - timedelta(hours=5)), NOW, label="CT-e") == []


def test_a_backlog_many_hours_without_capture_is_an_alert() -> None:
    [alert] = health_alerts(_state(ult_nsu=5, max_nsu=9, last_query_at=NOW - timedelta(hours=7)), NOW, label="CT-e")
    assert alert.startswith("4 documento(s) de CT-e pendente(s) há 7 h")


def test_a_cursor_ahead_of_the_service_is_an_alert() -> None:
    [alert] = health_alerts(_state(ult_nsu=20, max_nsu=9, last_query_at=NOW), NOW, label="NF-e")
    assert "à frente do Ambiente Nacional" in alert and "000000000000020" in alert
