"""NFS-e distribution answers (ADN, ``GET /DFe/{NSU}``) applied to the capture state.

Rule book §6.2–6.3: up to 50 lots a run, 1 h after NENHUM_DOCUMENTO_LOCALIZADO, 429 -> Retry-After
or 1 h, REJEICAO -> 10 min only when the run captured nothing (else the next cycle), transient
failures exponential 1 min..1 h, 10 consecutive certificate rejections -> capture disabled.
A failure after the request went out (its answer lost: it may have been the empty queue) waits
the hour the ADN asks after an empty answer, like NF-e's lost answers.
The ADN sends no dhResp, so its waits are timed from our receipt plus the safety margin.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from app.core.cadence import (
    CadenceRules,
    CaptureState,
    CommunicationFailure,
    Transition,
    after_service_mark,
    answered,
    display_time,
    waiting,
)

# Retry-After counts whole seconds: one more keeps us off the edge.
RETRY_AFTER_ROUNDING = timedelta(seconds=1)


class AdnStatus(StrEnum):
    """``StatusProcessamento`` of the ADN's ``LoteDistribuicaoNSUResponse``."""

    DOCUMENTS = "DOCUMENTOS_LOCALIZADOS"
    NO_DOCUMENTS = "NENHUM_DOCUMENTO_LOCALIZADO"  # also the HTTP 404 body with E2220
    REJECTED = "REJEICAO"


@dataclass(frozen=True, slots=True)
class AdnResult:
    """One ADN answer; ``lots_in_run`` counts this run's lots including this one."""

    status: AdnStatus
    received_nsus: tuple[int, ...] = ()
    message: str = ""
    error_codes: tuple[str, ...] = ()
    lots_in_run: int = 1
    captured_in_run: bool = False  # this or an earlier lot of the run brought documents


@dataclass(frozen=True, slots=True)
class AdnThrottled:
    """HTTP 429, with the ``Retry-After`` it carried, if any."""

    retry_after: timedelta | None = None


@dataclass(frozen=True, slots=True)
class AdnCertificateRejected:
    """The ADN refused the company's certificate (HTTP 401/403, or the TLS handshake)."""

    message: str


def apply_adn(
    state: CaptureState,
    rules: CadenceRules,
    now: datetime,
    result: AdnResult | AdnThrottled | AdnCertificateRejected | CommunicationFailure,
) -> Transition:
    """The state after an ADN answer that arrived at ``now``, and its effects."""
    if isinstance(result, CommunicationFailure):
        transition = _failure(state, rules, now, result.error, certificate=False)
        if result.may_have_reached_service:
            return _lost_answer(transition, rules, now)
        return transition
    if isinstance(result, AdnCertificateRejected):
        return _failure(state, rules, now, result.message, certificate=True)
    if isinstance(result, AdnThrottled):
        return _throttled(state, rules, now, result)
    code = result.error_codes[0] if result.error_codes else result.status.value[:10]
    base = answered(state, now, None, code, result.message or result.status.value)
    if result.status is AdnStatus.REJECTED:
        return _rejected(base, rules, now, result)
    ult = max([state.ult_nsu, *result.received_nsus])  # the highest NSU received, only forward
    base = replace(base, ult_nsu=ult, max_nsu=max(state.max_nsu, ult))
    if result.status is AdnStatus.DOCUMENTS and result.received_nsus:
        until = now + rules.chain_spacing
        more = rules.max_lots_per_run is None or result.lots_in_run < rules.max_lots_per_run
        why = "Continuando a captura: ainda há documentos no ADN." if more else "Continua no próximo ciclo."
        return Transition(replace(base, next_query_at=until, wait_reason=why), chain_immediately=more)
    until = after_service_mark(rules, now, None, rules.empty_queue_wait, fallback=rules.fallback_wait)
    why = f"Aguardando 1 hora após 'nenhum documento localizado' (até {display_time(until, now)})."
    return Transition(replace(base, next_query_at=until, wait_reason=why))


def _rejected(base: CaptureState, rules: CadenceRules, now: datetime, result: AdnResult) -> Transition:
    codes = ", ".join(result.error_codes) or "sem código"
    detail = f"{codes}: {result.message}" if result.message else codes
    if result.captured_in_run:
        # Lots already came in this run: try again on the next cycle, not in 10 minutes.
        until = now + rules.scheduler_cycle
    else:
        until = now + (rules.rejection_wait or rules.scheduler_cycle)
    why = f"O {rules.service_label} rejeitou a consulta ({detail}); nova tentativa às {display_time(until, now)}."
    return Transition(replace(base, next_query_at=until, wait_reason=why))


def _throttled(state: CaptureState, rules: CadenceRules, now: datetime, result: AdnThrottled) -> Transition:
    wait = result.retry_after + RETRY_AFTER_ROUNDING if result.retry_after is not None else rules.throttle_wait
    until = now + (wait or rules.block_duration)
    reason = f"O {rules.service_label} limitou as consultas (HTTP 429) até {display_time(until, now)}."
    state = replace(
        state,
        last_query_at=now,
        consecutive_failures=0,
        last_cstat="429",
        last_message="Too Many Requests",
        blocked_until=until,
        block_reason=reason,
    )
    return Transition(state)


def _lost_answer(transition: Transition, rules: CadenceRules, now: datetime) -> Transition:
    """The request went out and its answer was lost (timeout, dropped connection, cut body): it
    may have been NENHUM_DOCUMENTO_LOCALIZADO, after which the ADN wants an hour. Asking sooner is
    the premature query the ADN answers with 429, so the retry waits the hour (never less than
    the exponential wait)."""
    until = now + rules.empty_queue_wait + rules.safety_margin
    why = (
        "A resposta do ADN se perdeu (a consulta pode ter encontrado a fila vazia): para não consultar "
        f"antes da hora exigida, nova tentativa às {display_time(until, now)}."
    )
    return replace(transition, state=waiting(transition.state, until, why))


def _failure(state: CaptureState, rules: CadenceRules, now: datetime, error: str, *, certificate: bool) -> Transition:
    failures = state.consecutive_failures + 1
    base = replace(state, consecutive_failures=failures, last_cstat=None, last_message=error)
    limit = rules.max_certificate_rejections
    if certificate and limit is not None and failures >= limit:
        reason = (
            f"Captura de NFS-e desativada: o {rules.service_label} recusou o certificado {failures} vezes "
            f"seguidas ({error}). Corrija o certificado e retome a captura."
        )
        return Transition(replace(base, disabled_reason=reason), alert=reason)
    until = now + rules.failure_backoff(failures)
    detail = error.rstrip(". ")
    if certificate:
        why = f"O {rules.service_label} recusou o certificado ({failures} de {limit}): {detail}."
    else:
        why = f"Falha de comunicação com o {rules.service_label} ({failures}ª seguida): {detail}."
    return Transition(waiting(base, until, f"{why} Nova tentativa às {display_time(until, now)}."))
