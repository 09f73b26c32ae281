"""Windows behaviours of the export's writes, injected at the two functions that change the disk:
a file another program holds open (the ERP importing it, Excel, an antivirus scan) refuses
``os.replace`` with a sharing violation (WinError 32) or "access denied" (WinError 5), and
refuses ``DeleteFile`` with WinError 32. Wine reproduces these; Linux does not, hence the doubles,
which raise exactly what Windows' CPython raises."""

from __future__ import annotations

import errno
import os
from datetime import timedelta
from pathlib import Path

import pytest

from app.config.files import write_atomic
from app.export.automatic import AutomaticExport
from app.export.writer import IN_USE_PAUSES, in_use, make_folders, reason_of
from app.store.exports import ExportRepository
from tests.export.conftest import add_profile, files_under
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness

SHARING_VIOLATION = 32  # ERROR_SHARING_VIOLATION
ACCESS_DENIED = 5  # ERROR_ACCESS_DENIED


def windows_error(winerror: int, filename: str, filename2: str | None = None) -> PermissionError:
    """The PermissionError Windows' CPython raises for ``winerror`` (errno EACCES, ``winerror`` set)."""
    error = PermissionError(errno.EACCES, "O arquivo já está sendo usado por outro processo", filename, None, filename2)
    error.winerror = winerror  # type: ignore[attr-defined]  # only Windows' OSError fills it itself
    return error


class HeldOpen:
    """The files another program holds open: ``os.replace`` onto them and their removal fail as on
    Windows, while ``tries_left`` (None: for ever) of the attempts at them remain."""

    def __init__(self, names: set[str], *, winerror: int = SHARING_VIOLATION, tries_left: int | None = None) -> None:
        self.names, self.winerror, self.tries_left = names, winerror, tries_left
        self.refused: list[str] = []

    def _held(self, path: Path) -> bool:
        if path.name not in self.names:
            return False
        if self.tries_left is not None:
            if self.tries_left == 0:
                return False
            self.tries_left -= 1
        self.refused.append(path.name)
        return True

    def write(self, path: Path, content: bytes) -> None:
        if self._held(path):  # MoveFileEx(tmp, path, REPLACE_EXISTING), as os.replace does
            raise windows_error(self.winerror, str(path.with_name(f".{path.name}.tmp")), str(path))
        write_atomic(path, content)

    def remove(self, path: Path) -> None:
        if path.exists() and self._held(path):  # DeleteFileW on a file open without FILE_SHARE_DELETE
            raise windows_error(SHARING_VIOLATION, str(path))
        path.unlink()


def capture(harness: Harness) -> None:
    harness.run_pending()
    harness.clock.advance(timedelta(hours=1, minutes=5))


def test_a_file_in_use_waits_alone_and_the_profile_goes_on(harness: Harness, tmp_path: Path) -> None:
    keys = sorted(str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key) for _ in range(3))
    capture(harness)
    destination = tmp_path / "arquivo"
    profile = add_profile(harness, destination)
    busy = f"{keys[1]}.xml"
    held = HeldOpen({busy})  # the ERP has it open and does not let go
    exports = AutomaticExport(harness.office.db, harness.clock, write=held.write)
    repo = ExportRepository(harness.office.db)
    before = harness.clock.now()

    [first] = exports.run()

    assert first.written == 2 and held.refused == [busy] * (len(IN_USE_PAUSES) + 1)
    assert harness.clock.now() - before == timedelta(seconds=sum(IN_USE_PAUSES))  # the backoff, on the clock
    assert first.failed is not None and f"arquivo em uso por outro programa: {busy}" in first.failed
    assert "somente leitura" not in first.failed and "indisponível" not in first.failed
    assert repo.queue_size(profile.id) == 1
    assert [Path(p).name for p in files_under(destination)] == [f"{keys[0]}.xml", f"{keys[2]}.xml"]

    # Not paused: the profile runs at the next tick; the busy file waits its own minute.
    assert repo.get(profile.id).next_attempt_at == harness.clock.now()
    refused = len(held.refused)
    harness.clock.advance(timedelta(seconds=30))
    [second] = exports.run()
    assert second.profile == profile.name and len(held.refused) == refused
    harness.clock.advance(timedelta(seconds=30))
    [third] = exports.run()  # its minute passed: tried again, still open; now two minutes
    assert len(held.refused) == 2 * refused and third.failed is not None and "às" in third.failed

    held.names.clear()  # the ERP closed it
    harness.clock.advance(timedelta(minutes=2))
    [fourth] = exports.run()
    assert fourth.written == 1 and fourth.failed is None and repo.queue_size(profile.id) == 0
    assert any(p.endswith(busy) for p in files_under(destination))
    healed = repo.get(profile.id)
    assert healed.last_error is None and healed.next_attempt_at is None


def test_a_file_let_go_within_the_retries_is_written_in_the_same_run(harness: Harness, tmp_path: Path) -> None:
    key = str(harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT).key)
    capture(harness)
    destination = tmp_path / "arquivo"
    add_profile(harness, destination)
    # os.replace onto a file opened without FILE_SHARE_DELETE: "access denied", twice, then free.
    held = HeldOpen({f"{key}.xml"}, winerror=ACCESS_DENIED, tries_left=2)
    existing = destination / RECIPIENT / f"20{key[2:4]}-{key[4:6]}" / "Resumos" / f"{key}.xml"
    existing.parent.mkdir(parents=True)
    existing.write_bytes(b"<resNFe>uma versao anterior</resNFe>")  # the file the ERP has open
    before = harness.clock.now()

    [run_] = AutomaticExport(harness.office.db, harness.clock, write=held.write).run()

    assert run_.written == 1 and run_.failed is None
    assert held.refused == [f"{key}.xml"] * 2
    assert harness.clock.now() - before == timedelta(seconds=sum(IN_USE_PAUSES[:2]))
    assert b"<resNFe" in existing.read_bytes() and b"anterior" not in existing.read_bytes()


def test_access_denied_on_a_read_only_file_is_still_read_only(tmp_path: Path) -> None:
    # Windows answers WinError 5 to os.replace onto a read-only file too: that is not "in use".
    target = tmp_path / "a.xml"
    target.write_bytes(b"<a/>")
    denied = windows_error(ACCESS_DENIED, str(tmp_path / ".a.xml.tmp"), str(target))
    assert in_use(denied, target)
    os.chmod(target, 0o444)  # Windows' read-only attribute is the write bit of st_mode
    assert not in_use(denied, target)
    assert not in_use(windows_error(ACCESS_DENIED, str(tmp_path / ".a.xml.tmp")), target)  # not a replace
    assert in_use(windows_error(SHARING_VIOLATION, str(target)), target)
    assert not in_use(PermissionError(errno.EACCES, "Permission denied", str(target)), target)


def test_a_real_read_only_folder_is_called_read_only(harness: Harness, tmp_path: Path) -> None:
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    capture(harness)
    destination = tmp_path / "somente-leitura"
    profile = add_profile(harness, destination)

    def read_only_share(path: Path, content: bytes) -> None:  # the folder's ACL denies writing
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    [run_] = AutomaticExport(harness.office.db, harness.clock, write=read_only_share).run()

    assert run_.failed is not None and "somente leitura" in run_.failed
    assert ExportRepository(harness.office.db).get(profile.id).next_attempt_at == harness.clock.now() + timedelta(
        minutes=1
    )  # the whole destination waits, as before


def test_an_open_stale_file_does_not_escape_the_exports_error_handling(harness: Harness, tmp_path: Path) -> None:
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    key = str(nfe.key)
    capture(harness)
    destination = tmp_path / "arquivo"
    profile = add_profile(harness, destination)
    held = HeldOpen({f"{key}.xml"}, tries_left=0)  # the resumo's file, open in the ERP later
    AutomaticExport(harness.office.db, harness.clock, write=held.write).run()
    assert held.refused == [] and [Path(p).name for p in files_under(destination)] == [f"{key}.xml"]

    harness.sandbox.publish_nfe_event(nfe, "210210")  # the complete NF-e replaces the resumo
    capture(harness)
    held.tries_left = None
    # the same exporter's DeleteFileW of the resumo's file is refused: it is open
    [run_] = AutomaticExport(harness.office.db, harness.clock, write=held.write, remove=held.remove).run()

    assert run_.failed is not None and f"arquivo em uso por outro programa: {key}.xml" in run_.failed
    names = {Path(p).name for p in files_under(destination)}
    assert {f"{key}-procNFe.xml", f"{key}.xml"} <= names  # the new file is there, the stale one stays
    assert ExportRepository(harness.office.db).queue_size(profile.id) == 1

    held.names.clear()
    harness.clock.advance(timedelta(minutes=1))
    [retried] = AutomaticExport(harness.office.db, harness.clock, write=held.write, remove=held.remove).run()
    assert retried.failed is None and f"{key}.xml" not in {Path(p).name for p in files_under(destination)}
    assert f"{key}-procNFe.xml" in {Path(p).name for p in files_under(destination)}


def test_a_path_past_max_path_is_called_too_long_never_an_unavailable_drive() -> None:
    # Without LongPathsEnabled (and without the prefix), Windows answers ERROR_PATH_NOT_FOUND.
    deep = Path("\\\\servidor\\contabilidade\\" + "Clientes 2026\\" * 20 + "a.xml")
    error = FileNotFoundError(errno.ENOENT, "O sistema não pode encontrar o caminho especificado", str(deep))
    error.winerror = 3  # type: ignore[attr-defined]
    reason = reason_of(error, deep)
    assert "caminho longo demais" in reason and "259" in reason and "indisponível" not in reason
    short = Path("Z:\\xml\\a.xml")  # the same error on a short path: the drive is really gone
    assert "indisponível" in reason_of(FileNotFoundError(errno.ENOENT, "x", str(short)), short)


def test_a_file_where_a_folder_should_be_makes_the_destination_unusable_not_the_item(tmp_path: Path) -> None:
    # Windows says "already exists" (EEXIST) wherever a file stands in the path (Wine does too);
    # POSIX says so only when it is the last folder, as here, and ENOTDIR otherwise.
    blocker = tmp_path / "unidade"
    blocker.write_bytes(b"")
    for folder in (blocker, blocker / "xml"):
        with pytest.raises(NotADirectoryError) as raised:
            make_folders(folder)
        assert "indisponível" in reason_of(raised.value, folder / "nota.xml")
