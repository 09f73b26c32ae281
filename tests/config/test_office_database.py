"""The office database's address: parsed, shown and remembered without its password."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config.office_database import OfficeDatabaseError, is_local_choice, parse_office_url
from app.config.settings import SettingsError, load_settings


def test_an_address_splits_into_server_database_user_and_a_password_kept_apart() -> None:
    url = parse_office_url("postgresql://joana:p%40ss%3Aword@servidor.escritorio:6543/captura?sslmode=require")
    assert (url.host, url.port, url.database, url.user, url.password) == (
        "servidor.escritorio", 6543, "captura", "joana", "p@ss:word",
    )  # fmt: skip
    assert url.url == "postgresql://joana@servidor.escritorio:6543/captura?sslmode=require"  # never the password
    assert url.connect_url("p@ss:word") == (
        "postgresql+psycopg://joana:p%40ss%3Aword@servidor.escritorio:6543/captura?sslmode=require"
    )
    assert url.keyring_entry == "office-db:joana@servidor.escritorio:6543/captura"
    assert parse_office_url("postgres://joana@servidor/captura").port == 5432
    assert is_local_choice(" SQLite ") and is_local_choice("local") and not is_local_choice("postgresql://x")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("mysql://joana@servidor/captura", "começa com postgresql://"),
        ("postgresql://joana@/captura", "Falta o servidor"),
        ("postgresql://joana@servidor/", "Falta o nome do banco"),
        ("postgresql://servidor/captura", "Falta o usuário"),
        ("postgresql://joana@servidor/captura?sslmode=sempre", "sslmode inválido"),
        ("postgresql://joana@servidor/captura?application_name=x", "Opção desconhecida"),
        ("postgresql://joana@servidor:porta/captura", "inválido"),
    ],
)
def test_a_wrong_address_says_what_is_missing_in_portuguese(text: str, says: str) -> None:
    with pytest.raises(OfficeDatabaseError, match=says):
        parse_office_url(text)


def test_an_error_never_repeats_the_password() -> None:
    with pytest.raises(OfficeDatabaseError) as caught:
        parse_office_url("mysql://joana:segredo@servidor/captura")
    assert "segredo" not in caught.value.message and "***" in caught.value.message


def test_settings_keep_the_address_and_refuse_one_with_a_password(tmp_path: Path) -> None:
    (tmp_path / "settings.json").write_text('{"office_database": "postgresql://joana@servidor/captura"}')
    assert load_settings(tmp_path).office_database == "postgresql://joana@servidor:5432/captura"
    (tmp_path / "settings.json").write_text('{"office_database": "postgresql://joana:segredo@servidor/captura"}')
    with pytest.raises(SettingsError, match="não pode conter a senha"):
        load_settings(tmp_path)
