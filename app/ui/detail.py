"""The detail pane of the selected row: summary, event timeline, XML (pretty, searchable), preview."""

from __future__ import annotations

import html
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFont, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.core.event_types import event_name
from app.core.products import Product
from app.desk import labels
from app.desk.views import DocumentDetail
from app.store.records import DocumentKind, PartyRole

if TYPE_CHECKING:
    from PySide6.QtPdf import QPdfDocument
    from PySide6.QtPdfWidgets import QPdfView

# The NFS-e names its emitter the prestador (the service provider).
NFSE_ROLE_LABELS = {PartyRole.EMITTER: "Prestador"}
ROLE_LABELS = {
    PartyRole.EMITTER: "Emitente",
    PartyRole.RECIPIENT: "Destinatário",
    PartyRole.TRANSPORTER: "Transportador",
    PartyRole.TAKER: "Tomador",
    PartyRole.SENDER: "Remetente",
    PartyRole.SHIPPER: "Expedidor",
    PartyRole.RECEIVER: "Recebedor",
    PartyRole.INTERMEDIARY: "Intermediário",
    PartyRole.AUTHORISED: "Autorizado (autXML)",
}
MANIFEST_BUTTONS = [
    ("210210", "Ciência", "Ctrl+1"),
    ("210200", "Confirmação", "Ctrl+2"),
    ("210220", "Desconhecimento", "Ctrl+3"),
    ("210240", "Não realizada", "Ctrl+4"),
]
# NFS-e: the taker's events (rule book §6.5), only on a click.
TAKER_BUTTONS = [
    ("203202", "Confirmar (tomador)", "Ctrl+5"),
    ("203206", "Rejeitar (tomador)…", "Ctrl+6"),
]
NFE_EVENTS = frozenset(tp for tp, _text, _key in MANIFEST_BUTTONS)


def layout_name(kind: DocumentKind) -> str:
    """The layout's own name (resNFe, nfeProc...), which offices know; an unreadable one says so."""
    return "ilegível" if kind is DocumentKind.UNKNOWN else kind.value


def summary_html(detail: DocumentDetail, now: datetime) -> str:
    row = detail.row
    e = html.escape
    title = f"{row.product.label} {labels.ROW_KIND[row.row_kind]}"
    lines = [f"<h3 style='margin:0'>{e(title)} · {e(row.access_key or 'sem chave')}</h3>"]
    company = f"{e(detail.company_name)} ({labels.tax_id(detail.company_cnpj)})"
    issued = labels.local_instant(row.issued_at, row.issued_offset_minutes)
    facts = [
        ("Empresa", company),
        ("Emissão", issued.strftime("%d/%m/%Y %H:%M") if issued else "-"),
        ("Número/série", f"{row.number or '-'} / {row.serie if row.serie is not None else '-'}"),
        ("Valor", labels.money_br(row.total_cents)),
        (
            "Situação",
            labels.STATUS[row.status] + (" (cancelada após a captura)" if row.cancelled_after_capture else ""),
        ),
        ("Direção", labels.DIRECTION[row.direction]),
    ]
    if row.modal is not None:
        facts.append(("Modal", e(row.modal)))
    if row.payer_id or row.payer_name:
        facts.append(("Tomador", f"{labels.tax_id(row.payer_id)} {e(row.payer_name or '')}"))
    if row.manifestation is not None:
        facts.append(("Manifestação", labels.MANIFESTATION_STATE[row.manifestation]))
    if row.deadline is not None:
        facts.append(
            ("Prazo", f"{labels.deadline_text(row.deadline, now)} (até {labels.brasilia_text(row.deadline.due)})")
        )
    if row.quarantined:
        facts.append(("Quarentena", e(row.parse_error or "conteúdo ilegível")))
    lines.append("<table cellspacing='0' cellpadding='2'>")
    lines += [f"<tr><td><b>{name}</b></td><td>{value}</td></tr>" for name, value in facts]
    lines.append("</table>")
    if detail.parties:
        lines.append("<p><b>Partes</b><br>")
        names = {**ROLE_LABELS, **(NFSE_ROLE_LABELS if row.product is Product.NFSE else {})}
        lines += [
            f"{names.get(p.role, p.role.value)}: {labels.tax_id(p.tax_id)} {e(p.name or '')}<br>"
            for p in detail.parties
        ]
        lines.append("</p>")
    if detail.manifestations:
        lines.append("<p><b>Manifestações</b><br>")
        for m in detail.manifestations:
            status = (
                labels.REFUSED_BEFORE_SENDING
                if m.refused_before_sending
                else labels.MANIFESTATION_STATUS[m.request.status]
            )
            origin = "automática" if m.request.automatic else "manual"
            extra = f" · protocolo {e(m.request.protocol)}" if m.request.protocol else ""
            motive = f" · {e(m.request.x_motivo)}" if m.request.x_motivo else ""
            attempts = f" · {e(m.attempts)}" if m.attempts else ""
            lines.append(f"{e(m.label)} ({origin}): {status}{extra}{motive}{attempts}<br>")
        lines.append("</p>")
    if detail.related:
        title = "NF-e transportadas por este CT-e" if row.product is Product.CTE else "CT-e que transportaram esta NF-e"
        lines.append(f"<p><b>{title}</b><br>")
        for related in detail.related:
            link = f"<a href='related:{related.product.value}:{e(related.access_key)}'>{e(related.access_key)}</a>"
            other = related.row
            if other is None:
                lines.append(f"{link} · não recebida por esta empresa<br>")
            else:
                who = e(other.counterpart_name or "-")
                lines.append(f"{link} · nº {other.number or '-'} · {who} · {labels.money_br(other.total_cents)}<br>")
        lines.append("</p>")
    lines += _reform_html(detail)
    if detail.versions:
        lines.append("<p><b>Versões recebidas</b><br>")
        lines += [
            f"{'● ' if v.is_current else '○ '}{e(layout_name(v.kind))} · NSU {v.nsu or '-'} · {v.size} bytes · "
            f"recebida em {labels.brasilia_text(v.received_at)}<br>"
            for v in detail.versions
        ]
        lines.append("</p>")
    return "".join(lines)


_PURPOSES = {"5": "nota de crédito", "6": "nota de débito"}
_REFORM_VALUES = (
    ("IBS estadual", "ibs_uf_cents"), ("IBS municipal", "ibs_mun_cents"), ("IBS total", "ibs_cents"),
    ("CBS", "cbs_cents"), ("Imposto Seletivo", "is_cents"), ("Crédito presumido IBS", "ibs_presumed_cents"),
    ("Crédito presumido CBS", "cbs_presumed_cents"), ("Base IBS/CBS", "base_cents"),
    ("Total com IBS/CBS", "total_cents"),
)  # fmt: skip


def _reform_html(detail: DocumentDetail) -> list[str]:
    """The "Reforma tributária" block: IBS, CBS and IS as read (unreadable: said so, never zero),
    what kind of note it is, and the NF-e it references or that reference it."""
    reform, e = detail.reform, html.escape
    if reform is None and detail.purpose not in _PURPOSES and not detail.references:
        return []
    lines = ["<p><b>Reforma tributária</b><br>"]
    if detail.purpose in _PURPOSES:
        lines.append(f"Finalidade: {_PURPOSES[detail.purpose or '']}<br>")
    if reform is None:
        lines.append("Sem os grupos de IBS/CBS.<br>")
    else:
        if reform.unreadable:
            lines.append("<b>Valores ilegíveis no XML</b>: não somados nos relatórios.<br>")
        lines += [
            f"{name}: {labels.money_br(getattr(reform, field))}<br>"
            for name, field in _REFORM_VALUES
            if getattr(reform, field) is not None
        ]
        codes = sorted({(i.cst, i.class_code) for i in reform.items if i.cst or i.class_code}, key=str)
        if codes:
            shown = ", ".join(f"{e(cst or '-')}/{e(code or '-')}" for cst, code in codes)
            lines.append(f"CST/cClassTrib: {shown}<br>")
    for related in detail.references:
        link = f"<a href='related:{related.product.value}:{e(related.access_key)}'>{e(related.access_key)}</a>"
        lines.append(f"NF-e relacionada: {link}{'' if related.row else ' · não recebida por esta empresa'}<br>")
    lines.append("</p>")
    return lines


def timeline_html(detail: DocumentDetail) -> str:
    e = html.escape
    row = detail.row
    items = []
    if not row.is_event_row and row.issued_at is not None:
        items.append((row.issued_at, f"Emissão da {row.product.label}"))
    for event in detail.events:
        when = event.event_at or event.created_at
        protocol = f" · protocolo {event.protocol}" if event.protocol else ""
        items.append((when, f"{event_name(event.tp_evento, event.description)} (seq. {event.n_seq_evento}){protocol}"))
    if not items:
        return "<p>Nenhum evento registrado para esta chave.</p>"
    items.sort(key=lambda item: item[0])
    return "".join(f"<p><b>{labels.brasilia_text(when)}</b> — {e(text)}</p>" for when, text in items)


class DetailPane(QWidget):
    """Shows a :class:`DocumentDetail`; buttons raise signals, the window does the work."""

    manifest = Signal(str)
    save_xml = Signal()
    save_pdf = Signal()
    preview_wanted = Signal(object)  # the GridRow whose DANFE/DACTE/DANFSe the Visualização tab needs
    retry = Signal()
    open_related = Signal(object, str)  # (product, key): a linked CT-e or NF-e clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.detail: DocumentDetail | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        buttons = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for tp, text, shortcut in MANIFEST_BUTTONS + TAKER_BUTTONS:
            button = QPushButton(text, self)
            button.setObjectName(f"manifest-{tp}")
            button.setToolTip(f"{text} ({shortcut})")
            button.setShortcut(shortcut)
            button.setEnabled(False)
            button.clicked.connect(lambda _checked=False, tp=tp: self.manifest.emit(tp))
            buttons.addWidget(button)
            self.buttons[tp] = button
        buttons.addStretch(1)
        self.retry_button = QPushButton("Tentar de novo", self)
        self.retry_button.setVisible(False)
        self.retry_button.clicked.connect(self.retry.emit)
        buttons.addWidget(self.retry_button)
        self.save_button = QPushButton("Salvar XML…", self)
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self.save_xml.emit)
        buttons.addWidget(self.save_button)
        self.pdf_button = QPushButton("Salvar PDF…", self)
        self.pdf_button.setObjectName("save-pdf")
        self.pdf_button.setEnabled(False)
        self.pdf_button.clicked.connect(self.save_pdf.emit)
        buttons.addWidget(self.pdf_button)
        self.folder_button = QPushButton("Abrir pasta", self)
        self.folder_button.setToolTip("Abre a pasta onde o XML foi salvo")
        self.folder_button.setVisible(False)
        self.folder_button.clicked.connect(self._open_folder)
        buttons.addWidget(self.folder_button)
        self.saved_folder: Path | None = None
        layout.addLayout(buttons)
        self.tabs = QTabWidget(self)
        self.summary = QTextBrowser(self)
        self.summary.setObjectName("detail-summary")
        self.summary.setOpenLinks(False)
        self.summary.anchorClicked.connect(self._anchor)
        self.timeline = QTextBrowser(self)
        self.timeline.setObjectName("detail-timeline")
        xml_page = QWidget(self)
        xml_layout = QVBoxLayout(xml_page)
        xml_layout.setContentsMargins(0, 0, 0, 0)
        self.xml_search = QLineEdit(xml_page)
        self.xml_search.setPlaceholderText("Procurar no XML (Enter para o próximo)")
        self.xml_search.returnPressed.connect(self.find_in_xml)
        xml_layout.addWidget(self.xml_search)
        self.xml = QPlainTextEdit(xml_page)
        self.xml.setObjectName("detail-xml")
        self.xml.setReadOnly(True)
        self.xml.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.xml.setFont(QFont("monospace", 9))
        xml_layout.addWidget(self.xml)
        self.preview = QStackedWidget(self)
        self.preview.setObjectName("detail-preview")
        self.preview_message = QLabel(self.preview)
        self.preview_message.setObjectName("preview-message")
        self.preview_message.setWordWrap(True)
        self.preview_message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.preview_message.setStyleSheet("color: #555555; padding: 12px;")
        self.preview.addWidget(self.preview_message)
        self._pdf: tuple[QPdfDocument, QPdfView] | None = None  # built with the first preview
        self._pdf_buffer: QBuffer | None = None
        self._pdf_row: int | None = None  # the row whose PDF is shown (or asked for)
        self._pdf_basis: tuple[object, ...] | None = None  # what that PDF was made from: row, XML, events
        self.tabs.addTab(self.summary, "Resumo")
        self.tabs.addTab(self.timeline, "Eventos")
        self.tabs.addTab(xml_page, "XML")
        self.tabs.addTab(self.preview, "Visualização")
        self.tabs.currentChanged.connect(lambda _index: self._want_preview())
        layout.addWidget(self.tabs)
        self.set_product(Product.NFE)  # the first tab's
        self.clear()

    def set_product(self, product: Product) -> None:
        """The grid shown: the recipient's buttons for NF-e, the taker's for NFS-e, none for CT-e."""
        self.product = product
        for tp, button in self.buttons.items():
            button.setVisible(product is Product.NFE if tp in NFE_EVENTS else product is Product.NFSE)

    def clear(self, text: str = "Selecione um documento para ver os detalhes.") -> None:
        self.detail = None
        self.summary.setHtml(f"<p style='color:#6b6b6b'>{html.escape(text)}</p>")
        self.timeline.clear()
        self.xml.clear()
        self._show_preview_message("")
        self.pdf_button.setEnabled(False)
        for button in self.buttons.values():
            button.setEnabled(False)
        self.save_button.setEnabled(False)
        self.retry_button.setVisible(False)

    def show_detail(
        self, detail: DocumentDetail, xml: bytes | None, now: datetime, writable: bool, text: str | None = None
    ) -> None:
        """``text``: the XML already indented (on the worker that read it; ``app.desk.xmltext``)."""
        self.detail = detail
        self.summary.setHtml(summary_html(detail, now))
        self.timeline.setHtml(timeline_html(detail))
        if text is None and xml:
            from app.desk.xmltext import pretty_xml  # lxml loads with the first detail, not the window

            text = pretty_xml(xml)
        self.xml.setPlainText(text or "XML não disponível.")
        printable = xml is not None and not detail.row.is_event_row and not detail.row.quarantined
        name = labels.pdf_name(detail.row.product, detail.row.row_kind)
        self.pdf_button.setText(f"Salvar {name}…")
        self.pdf_button.setEnabled(printable)
        basis = (detail.row.row_id, hash(xml), tuple(e.id for e in detail.events)) if printable else None
        if basis is not None and basis == self._pdf_basis and self._pdf_row == detail.row.row_id:
            pass  # the same document read again (F5, a live refresh): its preview stays as it is
        else:
            self._pdf_row, self._pdf_basis = None, basis
            self._show_preview_message(
                f"Gerando o {name}…" if printable else f"Este item não tem {name}: veja o XML ou os eventos."
            )
        if printable:
            self._want_preview()
        allowed = set(detail.allowed_manifestations) if writable else set()
        self.set_product(detail.row.product)
        for tp, button in self.buttons.items():
            button.setEnabled(tp in allowed)
        self.save_button.setEnabled(xml is not None)
        self.retry_button.setVisible(detail.row.quarantined and detail.row.nsu is not None and writable)

    # ------------------------------------------------------------------ preview

    def _pdf_parts(self) -> tuple[QPdfDocument, QPdfView]:
        """The PDF viewer, built when a preview is first shown: Qt's PDF module (pdfium) and its
        view cost ~5 MB that a window left in the tray all day never uses (issue 20)."""
        if self._pdf is None:
            from PySide6.QtPdf import QPdfDocument
            from PySide6.QtPdfWidgets import QPdfView

            document = QPdfDocument(self)
            view = QPdfView(self.preview)
            view.setObjectName("pdf-view")
            view.setDocument(document)
            view.setPageMode(QPdfView.PageMode.MultiPage)
            view.setZoomMode(QPdfView.ZoomMode.FitToWidth)
            self.preview.addWidget(view)
            self._pdf = (document, view)
        return self._pdf

    @property
    def pdf_document(self) -> QPdfDocument:
        return self._pdf_parts()[0]

    @property
    def pdf_view(self) -> QPdfView:
        return self._pdf_parts()[1]

    def _want_preview(self) -> None:
        """The PDF is rendered only when its tab is shown (on a worker, by the window)."""
        detail = self.detail
        if detail is None or self.tabs.currentWidget() is not self.preview or not self.pdf_button.isEnabled():
            return
        if self._pdf_row == detail.row.row_id:
            return
        self._pdf_row = detail.row.row_id
        self.preview_wanted.emit(detail.row)

    def show_pdf(self, row_id: int, content: bytes) -> None:
        if self.detail is None or self.detail.row.row_id != row_id:
            return  # the selection moved on
        self.pdf_document.close()
        buffer = QBuffer(self)
        buffer.setData(QByteArray(content))
        buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        self.pdf_document.load(buffer)
        if self._pdf_buffer is not None:
            self._pdf_buffer.deleteLater()
        self._pdf_buffer = buffer
        self.preview.setCurrentWidget(self.pdf_view)

    def pdf_failed(self, row_id: int, message: str) -> None:
        if self.detail is not None and self.detail.row.row_id == row_id:
            self._pdf_row = None  # showing the tab again tries again
            self._show_preview_message(message)

    def _show_preview_message(self, text: str) -> None:
        self.preview_message.setText(text)
        self.preview.setCurrentWidget(self.preview_message)

    def _anchor(self, url: QUrl) -> None:
        kind, _sep, rest = url.toString().partition(":")
        product, _sep, key = rest.partition(":")
        if kind == "related" and key:
            self.open_related.emit(Product(product), key)

    def saved(self, path: Path) -> None:
        """A file was written: offer to open its folder."""
        self.saved_folder = path.parent
        self.folder_button.setVisible(True)

    def _open_folder(self) -> None:
        if self.saved_folder is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.saved_folder)))

    def find_in_xml(self) -> bool:
        text = self.xml_search.text()
        if not text:
            return False
        if self.xml.find(text):
            return True
        cursor = self.xml.textCursor()
        cursor.movePosition(cursor.MoveOperation.Start)
        self.xml.setTextCursor(cursor)
        return bool(self.xml.find(text, QTextDocument.FindFlag(0)))
