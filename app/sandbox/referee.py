"""The honest referee: every request on the sandbox clock, every rule broken, every NSU delivered.

Services report to it; tests and benchmarks read :meth:`Referee.report`, a JSON-serialisable dict.
Violations by the simulated competitor (another system sharing the CNPJ) are kept apart so the
app is never blamed for them; so are the 656s the app's own requests got because of it (the
``revealing_656``: how the app learns another system consumes its CNPJ, issue 22).
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from app.core.clock import brasilia_iso
from app.sandbox.rules import DURING_OUTAGE_PAUSE, OUTAGE_PAUSE
from app.sandbox.wire import Caller


@dataclass(frozen=True, slots=True)
class RequestRecord:
    at: datetime
    service: str
    operation: str
    caller: str
    caller_doc: str
    competitor: bool
    queried: str
    summary: dict[str, Any]
    cstat: int | None
    http_status: int


@dataclass(frozen=True, slots=True)
class Violation:
    at: datetime
    rule: str
    service: str
    caller: str
    cnpj: str
    detail: str
    competitor: bool  # not the app's fault: the other system's own, or ``provoked`` by it
    provoked: bool = False  # the app's request, answered 656 because of the other system


@dataclass
class _Delivery:
    at: list[datetime] = field(default_factory=list)
    via: list[str] = field(default_factory=list)


def _iso(value: datetime) -> str:
    return brasilia_iso(value)


class Referee:
    """Records requests, violations, publications and deliveries (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: list[RequestRecord] = []
        self._violations: list[Violation] = []
        # (product, doc) -> nsu -> (published_at, key, kind)
        self._published: dict[tuple[str, str], dict[int, tuple[datetime, str, str]]] = defaultdict(dict)
        self._delivered: dict[tuple[str, str], dict[int, _Delivery]] = defaultdict(dict)
        self._competitor_delivered: dict[tuple[str, str], Counter[int]] = defaultdict(Counter)
        self._outage_answers: dict[tuple[str, str, bool], tuple[datetime, int]] = {}

    # --- feeding -----------------------------------------------------------------------------
    def record(
        self,
        *,
        at: datetime,
        service: str,
        operation: str,
        caller: Caller,
        queried: str = "",
        summary: dict[str, Any] | None = None,
        cstat: int | None = None,
        http_status: int = 200,
    ) -> None:
        """One answered request. Also judges the outage pause (5 min after 108, 20 min after 109)."""
        with self._lock:
            pause_key = (service, caller.doc, caller.competitor)
            seen = self._outage_answers.get(pause_key)
            if seen is not None:
                when, code = seen
                if at < when + OUTAGE_PAUSE[code]:
                    self._violations.append(
                        Violation(
                            at,
                            DURING_OUTAGE_PAUSE,
                            service,
                            caller.label,
                            queried or caller.doc,
                            f"consulta {int((at - when).total_seconds())} s após cStat {code}",
                            caller.competitor,
                        )
                    )
            if cstat in OUTAGE_PAUSE:
                self._outage_answers[pause_key] = (at, cstat)
            elif seen is not None and at >= seen[0] + OUTAGE_PAUSE[seen[1]]:
                del self._outage_answers[pause_key]
            self.requests.append(
                RequestRecord(
                    at,
                    service,
                    operation,
                    caller.label,
                    caller.doc,
                    caller.competitor,
                    queried,
                    dict(summary or {}),
                    cstat,
                    http_status,
                )
            )

    def violation(
        self, *, at: datetime, rule: str, service: str, caller: Caller, cnpj: str, detail: str, provoked: bool = False
    ) -> None:
        """A rule broken. ``provoked``: by the app's request, but because another system sharing the
        CNPJ moved the sequence or started the hour: the 656 that reveals it, not the app's fault."""
        with self._lock:
            competitor = caller.competitor or provoked
            self._violations.append(Violation(at, rule, service, caller.label, cnpj, detail, competitor, provoked))

    def published(self, product: str, doc: str, nsu: int, at: datetime, key: str, kind: str) -> None:
        with self._lock:
            self._published[(product, doc)][nsu] = (at, key, kind)

    def delivered(self, product: str, doc: str, nsu: int, at: datetime, via: str, caller: Caller) -> None:
        with self._lock:
            if caller.competitor:
                self._competitor_delivered[(product, doc)][nsu] += 1
                return
            record = self._delivered[(product, doc)].setdefault(nsu, _Delivery())
            record.at.append(at)
            record.via.append(via)

    # --- reading -----------------------------------------------------------------------------
    def violations(self, *, competitor: bool | None = False, rule: str | None = None) -> list[Violation]:
        with self._lock:
            return [
                v
                for v in self._violations
                if (competitor is None or v.competitor == competitor) and (rule is None or v.rule == rule)
            ]

    def delivery_count(self, product: str, doc: str, nsu: int) -> int:
        with self._lock:
            record = self._delivered.get((product, doc), {}).get(nsu)
            return len(record.at) if record else 0

    def report(self) -> dict[str, Any]:
        """Everything, JSON-serialisable (datetimes as Brasília ISO strings)."""
        with self._lock:
            app = [v for v in self._violations if not v.competitor]
            competitor = [v for v in self._violations if v.competitor and not v.provoked]
            revealing = [v for v in self._violations if v.provoked]
            companies: dict[str, dict[str, Any]] = defaultdict(dict)
            keys = set(self._published) | set(self._delivered)
            for product, doc in sorted(keys):
                published = self._published.get((product, doc), {})
                delivered = self._delivered.get((product, doc), {})
                latency: dict[str, float] = {}
                for nsu, (pub_at, _key, _kind) in published.items():
                    record = delivered.get(nsu)
                    if record:
                        latency[str(nsu)] = (min(record.at) - pub_at).total_seconds()
                companies[doc][product] = {
                    "published": [
                        {"nsu": nsu, "key": key, "kind": kind, "published_at": _iso(at)}
                        for nsu, (at, key, kind) in sorted(published.items())
                    ],
                    "delivered": {
                        str(nsu): {"count": len(r.at), "first_at": _iso(min(r.at)), "via": sorted(set(r.via))}
                        for nsu, r in sorted(delivered.items())
                    },
                    "undelivered": sorted(set(published) - set(delivered)),
                    "latency_seconds": latency,
                    "competitor_delivered": {
                        str(n): c for n, c in sorted(self._competitor_delivered.get((product, doc), {}).items())
                    },
                }
            return {
                "requests": len(self.requests),
                "requests_by_service": dict(Counter(r.service for r in self.requests)),
                "violations": [self._violation_dict(v) for v in app],
                "violations_by_rule": dict(Counter(v.rule for v in app)),
                "competitor_violations": [self._violation_dict(v) for v in competitor],
                # the app's requests answered 656 because another system consumed the CNPJ
                "revealing_656": [self._violation_dict(v) for v in revealing],
                "companies": dict(companies),
            }

    @staticmethod
    def _violation_dict(v: Violation) -> dict[str, Any]:
        data = asdict(v)
        data["at"] = _iso(v.at)
        return data
