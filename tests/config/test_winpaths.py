"""Windows' path limits and network folders: the Windows behaviours are pure functions of the
path's text here (PureWindowsPath), and the OS probes (GetDriveTypeW, /proc/mounts) are injected."""

from __future__ import annotations

import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

import pytest

from app.config.paths import NetworkDataFolder, check_data_dir
from app.config.winpaths import (
    DRIVE_REMOTE,
    MAX_PATH,
    PathTooLong,
    beyond_max_path,
    drive_letter,
    extended_path,
    for_writing,
    length_problem,
    mount_type,
    network_location,
    unc_share,
)

DEEP_SHARE = "\\\\servidor\\contabilidade\\" + "\\".join(["Clientes Ativos 2026"] * 10) + "\\" + "3" * 44 + ".xml"
DRIVE_C = 3  # GetDriveTypeW: DRIVE_FIXED


def test_a_share_path_past_max_path_gets_the_unc_extended_prefix() -> None:
    # Windows without LongPathsEnabled answers WinError 3 ("path not found") for this path.
    assert len(DEEP_SHARE) >= MAX_PATH and beyond_max_path(DEEP_SHARE)
    prefixed = extended_path(DEEP_SHARE)
    assert prefixed.startswith("\\\\?\\UNC\\servidor\\contabilidade\\")
    assert PureWindowsPath(prefixed).name == "3" * 44 + ".xml"
    assert unc_share(PureWindowsPath(prefixed)) == "\\\\servidor\\contabilidade"


def test_a_drive_path_is_normalised_before_the_prefix_which_turns_off_windows_own_normalisation() -> None:
    assert extended_path("C:/Exportacao/./NFe/../XML/a.xml") == "\\\\?\\C:\\Exportacao\\XML\\a.xml"
    assert extended_path("\\\\?\\C:\\x") == "\\\\?\\C:\\x"  # already prefixed: as is
    assert not beyond_max_path("C:\\" + "a" * 255) and beyond_max_path("C:\\" + "a" * 257)
    assert not beyond_max_path("\\\\?\\C:\\" + "a\\" * 200)


def test_a_name_over_255_characters_is_refused_with_the_limit_named() -> None:
    problem = length_problem("C:\\Exportacao\\" + "n" * 300 + ".xml")
    assert problem is not None and "255" in problem and "304 caracteres" in problem
    assert length_problem(DEEP_SHARE) is None
    assert "32766" in (length_problem("C:\\" + "pasta\\" * 6000) or "")


def test_for_writing_prefixes_only_on_windows_and_only_past_the_limit(tmp_path: Path) -> None:
    short = tmp_path / "a.xml"
    assert for_writing(short, windows=False) == short
    long_path = tmp_path / ("x" * 250) / "a.xml"
    assert for_writing(long_path, windows=False) == long_path  # Linux has no MAX_PATH of 260
    with pytest.raises(PathTooLong, match="255 por nome"):
        for_writing(tmp_path / ("n" * 300), windows=True)


def test_unc_shares_and_drive_letters_are_told_apart() -> None:
    assert unc_share(PureWindowsPath("\\\\srv\\dados\\captura")) == "\\\\srv\\dados"
    assert unc_share(PureWindowsPath("\\\\?\\UNC\\srv\\dados\\captura")) == "\\\\srv\\dados"
    assert unc_share(PureWindowsPath("\\\\?\\C:\\captura")) is None
    assert unc_share(PureWindowsPath("C:\\captura")) is None
    assert drive_letter(PureWindowsPath("z:\\captura")) == "Z:"
    assert drive_letter(PureWindowsPath("\\\\?\\Z:\\captura")) == "Z:"
    assert drive_letter(PureWindowsPath("\\\\srv\\dados")) is None


def test_a_mapped_network_drive_is_found_through_get_drive_type() -> None:
    asked: list[str] = []

    def drive_type(root: str) -> int:  # GetDriveTypeW: Z: is mapped to a share, C: is a disk
        asked.append(root)
        return DRIVE_REMOTE if root == "Z:\\" else DRIVE_C

    assert network_location(Path("Z:\\Captura"), platform="win32", drive_type=drive_type) == "na unidade de rede Z:"
    assert network_location(Path("C:\\Captura"), platform="win32", drive_type=drive_type) is None
    assert asked == ["Z:\\", "C:\\"]
    where = network_location(Path("\\\\srv\\dados\\Captura"), platform="win32", drive_type=drive_type)
    assert where == "na pasta compartilhada \\\\srv\\dados" and len(asked) == 2  # no probe needed


MOUNTS = """\
/dev/sda1 / ext4 rw,relatime 0 0
srv:/export /mnt/escritorio nfs4 rw,relatime 0 0
//srv/dados /mnt/dados\\040compartilhados cifs rw 0 0
/dev/sdb1 /mnt/escritorio/local ext4 rw 0 0
"""


def test_the_mount_of_a_posix_path_is_read_from_proc_mounts_text() -> None:
    assert mount_type(MOUNTS, PurePosixPath("/mnt/escritorio/captura")) == "nfs4"
    assert mount_type(MOUNTS, PurePosixPath("/mnt/escritorio/local/captura")) == "ext4"  # the deepest mount
    assert mount_type(MOUNTS, PurePosixPath("/mnt/dados compartilhados/x")) == "cifs"
    assert mount_type(MOUNTS, PurePosixPath("/home/ana")) == "ext4"


# A Path made on Windows is a WindowsPath ("\\mnt\\..."), never a path under /proc/mounts: the
# Windows answer is GetDriveTypeW and UNC names, tested above (mapped drive, share).
@pytest.mark.skipif(sys.platform == "win32", reason="/proc/mounts is Linux's; Windows asks GetDriveTypeW")
def test_linux_network_mounts_are_read_from_proc_mounts() -> None:
    def where(path: str) -> str | None:
        return network_location(Path(path), platform="linux", mounts=lambda: MOUNTS)

    assert where("/mnt/dados compartilhados/captura") == "numa montagem de rede (cifs)"
    assert where("/home/ana/captura") is None


def test_a_network_data_folder_is_refused_pointing_to_the_office_database(tmp_path: Path) -> None:
    def on_share(path: Path) -> str | None:
        return network_location(path, platform="win32", drive_type=lambda _root: DRIVE_C)

    with pytest.raises(NetworkDataFolder) as refused:
        check_data_dir(Path("\\\\servidor\\contabilidade\\Captura"), locate=on_share)
    message = refused.value.message
    assert message.startswith("Pastas de rede não servem para o banco SQLite")
    assert "banco do escritório (PostgreSQL)" in message and "\\\\servidor\\contabilidade" in message
    assert check_data_dir(tmp_path) == tmp_path  # this machine's disk (the test's tmp folder)
