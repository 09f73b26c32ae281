from __future__ import annotations

from pathlib import Path

import pytest

from app.config.paths import ENV_DATA_DIR, default_data_dir, resolve_data_dir


def test_command_line_wins_over_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_DATA_DIR, str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "cli") == (tmp_path / "cli").resolve()
    assert resolve_data_dir(None) == (tmp_path / "env").resolve()


def test_default_is_the_per_user_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_DATA_DIR, raising=False)
    assert resolve_data_dir(None) == default_data_dir().resolve()
    assert default_data_dir().name == "CapturaDFe"


def test_demo_never_shares_the_real_folder(tmp_path: Path) -> None:
    real = resolve_data_dir(tmp_path / "dados")
    demo = resolve_data_dir(tmp_path / "dados", demo=True)
    assert demo != real and demo.name == "dados-demo"
    assert real not in demo.parents
