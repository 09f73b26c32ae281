from __future__ import annotations

import sqlite3

import pytest

from app.core.errors import CapturaError
from app.store.db import open_database
from app.store.errors import StorageBug, StorageUnavailable, translate_errors


def _error(message: str, code: int) -> sqlite3.OperationalError:
    error = sqlite3.OperationalError(message)
    error.sqlite_errorcode = code
    return error


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (13, "disco está cheio"),
        (5, "ocupado"),
        (8, "somente leitura"),
        (10 | (3 << 8), "disco"),
        (26, "não é"),
    ],
)
def test_environment_errors_become_storage_unavailable_in_portuguese(code: int, words: str) -> None:
    with pytest.raises(StorageUnavailable) as caught, translate_errors(None):
        raise _error("boom", code)
    assert words in caught.value.message
    assert caught.value.sqlite_code == code & 0xFF
    assert isinstance(caught.value, CapturaError)


def test_program_errors_become_storage_bug() -> None:
    with pytest.raises(StorageBug), translate_errors(None):
        raise _error('near "SELEC": syntax error', 1)


def test_errors_of_our_own_tree_pass_through() -> None:
    with pytest.raises(StorageUnavailable, match="já"), translate_errors(None):
        raise StorageUnavailable("já traduzido")


def test_os_errors_are_environment_errors() -> None:
    with pytest.raises(StorageUnavailable, match="Permission"), translate_errors(None):
        raise PermissionError(13, "Permission denied")


def test_an_office_server_out_of_reach_is_an_environment_error_in_portuguese() -> None:
    from tests.support.postgres import free_port

    url = f"postgresql+psycopg://captura@127.0.0.1:{free_port()}/captura"  # nobody listens there
    with pytest.raises(StorageUnavailable) as caught:
        open_database(url)
    assert caught.value.message.startswith("Sem conexão com o banco do escritório:")
