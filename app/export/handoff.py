"""Hand-off to the office's ERP: an HTTP POST of each captured document or event (seed 003 §6.2).

Event types and actions are the notification platform's, so an integration written for it needs
little change. At least once: a delivery is retried (1 minute, doubling, at most an hour apart)
until the receiver answers 2xx, and the receiver deduplicates on ``Idempotency-Key`` (company +
key + event + NSU). ``X-Captura-Signature: sha256=<hex>`` is the HMAC-SHA256 of the exact body
with the company's secret, kept in the OS keyring (never in the database, a log or a file).
What is sent obeys the same delivery rules as the exports (``app.export.rules``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import httpx
import keyring
from keyring.errors import KeyringError, NoKeyringError

from app.capture.jobs import Every, Job
from app.certs.vault import NoSecureStorage, SecureStorageFailed
from app.core.clock import Clock
from app.core.errors import CapturaError
from app.core.manifestation import MANIFESTATION_TYPES
from app.export.automatic import INTERVAL, retry_delay
from app.export.items import SUMMARY_KINDS, ExportItem, ItemSource
from app.export.rules import deliverable
from app.store.db import Database
from app.store.exports import DOCUMENT, EVENT, ExportRepository
from app.store.handoff import Delivery, HandoffRepository, NewDelivery
from app.store.records import Direction, DocumentSummary, EventRecord, Product

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Captura-Signature"
IDEMPOTENCY_HEADER = "Idempotency-Key"
TIMEOUT = httpx.Timeout(30.0, connect=10.0)
BATCH = 500

EVENT_TYPES = {
    Product.NFE: "product_invoice_inbound",
    Product.CTE: "transportation_invoice_inbound",
    Product.NFSE: "service_invoice_inbound",
}
NFE_SUMMARY_TYPE = "product_invoice_inbound_summary"
ISSUED, OUTBOUND = "issued_successfully", "outbound_successfully"
EVENT_RAISED, INPUT_EVENT_RAISED = "event_raised_successfully", "input_event_raised_successfully"
NFSE_EVENT_NAMES = {
    ISSUED: "inbound.serviceInvoice.received",
    OUTBOUND: "inbound.serviceInvoice.issued",
    EVENT_RAISED: "inbound.serviceInvoice.event.received",
}


KEPT_IN_KEYRING = "o segredo de assinatura da entrega ao ERP"  # named in the keyring's errors


class HandoffError(CapturaError):
    """The hand-off cannot be configured or run as asked."""


class HandoffSecrets:
    """Per-company signing secrets in the OS keyring (entry ``handoff:<CNPJ>``)."""

    def __init__(self, service_name: str = "CapturaDFe") -> None:
        self.service_name = service_name

    def create(self, cnpj: str) -> str:
        """A new random secret for ``cnpj`` (replacing any), returned once to show the user."""
        secret = secrets.token_urlsafe(32)
        try:
            keyring.set_password(self.service_name, f"handoff:{cnpj}", secret)
            stored = keyring.get_password(self.service_name, f"handoff:{cnpj}")
        except NoKeyringError:
            raise NoSecureStorage(KEPT_IN_KEYRING) from None
        except KeyringError as error:
            raise SecureStorageFailed(f"O cofre de senhas do sistema recusou guardar o segredo: {error}") from None
        if stored != secret:
            raise NoSecureStorage(KEPT_IN_KEYRING)
        return secret

    def get(self, cnpj: str) -> str:
        try:
            secret = keyring.get_password(self.service_name, f"handoff:{cnpj}")
        except NoKeyringError:
            raise NoSecureStorage(KEPT_IN_KEYRING) from None
        except KeyringError as error:
            raise SecureStorageFailed(f"O cofre de senhas do sistema não pôde ser lido: {error}") from None
        if secret is None:
            raise HandoffError(
                f"O segredo de assinatura da integração de {cnpj} não está no cofre de senhas: configure-a de novo."
            )
        return secret


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def classify(item: ExportItem) -> tuple[str, str]:
    """(event type, action) of seed 003 §6.2 for one item."""
    event_type = EVENT_TYPES[item.product]
    if item.event is not None:
        if item.product is Product.NFE and item.kind.value == "resEvento":
            return NFE_SUMMARY_TYPE, EVENT_RAISED
        manifestation = item.product is Product.NFE and item.event.tp_evento in MANIFESTATION_TYPES
        return event_type, INPUT_EVENT_RAISED if manifestation else EVENT_RAISED
    if item.product is Product.NFE and item.kind in SUMMARY_KINDS:
        return NFE_SUMMARY_TYPE, ISSUED
    emitted = item.document is not None and item.document.direction is Direction.EMITTED
    return event_type, OUTBOUND if emitted else ISSUED


def idempotency_key(item: ExportItem, nsu: int | None) -> str:
    """Company + key + event + NSU: equal for every retry and every "reenviar" of one arrival."""
    event = f"{item.event.tp_evento}-{item.event.n_seq_evento}" if item.event is not None else item.kind.value
    return f"{item.company.cnpj.value}:{item.access_key}:{event}:{nsu if nsu is not None else 0}"


def body_of(item: ExportItem, delivery: Delivery, xml: bytes) -> bytes:
    """The JSON body: what the notification says, the document's metadata and its exact XML."""
    doc, event = item.document, item.event
    payload: dict[str, object] = {
        "id": delivery.idempotency_key,
        "type": delivery.event_type,
        "action": delivery.action,
        "company": {"cnpj": item.company.cnpj.value, "name": item.company.name},
        "product": item.product.value,
        "accessKey": item.access_key,
        "nsu": delivery.nsu,
        "layout": item.kind.value,
        "document": _document_json(doc) if doc is not None else None,
        "event": _event_json(event) if event is not None else None,
        "xmlSha256": hashlib.sha256(xml).hexdigest(),
    }
    try:
        payload["xml"] = xml.decode("utf-8")  # NF-e, CT-e and NFS-e are UTF-8: lossless
    except UnicodeDecodeError:
        payload["xmlBase64"] = base64.b64encode(xml).decode("ascii")
    if item.product is Product.NFSE:
        payload["eventName"] = NFSE_EVENT_NAMES.get(delivery.action, NFSE_EVENT_NAMES[EVENT_RAISED])
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _document_json(doc: DocumentSummary) -> dict[str, object]:
    return {
        "model": doc.model,
        "serie": doc.serie,
        "number": doc.number,
        "issuedAt": doc.issued_at.isoformat() if doc.issued_at else None,
        "issuer": {"id": doc.emitter_id, "name": doc.emitter_name},
        "recipient": {"id": doc.recipient_id, "name": doc.recipient_name},
        "totalCents": doc.total_cents,
        "direction": doc.direction.value,
        "status": doc.status.value,
    }


def _event_json(event: EventRecord) -> dict[str, object]:
    return {
        "type": event.tp_evento,
        "sequence": event.n_seq_evento,
        "description": event.description,
        "protocol": event.protocol,
        "at": event.event_at.isoformat() if event.event_at else None,
    }


@dataclass
class HandoffRun:
    queued: int = 0
    delivered: int = 0
    failed: int = 0


class Handoff:
    """Queues what arrived for every active target (``collect``) and posts what is due (``deliver``)."""

    def __init__(
        self,
        db: Database,
        clock: Clock,
        *,
        client: httpx.Client | None = None,
        secrets_store: HandoffSecrets | None = None,
    ) -> None:
        self.db = db
        self.clock = clock
        self.repo = HandoffRepository(db)
        self.arrivals = ExportRepository(db)
        self.secrets = secrets_store or HandoffSecrets()
        self._client = client

    def configure(self, company_id: int, url: str) -> str:
        """Point the company at ``url`` with a new secret (returned once); history not included."""
        company = ItemSource(self.db).company(company_id)
        self.repo.set_target(company_id, url, watermark=self.arrivals.last_arrival())
        return self.secrets.create(company.cnpj.value)

    def run(self) -> HandoffRun:
        result = HandoffRun()
        result.queued = self.collect()
        self.deliver(result)
        return result

    def collect(self) -> int:
        source, queued = ItemSource(self.db), 0
        for target in self.repo.targets():
            watermark = target.watermark
            while arrived := self.arrivals.arrived_after(watermark, BATCH, company_id=target.company_id):
                news = []
                for arrival in arrived:
                    item_type = DOCUMENT if arrival.document_id is not None else EVENT
                    item_id = arrival.document_id if arrival.document_id is not None else arrival.event_id
                    item = source.load(item_type, item_id) if item_id is not None else None
                    if item is None or not deliverable(item, source.settings(item.company.id, item.product)):
                        continue
                    item = self._as_arrived(item, arrival.nsu)
                    event_type, action = classify(item)
                    key = idempotency_key(item, arrival.nsu)
                    news.append(
                        NewDelivery(key, item_type, item.item_id, item.access_key, arrival.nsu, event_type, action)
                    )
                watermark = arrived[-1].item_id
                queued += self.repo.enqueue(target.company_id, news, watermark)
        return queued

    def deliver(self, result: HandoffRun | None = None) -> HandoffRun:
        """Post what is due for the active targets. A receiver that cannot be reached is left
        for this run after its first failure: its other deliveries keep their turn and times."""
        result = result or HandoffRun()
        source = ItemSource(self.db)
        urls = {t.company_id: t.url for t in self.repo.targets()}
        unreachable: set[int] = set()
        client = self._client
        try:
            for delivery in self.repo.due(self.clock.now(), limit=BATCH, company_ids=list(urls)):
                if delivery.company_id in unreachable:
                    continue
                if client is None:  # built only when something is due: it loads the system's CA
                    client = httpx.Client(timeout=TIMEOUT)  # bundle (~30 ms), every run of the job
                outcome = self._post(client, urls[delivery.company_id], source, delivery)
                if outcome is True:
                    result.delivered += 1
                    continue
                result.failed += 1
                if outcome is None:
                    unreachable.add(delivery.company_id)
        finally:
            if self._client is None and client is not None:
                client.close()
        return result

    def next_due_at(self) -> datetime | None:
        return self.repo.next_attempt_at()

    def _post(self, client: httpx.Client, url: str, source: ItemSource, delivery: Delivery) -> bool | None:
        """True: delivered; False: refused (or not sendable); None: the receiver was not reached."""
        item = source.load(delivery.item_type, delivery.item_id)
        if item is None:
            self.repo.failed(delivery.id, None, "O documento não está mais no banco.", self._retry_at(delivery))
            return False
        item = self._as_arrived(item, delivery.nsu)
        body = body_of(item, delivery, item.xml)
        try:
            secret = self.secrets.get(item.company.cnpj.value)
        except CapturaError as error:
            self.repo.failed(delivery.id, None, error.message, self._retry_at(delivery))
            return False
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            IDEMPOTENCY_HEADER: delivery.idempotency_key,
            SIGNATURE_HEADER: sign(secret, body),
        }
        try:
            response = client.post(url, content=body, headers=headers)
        except httpx.HTTPError as error:
            reason = f"Falha de comunicação com {url}: {type(error).__name__}: {error}"
            self.repo.failed(delivery.id, None, reason, self._retry_at(delivery))
            log.warning("integração %s: %s", delivery.idempotency_key, reason)
            return None
        if 200 <= response.status_code < 300:
            self.repo.delivered(delivery.id, response.status_code)
            return True
        reason = f"O sistema de destino respondeu HTTP {response.status_code}."
        self.repo.failed(delivery.id, response.status_code, reason, self._retry_at(delivery))
        log.warning("integração %s: %s", delivery.idempotency_key, reason)
        return False

    def _as_arrived(self, item: ExportItem, nsu: int | None) -> ExportItem:
        """A document as the version that arrived with ``nsu`` (the resumo, even once complete)."""
        if item.item_type != DOCUMENT:
            return item
        found = self.repo.version(item.item_id, nsu)
        return item if found is None else replace(item, kind=found[0], xml=found[1])

    def _retry_at(self, delivery: Delivery) -> datetime:
        return self.clock.now() + retry_delay(delivery.attempts + 1)


def handoff_job(db: Database, clock: Clock, *, interval: timedelta = INTERVAL) -> Job:
    """The hand-off as one of the capture service's scheduled jobs (``CaptureService.add_job``)."""
    handoff = Handoff(db, clock)

    def run() -> str:  # the runs table keeps this line as the run's reason
        done = handoff.run()
        return f"{done.queued} novo(s), {done.delivered} entregue(s), {done.failed} com falha"

    return Job("integracao", "Envio ao sistema do escritório (ERP)", Every(interval), run)
