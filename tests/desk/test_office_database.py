"""'Testar conexão' against a real PostgreSQL: what the workstation will find, or what is wrong."""

from __future__ import annotations

import pytest

from app.config.office_database import OfficeUrl, parse_office_url
from app.desk import office_database
from app.store.db import open_database
from app.store.probe import OfficeConnectionFailed
from tests.support.postgres import PostgresCluster, free_port


def _url(cluster: PostgresCluster, database: str, **options: str) -> OfficeUrl:
    query = "&".join(f"{k}={v}" for k, v in options.items())
    return parse_office_url(
        f"postgresql://captura@127.0.0.1:{cluster.port}/{database}" + (f"?{query}" if query else "")
    )


def test_an_empty_database_a_ready_one_and_one_too_new_are_told_apart(postgres_cluster: PostgresCluster) -> None:
    name = postgres_cluster.name_of(postgres_cluster.new_database())
    url = _url(postgres_cluster, name)
    assert office_database.test_connection(url, None).endswith(
        "O banco está vazio: as tabelas são criadas na primeira abertura."
    )
    open_database(url.connect_url(None)).close()
    said = office_database.test_connection(url, None)
    assert said.startswith(f"Conectado a captura@127.0.0.1:{postgres_cluster.port}/{name} (PostgreSQL ")
    assert said.endswith("O banco está pronto para uso.")
    with open_database(url.connect_url(None)) as db, db.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE alembic_version SET version_num = '0099'")
        connection.exec_driver_sql("INSERT INTO schema_versions VALUES ('0099', '3.1.0', now())")
    with pytest.raises(OfficeConnectionFailed, match=r"instale a versão 3\.1\.0 nesta estação"):
        office_database.test_connection(url, None)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ("no database", "o banco informado não existe nesse servidor"),
        ("no server", "nenhum PostgreSQL respondeu nesse servidor e porta"),
        ("tls required", "a conexão pede TLS (criptografia) e o servidor não oferece"),
        ("no user", "o usuário informado não existe nesse servidor"),
    ],
)
def test_what_is_wrong_is_said_in_portuguese(postgres_cluster: PostgresCluster, change: str, says: str) -> None:
    url = _url(postgres_cluster, "postgres")
    if change == "no database":
        url = _url(postgres_cluster, "nao_existe")
    elif change == "no server":
        url = parse_office_url(f"postgresql://captura@127.0.0.1:{free_port()}/postgres")
    elif change == "tls required":  # the test server offers no TLS
        url = _url(postgres_cluster, "postgres", sslmode="require")
    else:
        url = parse_office_url(f"postgresql://ninguem@127.0.0.1:{postgres_cluster.port}/postgres")
    with pytest.raises(OfficeConnectionFailed) as caught:
        office_database.test_connection(url, "senha")
    assert caught.value.message.startswith(f"Não foi possível conectar a {url.display}: ")
    assert says in caught.value.message and "senha@" not in caught.value.message
