"""The manifestation dialog: what the event means, a justification when it takes one, the rows.

One dialog for one row or many (a review list before sending); conclusive events are final
except for one rectification, and the dialog says so before anything is sent.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.manifestation import (
    JUSTIFICATION_MAX,
    JUSTIFICATION_MIN,
    MANIFESTATION_TYPES,
    Justification,
)
from app.desk import labels
from app.desk.views import GridRow
from app.ui.grid_model import number_text

MEANING = {
    "210210": "A Ciência da Operação informa à SEFAZ que a empresa sabe da existência desta NF-e, "
    "sem confirmar a operação. Libera o download do XML completo.",
    "210200": "A Confirmação da Operação declara que a operação aconteceu como descrita na NF-e. "
    "Depois dela o emitente não pode mais cancelar a nota.",
    "210220": "O Desconhecimento da Operação declara que a empresa não reconhece esta operação "
    "(nota emitida indevidamente contra o seu CNPJ).",
    "210240": "A Operação não Realizada declara que a operação não aconteceu (mercadoria recusada, "
    "devolvida ou não entregue). Exige uma justificativa.",
}
FINAL = (
    "Atenção: este é um evento conclusivo. Depois de registrado, só pode ser retificado uma única vez "
    "(um segundo evento conclusivo substitui o primeiro)."
)


class ManifestDialog(QDialog):
    """Review before sending; ``justification()`` is the typed text (stripped) or None."""

    def __init__(self, tp_evento: str, rows: list[GridRow], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        kind = MANIFESTATION_TYPES[tp_evento]
        self.tp_evento = tp_evento
        self.rows = rows
        self.setWindowTitle(f"{kind.label} — {len(rows)} nota{'s' if len(rows) != 1 else ''}")
        self.setMinimumWidth(620)
        layout = QVBoxLayout(self)
        meaning = QLabel(MEANING[tp_evento], self)
        meaning.setWordWrap(True)
        layout.addWidget(meaning)
        if kind.conclusive:
            warning = QLabel(FINAL, self)
            warning.setObjectName("final-warning")
            warning.setWordWrap(True)
            warning.setStyleSheet("color: #8a5300; font-weight: bold;")
            layout.addWidget(warning)
        layout.addWidget(QLabel("Notas que receberão o evento:", self))
        self.list = QListWidget(self)
        for row in rows:
            self.list.addItem(
                f"NF-e {number_text(row)}  ·  {row.counterpart_name or '-'}  ·  "
                f"{labels.money_br(row.total_cents)}  ·  {row.access_key}"
            )
        self.list.setMaximumHeight(140)
        layout.addWidget(self.list)
        self.text: QPlainTextEdit | None = None
        self.counter: QLabel | None = None
        if kind.justification is not Justification.NONE:
            required = kind.justification is Justification.REQUIRED
            layout.addWidget(
                QLabel(
                    f"Justificativa ({'obrigatória' if required else 'opcional'}, "
                    f"de {JUSTIFICATION_MIN} a {JUSTIFICATION_MAX} caracteres):",
                    self,
                )
            )
            self.text = QPlainTextEdit(self)
            self.text.setObjectName("justification")
            self.text.setMaximumHeight(90)
            self.text.textChanged.connect(self._check)
            layout.addWidget(self.text)
            self.counter = QLabel(self)
            layout.addWidget(self.counter)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, parent=self)
        self.send = self.buttons.addButton(f"Enviar {kind.label}", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._check()

    def justification(self) -> str | None:
        if self.text is None:
            return None
        value = " ".join(self.text.toPlainText().split())
        return value or None

    def _check(self) -> None:
        if self.text is None or self.counter is None:
            return
        kind = MANIFESTATION_TYPES[self.tp_evento]
        size = len(self.justification() or "")
        ok = JUSTIFICATION_MIN <= size <= JUSTIFICATION_MAX or (
            size == 0 and kind.justification is Justification.OPTIONAL
        )
        self.counter.setText(
            f"{size} de {JUSTIFICATION_MAX} caracteres" + ("" if ok else f" (mínimo {JUSTIFICATION_MIN})")
        )
        self.send.setEnabled(ok)
