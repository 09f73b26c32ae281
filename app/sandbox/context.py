"""What every service handler shares: clock, state, referee, faults, outages and the environment."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.clock import Clock
from app.sandbox.faults import FaultBook, Outages
from app.sandbox.referee import Referee
from app.sandbox.rules import DistGuard
from app.sandbox.state import SandboxState

VER_APLIC_AN = "AN_SBX_1.0.0"
VER_APLIC_DIST = "SBX_1.0.0"


@dataclass
class Context:
    clock: Clock
    tp_amb: int
    pki: Any  # app.sandbox.pki.TestPki
    factory: Any  # app.sandbox.docgen.DocumentFactory
    state: SandboxState = field(default_factory=SandboxState)
    referee: Referee = field(default_factory=Referee)
    faults: FaultBook = field(default_factory=FaultBook)
    outages: Outages = field(default_factory=Outages)
    guards: dict[tuple[str, str], DistGuard] = field(default_factory=dict)
    publisher: Any = None  # app.sandbox.publisher.Publisher, set by the Sandbox

    def guard(self, product: str, doc: str) -> DistGuard:
        key = (product, doc)
        guard = self.guards.get(key)
        if guard is None:
            guard = self.guards[key] = DistGuard()
        return guard
