"""The first-run assistant: the data folder, the first company from its A1 certificate (and what to
capture for it), an export folder and the ICP-Brasil chain, in four skippable pages.

It opens by itself on a first start (no company and never dismissed: the dismissal is kept in the
user's preferences) and from Ajuda > Assistente de primeiros passos. The window without a company
shows a panel that points to it. What it changes goes through the desk on the window's workers:
the company through the company dialog, the folder and the chain through the settings'
``preferences.save``, the export folder as an export profile.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
    QWizard,
    QWizardPage,
)

from app.core.products import Product
from app.desk import exports, preferences
from app.desk.preferences import Preferences
from app.desk.views import CompanyLine
from app.ui.company_dialog import CompanyDialog
from app.ui.settings_dialog import choose_bundle, choose_folder, next_data_dir, typed_path
from app.ui.window_host import WindowHost

DISMISSED_KEY = "first_run/dismissed"
TITLE = "Assistente de primeiros passos"
NOTE_STYLE = "color: #555555;"
ERROR_STYLE = "color: #a01010;"
EXPORT_PROFILE = "Pasta de exportação"
EMPTY_TEXT = (
    "<b>Nenhuma empresa cadastrada ainda.</b> O assistente de primeiros passos cadastra a primeira "
    "empresa pelo certificado A1, escolhe o que capturar e explica a cadeia ICP-Brasil que os "
    "serviços do governo exigem."
)
CHAIN_TEXT = (
    "<p>Os servidores da SEFAZ e da NFS-e Nacional se identificam com certificados emitidos pela "
    "<b>ICP-Brasil</b>, a infraestrutura de chaves públicas do governo. A cada conexão o programa confere "
    "que fala com o servidor verdadeiro, e para isso precisa da cadeia dessas autoridades certificadoras.</p>"
)


def _data_note_text(data_dir: object) -> str:
    return f"Esta janela usa {data_dir}.\nUma pasta nova vale a partir da próxima abertura do programa."


def _note(text: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    label.setWordWrap(True)
    label.setStyleSheet(NOTE_STYLE)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _path_row(edit: QLineEdit, choose: Any, parent: QWidget) -> QHBoxLayout:
    row = QHBoxLayout()
    row.addWidget(edit, 1)
    button = QPushButton("Escolher…", parent)
    button.clicked.connect(choose)
    row.addWidget(button)
    return row


class FirstRunWizard(QWizard):
    """The four pages; ``finish`` applies what was filled in (on a worker), ``result_notes`` says what."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.current: Preferences | None = None
        self.company_dialog: CompanyDialog | None = None
        self.result_notes: list[str] = []
        self.setObjectName("first-run")
        self.setWindowTitle(TITLE)
        self.setWizardStyle(QWizard.WizardStyle.ClassicStyle)
        self.setMinimumSize(720, 480)
        self.setButtonText(QWizard.WizardButton.NextButton, "Avançar >")
        self.setButtonText(QWizard.WizardButton.BackButton, "< Voltar")
        self.setButtonText(QWizard.WizardButton.FinishButton, "Concluir")
        self.setButtonText(QWizard.WizardButton.CancelButton, "Pular o assistente")
        for page in (self._folder_page(), self._company_page(), self._export_page(), self._chain_page()):
            self.addPage(page)
        self.message = QLabel(self)
        self.message.setObjectName("first-run-message")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(ERROR_STYLE)
        self.chain_layout.addWidget(self.message)
        host.tasks.run(lambda: preferences.read(host.desk), self._loaded)

    # ------------------------------------------------------------------ pages

    def _folder_page(self) -> QWizardPage:
        page = QWizardPage(self)
        page.setTitle("Bem-vindo ao Captura DF-e")
        page.setSubTitle("Onde ficam os documentos capturados")
        layout = QVBoxLayout(page)
        layout.addWidget(
            _note(
                "O programa guarda os XML, os PDFs e o banco de dados numa pasta de dados deste computador. "
                "Pastas de rede não servem (o banco SQLite se corrompe nelas); para vários computadores do "
                "escritório verem os mesmos documentos, use o banco do escritório (PostgreSQL).",
                page,
            )
        )
        self.data_dir = QLineEdit(page)
        self.data_dir.setObjectName("first-run-data-dir")
        layout.addLayout(_path_row(self.data_dir, self._choose_data_dir, page))
        self.data_note = _note(_data_note_text(self.host.desk.data_dir), page)  # full text: laid out wrapped
        layout.addWidget(self.data_note)
        layout.addStretch(1)
        return page

    def _company_page(self) -> QWizardPage:
        page = QWizardPage(self)
        page.setTitle("A primeira empresa e o que capturar")
        page.setSubTitle("Pelo certificado digital A1 (arquivo .pfx ou .p12) da empresa")
        layout = QVBoxLayout(page)
        layout.addWidget(
            _note(
                "O certificado A1 identifica a empresa nos serviços do governo; ele fica guardado no cofre de "
                "senhas do Windows, nunca em arquivo aberto. Na mesma janela, escolha os produtos a capturar "
                "(NF-e, CT-e, NFS-e) e, para a NF-e, se a Ciência da Operação é registrada sozinha.",
                page,
            )
        )
        self.add_company = QPushButton("Cadastrar empresa pelo certificado A1…", page)
        self.add_company.setObjectName("first-run-add-company")
        self.add_company.clicked.connect(self.open_company)
        layout.addWidget(self.add_company, 0, Qt.AlignmentFlag.AlignLeft)
        self.company_note = _note("Você também pode cadastrar depois, em Empresas > Adicionar empresa.", page)
        self.company_note.setObjectName("first-run-company-note")
        layout.addWidget(self.company_note)
        layout.addStretch(1)
        return page

    def _export_page(self) -> QWizardPage:
        page = QWizardPage(self)
        page.setTitle("Pasta de exportação (opcional)")
        page.setSubTitle("Uma cópia dos XML capturados, organizada por empresa e mês")
        layout = QVBoxLayout(page)
        self.export_on = QCheckBox("Copiar os documentos capturados para esta pasta, automaticamente", page)
        self.export_on.setObjectName("first-run-export-on")
        layout.addWidget(self.export_on)
        self.export_dir = QLineEdit(page)
        self.export_dir.setObjectName("first-run-export-dir")
        self.export_dir.setPlaceholderText("Por exemplo, a pasta que o sistema contábil importa")
        self.export_dir.textChanged.connect(lambda text: self.export_on.setChecked(bool(text.strip())))
        layout.addLayout(_path_row(self.export_dir, self._choose_export_dir, page))
        layout.addWidget(
            _note(
                "Outros formatos (a pasta de importação do ERP, só os autorizados) ficam em Ferramentas > "
                "Perfis de exportação automática.",
                page,
            )
        )
        layout.addStretch(1)
        return page

    def _chain_page(self) -> QWizardPage:
        page = self.chain_page = QWizardPage(self)
        page.setTitle("A cadeia de certificados ICP-Brasil")
        page.setSubTitle("O que é, de onde vem e onde indicar")
        layout = self.chain_layout = QVBoxLayout(page)
        what = QLabel(CHAIN_TEXT, page)
        what.setWordWrap(True)
        layout.addWidget(what)
        layout.addWidget(_note(preferences.ICP_BUNDLE_NOTE, page))
        self.bundle = QLineEdit(page)
        self.bundle.setObjectName("first-run-bundle")
        self.bundle.setPlaceholderText("Cadeia da ICP-Brasil do ITI (.p7b, .zip, .pem ou .crt)")
        layout.addLayout(_path_row(self.bundle, self._choose_bundle, page))
        self.bundle_note = _note("", page)
        self.bundle_note.setObjectName("first-run-bundle-note")
        layout.addWidget(self.bundle_note)
        layout.addStretch(1)
        return page

    def _loaded(self, current: Preferences) -> None:
        self.current = current
        self.data_dir.setText(str(current.next_data_dir or current.data_dir))
        self.data_note.setText(_data_note_text(current.data_dir))
        self.bundle.setText(str(current.icp_brasil_bundle or ""))
        self.bundle_note.setText(
            "Cadeia indicada: o programa confere o arquivo ao concluir."
            if current.icp_brasil_bundle
            else "Nenhum arquivo indicado: vale o repositório de certificados do Windows."
        )

    # ------------------------------------------------------------------ choices

    def _choose_data_dir(self) -> None:
        choose_folder(self, self.data_dir, "Pasta de dados")

    def _choose_export_dir(self) -> None:
        choose_folder(self, self.export_dir, "Pasta de exportação")

    def _choose_bundle(self) -> None:
        choose_bundle(self, self.bundle)

    def open_company(self) -> None:
        dialog = CompanyDialog(self.host.desk, self.host.tasks, None, self)
        dialog.saved.connect(self._company_saved)
        self.company_dialog = dialog
        dialog.open()

    def _company_saved(self, _company_id: int) -> None:
        self.company_note.setText("Empresa cadastrada. A captura começa sozinha; cadastre outras em Empresas.")
        self.add_company.setText("Cadastrar outra empresa…")
        self.host.refresh_companies()

    # ------------------------------------------------------------------ finishing

    def chosen(self) -> tuple[Preferences | None, Path | None]:
        """The preferences to save (None: unchanged or not read yet) and the export folder (None: none)."""
        export = typed_path(self.export_dir.text()) if self.export_on.isChecked() else None
        if self.current is None:
            return None, export
        updated = replace(
            self.current,
            next_data_dir=next_data_dir(self.current, self.data_dir.text()),
            icp_brasil_bundle=typed_path(self.bundle.text()),
        )
        return (None if updated == self.current else updated), export

    def accept(self) -> None:
        """Concluir: save on a worker; a refusal (an unreadable chain) keeps the assistant open."""
        chosen, export = self.chosen()
        desk = self.host.desk
        self.button(QWizard.WizardButton.FinishButton).setEnabled(False)
        self.message.setText("")

        def work() -> list[str]:
            notes = preferences.save(desk, chosen) if chosen is not None else []
            if export is not None:
                desk.exports.add_profile(
                    name=EXPORT_PROFILE,
                    kind=exports.ARCHIVE,
                    destination=str(export),
                    pattern="",
                    products=tuple(Product),
                    include_pdf=False,
                    cancelled_mode="move",
                )
                notes.append(f"Os documentos capturados serão copiados para {export}.")
            return [n for n in notes if n != "Nada foi alterado."]

        self.host.tasks.run(work, self._applied, self._refused)

    def _applied(self, notes: list[str]) -> None:
        self.result_notes = notes
        if notes:
            self.host.statusBar().showMessage(" ".join(notes), 20_000)
        super().accept()

    def _refused(self, error: BaseException) -> None:
        self.button(QWizard.WizardButton.FinishButton).setEnabled(True)
        self.message.setText(getattr(error, "message", None) or str(error))


class FirstRun(QObject):
    """Opens the assistant (by itself on a first start, or from the menu) and keeps the panel that
    the window without a company shows."""

    def __init__(self, host: WindowHost) -> None:
        super().__init__(host.window())
        self.host = host
        self.wizard: FirstRunWizard | None = None
        self.panel = QWidget(host.window())
        self.panel.setObjectName("first-run-panel")
        self.panel.setStyleSheet("QWidget#first-run-panel { background: #eef5fb; border: 1px solid #b9d3ea; }")
        row = QHBoxLayout(self.panel)
        text = QLabel(EMPTY_TEXT, self.panel)
        text.setWordWrap(True)
        row.addWidget(text, 1)
        self.open_button = QPushButton("Abrir o assistente", self.panel)
        self.open_button.setObjectName("first-run-open")
        self.open_button.clicked.connect(self.open)
        row.addWidget(self.open_button)
        self.panel.setVisible(False)

    @property
    def dismissed(self) -> bool:
        return str(self.host.settings.value(DISMISSED_KEY, "false")).lower() == "true"

    def companies_listed(self, lines: list[CompanyLine], first: bool) -> None:
        """The panel shows while there is no company; the first listing of none opens the assistant."""
        empty = not lines and self.host.writable
        self.panel.setVisible(empty)
        if empty and first and not self.dismissed:
            self.open()

    def open(self) -> None:
        if not self.host.writable:
            return
        if self.wizard is not None and self.wizard.isVisible():
            self.wizard.raise_()
            return
        wizard = self.wizard = FirstRunWizard(self.host)
        wizard.finished.connect(lambda _result: self._closed())
        wizard.open()

    def _closed(self) -> None:
        """Finished or skipped: it does not open by itself again (the menu still has it)."""
        self.host.settings.setValue(DISMISSED_KEY, "true")
        self.host.settings.sync()
