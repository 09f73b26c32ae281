"""Manual exports and the write path: a selection, keys known only by their events, a company name
Windows would refuse, and a full disk injected at the one write function."""

from __future__ import annotations

import errno
from datetime import timedelta
from pathlib import Path

import pytest

from app.export.automatic import AutomaticExport
from app.export.manual import Selection, export_selection
from app.export.writer import ExportWriteFailed
from app.store.exports import ExportRepository
from app.store.records import Product
from tests.export.conftest import add_profile, files_under
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


def _month(key: str) -> str:
    return f"20{key[2:4]}-{key[4:6]}"


def test_a_selection_and_the_keys_known_only_by_their_events(harness: Harness, tmp_path: Path) -> None:
    received = [str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(2)]
    issued = harness.sandbox.publish_nfe(RECIPIENT, SUPPLIER)  # the company's own NF-e
    harness.sandbox.publish_nfe_event(issued, "210210")  # only its customer's Ciência comes back
    harness.run_pending()
    everything, chosen = tmp_path / "tudo", tmp_path / "escolhidos"

    report = export_selection(harness.office.db, everything, Selection())

    base = f"{RECIPIENT}/{_month(received[0])}"
    assert files_under(everything) == sorted(
        [f"{base}/Resumos/{k}.xml" for k in received] + [f"{base}/Eventos/{issued.key}-210210-1.xml"]
    )
    assert (report.documents, report.events) == (2, 1)
    doc = harness.ctx.documents.find(harness.company.id, Product.NFE, received[1])
    assert doc is not None
    picked = export_selection(harness.office.db, chosen, Selection(document_ids=(doc.id,)))
    assert files_under(chosen) == [f"{base}/Resumos/{received[1]}.xml"] and picked.events == 0


def test_a_company_name_windows_would_refuse_still_names_a_folder(harness: Harness, tmp_path: Path) -> None:
    harness.office.companies.update(harness.company.id, name='ACME: "FILIAL" SUL/NORTE <1>?')
    key = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
    harness.run_pending()
    destination = tmp_path / "saida"

    export_selection(harness.office.db, destination, Selection(), pattern="{empresa}/{chave}.xml")

    [path] = files_under(destination)
    folder, name = path.split("/")
    assert name == f"{key}.xml"
    assert not set('<>:"\\|?*') & set(folder) and folder.startswith("ACME_")


def test_a_full_disk_keeps_the_queue_and_says_so(harness: Harness, tmp_path: Path) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_pending()
    profile = add_profile(harness, tmp_path / "arquivo")
    full = True

    def write(path: Path, content: bytes) -> None:
        if full:
            raise OSError(errno.ENOSPC, "No space left on device")
        path.write_bytes(content)

    [run] = AutomaticExport(harness.office.db, harness.clock, write=write).run()

    repo = ExportRepository(harness.office.db)
    assert run.failed is not None and "disco cheio" in run.failed
    assert repo.queue_size(profile.id) == 1 and not files_under(tmp_path / "arquivo")
    full = False
    harness.clock.advance(timedelta(minutes=1))
    [retried] = AutomaticExport(harness.office.db, harness.clock, write=write).run()
    assert retried.written == 1 and repo.queue_size(profile.id) == 0

    with pytest.raises(ExportWriteFailed, match="indisponível"):
        blocker = tmp_path / "arquivo-comum"
        blocker.write_bytes(b"")
        export_selection(harness.office.db, blocker / "sub", Selection())
