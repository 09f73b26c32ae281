"""Configurações → Banco do escritório: the PostgreSQL server the office's workstations share.

Host, port, database, user and password (kept in the OS keyring, never in a file), TLS, and
"Testar conexão", which says in Portuguese what is wrong (password, server, database, TLS) or what
this workstation will find there. Every read, test and save runs on the window's workers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.desk import office_database
from app.ui.buttons import save_cancel
from app.ui.tasks import Tasks

NOTE = (
    "O banco do escritório é um PostgreSQL no servidor do escritório, usado por todas as estações ao "
    "mesmo tempo. A senha fica no cofre de senhas do Windows (Gerenciador de Credenciais), nunca em "
    "arquivo. Os certificados e as configurações continuam na pasta de dados desta estação. "
    "A mudança vale a partir da próxima abertura do programa."
)
OK_STYLE, ERROR_STYLE, NOTE_STYLE = "color: #106010;", "color: #a01010;", "color: #555555;"


class OfficeDatabaseDialog(QDialog):
    """``saved`` carries the sentence to show in the status bar."""

    saved = Signal(str)

    def __init__(self, data_dir: Path, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data_dir, self.tasks = data_dir, tasks
        self.loaded = False
        self.setWindowTitle("Banco do escritório")
        self.setObjectName("office-database-dialog")
        self.setMinimumWidth(560)
        layout = QVBoxLayout(self)
        self.current = QLabel("Lendo a configuração…", self)
        self.current.setObjectName("office-current")
        self.current.setWordWrap(True)
        layout.addWidget(self.current)
        form = QFormLayout()
        self.host = self._edit("office-host", "servidor ou endereço IP (ex.: servidor-escritorio)")
        form.addRow("Servidor", self.host)
        self.port = QSpinBox(self)
        self.port.setObjectName("office-port")
        self.port.setRange(1, 65535)
        self.port.setValue(5432)
        form.addRow("Porta", self.port)
        self.database = self._edit("office-database", "nome do banco (ex.: captura)")
        form.addRow("Banco", self.database)
        self.user = self._edit("office-user", "usuário do PostgreSQL")
        form.addRow("Usuário", self.user)
        self.password = self._edit("office-password", "senha do usuário")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        form.addRow("Senha", self.password)
        self.tls = QComboBox(self)
        self.tls.setObjectName("office-tls")
        for mode, label in office_database.TLS_LABELS.items():
            self.tls.addItem(label, mode)
        form.addRow("Criptografia (TLS)", self.tls)
        layout.addLayout(form)
        note = QLabel(NOTE, self)
        note.setWordWrap(True)
        note.setStyleSheet(NOTE_STYLE)
        layout.addWidget(note)
        self.message = QLabel(self)
        self.message.setObjectName("office-message")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        actions = QHBoxLayout()
        self.test_button = QPushButton("Testar conexão", self)
        self.test_button.setObjectName("office-test")
        self.test_button.clicked.connect(self.test)
        self.local_button = QPushButton("Voltar ao banco desta pasta (SQLite)", self)
        self.local_button.setObjectName("office-local")
        self.local_button.clicked.connect(self.use_local)
        actions.addWidget(self.test_button)
        actions.addStretch(1)
        actions.addWidget(self.local_button)
        layout.addLayout(actions)
        self.buttons = save_cancel(self, self.save, self.reject, "Usar este banco")
        layout.addWidget(self.buttons)
        self._busy(True)
        self.tasks.run(self._read, self._loaded, self._failed)

    def _edit(self, name: str, placeholder: str) -> QLineEdit:
        edit = QLineEdit(self)
        edit.setObjectName(name)
        edit.setPlaceholderText(placeholder)
        return edit

    def _read(self) -> tuple[Any, bool]:
        url = office_database.chosen(self.data_dir)
        return url, url is not None and office_database.has_password(url)

    def _loaded(self, found: tuple[Any, bool]) -> None:
        url, kept = found
        self.loaded = True
        self._busy(False)
        if url is None:
            self.current.setText("Esta estação usa o banco SQLite da sua pasta de dados (um computador só).")
            self.local_button.setEnabled(False)
            return
        self.current.setText(f"Esta estação usa o banco do escritório {url.display}.")
        self.host.setText(url.host)
        self.port.setValue(url.port)
        self.database.setText(url.database)
        self.user.setText(url.user)
        self.tls.setCurrentIndex(max(0, self.tls.findData(url.sslmode)))
        if kept:
            self.password.setPlaceholderText("guardada no cofre de senhas (deixe em branco para mantê-la)")

    def _typed(self) -> tuple[Any, str | None]:
        url = office_database.office_url(
            self.host.text(), self.port.value(), self.database.text(), self.user.text(), self.tls.currentData()
        )
        return url, self.password.text() or None

    def _busy(self, busy: bool) -> None:
        for button in (self.test_button, self.buttons.button(QDialogButtonBox.StandardButton.Save)):
            button.setEnabled(not busy)

    def _say(self, text: str, style: str) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(style)

    def test(self) -> None:
        self._busy(True)
        self._say("Testando a conexão…", NOTE_STYLE)
        typed = self._typed_or_say()
        if typed is None:
            return
        url, password = typed
        self.tasks.run(lambda: office_database.test_connection(url, password), self._tested, self._failed)

    def _typed_or_say(self) -> tuple[Any, str | None] | None:
        try:
            return self._typed()
        except office_database.OfficeDatabaseError as error:
            self._failed(error)
            return None

    def _tested(self, sentence: str) -> None:
        self._busy(False)
        self._say(sentence, OK_STYLE)

    def save(self) -> None:
        typed = self._typed_or_say()
        if typed is None:
            return
        url, password = typed
        self._busy(True)
        data_dir = self.data_dir
        self.tasks.run(
            lambda: office_database.remember(data_dir, url, password), lambda _none: self._saved(url), self._failed
        )

    def use_local(self) -> None:
        self._busy(True)
        data_dir = self.data_dir
        self.tasks.run(lambda: office_database.remember(data_dir, None), lambda _none: self._saved(None), self._failed)

    def _saved(self, url: Any) -> None:
        where = f"o banco do escritório {url.display}" if url is not None else "o banco SQLite da pasta de dados"
        self.saved.emit(f"Na próxima abertura, esta estação usa {where}.")
        self.accept()

    def _failed(self, error: BaseException) -> None:
        self._busy(False)
        self._say(getattr(error, "message", None) or str(error), ERROR_STYLE)
