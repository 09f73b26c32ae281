"""The dialogs' Save/Cancel row, in Portuguese, made once."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QDialogButtonBox, QWidget

SAVE, CANCEL = QDialogButtonBox.StandardButton.Save, QDialogButtonBox.StandardButton.Cancel


def save_cancel(
    parent: QWidget, save: Callable[[], object], cancel: Callable[[], object], text: str = "Salvar"
) -> QDialogButtonBox:
    """Save (named ``text``) calls ``save``; Cancelar calls ``cancel``."""
    buttons = QDialogButtonBox(SAVE | CANCEL, parent)
    buttons.button(SAVE).setText(text)
    buttons.button(CANCEL).setText("Cancelar")
    buttons.accepted.connect(save)
    buttons.rejected.connect(cancel)
    return buttons
