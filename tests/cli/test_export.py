"""`export` and `export-profile`: real captured documents into folders and a ZIP."""

from __future__ import annotations

import zipfile
from datetime import timedelta
from pathlib import Path

from tests.cli.conftest import Cli
from tests.export.conftest import files_under
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


def _captured(harness: Harness, count: int = 2) -> list[str]:
    keys = sorted(str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(count))
    harness.run_pending()
    return keys


def test_export_writes_the_default_tree_and_a_zip_and_twice_changes_nothing(
    harness: Harness, cli: Cli, tmp_path: Path
) -> None:
    keys = _captured(harness)
    destination, archive = tmp_path / "saida", tmp_path / "envio.zip"

    assert cli("export", str(destination), "--zip", str(archive)) == 0, cli.err

    month = f"20{keys[0][2:4]}-{keys[0][4:6]}"
    expected = [f"{RECIPIENT}/{month}/Resumos/{k}.xml" for k in keys]
    assert files_under(destination) == expected
    assert "2 documento(s)" in cli.out and "ZIP gravado" in cli.out
    with zipfile.ZipFile(archive) as opened:
        assert sorted(opened.namelist()) == expected
        assert opened.read(expected[0]) == (destination / expected[0]).read_bytes()
    summary = cli.json("export", str(destination))
    assert summary == {
        "documents": 2,
        "events": 0,
        "written": 0,
        "unchanged": 2,
        "removed": 0,
        "skipped_unreadable": 0,
        "zip": None,
    }


def test_export_filters_by_period_and_uses_the_pattern_given(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    keys = _captured(harness, 1)
    destination = tmp_path / "flat"
    issued = f"20{keys[0][2:4]}-{keys[0][4:6]}"
    pattern = "{emitente_cnpj}-{numero}-{chave}"
    assert cli("export", str(destination), "--pattern", pattern, "--to", "2020-01-01") == 0
    assert files_under(destination) == []
    assert cli("export", str(destination), "--pattern", pattern, "--from", f"{issued}-01") == 0
    [name] = files_under(destination)
    assert name.startswith(f"{SUPPLIER}-") and name.endswith(f"-{keys[0]}.xml")


def test_bad_input_is_refused_in_portuguese(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    _captured(harness, 1)
    assert cli("export", str(tmp_path / "x"), "--pattern", "{cnpj}/{xyz}.xml") == 1
    assert "Campo desconhecido" in cli.err
    assert cli("export", str(tmp_path / "x"), "--from", "02/11/2026") == 2  # misuse, as the README says
    assert "Data inválida" in cli.err
    assert not (tmp_path / "x").exists()  # refused before anything was written


def test_profiles_are_added_listed_run_and_removed(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    keys = _captured(harness)
    archive, erp = tmp_path / "arquivo", tmp_path / "erp"
    assert cli("export-profile", "add", "arquivo", str(archive)) == 0, cli.err
    assert "Exemplo de caminho: 11222333000181/2026-11/NFe/" in cli.out
    assert cli("export-profile", "add", "erp", str(erp), "--preset", "importacao") == 0
    assert cli("export-profile", "add", "erp", str(erp)) == 1 and "Já existe" in cli.err

    assert cli("export-profile", "run") == 0, cli.out
    assert len(files_under(archive)) == 2
    assert files_under(erp) == []  # resumos never reach the ERP's import folder
    harness.clock.advance(timedelta(hours=1, minutes=5))
    harness.sandbox.publish_nfe_event(keys[0], "210210")
    harness.run_pending()
    assert cli("export-profile", "run") == 0
    assert files_under(erp) == [f"{keys[0]}-procNFe.xml"]

    listed = cli.json("export-profile", "list")
    assert isinstance(listed, list)
    assert {p["name"]: (p["exported"], p["queued"], p["last_error"]) for p in listed} == {
        "arquivo": (4, 0, None),  # two resumos, then the complete NF-e and its Ciência event
        "erp": (1, 0, None),
    }
    assert cli("export-profile", "remove", "erp") == 0
    assert cli("export-profile", "remove", "erp") == 1 and "não encontrado" in cli.err


def test_export_with_pdf_writes_the_danfe_beside_the_complete_nfe(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    from pypdf import PdfReader

    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    key = str(nfe.key)
    harness.run_pending()
    harness.sandbox.publish_nfe_event(nfe, "210210")  # Ciência: the AN releases the nfeProc
    harness.clock.advance(timedelta(hours=1, minutes=5))
    harness.run_pending()
    destination = tmp_path / "saida"
    assert cli("export", str(destination), "--pdf") == 0, cli.err
    month = f"20{key[2:4]}-{key[4:6]}"
    pdf = destination / RECIPIENT / month / "NFe" / f"{key}-procNFe.pdf"
    assert pdf.is_file(), files_under(destination)
    text = "".join(page.extract_text() for page in PdfReader(pdf).pages).replace(" ", "")
    assert key in text and "DANFE" in text
    assert not (destination / RECIPIENT / month / "Resumos").exists()  # the resumo was replaced, no PDF of it
