"""The demo tells issue 22's whole story: another system with the same certificate reads the first
company's NF-e, our next query meets the 656, the cursor jumps over what it took, the skipped
NSUs come back by consNSU once the block is over, and the Painel says what happened."""

from __future__ import annotations

from pathlib import Path

from app.core.cadence import Action
from app.core.products import Product
from app.demo.environment import DemoOptions
from app.desk import Desk
from app.desk.dashboard import DashboardLine
from tests.conftest import wait_until

SPEED = 900.0  # the story takes about three clock hours: 12 real seconds here


def test_the_demo_shows_another_system_taking_nsus_and_us_getting_them_back(tmp_path: Path) -> None:
    notices: list[str] = []
    desk = Desk(tmp_path / "dados-demo", demo=DemoOptions(speed=SPEED, companies=1))
    desk.subscribe(lambda notice: notices.append(notice.message) if notice.kind == "other_consumer" else None)
    desk.open()
    try:
        demo = desk._demo
        assert demo is not None and demo.sandbox is not None and demo.ctx is not None
        sandbox = demo.sandbox
        company = demo.companies[0]
        board = desk.dashboard

        def nfe_line() -> DashboardLine:
            return next(ln for ln in board.lines(company.id) if ln.product is Product.NFE)

        ours_before = demo.ctx.cursors.get(company.id, Product.NFE).ult_nsu
        wait_until(lambda: nfe_line().action is Action.BLOCKED, timeout=60)
        blocked = nfe_line()
        assert "656" in blocked.last_answer
        assert blocked.other_consumer is not None
        assert blocked.other_consumer.startswith("Outro sistema está consultando as NF-e desta empresa")
        assert "0 documentos recuperados" in blocked.other_consumer
        assert notices and notices[0].startswith("Outro sistema está consultando as NF-e desta empresa")

        # The cursor jumped to the ultNSU the 656 carried, past everything the other system took.
        report = sandbox.referee.report()
        taken = sorted(map(int, report["companies"][company.cnpj.value]["nfe"]["competitor_delivered"]))
        assert taken and taken[0] > ours_before
        assert demo.ctx.cursors.get(company.id, Product.NFE).ult_nsu >= taken[-1]
        assert [v["rule"] for v in report["revealing_656"]] == ["premature_query"]

        # After the hour's block, consNSU brings back every NSU it took, each once.
        def recovered() -> set[int]:
            delivered = sandbox.referee.report()["companies"][company.cnpj.value]["nfe"]["delivered"]
            return {int(n) for n, d in delivered.items() if "consNSU" in d["via"]}

        wait_until(lambda: set(taken) <= recovered(), timeout=90)

        # Stored once each; our own distNSU may hold NSUs between two of the other system's reads.
        # (the sandbox counts a delivery when it answers; our store commits the lot just after).
        def stored() -> list[int]:
            return demo.ctx.items.received(company.id, Product.NFE, taken[0], taken[-1])

        wait_until(lambda: set(taken) <= set(stored()))
        got = stored()
        assert len(got) == len(set(got))
        # The other system goes on reading each hour the service allows, so the tally is read as it
        # stands when the state says nothing is pending, not against the first read's count.
        wait_until(lambda: "documentos recuperados, 0 pendentes" in (nfe_line().other_consumer or ""))
        wait_until(lambda: demo.verdict().other_recovered == demo.verdict().other_taken >= len(taken))
        assert demo.verdict().violations == []
    finally:
        desk.close()
