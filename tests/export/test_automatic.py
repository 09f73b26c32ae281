"""Automatic export of captured documents through profiles: names, no duplicates, resumo replaced by
its complete NF-e, cancelled NF-e moved, an unreachable destination that catches up later."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from app.capture.jobs import jobs_of
from app.capture.service import CaptureService
from app.export.automatic import AutomaticExport, export_job
from app.store.exports import ExportRepository
from app.store.records import Product
from tests.export.conftest import add_profile, files_under
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


def capture(harness: Harness) -> None:
    harness.run_pending()
    harness.clock.advance(timedelta(hours=1, minutes=5))  # past the empty-queue hour


def exports(harness: Harness) -> AutomaticExport:
    return AutomaticExport(harness.office.db, harness.clock)


def month(key: str) -> str:
    return f"20{key[2:4]}-{key[4:6]}"


def test_captured_resumos_are_exported_once_and_again_without_duplicates(harness: Harness, tmp_path: Path) -> None:
    keys = sorted(str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(2))
    capture(harness)
    destination = tmp_path / "arquivo"
    add_profile(harness, destination)

    [run] = exports(harness).run()

    expected = [f"{RECIPIENT}/{month(k)}/Resumos/{k}.xml" for k in keys]
    assert files_under(destination) == expected
    assert run.written == 2
    stored = harness.office.db
    from app.store.documents import DocumentRepository

    for key, path in zip(keys, expected, strict=True):
        assert (destination / path).read_bytes() == DocumentRepository(stored).get_xml(
            harness.company.id, Product.NFE, key
        )
    before = {p: (destination / p).stat().st_mtime_ns for p in expected}
    [again] = exports(harness).run()
    assert again.written == 0 and again.queued == 0
    # A second profile into the same folder from the start of the stream: same names, same files.
    add_profile(harness, destination, name="de novo")
    exports(harness).run()
    assert files_under(destination) == expected
    assert {p: (destination / p).stat().st_mtime_ns for p in expected} == before  # equal bytes: not rewritten


def test_a_resumo_is_replaced_by_its_complete_nfe_and_a_cancelled_one_moves(harness: Harness, tmp_path: Path) -> None:
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    key = str(nfe.key)
    capture(harness)
    archive, beside = tmp_path / "arquivo", tmp_path / "ao-lado"
    add_profile(harness, archive)
    add_profile(harness, beside, name="ao lado", cancelled_mode="beside")
    exports(harness).run()
    base = f"{RECIPIENT}/{month(key)}"
    assert files_under(archive) == [f"{base}/Resumos/{key}.xml"]

    harness.sandbox.publish_nfe_event(nfe, "210210")  # Ciência: the AN releases the nfeProc
    capture(harness)
    exports(harness).run()
    complete = f"{base}/NFe/{key}-procNFe.xml"
    assert f"{base}/Resumos/{key}.xml" not in files_under(archive)
    assert complete in files_under(archive)
    assert b"<nfeProc" in (archive / complete).read_bytes()

    harness.sandbox.publish_nfe_event(nfe, "110111", justification="Cancelamento por erro de digitacao")
    capture(harness)
    exports(harness).run()
    archived = files_under(archive)
    assert complete not in archived
    assert f"Canceladas/{complete}" in archived
    assert any(p.endswith(f"{key}-110111-1.xml") and "/Eventos/" in p for p in archived)
    kept = files_under(beside)
    assert complete in kept  # "beside": the document stays, its cancellation next to it
    assert f"{base}/NFe/{key}-110111-1.xml" in kept
    assert not any(p.startswith("Canceladas/") for p in kept)


def test_an_unreachable_destination_keeps_its_queue_and_catches_up(harness: Harness, tmp_path: Path) -> None:
    keys = sorted(str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(3))
    capture(harness)
    drive = tmp_path / "unidade-de-rede"
    drive.write_bytes(b"")  # a regular file where the folder should be: even root cannot write below it
    destination = drive / "xml"
    profile = add_profile(harness, destination)
    repo = ExportRepository(harness.office.db)

    [run] = exports(harness).run()

    assert run.written == 0
    assert run.failed is not None and "indisponível" in run.failed and "nada da fila foi perdido" in run.failed
    failing = repo.get(profile.id)
    assert failing.last_error == run.failed
    assert failing.next_attempt_at == harness.clock.now() + timedelta(minutes=1)
    assert repo.queue_size(profile.id) == 3
    assert exports(harness).run() == []  # retry not due yet: nothing tried, nothing lost

    drive.unlink()  # the drive is back
    harness.clock.advance(timedelta(minutes=2))
    [caught_up] = exports(harness).run()  # a new exporter: what a restart would build

    assert caught_up.written == 3
    assert files_under(destination) == [f"{RECIPIENT}/{month(k)}/Resumos/{k}.xml" for k in keys]
    assert repo.queue_size(profile.id) == 0
    healed = repo.get(profile.id)
    assert healed.last_error is None and healed.exported_count == 3


def test_the_capture_service_runs_the_export_as_one_of_its_recorded_jobs(harness: Harness, tmp_path: Path) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    capture(harness)
    destination = tmp_path / "arquivo"
    add_profile(harness, destination)
    service = CaptureService(harness.ctx, products=(Product.NFE,), workers=1)
    service.add_job(export_job(harness.office.db, harness.clock))

    [job] = [j for j in jobs_of(service) if j.name == "exportacao"]
    job.run()

    assert len(files_under(destination)) == 1
    [row] = [r for r in harness.ctx.runs.recent(10) if r.job_type == "exportacao"]
    assert row.status.value == "succeeded" and row.reason == "arquivo: 1 item(ns), 1 arquivo(s)"
