"""The referee's report: JSON, violations by rule and caller, delivered NSUs, latency."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import httpx

from app.core.clock import FakeClock
from app.sandbox.sandbox import Sandbox


def test_report_lists_a_premature_query_and_the_delivered_nsus(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any
) -> None:
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    clock.advance(timedelta(minutes=10))
    assert h.read_dist(inproc.post(h.DIST_PATH, content=h.dist_envelope(ult=0))).cstat == 138
    clock.advance(timedelta(minutes=20))
    assert h.read_dist(inproc.post(h.DIST_PATH, content=h.dist_envelope(ult=2))).cstat == 656
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)  # NSU 3, never fetched

    report = json.loads(json.dumps(sandbox.referee.report()))
    assert report["requests"] == 2 and report["requests_by_service"] == {"nfe_dist": 2}
    (violation,) = report["violations"]
    assert violation["rule"] == "premature_query" and violation["caller"] == h.RECIPIENT
    assert violation["at"].endswith("-03:00")
    assert report["violations_by_rule"] == {"premature_query": 1}
    nfe = report["companies"][h.RECIPIENT]["nfe"]
    assert [p["nsu"] for p in nfe["published"]] == [1, 2, 3]
    assert {k: v["count"] for k, v in nfe["delivered"].items()} == {"1": 1, "2": 1}
    assert nfe["delivered"]["1"]["via"] == ["distNSU"]
    assert nfe["undelivered"] == [3]
    assert nfe["latency_seconds"] == {"1": 600.0, "2": 600.0}
    last = sandbox.referee.requests[-1]
    assert (last.cstat, last.summary["asked"], last.summary["ultNSU"]) == (656, 2, 2)
