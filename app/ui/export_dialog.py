"""Ferramentas > Perfis de exportação: the automatic exports to folders, each with its preset,
destination, name pattern (previewed on a sample NF-e before saving), products, PDFs and what a
cancelled NF-e does. The capture service fills every profile as documents arrive."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.products import Product
from app.desk import exports
from app.desk.labels import brasilia_text
from app.store.records import ExportProfile
from app.ui.tasks import Tasks

if TYPE_CHECKING:
    from app.desk.desk import Desk

CANCELLED = (("move", "Mover para a pasta Canceladas"), ("beside", "Deixar e gravar o cancelamento ao lado"))
COLUMNS = ("Nome", "Pasta", "Padrão", "Produtos", "PDF", "Exportados", "Situação")


class ExportProfilesDialog(QDialog):
    def __init__(self, desk: Desk, tasks: Tasks, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desk, self.tasks = desk, tasks
        self.profiles: list[ExportProfile] = []
        self.setWindowTitle("Perfis de exportação")
        self.setObjectName("export-profiles")
        self.setMinimumSize(900, 560)
        layout = QVBoxLayout(self)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("profiles")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        for index, width in enumerate((110, 220, 240, 110, 40, 80)):
            self.table.setColumnWidth(index, width)
        layout.addWidget(self.table)
        remove = QPushButton("Remover perfil selecionado", self)
        remove.clicked.connect(self.remove_selected)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(remove)
        layout.addLayout(row)
        layout.addWidget(self._form())
        self.message = QLabel(self)
        self.message.setObjectName("export-message")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.button(QDialogButtonBox.StandardButton.Close).setText("Fechar")
        close.rejected.connect(self.reject)
        layout.addWidget(close)
        self._preset_changed()
        self.reload()

    def _form(self) -> QGroupBox:
        box = QGroupBox("Novo perfil", self)
        form = QFormLayout(box)
        self.name = QLineEdit(box)
        self.name.setObjectName("profile-name")
        form.addRow("Nome", self.name)
        self.kind = QComboBox(box)
        self.kind.setObjectName("profile-kind")
        for kind, text in exports.PRESET_LABELS.items():
            self.kind.addItem(text, kind)
        self.kind.currentIndexChanged.connect(lambda _i: self._preset_changed())
        form.addRow("Tipo", self.kind)
        self.destination = QLineEdit(box)
        self.destination.setObjectName("profile-destination")
        choose = QPushButton("Escolher…", box)
        choose.clicked.connect(self._choose)
        row = QHBoxLayout()
        row.addWidget(self.destination, 1)
        row.addWidget(choose)
        form.addRow("Pasta de destino", row)
        self.pattern = QLineEdit(box)
        self.pattern.setObjectName("profile-pattern")
        self.pattern.textChanged.connect(lambda _t: self._preview())
        form.addRow("Padrão dos nomes", self.pattern)
        self.preview = QLabel(box)
        self.preview.setObjectName("profile-preview")
        self.preview.setWordWrap(True)
        form.addRow("Exemplo", self.preview)
        products = QWidget(box)
        line = QHBoxLayout(products)
        line.setContentsMargins(0, 0, 0, 0)
        self.products: dict[Product, QCheckBox] = {}
        for product in Product:
            check = QCheckBox(product.label, products)
            check.setChecked(True)
            self.products[product] = check
            line.addWidget(check)
        line.addStretch(1)
        form.addRow("Produtos", products)
        self.pdf = QCheckBox("Gravar também o DANFE, DACTE ou DANFSe (.pdf) de cada documento completo", box)
        form.addRow("", self.pdf)
        self.cancelled = QComboBox(box)
        for mode, text in CANCELLED:
            self.cancelled.addItem(text, mode)
        form.addRow("NF-e cancelada", self.cancelled)
        self.add_button = QPushButton("Adicionar perfil", box)
        self.add_button.setObjectName("add-profile")
        self.add_button.clicked.connect(self.add)
        form.addRow("", self.add_button)
        return box

    # ------------------------------------------------------------------ form

    def _preset_changed(self) -> None:
        self.pattern.setText(exports.PRESET_PATTERNS[self.kind.currentData()])

    def _preview(self) -> None:
        try:
            document, event = exports.sample_paths(self.pattern.text().strip())
        except Exception as error:  # noqa: BLE001 (a pattern being typed: say what is wrong)
            self.preview.setText(getattr(error, "message", None) or str(error))
            self.preview.setStyleSheet("color: #a01010;")
            self.add_button.setEnabled(False)
            return
        self.preview.setText(f"NF-e: {document}\nCancelamento: {event}")
        self.preview.setStyleSheet("color: #333333;")
        self.add_button.setEnabled(True)

    def _choose(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Pasta de destino", self.destination.text())
        if folder:
            self.destination.setText(folder)

    # ------------------------------------------------------------------ profiles

    def reload(self) -> None:
        self.tasks.run(lambda: self.desk.exports.profiles(), self._show, self._failed)

    def _show(self, profiles: list[ExportProfile]) -> None:
        self.profiles = profiles
        self.table.setRowCount(len(profiles))
        for row, profile in enumerate(profiles):
            products = ", ".join(p.label for p in profile.products) or "todos"
            if profile.last_error:
                state = f"Falhando desde {brasilia_text(profile.failing_since)}: {profile.last_error}"
            elif profile.last_export_at:
                state = f"Em dia (última exportação {brasilia_text(profile.last_export_at)})"
            else:
                state = "Aguardando documentos"
            texts = (profile.name, profile.destination, profile.pattern, products,
                     "sim" if profile.include_pdf else "não", str(profile.exported_count), state)  # fmt: skip
            for column, text in enumerate(texts):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, column, item)

    def add(self) -> None:
        desk = self.desk
        name, kind, destination = self.name.text(), self.kind.currentData(), self.destination.text()
        pattern, pdf, mode = self.pattern.text(), self.pdf.isChecked(), self.cancelled.currentData()
        products = tuple(p for p, check in self.products.items() if check.isChecked())

        def work() -> ExportProfile:
            return desk.exports.add_profile(
                name=name, kind=kind, destination=destination, pattern=pattern,
                products=products, include_pdf=pdf, cancelled_mode=mode,
            )  # fmt: skip

        self.tasks.run(work, self._added, self._failed)

    def _added(self, profile: ExportProfile) -> None:
        self.message.setText(
            f"Perfil {profile.name} adicionado: o serviço de captura exporta para {profile.destination}."
        )
        self.message.setStyleSheet("color: #1d5e20;")
        self.name.clear()
        self.reload()

    def remove_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return
        name = self.profiles[rows[0].row()].name
        self.tasks.run(lambda: self.desk.exports.remove_profile(name), lambda _r: self.reload(), self._failed)

    def _failed(self, error: BaseException) -> None:
        self.message.setText(getattr(error, "message", None) or str(error))
        self.message.setStyleSheet("color: #a01010;")
