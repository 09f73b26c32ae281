"""ADN Contribuintes (NFS-e Nacional): ``GET /DFe/{NSU}`` and ``GET /NFSe/{chave}/Eventos``.

Protocol.md §4.2-4.3 and the official OpenAPI (shared/fixtures/specs/adn-contribuinte-openapi-prod.json):

- mutual TLS with the company's A1, TLS verification always on (``app.fiscal.http``'s factory);
  every request goes on a NEW connection (``Connection: close``: one company's certificate never
  shares a connection, not even with its own next request);
- ``GET /DFe/{NSU}?cnpjConsulta=…&lote=true`` sends the last NSU already held; the service
  answers the NSUs after it (a repeated one is absorbed by idempotency, while held+1 could skip
  one); the next cursor is the largest NSU received (the envelope has no ultNSU/maxNSU);
- the JSON is PascalCase (``LoteDistribuicaoNSUResponse``); HTTP 200, 400 and 404 all carry it:
  404 with ``NENHUM_DOCUMENTO_LOCALIZADO`` is an empty queue, not an error; ``REJEICAO`` carries
  error codes; HTTP 429 hands its ``Retry-After`` (seconds or an HTTP date) to the cadence;
  401/403 mean the service refused the certificate;
- transient failures (5xx, a connection that could not be made) are tried again after 1, 2 and
  4 seconds, all within the call's time limit (60 s), through the injectable clock; a lost
  answer (timeout while waiting, dropped connection, cut body) is not: it may have been the
  empty queue, and asking again sooner than an hour is the ADN's premature query
  (:func:`may_have_reached_service`); a breaker gate, when given, is asked before every attempt
  and told how it went.

Each ``ArquivoXml`` is decoded (base64 → bounded gunzip) into the document's exact bytes; a
corrupt one does not fail the answer: its :class:`AdnDocument` carries the error and the raw
text, so the engine can quarantine it.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any, Protocol

import httpx

from app.certs.a1 import A1Certificate
from app.config.endpoints import Service
from app.core.cadence_adn import AdnStatus
from app.core.clock import Clock
from app.core.ids import Cnpj, Cpf
from app.core.products import Environment
from app.core.retries import ADN_CALL_RETRY_SECONDS
from app.fiscal.errors import (
    CommunicationError,
    ConnectionFailed,
    HttpStatusError,
    MalformedResponse,
    ServiceTimeout,
    TlsRefused,
)
from app.fiscal.http import HttpClientFactory, read_bounded, translate
from app.safexml import CorruptPayload, MiB, XmlRejected, inflate

SERVICE = Service.NFSE_ADN_CONTRIBUINTES
RETRY_DELAYS = ADN_CALL_RETRY_SECONDS
MAX_RESPONSE_BYTES = 64 * MiB  # 50 documents of a few hundred KB each, base64'd
MAX_DOCUMENT_BYTES = 20 * MiB
_STATUSES = {status.value: status for status in AdnStatus}


# --- answers ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AdnMessage:
    """A ``MensagemProcessamento`` (an error or an alert)."""

    code: str
    description: str
    complement: str | None = None

    def text(self) -> str:
        extra = f" ({self.complement})" if self.complement else ""
        return f"{self.code}: {self.description}{extra}" if self.code else self.description + extra


@dataclass(frozen=True)
class AdnDocument:
    """One ``LoteDFe`` item: ``xml`` is the decoded original bytes, or None with ``error``."""

    nsu: int
    key: str | None  # ChaveAcesso
    doc_type: str  # TipoDocumento: NFSE, DPS, EVENTO, PEDIDO_REGISTRO_EVENTO, CNC, NENHUM
    event_type: str | None  # TipoEvento
    generated_at: str | None  # DataHoraGeracao, as written
    xml: bytes | None
    error: XmlRejected | None
    raw_b64: str = field(repr=False)
    xml_gzip: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class AdnReply:
    """A ``LoteDistribuicaoNSUResponse`` and the exchange that produced it."""

    status: AdnStatus
    documents: tuple[AdnDocument, ...]
    errors: tuple[AdnMessage, ...]
    alerts: tuple[AdnMessage, ...]
    environment: str | None  # TipoAmbiente
    version: str | None
    processed_at: str | None
    http_status: int
    request_line: str
    response_bytes: bytes = field(repr=False)
    attempts: int = 1

    @property
    def error_codes(self) -> tuple[str, ...]:
        return tuple(message.code for message in self.errors if message.code)

    @property
    def message(self) -> str:
        return "; ".join(message.text() for message in self.errors)


class AdnThrottled(CommunicationError):
    """HTTP 429: the ADN limits our queries; ``retry_after`` is what its header said, if anything."""

    reason = "throttled"
    retryable = False

    def __init__(self, retry_after: timedelta | None, *, url: str | None = None, detail: str | None = None) -> None:
        wait = f" (aguardar {int(retry_after.total_seconds())} s)" if retry_after is not None else ""
        super().__init__(f"O ADN limitou as consultas (HTTP 429){wait}.", url=url, detail=detail)
        self.retry_after = retry_after


class AdnCertificateRefused(CommunicationError):
    """HTTP 401/403, or a refused TLS handshake: the ADN did not accept the company's certificate."""

    reason = "certificate_refused"
    retryable = False

    def __init__(self, message: str, *, status: int | None = None, url: str | None = None) -> None:
        super().__init__(message, url=url)
        self.status = status


class CircuitOpen(CommunicationError):
    """A breaker is open: the call was not made."""

    reason = "circuit_open"
    retryable = False

    def __init__(self, until: datetime, message: str) -> None:
        super().__init__(message)
        self.until = until


class BreakerGate(Protocol):
    """Asked before every attempt (None: go; else when to try again) and told how it ended."""

    def open_until(self) -> tuple[datetime, str] | None: ...

    def record(self, failed: bool) -> None: ...


# --- parsing -----------------------------------------------------------------------------------


def retry_after(value: str | None, now: datetime) -> timedelta | None:
    """``Retry-After`` as a wait: whole seconds or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return timedelta(seconds=int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(timedelta(0), when - now)


def _messages(items: Any) -> tuple[AdnMessage, ...]:
    if isinstance(items, dict):  # reported to arrive as one object at times
        items = [items]
    if not isinstance(items, list):
        return ()
    found = []
    for item in items:
        if isinstance(item, dict):
            found.append(
                AdnMessage(
                    str(item.get("Codigo") or ""),
                    str(item.get("Descricao") or item.get("Mensagem") or ""),
                    str(item["Complemento"]) if item.get("Complemento") else None,
                )
            )
    return tuple(found)


def decode_document(item: dict[str, Any]) -> AdnDocument:
    """One ``LoteDFe`` entry, its ``ArquivoXml`` inflated (an error kept, never raised)."""
    nsu = item.get("NSU")
    if not isinstance(nsu, int) or isinstance(nsu, bool) or nsu < 0:
        raise MalformedResponse(f"Resposta do ADN com NSU inválido: {nsu!r}.")
    raw = item.get("ArquivoXml")
    raw_text = raw if isinstance(raw, str) else ""
    key = item.get("ChaveAcesso")
    document = AdnDocument(
        nsu=nsu,
        key=str(key).strip().upper() if key else None,
        doc_type=str(item.get("TipoDocumento") or "NENHUM"),
        event_type=str(item["TipoEvento"]) if item.get("TipoEvento") else None,
        generated_at=str(item["DataHoraGeracao"]) if item.get("DataHoraGeracao") else None,
        xml=None,
        error=None,
        raw_b64=raw_text,
    )
    try:
        packed = base64.b64decode("".join(raw_text.split()), validate=True)
    except (binascii.Error, ValueError):
        error = _corrupt("Conteúdo do documento ilegível: o base64 do ArquivoXml está corrompido.", "corrupt_base64")
        return replace(document, error=error)
    try:
        xml = inflate(packed, max_output=MAX_DOCUMENT_BYTES)
    except XmlRejected as error:
        return replace(document, error=error)
    return replace(document, xml=xml, xml_gzip=packed)


def _corrupt(message: str, reason: str) -> XmlRejected:
    return CorruptPayload(message, reason=reason)


def parse_reply(status: int, body: bytes, request_line: str, *, url: str | None = None) -> AdnReply:
    """A ``LoteDistribuicaoNSUResponse``; raises ``MalformedResponse`` for anything else."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise MalformedResponse(
            f"Resposta do ADN ilegível (HTTP {status}): não é JSON.", url=url, detail=str(error)[:200]
        ) from error
    if not isinstance(payload, dict):
        raise MalformedResponse(f"Resposta do ADN inesperada (HTTP {status}).", url=url)
    found = _STATUSES.get(str(payload.get("StatusProcessamento") or ""))
    if found is None:
        raise MalformedResponse(
            f"Resposta do ADN sem StatusProcessamento conhecido (HTTP {status}).",
            url=url,
            detail=body[:200].decode("utf-8", "replace"),
        )
    lote = payload.get("LoteDFe") or []
    if not isinstance(lote, list):
        raise MalformedResponse("Resposta do ADN com LoteDFe que não é uma lista.", url=url)
    documents = tuple(decode_document(item) for item in lote if isinstance(item, dict))
    return AdnReply(
        status=found,
        documents=documents,
        errors=_messages(payload.get("Erros")),
        alerts=_messages(payload.get("Alertas")),
        environment=payload.get("TipoAmbiente"),
        version=payload.get("VersaoAplicativo"),
        processed_at=payload.get("DataHoraProcessamento"),
        http_status=status,
        request_line=request_line,
        response_bytes=body,
    )


# --- client --------------------------------------------------------------------------------------


def may_have_reached_service(error: CommunicationError) -> bool:
    """Whether the ADN may have processed a request whose answer we lost.

    Not when the connection or the handshake failed, nor when an HTTP error status came back
    instead of the service's JSON (a gateway or the server refused it first); yes after a
    timeout while waiting, a connection dropped after sending, or a body cut short.
    """
    if isinstance(error, TlsRefused | HttpStatusError | AdnCertificateRefused | CircuitOpen | AdnThrottled):
        return False
    cause = error.__cause__
    if isinstance(error, ConnectionFailed | ServiceTimeout):
        return not isinstance(cause, httpx.ConnectError | httpx.ConnectTimeout)
    return True


def _transient(error: CommunicationError) -> bool:
    """Tried again within the call: a 5xx, or a connection that never carried the request. A lost
    answer is not (it may have been the empty queue: the cadence waits the hour instead)."""
    if isinstance(error, AdnThrottled | AdnCertificateRefused | CircuitOpen | TlsRefused):
        return False
    if isinstance(error, HttpStatusError):
        return error.status >= 500
    return error.retryable and not may_have_reached_service(error)


def _breaker_failure(error: CommunicationError) -> bool:
    """What counts against a breaker: transient failures and certificate refusals, not answers."""
    return not isinstance(error, AdnThrottled | CircuitOpen)


class AdnClient:
    """The ADN for one company's certificate: stateless between calls (the engine keeps cursors)."""

    def __init__(
        self,
        http_client: httpx.Client,
        base_url: str,
        *,
        clock: Clock,
        timeout: float = 60.0,
        retry_delays: tuple[float, ...] = RETRY_DELAYS,
        gate: BreakerGate | None = None,
    ) -> None:
        self.http_client = http_client
        self.base_url = base_url.rstrip("/")
        self.clock = clock
        self.timeout = timeout
        self.retry_delays = retry_delays
        self.gate = gate

    @classmethod
    def from_factory(
        cls,
        factory: HttpClientFactory,
        a1: A1Certificate,
        environment: Environment,
        *,
        clock: Clock,
        gate: BreakerGate | None = None,
    ) -> AdnClient:
        return cls(
            factory.client(a1, SERVICE, environment),
            factory.url(SERVICE, environment),
            clock=clock,
            timeout=factory.settings.call_timeout(SERVICE),
            gate=gate,
        )

    def distribution(self, interested: Cnpj | Cpf, last_nsu: int, *, lot: bool = True) -> AdnReply:
        """``GET /DFe/{last_nsu}``: the documents after the last NSU held (up to 50 with ``lot``)."""
        if last_nsu < 0:
            raise ValueError("NSU negativo")
        params = {"cnpjConsulta": interested.value, "lote": "true" if lot else "false"}
        return self._get(f"/DFe/{last_nsu}", params)

    def events(self, key: str) -> AdnReply:
        """``GET /NFSe/{key}/Eventos``: the registered events of one NFS-e."""
        return self._get(f"/NFSe/{key.strip().upper()}/Eventos", {})

    def _get(self, path: str, params: dict[str, str]) -> AdnReply:
        url = self.base_url + path
        query = "&".join(f"{k}={v}" for k, v in params.items())
        request_line = f"GET {path}" + (f"?{query}" if query else "")
        started = time.monotonic()
        slept = 0.0
        attempt = 0
        if self.gate is not None:
            held = self.gate.open_until()
            if held is not None:
                raise CircuitOpen(*held)
        while True:
            attempt += 1
            remaining = self.timeout - (time.monotonic() - started) - slept
            try:
                reply = self._attempt(url, params, request_line, max(1.0, remaining))
            except CommunicationError as error:
                if self.gate is not None:
                    self.gate.record(_breaker_failure(error))
                delay = self.retry_delays[attempt - 1] if attempt <= len(self.retry_delays) else None
                spent = time.monotonic() - started + slept
                if not _transient(error) or delay is None or spent + delay >= self.timeout:
                    raise
                if self.gate is not None and self.gate.open_until() is not None:
                    raise  # a breaker opened during this call's retries: stop here
                self.clock.sleep(delay)
                slept += delay
                continue
            if self.gate is not None:
                self.gate.record(False)
            return _with_attempts(reply, attempt)

    def _attempt(self, url: str, params: dict[str, str], request_line: str, timeout: float) -> AdnReply:
        headers = {"Accept": "application/json", "Connection": "close"}
        try:
            with self.http_client.stream("GET", url, params=params, headers=headers, timeout=timeout) as response:
                body = read_bounded(response, MAX_RESPONSE_BYTES, url)
                status = response.status_code
                header_retry = response.headers.get("Retry-After")
        except httpx.HTTPError as error:
            translated = translate(error, url)
            if (
                isinstance(translated, TlsRefused)
                and "CERTIFICATE_VERIFY_FAILED" not in (translated.detail or "").upper()
            ):
                # the handshake failed on our certificate, not on the server's: the ADN refused it
                raise AdnCertificateRefused(translated.message, url=url) from error
            raise translated from error
        if status == 429:
            raise AdnThrottled(
                retry_after(header_retry, self.clock.now()), url=url, detail=body[:200].decode("utf-8", "replace")
            )
        if status in (401, 403):
            detail = _refusal_detail(body)
            raise AdnCertificateRefused(
                f"O ADN recusou o certificado digital da empresa (HTTP {status}){detail}. Verifique se o "
                "certificado A1 é o da empresa, está válido e tem a cadeia ICP-Brasil completa.",
                status=status,
                url=url,
            )
        if status >= 500:
            raise HttpStatusError(status, url=url, detail=body[:200].decode("utf-8", "replace"))
        if status not in (200, 400, 404):
            raise HttpStatusError(status, url=url, detail=body[:200].decode("utf-8", "replace"))
        return parse_reply(status, body, request_line, url=url)


def _with_attempts(reply: AdnReply, attempts: int) -> AdnReply:
    return reply if attempts == 1 else replace(reply, attempts=attempts)


def _refusal_detail(body: bytes) -> str:
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return ""
    if not isinstance(payload, dict):
        return ""
    messages = _messages(payload.get("Erros") or payload.get("erro") or payload.get("erros"))
    return f": {'; '.join(m.text() for m in messages)}" if messages else ""
