from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QWidget
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from app.core.manifestation import ManifestationState
from app.core.products import Product
from app.desk import Desk
from app.store.records import RowKind
from app.ui.filters import default_period, parse_cents
from app.ui.grid_model import ROW_ROLE
from app.ui.main_window import MainWindow
from app.ui.manifest_dialog import ManifestDialog
from tests.desk.conftest import Office
from tests.pdf.pdftools import flat, page_texts


def _window(qtbot: QtBot, desk: Desk, tmp_path: Path) -> MainWindow:
    window = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: window.models[Product.NFE].total is not None, timeout=20_000)
    qtbot.waitUntil(lambda: bool(window.company_list.lines), timeout=20_000)
    return window


def _rows(window: MainWindow) -> list:
    return list(window.models[Product.NFE].rows)


def _select(window: MainWindow, qtbot: QtBot, key: str) -> None:
    view = window.views[Product.NFE]
    model = window.models[Product.NFE]
    position = next(i for i, r in enumerate(model.rows) if r.access_key == key)
    view.selectRow(position)
    qtbot.waitUntil(
        lambda: window.detail.detail is not None and window.detail.detail.row.access_key == key, timeout=20_000
    )


def test_the_window_lists_the_captured_documents_at_once(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    window = _window(qtbot, desk, tmp_path)
    rows = _rows(window)
    assert {r.access_key for r in rows} == {*office.received, office.event_only}
    assert window.count_label.text() == "4 documentos"
    assert window.windowTitle() == "Captura DF-e"
    assert str(office.harness.office.data_dir) in window.folder_label.text()
    event_rows = [r for r in rows if r.row_kind is RowKind.EVENT]
    assert [r.access_key for r in event_rows] == [office.event_only]
    # "Todas as empresas" on top, then the company with its NF-e badge.
    assert window.company_list.count() == 2
    assert window.company_list.item(0).text().startswith("Todas as empresas")
    assert "NF-e:" in window.company_list.item(1).text()
    # The cancelled-after-capture alert is on the banner and on its row.
    qtbot.waitUntil(lambda: window.banner.isVisible())
    assert "cancelada" in window.banner.text()
    model = window.models[Product.NFE]
    position = next(i for i, r in enumerate(rows) if r.access_key == office.cancelled)
    status = [c.name for c in model.columns].index("status")
    assert model.data(model.index(position, status)) == "cancelada após captura"
    # An empty grid says why, in Portuguese (NFS-e is captured too; none in this period).
    window.tabs.setCurrentIndex(list(Product).index(Product.NFSE))
    empty = window.empty_labels[Product.NFSE]
    qtbot.waitUntil(lambda: empty.isVisible())
    assert empty.text() == "Nenhuma NFS-e no período escolhido."
    window.tabs.setCurrentIndex(list(Product).index(Product.CTE))
    qtbot.waitUntil(lambda: window.empty_labels[Product.CTE].isVisible())
    assert window.empty_labels[Product.CTE].text() == "Nenhum CT-e no período escolhido."


def test_search_by_key_then_detail_shows_the_xml(qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path) -> None:
    window = _window(qtbot, desk, tmp_path)
    key = office.received[1]
    window.search.setText(" ".join(key[i : i + 4] for i in range(0, 44, 4)))  # as printed on a DANFE
    window.apply_filters()
    qtbot.waitUntil(lambda: [r.access_key for r in _rows(window)] == [key] and window.models[Product.NFE].total == 1)
    _select(window, qtbot, key)
    assert key in window.detail.summary.toPlainText()
    assert "<resNFe" in window.detail.xml.toPlainText()
    assert window.detail.buttons["210210"].isEnabled()
    assert window.detail.pdf_button.text() == "Salvar PDF do resumo…"  # its page says it is no DANFE
    window.detail.xml_search.setText("chNFe")
    assert window.detail.find_in_xml()
    # A key scanned with a digit missing, or with a wrong check digit: the grid says what is wrong.
    empty = window.empty_labels[Product.NFE]
    window.search.setText(key[:43])
    window.apply_filters()
    qtbot.waitUntil(lambda: empty.isVisible() and empty.text().startswith("Chave com 43 dígitos"))
    assert empty.text() == "Chave com 43 dígitos: uma chave de NF-e ou CT-e tem 44."
    wrong = str((int(key[43]) + 1) % 10)
    window.search.setText(key[:43] + wrong)
    window.apply_filters()
    expected = f"Dígito verificador da chave não confere: esperado {key[43]}, informado {wrong}."
    qtbot.waitUntil(lambda: empty.text() == expected)


def test_manifest_one_row_then_a_batch(qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path) -> None:
    window = _window(qtbot, desk, tmp_path)
    model = window.models[Product.NFE]
    first, second = office.received[1], office.received[2]
    [row] = [r for r in model.rows if r.access_key == first]
    window.manifestations.send_manifestations("210210", [row], None)
    qtbot.waitUntil(lambda: getattr(window.manifestations, "last_outcomes", None) is not None, timeout=15_000)
    [(fresh, outcome)] = window.manifestations.last_outcomes
    assert outcome.accepted, outcome.message
    assert fresh.manifestation is ManifestationState.CIENCIA
    # Its resumo's page no longer asks for the Ciência (the stored answer is among its events).
    assert fresh.row_kind is RowKind.SUMMARY
    page = flat(page_texts(desk.pdf(fresh))[0])
    assert "A Ciência da Operação desta nota já foi registrada" in page and "registre a Ciência" not in page
    assert next(r for r in model.rows if r.access_key == first).manifestation is ManifestationState.CIENCIA
    window.manifestations.last_result.close()
    batch = [r for r in model.rows if r.access_key in (first, second)]
    window.manifestations.last_outcomes = None
    window.manifestations.send_manifestations("210200", batch, None)
    qtbot.waitUntil(
        lambda: window.manifestations.last_outcomes is not None and len(window.manifestations.last_outcomes) == 2,
        timeout=15_000,
    )
    assert all(o.accepted for _r, o in window.manifestations.last_outcomes), [
        o.message for _r, o in window.manifestations.last_outcomes
    ]
    states = {r.access_key: r.manifestation for r in model.rows if r.access_key in (first, second)}
    assert states == {first: ManifestationState.CONFIRMED, second: ManifestationState.CONFIRMED}
    window.manifestations.last_result.close()
    assert office.harness.sandbox.referee.report()["violations"] == []


def test_the_justification_dialog_enforces_15_to_255_characters(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    window = _window(qtbot, desk, tmp_path)
    rows = [r for r in _rows(window) if r.access_key in office.received[1:]]
    dialog = ManifestDialog("210240", rows, window)
    qtbot.addWidget(dialog)
    assert dialog.findChild(type(dialog.list)) is not None and dialog.list.count() == 2
    assert not dialog.send.isEnabled()
    assert dialog.text is not None
    dialog.text.setPlainText("curta")
    assert not dialog.send.isEnabled()
    dialog.text.setPlainText("Mercadoria devolvida ao fornecedor")
    assert dialog.send.isEnabled() and dialog.justification() == "Mercadoria devolvida ao fornecedor"
    dialog.text.setPlainText("x" * 256)
    assert not dialog.send.isEnabled()
    ciencia = ManifestDialog("210210", rows[:1], window)
    qtbot.addWidget(ciencia)
    assert ciencia.text is None and ciencia.send.isEnabled()
    assert ciencia.buttons.button(QDialogButtonBox.StandardButton.Cancel) is not None


def test_the_grid_model_passes_qt_model_tester(qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path) -> None:
    window = _window(qtbot, desk, tmp_path)
    model = window.models[Product.NFE]
    tester = ModelTester(None)
    tester.check(model, force_py=True)
    assert model.data(model.index(0, 0), ROW_ROLE) is not None


def test_copy_keys_and_settings_persist(qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path) -> None:
    window = _window(qtbot, desk, tmp_path)
    _select(window, qtbot, office.received[2])
    window.copy_keys()
    assert QApplication.clipboard().text() == office.received[2]
    window.kind.setCurrentIndex(2)  # "Completa"
    window.close()
    again = MainWindow(desk, settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(again)
    assert again.kind.currentIndex() == 2


def test_default_period_and_money_parsing() -> None:
    from datetime import date

    assert default_period(date(2026, 12, 1)) == (date(2026, 11, 1), date(2026, 12, 1))
    assert default_period(date(2026, 1, 15)) == (date(2025, 12, 1), date(2026, 1, 15))
    assert parse_cents("1.234,56") == 123456 and parse_cents("R$ 10") == 1000 and parse_cents("abc") is None


def test_selecting_a_company_filters_its_documents(qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path) -> None:
    window = _window(qtbot, desk, tmp_path)
    company_item = window.company_list.item(1)
    window.company_list.setCurrentItem(company_item)
    model = window.models[Product.NFE]
    qtbot.waitUntil(lambda: model.grid_filter.company_ids == (office.harness.company.id,) and model.total == 4)
    assert window.settings.value("last_company") == office.harness.company.cnpj.value
    before = window.company_list.item(1)
    window.refresh_companies()  # what the 5-second timer does
    qtbot.waitUntil(lambda: window.tasks.pending == 0)
    assert window.company_list.item(1) is before and window.company_list.currentRow() == 1  # updated in place
    window.kind.setCurrentIndex(window.kind.findData(RowKind.EVENT))
    qtbot.waitUntil(lambda: model.total == 1 and [r.access_key for r in model.rows] == [office.event_only])


def test_the_window_runs_the_capture_and_a_second_one_is_read_only(
    qtbot: QtBot, office: Office, tmp_path: Path
) -> None:
    data_dir = office.harness.office.data_dir
    capturing = Desk(data_dir, clock=office.harness.clock)
    first = MainWindow(capturing, settings=QSettings(str(tmp_path / "a.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(first)
    # The first rows come from the store before the capture starts (issue 24): then the window is ready.
    qtbot.waitUntil(lambda: first.models[Product.NFE].total == 4 and first.opened is not None, timeout=20_000)
    assert capturing.capturing and first.capture_label.text() == "Captura em segundo plano ligada"
    reading = Desk(data_dir, clock=office.harness.clock)
    second = MainWindow(reading, settings=QSettings(str(tmp_path / "b.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(second)
    qtbot.waitUntil(lambda: second.models[Product.NFE].total == 4 and second.opened is not None, timeout=20_000)
    assert "Somente leitura" in second.capture_label.text()
    assert "janela do Captura DF-e" in second.capture_label.toolTip()  # who holds the folder
    assert not second.writable
    second.close()
    first.close()
    reading.close()
    capturing.close()


def test_saving_the_xml_writes_the_received_bytes_and_offers_the_folder(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    window = _window(qtbot, desk, tmp_path)
    _select(window, qtbot, office.received[1])
    [row] = window.selected_rows()
    target = tmp_path / "saida" / "nota.xml"
    target.parent.mkdir()
    window.files.write_xml(row, target)
    qtbot.waitUntil(lambda: window.detail.folder_button.isVisibleTo(window), timeout=10_000)
    assert target.read_bytes() == desk.xml(row)
    assert window.detail.saved_folder == target.parent
    assert [p.name for p in target.parent.iterdir()] == ["nota.xml"]  # no temporary file left


def test_the_preview_tab_shows_the_danfe_and_saving_writes_it(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    from pypdf import PdfReader
    from PySide6.QtPdf import QPdfDocument

    window = _window(qtbot, desk, tmp_path)
    key = office.received[1]
    _select(window, qtbot, key)
    pane = window.detail
    assert pane.pdf_button.isEnabled() and pane.pdf_button.text().startswith("Salvar ")
    assert pane.preview.currentWidget() is pane.preview_message  # nothing rendered until the tab shows
    # Qt's PDF viewer (~5 MB) is built with the first preview, not with the window (issue 20).
    assert pane.findChild(QWidget, "pdf-view") is None
    pane.tabs.setCurrentWidget(pane.preview)
    qtbot.waitUntil(lambda: pane.findChild(QWidget, "pdf-view") is not None, timeout=20_000)
    qtbot.waitUntil(lambda: pane.preview.currentWidget() is pane.pdf_view, timeout=20_000)
    qtbot.waitUntil(lambda: pane.pdf_document.status() is QPdfDocument.Status.Ready, timeout=10_000)
    assert pane.pdf_document.pageCount() >= 1
    [row] = window.selected_rows()
    target = tmp_path / "saida" / "danfe.pdf"
    target.parent.mkdir()
    window.files.write_pdf(row, target)
    qtbot.waitUntil(lambda: target.exists(), timeout=20_000)
    text = "".join(page.extract_text() for page in PdfReader(target).pages)
    assert key in text.replace(" ", "")


def test_a_folder_whose_database_is_not_one_says_so_and_the_window_stays_up(qtbot: QtBot, tmp_path: Path) -> None:
    folder = tmp_path / "dados"
    folder.mkdir()
    (folder / "captura.sqlite3").write_bytes(b"isto nao e um banco de dados " * 10)
    window = MainWindow(
        Desk(folder, capture=False), settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    )
    qtbot.addWidget(window)
    window.show()
    qtbot.waitUntil(lambda: "Não foi possível abrir a pasta de dados" in window.statusBar().currentMessage())
    assert "não é um banco de dados do Captura DF-e" in window.detail.summary.toPlainText()
    assert window.isVisible() and window.opened is None
    assert (folder / "captura.sqlite3").read_bytes().startswith(b"isto nao e")  # nothing overwritten


def test_the_cte_tab_shows_modal_payer_and_carried_nfe_and_links_to_the_nfe(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    from app.capture.cte import CteCapture
    from app.capture.simulation import run_pending
    from app.core.products import Environment
    from app.store.records import CaptureSettings
    from tests.support.nfe_harness import CARRIER, RECIPIENT, SUPPLIER

    h = office.harness
    nfe_key = office.received[2]
    h.sandbox.party(CARRIER)
    h.office.companies.save_settings(
        CaptureSettings(h.company.id, Product.CTE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
    )
    cte = h.sandbox.publish_cte(CARRIER, SUPPLIER, RECIPIENT, nfe_keys=(nfe_key,), taker_role=3)
    run_pending(CteCapture(h.ctx))
    window = _window(qtbot, desk, tmp_path)
    window.tabs.setCurrentIndex(list(Product).index(Product.CTE))
    model = window.models[Product.CTE]
    qtbot.waitUntil(lambda: model.total == 1)
    names = [c.name for c in model.columns]
    assert {"modal", "payer", "carried"} <= set(names) and "manifestation" not in names
    assert model.data(model.index(0, names.index("modal"))) == "Rodoviário"
    assert model.data(model.index(0, names.index("carried"))) == nfe_key
    window.views[Product.CTE].selectRow(0)
    qtbot.waitUntil(lambda: window.detail.detail is not None and window.detail.detail.row.product is Product.CTE)
    assert "NF-e transportadas por este CT-e" in window.detail.summary.toPlainText()
    from PySide6.QtCore import QUrl

    window.detail.summary.anchorClicked.emit(QUrl(f"related:nfe:{nfe_key}"))
    nfe = window.models[Product.NFE]
    qtbot.waitUntil(lambda: window.current_product() is Product.NFE and [r.access_key for r in nfe.rows] == [nfe_key])
    assert nfe.rows[0].carried_keys == (str(cte.key),)


def test_each_tab_shows_only_its_own_manifestation_buttons(qtbot: QtBot, desk: Desk, tmp_path: Path) -> None:
    window = _window(qtbot, desk, tmp_path)
    buttons = window.detail.buttons
    taker = ["203202", "203206"]
    recipient = ["210200", "210210", "210220", "210240"]

    def shown() -> set[str]:
        return {tp for tp, button in buttons.items() if not button.isHidden()}

    assert shown() == set(recipient)  # at start, on the NF-e tab: no NFS-e taker button
    window.tabs.setCurrentIndex(list(Product).index(Product.NFSE))
    assert shown() == set(taker)
    window.tabs.setCurrentIndex(list(Product).index(Product.CTE))
    assert shown() == set()
    window.tabs.setCurrentIndex(list(Product).index(Product.NFE))
    assert shown() == set(recipient)


def test_a_double_click_offers_the_ciencia_only_on_a_resumo_awaiting_it(
    qtbot: QtBot, desk: Desk, office: Office, tmp_path: Path
) -> None:
    window = _window(qtbot, desk, tmp_path)
    event_row = next(r for r in _rows(window) if r.access_key == office.event_only)
    opened: list[str] = []
    window.manifestations.double_clicked(event_row, lambda: opened.append("detalhe"))
    window.manifestations.double_clicked(None, lambda: opened.append("detalhe"))
    assert opened == ["detalhe", "detalhe"]  # an event row, or no row: the detail, no dialog
    assert window.manifestations.last_dialog is None
