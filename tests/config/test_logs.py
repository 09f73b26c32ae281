from __future__ import annotations

import base64
import logging
import secrets
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from app.config import logs
from app.config.logs import log_file, redact, setup_logging, shutdown_logging
from app.core.clock import BRASILIA


@pytest.fixture
def logged(tmp_path: Path) -> Iterator[Path]:
    path = setup_logging(tmp_path / "dados", level="DEBUG")
    try:
        yield path
    finally:
        shutdown_logging()


def _flush() -> None:
    for handler in logging.getLogger().handlers:
        handler.flush()


def _key_pem() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def test_file_is_in_the_data_folder_with_time_level_thread_and_logger(logged: Path, tmp_path: Path) -> None:
    assert logged == log_file(tmp_path / "dados") == tmp_path / "dados" / "logs" / "captura.log"
    logging.getLogger("app.capture.teste").info("consulta de %s", "11222333000181")
    _flush()
    line = logged.read_text(encoding="utf-8").strip()
    assert "INFO" in line and "[MainThread]" in line and "app.capture.teste" in line
    assert line.endswith("consulta de 11222333000181")
    assert line[:4].isdigit()  # starts with the date


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="changing the process's zone needs time.tzset (POSIX)")
def test_log_times_are_brasilia_whatever_the_system_zone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The messages say Brasília times ("Aguardando até 14:05"): the stamp beside them must too.
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        path = setup_logging(tmp_path / "dados")
        before = datetime.now(BRASILIA).replace(microsecond=0)
        logging.getLogger("app.capture.teste").info("Aguardando até as 14:05")
        _flush()
        after = datetime.now(BRASILIA)
        shutdown_logging()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    stamp = path.read_text(encoding="utf-8").split(" INFO")[0]
    assert stamp.endswith("-03:00"), stamp
    shown = datetime.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S").replace(tzinfo=BRASILIA)
    assert before <= shown <= after


def test_private_key_and_password_never_reach_the_file(logged: Path) -> None:
    pem = _key_pem()
    body = b"".join(pem.splitlines()[1:-1])
    log = logging.getLogger("app.certs.teste")
    log.warning("certificado carregado: %s", pem.decode())
    log.info("login password=%s usuario=joao", "s3nh@-super")
    log.info("Senha: 'minha senha'")
    log.error("dados crus %s", base64.b64encode(secrets.token_bytes(600)).decode())
    try:
        raise ValueError(f"falhou com senha=abc123 e chave {pem.decode()}")
    except ValueError:
        log.exception("erro ao abrir")
    _flush()
    content = logged.read_bytes()
    assert b"PRIVATE KEY" not in content
    assert body[:40] not in content and body[-40:] not in content
    assert b"s3nh@-super" not in content and b"abc123" not in content and b"minha senha" not in content
    text = content.decode("utf-8")
    assert text.count("[chave privada omitida]") == 2
    assert "password=***" in text and "usuario=joao" in text
    assert "caracteres base64 omitidos]" in text
    assert "Traceback" in text and "ValueError" in text  # the traceback is kept, only redacted


def test_ordinary_identifiers_are_left_alone() -> None:
    key = "35261199888777000100550010000000011000000010"
    sha = "ab" * 32
    path = "/home/usuario/documentos/escritorio/clientes/empresa/arquivos/notas/recebidas/xml"
    text = f"chave {key} sha256 {sha} NSU 000000000000123 em {path}"
    assert redact(text) == text


def test_rotation_keeps_a_bounded_number_of_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logs, "MAX_BYTES", 2_000)
    monkeypatch.setattr(logs, "BACKUP_COUNT", 2)
    path = setup_logging(tmp_path / "dados")
    try:
        log = logging.getLogger("app.teste")
        for index in range(200):
            log.info("linha %03d %s", index, "x" * 50)
        _flush()
    finally:
        shutdown_logging()
    files = sorted(p.name for p in path.parent.iterdir())
    assert files == ["captura.log", "captura.log.1", "captura.log.2"]
    assert all(p.stat().st_size <= 2_000 for p in path.parent.iterdir())
    assert "linha 199" in path.read_text(encoding="utf-8")


def test_setup_twice_replaces_the_handlers(tmp_path: Path) -> None:
    root = logging.getLogger()
    before = len(root.handlers)
    setup_logging(tmp_path / "a")
    second = setup_logging(tmp_path / "b", console=True)
    try:
        assert len(root.handlers) == before + 2
        logging.getLogger("app").warning("para b")
        _flush()
        assert "para b" in second.read_text(encoding="utf-8")
        assert not log_file(tmp_path / "a").exists() or "para b" not in log_file(tmp_path / "a").read_text()
    finally:
        shutdown_logging()
    assert len(root.handlers) == before
