"""Health alerts of a SOAP distribution, checked by the daily routine (rule book §5.5).

"A rotina alerta a operação quando uma empresa com documentos pendentes fica muitas horas sem
captura, ou quando o cursor fica à frente do Ambiente Nacional." Pure: the capture state and
``now`` in, the Portuguese alert lines out.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from app.core.cadence import CaptureState, display_time

# "Muitas horas": six of them, six times the longest wait the cadence ever imposes (the hour).
STALE_BACKLOG_AFTER = timedelta(hours=6)


def health_alerts(state: CaptureState, now: datetime, *, label: str) -> list[str]:
    """What is wrong with one company's capture of product ``label`` (empty when healthy)."""
    alerts = []
    if state.ult_nsu > state.max_nsu > 0:
        alerts.append(
            f"Cursor de {label} à frente do Ambiente Nacional: NSU {state.ult_nsu:015d} acima do maior NSU "
            f"conhecido ({state.max_nsu:015d}). Verifique a base de dados."
        )
    pending = state.max_nsu - state.ult_nsu
    idle_since = state.last_query_at
    if pending > 0 and idle_since is not None and now - idle_since >= STALE_BACKLOG_AFTER:
        hours = int((now - idle_since) / timedelta(hours=1))
        alerts.append(
            f"{pending} documento(s) de {label} pendente(s) há {hours} h sem captura "
            f"(última consulta {display_time(idle_since, now)})."
        )
    return alerts
