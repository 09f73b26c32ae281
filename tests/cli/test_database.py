"""``--database URL``: the office database chosen once, remembered without its password (the
password in the keyring), and used by every later command; ``sqlite`` goes back to the file."""

from __future__ import annotations

import json
import logging
import re
from datetime import timedelta
from pathlib import Path

import keyring
import pytest
from sqlalchemy import text

from app.capture.instance import DataFolderLock
from app.capture.office import Office
from app.config.settings import load_settings
from app.core.ids import Cnpj
from app.core.products import Product
from app.desk.migration import MigrationRefused, migrate_to_office
from app.launcher import main
from app.store.companies import CompanyRepository
from app.store.db import open_database
from app.store.documents import DocumentRepository
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, nfe_harness
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


class Interrupted(Exception):
    """The fault injected into a copy: the connection dropped in the middle of a table."""


def _captured_folder(tmp_path: Path) -> tuple[Path, list[str], dict[str, bytes]]:
    """A data folder whose SQLite file holds a real capture: NF-e, events, an automatic Ciência
    (manifestation result, archived exchanges), closed as a workstation leaves it."""
    with nfe_harness(tmp_path) as h:
        h.settings(auto_ciencia=True, ciencia_wait_minutes=10)
        for _ in range(12):
            h.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
        nfe = h.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
        h.sandbox.publish_nfe_event(nfe, "110110", correction="Correcao do endereco de entrega do destinatario")
        h.run_until(h.clock.now() + timedelta(hours=3))
        with h.ctx.db.reader() as session:
            keys = sorted(session.execute(text("SELECT access_key FROM documents WHERE kind = 'nfeProc'")).scalars())
        xml = {key: h.ctx.documents.get_xml(h.company.id, Product.NFE, key) for key in keys}
        assert len(keys) == 13 and h.ctx.manifestations.for_key(h.company.id, Product.NFE, str(nfe.key))
        return h.office.data_dir, keys, xml


def test_an_interrupted_migration_continues_and_the_copy_is_verified_table_by_table(
    tmp_path: Path, postgres_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir, keys, xml = _captured_folder(tmp_path)
    target = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    copied: list[tuple[str, int]] = []

    def drop_the_connection(table: str, rows: int, _total: int) -> None:
        copied.append((table, rows))
        if table == "document_versions":
            raise Interrupted

    with pytest.raises(Interrupted):
        migrate_to_office(data_dir, target, progress=drop_the_connection, batch_rows=5)
    assert ("documents", 13) in copied and copied[-1] == ("document_versions", 5)
    assert load_settings(data_dir).office_database is None  # not switched before the copy is verified
    capsys.readouterr()
    assert main(["--data-dir", str(data_dir), "database", "migrate", "--to", target]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.startswith("Migração retomada e concluída: SQLite → PostgreSQL captura@127.0.0.1:")
    assert "XML conferidos pelo SHA-256:" in out and "Esta pasta de dados passa a usar o banco do escritório" in out
    assert re.search(r"^documents\s+13\s+13$", out, re.MULTILINE)
    assert load_settings(data_dir).office_database == target.split("?")[0]
    # The workstation now works on the server: the same documents, byte for byte.
    with Office(data_dir, database=postgres_url) as office:
        [company] = office.companies.list_companies()
        assert {key: DocumentRepository(office.db).get_xml(company.id, Product.NFE, key) for key in keys} == xml
    # A second migration into a database that holds rows (no interrupted copy of ours) is refused.
    assert main(["--data-dir", str(data_dir), "database", "migrate", "--to", target]) == 1
    assert "não está vazio" in capsys.readouterr().err


def test_a_running_capture_holds_the_migration_back(tmp_path: Path, postgres_url: str) -> None:
    data_dir, _keys, _xml = _captured_folder(tmp_path)
    with DataFolderLock(data_dir, owner="janela do Captura DF-e"), pytest.raises(MigrationRefused) as caught:
        migrate_to_office(data_dir, postgres_url)
    assert "janela do Captura DF-e" in caught.value.message and "nada foi copiado" in caught.value.message
