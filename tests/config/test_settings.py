"""settings.json: defaults, overrides, strict refusal of mistakes, atomic round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.config.endpoints import Service, official_url
from app.config.settings import (
    SETTINGS_FILENAME,
    CallTimeouts,
    Endpoint,
    Settings,
    SettingsError,
    load_settings,
    save_settings,
)
from app.core.errors import CapturaError
from app.core.products import Environment, Product

SANDBOX_URL = "https://127.0.0.1:8443/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx"


def _write(data_dir: Path, content: Any) -> Path:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SETTINGS_FILENAME
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def _error(data_dir: Path, content: Any) -> SettingsError:
    path = _write(data_dir, content)
    with pytest.raises(SettingsError) as info:
        load_settings(data_dir)
    assert isinstance(info.value, CapturaError)
    assert info.value.path == path
    assert str(path) in info.value.message
    return info.value


def test_absent_file_gives_defaults_and_writes_nothing(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    assert settings == Settings()
    assert list(tmp_path.iterdir()) == []
    assert settings.log_level == "INFO"
    assert settings.archive_retention_days == 365
    assert settings.call_timeout(Service.NFE_DISTRIBUICAO) == 300
    assert settings.call_timeout(Service.CTE_DISTRIBUICAO) == 300
    assert settings.call_timeout(Service.NFSE_ADN_CONTRIBUINTES) == 60


def test_defaults_are_the_official_urls() -> None:
    settings = Settings()
    for service in Service:
        for environment in Environment:
            expected = Endpoint(official_url(service, environment), None)
            assert settings.endpoint(service, environment) == expected


def test_override_changes_one_url_and_ca(tmp_path: Path) -> None:
    entry = {"url": SANDBOX_URL, "ca_bundle": "sandbox/ca.pem"}
    _write(tmp_path, {"endpoints": {"homologacao": {"nfe_distribuicao": entry}}})
    settings = load_settings(tmp_path)
    assert settings.endpoint(Service.NFE_DISTRIBUICAO, Environment.HOMOLOGACAO) == Endpoint(
        SANDBOX_URL, tmp_path / "sandbox" / "ca.pem"
    )
    # Everything else untouched: the same service in production and every other service.
    assert settings.endpoint(Service.NFE_DISTRIBUICAO, Environment.PRODUCAO) == Endpoint(
        official_url(Service.NFE_DISTRIBUICAO, Environment.PRODUCAO)
    )
    for service in Service:
        if service is not Service.NFE_DISTRIBUICAO:
            assert settings.endpoint(service, Environment.HOMOLOGACAO).url == official_url(
                service, Environment.HOMOLOGACAO
            )


def test_ca_only_override_keeps_the_official_url(tmp_path: Path) -> None:
    ca = tmp_path / "corp-proxy-ca.pem"
    _write(tmp_path, {"endpoints": {"producao": {"nfse_sefin": {"ca_bundle": str(ca)}}}})
    endpoint = load_settings(tmp_path).endpoint(Service.NFSE_SEFIN, Environment.PRODUCAO)
    assert endpoint == Endpoint(official_url(Service.NFSE_SEFIN, Environment.PRODUCAO), ca)


def test_general_options(tmp_path: Path) -> None:
    options = {"log_level": "debug", "archive_retention_days": 30, "call_timeout_seconds": {"nfse": 90}}
    _write(tmp_path, {"version": 1, **options})
    settings = load_settings(tmp_path)
    assert settings.log_level == "DEBUG"
    assert settings.archive_retention_days == 30
    assert settings.call_timeouts == CallTimeouts(nfe=300, cte=300, nfse=90)
    assert settings.call_timeout(Service.NFSE_SEFIN) == 90
    assert settings.call_timeouts.for_product(Product.NFE) == 300


def test_bom_is_tolerated(tmp_path: Path) -> None:
    tmp_path.joinpath(SETTINGS_FILENAME).write_bytes(b'\xef\xbb\xbf{"log_level": "WARNING"}')
    assert load_settings(tmp_path).log_level == "WARNING"


def test_bad_json_names_file_and_position(tmp_path: Path) -> None:
    error = _error(tmp_path, '{"log_level": "INFO",\n "endpoints": }')
    assert "JSON inválido" in error.message
    assert "linha 2" in error.message


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ({"endpoints": {"homologacao": {"nfe_distribuicao_x": {"url": SANDBOX_URL}}}}, "nfe_distribuicao_x"),
        ({"endpoints": {"teste": {}}}, "'teste'"),
        ({"endpoints": {"producao": {"nfse_sefin": {"url": SANDBOX_URL, "verify": False}}}}, "'verify'"),
        ({"log_levle": "INFO"}, "'log_levle'"),
        ({"call_timeout_seconds": {"mdfe": 10}}, "'mdfe'"),
    ],
)
def test_unknown_keys_are_refused(tmp_path: Path, content: Any, fragment: str) -> None:
    error = _error(tmp_path, content)
    assert "chave desconhecida" in error.message
    assert fragment in error.message


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("[1, 2]", "objeto"),
        ({"log_level": "VERBOSE"}, "log_level"),
        ({"archive_retention_days": "365"}, "archive_retention_days"),
        ({"archive_retention_days": 0}, "archive_retention_days"),
        ({"archive_retention_days": True}, "archive_retention_days"),
        ({"call_timeout_seconds": {"nfe": -1}}, "call_timeout_seconds.nfe"),
        ({"version": 2}, "version"),
        ({"endpoints": {"homologacao": {"nfe_distribuicao": {"url": "http://insecure/x"}}}}, "https"),
        ({"endpoints": {"homologacao": {"nfe_distribuicao": {"url": 42}}}}, "url"),
        ({"endpoints": {"homologacao": {"nfe_distribuicao": {}}}}, "nfe_distribuicao"),
        ({"endpoints": {"homologacao": {"nfe_distribuicao": {"ca_bundle": ""}}}}, "ca_bundle"),
        ({"endpoints": {"homologacao": []}}, "endpoints.homologacao"),
        ('{"log_level": "INFO", "log_level": "DEBUG"}', "duas vezes"),
        ('{"archive_retention_days": NaN}', "NaN"),
    ],
)
def test_bad_values_are_refused(tmp_path: Path, content: Any, fragment: str) -> None:
    assert fragment in _error(tmp_path, content).message


def test_not_utf8_is_refused(tmp_path: Path) -> None:
    tmp_path.joinpath(SETTINGS_FILENAME).write_bytes('{"log_level": "INFO", "x": "ação"}'.encode("latin-1"))
    with pytest.raises(SettingsError) as info:
        load_settings(tmp_path)
    assert "UTF-8" in info.value.message


def test_round_trip(tmp_path: Path) -> None:
    hom = Environment.HOMOLOGACAO
    original = (
        Settings(log_level="WARNING", archive_retention_days=90, call_timeouts=CallTimeouts(nfse=45))
        .with_endpoint(Service.NFE_DISTRIBUICAO, hom, url=SANDBOX_URL, ca_bundle=tmp_path / "ca.pem")
        .with_endpoint(Service.NFSE_ADN_CONTRIBUINTES, hom, url="https://127.0.0.1:9443/contribuintes")
    )
    data_dir = tmp_path / "new" / "data"
    path = save_settings(data_dir, original)
    assert path == data_dir / SETTINGS_FILENAME
    assert load_settings(data_dir) == original
    written = json.loads(path.read_text(encoding="utf-8"))
    # Official URLs are not pinned in the file; only the overrides are.
    assert set(written["endpoints"]["homologacao"]) == {"nfe_distribuicao", "nfse_adn_contribuintes"}
    assert "producao" not in written["endpoints"]
    assert [p.name for p in data_dir.iterdir()] == [SETTINGS_FILENAME]  # no temp file left behind


def test_save_replaces_existing_file(tmp_path: Path) -> None:
    save_settings(tmp_path, Settings(log_level="ERROR"))
    save_settings(tmp_path, Settings(log_level="DEBUG"))
    assert load_settings(tmp_path).log_level == "DEBUG"
    assert [p.name for p in tmp_path.iterdir()] == [SETTINGS_FILENAME]


def test_with_endpoint_resets_and_validates() -> None:
    changed = Settings().with_endpoint(Service.CTE_DISTRIBUICAO, Environment.PRODUCAO, url="https://proxy.local/cte")
    assert changed.endpoint(Service.CTE_DISTRIBUICAO, Environment.PRODUCAO).url == "https://proxy.local/cte"
    back = changed.with_endpoint(Service.CTE_DISTRIBUICAO, Environment.PRODUCAO)
    assert back == Settings()
    with pytest.raises(ValueError):
        Settings().with_endpoint(Service.CTE_DISTRIBUICAO, Environment.PRODUCAO, url="ftp://x/y")


def test_settings_is_immutable() -> None:
    settings = Settings().with_endpoint(Service.NFSE_SEFIN, Environment.PRODUCAO, url="https://x.local/s")
    with pytest.raises(TypeError):
        settings.endpoint_overrides[(Service.NFSE_SEFIN, Environment.HOMOLOGACAO)] = None  # type: ignore[index]
    assert hash(settings) == hash(Settings(endpoint_overrides=dict(settings.endpoint_overrides)))


def test_icp_brasil_bundle_defaults_to_the_data_folder_file(tmp_path: Path) -> None:
    assert load_settings(tmp_path).icp_brasil_bundle is None
    (tmp_path / "icp-brasil.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    assert load_settings(tmp_path).icp_brasil_bundle == tmp_path / "icp-brasil.pem"
    (tmp_path / "settings.json").write_text('{"icp_brasil_bundle": "cadeias/icp.pem"}', encoding="utf-8")
    loaded = load_settings(tmp_path)
    assert loaded.icp_brasil_bundle == tmp_path / "cadeias" / "icp.pem"
    save_settings(tmp_path, loaded)
    assert load_settings(tmp_path).icp_brasil_bundle == tmp_path / "cadeias" / "icp.pem"
    (tmp_path / "settings.json").write_text('{"icp_brasil_bundle": 7}', encoding="utf-8")
    with pytest.raises(SettingsError, match="icp_brasil_bundle"):
        load_settings(tmp_path)
