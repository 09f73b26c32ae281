"""The NFS-e taker's manifestation dialog: what the event means and, for a rejection, the reason
code and a text of 15 to 255 characters (rule book §6.5). Nothing is sent until "Enviar"."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.manifestation import JUSTIFICATION_MAX, JUSTIFICATION_MIN
from app.core.taker import REJECTION_REASONS, REJEICAO_TOMADOR, TAKER_TYPES
from app.desk import labels
from app.desk.views import GridRow

MEANING = {
    "203202": "A Confirmação do Tomador declara à Sefin Nacional que a empresa reconhece esta NFS-e: o "
    "serviço foi prestado como descrito.",
    "203206": "A Rejeição do Tomador declara que a empresa não reconhece esta NFS-e (duplicidade, serviço "
    "não prestado, valor errado...). Exige o motivo e uma justificativa.",
}


class TakerDialog(QDialog):
    """``reason_code()`` and ``reason()`` for a rejection; None for a confirmation."""

    def __init__(self, tp_evento: str, row: GridRow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tp_evento = tp_evento
        kind = TAKER_TYPES[tp_evento]
        self.setWindowTitle(f"{kind.label} — NFS-e {row.number or '-'}")
        self.setObjectName("taker-dialog")
        self.setMinimumWidth(560)
        layout = QVBoxLayout(self)
        meaning = QLabel(MEANING[tp_evento], self)
        meaning.setWordWrap(True)
        layout.addWidget(meaning)
        facts = QLabel(
            f"Prestador: {row.emitter_name or '-'} ({labels.tax_id(row.emitter_id)})\n"
            f"Valor: {labels.money_br(row.total_cents)}\nChave: {row.access_key or '-'}",
            self,
        )
        facts.setStyleSheet("color: #333333;")
        layout.addWidget(facts)
        self.code: QComboBox | None = None
        self.text: QPlainTextEdit | None = None
        self.count = QLabel(self)
        if tp_evento == REJEICAO_TOMADOR:
            form = QFormLayout()
            self.code = QComboBox(self)
            self.code.setObjectName("taker-reason-code")
            for code, text in REJECTION_REASONS.items():
                self.code.addItem(f"{code} - {text}", code)
            form.addRow("Motivo", self.code)
            self.text = QPlainTextEdit(self)
            self.text.setObjectName("taker-reason")
            self.text.setPlaceholderText(f"Justificativa, de {JUSTIFICATION_MIN} a {JUSTIFICATION_MAX} caracteres")
            self.text.setFixedHeight(90)
            self.text.textChanged.connect(self._changed)
            form.addRow("Justificativa", self.text)
            layout.addLayout(form)
            layout.addWidget(self.count)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Enviar")
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("Cancelar")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._changed()

    def _changed(self) -> None:
        if self.text is None:
            return
        size = len(self.text.toPlainText().strip())
        valid = JUSTIFICATION_MIN <= size <= JUSTIFICATION_MAX
        self.count.setText(f"{size} caractere(s); a justificativa vai de {JUSTIFICATION_MIN} a {JUSTIFICATION_MAX}")
        self.count.setStyleSheet("" if valid else "color: #a01010;")
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(valid)

    def reason_code(self) -> str | None:
        return self.code.currentData() if self.code is not None else None

    def reason(self) -> str | None:
        return self.text.toPlainText().strip() if self.text is not None else None
