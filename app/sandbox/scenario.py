"""Scenario scripts: how many companies, how fast third parties issue, outages and faults.

A scenario is a dataclass (or the same thing as JSON, see :meth:`Scenario.from_dict`)::

    {"companies": 3, "third_parties": 5, "seed": 7,
     "nfe_per_day": 12, "cte_per_day": 2, "nfse_per_day": 3, "cancel_ratio": 0.02,
     "outages": [{"service": "nfe_dist", "cstat": 108, "start_minutes": 90, "duration_minutes": 10}],
     "faults": [{"service": "nfe_dist", "kind": "corrupt_gzip", "at_minutes": 30, "count": 1}]}

``attach(sandbox)`` creates the companies (with certificates) and returns a :class:`ScenarioRun`
whose ``run_until(t)`` publishes everything scheduled up to ``t`` on the sandbox clock.
Inter-arrival times are exponential and seeded: the same scenario always issues the same documents
at the same instants.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from app.core.cstat import OUTAGES
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.sandbox.docgen import Party
from app.sandbox.faults import FAULT_KINDS, SERVICES
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox

DAY = timedelta(days=1)


class ScenarioError(CapturaError):
    """A scenario file that cannot be used."""


@dataclass(frozen=True)
class OutageSpec:
    service: str
    cstat: int = 108
    start_minutes: float = 0.0
    duration_minutes: float = 10.0


@dataclass(frozen=True)
class FaultSpec:
    service: str
    kind: str
    at_minutes: float = 0.0
    count: int = 1
    cnpj: str | None = None
    stall_seconds: float = 1.0


@dataclass(frozen=True)
class Scenario:
    """Declarative description of a simulated national environment."""

    companies: int = 3
    third_parties: int = 5
    seed: int = 0
    nfe_per_day: float = 10.0  # per company, as recipient
    cte_per_day: float = 2.0  # per company, as taker
    nfse_per_day: float = 3.0  # per company, as taker
    cancel_ratio: float = 0.0  # share of NF-e cancelled by the emitter an hour later
    reform_share: float = 0.0  # share of documents with the tax reform's IBS/CBS (docgen.reform)
    note_ratio: float = 0.0  # share of reform NF-e adjusted a day later by a nota de crédito or de débito
    company_cnpjs: tuple[str, ...] = ()  # fixed CNPJs instead of generated ones
    outages: tuple[OutageSpec, ...] = ()
    faults: tuple[FaultSpec, ...] = ()

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Scenario:
        known = {f.name for f in fields(cls)}
        unknown = set(raw) - known
        if unknown:
            raise ScenarioError(f"Cenário com chaves desconhecidas: {', '.join(sorted(unknown))}.")
        data = dict(raw)
        try:
            data["outages"] = tuple(OutageSpec(**o) for o in raw.get("outages", ()))
            data["faults"] = tuple(FaultSpec(**f) for f in raw.get("faults", ()))
        except TypeError as exc:
            raise ScenarioError(f"Cenário inválido: {exc}.") from None
        data["company_cnpjs"] = tuple(raw.get("company_cnpjs", ()))
        scenario = cls(**data)
        scenario.check()
        return scenario

    @classmethod
    def load(cls, path: Path) -> Scenario:
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8-sig"))
        except (OSError, ValueError) as exc:
            raise ScenarioError(f"Não foi possível ler o cenário {path}: {exc}") from None
        if not isinstance(raw, dict):
            raise ScenarioError(f"O cenário {path} deve ser um objeto JSON.")
        return cls.from_dict(raw)

    def check(self) -> None:
        for outage in self.outages:
            if outage.service not in SERVICES or outage.cstat not in OUTAGES:
                raise ScenarioError(f"Paralisação inválida no cenário: {outage}.")
        for fault in self.faults:
            if fault.service not in SERVICES or fault.kind not in FAULT_KINDS:
                raise ScenarioError(f"Falha inválida no cenário: {fault}.")

    def attach(self, sandbox: Sandbox, start: datetime | None = None) -> ScenarioRun:
        return ScenarioRun(self, sandbox, start or sandbox.clock.now())


def _cnpj(rng: random.Random, prefix: str) -> str:
    return Cnpj.from_body(prefix + "".join(str(rng.randrange(10)) for _ in range(12 - len(prefix)))).value


@dataclass(order=True)
class _Planned:
    at: datetime
    order: int
    action: str = field(compare=False)
    args: tuple[Any, ...] = field(compare=False, default=())


class ScenarioRun:
    """A scenario bound to a sandbox; publishes on the sandbox clock."""

    def __init__(self, scenario: Scenario, sandbox: Sandbox, start: datetime) -> None:
        self.scenario = scenario
        self.sandbox = sandbox
        self.start = start
        self.rng = random.Random(scenario.seed)
        if scenario.reform_share:
            sandbox.factory.reform_share = scenario.reform_share
        self.certificates: dict[str, IssuedCert] = {}
        self.published: list[tuple[datetime, str, str]] = []  # (at, product, key)
        self._order = 0
        self._planned: list[_Planned] = []
        self._next_arrival: dict[tuple[str, str], datetime] = {}
        self._done_until = start
        cnpjs = list(scenario.company_cnpjs) or [_cnpj(self.rng, "1") for _ in range(scenario.companies)]
        for index, cnpj in enumerate(cnpjs, 1):
            self.certificates[cnpj] = sandbox.company(cnpj, f"EMPRESA CLIENTE {index:03d} LTDA")
        self.companies = list(self.certificates)
        self.third_parties = [_cnpj(self.rng, "9") for _ in range(max(1, scenario.third_parties))]
        for index, cnpj in enumerate(self.third_parties, 1):
            sandbox.publisher.register(Party(doc=cnpj, name=f"FORNECEDOR TERCEIRO {index:03d} SA"))
        for outage in scenario.outages:
            self._plan(start + timedelta(minutes=outage.start_minutes), "outage", (outage,))
        for fault in scenario.faults:
            self._plan(start + timedelta(minutes=fault.at_minutes), "fault", (fault,))

    def _plan(self, at: datetime, action: str, args: tuple[Any, ...]) -> None:
        self._order += 1
        self._planned.append(_Planned(at, self._order, action, args))

    def _arrivals(self, product: str, rate: float, until: datetime) -> list[tuple[datetime, str]]:
        out: list[tuple[datetime, str]] = []
        if rate <= 0:
            return out
        for company in self.companies:
            key = (product, company)
            nxt = self._next_arrival.get(key)
            if nxt is None:
                nxt = self.start + DAY * self.rng.expovariate(rate)
            while nxt <= until:
                out.append((nxt, company))
                nxt = nxt + DAY * self.rng.expovariate(rate)
            self._next_arrival[key] = nxt
        return out

    def run_until(self, until: datetime) -> int:
        """Publish everything scheduled up to ``until``; returns how many documents were published."""
        if until <= self._done_until:
            return 0
        sc = self.scenario
        for product, rate in (("nfe", sc.nfe_per_day), ("cte", sc.cte_per_day), ("nfse", sc.nfse_per_day)):
            for at, company in self._arrivals(product, rate, until):
                self._plan(at, product, (company,))
        due = sorted(p for p in self._planned if p.at <= until)
        self._planned = [p for p in self._planned if p.at > until]
        count = 0
        for item in due:
            count += self._run(item)
        self._done_until = until
        return count

    def _run(self, item: _Planned) -> int:
        sandbox, at = self.sandbox, item.at
        if item.action == "outage":
            outage: OutageSpec = item.args[0]
            sandbox.outage(outage.service, outage.cstat, at + timedelta(minutes=outage.duration_minutes))
            return 0
        if item.action == "fault":
            fault: FaultSpec = item.args[0]
            sandbox.inject_fault(
                fault.service, fault.kind, count=fault.count, cnpj=fault.cnpj, stall_seconds=fault.stall_seconds
            )
            return 0
        if item.action == "note":
            company, purpose, adjusted, supplier = item.args
            generated = sandbox.publish_nfe(emitter=supplier, recipient=company, at=at, note=(purpose, adjusted))
            self.published.append((at, "nfe", generated.key))
            return 1
        if item.action == "cancel":
            sandbox.publish_nfe_event(item.args[0], "110111", at=at, justification="Cancelamento por erro de digitacao")
            return 1
        company = item.args[0]
        supplier = self.rng.choice(self.third_parties)
        if item.action == "nfe":
            generated = sandbox.publish_nfe(emitter=supplier, recipient=company, at=at)
            if self.rng.random() < self.scenario.cancel_ratio:
                self._plan(at + timedelta(hours=1), "cancel", (generated.key,))
            elif self.scenario.note_ratio and generated.reform and self.rng.random() < self.scenario.note_ratio:
                purpose = self.rng.choice(("5", "6"))  # a nota de crédito or de débito, a day later
                self._plan(at + DAY, "note", (company, purpose, generated.key, supplier))
        elif item.action == "cte":
            generated = sandbox.publish_cte(
                emitter=supplier, sender=self.rng.choice(self.third_parties), recipient=company, taker_role=3, at=at
            )
        else:
            generated = sandbox.publish_nfse(provider=supplier, taker=company, at=at)
        self.published.append((at, item.action, generated.key))
        return 1
