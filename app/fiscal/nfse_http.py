"""The NFS-e Nacional REST calls (ADN Contribuintes, Sefin Nacional): JSON over mutual TLS.

One call is one TLS connection: every request says ``Connection: close``, so the pooled client of
:class:`app.fiscal.http.HttpClientFactory` (one per company certificate and service) never keeps a
connection for the next call (rule book §6.3 step 4). Verification stays on (the factory's trust
bundle) and the timeout is the service's call timeout (60 s for NFS-e by default). httpx failures
become :mod:`app.fiscal.errors`; a body that is not JSON is a :class:`MalformedResponse`.
"""

from __future__ import annotations

import base64
import gzip
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from app.fiscal.errors import MalformedResponse
from app.fiscal.http import send_bounded

MAX_JSON_BYTES = 64 * 1024 * 1024
_HEADERS = {"Accept": "application/json", "Connection": "close"}


@dataclass(frozen=True)
class JsonReply:
    """One answer: HTTP status, the decoded JSON object ({} when the body is empty), the bytes."""

    status: int
    payload: dict[str, Any]
    headers: dict[str, str]
    request_bytes: bytes = field(repr=False)
    response_bytes: bytes = field(repr=False)
    elapsed_ms: float = 0.0


def gzip_b64(xml: bytes) -> str:
    """The "GZip com representação base64binary" the NFS-e APIs carry XML in."""
    return base64.b64encode(gzip.compress(xml, mtime=0)).decode("ascii")


def call_json(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    body: dict[str, Any] | None = None,
    params: dict[str, str] | None = None,
    max_bytes: int = MAX_JSON_BYTES,
) -> JsonReply:
    """One request on a connection of its own; any HTTP status is returned (the caller judges it)."""
    content = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
    headers = dict(_HEADERS)
    if body is not None:
        headers["Content-Type"] = "application/json; charset=utf-8"
    started = time.perf_counter()
    request = client.build_request(method, url, content=content or None, headers=headers, params=params)
    response, raw = send_bounded(client, request, max_bytes, url)
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    return JsonReply(
        response.status_code,
        _object(raw, response.status_code, url),
        dict(response.headers),
        content,
        raw,
        elapsed_ms,
    )


def _object(raw: bytes, status: int, url: str) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        if status >= 500 or status in (408, 429):
            return {}  # a proxy's or server's error page: the status says what happened
        raise MalformedResponse(
            f"Resposta do serviço não é JSON (HTTP {status}).", url=url, detail=raw[:200].decode("utf-8", "replace")
        ) from None
    if not isinstance(value, dict):
        raise MalformedResponse(f"Resposta do serviço fora do formato esperado (HTTP {status}).", url=url)
    return value
