from __future__ import annotations

import io
import json
import sqlite3
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from app.config.paths import database_path
from app.launcher import main
from app.sandbox.pki import IssuedCert, TestPki

PASSWORD = "s3nh@-do-A1"


@pytest.fixture(scope="module")
def pki() -> TestPki:
    return TestPki.create()


@pytest.fixture(scope="module")
def company_cert(pki: TestPki) -> IssuedCert:
    return pki.company_cert("11222333000181", "COMERCIO EXEMPLO LTDA", password=PASSWORD)


def _run(args: list[str], monkeypatch: pytest.MonkeyPatch, stdin: str = "") -> int:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    return main(args)


def _add(tmp_path: Path, cert: IssuedCert, monkeypatch: pytest.MonkeyPatch, *extra: str) -> int:
    pfx = tmp_path / "a1.pfx"
    pfx.write_bytes(cert.pfx)
    return _run(["company", "add", "--pfx", str(pfx), "--password-stdin", *extra], monkeypatch, PASSWORD + "\n")


def test_add_then_list_shows_company_products_and_certificate(
    tmp_path: Path,
    data_dir: Path,
    company_cert: IssuedCert,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _add(tmp_path, company_cert, monkeypatch, "--json") == 0
    added = json.loads(capsys.readouterr().out)
    assert added["cnpj"] == "11222333000181"

    assert _run(["company", "list", "--json"], monkeypatch) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["name"].startswith("COMERCIO EXEMPLO")
    assert listed["certificate_problem"] is None
    assert {p["product"] for p in listed["products"]} == {"nfe", "cte", "nfse"}
    assert all(p["environment"] == "producao" and p["enabled"] for p in listed["products"])
    # cUFAutor from the certificate's state (ST=SP): CT-e capture needs it from the first query.
    assert {p["c_uf_autor"] for p in listed["products"]} == {"35"}


def test_no_secret_reaches_the_database_or_the_data_folder_in_clear(
    tmp_path: Path, data_dir: Path, company_cert: IssuedCert, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _add(tmp_path, company_cert, monkeypatch) == 0
    key = serialization.load_pem_private_key(company_cert.key_pem, None)
    key_der = key.private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    assert database_path(data_dir).exists()
    for path in data_dir.rglob("*"):
        if path.is_file():
            content = path.read_bytes()
            assert PASSWORD.encode() not in content, path
            assert key_der not in content, path
            assert company_cert.pfx not in content, path
            assert b"PRIVATE KEY" not in content, path


def test_set_changes_one_product_and_refuses_a_short_ciencia_wait(
    tmp_path: Path,
    data_dir: Path,
    company_cert: IssuedCert,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _add(tmp_path, company_cert, monkeypatch) == 0
    capsys.readouterr()
    args = ["company", "set", "11.222.333/0001-81", "--product", "nfe", "--auto-ciencia", "--ciencia-wait", "10"]
    assert _run([*args, "--json"], monkeypatch) == 0
    assert json.loads(capsys.readouterr().out)["ciencia_wait_minutes"] == 10
    assert _run(["company", "set", "11222333000181", "--product", "nfe", "--ciencia-wait", "4"], monkeypatch) == 1
    assert "pelo menos 5 minutos" in capsys.readouterr().err
    assert _run(["company", "set", "11222333000181", "--product", "cte", "--disable"], monkeypatch) == 0
    assert "CT-e: desativada" in capsys.readouterr().out
    assert _run(["company", "list", "--json"], monkeypatch) == 0
    products = {p["product"]: p for p in json.loads(capsys.readouterr().out)[0]["products"]}
    assert products["cte"]["enabled"] is False
    assert products["nfe"]["auto_ciencia"] is True


def test_set_cte_filters_and_the_authors_uf(
    tmp_path: Path,
    data_dir: Path,
    company_cert: IssuedCert,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _add(tmp_path, company_cert, monkeypatch) == 0
    capsys.readouterr()
    args = [
        "company",
        "set",
        "11222333000181",
        "--product",
        "cte",
        "--uf",
        "SP",
        "--event-types",
        "110111,610110",
        "--roles",
        "tomador,destinatario",
        "--json",
    ]
    assert _run(args, monkeypatch) == 0
    saved = json.loads(capsys.readouterr().out)
    assert saved["c_uf_autor"] == "35"
    assert saved["cte_event_types"] == ["110111", "610110"]
    assert saved["cte_roles"] == ["tomador", "destinatario"]
    assert _run(["company", "set", "11222333000181", "--product", "cte", "--roles", "motorista"], monkeypatch) == 1
    assert "Papel desconhecido" in capsys.readouterr().err
    assert _run(["company", "set", "11222333000181", "--product", "nfe", "--event-types", "110111"], monkeypatch) == 1
    assert "só existem para CT-e" in capsys.readouterr().err
    assert _run(["company", "set", "11222333000181", "--product", "cte", "--uf", "XX"], monkeypatch) == 1
    assert "cUFAutor" in capsys.readouterr().err
    # An empty list clears a filter.
    assert _run(["company", "set", "11222333000181", "--product", "cte", "--roles", "", "--json"], monkeypatch) == 0
    assert json.loads(capsys.readouterr().out)["cte_roles"] == []


def test_branch_must_share_the_certificate_base(
    tmp_path: Path,
    data_dir: Path,
    company_cert: IssuedCert,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _add(tmp_path, company_cert, monkeypatch, "--cnpj", "11222333000262") == 0
    assert _add(tmp_path, company_cert, monkeypatch, "--cnpj", "12ABC34501DE35") == 1
    assert "raiz do CNPJ" in capsys.readouterr().err


def test_person_certificate_is_refused(
    tmp_path: Path, data_dir: Path, pki: TestPki, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cert = pki.person_cert("52998224725", "FULANO DE TAL", password=PASSWORD)
    assert _add(tmp_path, cert, monkeypatch) == 1
    assert "e-CPF" in capsys.readouterr().err


def test_same_company_twice_is_refused(
    tmp_path: Path,
    data_dir: Path,
    company_cert: IssuedCert,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _add(tmp_path, company_cert, monkeypatch) == 0
    assert _add(tmp_path, company_cert, monkeypatch) == 1
    assert "já está cadastrada" in capsys.readouterr().err


def test_resume_takes_up_a_stopped_capture_and_keeps_its_wait(
    tmp_path: Path,
    data_dir: Path,
    company_cert: IssuedCert,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _add(tmp_path, company_cert, monkeypatch) == 0
    capsys.readouterr()
    # What the engine leaves after 5 communication failures in a row (a wait still running).
    with sqlite3.connect(database_path(data_dir)) as db:
        db.execute(
            "INSERT INTO capture_state (company_id, product, ult_nsu, max_nsu, next_query_at, disabled_reason, "
            "paused, consecutive_failures, updated_at) SELECT id, 'nfe', 7, 7, '2099-01-01 00:00:00.000000', "
            "'Captura de NF-e interrompida após 5 falhas', 0, 5, '2026-11-30 12:00:00.000000' FROM companies"
        )
    assert _run(["company", "resume", "11222333000181", "--json"], monkeypatch) == 0
    assert json.loads(capsys.readouterr().out) == {"cnpj": "11222333000181", "resumed": ["nfe"]}
    with sqlite3.connect(database_path(data_dir)) as db:
        row = db.execute(
            "SELECT disabled_reason, consecutive_failures, ult_nsu, next_query_at FROM capture_state"
        ).fetchone()
    assert row == (None, 0, 7, "2099-01-01 00:00:00.000000")
    assert _run(["company", "resume", "11222333000181"], monkeypatch) == 0
    assert "nenhuma captura interrompida" in capsys.readouterr().out


def test_a_product_enabled_without_an_engine_is_said_in_add_list_status_and_the_desk(
    tmp_path: Path,
    data_dir: Path,
    company_cert: IssuedCert,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from app.capture.products import REGISTRY
    from app.core.products import Product

    missing = [p for p in Product if p not in REGISTRY]
    if not missing:
        pytest.skip("every product has an engine: nothing left to say")
    assert _add(tmp_path, company_cert, monkeypatch) == 0  # the default: nfe,cte,nfse
    err = capsys.readouterr().err
    for product in Product:
        assert (f"Aviso: A captura de {product.label} ainda não existe" in err) is (product in missing)

    assert _run(["company", "list"], monkeypatch) == 0
    listed = capsys.readouterr().out
    assert all(f"{p.label} (sem captura nesta versão)" in listed for p in missing)

    assert _run(["status", "--json"], monkeypatch) == 0
    statuses = {s["product"]: s for s in json.loads(capsys.readouterr().out)}
    assert set(statuses) == {p.value for p in Product}  # none left out
    for product in missing:
        assert statuses[product.value]["label"] == "Desativada"
        assert "ainda não existe nesta versão" in statuses[product.value]["reason"]
    assert _run(["status"], monkeypatch) == 0
    label = missing[0].label
    assert f"{label}: Desativada | A captura de {label} ainda não existe" in capsys.readouterr().out

    from app.desk.desk import Desk  # the window's facade: its company badges say it too

    desk = Desk(data_dir, capture=False)
    desk.open()
    try:
        [line] = desk.companies()
        badges = {b.product: b for b in line.badges}
        assert set(badges) == set(Product)
        assert all("ainda não existe nesta versão" in badges[p].reason for p in missing)
    finally:
        desk.close()
