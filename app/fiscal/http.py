"""HTTP clients for the government services: one mutual-TLS ``httpx.Client`` per company and endpoint.

Design decision: hand-built SOAP 1.2 envelopes with lxml + httpx, not zeep. zeep needs a WSDL
(none is published for CTeDistribuicaoDFe), rides on ``requests`` and measured 2x slower on
loopback (shared/docs/libraries.md §5); every service here is "one xs:any payload in, one out",
and signed XML must be embedded as bytes anyway. See :mod:`app.fiscal.soap`.

The client presents the company's A1 (``app.certs.tls.client_ssl_context``: the private key never
touches a disk in clear) and trusts the endpoint's ``ca_bundle`` (settings) or, by default, the
ICP-Brasil bundle given to the factory. Tests and simulations inject ``transport_for(a1)`` (e.g.
``Sandbox.transport``) and then no TLS context is built at all.

Every httpx failure is translated by :func:`translate` into the tree of
:mod:`app.fiscal.errors` (re-exported here), each with a Portuguese message and ``retryable``.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from app.certs.a1 import A1Certificate
from app.certs.tls import TrustBundleError, client_ssl_context
from app.config.endpoints import Service
from app.config.settings import Endpoint, Settings
from app.core.products import Environment
from app.fiscal.errors import (
    CommunicationError,
    ConnectionFailed,
    HttpStatusError,
    MalformedResponse,
    RequestInvalid,
    ServiceTimeout,
    SoapFault,
    TlsRefused,
)

__all__ = [
    "CommunicationError",
    "ConnectionFailed",
    "HttpClientFactory",
    "HttpStatusError",
    "MalformedResponse",
    "RequestInvalid",
    "ServiceClient",
    "ServiceTimeout",
    "SoapFault",
    "TlsRefused",
    "TransportFactory",
    "read_bounded",
    "translate",
]

TransportFactory = Callable[[A1Certificate], httpx.BaseTransport]
USER_AGENT = "CapturaDFe/0.1"
DEFAULT_CONNECT_TIMEOUT = 30.0
# A client no request used for this long (real seconds) is closed by ``release_idle``: its
# keep-alive connection is past httpx's own 5-s expiry (never reused), and rebuilding its TLS
# context costs ~4 ms, while 200 companies' idle clients held ~12 MB all day (issue 20).
IDLE_CLIENT_SECONDS = 30.0


class _ServiceCookies(httpx.Cookies):
    """A cookie jar that reads ``Set-Cookie`` only when an answer has one.

    The services set none, and the stdlib cookiejar costs ~15 us per answer on the hot path
    (issue 5); an answer that does set a cookie is still stored and sent back as before.
    """

    def extract_cookies(self, response: httpx.Response) -> None:
        headers = response.headers
        if "set-cookie" in headers or "set-cookie2" in headers:
            super().extract_cookies(response)


@dataclass(frozen=True)
class _PostTemplate:
    """A POST built once by ``build_request`` for one (URL, Content-Type); see ``build_post``."""

    url: httpx.URL
    headers: httpx.Headers
    extensions: dict[str, object]
    client_headers: list[tuple[bytes, bytes]]
    timeout: httpx.Timeout
    base_url: httpx.URL


class ServiceClient(httpx.Client):
    """The ``httpx.Client`` the factory builds: same behaviour, cheaper per request.

    A service client posts to a handful of fixed URLs thousands of times: :meth:`build_post`
    reuses the request ``build_request`` made for that URL (parsed URL, merged headers) instead
    of rebuilding it, and cookies are only parsed when an answer sets one.
    """

    def __init__(self, **kwargs: Any) -> None:
        cookies = kwargs.pop("cookies", None)
        super().__init__(**kwargs)
        self._service_cookies = _ServiceCookies(cookies)
        self._templates: dict[tuple[str, str], _PostTemplate] = {}
        self._use_lock = threading.Lock()
        self._sending = 0  # requests whose answer is not closed yet
        self._last_use = time.monotonic()

    def touch(self) -> None:
        """Handed out for a request (the factory's ``client``): not idle from now."""
        with self._use_lock:
            self._last_use = time.monotonic()

    def idle_for(self, now: float) -> float:
        """Real seconds since the client was last handed out or answered; 0 while a request runs."""
        with self._use_lock:
            return 0.0 if self._sending else now - self._last_use

    def _ended(self) -> None:
        with self._use_lock:
            self._sending -= 1
            self._last_use = time.monotonic()

    def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        """``httpx.Client.send``, counted until the answer is closed (streamed ones included)."""
        with self._use_lock:
            self._sending += 1
        try:
            response = super().send(request, **kwargs)
        except BaseException:
            self._ended()
            raise
        if response.is_closed:
            self._ended()
        else:
            response.stream = _EndsUse(response.stream, self._ended)
        return response

    @property
    def cookies(self) -> httpx.Cookies:
        return self._service_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self._service_cookies = _ServiceCookies(cookies)

    def build_post(self, url: str, content: bytes, content_type: str) -> httpx.Request:
        """Exactly ``build_request("POST", url, content=content, headers={"Content-Type": ...})``."""
        if not content or self.cookies or self.params:
            # no body (Content-Length goes first), a Cookie header or query parameters: the general path
            return self.build_request("POST", url, content=content, headers={"Content-Type": content_type})
        template = self._templates.get((url, content_type))
        if (
            template is None
            or template.timeout is not self.timeout  # the setters make new objects
            or template.base_url is not self.base_url
            or template.client_headers != self.headers.raw  # headers also change in place
        ):
            template = self._template(url, content_type)
        headers = httpx.Headers(template.headers)
        headers["Content-Length"] = str(len(content))
        request = httpx.Request(
            "POST", template.url, headers=headers, stream=httpx.ByteStream(content), extensions=template.extensions
        )
        request.read()  # as build_request leaves it: the body loaded (a no-op join of one chunk)
        return request

    def _template(self, url: str, content_type: str) -> _PostTemplate:
        # a one-byte body so build_request appends Content-Length where it always does (the end)
        built = self.build_request("POST", url, content=b"x", headers={"Content-Type": content_type})
        template = _PostTemplate(
            built.url, built.headers, built.extensions, self.headers.raw, self.timeout, self.base_url
        )
        self._templates[(url, content_type)] = template
        return template


class _EndsUse(httpx.SyncByteStream):
    """A streamed answer's body that tells its client, once, when it is closed."""

    def __init__(self, stream: httpx.SyncByteStream | httpx.AsyncByteStream, ended: Callable[[], None]) -> None:
        assert isinstance(stream, httpx.SyncByteStream)
        self._stream = stream
        self._ended: Callable[[], None] | None = ended

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._stream)

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            ended, self._ended = self._ended, None
            if ended is not None:
                ended()


@dataclass(frozen=True)
class _Built:
    """What a cached client was built from: a change (new A1, new URL or timeout) rebuilds it."""

    fingerprint: str
    endpoint: Endpoint
    timeout: float
    client: ServiceClient


class HttpClientFactory:
    """Builds and caches the ``httpx.Client`` of each (company, service, environment).

    ``icp_bundle`` is the PEM trust bundle for the real services (an endpoint's own ``ca_bundle``
    wins); ``transport_for`` replaces the network (sandbox in-process transport). Thread-safe;
    ``close()`` (or the context manager) closes every client.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        icp_bundle: Path | None = None,
        transport_for: TransportFactory | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self._settings = settings
        self._icp_bundle = icp_bundle
        self._transport_for = transport_for
        self._connect_timeout = connect_timeout
        self._clients: dict[tuple[str, Service, Environment], _Built] = {}
        self._lock = threading.Lock()
        self._closed = False

    @property
    def settings(self) -> Settings:
        return self._settings

    def update_settings(self, settings: Settings) -> None:
        """New settings: clients whose URL, bundle or timeout changed are rebuilt on next use."""
        with self._lock:
            self._settings = settings

    def endpoint(self, service: Service, environment: Environment) -> Endpoint:
        return self._settings.endpoint(service, environment)

    def url(self, service: Service, environment: Environment) -> str:
        return self.endpoint(service, environment).url

    def client(self, a1: A1Certificate, service: Service, environment: Environment) -> httpx.Client:
        """The client presenting ``a1`` to ``service``; built on first use, then reused."""
        with self._lock:
            if self._closed:
                raise RuntimeError("HttpClientFactory já foi encerrada")
            endpoint = self._settings.endpoint(service, environment)
            timeout = self._settings.call_timeout(service)
            key = (a1.holder_id, service, environment)
            built = self._clients.get(key)
            if (
                built is not None
                and built.fingerprint == a1.sha256_fingerprint
                and built.endpoint == endpoint
                and built.timeout == timeout
            ):
                built.client.touch()
                return built.client
            client = self._build(a1, endpoint, timeout)
            self._clients[key] = _Built(a1.sha256_fingerprint, endpoint, timeout, client)
        if built is not None:
            built.client.close()
        return client

    def _build(self, a1: A1Certificate, endpoint: Endpoint, timeout: float) -> ServiceClient:
        limits = httpx.Timeout(timeout, connect=min(self._connect_timeout, timeout))
        headers = {"User-Agent": USER_AGENT}
        if self._transport_for is not None:
            return ServiceClient(transport=self._transport_for(a1), timeout=limits, headers=headers)
        cafile = endpoint.ca_bundle or self._icp_bundle
        try:
            context = client_ssl_context(a1, cafile=cafile)
        except (OSError, ssl.SSLError) as exc:
            raise TrustBundleError(
                f"Não foi possível carregar a cadeia de certificados confiáveis ({cafile or 'sistema'}): "
                f"{exc}. Indique nas configurações um arquivo PEM com a cadeia ICP-Brasil."
            ) from exc
        return ServiceClient(verify=context, timeout=limits, http2=False, headers=headers)

    def discard(self, holder_id: str) -> None:
        """Close the clients of one company (certificate replaced or company removed)."""
        with self._lock:
            gone = [key for key in self._clients if key[0] == holder_id]
            clients = [self._clients.pop(key).client for key in gone]
        for client in clients:
            client.close()

    def release_idle(self, idle_for: float = IDLE_CLIENT_SECONDS, now: float | None = None) -> int:
        """Close the clients not used for ``idle_for`` real seconds (never one whose request runs);
        the next request builds its client again. ``now``: ``time.monotonic()`` unless a test's.
        Returns how many were closed."""
        now = time.monotonic() if now is None else now
        with self._lock:
            gone = [key for key, built in self._clients.items() if built.client.idle_for(now) >= idle_for]
            clients = [self._clients.pop(key).client for key in gone]
        for client in clients:
            client.close()
        return len(clients)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            clients = [built.client for built in self._clients.values()]
            self._clients.clear()
        for client in clients:
            client.close()

    def __enter__(self) -> HttpClientFactory:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def read_bounded(response: httpx.Response, max_bytes: int, url: str) -> bytes:
    """The body of a streamed answer, refused (:class:`MalformedResponse`) past ``max_bytes``:
    declared by Content-Length or counted while reading, so an endless answer is never held."""
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        raise MalformedResponse(
            f"Resposta do serviço grande demais ({int(declared)} bytes; limite {max_bytes}).", url=url
        )
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise MalformedResponse(f"Resposta do serviço grande demais (mais de {max_bytes} bytes).", url=url)
        chunks.append(chunk)
    return b"".join(chunks)


def send_bounded(
    client: httpx.Client, request: httpx.Request, max_bytes: int, url: str
) -> tuple[httpx.Response, bytes]:
    """``request`` sent streamed: its response, closed, and body (:func:`read_bounded`);
    an httpx failure raised as our :class:`CommunicationError` (:func:`translate`)."""
    try:
        response = client.send(request, stream=True)
        try:
            return response, read_bounded(response, max_bytes, url)
        finally:
            response.close()
    except httpx.HTTPError as exc:
        raise translate(exc, url) from exc


# --- translation of httpx failures -------------------------------------------------------------

_CLIENT_CERT_ALERTS = (
    "CERTIFICATE_REQUIRED",
    "BAD_CERTIFICATE",
    "CERTIFICATE_EXPIRED",
    "CERTIFICATE_REVOKED",
    "UNKNOWN_CA",
    "CERTIFICATE_UNKNOWN",
    "ACCESS_DENIED",
    "HANDSHAKE_FAILURE",
)


def _ssl_error(exc: BaseException) -> ssl.SSLError | None:
    """The ssl error somewhere in the exception's cause/context chain."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _tls_refused(exc: BaseException, url: str | None) -> TlsRefused | None:
    found = _ssl_error(exc)
    text = str(found or exc)
    upper = text.upper()
    if found is None and "SSL" not in upper and "CERTIFICATE" not in upper and "HANDSHAKE" not in upper:
        return None
    if isinstance(found, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in upper:
        message = (
            "O certificado do servidor do serviço não é confiável para este computador. Verifique a cadeia "
            "de certificados ICP-Brasil configurada (arquivo PEM) e a data/hora do sistema."
        )
    elif any(alert in upper for alert in _CLIENT_CERT_ALERTS):
        message = (
            "O serviço recusou o certificado digital da empresa na conexão segura (TLS). Verifique se o "
            "certificado A1 está dentro da validade, se é o certificado da empresa e se a cadeia do "
            "certificado está completa."
        )
    else:
        message = (
            "Falha na conexão segura (TLS) com o serviço. Verifique o certificado A1 da empresa e a cadeia "
            "de certificados ICP-Brasil configurada."
        )
    return TlsRefused(message, url=url, detail=text)


def translate(exc: httpx.HTTPError, url: str | None = None) -> CommunicationError:
    """The :class:`CommunicationError` an httpx failure means to the user."""
    where = url or (str(exc.request.url) if _has_request(exc) else None)
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, httpx.TimeoutException):
        if isinstance(exc, httpx.ConnectTimeout):
            text = "O serviço não aceitou a conexão dentro do tempo limite. Nova tentativa mais tarde."
        else:
            text = "O serviço não respondeu dentro do tempo limite. Nova tentativa mais tarde."
        return ServiceTimeout(text, url=where, detail=detail)
    tls = _tls_refused(exc, where)
    if tls is not None:
        return tls
    if isinstance(exc, httpx.ConnectError):
        return ConnectionFailed(
            "Não foi possível conectar ao serviço (rede indisponível, endereço incorreto ou servidor fora do "
            "ar). Nova tentativa mais tarde.",
            url=where,
            detail=detail,
        )
    if isinstance(exc, httpx.TransportError):
        return ConnectionFailed(
            "A conexão com o serviço foi interrompida antes da resposta completa. Nova tentativa mais tarde.",
            url=where,
            detail=detail,
        )
    return ConnectionFailed("Falha de comunicação com o serviço.", url=where, detail=detail)


def _has_request(exc: httpx.HTTPError) -> bool:
    try:
        exc.request  # noqa: B018 - raises RuntimeError when the exception carries no request
    except RuntimeError:
        return False
    return True
