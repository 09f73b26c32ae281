"""Application settings read from ``<data_dir>/settings.json``.

An absent file means every default; the app never creates it on its own (``save_settings`` writes
it on request, e.g. the sandbox's ``serve`` command). Every key is optional; an unknown key, a
value of the wrong type or malformed JSON is a :class:`SettingsError` naming the file: a typo must
never silently send production traffic to the wrong place.

Format (UTF-8, a BOM is tolerated)::

    {
      "version": 1,
      "log_level": "INFO",                      // DEBUG | INFO | WARNING | ERROR | CRITICAL
      "notifications": true,                    // desktop notifications (new documents, blocks...)
      "archive_retention_days": 365,            // integer, 1..36500
      "call_timeout_seconds": {"nfe": 300, "cte": 300, "nfse": 60},   // each 1..3600
      "icp_brasil_bundle": "icp-brasil.pem",    // trust for the real services; relative = data_dir
      "office_database": "postgresql://captura@servidor:5432/captura",  // absent: the SQLite file
      "endpoints": {
        "homologacao": {                        // or "producao"
          "nfe_distribuicao": {                 // any app.config.endpoints.Service value
            "url": "https://127.0.0.1:8443/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx",
            "ca_bundle": "sandbox/ca.pem"       // optional; relative = relative to data_dir
          }
        }
      }
    }

An endpoint entry needs at least one of ``url`` (https only) and ``ca_bundle``; what it omits
keeps the default (official URL, the ICP-Brasil bundle).

The government servers present ICP-Brasil certificates, which the usual system trust stores do
not carry: the chain (roots and intermediates of the ICP-Brasil hierarchy, published by ITI at
https://www.gov.br/iti/pt-br/assuntos/repositorio, "ACcompactado") goes, concatenated as PEM, into
``<data_dir>/icp-brasil.pem`` (the default of ``icp_brasil_bundle``) or wherever that key says.
Without it the system trust store is used, and the real services will refuse the handshake.

``office_database`` is the office server shared by the workstations (app.config.office_database):
its URL never carries the password, which lives in the OS keyring.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from app.config.endpoints import Service, official_url
from app.config.office_database import OfficeDatabaseError, parse_office_url
from app.core.errors import CapturaError
from app.core.products import Environment, Product

SETTINGS_FILENAME = "settings.json"
DEFAULT_ICP_BUNDLE = "icp-brasil.pem"
FORMAT_VERSION = 1
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class SettingsError(CapturaError):
    """The settings file cannot be used; ``path`` is the file and ``problem`` what is wrong."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"Arquivo de configurações {path}: {problem}")
        self.path = path
        self.problem = problem


@dataclass(frozen=True)
class Endpoint:
    """Where to reach one service: URL and, when not the system trust store, a CA bundle."""

    url: str
    ca_bundle: Path | None = None


@dataclass(frozen=True)
class EndpointOverride:
    """What a settings file changes for one service in one environment (``None`` = default)."""

    url: str | None = None
    ca_bundle: Path | None = None


@dataclass(frozen=True)
class CallTimeouts:
    """Seconds to wait for one government call, per product (distribution replies can be slow)."""

    nfe: float = 300.0
    cte: float = 300.0
    nfse: float = 60.0

    def for_product(self, product: Product) -> float:
        value: float = getattr(self, product.value)
        return value


EndpointKey = tuple[Service, Environment]


@dataclass(frozen=True)
class Settings:
    """Every option with its default, declared once here; load with :func:`load_settings`."""

    log_level: str = "INFO"
    notifications: bool = True
    archive_retention_days: int = 365
    call_timeouts: CallTimeouts = field(default_factory=CallTimeouts)
    icp_brasil_bundle: Path | None = None  # see the module docstring; None = <data_dir>/icp-brasil.pem if present
    endpoint_overrides: Mapping[EndpointKey, EndpointOverride] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    office_database: str | None = None  # the office server's URL, without password; None = SQLite

    def __post_init__(self) -> None:
        # Freeze the mapping too, so a Settings can cross threads safely.
        object.__setattr__(self, "endpoint_overrides", MappingProxyType(dict(self.endpoint_overrides)))

    def endpoint(self, service: Service, environment: Environment) -> Endpoint:
        override = self.endpoint_overrides.get((service, environment), EndpointOverride())
        return Endpoint(url=override.url or official_url(service, environment), ca_bundle=override.ca_bundle)

    def call_timeout(self, service: Service) -> float:
        return self.call_timeouts.for_product(service.product)

    def with_endpoint(
        self,
        service: Service,
        environment: Environment,
        *,
        url: str | None = None,
        ca_bundle: Path | None = None,
    ) -> Settings:
        """A copy pointing one service at ``url``/``ca_bundle`` (both ``None`` = back to default)."""
        overrides = dict(self.endpoint_overrides)
        if url is None and ca_bundle is None:
            overrides.pop((service, environment), None)
        else:
            if url is not None:
                _check_url(url, ValueError)
            overrides[(service, environment)] = EndpointOverride(url=url, ca_bundle=ca_bundle)
        return replace(self, endpoint_overrides=overrides)


def settings_path(data_dir: Path) -> Path:
    return Path(data_dir) / SETTINGS_FILENAME


def load_settings(data_dir: Path) -> Settings:
    """Read ``<data_dir>/settings.json``; absent file = defaults. Raises :class:`SettingsError`."""
    path = settings_path(data_dir)
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        return _Reader(path, Path(data_dir)).settings({})  # defaults, with the ICP bundle if present
    except UnicodeDecodeError:
        raise SettingsError(path, "o arquivo não está em UTF-8.") from None
    except OSError as exc:
        raise SettingsError(path, f"não foi possível ler o arquivo ({exc.strerror or exc}).") from None
    try:
        raw = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        problem = f"JSON inválido na linha {exc.lineno}, coluna {exc.colno} ({exc.msg})."
        raise SettingsError(path, problem) from None
    except ValueError as exc:
        raise SettingsError(path, str(exc)) from None
    return _Reader(path, Path(data_dir)).settings(raw)


def save_settings(data_dir: Path, settings: Settings) -> Path:
    """Write the settings atomically (temp file in the same folder + ``os.replace``); return the path."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = settings_path(data_dir)
    text = json.dumps(settings_to_json(settings), ensure_ascii=False, indent=2) + "\n"
    handle, temp_name = tempfile.mkstemp(prefix=".settings-", suffix=".tmp", dir=data_dir)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
    return path


def settings_to_json(settings: Settings) -> dict[str, Any]:
    """The JSON object ``save_settings`` writes: general options always, endpoints only when overridden.

    Official URLs are not written, so a later version's corrected URL is not pinned by an old file.
    """
    endpoints: dict[str, dict[str, dict[str, str]]] = {}
    for (service, environment), override in sorted(
        settings.endpoint_overrides.items(), key=lambda item: (item[0][1].value, item[0][0].value)
    ):
        entry: dict[str, str] = {}
        if override.url is not None:
            entry["url"] = override.url
        if override.ca_bundle is not None:
            entry["ca_bundle"] = str(override.ca_bundle)
        endpoints.setdefault(environment.key, {})[service.value] = entry
    timeouts = settings.call_timeouts
    return {
        "version": FORMAT_VERSION,
        "log_level": settings.log_level,
        "notifications": settings.notifications,
        "archive_retention_days": settings.archive_retention_days,
        "call_timeout_seconds": {product.value: timeouts.for_product(product) for product in Product},
        **({"icp_brasil_bundle": str(settings.icp_brasil_bundle)} if settings.icp_brasil_bundle else {}),
        **({"office_database": settings.office_database} if settings.office_database else {}),
        "endpoints": endpoints,
    }


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"a chave '{key}' aparece duas vezes.")
        result[key] = value
    return result


def _no_constants(name: str) -> Any:
    raise ValueError(f"valor '{name}' não é permitido em JSON.")


def _check_url(url: str, fail: Callable[[str], Exception]) -> None:
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        raise fail(f"o endereço '{url}' deve ser uma URL https completa (https://servidor/caminho).")
    if parts.query or parts.fragment:
        raise fail(f"o endereço '{url}' não deve ter parâmetros (?…) nem fragmento (#…).")


class _Reader:
    """Validates the decoded JSON, building messages that name the exact key at fault."""

    def __init__(self, path: Path, data_dir: Path) -> None:
        self.path = path
        self.data_dir = data_dir

    def fail(self, problem: str) -> SettingsError:
        return SettingsError(self.path, problem)

    def settings(self, raw: Any) -> Settings:
        obj = self.object(raw, "o conteúdo")
        self.only_keys(
            obj,
            "",
            {
                "version",
                "log_level",
                "notifications",
                "archive_retention_days",
                "call_timeout_seconds",
                "icp_brasil_bundle",
                "office_database",
                "endpoints",
            },
        )
        defaults = Settings()
        if "version" in obj and (type(obj["version"]) is not int or obj["version"] != FORMAT_VERSION):
            raise self.fail(f"'version' deve ser {FORMAT_VERSION} (encontrado {obj['version']!r}).")
        log_level = defaults.log_level
        if "log_level" in obj:
            value = obj["log_level"]
            if not isinstance(value, str) or value.upper() not in LOG_LEVELS:
                raise self.fail(f"'log_level' deve ser um de {', '.join(LOG_LEVELS)} (encontrado {value!r}).")
            log_level = value.upper()
        notifications = defaults.notifications
        if "notifications" in obj:
            if type(obj["notifications"]) is not bool:
                raise self.fail(f"'notifications' deve ser true ou false (encontrado {obj['notifications']!r}).")
            notifications = obj["notifications"]
        retention = defaults.archive_retention_days
        if "archive_retention_days" in obj:
            retention = self.integer(obj["archive_retention_days"], "archive_retention_days", 1, 36500)
        timeouts = defaults.call_timeouts
        if "call_timeout_seconds" in obj:
            timeouts = self.timeouts(obj["call_timeout_seconds"])
        overrides = self.endpoints(obj["endpoints"]) if "endpoints" in obj else {}
        bundle: Path | None = None
        if "icp_brasil_bundle" in obj:
            value = obj["icp_brasil_bundle"]
            if not isinstance(value, str) or not value:
                raise self.fail("'icp_brasil_bundle' deve ser o caminho da cadeia ICP-Brasil (.p7b, .zip, .pem, .crt).")
            bundle = Path(value) if Path(value).is_absolute() else self.data_dir / value
        elif (self.data_dir / DEFAULT_ICP_BUNDLE).is_file():
            bundle = self.data_dir / DEFAULT_ICP_BUNDLE
        office_database = None
        if "office_database" in obj:
            office_database = self.office_database(obj["office_database"])
        return Settings(
            log_level=log_level,
            notifications=notifications,
            archive_retention_days=retention,
            call_timeouts=timeouts,
            icp_brasil_bundle=bundle,
            endpoint_overrides=overrides,
            office_database=office_database,
        )

    def office_database(self, value: Any) -> str:
        if not isinstance(value, str):
            raise self.fail("'office_database' deve ser o endereço do banco do escritório (texto).")
        try:
            parsed = parse_office_url(value)
        except OfficeDatabaseError as error:
            raise self.fail(f"'office_database': {error.message}") from None
        if parsed.password is not None:
            raise self.fail("'office_database' não pode conter a senha: ela fica no cofre de senhas do sistema.")
        return parsed.url

    def object(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{where} deve ser um objeto JSON {{…}}.")
        return value

    def only_keys(self, obj: dict[str, Any], where: str, allowed: set[str]) -> None:
        unknown = sorted(set(obj) - allowed)
        if unknown:
            place = f" em '{where}'" if where else ""
            raise self.fail(f"chave desconhecida{place}: '{unknown[0]}'. Chaves aceitas: {', '.join(sorted(allowed))}.")

    def integer(self, value: Any, where: str, low: int, high: int) -> int:
        if type(value) is not int or not low <= value <= high:
            raise self.fail(f"'{where}' deve ser um número inteiro de {low} a {high} (encontrado {value!r}).")
        return value

    def timeouts(self, raw: Any) -> CallTimeouts:
        obj = self.object(raw, "'call_timeout_seconds'")
        self.only_keys(obj, "call_timeout_seconds", {product.value for product in Product})
        values: dict[str, float] = {}
        for key, value in obj.items():
            if type(value) not in (int, float) or not 1 <= value <= 3600:
                raise self.fail(
                    f"'call_timeout_seconds.{key}' deve ser um número de 1 a 3600 segundos (encontrado {value!r})."
                )
            values[key] = float(value)
        return CallTimeouts(**values)

    def endpoints(self, raw: Any) -> dict[EndpointKey, EndpointOverride]:
        obj = self.object(raw, "'endpoints'")
        self.only_keys(obj, "endpoints", {environment.key for environment in Environment})
        overrides: dict[EndpointKey, EndpointOverride] = {}
        for env_key, services_raw in obj.items():
            environment = Environment.from_key(env_key)
            services = self.object(services_raw, f"'endpoints.{env_key}'")
            self.only_keys(services, f"endpoints.{env_key}", {service.value for service in Service})
            for service_key, entry_raw in services.items():
                where = f"endpoints.{env_key}.{service_key}"
                overrides[(Service(service_key), environment)] = self.endpoint(entry_raw, where)
        return overrides

    def endpoint(self, raw: Any, where: str) -> EndpointOverride:
        entry = self.object(raw, f"'{where}'")
        self.only_keys(entry, where, {"url", "ca_bundle"})
        if not entry:
            raise self.fail(f"'{where}' deve ter 'url' e/ou 'ca_bundle'.")
        url = entry.get("url")
        if url is not None:
            if not isinstance(url, str):
                raise self.fail(f"'{where}.url' deve ser um texto.")
            _check_url(url, lambda problem: self.fail(f"'{where}.url': {problem}"))
        ca_bundle: Path | None = None
        if "ca_bundle" in entry:
            value = entry["ca_bundle"]
            if not isinstance(value, str) or not value.strip():
                raise self.fail(f"'{where}.ca_bundle' deve ser o caminho de um arquivo (texto).")
            ca_bundle = Path(value)
            if not ca_bundle.is_absolute():
                ca_bundle = self.data_dir / ca_bundle
        return EndpointOverride(url=url, ca_bundle=ca_bundle)
