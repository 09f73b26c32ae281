"""Manifestations from the desk, both products behind one call: the recipient's NF-e events
(Ciência, Confirmação, Desconhecimento, Operação não Realizada, rule book §4.5) and the NFS-e
taker's Confirmação and Rejeição (§6.5), always on a person's request (window or command line).

One manifestation: a registered conclusive NF-e event is never sent again by a plain request; the
one rectification NT 2020.001 v1.50 allows (protocol.md §3.2: a conclusive event and one more, the
last one counts) is its own, deliberate request (``rectify``). A request identical to one pending
or in flight is that request (nothing is sent twice). Every request is queued, then sent at once
by whoever may send for the data folder (``app.desk.sending``). Slow: call from a worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from app.capture.context import CaptureContext
from app.capture.nfe.manifestation import ManifestationRefused, NfeManifestationService
from app.capture.nfse.manifestation import NfseManifestationService, TakerManifestationRefused
from app.capture.service import CaptureService
from app.core.errors import CapturaError
from app.core.manifestation import (
    CIENCIA,
    CONCLUSIVE_TYPES,
    CONFIRMACAO,
    MANIFESTATION_TYPES,
    ManifestationState,
    manifestation_type,
)
from app.core.products import Product
from app.core.taker import CONFIRMACAO_TOMADOR, REJEICAO_TOMADOR, TAKER_TYPES
from app.desk.conclusive import Registered, registered_conclusive
from app.desk.sending import Sender
from app.desk.views import GridRow, ManifestationActions, ManifestationLine, ManifestationOutcome
from app.store.records import (
    Direction,
    DocumentStatus,
    KeyEventFacts,
    Manifestation,
    ManifestationStatus,
    RowKind,
)

TAKER_EVENTS = (CONFIRMACAO_TOMADOR, REJEICAO_TOMADOR)
_IN_FLIGHT = (ManifestationStatus.PENDING, ManifestationStatus.SENT)
RECTIFY_HINT = "Para corrigi-la, peça a retificação, permitida uma única vez e só de propósito"


class AlreadyRegistered(CapturaError):
    """A plain request for a key whose conclusive event is registered; ``rectifiable``: the one
    rectification is still available (as its own request)."""

    def __init__(self, message: str, rectifiable: bool) -> None:
        super().__init__(message)
        self.rectifiable = rectifiable


def nfe_refusal(
    tp_evento: str, registered: Sequence[Registered], in_flight: Sequence[Manifestation], *, rectify: bool
) -> str | None:
    """Why this NF-e request may not go (one manifestation), or None. ``registered``: the key's
    registered conclusive events; ``in_flight``: its requests pending or sent."""
    label = manifestation_type(tp_evento).label
    conclusive = tp_evento in CONCLUSIVE_TYPES
    busy = [m for m in in_flight if m.tp_evento in CONCLUSIVE_TYPES and (rectify or m.tp_evento != tp_evento)]
    if conclusive and busy:
        other = manifestation_type(busy[0].tp_evento).label
        return f"Já há uma {other} pendente para esta nota: aguarde o resultado antes de pedir outra."
    if not rectify:
        if not registered:
            return None
        last = registered[-1].text()
        if conclusive:
            return f"{last}. Uma manifestação conclusiva não é enviada de novo. {RECTIFY_HINT}."
        return f"{last}: a {label} não é mais necessária."
    if not conclusive:
        return "Só uma manifestação conclusiva (Confirmação, Desconhecimento ou Operação não Realizada) é retificada."
    if not registered:
        return "Não há manifestação conclusiva registrada para retificar: envie a manifestação sem retificação."
    if len(registered) > 1:
        return f"{registered[-1].text()}, como retificação: não há nova retificação permitida."
    return None


def nfe_actions(row: GridRow, facts: Sequence[KeyEventFacts], now: datetime) -> ManifestationActions:
    """The recipient events the office may send for this row now (protocol.md §3.2-3.7): a plain
    request, or the conclusive events offered as the one rectification."""
    if (
        row.product is not Product.NFE
        or row.direction is not Direction.RECEIVED
        or row.row_kind not in (RowKind.SUMMARY, RowKind.COMPLETE)
        or row.status in (DocumentStatus.CANCELLED, DocumentStatus.DENIED)
        or row.issued_at is None
        or row.manifestation is ManifestationState.REQUESTED  # one in flight: nothing else until it ends
    ):
        return ManifestationActions()
    registered = {(f.tp_evento, f.n_seq_evento) for f in facts if f.tp_evento in MANIFESTATION_TYPES}
    conclusive = [pair for pair in registered if pair[0] in CONCLUSIVE_TYPES]
    allowed: list[str] = []
    if not registered and now <= row.issued_at + timedelta(days=MANIFESTATION_TYPES[CIENCIA].deadline_days):
        allowed.append(CIENCIA)
    within = now <= row.issued_at + timedelta(days=MANIFESTATION_TYPES[CONFIRMACAO].deadline_days)
    if within and not conclusive:
        allowed += sorted(CONCLUSIVE_TYPES)
    rectifiable = tuple(sorted(CONCLUSIVE_TYPES)) if within and len(conclusive) == 1 else ()
    return ManifestationActions(tuple(allowed), rectifiable)


def taker_actions(row: GridRow, stored: tuple[ManifestationLine, ...]) -> ManifestationActions:
    """The taker events a click may ask for now: a received, valid NFS-e without one registered or
    pending (Sefin accepts one Confirmação OR one Rejeição; there is no rectification)."""
    if row.product is not Product.NFSE or row.is_event_row or row.quarantined:
        return ManifestationActions()
    if row.status in (DocumentStatus.CANCELLED, DocumentStatus.DENIED) or row.direction is not Direction.RECEIVED:
        return ManifestationActions()
    busy = {m.request.status for m in stored} & {ManifestationStatus.ACCEPTED, *_IN_FLIGHT}
    return ManifestationActions(() if busy else TAKER_EVENTS)


class Manifestations:
    """Both products' requests, over the desk's context, service and sender."""

    def __init__(self, ctx: CaptureContext, service: CaptureService, sender: Sender) -> None:
        self._ctx = ctx
        self._service = service
        self._sender = sender
        self._nfe = NfeManifestationService(ctx)
        self._nfse = NfseManifestationService(ctx)

    def lines(self, product: Product, company_id: int, key: str) -> tuple[ManifestationLine, ...]:
        """The requests of one document, as the detail lists them."""
        result = []
        if product is Product.NFE:
            for view in self._nfe.view(company_id, key):
                result.append(_line(view.request, view.label, view.deadline, view.attempts.text))
        elif product is Product.NFSE:
            for taker in self._nfse.view(company_id, key):
                label = taker.label if taker.reason is None else f"{taker.label} ({taker.reason.code})"
                result.append(_line(taker.request, label, None, taker.attempts.text))
        return tuple(result)

    def request(
        self,
        company_id: int,
        key: str,
        tp_evento: str,
        *,
        justification: str | None = None,
        reason_code: str | None = None,
        rectify: bool = False,
    ) -> ManifestationOutcome:
        """Queue the manifestation (NF-e or, for a taker event, NFS-e) and send it now when this desk
        may; never raises for a refusal: a refused request is recorded nowhere and says why."""
        taker = tp_evento in TAKER_TYPES
        product = Product.NFSE if taker else Product.NFE
        try:
            label = TAKER_TYPES[tp_evento].label if taker else manifestation_type(tp_evento).label
            if taker:
                if rectify:
                    raise CapturaError("A manifestação do tomador de uma NFS-e não tem retificação.")
                # A client of the office's node holds no certificate: the node checks it when it sends.
                elsewhere = self._sender.node_elsewhere() is not None
                stored = self._nfse.request(
                    company_id, key, tp_evento, reason_code, justification, certificate_here=not elsewhere
                )
            else:
                if reason_code is not None:
                    raise CapturaError("O motivo numerado só se aplica à rejeição do tomador de uma NFS-e.")
                stored = self._request_nfe(company_id, key, tp_evento, justification, rectify)
        except AlreadyRegistered as error:
            return ManifestationOutcome(
                key, tp_evento, False, False, True, error.message, rectifiable=error.rectifiable
            )
        except (ManifestationRefused, TakerManifestationRefused, CapturaError) as error:
            return ManifestationOutcome(key, tp_evento, False, False, True, error.message)
        here = True
        if stored.status is ManifestationStatus.PENDING:
            sent = self._sender.now_or_leave(
                lambda: self._service.dispatch_manifestations(product, company_id=company_id),
                "enviando uma manifestação",
            )
            here = sent.here
        final = next(
            m for m in self._ctx.manifestations.for_key(company_id, product, stored.access_key) if m.id == stored.id
        )
        return self._outcome(final, label, elsewhere=not here)

    def _request_nfe(
        self, company_id: int, key: str, tp_evento: str, justification: str | None, rectify: bool
    ) -> Manifestation:
        label = manifestation_type(tp_evento).label
        company = self._ctx.companies.get(company_id)
        problem = self._ctx.certificates.problem(company, self._ctx.clock.now())
        # A client of the office's node holds no certificate: the node checks it when it sends.
        if problem is not None and self._sender.node_elsewhere() is None:
            raise CapturaError(f"{label} não enviada: {problem}")
        plain = "".join(key.split())
        requests = self._ctx.manifestations.for_key(company_id, Product.NFE, plain)
        registered = registered_conclusive(self._ctx.events.for_key(company_id, Product.NFE, plain), requests)
        in_flight = [m for m in requests if m.status in _IN_FLIGHT]
        refusal = nfe_refusal(tp_evento, registered, in_flight, rectify=rectify)
        if refusal is not None:
            if registered and not rectify and not in_flight:
                raise AlreadyRegistered(refusal, rectifiable=len(registered) == 1 and tp_evento in CONCLUSIVE_TYPES)
            raise CapturaError(refusal)
        return self._nfe.request(company_id, plain, tp_evento, justification)

    def _outcome(self, final: Manifestation, label: str, *, elsewhere: bool) -> ManifestationOutcome:
        base = ManifestationOutcome(
            final.access_key,
            final.tp_evento,
            False,
            False,
            False,
            "",
            final.protocol,
            final.cstat,
            final,
            queued_elsewhere=elsewhere,
        )
        if final.status is ManifestationStatus.ACCEPTED:
            answer = final.x_motivo or f"cStat {final.cstat}"
            said = f"protocolo {final.protocol} ({answer})." if final.protocol else answer
            return replace(base, accepted=True, message=f"{label} registrada: {said}")
        if final.status is ManifestationStatus.REJECTED:
            reason = final.x_motivo or "sem motivo informado"
            if final.cstat is None:  # never reached the service
                return replace(base, refused=True, message=f"{label} não enviada: {reason}")
            attempts = self._attempts(final)
            return replace(base, message=f"{label} rejeitada: {reason} ({attempts})", attempts=attempts)
        where = "o serviço de captura em execução a enviará" if elsewhere else "será enviada pelo serviço de captura"
        detail = f" Último resultado: {final.x_motivo}." if final.x_motivo else ""
        return replace(base, pending=True, message=f"{label} pendente: {where}.{detail}")

    def _attempts(self, m: Manifestation) -> str:
        """NT 2018.002 / seed 004: "X de N tentativas" of this event in the last hour."""
        now = self._ctx.clock.now()
        if m.product is Product.NFSE:
            return self._nfse.attempts(m.access_key, m.tp_evento, now).text
        company = self._ctx.companies.get(m.company_id)
        return self._nfe.attempts(company, m.access_key, m.tp_evento, m.n_seq_evento, now).text


def _line(request: Manifestation, label: str, deadline: datetime | None, attempts: str) -> ManifestationLine:
    refused = request.status is ManifestationStatus.REJECTED and request.cstat is None
    counts = request.status is ManifestationStatus.REJECTED and not refused
    return ManifestationLine(request, label, deadline, attempts if counts else "", refused)
