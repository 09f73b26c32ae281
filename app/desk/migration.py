"""``database migrate --to``: a data folder's SQLite database moved to the office's PostgreSQL.

The copy goes into an empty database only, table by table in batches (app.store.transfer), with
the data folder locked against a capture meanwhile. Interrupted (a network drop, Ctrl+C), it is
run again and continues: a marker in the data folder names the server it was copying to, so a
database holding rows is taken up only when it is this copy's own. Verified (row counts of every
table, the SHA-256 of every stored XML), the data folder switches to the office database.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.capture.instance import AlreadyRunning, DataFolderLock
from app.certs.vault import read_secret
from app.config.office_database import OfficeUrl, parse_office_url
from app.config.paths import database_path
from app.desk import office_database
from app.desk.errors import DeskError
from app.store.db import open_database
from app.store.transfer import BATCH_ROWS, TransferReport, copy_tables, holds_rows, verify

MARKER_NAME = "migracao-banco.json"
Progress = Callable[[str, int, int], None]


class MigrationRefused(DeskError):
    """The copy cannot start (nothing to copy, a database in use, a target not empty)."""


@dataclass(frozen=True, slots=True)
class MigrationSummary:
    target: str  # usuario@servidor:porta/banco
    resumed: bool  # an interrupted copy taken up
    report: TransferReport

    def lines(self) -> list[str]:
        """The summary in Portuguese, as the command prints it."""
        report = self.report
        head = "Migração retomada e concluída" if self.resumed else "Migração concluída"
        if not report.ok:
            head = "Migração copiada, mas a conferência encontrou diferenças"
        width = max(len(count.table) for count in report.counts)
        lines = [
            f"{head}: SQLite → PostgreSQL {self.target}",
            "",
            f"{'tabela':<{width}}  {'SQLite':>10}  {'PostgreSQL':>10}",
        ]
        for count in report.counts:
            mark = "" if count.source == count.target else "  ← diferente"
            lines.append(f"{count.table:<{width}}  {count.source:>10}  {count.target:>10}{mark}")
        lines += [
            "",
            f"Linhas: {sum(c.source for c in report.counts)} no SQLite, "
            f"{sum(c.target for c in report.counts)} no PostgreSQL.",
            f"Linhas conferidas coluna por coluna: {report.rows_checked}; "
            f"XML conferidos pelo SHA-256: {report.xml_checked}.",
        ]
        lines += [f"Diferença: {problem}" for problem in report.mismatches[:20]]
        if report.ok:
            lines.append(f"Esta pasta de dados passa a usar o banco do escritório {self.target}.")
        else:
            lines.append(
                "Esta pasta de dados continua no SQLite. Rode a migração de novo para completar a cópia; "
                "se a pasta foi usada durante a cópia, migre para um banco novo, vazio."
            )
        return lines


def _read_marker(path: Path) -> str | None:
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["target"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def migrate_to_office(
    data_dir: Path,
    url_text: str,
    *,
    password: str | None = None,
    progress: Progress | None = None,
    batch_rows: int = BATCH_ROWS,
) -> MigrationSummary:
    """Copy ``data_dir``'s SQLite database to the office server at ``url_text`` (empty, or this
    copy's own when interrupted), verify it, and switch the data folder to it when it agrees."""
    url = parse_office_url(url_text)
    password = (
        password
        or url.password
        or read_secret(office_database.KEYRING_SERVICE, url.keyring_entry, office_database.KEPT)
    )
    source_path = database_path(data_dir)
    if not source_path.is_file():
        raise MigrationRefused(
            f"Não há banco SQLite para migrar em {data_dir} (o arquivo {source_path.name} não existe)."
        )
    lock = DataFolderLock(data_dir, owner="migração do banco para o PostgreSQL")
    try:
        lock.acquire()
    except AlreadyRunning as error:
        who = f" ({error.holder})" if error.holder else ""
        raise MigrationRefused(
            f"O Captura DF-e está usando esta pasta de dados{who}. Feche a janela e pare o serviço de "
            "captura antes de migrar o banco: nada foi copiado."
        ) from None
    try:
        return _copy(data_dir, url, password, progress, batch_rows)
    finally:
        lock.release()


def _copy(
    data_dir: Path, url: OfficeUrl, password: str | None, progress: Progress | None, batch_rows: int
) -> MigrationSummary:
    marker = data_dir / MARKER_NAME
    with open_database(database_path(data_dir)) as source, open_database(url.connect_url(password)) as target:
        resumed = _read_marker(marker) == url.url
        if not resumed:
            busy = holds_rows(target)
            if busy:
                raise MigrationRefused(
                    f"O banco {url.display} não está vazio (tem dados em {', '.join(busy[:5])}). A migração "
                    "copia só para um banco novo, vazio: crie outro banco no servidor e rode de novo."
                )
            marker.write_text(json.dumps({"target": url.url}), encoding="utf-8")
        copy_tables(source, target, batch_rows=batch_rows, progress=progress)
        report = verify(source, target, batch_rows=batch_rows)
    if report.ok:
        office_database.remember(data_dir, url, password)
        marker.unlink(missing_ok=True)
    return MigrationSummary(url.display, resumed, report)
