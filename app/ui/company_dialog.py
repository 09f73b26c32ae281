"""Add or edit a client company: its A1 certificate (checked and shown before saving), the CNPJ
(a branch of the certificate's root), and what is captured for it, per product.

Reading the file, opening the certificate and saving all run on the window's workers; the
dialog only shows what comes back, with the certificate's own Portuguese message on a problem.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QDate, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.documents import PartyRole
from app.core.products import Environment, Product
from app.desk import companies as admin
from app.desk import labels
from app.desk.companies import CertificatePreview
from app.store.records import CaptureSettings
from app.ui.tasks import Tasks

if TYPE_CHECKING:
    from app.desk.desk import Desk

ENVIRONMENTS = ((Environment.PRODUCAO, "Produção"), (Environment.HOMOLOGACAO, "Homologação (testes)"))
CTE_ROLES = (
    (PartyRole.TAKER, "Tomador"),
    (PartyRole.SENDER, "Remetente"),
    (PartyRole.SHIPPER, "Expedidor"),
    (PartyRole.RECEIVER, "Recebedor"),
    (PartyRole.RECIPIENT, "Destinatário"),
    (PartyRole.EMITTER, "Emitente"),
)
MIN_WAIT, MAX_WAIT = 5, 24 * 60
ERROR_STYLE = "color: #a01010;"
OK_STYLE = "color: #1d5e20;"


def read_file(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        from app.core.errors import CapturaError

        raise CapturaError(f"Não foi possível ler o arquivo {path}: {error.strerror or error}.") from error


class ProductBox(QGroupBox):
    """One product's switch and options; ``settings()`` gives them back as stored settings."""

    def __init__(self, product: Product, parent: QWidget | None = None) -> None:
        super().__init__(f"Capturar {product.label}", parent)
        self.product = product
        self.setCheckable(True)
        self.setObjectName(f"product-{product.value}")
        form = QFormLayout(self)
        self.environment = QComboBox(self)
        for env, text in ENVIRONMENTS:
            self.environment.addItem(text, env)
        form.addRow("Ambiente", self.environment)
        self.auto_ciencia: QCheckBox | None = None
        self.wait: QSpinBox | None = None
        self.event_types: QLineEdit | None = None
        self.roles: dict[PartyRole, QCheckBox] = {}
        self.cutoff: QDateEdit | None = None
        self.own_issued: QCheckBox | None = None
        if product is Product.NFE:
            self.auto_ciencia = QCheckBox("Ciência da Operação automática para resumos recebidos", self)
            self.wait = QSpinBox(self)
            self.wait.setRange(MIN_WAIT, MAX_WAIT)
            self.wait.setSuffix(" min")
            self.wait.setToolTip("Espera mínima de 5 minutos depois que o resumo chega.")
            form.addRow(self.auto_ciencia)
            form.addRow("Esperar antes da Ciência", self.wait)
        elif product is Product.CTE:
            self.event_types = QLineEdit(self)
            self.event_types.setPlaceholderText("Todos (ou códigos separados por vírgula, ex.: 110111, 610110)")
            form.addRow("Eventos que avisam", self.event_types)
            roles = QWidget(self)
            grid = QGridLayout(roles)
            grid.setContentsMargins(0, 0, 0, 0)
            for index, (role, text) in enumerate(CTE_ROLES):
                box = QCheckBox(text, roles)
                self.roles[role] = box
                grid.addWidget(box, index // 3, index % 3)
            form.addRow("Avisar quando a empresa é", roles)
            hint = QLabel("Nenhum papel marcado: avisa em todos.", self)
            hint.setStyleSheet("color: #6b6b6b;")
            form.addRow("", hint)
        else:
            self.cutoff = QDateEdit(self)
            self.cutoff.setCalendarPopup(True)
            self.cutoff.setDisplayFormat("dd/MM/yyyy")
            self.cutoff.setSpecialValueText("Sem data de corte")
            self.cutoff.setMinimumDate(QDate(2020, 1, 1))
            self.cutoff.setDate(self.cutoff.minimumDate())
            form.addRow("Listar a partir de", self.cutoff)
            self.own_issued = QCheckBox("Capturar também as NFS-e emitidas pela própria empresa", self)
            form.addRow(self.own_issued)

    def show_settings(self, settings: CaptureSettings) -> None:
        self.setChecked(settings.enabled)
        self.environment.setCurrentIndex(max(0, self.environment.findData(settings.environment)))
        if self.auto_ciencia is not None and self.wait is not None:
            self.auto_ciencia.setChecked(settings.auto_ciencia)
            self.wait.setValue(max(MIN_WAIT, settings.ciencia_wait_minutes))
        if self.event_types is not None:
            self.event_types.setText(", ".join(settings.cte_event_types))
            for role, box in self.roles.items():
                box.setChecked(role in settings.cte_party_roles)
        if self.cutoff is not None and self.own_issued is not None:
            cutoff = settings.nfse_cutoff_date
            self.cutoff.setDate(QDate(cutoff.year, cutoff.month, cutoff.day) if cutoff else self.cutoff.minimumDate())
            self.own_issued.setChecked(settings.nfse_capture_own_issued)

    def settings(self, base: CaptureSettings) -> CaptureSettings:
        changes: dict[str, Any] = {"enabled": self.isChecked(), "environment": self.environment.currentData()}
        if self.auto_ciencia is not None and self.wait is not None:
            changes["auto_ciencia"] = self.auto_ciencia.isChecked()
            changes["ciencia_wait_minutes"] = self.wait.value()
        if self.event_types is not None:
            parts = (p.strip() for p in self.event_types.text().split(","))
            changes["cte_event_types"] = tuple(dict.fromkeys(p for p in parts if p))
            changes["cte_party_roles"] = tuple(r for r, box in self.roles.items() if box.isChecked())
        if self.cutoff is not None and self.own_issued is not None:
            chosen = self.cutoff.date()
            changes["nfse_cutoff_date"] = (
                None if chosen == self.cutoff.minimumDate() else date(chosen.year(), chosen.month(), chosen.day())
            )
            changes["nfse_capture_own_issued"] = self.own_issued.isChecked()
        return replace(base, **changes)


class CompanyDialog(QDialog):
    """``company_id`` None adds a company; otherwise edits it (and may replace its certificate).
    ``saved`` carries the company id once everything is stored."""

    saved = Signal(int)

    def __init__(self, desk: Desk, tasks: Tasks, company_id: int | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desk, self.tasks, self.company_id = desk, tasks, company_id
        self.preview: CertificatePreview | None = None
        self.pfx: bytes | None = None
        self.stored: dict[Product, CaptureSettings] = {}
        self.setWindowTitle("Nova empresa" if company_id is None else "Editar empresa")
        self.setObjectName("company-dialog")
        self.setMinimumWidth(640)
        layout = QVBoxLayout(self)
        layout.addWidget(self._certificate_box())
        layout.addWidget(self._company_box())
        self.products: dict[Product, ProductBox] = {}
        tabs = QTabWidget(self)
        for product in Product:
            box = ProductBox(product, tabs)
            box.setChecked(True)
            self.products[product] = box
            tabs.addTab(box, product.label)
        layout.addWidget(tabs)
        self.message = QLabel(self)
        self.message.setObjectName("company-message")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setText("Salvar")
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("Cancelar")
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._set_saving(False)
        if company_id is not None:
            self.tasks.run(lambda: self._load(company_id), self._loaded, self._failed)

    # ------------------------------------------------------------------ building

    def _certificate_box(self) -> QGroupBox:
        box = QGroupBox("Certificado digital A1 (.pfx / .p12)", self)
        form = QFormLayout(box)
        row = QHBoxLayout()
        self.path = QLineEdit(box)
        self.path.setObjectName("pfx-path")
        self.path.setPlaceholderText("Arquivo do certificado")
        choose = QPushButton("Escolher…", box)
        choose.clicked.connect(self._choose)
        row.addWidget(self.path, 1)
        row.addWidget(choose)
        form.addRow("Arquivo", row)
        self.password = QLineEdit(box)
        self.password.setObjectName("pfx-password")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.returnPressed.connect(self.check_certificate)
        check_row = QHBoxLayout()
        check_row.addWidget(self.password, 1)
        self.check = QPushButton("Verificar certificado" if self.company_id is None else "Substituir certificado", box)
        self.check.setObjectName("check-certificate")
        self.check.clicked.connect(self.check_certificate)
        check_row.addWidget(self.check)
        form.addRow("Senha", check_row)
        self.certificate = QLabel(
            "Escolha o arquivo e digite a senha: o certificado é conferido antes de salvar."
            if self.company_id is None
            else "Carregando…",
            box,
        )
        self.certificate.setObjectName("certificate-info")
        self.certificate.setWordWrap(True)
        self.certificate.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.certificate)
        return box

    def _company_box(self) -> QGroupBox:
        box = QGroupBox("Empresa", self)
        form = QFormLayout(box)
        self.cnpj = QLineEdit(box)
        self.cnpj.setObjectName("company-cnpj")
        self.cnpj.setPlaceholderText("O do certificado, ou o de uma filial com a mesma raiz")
        self.name = QLineEdit(box)
        self.name.setObjectName("company-name")
        self.name.setPlaceholderText("Razão social do certificado")
        form.addRow("CNPJ", self.cnpj)
        form.addRow("Nome", self.name)
        if self.company_id is not None:
            self.cnpj.setReadOnly(True)
            self.name.setReadOnly(True)
        return box

    # ------------------------------------------------------------------ loading and checking

    def _load(self, company_id: int) -> tuple[Any, dict[Product, CaptureSettings]]:
        line = next(c for c in self.desk.companies() if c.company_id == company_id)
        return line, self.desk.admin.settings_of(company_id)

    def _loaded(self, result: tuple[Any, dict[Product, CaptureSettings]]) -> None:
        line, settings = result
        self.stored = settings
        self.cnpj.setText(labels.tax_id(line.cnpj))
        self.name.setText(line.name)
        for product, box in self.products.items():
            box.show_settings(settings[product])
        if line.certificate_problem:
            self._show(self.certificate, f"Certificado atual: {line.certificate_problem}", error=True)
        else:
            valid = labels.brasilia_text(line.certificate_not_after)[:10]
            self._show(
                self.certificate,
                f"Certificado atual válido até {valid}. Para trocá-lo, escolha o novo "
                "arquivo, digite a senha e clique em Substituir certificado.",
            )

    def _choose(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Certificado A1", str(Path.home()), "Certificado A1 (*.pfx *.p12);;Todos os arquivos (*)"
        )
        if path:
            self.path.setText(path)
            self.password.setFocus()

    def check_certificate(self) -> None:
        """Open the file with the password on a worker; show who it belongs to, or why not.
        When editing, a good certificate replaces the current one at once."""
        path, password = self.path.text().strip(), self.password.text()
        if not path:
            self._show(self.certificate, "Escolha o arquivo do certificado (.pfx ou .p12).", error=True)
            return
        self.check.setEnabled(False)
        self._show(self.certificate, "Conferindo o certificado…")
        desk, company_id = self.desk, self.company_id

        def work() -> tuple[bytes, CertificatePreview]:
            pfx = read_file(path)
            if company_id is None:
                return pfx, admin.preview_certificate(pfx, password, desk.now())
            return pfx, desk.admin.replace_certificate(company_id, pfx, password)

        self.tasks.run(work, self._checked, self._certificate_failed)

    def _checked(self, result: tuple[bytes, CertificatePreview]) -> None:
        self.pfx, self.preview = result
        self.check.setEnabled(True)
        text = "\n".join(self.preview.lines)
        days = self.preview.days_left
        if days <= 30:
            text += f"\n⚠ Vence em {days} dia{'s' if days != 1 else ''}: providencie a renovação."
        if self.company_id is not None:
            text = "Certificado substituído. A captura continua do ponto em que estava.\n" + text
            self.password.clear()
        elif self.preview.cnpj and not self.cnpj.text().strip():
            self.cnpj.setText(labels.tax_id(self.preview.cnpj))
        if self.company_id is None and not self.name.text().strip():
            self.name.setText(self.preview.holder_name)
        self._show(self.certificate, text, ok=True)
        if self.company_id is not None:
            self.saved.emit(self.company_id)

    def _certificate_failed(self, error: BaseException) -> None:
        self.check.setEnabled(True)
        self.preview = None
        self._show(self.certificate, getattr(error, "message", None) or str(error), error=True)

    # ------------------------------------------------------------------ saving

    def save(self) -> None:
        if self.company_id is None and (self.preview is None or self.pfx is None):
            self._show(self.message, "Confira o certificado (arquivo e senha) antes de salvar.", error=True)
            return
        self._set_saving(True)
        self._show(self.message, "Salvando…")
        desk, company_id = self.desk, self.company_id
        boxes = dict(self.products)
        environment = boxes[Product.NFE].environment.currentData()
        stored = dict(self.stored)
        pfx, password = self.pfx, self.password.text()
        cnpj, name = self.cnpj.text().strip(), self.name.text().strip()

        def collect(target: int) -> list[CaptureSettings]:
            current = stored or desk.admin.settings_of(target)
            return [box.settings(current[p]) for p, box in boxes.items()]

        enabled = tuple(p for p, box in boxes.items() if box.isChecked())

        def work() -> int:
            target = company_id
            if target is None:
                assert pfx is not None
                company = desk.admin.add_company(
                    pfx,
                    password,
                    cnpj=cnpj or None,
                    name=name or None,
                    environment=environment,
                    products=enabled,
                )
                target = company.id
            desk.admin.save_settings(collect(target))
            return target

        self.tasks.run(work, self._saved, self._failed)

    def _saved(self, company_id: int) -> None:
        self._set_saving(False)
        self.saved.emit(company_id)
        self.accept()

    def _failed(self, error: BaseException) -> None:
        self._set_saving(False)
        self._show(self.message, getattr(error, "message", None) or str(error), error=True)

    def _set_saving(self, saving: bool) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(not saving)

    @staticmethod
    def _show(label: QLabel, text: str, *, error: bool = False, ok: bool = False) -> None:
        label.setText(text)
        label.setStyleSheet(ERROR_STYLE if error else OK_STYLE if ok else "")
