"""Errors of the protocol clients: communication failures (retryable or not) and local refusals.

Every class carries a sentence in Portuguese for the user (``message``), a stable machine word
(``reason``) for logs and call records, and ``retryable``: whether the same call may simply be
tried again later (the engine retries those with a limit, and stops and shows the others).
"""

from __future__ import annotations

from app.core.errors import CapturaError


class CommunicationError(CapturaError):
    """The call did not produce a usable answer from the service."""

    reason: str = "communication"
    retryable: bool = True

    def __init__(self, message: str, *, url: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.detail = detail  # technical text (library message), for the log only


class ServiceTimeout(CommunicationError):
    """The service did not answer (or did not accept the connection) within the time limit."""

    reason = "timeout"


class ConnectionFailed(CommunicationError):
    """No connection, or it was closed before a complete answer arrived (DNS, refused, reset)."""

    reason = "connection"


class TlsRefused(CommunicationError):
    """The TLS handshake failed: server certificate not trusted, or our client certificate refused.

    Not retryable: it needs a person (renew or re-import the A1, install the ICP-Brasil chain).
    """

    reason = "tls"
    retryable = False


class HttpStatusError(CommunicationError):
    """The server answered an HTTP error status without a usable SOAP answer."""

    reason = "http_status"

    def __init__(self, status: int, *, url: str | None = None, detail: str | None = None) -> None:
        super().__init__(
            f"O serviço respondeu com erro HTTP {status}"
            + (" (falha temporária do servidor; nova tentativa mais tarde)." if _transient(status) else ".")
            + ("" if _transient(status) else " Verifique o endereço do serviço nas configurações."),
            url=url,
            detail=detail,
        )
        self.status = status
        self.retryable = _transient(status)


def _transient(status: int) -> bool:
    return status >= 500 or status in (408, 429)


class MalformedResponse(CommunicationError):
    """The answer arrived but is not the expected XML (truncated, not SOAP, missing the result)."""

    reason = "malformed"


class SoapFault(CommunicationError):
    """The service answered a SOAP Fault; ``code`` is its code, ``text`` its reason text.

    A Sender/Client fault means the request itself was refused: retrying it unchanged is useless.
    """

    reason = "soap_fault"

    def __init__(self, code: str, text: str, *, url: str | None = None) -> None:
        super().__init__(f"O serviço recusou a requisição (SOAP Fault {code}): {text}", url=url, detail=text)
        self.code = code
        self.text = text
        local = code.rsplit(":", 1)[-1].lower()
        self.retryable = local not in ("sender", "client", "versionmismatch", "mustunderstand")


class RequestInvalid(CapturaError):
    """A request refused locally, before any network call (bad field, or not valid by the XSD)."""

    reason = "request_invalid"
    retryable = False

    def __init__(self, message: str, *, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []
