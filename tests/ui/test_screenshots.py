"""Every screen a clerk works in, rendered to PNG on a virtual X server (the xcb platform, as on a
desktop) for a person to look at; the run's summary names the folder: the grids, the detail and
its DANFE, the dialogs, the capture dashboard, the settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from tests.conftest import show_artifacts
from tests.support.xvfb import run_under_xvfb

SCRIPT = Path(__file__).with_name("screenshots.py")
EXPECTED = (
    "01-janela-nfe",
    "02-janela-detalhe",
    "05-visualizacao-danfe",
    "06-janela-cte",
    "07-manifestacao-210240",
    "09-quarentena",
    "10-painel-captura",
    "10-painel-documentos-por-mes",
    "11-empresa-nova-certificado",
    "11-empresa-senha-errada",
    "12-empresa-editar",
    "13-configuracoes",
    "14-perfis-exportacao",
)


def _not_blank(path: Path) -> bool:
    image = QImage(str(path))
    if image.isNull() or image.width() < 300 or image.height() < 200:
        return False
    colours = {image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(0, image.height(), 29)}
    return len(colours) > 5


def test_every_screen_renders_under_xvfb(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = show_artifacts("Telas da janela (Xvfb)", tmp_path_factory.mktemp("telas"))
    shot = run_under_xvfb([str(SCRIPT), str(folder)])
    assert shot.returncode == 0, shot.stderr[-3000:]
    for name in EXPECTED:
        path = folder / f"{name}.png"
        assert path.is_file(), name
        assert _not_blank(path), f"{name} está vazia"
