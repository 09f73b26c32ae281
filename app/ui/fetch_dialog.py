"""Buscar documento pela chave: a key pasted or scanned (checked as it is typed), the fetch on a
worker, a chooser when several of the office's companies could ask, and the outcome (already here,
fetched, left to the capture service, refused with its reason); a document here is shown in its grid.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.keys import key_problem
from app.desk.fetching import CompanyChoiceNeeded, FetchOutcome
from app.ui.window_host import WindowHost

HINT = "Cole ou leia com o leitor a chave de acesso (NF-e e CT-e: 44 dígitos; NFS-e: 50 caracteres)."


class CompanyChooser(QDialog):
    """Which company asks for the key; ``company_id()`` the chosen one."""

    def __init__(self, error: CompanyChoiceNeeded, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Qual empresa consulta esta chave?")
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        text = QLabel(
            "Mais de uma empresa do escritório pode consultar esta chave. Escolha a que é destinatária "
            "(ou tomadora) do documento: a consulta é feita com o certificado dela.",
            self,
        )
        text.setWordWrap(True)
        layout.addWidget(text)
        self.combo = QComboBox(self)
        for choice in error.candidates:
            self.combo.addItem(choice.text(), choice.company_id)
        layout.addWidget(self.combo)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, parent=self)
        buttons.addButton("Buscar com esta empresa", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def company_id(self) -> int:
        return int(self.combo.currentData())


class FetchDialog(QDialog):
    """The key, its problem inline, the outcome; ``outcome``/``chooser`` for tests."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.outcome: FetchOutcome | None = None
        self.chooser: CompanyChooser | None = None
        self.setWindowTitle("Buscar documento pela chave")
        self.setMinimumWidth(620)
        layout = QVBoxLayout(self)
        hint = QLabel(HINT, self)
        hint.setWordWrap(True)
        layout.addWidget(hint)
        self.key = QLineEdit(self)
        self.key.setObjectName("key")
        self.key.setPlaceholderText("Chave de acesso")
        self.key.setClearButtonEnabled(True)
        layout.addWidget(self.key)
        self.problem = QLabel(self)
        self.problem.setObjectName("problem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #a30000;")
        layout.addWidget(self.problem)
        self.answer = QLabel(self)
        self.answer.setObjectName("result")
        self.answer.setWordWrap(True)
        layout.addWidget(self.answer)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, parent=self)
        self.search = self.buttons.addButton("Buscar", QDialogButtonBox.ButtonRole.ActionRole)
        self.search.setDefault(True)
        self.search.clicked.connect(lambda: self.fetch())
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self.key.textChanged.connect(self._check)
        self._check()

    def _check(self) -> None:
        text = self.key.text().strip()
        problem = key_problem(text) if text else None
        self.problem.setText(problem or "")
        self.problem.setVisible(problem is not None)
        self.search.setEnabled(bool(text) and problem is None)

    def fetch(self, company_id: int | None = None) -> None:
        """The fetch on a worker, as ``company_id`` or the company the key names."""
        if not self.search.isEnabled():
            return
        key = self.key.text().strip()
        desk = self.host.desk
        self.search.setEnabled(False)
        self.answer.setText("Buscando…")
        self.host.tasks.run(lambda: desk.fetch_by_key(key, company_id), self._done, self._failed)

    def _done(self, outcome: FetchOutcome) -> None:
        self.outcome = outcome
        self._check()
        if outcome.status == "local":
            head = "O documento já está na base."
        elif outcome.status == "fetched":
            head = "Documento baixado."
        elif outcome.queued_elsewhere or outcome.status == "deferred":
            head = "A consulta ficou agendada para o serviço de captura."
        else:
            head = "A consulta não trouxe o documento."
        self.answer.setText(f"{head}\n{outcome.message}")
        if outcome.found:
            self.host.open_key(outcome.product, outcome.key)  # shown in its grid

    def _failed(self, error: BaseException) -> None:
        self._check()
        if isinstance(error, CompanyChoiceNeeded):
            self.answer.setText("Escolha a empresa que consulta.")
            self.chooser = CompanyChooser(error, self)
            self.chooser.accepted.connect(lambda: self._chosen(self.chooser))
            self.chooser.open()
            return
        self.answer.setText(f"Busca recusada: {getattr(error, 'message', None) or error}")

    def _chosen(self, chooser: CompanyChooser | None) -> None:
        if chooser is not None:
            self.fetch(chooser.company_id())


class FetchByKey(QObject):
    """The menu entry's controller: one dialog, opened again with its last key."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.dialog: FetchDialog | None = None

    def open(self) -> None:
        if self.host.opened is None:
            return
        if self.dialog is None:
            self.dialog = FetchDialog(self.host)
        self.dialog.open()
        self.dialog.key.setFocus()
        self.dialog.key.selectAll()
