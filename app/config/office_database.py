"""The office database's address: a PostgreSQL server every workstation of the office shares.

Given as ``--database URL`` (or ``CAPTURA_DATABASE``), or in Configurações, and remembered in the
data folder's ``settings.json`` as ``office_database`` *without* its password: the password goes to
the OS keyring (app.desk.office_database), never to a file or a log. ``sqlite`` (or ``local``)
instead of a URL goes back to the data folder's own SQLite file.

Accepted: ``postgresql://usuario[:senha]@servidor[:porta]/banco[?sslmode=…&sslrootcert=…]``
(``postgresql+psycopg://`` and ``postgres://`` too). TLS: libpq's default ``sslmode=prefer`` uses
it when the server offers it; ``require``/``verify-full`` insist on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from app.core.errors import CapturaError

ENV_DATABASE = "CAPTURA_DATABASE"
DEFAULT_PORT = 5432
LOCAL_WORDS = ("sqlite", "local")  # --database sqlite: back to the data folder's own file
_SCHEMES = ("postgresql", "postgresql+psycopg", "postgres")
_SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
_OPTIONS = ("sslmode", "sslrootcert", "connect_timeout")


class OfficeDatabaseError(CapturaError):
    """The office database's address cannot be used as written."""


@dataclass(frozen=True, slots=True)
class OfficeUrl:
    """One office server's database; ``password`` only while it travels to the keyring."""

    host: str
    port: int
    database: str
    user: str
    password: str | None = None
    options: tuple[tuple[str, str], ...] = ()

    @property
    def url(self) -> str:
        """The address as remembered and shown: without the password."""
        return self._url("postgresql", None)

    def connect_url(self, password: str | None) -> str:
        """What the store opens (SQLAlchemy with psycopg), the password included: in memory only."""
        return self._url("postgresql+psycopg", password)

    @property
    def sslmode(self) -> str:
        """libpq's TLS mode asked for (``prefer``, its default, when the address names none)."""
        return dict(self.options).get("sslmode", "prefer")

    @property
    def display(self) -> str:
        return f"{self.user}@{self.host}:{self.port}/{self.database}"

    @property
    def keyring_entry(self) -> str:
        """The keyring's name for this server's password (one per user, server and database)."""
        return f"office-db:{self.display}"

    def _url(self, scheme: str, password: str | None) -> str:
        secret = f":{quote(password, safe='')}" if password else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = f"?{urlencode(self.options)}" if self.options else ""
        return (
            f"{scheme}://{quote(self.user, safe='')}{secret}@{host}:{self.port}/{quote(self.database, safe='')}{query}"
        )


def is_local_choice(text: str) -> bool:
    return text.strip().lower() in LOCAL_WORDS


def parse_office_url(text: str) -> OfficeUrl:
    """``text`` as an :class:`OfficeUrl`, or a Portuguese sentence saying what is wrong with it."""
    text = text.strip()
    example = "Use postgresql://usuario@servidor:5432/banco."
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise OfficeDatabaseError(f"Endereço do banco do escritório inválido: {_hidden(text)!r}. {example}") from None
    if parts.scheme not in _SCHEMES:
        raise OfficeDatabaseError(
            f"O banco do escritório é um PostgreSQL: o endereço começa com postgresql:// ({_hidden(text)!r}). {example}"
        )
    if not parts.hostname:
        raise OfficeDatabaseError(f"Falta o servidor no endereço do banco do escritório. {example}")
    database = unquote(parts.path.lstrip("/"))
    if not database or "/" in database:
        raise OfficeDatabaseError(f"Falta o nome do banco no endereço do banco do escritório. {example}")
    if not parts.username:
        raise OfficeDatabaseError(f"Falta o usuário no endereço do banco do escritório. {example}")
    options = tuple(parse_qsl(parts.query, keep_blank_values=True))
    for name, value in options:
        if name not in _OPTIONS:
            raise OfficeDatabaseError(
                f"Opção desconhecida no endereço do banco do escritório: {name!r}. Aceitas: {', '.join(_OPTIONS)}."
            )
        if name == "sslmode" and value not in _SSL_MODES:
            raise OfficeDatabaseError(f"sslmode inválido: {value!r}. Use um de: {', '.join(_SSL_MODES)}.")
    return OfficeUrl(
        host=parts.hostname,
        port=port or DEFAULT_PORT,
        database=database,
        user=unquote(parts.username),
        password=unquote(parts.password) if parts.password is not None else None,
        options=options,
    )


def _hidden(text: str) -> str:
    """``text`` with a password in it replaced by asterisks: an error message never shows it."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return "(endereço ilegível)"
    if parts.password is None:
        return text
    return text.replace(f":{parts.password}@", ":***@", 1)
