"""The window's status bar: the data folder and version, the count of the grid shown, who captures.

Notices (a copied key, an error) show beside the folder and expire; the count and the capture's
state stay at the right. On an office database, the connection's state too: while the server is
away, a red "Sem conexão com o banco do escritório" stays in the bar and the window's banner says
that what is on screen stays (the grids are not cleared) and comes up to date by itself; the
errors of the reads that fail meanwhile are not repeated beside it.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar, QWidget

from app import __version__
from app.desk.views import OFFICE_BACK, OFFICE_LOST

OFFLINE = "Sem conexão com o banco do escritório"


class StatusLine(QStatusBar):
    """``folder_label``, ``count_label`` and ``capture_label``, as the window fills them."""

    def __init__(self, parent: QWidget | None = None, banner: QLabel | None = None) -> None:
        """``banner``: the window's banner, where the connection's loss is explained (the alerts'
        next reading, once the server is back, gives it back to them)."""
        super().__init__(parent)
        self.banner = banner
        self.folder_label = QLabel(self)
        self.folder_label.setObjectName("data-folder")
        # A long path (a network share, a deep profile) gives way instead of widening the window.
        self.folder_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.addWidget(self.folder_label, 1)  # stays: notices show beside it and expire
        self.capture_label = QLabel(self)
        self.count_label = QLabel(self)  # wide enough for millions: no relayout squeezing it as counts change
        self.count_label.setMinimumWidth(self.count_label.fontMetrics().horizontalAdvance("9.999.999 documentos"))
        self.office_label = QLabel(self)
        self.office_label.setObjectName("office-link")
        self.office_label.setStyleSheet("QLabel#office-link { color: #a1170d; font-weight: bold; }")
        self.office_label.setVisible(False)
        self.addPermanentWidget(self.office_label)
        self.addPermanentWidget(self.count_label)
        self.addPermanentWidget(self.capture_label)

    @property
    def offline(self) -> bool:
        """The office server is away (said in the bar until it is back)."""
        return not self.office_label.isHidden()

    def office_link(self, kind: str, message: str) -> bool:
        """A notice of the office server's connection: ``OFFICE_LOST`` shows ``message`` until
        ``OFFICE_BACK``, which says so for a while; True when the connection came back."""
        if kind == OFFICE_LOST:
            self.office_label.setText(OFFLINE)
            self.office_label.setToolTip(message)
            self.office_label.setVisible(True)
            self.clearMessage()  # an older notice must not read as news from the server
            if self.banner is not None:
                self.banner.setText(message)
                self.banner.setVisible(True)
            return False
        was_offline = self.offline
        self.office_label.setVisible(False)
        if was_offline and self.banner is not None:
            self.banner.setVisible(False)
        if was_offline:
            self.showMessage(message, 10_000)
        return kind == OFFICE_BACK

    def notice(self, message: str) -> None:
        """A notice beside the folder, for a while; not while the server is away (the reads that
        fail meanwhile would repeat what the bar already says)."""
        if not self.offline:
            self.showMessage(message, 15_000)

    def error(self, message: str) -> None:
        self.notice(f"Erro: {message}")

    def show_opened(self, data_dir: Path, *, read_only: bool, holder: str | None, capturing: bool) -> None:
        """The data folder just opened: where it is, and whether this window captures."""
        if read_only:
            # Who holds the folder goes in the tooltip: in the bar it made the window wider than the screen.
            self.capture_label.setText("Somente leitura: outra instância captura nesta pasta")
            self.capture_label.setToolTip(f"Captura nesta pasta: {holder}" if holder else "")
            self.capture_label.setStyleSheet("color: #8a5300; font-weight: bold;")
        elif capturing:
            self.capture_label.setText("Captura em segundo plano ligada")
        else:
            self.capture_label.setText("Captura desligada nesta janela")
        self.clearMessage()
        self.folder_label.setText(f"Pasta de dados: {data_dir}   ·   versão {__version__}")
        self.folder_label.setToolTip(str(data_dir))
