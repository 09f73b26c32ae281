"""NFeDistribuicaoDFe / CTeDistribuicaoDFe: wire shapes against the real 2017 reply and the XSDs,
lots and NSU semantics, and the consumption rules (656, 589, 593, 472, 137, point quota)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from lxml import etree

from app.core.clock import FakeClock
from app.sandbox import xsd
from app.sandbox.pki import IssuedCert
from app.sandbox.sandbox import Sandbox

HOUR = timedelta(hours=1)


def _names(element: etree._Element) -> list[str]:
    return [etree.QName(c).localname for c in element if isinstance(c.tag, str)]


def _path(root: etree._Element, leaf: str) -> list[tuple[str | None, str]]:
    node = next(root.iter(leaf))
    out = []
    while node is not None:
        q = etree.QName(node)
        out.append((q.namespace, q.localname))
        node = node.getparent()
    return out[::-1]


def _post(c: httpx.Client, h: Any, body: bytes, path: str | None = None) -> httpx.Response:
    return c.post(path or h.DIST_PATH, content=body, headers={"Content-Type": "application/soap+xml; charset=utf-8"})


def test_wire_shape_matches_the_real_2017_reply_and_the_xsds(
    https: Sandbox, recipient_cert: IssuedCert, client_for: Any, h: Any, fixtures_dir: Path
) -> None:
    nfe = https.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT, transporter=None)
    https.publish_nfe_event(nfe, "110110", correction="Correcao do endereco de entrega do destinatario")
    answer = h.read_dist(_post(client_for(recipient_cert), h, h.dist_envelope(ult=0)))

    real = etree.parse(str(fixtures_dir / "nfe" / "soap-retDistDFeInt-138-prod-2017.xml")).getroot()
    leaf = "{http://www.portalfiscal.inf.br/nfe}retDistDFeInt"
    assert _path(answer.root, leaf) == _path(real, leaf)
    real_ret = next(real.iter(leaf))
    assert _names(answer.ret) == _names(real_ret)
    assert answer.ret.get("versao") == real_ret.get("versao") == "1.01"
    assert answer.text("dhResp").endswith("-03:00")
    assert xsd.errors(answer.ret, "retDistDFeInt_v1.01") == []
    docs = answer.docs()
    assert [(n, s) for n, s, _ in docs] == [(1, "resNFe_v1.01.xsd"), (2, "resEvento_v1.01.xsd")]
    for _nsu, schema, xml in docs:
        assert xsd.errors(xml, schema) == [], schema
    assert etree.fromstring(docs[0][2]).findtext(f"{{{h.NFE}}}chNFe") == nfe.key


def test_lots_of_50_in_nsu_order_then_the_hour_rule(sandbox: Sandbox, inproc: httpx.Client, h: Any) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    for _ in range(59):  # same document, new NSUs: content does not matter for lot sizes
        sandbox.publisher.queue("nfe", h.RECIPIENT, "resNFe", nfe.res_nfe, nfe.key, sandbox.clock.now())
    first = h.read_dist(_post(inproc, h, h.dist_envelope(ult=0)))
    assert (first.cstat, first.ult_nsu, first.max_nsu) == (138, 50, 60)
    assert [n for n, _, _ in first.docs()] == list(range(1, 51))
    second = h.read_dist(_post(inproc, h, h.dist_envelope(ult=50)))
    assert (second.cstat, second.ult_nsu, second.max_nsu) == (138, 60, 60)
    assert [n for n, _, _ in second.docs()] == list(range(51, 61))
    # ultNSU == maxNSU: the next distNSU within the hour is a premature query
    third = h.read_dist(_post(inproc, h, h.dist_envelope(ult=60)))
    assert third.cstat == 656 and "1 hora" in third.text("xMotivo")
    assert third.ult_nsu == 60  # v1.14: the 656 carries the last ultNSU
    assert [v.rule for v in sandbox.referee.violations()] == ["premature_query"]


def test_block_restarts_when_the_caller_insists(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any
) -> None:
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 137
    clock.advance(timedelta(minutes=30))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 656  # premature: block to +1h30
    clock.advance(timedelta(minutes=59))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 656  # during block: to +2h29
    clock.advance(timedelta(minutes=59))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 656  # still blocked, extended
    clock.advance(HOUR + timedelta(minutes=1))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 137
    rules = [v.rule for v in sandbox.referee.violations()]
    assert rules == ["premature_query", "query_during_block", "query_during_block"]


def test_out_of_sequence_nsu_gets_656_but_a_retry_of_the_same_request_does_not(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any
) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    for _ in range(54):
        sandbox.publisher.queue("nfe", h.RECIPIENT, "resNFe", nfe.res_nfe, nfe.key, clock.now())
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).ult_nsu == 50
    retry = h.read_dist(_post(inproc, h, h.dist_envelope(ult=0)))  # answer lost, same request again
    assert retry.cstat == 138 and retry.ult_nsu == 50
    assert sandbox.referee.delivery_count("nfe", h.RECIPIENT, 1) == 2
    skipped = h.read_dist(_post(inproc, h, h.dist_envelope(ult=20)))
    assert skipped.cstat == 656 and skipped.ult_nsu == 50
    assert sandbox.referee.violations()[0].rule == "out_of_sequence_nsu"


def test_point_queries_over_20_per_hour_get_656(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any
) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    for i in range(20):
        body = h.dist_envelope(nsu=1) if i % 2 else h.dist_envelope(key=nfe.key)
        assert h.read_dist(_post(inproc, h, body)).cstat == 138
    assert h.read_dist(_post(inproc, h, h.dist_envelope(nsu=1))).cstat == 656
    assert [v.rule for v in sandbox.referee.violations()] == ["point_query_quota"]
    clock.advance(HOUR + timedelta(seconds=1))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(nsu=1))).cstat == 138
    assert sandbox.referee.delivery_count("nfe", h.RECIPIENT, 1) == 21


def test_589_137_and_the_three_month_window(sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any) -> None:
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT, at=clock.now() - timedelta(days=100))
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    assert h.read_dist(_post(inproc, h, h.dist_envelope(nsu=3))).cstat == 589
    gone = h.read_dist(_post(inproc, h, h.dist_envelope(nsu=1)))  # older than the window
    assert (gone.cstat, gone.ult_nsu, gone.max_nsu) == (137, 1, 2)
    answer = h.read_dist(_post(inproc, h, h.dist_envelope(ult=0)))
    assert [n for n, _, _ in answer.docs()] == [2]
    sandbox.ctx.guards.clear()  # a fresh CNPJ for the AN
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=7))).cstat == 589


def test_identity_rules_593_472_and_branches(sandbox: Sandbox, inproc: httpx.Client, h: Any) -> None:
    assert h.read_dist(_post(inproc, h, h.dist_envelope(h.OTHER, ult=0))).cstat == 593
    assert h.read_dist(_post(inproc, h, h.dist_envelope(h.BRANCH, ult=0))).cstat == 137  # same base
    assert h.read_dist(_post(inproc, h, h.dist_envelope(cpf="52998224725", ult=0))).cstat == 472
    person = sandbox.person("52998224725", "PESSOA FISICA TESTE")
    with httpx.Client(transport=sandbox.transport(person), base_url="https://sandbox.local") as c:
        assert h.read_dist(_post(c, h, h.dist_envelope(cpf="52998224725", ult=0))).cstat == 137
        assert h.read_dist(_post(c, h, h.dist_envelope(h.RECIPIENT, ult=0))).cstat == 593


def test_schema_malformed_and_environment_rejections(inproc: httpx.Client, h: Any) -> None:
    bad = h.dist_envelope(ult=0).replace(b"<cUFAutor>35</cUFAutor>", b"<cUFAutor>AB</cUFAutor>")
    assert h.read_dist(_post(inproc, h, bad)).cstat == 215
    assert h.read_dist(_post(inproc, h, b"<soap:Envelope><broken")).cstat == 243
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0, tp_amb=1))).cstat == 252
    answer = h.read_dist(_post(inproc, h, h.dist_envelope(ult=0, tp_amb=1)))
    assert xsd.errors(answer.ret, "retDistDFeInt_v1.01") == []


def test_cons_ch_nfe_by_role(sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any) -> None:
    carrier = "33444555000181"
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT, transporter=carrier)
    mine = h.read_dist(_post(inproc, h, h.dist_envelope(key=nfe.key)))
    assert [s for _, s, _ in mine.docs()] == ["resNFe_v1.01.xsd"]
    unknown = nfe.key[:-5] + "00000"
    unknown = unknown[:-1] + str(_dv(unknown[:-1]))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(key=unknown))).cstat == 217
    for cnpj, name, expected in ((h.SUPPLIER, "EMITENTE", 641), (h.OTHER, "TERCEIRO", 640), (carrier, "TRANSP", 138)):
        cert = sandbox.company(cnpj, name)
        with httpx.Client(transport=sandbox.transport(cert), base_url="https://sandbox.local") as c:
            answer = h.read_dist(_post(c, h, h.dist_envelope(cnpj, key=nfe.key)))
            assert answer.cstat == expected, name
            if expected == 138:
                assert answer.docs()[0][1] == "procNFe_v4.00.xsd"
    clock.advance(timedelta(days=91))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(key=nfe.key))).cstat == 632


def _dv(body43: str) -> int:
    from app.core.keys import key44_check_digit

    return key44_check_digit(body43)


def test_outage_answers_108_and_the_referee_flags_no_pause(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any
) -> None:
    sandbox.outage("nfe_dist", 108, until=clock.now() + timedelta(minutes=30))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 108
    clock.advance(timedelta(minutes=2))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 108  # did not pause 5 min
    clock.advance(timedelta(minutes=6))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 108  # paused: fine
    clock.advance(timedelta(minutes=30))
    assert h.read_dist(_post(inproc, h, h.dist_envelope(ult=0))).cstat == 137
    assert [v.rule for v in sandbox.referee.violations()] == ["query_during_outage_pause"]


def test_competitor_moves_the_shared_sequence_and_takes_the_blame(
    sandbox: Sandbox, inproc: httpx.Client, h: Any
) -> None:
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT)
    assert sandbox.competitor_query(h.RECIPIENT) == 138
    answer = h.read_dist(_post(inproc, h, h.dist_envelope(ult=0)))
    assert answer.cstat == 656 and answer.ult_nsu == 2
    report = sandbox.referee.report()
    assert report["violations"] == []
    assert report["competitor_violations"] == []  # the other system read in its own time
    assert [v["rule"] for v in report["revealing_656"]] == ["premature_query"]  # ours, provoked by it
    assert report["companies"][h.RECIPIENT]["nfe"]["competitor_delivered"] == {"1": 1, "2": 1}
    assert report["companies"][h.RECIPIENT]["nfe"]["undelivered"] == [1, 2]
    # the app was told; insisting is now its own fault
    h.read_dist(_post(inproc, h, h.dist_envelope(ult=2)))
    assert [v.rule for v in sandbox.referee.violations()] == ["query_during_block"]


def test_cte_distribution_reaches_every_party(sandbox: Sandbox, clock: FakeClock, h: Any) -> None:
    sender, carrier = "55666777000181", h.SUPPLIER
    cte = sandbox.publish_cte(emitter=carrier, sender=sender, recipient=h.RECIPIENT, taker_role=3)
    sandbox.publish_cte_event(cte, "110110")
    for cnpj in (carrier, sender, h.RECIPIENT):
        cert = sandbox.company(cnpj, f"EMPRESA {cnpj}")
        with httpx.Client(transport=sandbox.transport(cert), base_url="https://sandbox.local") as c:
            response = _post(c, h, h.dist_envelope(cnpj, ult=0, product="cte"), h.CTE_PATH)
            answer = h.read_dist(response, h.CTE)
            assert etree.QName(answer.ret.getparent().getparent()).localname == "cteDistDFeInteresseResponse"
            assert xsd.errors(answer.ret, "retDistDFeInt_v1.00") == []
            docs = answer.docs()
            assert [s for _, s, _ in docs] == ["procCTe_v4.00.xsd", "procEventoCTe_v4.00.xsd"], cnpj
            for _, schema, xml in docs:
                assert xsd.errors(xml, schema) == []
    # no consChCTe in the CT-e schema: 215 as the real AN answers
    bad = h.dist_envelope(ult=0, product="cte").replace(
        b"<distNSU><ultNSU>000000000000000</ultNSU></distNSU>",
        f"<consChNFe><chNFe>{cte.key}</chNFe></consChNFe>".encode(),
    )
    cert = sandbox.companies[h.RECIPIENT]
    with httpx.Client(transport=sandbox.transport(cert), base_url="https://sandbox.local") as c:
        assert h.read_dist(_post(c, h, bad, h.CTE_PATH), h.CTE).cstat == 215
    assert json.dumps(sandbox.referee.report())


def _as_lxml_writes_it(body: bytes) -> bytes:
    """The envelope as lxml serialises it (what the services wrote when they built a tree)."""
    return b'<?xml version="1.0" encoding="utf-8"?>' + etree.tostring(etree.fromstring(body), encoding="utf-8")


def test_answers_are_written_exactly_as_lxml_would(
    sandbox: Sandbox, clock: FakeClock, inproc: httpx.Client, h: Any
) -> None:
    nfe = sandbox.publish_nfe(emitter=h.SUPPLIER, recipient=h.RECIPIENT, transporter="33444555000181")
    sandbox.publish_nfe_event(nfe, "110110", correction='Correcao do "endereco" <entrega> & numero')
    bad = h.dist_envelope(ult=0).replace(b"<cUFAutor>35</cUFAutor>", b'<cUFAutor>A&amp;&lt;"B</cUFAutor>')
    soap11 = h.dist_envelope(ult=0).replace(h.SOAP12.encode(), h.SOAP11.encode())
    bodies = [_post(inproc, h, bad).content]  # 215 with the XSD message quoting the bad value
    assert b"<cStat>215</cStat>" in bodies[0] and b"&amp;&lt;" in bodies[0]
    sandbox.inject_fault("nfe_dist", "corrupt_base64", cnpj=h.RECIPIENT)
    response = inproc.post(h.DIST_PATH, content=soap11, headers={"Content-Type": "text/xml; charset=utf-8"})
    assert response.headers["content-type"] == "text/xml; charset=utf-8"
    bodies.append(response.content)  # 138, SOAP 1.1, first docZip spoilt
    bodies.append(_post(inproc, h, h.dist_envelope(ult=2)).content)  # 656 premature
    clock.advance(2 * HOUR)
    bodies.append(_post(inproc, h, h.dist_envelope(ult=2)).content)  # 137
    bodies.append(_post(inproc, h, h.dist_envelope(nsu=1)).content)  # 138 by consNSU, intact docZip
    for body in bodies:
        assert body == _as_lxml_writes_it(body)
    assert [h.read_dist(httpx.Response(200, content=b)).cstat for b in bodies] == [215, 138, 656, 137, 138]
    assert h.read_dist(httpx.Response(200, content=bodies[-1])).docs()[0][2] == nfe.res_nfe
    assert sandbox.fired_faults[0].kind == "corrupt_base64"
