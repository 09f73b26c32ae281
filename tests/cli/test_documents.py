from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any

from app.core.products import Product
from app.store.records import DocumentKind
from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness

OTHER_SUPPLIER = "55666777000105"


def _capture(harness: Harness) -> None:
    harness.run_pending()


def _publish(harness: Harness, emitter: str = SUPPLIER, **options: Any) -> str:
    return str(harness.sandbox.publish_nfe(emitter, RECIPIENT, **options).key)


def test_list_json_gives_what_a_script_needs(harness: Harness, cli: Cli) -> None:
    key = _publish(harness)
    _capture(harness)
    listed = cli.json("documents", "list")
    assert isinstance(listed, list) and len(listed) == 1
    [doc] = listed
    stored = harness.ctx.documents.find(harness.company.id, Product.NFE, key)
    assert stored is not None and stored.total_cents is not None
    assert doc["product"] == "nfe" and doc["kind"] == "resNFe" and doc["key"] == key
    assert doc["company"] == RECIPIENT
    assert doc["nsu"] == "000000000000001"
    assert doc["issuer"]["id"] == SUPPLIER and doc["issuer"]["name"]
    assert doc["recipient"]["id"] in (None, RECIPIENT)
    assert doc["total_cents"] == stored.total_cents
    assert doc["total"] == f"{stored.total_cents // 100}.{stored.total_cents % 100:02d}"
    assert doc["issued_at"].endswith("-03:00")  # the offset the NF-e was issued with
    assert doc["direction"] == "received" and doc["status"] == "summary"


def test_list_filters_and_pages(harness: Harness, cli: Cli) -> None:
    harness.sandbox.party(OTHER_SUPPLIER)
    first = _publish(harness)
    harness.clock.advance(timedelta(minutes=10))
    second = _publish(harness, OTHER_SUPPLIER)
    harness.clock.advance(timedelta(minutes=10))
    third = _publish(harness)
    _capture(harness)

    assert [d["key"] for d in cli.json("documents", "list")] == [third, second, first]  # newest first
    assert [d["key"] for d in cli.json("documents", "list", "--emitter", OTHER_SUPPLIER)] == [second]
    assert [d["key"] for d in cli.json("documents", "list", "--limit", "1", "--offset", "1")] == [second]
    assert [d["key"] for d in cli.json("documents", "list", "--emitter", SUPPLIER, "--offset", "1")] == [first]
    assert cli.json("documents", "list", "--kind", "nfeProc") == []
    assert len(cli.json("documents", "list", "--company", RECIPIENT, "--product", "nfe", "--status", "summary")) == 3  # type: ignore[arg-type]
    assert cli.json("documents", "list", "--product", "cte") == []
    today = harness.clock.now().date().isoformat()
    assert len(cli.json("documents", "list", "--from", today, "--to", today)) == 3  # type: ignore[arg-type]
    assert cli.json("documents", "list", "--to", "2020-01-01") == []
    assert cli.json("documents", "list", "--direction", "emitted") == []


def test_list_table_and_bad_filters(harness: Harness, cli: Cli) -> None:
    key = _publish(harness)
    _capture(harness)
    assert cli("documents", "list") == 0
    assert key in cli.out and "resumo" in cli.out and "R$ " in cli.out and "1 documento(s)." in cli.out
    assert cli("documents", "list", "--from", "31/12/2026") == 2  # misuse: exit 2
    assert "AAAA-MM-DD" in cli.err
    assert cli("documents", "list", "--company", "99888777000100") == 1
    assert "não está cadastrada" in cli.err
    assert cli("documents", "list", "--kind", "pdf") == 1
    assert "Tipo de documento desconhecido" in cli.err


def test_show_xml_and_pdf_of_a_summary_then_of_the_complete_nfe(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    key = str(nfe.key)
    _capture(harness)

    out = tmp_path / "resumo.xml"
    assert cli("documents", "xml", key, "-o", str(out)) == 0
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(nfe.res_nfe).hexdigest()

    harness.capture.manifestation.request(harness.company.id, key, "210210")
    harness.capture.manifestation.dispatch()
    harness.run_until(harness.clock.now() + timedelta(hours=1, minutes=5))
    summary = harness.ctx.documents.find(harness.company.id, Product.NFE, key)
    assert summary is not None and summary.kind is DocumentKind.NFE_PROC

    full = tmp_path / "nfe.xml"
    assert cli("documents", "xml", key, "-o", str(full)) == 0
    assert full.read_bytes() == nfe.nfe_proc  # byte-exact: what the sandbox published
    assert hashlib.sha256(full.read_bytes()).hexdigest() == hashlib.sha256(nfe.nfe_proc).hexdigest()

    shown = cli.json("documents", "show", key)
    assert isinstance(shown, dict)
    assert shown["kind"] == "nfeProc" and shown["status"] == "authorised"
    assert [v["kind"] for v in shown["versions"]] == ["resNFe", "nfeProc"]
    assert [v["current"] for v in shown["versions"]] == [False, True]
    ciencia = [e for e in shown["events"] if e["tp_evento"] == "210210"]
    assert ciencia and ciencia[0]["protocol"]
    [manifestation] = shown["manifestations"]
    assert manifestation["label"] == "Ciência da Operação" and manifestation["status"] == "accepted"
    assert manifestation["attempts"] == ""  # registered: no "0 de 1 tentativas"

    assert cli("documents", "show", key) == 0
    assert "Ciência da Operação (manual): registrada" in cli.out and "tentativas" not in cli.out

    pdf = tmp_path / "danfe.pdf"
    assert cli("documents", "pdf", key, "-o", str(pdf)) == 0
    assert "DANFE gravado em" in cli.out
    assert pdf.read_bytes().startswith(b"%PDF-")  # the full DANFE: tests/pdf/test_cli_pdf.py reads it back


def test_unknown_or_invalid_key_is_refused(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    missing = "35261199888777000100550010000000011000000010"
    assert cli("documents", "show", missing) == 1
    assert "não encontrado" in cli.err
    assert cli("documents", "xml", "123", "-o", str(tmp_path / "x.xml")) == 1
    assert "Chave com 3 dígitos: uma chave de NF-e ou CT-e tem 44." in cli.err
    # A wrong check digit is said as such, not "não encontrado" (the valid one is 0: ...010).
    assert cli("documents", "show", missing[:43] + "3") == 1
    assert "Dígito verificador da chave não confere: esperado 0, informado 3." in cli.err
    assert cli("documents", "show", missing[:43]) == 1
    assert "Chave com 43 dígitos: uma chave de NF-e ou CT-e tem 44." in cli.err
    assert not (tmp_path / "x.xml").exists()


def test_group_without_action_is_usage(cli: Cli) -> None:
    assert cli("documents") == 2
    assert "list" in cli.err


def test_an_event_only_key_is_listed_and_shown(harness: Harness, cli: Cli) -> None:
    # The company issued this NF-e: the service never sends it back, only its customer's Ciência.
    issued = harness.sandbox.publish_nfe(RECIPIENT, SUPPLIER)
    harness.sandbox.publish_nfe_event(issued, "210210")
    _capture(harness)
    key = str(issued.key)
    listed = cli.json("documents", "list", "--kind", "event")
    assert isinstance(listed, list) and [d["key"] for d in listed] == [key]
    assert listed[0]["kind"] == "event" and listed[0]["direction"] == "emitted" and listed[0]["events_count"] == 1
    assert [d["key"] for d in cli.json("documents", "list")] == [key]  # every NSU reachable by a person
    assert cli.json("documents", "list", "--kind", "resNFe") == []
    shown = cli.json("documents", "show", key)
    assert isinstance(shown, dict) and shown["kind"] == "event"
    assert [e["tp_evento"] for e in shown["events"]] == ["210210"]
    assert cli("documents", "show", key) == 0
    assert "só os eventos da chave" in cli.out and "210210" in cli.out
    assert cli("documents", "xml", key, "-o", "-") == 0
    assert "210210" in cli.out


def test_show_lists_the_cte_that_moved_an_nfe_and_the_nfe_a_cte_carries(harness: Harness, cli: Cli) -> None:
    from app.capture.cte import CteCapture
    from app.capture.simulation import run_pending
    from app.core.products import Environment
    from app.store.records import CaptureSettings
    from tests.support.nfe_harness import CARRIER

    nfe_key = _publish(harness)
    _capture(harness)
    harness.sandbox.party(CARRIER)
    harness.office.companies.save_settings(
        CaptureSettings(harness.company.id, Product.CTE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
    )
    missing = "35261199888777000100550010000000011000000010"  # an NF-e this company never received
    cte = harness.sandbox.publish_cte(CARRIER, SUPPLIER, RECIPIENT, nfe_keys=(nfe_key, missing))
    run_pending(CteCapture(harness.ctx))
    shown = cli.json("documents", "show", str(cte.key))
    assert isinstance(shown, dict) and shown["product"] == "cte"
    assert sorted(shown["related"], key=lambda r: r["key"]) == sorted(
        [{"product": "nfe", "key": nfe_key, "stored": True}, {"product": "nfe", "key": missing, "stored": False}],
        key=lambda r: r["key"],
    )
    nfe = cli.json("documents", "show", nfe_key)
    assert isinstance(nfe, dict) and nfe["related"] == [{"product": "cte", "key": str(cte.key), "stored": True}]
    assert cli("documents", "show", nfe_key) == 0
    assert "Transportada pelos CT-e:" in cli.out and str(cte.key) in cli.out
