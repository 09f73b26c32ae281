"""In-process httpx transport: the sandbox's handlers with no sockets (fast simulations, benchmarks).

The caller is the certificate given at construction, as if it had been presented in the TLS
handshake. Transport faults surface as the httpx exceptions a real connection would raise.
"""

from __future__ import annotations

import httpx

from app.core.clock import Clock
from app.sandbox.router import Router
from app.sandbox.wire import Caller, SandboxRequest, caller_from_pem


class InProcessTransport(httpx.BaseTransport):
    """``httpx.Client(transport=sandbox.transport(cert), base_url=...)`` talks to the sandbox directly."""

    def __init__(self, router: Router, client_cert_pem: bytes, clock: Clock, *, competitor: bool = False) -> None:
        self._router = router
        self._clock = clock
        caller = caller_from_pem(client_cert_pem)
        self._caller = Caller(caller.cnpj, caller.cpf, caller.common_name, caller.not_after, competitor)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._caller.not_after is not None and self._clock.now() > self._caller.not_after:
            # a real server refuses an expired client certificate during the handshake
            raise httpx.ConnectError("certificate expired (TLS handshake refused)", request=request)
        body = request.read()
        req = SandboxRequest(
            method=request.method,
            path=request.url.path,
            query=dict(request.url.params) if request.url.query else {},
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
            caller=self._caller,
        )
        response = self._router.dispatch(req)
        if response.fault == "timeout":
            raise httpx.ReadTimeout("sandbox: the server did not answer in time (injected)", request=request)
        if response.fault == "close":
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        headers = [
            (name.encode("latin-1"), value.encode("latin-1"))
            for name, value in response.headers.items()
            if name.lower() != "content-length"
        ]
        headers.append((b"Content-Length", str(len(response.body)).encode("ascii")))
        return httpx.Response(response.status, headers=headers, content=response.body, request=request)
