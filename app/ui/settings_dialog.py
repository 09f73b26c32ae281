"""Configurações: data folder, the office database (its own dialog), log level, notifications,
start with Windows, the retention of archived exchanges and the ICP-Brasil trust bundle, with a
note on where to obtain it.

Reads and saves on the window's workers; what takes effect only on the next start says so.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.desk import office_database, preferences
from app.desk.preferences import Preferences
from app.ui.buttons import save_cancel
from app.ui.office_database_dialog import OfficeDatabaseDialog
from app.ui.tasks import Tasks

if TYPE_CHECKING:
    from app.desk.desk import Desk

NOTE_STYLE = "color: #555555;"


def typed_path(text: str) -> Path | None:
    return Path(text.strip()) if text.strip() else None


def next_data_dir(current: Preferences, text: str) -> Path | None:
    """The data folder for the next start; unchanged and never chosen, nothing to remember (the
    default keeps applying)."""
    folder = typed_path(text)
    untouched = folder == current.data_dir and current.next_data_dir is None
    return None if folder is None or untouched else folder


def choose_folder(parent: QWidget, edit: QLineEdit, title: str) -> None:
    folder = QFileDialog.getExistingDirectory(parent, title, edit.text() or str(Path.home()))
    if folder:
        edit.setText(folder)


def choose_bundle(parent: QWidget, edit: QLineEdit) -> None:
    path, _filter = QFileDialog.getOpenFileName(
        parent,
        "Cadeia ICP-Brasil",
        str(Path.home()),
        "Cadeia de certificados (*.p7b *.zip *.pem *.crt *.cer);;Todos os arquivos (*)",
    )
    if path:
        edit.setText(path)


class SettingsDialog(QDialog):
    """``saved`` carries the sentences the save produced (for the status bar)."""

    saved = Signal(list)

    def __init__(self, desk: Desk, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desk, self.tasks = desk, tasks
        self.current: Preferences | None = None
        self.office_dialog: OfficeDatabaseDialog | None = None
        self.setWindowTitle("Configurações")
        self.setObjectName("settings-dialog")
        self.setMinimumWidth(680)
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.data_dir = QLineEdit(self)
        self.data_dir.setObjectName("data-dir")
        choose = QPushButton("Escolher…", self)
        choose.clicked.connect(self._choose_folder)
        row = QHBoxLayout()
        row.addWidget(self.data_dir, 1)
        row.addWidget(choose)
        form.addRow("Pasta de dados", row)
        self.data_note = QLabel(self)
        self.data_note.setWordWrap(True)
        self.data_note.setStyleSheet(NOTE_STYLE)
        self.data_note.setMinimumHeight(2 * self.data_note.fontMetrics().lineSpacing() + 4)
        form.addRow("", self.data_note)
        self.office_current = QLabel("…", self)
        self.office_current.setObjectName("office-current")
        office = QPushButton("Banco do escritório…", self)
        office.setObjectName("office-database")
        office.setToolTip("Um banco PostgreSQL dividido por todas as estações do escritório")
        office.clicked.connect(self.open_office_database)
        office_row = QHBoxLayout()
        office_row.addWidget(self.office_current, 1)
        office_row.addWidget(office)
        form.addRow("Banco de dados", office_row)
        self.log_level = QComboBox(self)
        self.log_level.setObjectName("log-level")
        for level, text in preferences.LOG_LEVEL_LABELS.items():
            self.log_level.addItem(text, level)
        form.addRow("Registro (log)", self.log_level)
        self.notifications = QCheckBox("Mostrar notificações (documentos novos, bloqueios, certificados)", self)
        self.notifications.setObjectName("notifications")
        form.addRow("", self.notifications)
        self.autostart = QCheckBox("Iniciar com o Windows", self)
        self.autostart.setObjectName("autostart")
        form.addRow("", self.autostart)
        self.retention = QSpinBox(self)
        self.retention.setObjectName("retention")
        self.retention.setRange(1, 36500)
        self.retention.setSuffix(" dias")
        self.retention.setToolTip("Os documentos nunca são apagados; só as cópias das comunicações com o governo.")
        form.addRow("Guardar as comunicações por", self.retention)
        self.bundle = QLineEdit(self)
        self.bundle.setObjectName("icp-bundle")
        self.bundle.setPlaceholderText("Cadeia da ICP-Brasil do ITI (.p7b, .zip, .pem ou .crt)")
        pick = QPushButton("Escolher…", self)
        pick.clicked.connect(self._choose_bundle)
        bundle_row = QHBoxLayout()
        bundle_row.addWidget(self.bundle, 1)
        bundle_row.addWidget(pick)
        form.addRow("Cadeia ICP-Brasil", bundle_row)
        layout.addLayout(form)
        note = QLabel(preferences.ICP_BUNDLE_NOTE, self)
        note.setObjectName("icp-note")
        note.setWordWrap(True)
        note.setStyleSheet(NOTE_STYLE)
        note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(note)
        self.message = QLabel(self)
        self.message.setObjectName("settings-message")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        self.buttons = save_cancel(self, self.save, self.reject)
        layout.addWidget(self.buttons)
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(False)
        self.tasks.run(lambda: preferences.read(desk), self._loaded, self._failed)
        self.tasks.run(lambda: office_database.chosen(desk.data_dir), self._office_shown, self._failed)

    def _office_shown(self, url: Any) -> None:
        self.office_current.setText(
            f"Banco do escritório {url.display}"
            if url is not None
            else "SQLite desta pasta de dados (um computador só)"
        )

    def _fit_data_note(self) -> None:
        """A long folder path wraps to more lines than the two reserved: the note gets their height
        (a form row does not ask a wrapped label), and the dialog grows to keep every row whole."""
        note = self.data_note
        note.setMinimumHeight(note.heightForWidth(note.width()))
        self.resize(self.width(), max(self.height(), self.sizeHint().height()))

    def _loaded(self, current: Preferences) -> None:
        self.current = current
        self.data_dir.setText(str(current.next_data_dir or current.data_dir))
        self.data_note.setText(f"Esta janela usa {current.data_dir}. Uma pasta nova vale a partir da próxima abertura.")
        self._fit_data_note()
        self.log_level.setCurrentIndex(max(0, self.log_level.findData(current.log_level)))
        self.notifications.setChecked(current.notifications)
        self.autostart.setChecked(current.autostart)
        if not current.autostart_supported:
            self.autostart.setEnabled(False)
            self.autostart.setToolTip("Só existe no Windows.")
            self.autostart.setText("Iniciar com o Windows (só no Windows)")
        self.retention.setValue(current.archive_retention_days)
        self.bundle.setText(str(current.icp_brasil_bundle or ""))
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(True)
        self.adjustSize()

    def _choose_folder(self) -> None:
        choose_folder(self, self.data_dir, "Pasta de dados")

    def open_office_database(self) -> OfficeDatabaseDialog:
        dialog = self.office_dialog = OfficeDatabaseDialog(self.desk.data_dir, self.tasks, self)
        dialog.saved.connect(lambda sentence: self.message.setText(sentence))
        dialog.open()
        return dialog

    def _choose_bundle(self) -> None:
        choose_bundle(self, self.bundle)

    def chosen(self) -> Preferences:
        assert self.current is not None
        next_dir, bundle = next_data_dir(self.current, self.data_dir.text()), typed_path(self.bundle.text())
        return replace(
            self.current,
            next_data_dir=next_dir,
            log_level=self.log_level.currentData(),
            notifications=self.notifications.isChecked(),
            autostart=self.autostart.isChecked(),
            archive_retention_days=self.retention.value(),
            icp_brasil_bundle=bundle,
        )

    def save(self) -> None:
        if self.current is None:
            return
        chosen, desk = self.chosen(), self.desk
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(False)
        self.tasks.run(lambda: preferences.save(desk, chosen), self._saved, self._failed)

    def _saved(self, notes: list[str]) -> None:
        self.saved.emit(notes)
        self.accept()

    def _failed(self, error: BaseException) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(True)
        self.message.setText(getattr(error, "message", None) or str(error))
        self.message.setStyleSheet("color: #a01010;")
