"""One entry point for every service, by path, with the transport faults applied around it."""

from __future__ import annotations

from collections.abc import Callable

from app.sandbox.context import Context
from app.sandbox.faults import BEFORE_HANDLER
from app.sandbox.wire import SandboxRequest, SandboxResponse

PATHS = {
    "nfe_dist": "/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx",
    "cte_dist": "/CTeDistribuicaoDFe/CTeDistribuicaoDFe.asmx",
    "nfe_evento": "/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx",
    "adn": "/contribuintes",
    "sefin": "/SefinNacional",
}

_IIS_5XX = {
    500: b"<html><head><title>Runtime Error</title></head>"
    b"<body><h1>Server Error in '/' Application.</h1></body></html>",
    502: b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>",
    503: b"<html><head><title>Service Unavailable</title></head><body><h1>Service Unavailable</h1></body></html>",
}


def service_for(path: str) -> str | None:
    lowered = path.lower()
    for service, prefix in PATHS.items():
        if service in ("adn", "sefin"):
            if lowered.startswith(prefix.lower() + "/"):
                return service
        elif lowered == prefix.lower():
            return service
    return None


class Router:
    """Dispatches a :class:`SandboxRequest` to the service handler owning its path."""

    def __init__(self, ctx: Context, handlers: dict[str, Callable[[SandboxRequest], SandboxResponse]]) -> None:
        self.ctx = ctx
        self.handlers = handlers

    def dispatch(self, req: SandboxRequest) -> SandboxResponse:
        service = service_for(req.path)
        if service is None:
            return SandboxResponse(404, {"Content-Type": "text/plain; charset=utf-8"}, b"Not Found")
        if req.method == "GET" and service in ("nfe_dist", "cte_dist", "nfe_evento"):
            return SandboxResponse(
                200,
                {"Content-Type": "text/plain; charset=utf-8"},
                f"Sandbox {service}: use POST SOAP.".encode(),
            )
        now = self.ctx.clock.now()
        fault = self.ctx.faults.take(service, req.caller.doc, BEFORE_HANDLER, now)
        if fault is not None:
            status = int(fault.kind.removeprefix("http_"))
            self.ctx.referee.record(
                at=now,
                service=service,
                operation=f"{req.method} {req.path}",
                caller=req.caller,
                summary={"fault": fault.kind},
                http_status=status,
            )
            return SandboxResponse(status, {"Content-Type": "text/html"}, _IIS_5XX[status])
        response = self.handlers[service](req)
        fault = self.ctx.faults.take(service, req.caller.doc, ("timeout", "close", "truncated"), now)
        if fault is not None:
            if fault.kind == "truncated":
                response.body = response.body[: max(1, len(response.body) // 2)]
            else:
                response.fault = fault.kind
                response.stall_seconds = fault.stall_seconds
        return response
