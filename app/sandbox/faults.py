"""Faults and outages on demand, for scenario scripts and tests.

Transport faults (``http_500``, ``http_502``, ``http_503``, ``timeout``, ``close``, ``truncated``) are
applied by the router around a handler; content faults (``corrupt_gzip``, ``corrupt_base64``,
``wrong_schema``, ``duplicate_nsu``) by the services while they build a lot; the ADN's own
answers (``http_429``, ``http_429_date``, ``http_429_bare``, ``rejeicao``, ``http_403``) by its
``GET /DFe`` instead of the lot (the service does nothing else). A 5xx is answered
before the service runs (nothing happens); a timeout, a closed connection or a truncated body
happen after it (the service did its work, the answer is lost), as on a real network.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime

from app.core import cstat as cstat_names
from app.core.errors import CapturaError

SERVICES = ("nfe_dist", "cte_dist", "nfe_evento", "adn", "sefin")
TRANSPORT_FAULTS = ("http_500", "http_502", "http_503", "timeout", "close", "truncated")
CONTENT_FAULTS = ("corrupt_gzip", "corrupt_base64", "wrong_schema", "duplicate_nsu")
# ADN answers on demand (NFS-e): a 429 with Retry-After in seconds, as an HTTP date or without it,
# a REJEICAO, and a 403 refusing the caller's certificate.
ADN_FAULTS = ("http_429", "http_429_date", "http_429_bare", "rejeicao", "http_403")
FAULT_KINDS = TRANSPORT_FAULTS + CONTENT_FAULTS + ADN_FAULTS
BEFORE_HANDLER = ("http_500", "http_502", "http_503")


class UnknownFault(CapturaError):
    """A fault or service name the sandbox does not know."""


@dataclass
class Fault:
    service: str
    kind: str
    remaining: int
    doc: str | None = None  # only requests by/about this CNPJ/CPF; None = any
    stall_seconds: float = 1.0


@dataclass(frozen=True)
class FiredFault:
    at: datetime
    service: str
    kind: str
    doc: str


@dataclass
class FaultBook:
    """Pending faults; each fires on the next matching request(s) and is then used up."""

    pending: list[Fault] = field(default_factory=list)
    fired: list[FiredFault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def inject(
        self, service: str, kind: str, *, count: int = 1, doc: str | None = None, stall_seconds: float = 1.0
    ) -> Fault:
        if service not in SERVICES:
            raise UnknownFault(f"Serviço desconhecido para falha: {service!r} (use um de {', '.join(SERVICES)}).")
        if kind not in FAULT_KINDS:
            raise UnknownFault(f"Falha desconhecida: {kind!r} (use uma de {', '.join(FAULT_KINDS)}).")
        fault = Fault(service, kind, max(1, count), doc, stall_seconds)
        with self._lock:
            self.pending.append(fault)
        return fault

    def take(self, service: str, doc: str, kinds: tuple[str, ...], at: datetime) -> Fault | None:
        with self._lock:
            for fault in self.pending:
                if fault.service == service and fault.kind in kinds and fault.doc in (None, doc):
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self.pending.remove(fault)
                    self.fired.append(FiredFault(at, service, fault.kind, doc))
                    return fault
        return None


@dataclass
class Outages:
    """Per service: the cStat (108/109) it answers until a given instant."""

    windows: dict[str, tuple[int, datetime]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def set(self, service: str, cstat: int, until: datetime) -> None:
        if service not in SERVICES:
            raise UnknownFault(f"Serviço desconhecido para paralisação: {service!r}.")
        if cstat not in cstat_names.OUTAGES:
            raise UnknownFault("Paralisação usa cStat 108 (momentânea) ou 109 (sem previsão).")
        with self._lock:
            self.windows[service] = (cstat, until)

    def active(self, service: str, now: datetime) -> int | None:
        with self._lock:
            window = self.windows.get(service)
            if window is None:
                return None
            cstat, until = window
            if now >= until:
                del self.windows[service]
                return None
            return cstat


def apply_content_fault(kind: str, items: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """Spoil a lot of (NSU, schema label, base64 gzip payload) the way ``kind`` says."""
    if not items:
        return items
    nsu, label, payload = items[0]
    out = list(items)
    if kind == "corrupt_gzip":
        # a gzip magic number followed by garbage: base64 decodes, gunzip fails
        out[0] = (nsu, label, "H4sIAAAAAAAA" + "QUJDREVGR0hJSktMTU5PUA==")
    elif kind == "corrupt_base64":
        out[0] = (nsu, label, payload[: len(payload) // 2] + "*%$")
    elif kind == "wrong_schema":
        wrong = "procNFe_v4.00.xsd" if not label.startswith("procNFe") else "resNFe_v1.01.xsd"
        out[0] = (nsu, wrong, payload)
    elif kind == "duplicate_nsu":
        out.insert(1, (nsu, label, payload))
    return out
