"""Every screen a clerk works in, rendered to PNG for a person to look at (the run's summary names
the folder): the grids, the detail, the dialogs, the dashboard, the settings."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtGui import QImage

from tests.conftest import show_artifacts
from tests.ui import screenshots

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
)


def _not_blank(path: Path) -> bool:
    image = QImage(str(path))
    if image.isNull() or image.width() < 300 or image.height() < 200:
        return False
    colours = {image.pixel(x, y) for x in range(0, image.width(), 37) for y in range(0, image.height(), 29)}
    return len(colours) > 5


def test_every_screen_renders(tmp_path_factory, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = show_artifacts("Telas da janela", tmp_path_factory.mktemp("telas"))
    monkeypatch.setattr(sys, "argv", ["screenshots.py", str(folder)])
    assert screenshots.main() == 0
    for name in EXPECTED:
        path = folder / f"{name}.png"
        assert path.is_file(), name
        assert _not_blank(path), f"{name} está vazia"
