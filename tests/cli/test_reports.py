"""`report`: every report through the command line, to XLSX and CSV."""

from __future__ import annotations

from pathlib import Path

import pytest
from openpyxl import load_workbook

from tests.cli.conftest import Cli
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


@pytest.mark.parametrize(
    ("report", "sheets"),
    [
        ("documents", ["NF-e", "CT-e", "NFS-e"]),
        ("summary", ["Resumo mensal"]),
        ("gaps", ["Lacunas de NSU"]),
        ("deadlines", ["Prazos de manifestação"]),
        ("ibs-cbs", ["Créditos IBS e CBS", "Documentos"]),
    ],
)
def test_each_report_is_written_as_xlsx(
    harness: Harness, cli: Cli, tmp_path: Path, report: str, sheets: list[str]
) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_pending()
    target = tmp_path / f"{report}.xlsx"
    assert cli("report", report, "--xlsx", str(target), "--company", RECIPIENT) == 0, cli.err
    assert load_workbook(target).sheetnames == sheets
    assert f"Relatório gravado em {target}" in cli.out


def test_csv_and_refusals(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_pending()
    target = tmp_path / "docs.csv"
    assert cli("report", "documents", "--csv", str(target), "--product", "nfe") == 0
    assert target.read_bytes().startswith(b"\xef\xbb\xbfCNPJ da empresa;")
    assert "1 linha(s)" in cli.out
    assert cli("report", "summary", "--csv", str(target), "--from", "2026-12-01", "--to", "2026-11-01") == 1
    assert "anterior" in cli.err
    assert cli("report", "gaps", "--xlsx", str(tmp_path / "g.xlsx"), "--company", "11444777000161") == 1
    assert "não está cadastrada" in cli.err


def test_ibs_cbs_is_two_csv_files_and_counts_no_summary(harness: Harness, cli: Cli, tmp_path: Path) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)  # the recipient has its resNFe: no credit yet
    harness.run_pending()
    target = tmp_path / "creditos.csv"
    assert cli("report", "ibs-cbs", "--csv", str(target), "--company", RECIPIENT) == 0, cli.err
    header, *rows = target.read_text(encoding="utf-8-sig").splitlines()
    assert header.split(";")[4:9] == [
        "Documentos com IBS/CBS", "Notas de crédito", "Notas de débito", "Sem grupos da reforma", "Valores ilegíveis",
    ]  # fmt: skip
    assert rows == []  # only authorised full documents count: a resumo is not one
    apart = tmp_path / "creditos-documentos.csv"
    assert apart.read_text(encoding="utf-8-sig").startswith("CNPJ da empresa;Empresa;Mês;Produto;Chave de acesso")
    assert f"Relatório gravado em {target}" in cli.out
