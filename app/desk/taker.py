"""The NFS-e taker's manifestations from the window: Confirmação and Rejeição do Tomador.

Only on a click (never automatic, rule book §6.5); the capture's NFS-e service checks and refuses
before anything is signed (not the taker, the company's own NFS-e, a certificate of another CNPJ)
and guards against repeating a rejected request (seed 004). Slow: call from a worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.capture.instance import AlreadyRunning, DataFolderLock
from app.capture.nfse.manifestation import NfseManifestationService, TakerOutcome
from app.core.products import Product
from app.core.taker import CONFIRMACAO_TOMADOR, REJEICAO_TOMADOR
from app.desk.views import GridRow, ManifestationLine, ManifestationOutcome
from app.store.records import Direction, DocumentStatus, ManifestationStatus

if TYPE_CHECKING:
    from app.desk.desk import Desk

TAKER_EVENTS = (CONFIRMACAO_TOMADOR, REJEICAO_TOMADOR)


def lines(desk: Desk, company_id: int, key: str) -> tuple[ManifestationLine, ...]:
    """The taker requests of one NFS-e, as the detail lists them."""
    result = []
    for view in NfseManifestationService(desk.ctx).view(company_id, key):
        request = view.request
        refused = request.status is ManifestationStatus.REJECTED and request.cstat is None
        counts = request.status is ManifestationStatus.REJECTED and not refused
        label = view.label if view.reason is None else f"{view.label} ({view.reason.code})"
        result.append(ManifestationLine(request, label, None, view.attempts.text if counts else "", refused))
    return tuple(result)


def allowed(row: GridRow, stored: tuple[ManifestationLine, ...]) -> tuple[str, ...]:
    """The taker events a click may ask for now: a received, valid NFS-e without one registered or
    pending (the service refuses the rest, saying why)."""
    if row.product is not Product.NFSE or row.is_event_row or row.quarantined:
        return ()
    if row.status in (DocumentStatus.CANCELLED, DocumentStatus.DENIED) or row.direction is not Direction.RECEIVED:
        return ()
    busy = {m.request.status for m in stored} & {ManifestationStatus.ACCEPTED, ManifestationStatus.PENDING}
    return () if busy else TAKER_EVENTS


def request(
    desk: Desk, company_id: int, key: str, tp_evento: str, reason_code: str | None, reason: str | None
) -> ManifestationOutcome:
    """Queue the taker event and send it now when this desk may (it captures, or nobody does);
    another instance capturing here sends it itself. Never raises for a refusal."""
    service = NfseManifestationService(desk.ctx)
    if desk.capturing:
        outcome = service.submit(company_id, key, tp_evento, reason_code, reason)
    else:
        try:
            with DataFolderLock(desk.office.data_dir, owner="janela do Captura DF-e (enviando uma manifestação)"):
                outcome = service.submit(company_id, key, tp_evento, reason_code, reason)
        except AlreadyRunning:
            outcome = service.submit(company_id, key, tp_evento, reason_code, reason, send_now=False)
    return _outcome(outcome)


def _outcome(outcome: TakerOutcome) -> ManifestationOutcome:
    stored = outcome.request
    return ManifestationOutcome(
        access_key=outcome.access_key,
        tp_evento=outcome.tp_evento,
        accepted=outcome.accepted,
        pending=outcome.status == "pending",
        refused=outcome.status == "refused",
        message=outcome.message,
        protocol=stored.protocol if stored else None,
        cstat=stored.cstat if stored else None,
        request=stored,
        attempts=outcome.attempts or "",
    )
