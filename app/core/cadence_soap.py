"""Bookkeeping shared by the SOAP distribution answers (NF-e and CT-e, Ambiente Nacional).

Rule book §4.3 (NF-e) and §5.3 (CT-e): 137/138 move the cursor forward and wait 1 h when the
queue ends, chain while ultNSU < maxNSU, 108/109 pause the service, other rejections block the
CNPJ 1 h, 589 is an alert. Each product has its own policy (:mod:`app.core.cadence_nfe`,
:mod:`app.core.cadence_cte`; :mod:`app.core.cadence_an` picks it); a 656 on distNSU is the same for
both (issue 22): another system consumes the CNPJ with the same certificate, so the cursor moves
forward to the ultNSU the 656 carries and what the other system took becomes gap recoveries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from app.core.cadence import (
    CadenceRules,
    CaptureState,
    CommunicationFailure,
    GlobalPause,
    OtherConsumer,
    Transition,
    after_service_mark,
    answered,
    display_time,
    skipped_nsus,
    waiting,
)
from app.core.cstat import ANSWERED, CONSUMO_INDEVIDO, DOCUMENTS_FOUND, NO_DOCUMENTS


@dataclass(frozen=True, slots=True)
class DistributionResult:
    """The parts of a ``retDistDFeInt`` that drive the cadence; ``dh_resp`` aware, any offset."""

    cstat: int
    xmotivo: str
    dh_resp: datetime | None = None
    ult_nsu: int | None = None
    max_nsu: int | None = None
    received_nsus: tuple[int, ...] = ()


def move_forward(state: CaptureState, result: DistributionResult) -> tuple[int, int]:
    """Cursor and maxNSU moved only forward: never back, maxNSU never decreases."""
    ult = max(state.ult_nsu, result.ult_nsu or 0)
    return ult, max(state.max_nsu, result.max_nsu or 0)


def lot_gaps(
    old: CaptureState, new_ult: int, received: tuple[int, ...], *, nothing_sent: bool = False
) -> tuple[tuple[int, ...], str | None]:
    gaps, dropped = skipped_nsus(old.ult_nsu, new_ult, received, nothing_sent=nothing_sent)
    alert = None
    if dropped:
        alert = (
            f"{dropped} NSU(s) anteriores a {gaps[0]:015d} não entraram na recuperação de lacunas "
            "(limite por salto do cursor); reprocesse-os se necessário."
        )
    return gaps, alert


def lot_sighting(
    old: CaptureState, now: datetime, result: DistributionResult, gaps: tuple[int, ...]
) -> OtherConsumer | None:
    """A lot whose NSUs start past our cursor (not 0: from 0 the service starts at its 3-month
    window): the NSUs in between went to another system. None for a lot in sequence."""
    if old.ult_nsu == 0 or not result.received_nsus:
        return None
    first = min(result.received_nsus)
    if first <= old.ult_nsu + 1:
        return None
    skipped = first - 1 - old.ult_nsu
    queued = sum(1 for n in gaps if n < first)
    return OtherConsumer(now, result.cstat, old.ult_nsu, first - 1, skipped, queued, skipped - queued)


def after_documents(
    base: CaptureState, old: CaptureState, rules: CadenceRules, now: datetime, result: DistributionResult
) -> Transition:
    ult, max_nsu = move_forward(old, result)
    gaps, alert = lot_gaps(old, ult, result.received_nsus)
    sighting = lot_sighting(old, now, result, gaps)
    state = replace(base, ult_nsu=ult, max_nsu=max_nsu)
    if result.cstat == DOCUMENTS_FOUND and ult < max_nsu:
        # Continuation pending: empty the AN's queue lot by lot, as the NT asks.
        state = replace(state, next_query_at=None, wait_reason=None)
        return Transition(state, chain_immediately=True, gap_nsus=gaps, alert=alert, other_consumer=sighting)
    until = after_service_mark(rules, now, result.dh_resp, rules.empty_queue_wait, fallback=rules.fallback_wait)
    if result.cstat == NO_DOCUMENTS:
        why = f"Aguardando 1 hora após 'nenhum documento localizado' (até {display_time(until, now)})."
    else:
        why = f"Aguardando 1 hora: todos os documentos disponíveis foram recebidos (até {display_time(until, now)})."
    state = replace(state, next_query_at=until, wait_reason=why)
    return Transition(state, gap_nsus=gaps, alert=alert, other_consumer=sighting)


def after_consumo_indevido(
    base: CaptureState, old: CaptureState, rules: CadenceRules, now: datetime, result: DistributionResult
) -> Transition:
    """A 656 on a distNSU our cadence allowed: another system consumes this CNPJ (issue 22).

    Rule book §4.3 item 8 (NF-e; applied to CT-e too, a product decision: §5.3 is silent): the
    CNPJ and its point queries are blocked 1 h, and the cursor moves to the ultNSU the 656 carries
    (NT 2014.002 v1.14), only forward, as SEFAZ asks ("Deve ser utilizado o ultNSU nas
    solicitações subsequentes"). What the other system took in between becomes gap recoveries,
    fetched by consNSU within the 20-per-hour quota once the block ends (§4.6, §5.5).
    """
    ult, max_nsu = move_forward(old, result)
    gaps, dropped = skipped_nsus(old.ult_nsu, ult, result.received_nsus, nothing_sent=True)
    until = after_service_mark(rules, now, result.dh_resp, rules.block_duration)
    label = rules.product.label
    reason = (
        f"{rules.service_label} bloqueou consultas até {display_time(until, now)}: outro sistema consulta as "
        f"{label} desta empresa com o mesmo certificado (consumo indevido, cStat 656)."
    )
    state = replace(
        base,
        ult_nsu=ult,
        max_nsu=max_nsu,
        blocked_until=until,
        block_reason=reason,
        point_queries_blocked_until=until,
        next_query_at=None,
        wait_reason=None,
    )
    skipped = len(gaps) + dropped
    sighting = OtherConsumer(now, result.cstat, old.ult_nsu, ult, skipped, len(gaps), dropped)
    return Transition(state, gap_nsus=gaps, other_consumer=sighting)


def outage_pause(
    rules: CadenceRules, now: datetime, cstat: int, xmotivo: str, dh_resp: datetime | None, pause: timedelta
) -> GlobalPause:
    """The product's pause after a 108/109, whichever query (distribution or point) met it: the
    rule book's 5 or 20 minutes on the service's clock from its answer, plus the margin."""
    until = after_service_mark(rules, now, dh_resp, pause)
    reason = (
        f"{rules.service_label} paralisada (cStat {cstat}: {xmotivo}); "
        f"consultas pausadas até {display_time(until, now)}."
    )
    return GlobalPause(until, cstat, reason)


def after_outage(
    base: CaptureState, rules: CadenceRules, now: datetime, result: DistributionResult, pause: timedelta
) -> Transition:
    global_pause = outage_pause(rules, now, result.cstat, result.xmotivo, result.dh_resp, pause)
    # Also held on the company, so it waits even if the engine lost the global pause.
    state = waiting(base, global_pause.until, global_pause.reason)
    return Transition(state, global_pause=global_pause)


def after_rejection(base: CaptureState, rules: CadenceRules, now: datetime, result: DistributionResult) -> Transition:
    until = after_service_mark(rules, now, result.dh_resp, rules.block_duration)
    reason = (
        f"Consultas suspensas até {display_time(until, now)} após rejeição da {rules.service_label} "
        f"(cStat {result.cstat}: {result.xmotivo})."
    )
    state = replace(base, blocked_until=until, block_reason=reason)
    alert = None
    if result.cstat in rules.alert_cstats:
        alert = (
            f"cStat {result.cstat} na consulta de {rules.product.label}: o NSU informado "
            f"({base.ult_nsu:015d}) está além do maior NSU do Ambiente Nacional. {result.xmotivo}"
        )
    return Transition(state, alert=alert)


def after_failure(state: CaptureState, rules: CadenceRules, now: datetime, failure: CommunicationFailure) -> Transition:
    failures = state.consecutive_failures + 1
    limit = rules.max_consecutive_failures
    counted = f"{failures} de {limit}" if limit else f"{failures}"
    base = replace(state, consecutive_failures=failures, last_cstat=None, last_message=failure.error)
    until = now + rules.failure_backoff(failures)
    why = f"Falha de comunicação ({counted}): {failure.error}. Nova tentativa às {display_time(until, now)}."
    lost_end = failure.may_have_reached_service and state.max_nsu - state.ult_nsu <= rules.lot_size
    if lost_end:
        # The lost answer may have been a 137 or the lot that reached maxNSU: asking again
        # within the hour would be a 656. Only a known backlog larger than one lot rules it out.
        until = max(until, now + rules.empty_queue_wait + rules.safety_margin)
        why = (
            f"Falha de comunicação ({counted}): {failure.error}. A resposta perdida pode ter encerrado a "
            f"fila; nova tentativa às {display_time(until, now)}, para não provocar consumo indevido."
        )
    if limit is not None and failures >= limit:
        reason = (
            f"Captura de {rules.product.label} interrompida após {failures} falhas de comunicação seguidas "
            f"({failure.error}). Verifique a conexão e retome a captura."
        )
        # Stopped, but the lost answer's hour still holds: a user who resumes at once must not
        # cause the 656 it guards against (bench_month found exactly that, 36 min after a timeout).
        stopped = waiting(base, until, why) if lost_end else base
        return Transition(replace(stopped, disabled_reason=reason), alert=reason)
    return Transition(waiting(base, until, why))


def apply_soap_distribution(
    state: CaptureState,
    rules: CadenceRules,
    now: datetime,
    result: DistributionResult | CommunicationFailure,
) -> Transition:
    """The state after a distNSU answer (NF-e or CT-e) that arrived at ``now`` (our clock)."""
    if isinstance(result, CommunicationFailure):
        return after_failure(state, rules, now, result)
    base = answered(state, now, result.dh_resp, str(result.cstat), result.xmotivo)
    if result.cstat in ANSWERED:
        return after_documents(base, state, rules, now, result)
    if result.cstat == CONSUMO_INDEVIDO:
        return after_consumo_indevido(base, state, rules, now, result)
    pause = rules.outage_pause(result.cstat)
    if pause is not None:
        return after_outage(base, rules, now, result, pause)
    return after_rejection(base, rules, now, result)


def apply_point_query_block(
    state: CaptureState, rules: CadenceRules, now: datetime, dh_resp: datetime | None
) -> CaptureState:
    """A 656 on consNSU/consChNFe: point queries suspended 1 h, distribution blocked too (§4.6)."""
    until = after_service_mark(rules, now, dh_resp, rules.block_duration)
    reason = (
        f"{rules.service_label} bloqueou consultas até {display_time(until, now)}: consumo indevido (cStat 656) "
        "em consulta pontual."
    )
    blocked = until if state.blocked_until is None else max(state.blocked_until, until)
    return replace(
        state,
        point_queries_blocked_until=until,
        blocked_until=blocked,
        block_reason=reason if blocked == until else state.block_reason,
        last_cstat=str(CONSUMO_INDEVIDO),
    )
