"""Screenshots of the window as an office clerk sees it, for a person to look at.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/ui/screenshots.py [PASTA]

Fills a data folder by real capture from the sandbox (a dozen suppliers, summaries and complete
NF-e, a cancellation after capture, an NF-e the company issued whose customer's Ciência comes
back), opens the main window on it and writes PNGs to PASTA (default ``screenshots/``): the
window on each tab, the detail pane (summary, events, XML) and the manifestation dialogs.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import keyring  # noqa: E402
from PySide6.QtCore import QEventLoop, QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QTabWidget, QWidget  # noqa: E402

from app.capture.cte import CteCapture  # noqa: E402
from app.capture.simulation import run_pending  # noqa: E402
from app.core.ids import Cnpj  # noqa: E402
from app.core.products import Environment, Product  # noqa: E402
from app.desk import Desk  # noqa: E402
from app.sandbox.docgen.common import Party  # noqa: E402
from app.store.records import CaptureSettings, DocumentInput, DocumentKind, RowKind  # noqa: E402
from app.ui.company_dialog import CompanyDialog  # noqa: E402
from app.ui.main_window import MainWindow  # noqa: E402
from app.ui.manifest_dialog import ManifestDialog  # noqa: E402
from tests.support.nfe_harness import CARRIER, RECIPIENT, nfe_harness  # noqa: E402
from tests.support.test_keyring import TestKeyring  # noqa: E402

SUPPLIERS = [
    (Cnpj.from_body(body).value, name)
    for body, name in (
        ("123456780001", "COMERCIAL DE ALIMENTOS BOA MESA LTDA"),
        ("234567890001", "DISTRIBUIDORA DE PAPEIS SÃO JOÃO EIRELI"),
        ("345678900001", "INDÚSTRIA METALÚRGICA AÇO FORTE S.A."),
        ("456789010001", "FARMÁCIA E DROGARIA SAÚDE & VIDA LTDA"),
        ("567890120001", "ATACADÃO DE MATERIAIS DE CONSTRUÇÃO PEDRA BRANCA LTDA"),
    )
]


def wait(condition: object, timeout_ms: int = 20_000) -> None:
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(20)
    left = [timeout_ms // 20]

    def tick() -> None:
        left[0] -= 1
        if condition() or left[0] <= 0:  # type: ignore[operator]
            loop.quit()

    timer.timeout.connect(tick)
    timer.start()
    loop.exec()
    if not condition():  # type: ignore[operator]
        raise SystemExit("A janela não ficou pronta a tempo.")


def grab(widget: QWidget, folder: Path, name: str) -> None:
    QApplication.processEvents()
    path = folder / f"{name}.png"
    widget.grab().save(str(path))
    print(path)


@contextmanager
def _test_keyring(folder: Path) -> Iterator[None]:
    """Run alone (not under pytest), the script keeps the test certificates' secrets in a file of
    its own temporary folder, never in the user's keyring (the vault refuses keyrings.alt's)."""
    previous = keyring.get_keyring()
    ring = TestKeyring()
    ring.file_path = str(folder / "keyring.cfg")
    keyring.set_keyring(ring)
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots").resolve()
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp, _test_keyring(Path(tmp)), nfe_harness(Path(tmp)) as harness:
        sandbox = harness.sandbox
        for cnpj, name in SUPPLIERS:
            sandbox.party(Party(doc=cnpj, name=name))
        keys = []
        for index in range(14):
            cnpj = SUPPLIERS[index % len(SUPPLIERS)][0]
            keys.append(str(sandbox.publish_nfe(cnpj, RECIPIENT).key))
        issued = sandbox.publish_nfe(RECIPIENT, SUPPLIERS[0][0])
        sandbox.publish_nfe_event(issued, "210210")
        harness.run_pending()
        harness.clock.advance(timedelta(hours=1, minutes=5))
        sandbox.publish_nfe_event(keys[3], "110111", justification="Cancelamento por erro na emissao")
        harness.run_pending()
        sandbox.party(Party(doc=CARRIER, name="TRANSPORTADORA RÁPIDO SUL LTDA"))
        harness.office.companies.save_settings(
            CaptureSettings(harness.company.id, Product.CTE, environment=Environment.HOMOLOGACAO, c_uf_autor="35")
        )
        for index, key in enumerate(keys[:6]):
            sandbox.publish_cte(
                CARRIER, SUPPLIERS[index % 5][0], RECIPIENT, nfe_keys=(key,), taker_role=(0, 3)[index % 2]
            )
        run_pending(CteCapture(harness.ctx))
        harness.ctx.documents.store(  # a document even the recovery could not read: kept and shown
            harness.company.id,
            DocumentInput(
                Product.NFE, DocumentKind.UNKNOWN, b"<resNFe><chNFe>3526", None, nsu=999,
                parse_error="XML mal formado: elemento <chNFe> sem fechamento (linha 1).",
            ),
        )  # fmt: skip
        desk = Desk(harness.office.data_dir, clock=harness.clock, capture=False)
        desk.open()
        for key in keys[:4]:
            [row] = desk.find_key(key)
            desk.request_manifestation(row.company_id, key, "210210")
        harness.clock.advance(timedelta(hours=1, minutes=5))
        harness.run_pending()  # after the Ciência: the complete NF-e of those four
        settings = QSettings(str(Path(tmp) / "ui.ini"), QSettings.Format.IniFormat)
        window = MainWindow(desk, settings=settings)
        window.resize(1440, 860)
        window.show()
        model = window.models[Product.NFE]
        wait(lambda: model.total is not None and window.company_list.count() > 1)
        grab(window, out, "01-janela-nfe")
        view = window.views[Product.NFE]
        view.selectRow(1)
        wait(lambda: window.detail.detail is not None)
        grab(window, out, "02-janela-detalhe")
        grab(window.detail, out, "03-detalhe-resumo")
        window.detail.tabs.setCurrentIndex(1)
        grab(window.detail, out, "04-detalhe-eventos")
        window.detail.tabs.setCurrentIndex(2)
        grab(window.detail, out, "05-detalhe-xml")
        complete = next(i for i, r in enumerate(model.rows) if r.row_kind is RowKind.COMPLETE)
        view.selectRow(complete)
        wait(lambda: window.detail.detail is not None and window.detail.detail.row.row_kind is RowKind.COMPLETE)
        window.detail.tabs.setCurrentWidget(window.detail.preview)
        wait(lambda: window.detail.preview.currentWidget() is window.detail.pdf_view)
        wait(lambda: window.detail.pdf_document.pageCount() > 0)
        grab(window, out, "05-visualizacao-danfe")
        window.detail.tabs.setCurrentIndex(0)
        view.selectRow(1)
        wait(lambda: window.detail.detail is not None)
        for index, product in enumerate(Product):
            if product is Product.NFE:
                continue
            window.tabs.setCurrentIndex(index)
            wait(lambda p=product: window.models[p].total is not None)  # type: ignore[misc]
            grab(window, out, f"06-janela-{product.value}")
            if product is Product.CTE:
                window.views[product].selectRow(0)
                wait(lambda: window.detail.detail is not None)
                grab(window, out, "06-janela-cte-detalhe")
        window.tabs.setCurrentIndex(0)
        rows = [r for r in model.rows if r.access_key in keys[5:7]]
        for tp in ("210200", "210240"):
            dialog = ManifestDialog(tp, rows, window)
            dialog.show()
            if dialog.text is not None:
                dialog.text.setPlainText("Mercadoria devolvida ao fornecedor por avaria")
            grab(dialog, out, f"07-manifestacao-{tp}")
            dialog.close()
        window.kind.setCurrentIndex(window.kind.findData(RowKind.UNREADABLE))
        wait(lambda: model.total == 1)
        view.selectRow(0)
        wait(lambda: window.detail.detail is not None and window.detail.detail.row.quarantined)
        grab(window, out, "09-quarentena")
        window.kind.setCurrentIndex(0)
        window.search.setText(keys[2])
        window.apply_filters()
        wait(lambda: model.total == 1)
        grab(window, out, "08-busca-por-chave")
        window.pages.setCurrentIndex(1)
        board = window.dashboard
        wait(lambda: board.status_table.rowCount() >= 2)
        grab(window, out, "10-painel-captura")
        board.findChild(QTabWidget).setCurrentIndex(2)
        grab(window, out, "10-painel-documentos-por-mes")
        window.pages.setCurrentIndex(0)
        client = sandbox.company(Cnpj.from_body("556667770001").value, "PADARIA E CONFEITARIA PÃO DOURADO LTDA")
        pfx = Path(tmp) / "cliente.pfx"
        pfx.write_bytes(client.pfx)
        dialog = CompanyDialog(desk, window.tasks, None, window)
        dialog.show()
        grab(dialog, out, "11-empresa-nova-vazia")
        dialog.path.setText(str(pfx))
        dialog.password.setText(client.password)
        dialog.check_certificate()
        wait(lambda: dialog.preview is not None)
        grab(dialog, out, "11-empresa-nova-certificado")
        dialog.path.setText(str(pfx))
        dialog.password.setText("errada")
        dialog.check_certificate()
        wait(lambda: "incorreta" in dialog.certificate.text())
        grab(dialog, out, "11-empresa-senha-errada")
        dialog.close()
        edit = CompanyDialog(desk, window.tasks, harness.company.id, window)
        edit.show()
        wait(lambda: "Certificado atual" in edit.certificate.text())
        grab(edit, out, "12-empresa-editar")
        edit.close()
        window.company_actions.open_profiles()
        profiles_dialog = window.company_actions.last_dialog
        profiles_dialog.name.setText("erp")  # type: ignore[union-attr]
        profiles_dialog.destination.setText("C:/ERP/importar")  # type: ignore[union-attr]
        grab(profiles_dialog, out, "14-perfis-exportacao")  # type: ignore[arg-type]
        profiles_dialog.close()  # type: ignore[union-attr]
        window.company_actions.open_settings()
        settings_dialog = window.company_actions.last_dialog
        wait(lambda: settings_dialog.current is not None)  # type: ignore[attr-defined]
        grab(settings_dialog, out, "13-configuracoes")
        settings_dialog.close()
        window.close()
        desk.close()
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
