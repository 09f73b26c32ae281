"""Capture cadence per company and product: the state, the rule book's numbers, and ``decide``.

Pure: every function takes ``now`` (aware UTC) and returns new frozen values. The answers of
the services change the state in :mod:`app.core.cadence_an` (NF-e, CT-e) and
:mod:`app.core.cadence_adn` (NFS-e); this module holds what both share.

Rule book: shared/seeds/000_* §4.2–4.3 (NF-e), §5.2–5.3 (CT-e), §6.2–6.3 (NFS-e).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from app.core.clock import to_brasilia
from app.core.cstat import NSU_ABOVE_MAX, SERVICE_DOWN, SERVICE_PAUSED
from app.core.products import Product

MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)

# The service's 1-hour wait is judged on its clock, against the dhResp it stamped. We time the
# next query as dhResp + 1 h + SAFETY_MARGIN converted with the offset measured on that very
# answer (dhResp - our clock on receipt). The measurement errs late by construction: dhResp is
# truncated to the second and our reading includes the response's travel time, so the
# converted instant is never before the service's own mark. The margin then absorbs what we
# cannot see: our clock slewing or being stepped by NTP during the hour (up to ~2 s), AN nodes
# whose clocks differ by seconds, the service recording its idle mark after stamping dhResp,
# and a 1-s rounding anywhere. 40 s is ~10x those; a document published right after a query is
# still captured within 61 minutes, the goal, while the rule book's 62-65 minutes are beaten.
SAFETY_MARGIN = timedelta(seconds=40)

# A cursor jump queues at most this many gap recoveries: 50 hours of point-query quota (20/h).
MAX_GAP_NSUS = 1000


@dataclass(frozen=True, slots=True)
class CaptureState:
    """The cursor and cadence of one company and product; engines change it with ``replace``."""

    company_id: int
    product: Product
    ult_nsu: int = 0
    max_nsu: int = 0
    last_query_at: datetime | None = None  # our clock, when the last answer arrived
    last_dh_resp: datetime | None = None
    clock_offset_ms: int | None = None  # government dhResp minus our clock, when measured
    next_query_at: datetime | None = None
    wait_reason: str | None = None
    blocked_until: datetime | None = None
    block_reason: str | None = None
    point_queries_blocked_until: datetime | None = None  # a 656 on consNSU/consChNFe
    paused: bool = False  # paused by the user
    consecutive_failures: int = 0
    last_cstat: str | None = None
    last_message: str | None = None
    disabled_reason: str | None = None


@dataclass(frozen=True, slots=True)
class CadenceRules:
    """The rule book's numbers for one product; read them next to the seed's tables."""

    product: Product
    service_label: str  # how the user knows the service
    scheduler_cycle: timedelta  # how often the engine looks at every company
    call_timeout: timedelta
    empty_queue_wait: timedelta  # the government's wait after an empty queue
    safety_margin: timedelta  # added to every wait timed from the service's clock
    fallback_wait: timedelta  # the rule book's wait from our clock, when there is no dhResp
    block_duration: timedelta  # after 656 and other rejections
    outage_pauses: tuple[tuple[int, timedelta], ...]  # cStat -> global pause
    lot_size: int  # most documents per answer
    failure_backoff_base: timedelta  # communication failure n waits base * 2**(n-1) ...
    failure_backoff_cap: timedelta  # ... up to this
    max_consecutive_failures: int | None  # then the company stops until a user resumes it
    alert_cstats: frozenset[int] = frozenset()
    # NFS-e (ADN) only
    chain_spacing: timedelta = timedelta(0)  # between lots of one run
    max_lots_per_run: int | None = None
    rejection_wait: timedelta | None = None  # REJEICAO when the run captured nothing
    throttle_wait: timedelta | None = None  # HTTP 429 without Retry-After
    certificate_retry: timedelta = HOUR  # certificate unavailable at run time
    max_certificate_rejections: int | None = None
    # §6.3 item 3: a missing or expired certificate is a wait of ``certificate_retry``, the
    # company kept active (NF-e and CT-e show it stopped until the certificate is replaced)
    certificate_waits: bool = False

    def outage_pause(self, cstat: int) -> timedelta | None:
        return dict(self.outage_pauses).get(cstat)

    def failure_backoff(self, failures: int) -> timedelta:
        """The wait after the ``failures``-th consecutive communication failure (1-based)."""
        step = self.failure_backoff_base * (1 << max(0, min(failures - 1, 20)))
        return min(step, self.failure_backoff_cap)


# §4.2: 3-min cycle, 61/62-min wait, chaining while ultNSU < maxNSU, 5-min timeout; §4.3: 108 -> 5
# min, 109 -> 20 min, 656 and other rejections -> 1 h; failures retried with a limit (ours: 1, 2,
# 4, 8 min, then stop at the 5th).
NFE_RULES = CadenceRules(
    product=Product.NFE,
    service_label="SEFAZ",
    scheduler_cycle=3 * MINUTE,
    call_timeout=5 * MINUTE,
    empty_queue_wait=HOUR,
    safety_margin=SAFETY_MARGIN,
    fallback_wait=62 * MINUTE,
    block_duration=HOUR,
    outage_pauses=((SERVICE_PAUSED, 5 * MINUTE), (SERVICE_DOWN, 20 * MINUTE)),
    lot_size=50,
    failure_backoff_base=MINUTE,
    failure_backoff_cap=8 * MINUTE,
    max_consecutive_failures=5,
    alert_cstats=frozenset({NSU_ABOVE_MAX}),
)

# §5.2: 60-s cycle, 1-h wait after an empty answer, 5-min timeout; §5.3: 589 is a critical alert.
CTE_RULES = replace(
    NFE_RULES,
    product=Product.CTE,
    scheduler_cycle=MINUTE,
    fallback_wait=HOUR,
)

# §6.2/6.3: 30-s cycle, up to 50 lots a run, 1 h after NENHUM_DOCUMENTO_LOCALIZADO, 429 ->
# Retry-After or 1 h, REJEICAO -> 10 min when the run captured nothing, certificate missing ->
# 1 h, transient failures exponential 1 min..1 h, 10 certificate rejections -> disabled.
# The ADN asks >= 1 s between calls (protocol.md §4.2).
NFSE_RULES = CadenceRules(
    product=Product.NFSE,
    service_label="ADN da NFS-e",
    scheduler_cycle=timedelta(seconds=30),
    call_timeout=MINUTE,
    empty_queue_wait=HOUR,
    safety_margin=SAFETY_MARGIN,
    fallback_wait=HOUR,
    block_duration=HOUR,
    outage_pauses=(),
    lot_size=50,
    failure_backoff_base=MINUTE,
    failure_backoff_cap=HOUR,
    max_consecutive_failures=None,
    chain_spacing=timedelta(seconds=1),
    max_lots_per_run=50,
    rejection_wait=10 * MINUTE,
    throttle_wait=HOUR,
    max_certificate_rejections=10,
    certificate_waits=True,
)

_RULES = {Product.NFE: NFE_RULES, Product.CTE: CTE_RULES, Product.NFSE: NFSE_RULES}


def rules_for(product: Product) -> CadenceRules:
    return _RULES[product]


# ---------------------------------------------------------------- decisions


class Action(StrEnum):
    QUERY = "query"
    WAIT = "wait"
    BLOCKED = "blocked"
    PAUSED = "paused"  # global pause of the service (108/109)
    DISABLED = "disabled"


# The words of the status line for each decision (``status``, the window's company badges).
CONSULTANDO = "Consultando"  # a query in flight (not a decision: the service knows it)
EM_ESPERA = "Em espera"
BLOQUEADA = "Bloqueada"
PAUSA_GLOBAL = "Pausa global"
DESATIVADA = "Desativada"
ACTION_LABELS: dict[Action, str] = {
    Action.QUERY: EM_ESPERA,  # due, waiting for the next pass of the scheduler
    Action.WAIT: EM_ESPERA,
    Action.BLOCKED: BLOQUEADA,
    Action.PAUSED: PAUSA_GLOBAL,
    Action.DISABLED: DESATIVADA,
}


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with one company now; ``reason`` is the Portuguese status line for the user."""

    action: Action
    reason: str
    until: datetime | None = None  # WAIT, BLOCKED, PAUSED
    ult_nsu: int | None = None  # QUERY: the ultNSU to send

    @property
    def query(self) -> bool:
        return self.action is Action.QUERY


@dataclass(frozen=True, slots=True)
class GlobalPause:
    """Pause every company of this product and environment until ``until`` (cStat 108/109)."""

    until: datetime
    cstat: int
    reason: str


@dataclass(frozen=True, slots=True)
class OtherConsumer:
    """Another system consumed this CNPJ's distribution with the same certificate (issue 22).

    Seen at ``seen_at`` (our clock) through ``cstat``: a 656 on a distNSU our cadence allowed, or a
    lot whose NSUs start past our cursor. It took the NSUs in ``(from_nsu, to_nsu]`` (empty when
    the 656 carried no later ultNSU): ``skipped`` of them we never received, ``queued`` of those
    became gap recoveries (consNSU), ``out_of_reach`` did not (past the per-jump limit: the oldest,
    first out of the service's 3-month window).
    """

    seen_at: datetime
    cstat: int
    from_nsu: int
    to_nsu: int
    skipped: int = 0
    queued: int = 0
    out_of_reach: int = 0


@dataclass(frozen=True, slots=True)
class Transition:
    """The state after an answer, and what the engine must do about it.

    ``chain_immediately``: query again now, without waiting for the scheduler (``decide`` still
    has the last word: the ADN asks a 1-s spacing between lots).
    """

    state: CaptureState
    chain_immediately: bool = False
    global_pause: GlobalPause | None = None
    gap_nsus: tuple[int, ...] = ()
    alert: str | None = None
    other_consumer: OtherConsumer | None = None


@dataclass(frozen=True, slots=True)
class CommunicationFailure:
    """No usable answer: timeout, 5xx, connection closed, truncated body, corrupt envelope.

    ``may_have_reached_service``: the service may have processed the request and its answer was
    lost (anything but a refused connection or a failed TLS handshake). Such a lost answer may
    have ended the queue, so the retry must respect the one-hour wait.
    """

    error: str
    may_have_reached_service: bool = True


def decide(
    state: CaptureState,
    rules: CadenceRules,
    now: datetime,
    *,
    global_pause_until: datetime | None,
    certificate_problem: str | None,
    enabled: bool,
) -> Decision:
    """May this company be queried now? Never QUERY while a wait, block or pause is in force."""
    _check_aware(now)
    service = rules.service_label
    if not enabled:
        return Decision(Action.DISABLED, f"Captura de {rules.product.label} desativada para esta empresa.")
    if certificate_problem:
        if rules.certificate_waits:
            until = now + rules.certificate_retry
            reason = f"Certificado indisponível ({certificate_problem}); nova verificação às {display_time(until, now)}"
            return Decision(Action.WAIT, reason + ".", until)
        return Decision(Action.DISABLED, f"Consultas suspensas antes de qualquer chamada: {certificate_problem}")
    if state.disabled_reason:
        return Decision(Action.DISABLED, state.disabled_reason)
    if state.paused:
        return Decision(Action.DISABLED, "Captura pausada pelo usuário.")
    if global_pause_until is not None and now < global_pause_until:
        return Decision(
            Action.PAUSED,
            f"{service} paralisada: consultas de todas as empresas pausadas até "
            f"{display_time(global_pause_until, now)}.",
            global_pause_until,
        )
    if state.blocked_until is not None and now < state.blocked_until:
        reason = state.block_reason or f"{service} bloqueou consultas até {display_time(state.blocked_until, now)}."
        return Decision(Action.BLOCKED, reason, state.blocked_until)
    if state.next_query_at is not None and now < state.next_query_at:
        reason = state.wait_reason or f"Aguardando até {display_time(state.next_query_at, now)}."
        return Decision(Action.WAIT, reason, state.next_query_at)
    return Decision(Action.QUERY, f"Consulta liberada a partir do NSU {state.ult_nsu:015d}.", ult_nsu=state.ult_nsu)


def after_lost_answers(
    state: CaptureState, rules: CadenceRules, answers_by: datetime, now: datetime
) -> CaptureState | None:
    """The state after a process died while answers could still come until ``answers_by`` (its
    call lease); None when it needs no change.

    An answer lost with the process may have been the 137 (or the lot reaching maxNSU) that
    started the service's hour: asking again sooner is a 656, whose cursor jump from NSU 0 even
    skips documents no gap recovery can name. Any company that could have been asked before the
    lease ended therefore waits the hour from its end. A company with a known backlog larger
    than a lot cannot have ended its queue, and asking the same ultNSU again is in sequence; one
    stopped, paused, blocked or waiting past the lease was not asked.
    """
    if state.disabled_reason or state.paused or state.max_nsu - state.ult_nsu > rules.lot_size:
        return None
    for limit in (state.blocked_until, state.next_query_at):
        if limit is not None and limit > answers_by:
            return None
    until = answers_by + rules.empty_queue_wait + rules.safety_margin
    reason = (
        "O programa foi encerrado com consultas talvez sem resposta: para não provocar consumo "
        f"indevido, a próxima consulta espera até {display_time(until, now)}."
    )
    return waiting(state, until, reason)


def point_queries_allowed(state: CaptureState, now: datetime) -> bool:
    """consNSU/consChNFe are suspended while a 656 block of the CNPJ runs (§4.6)."""
    until = state.point_queries_blocked_until
    return until is None or now >= until


def resume(state: CaptureState) -> CaptureState:
    """A user resumes a stopped company; waits and blocks still in force are kept."""
    return replace(state, disabled_reason=None, paused=False, consecutive_failures=0)


# ---------------------------------------------------------------- shared helpers


def display_time(instant: datetime, now: datetime) -> str:
    """Brasília ``HH:MM`` (``dd/mm HH:MM`` on another day), rounded up so it never promises early."""
    floor = instant.replace(second=0, microsecond=0)
    shown = to_brasilia(floor if floor == instant else floor + MINUTE)
    if shown.date() != to_brasilia(now).date():
        return shown.strftime("%d/%m %H:%M")
    return shown.strftime("%H:%M")


def measured_offset_ms(dh_resp: datetime, now: datetime) -> int:
    """dhResp minus our clock, floored: a smaller offset only moves our deadlines later."""
    return (dh_resp - now) // timedelta(milliseconds=1)


def after_service_mark(
    rules: CadenceRules,
    now: datetime,
    dh_resp: datetime | None,
    duration: timedelta,
    *,
    fallback: timedelta | None = None,
) -> datetime:
    """Our-clock instant at which ``duration`` has passed on the service's clock since its answer.

    With dhResp: dhResp + duration + margin, converted with the offset measured on this answer
    (``now`` is when the answer arrived). Without: ``fallback`` (the rule book's own wait) from
    our receipt, never shorter than duration + margin.
    """
    if dh_resp is None:
        return now + max(fallback or duration, duration + rules.safety_margin)
    offset = timedelta(milliseconds=measured_offset_ms(dh_resp, now))
    converted = dh_resp - offset + duration + rules.safety_margin
    return max(converted, now + duration)


def answered(state: CaptureState, now: datetime, dh_resp: datetime | None, code: str, message: str) -> CaptureState:
    """Bookkeeping common to every valid answer: times, offset, last status, failures reset."""
    expired_block = state.blocked_until is not None and now >= state.blocked_until
    return replace(
        state,
        last_query_at=now,
        last_dh_resp=dh_resp if dh_resp is not None else state.last_dh_resp,
        clock_offset_ms=measured_offset_ms(dh_resp, now) if dh_resp is not None else state.clock_offset_ms,
        consecutive_failures=0,
        last_cstat=code,
        last_message=message,
        blocked_until=None if expired_block else state.blocked_until,
        block_reason=None if expired_block else state.block_reason,
    )


def waiting(state: CaptureState, until: datetime, reason: str) -> CaptureState:
    """Set a wait; an existing later one is never shortened."""
    if state.next_query_at is not None and state.next_query_at > until:
        return state
    return replace(state, next_query_at=until, wait_reason=reason)


def skipped_nsus(
    old_ult: int, new_ult: int, received: tuple[int, ...], *, nothing_sent: bool = False
) -> tuple[tuple[int, ...], int]:
    """NSUs in (old_ult, new_ult] not received: the gaps a cursor move leaves, newest first kept.

    From NSU 0 the service starts at its 3-month window, whose first NSU we cannot know: there,
    only holes after the first received NSU count. Unless ``nothing_sent``: a 656 from 0 moves the
    cursor over NSUs another system consumed, all of them gaps (consNSU answers 137 for the ones
    already out of the window). At most MAX_GAP_NSUS are returned (the newest: older ones leave
    the 90-day window first anyway); returns (gaps, how many left out).
    """
    start = old_ult + 1
    if old_ult == 0 and not nothing_sent:
        if not received:
            return (), 0
        start = min(received)
    if new_ult < start:
        return (), 0
    have = {n for n in received if start <= n <= new_ult}
    total = new_ult - start + 1 - len(have)
    if total == 0:  # the usual lot: every NSU of the range arrived
        return (), 0
    gaps: list[int] = []
    nsu = new_ult
    while nsu >= start and len(gaps) < MAX_GAP_NSUS:
        if nsu not in have:
            gaps.append(nsu)
        nsu -= 1
    return tuple(reversed(gaps)), total - len(gaps)


def _check_aware(now: datetime) -> None:
    if now.tzinfo is None:
        raise ValueError("now must be an aware datetime")


def certificate_unavailable(state: CaptureState, rules: CadenceRules, now: datetime, problem: str) -> CaptureState:
    """The certificate could not be loaded at run time: wait, company kept active (§6.3 item 3)."""
    until = now + rules.certificate_retry
    why = f"Certificado indisponível ({problem}); nova verificação às {display_time(until, now)}."
    return waiting(state, until, why)
