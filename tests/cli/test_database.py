"""``--database URL``: the office database chosen once, remembered without its password (the
password in the keyring), and used by every later command; ``sqlite`` goes back to the file."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import keyring
import pytest

from app.core.ids import Cnpj
from app.launcher import main
from app.store.companies import CompanyRepository
from app.store.db import open_database
from tests.support.postgres import PostgresCluster

PASSWORD = "s3gr3do:com/@símbolos"


def _companies(data_dir: Path, capsys: pytest.CaptureFixture[str], *options: str) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["--data-dir", str(data_dir), *options, "company", "list", "--json"]) == 0, capsys.readouterr().err
    answer = json.loads(capsys.readouterr().out)
    assert isinstance(answer, list)
    return answer


def test_the_office_database_is_chosen_once_and_its_password_never_reaches_the_disk(
    tmp_path: Path,
    postgres_cluster: PostgresCluster,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = postgres_cluster.new_database()
    name = postgres_cluster.name_of(url)
    with open_database(url) as office:  # a colleague's company, already on the server
        CompanyRepository(office).add(Cnpj("11222333000181"), "Destinatária Exemplo Ltda")
    data_dir = tmp_path / "estacao"
    given = f"postgresql://captura:{PASSWORD.replace(':', '%3A').replace('/', '%2F').replace('@', '%40')}"
    given += f"@127.0.0.1:{postgres_cluster.port}/{name}"
    caplog.set_level(logging.DEBUG)
    assert [s["cnpj"] for s in _companies(data_dir, capsys, "--database", given)] == ["11222333000181"]
    settings = json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))
    assert settings["office_database"] == f"postgresql://captura@127.0.0.1:{postgres_cluster.port}/{name}"
    entry = f"office-db:captura@127.0.0.1:{postgres_cluster.port}/{name}"
    assert keyring.get_password("CapturaDFe", entry) == PASSWORD
    on_disk = [p for p in data_dir.rglob("*") if p.is_file() and PASSWORD.encode() in p.read_bytes()]
    assert on_disk == [] and "s3gr3do" not in caplog.text
    # Remembered: the next command, the window and the daemon open the same server.
    assert [s["cnpj"] for s in _companies(data_dir, capsys)] == ["11222333000181"]
    assert _companies(data_dir, capsys, "--database", "sqlite") == []  # the data folder's own file again
    assert "office_database" not in json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))


def test_the_environment_variable_chooses_too_and_a_bad_address_is_refused_in_portuguese(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = tmp_path / "estacao"
    monkeypatch.setenv("CAPTURA_DATABASE", postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    assert _companies(data_dir, capsys) == []
    assert json.loads((data_dir / "settings.json").read_text(encoding="utf-8"))["office_database"].startswith(
        "postgresql://captura@127.0.0.1:"
    )
    assert main(["--data-dir", str(data_dir), "--database", "mysql://x@servidor/banco", "company", "list"]) == 1
    assert "o endereço começa com postgresql://" in capsys.readouterr().err
