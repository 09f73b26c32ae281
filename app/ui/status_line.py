"""The window's status bar: the data folder and version, the count of the grid shown, who captures.

Notices (a copied key, an error) show beside the folder and expire; the count and the capture's
state stay at the right.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from app import __version__


class StatusLine(QStatusBar):
    """``folder_label``, ``count_label`` and ``capture_label``, as the window fills them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.folder_label = QLabel(self)
        self.folder_label.setObjectName("data-folder")
        self.addWidget(self.folder_label)  # stays: notices show beside it and expire
        self.capture_label = QLabel(self)
        self.count_label = QLabel(self)  # wide enough for millions: no relayout squeezing it as counts change
        self.count_label.setMinimumWidth(self.count_label.fontMetrics().horizontalAdvance("9.999.999 documentos"))
        self.addPermanentWidget(self.count_label)
        self.addPermanentWidget(self.capture_label)

    def show_opened(self, data_dir: Path, *, read_only: bool, holder: str | None, capturing: bool) -> None:
        """The data folder just opened: where it is, and whether this window captures."""
        if read_only:
            held = f" ({holder})" if holder else ""
            self.capture_label.setText(f"Somente leitura: outra instância captura nesta pasta{held}")
            self.capture_label.setStyleSheet("color: #8a5300; font-weight: bold;")
        elif capturing:
            self.capture_label.setText("Captura em segundo plano ligada")
        else:
            self.capture_label.setText("Captura desligada nesta janela")
        self.clearMessage()
        self.folder_label.setText(f"Pasta de dados: {data_dir}   ·   versão {__version__}")
