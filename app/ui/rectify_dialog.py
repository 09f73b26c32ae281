"""The rectification dialog: the conclusive event already registered (which, when, protocol), the
rule (one rectification only, the new event replaces the old), the new event to send and, when it
takes one, its justification. Nothing is sent from here: ``ManifestActions`` sends on a worker.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from app.core.errors import CapturaError
from app.core.manifestation import (
    JUSTIFICATION_MAX,
    JUSTIFICATION_MIN,
    Justification,
    manifestation_type,
    validate_justification,
)
from app.desk.conclusive import registered_conclusive
from app.desk.views import DocumentDetail
from app.ui.grid_model import number_text
from app.ui.manifest_dialog import MEANING

RULE = (
    "As regras da NF-e (NT 2020.001) permitem retificar uma manifestação conclusiva uma única vez: "
    "o novo evento substitui o anterior e passa a ser o que vale para esta nota. "
    "Depois desta retificação não há outra."
)


class RectifyDialog(QDialog):
    """``tp_evento()`` the chosen new event; ``justification()`` the typed text (one line) or None."""

    def __init__(self, detail: DocumentDetail, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = detail.row
        self.setWindowTitle(f"Retificar manifestação — NF-e {number_text(row)}")
        self.setMinimumWidth(640)
        layout = QVBoxLayout(self)
        registered = registered_conclusive(detail.events, [m.request for m in detail.manifestations])
        current = registered[-1] if registered else None
        said = f"{current.text()}." if current else "Há uma manifestação conclusiva registrada para esta nota."
        heading = f"NF-e {number_text(row)} · {row.counterpart_name or '-'}\n{row.access_key}\n\n{said}"
        for name, text, style in (("registered", heading, ""), ("rule", RULE, "color: #8a5300; font-weight: bold;")):
            label = QLabel(text, self)
            label.setObjectName(name)
            label.setWordWrap(True)
            label.setStyleSheet(style)
            layout.addWidget(label)
        layout.addWidget(QLabel("Novo evento, que substituirá o registrado:", self))
        self.group = QButtonGroup(self)
        self.choices: dict[str, QRadioButton] = {}
        for tp in detail.rectifiable_manifestations:
            button = QRadioButton(manifestation_type(tp).label, self)
            button.setObjectName(f"event-{tp}")
            self.group.addButton(button)
            self.choices[tp] = button
            layout.addWidget(button)
            button.toggled.connect(self._chosen)
        self.meaning = QLabel(self)
        self.meaning.setWordWrap(True)
        layout.addWidget(self.meaning)
        self.prompt = QLabel(self)
        self.text = QPlainTextEdit(self)
        self.counter = QLabel(self)
        for widget, name in ((self.prompt, "prompt"), (self.text, "justification"), (self.counter, "counter")):
            widget.setObjectName(name)
            layout.addWidget(widget)
        self.text.setMaximumHeight(90)
        self.text.textChanged.connect(self._check)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, parent=self)
        self.send = self.buttons.addButton("Enviar retificação", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        others = [tp for tp in self.choices if current is None or tp != current.tp_evento]
        for tp in (others or list(self.choices))[:1]:
            self.choices[tp].setChecked(True)
        self._chosen()

    def tp_evento(self) -> str | None:
        return next((tp for tp, b in self.choices.items() if b.isChecked()), None)

    def justification(self) -> str | None:
        tp = self.tp_evento()
        if tp is None or manifestation_type(tp).justification is Justification.NONE:
            return None
        value = " ".join(self.text.toPlainText().split())
        return value or None

    def _chosen(self, *_args: object) -> None:
        tp = self.tp_evento()
        kind = manifestation_type(tp) if tp else None
        self.meaning.setText(MEANING.get(tp or "", ""))
        takes = kind is not None and kind.justification is not Justification.NONE
        for widget in (self.prompt, self.text, self.counter):
            widget.setVisible(takes)
        if kind is not None and takes:
            required = kind.justification is Justification.REQUIRED
            self.prompt.setText(
                f"Justificativa ({'obrigatória' if required else 'opcional'}, "
                f"de {JUSTIFICATION_MIN} a {JUSTIFICATION_MAX} caracteres):"
            )
        self._check()

    def _check(self) -> None:
        tp = self.tp_evento()
        if tp is None:
            self.send.setEnabled(False)
            return
        value = self.justification()
        try:
            validate_justification(tp, value)
        except CapturaError as error:
            self.counter.setText(f"{len(value or '')} de {JUSTIFICATION_MAX} caracteres — {error.message}")
            self.send.setEnabled(False)
            return
        self.counter.setText(f"{len(value or '')} de {JUSTIFICATION_MAX} caracteres")
        self.send.setEnabled(True)
