"""Scenario scripts: deterministic publishing on the sandbox clock, outages and faults on schedule."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.clock import FakeClock
from app.sandbox.sandbox import Sandbox
from app.sandbox.scenario import Scenario, ScenarioError

SCENARIO = {
    "companies": 2,
    "third_parties": 3,
    "seed": 5,
    "nfe_per_day": 24,
    "cte_per_day": 4,
    "nfse_per_day": 4,
    "outages": [{"service": "nfe_dist", "cstat": 109, "start_minutes": 120, "duration_minutes": 30}],
    "faults": [{"service": "nfe_dist", "kind": "duplicate_nsu", "at_minutes": 180}],
}


def test_scenario_publishes_deterministically_and_schedules_outages_and_faults(
    clock: FakeClock, tmp_path: Path, h: Any
) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(SCENARIO), encoding="utf-8")
    scenario = Scenario.load(path)
    counts = []
    for _ in range(2):
        with Sandbox(FakeClock(clock.now()), seed=1) as sandbox:
            run = scenario.attach(sandbox)
            assert len(run.companies) == 2
            counts.append(run.run_until(clock.now() + timedelta(hours=6)))
            published = [(at, product) for at, product, _ in run.published]
    assert counts[0] == counts[1] > 0
    assert {p for _, p in published} == {"nfe", "cte", "nfse"}

    with Sandbox(clock, seed=1) as sandbox:
        run = scenario.attach(sandbox)
        company = run.companies[0]
        cert = run.certificates[company]
        clock.advance(timedelta(hours=2, minutes=5))
        run.run_until(clock.now())
        with httpx.Client(transport=sandbox.transport(cert), base_url="https://sandbox.local") as c:
            body = h.dist_envelope(company, ult=0)
            assert h.read_dist(c.post(h.DIST_PATH, content=body)).cstat == 109  # scheduled outage
            clock.advance(timedelta(minutes=60))
            run.run_until(clock.now())
            answer = h.read_dist(c.post(h.DIST_PATH, content=body))
        nsus = [n for n, _, _ in answer.docs()]
        assert answer.cstat == 138 and len(nsus) == len(set(nsus)) + 1  # the scheduled duplicated NSU
        assert [f.kind for f in sandbox.fired_faults] == ["duplicate_nsu"]


def test_bad_scenarios_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError):
        Scenario.from_dict({"companies": 1, "speed": 3})
    with pytest.raises(ScenarioError):
        Scenario.from_dict({"faults": [{"service": "nfe_dist", "kind": "gremlins"}]})
    (tmp_path / "bad.json").write_text("[1, 2", encoding="utf-8")
    with pytest.raises(ScenarioError):
        Scenario.load(tmp_path / "bad.json")
