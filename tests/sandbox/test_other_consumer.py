"""Another system using the same certificate, as the Ambiente Nacional and the ADN treat it (issue 22).

The AN keeps one NSU sequence per CNPJ: the other system's distNSU advances it, the app's next
distNSU from its older ultNSU gets 656 carrying ultNSU and maxNSU, and consNSU still serves what the
other system took. The referee counts that 656 apart: it reveals the other system, it is not ours.
The ADN serves any NSU to whoever asks: another consumer hides nothing there.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest

from app.core.clock import FakeClock
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox

HOUR = timedelta(hours=1)
MARGIN = timedelta(seconds=40)  # the app's own margin after the hour


def _post(c: httpx.Client, h: Any, body: bytes, product: str) -> httpx.Response:
    path = h.DIST_PATH if product == "nfe" else h.CTE_PATH
    return c.post(path, content=body, headers={"Content-Type": "application/soap+xml; charset=utf-8"})


def _publish(sandbox: Sandbox, h: Any, product: str) -> None:
    if product == "nfe":
        sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    else:
        sandbox.publish_cte(emitter=h.SUPPLIER, sender=h.OTHER, recipient=h.RECIPIENT)


@pytest.mark.parametrize("product", ["nfe", "cte"])
def test_the_other_system_takes_nsus_the_app_meets_656_and_consnsu_still_serves_them(
    https: Sandbox, clock: FakeClock, recipient_cert: IssuedCert, client_for: Any, h: Any, product: str
) -> None:
    ns = h.NFE if product == "nfe" else h.CTE
    client = client_for(recipient_cert)

    def ask(**kw: Any) -> Any:
        return h.read_dist(_post(client, h, h.dist_envelope(product=product, **kw), product), ns)

    for _ in range(3):
        _publish(https, h, product)
    first = ask(ult=0)
    assert (first.cstat, first.ult_nsu, first.max_nsu) == (138, 3, 3)
    for _ in range(4):
        _publish(https, h, product)  # NSUs 4..7
    https.other_consumer(h.RECIPIENT, product, at=clock.now() + timedelta(minutes=10))
    clock.advance(HOUR + MARGIN)  # the app's next query, as its cadence allows it
    answer = ask(ult=3)
    assert (answer.cstat, answer.ult_nsu, answer.max_nsu) == (656, 7, 7)
    assert answer.docs() == []
    report = https.referee.report()
    assert report["violations"] == [] and report["competitor_violations"] == []
    assert [v["rule"] for v in report["revealing_656"]] == ["premature_query"]
    data = report["companies"][h.RECIPIENT][product]
    assert data["competitor_delivered"] == {"4": 1, "5": 1, "6": 1, "7": 1}
    assert data["undelivered"] == [4, 5, 6, 7]
    # The other system read at the end of the service's hour, before the app: its requests are
    # recorded then, with the app's 656 after them.
    theirs = [r for r in https.referee.requests if r.competitor]
    assert [r.at for r in theirs] == [first_at := theirs[0].at] and first_at < clock.now()
    # The 656 blocks the CNPJ an hour, point queries included; then consNSU serves what it took.
    assert ask(nsu=4).cstat == 656
    assert [v["rule"] for v in https.referee.report()["violations"]] == ["query_during_block"]
    clock.advance(HOUR + MARGIN)
    for nsu in (4, 5, 6, 7):
        got = ask(nsu=nsu)
        assert got.cstat == 138 and [n for n, _s, _x in got.docs()] == [nsu]
    after = ask(ult=7)  # in sequence from the ultNSU the 656 carried
    assert after.cstat == 137
    delivered = https.referee.report()["companies"][h.RECIPIENT][product]["delivered"]
    assert {n: d["via"] for n, d in delivered.items() if int(n) > 3} == {str(n): ["consNSU"] for n in (4, 5, 6, 7)}


def test_the_other_system_waits_for_the_service_and_the_app_in_a_chain_is_not_blamed(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any
) -> None:
    for _ in range(60):
        sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    lot = h.read_dist(_post(inproc, h, h.dist_envelope(ult=0), "nfe"), h.NFE)
    assert (lot.ult_nsu, lot.max_nsu) == (50, 60)  # the app's chain continues from 50...
    sandbox.other_consumer(h.RECIPIENT, "nfe", at=clock.now())
    clock.advance(timedelta(seconds=2))  # ...but the other system asked first
    answer = h.read_dist(_post(inproc, h, h.dist_envelope(ult=50), "nfe"), h.NFE)
    assert (answer.cstat, answer.ult_nsu) == (656, 60)
    report = sandbox.referee.report()
    assert report["violations"] == [] and len(report["revealing_656"]) == 1
    assert sorted(map(int, report["companies"][h.RECIPIENT]["nfe"]["competitor_delivered"])) == list(range(51, 61))
    # Nothing pending any more: the next request plays nothing.
    assert sandbox.nfe_distribution.pending_other_consumers(h.RECIPIENT) == 0


def test_the_other_system_blocked_by_the_hour_waits_its_end(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any
) -> None:
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0), "nfe"), h.NFE).ult_nsu == 1
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    sandbox.other_consumer(h.RECIPIENT, "nfe", at=clock.now() + timedelta(minutes=5))
    clock.advance(timedelta(minutes=30))
    # Within the hour it has not read yet: a consNSU of the app finds the queue as it was.
    assert h.read_dist(_post(inproc, h, h.dist_envelope(nsu=2), "nfe"), h.NFE).cstat == 138
    assert sandbox.nfe_distribution.pending_other_consumers(h.RECIPIENT) == 1
    assert not [r for r in sandbox.referee.requests if r.competitor]


def test_another_consumer_hides_nothing_on_the_adn(
    sandbox: Sandbox, clock: FakeClock, recipient_cert: IssuedCert, inproc: httpx.Client, h: Any
) -> None:
    # NFS-e: the ADN serves any NSU on request, to every system with the certificate.
    notes = [sandbox.publish_nfse(provider=h.SUPPLIER, taker=h.RECIPIENT) for _ in range(3)]
    with httpx.Client(
        transport=sandbox.transport(recipient_cert, competitor=True), base_url="https://sandbox.local"
    ) as other:
        theirs = other.get("/contribuintes/DFe/0", params={"cnpjConsulta": h.RECIPIENT, "lote": "true"})
    assert [i["NSU"] for i in theirs.json()["LoteDFe"]] == [1, 2, 3]
    clock.advance(timedelta(minutes=1))
    ours = inproc.get("/contribuintes/DFe/0", params={"cnpjConsulta": h.RECIPIENT, "lote": "true"})
    assert ours.status_code == 200
    assert [i["ChaveAcesso"] for i in ours.json()["LoteDFe"]] == [n.key for n in notes]
    assert sandbox.referee.report()["violations"] == []
