"""Writing items under an export folder: the path a profile gives them, atomically, once.

A name depends only on the item, so exporting twice rewrites nothing (equal bytes are left as
they are) and creates no duplicate. When an item's name changes (a resumo replaced by its complete
NF-e, a document cancelled and moved to ``Canceladas``) the file under its other possible names
is removed: no state is needed for that, so a manual export into a folder behaves the same.

Windows: a file another program holds open (the ERP importing it, Excel, an antivirus scan)
refuses its replacement or removal for a moment; that file is tried again a few times, then
reported as in use (the rest of the export goes on). Paths past Windows' 260 characters are
written through the ``\\\\?\\`` prefix (:func:`app.config.winpaths.for_writing`).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import timedelta, timezone
from pathlib import Path
from typing import TypeVar

from app.config.files import write_atomic
from app.config.winpaths import MAX_PATH, PathTooLong, beyond_max_path, for_writing
from app.core.clock import SystemClock
from app.core.errors import CapturaError
from app.export.items import SUMMARY_KINDS, ExportItem
from app.export.patterns import CANCELLED_FOLDER, NameFacts, render
from app.export.pdf import PdfUnavailable, render_pdf
from app.store.grid import CANCELLATION_TYPES
from app.store.records import Direction, DocumentKind, DocumentStatus, ExportProfile, Product

log = logging.getLogger(__name__)

PRODUCT_NAMES = {Product.NFE: "NFe", Product.CTE: "CTe", Product.NFSE: "NFSe"}
DIRECTION_NAMES = {Direction.RECEIVED: "Recebidas", Direction.EMITTED: "Emitidas"}
_COMPLETE_LAYOUT = {Product.NFE: "nfeProc", Product.CTE: "cteProc", Product.NFSE: "nfse"}
_UNREACHABLE = {errno.ENOENT, errno.ENOTDIR, errno.ENODEV, errno.ENXIO, errno.EHOSTDOWN, errno.ENETUNREACH}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}
_DOWN = _UNREACHABLE | _READ_ONLY | {errno.ENOSPC, errno.EDQUOT, errno.EIO}  # the folder, not the item
# Windows: ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION (another program has the file open).
_WIN_IN_USE = {32, 33}
_WIN_ACCESS_DENIED = 5
_WIN_TOO_LONG = {3, 206}  # ERROR_PATH_NOT_FOUND (what MAX_PATH gives), ERROR_FILENAME_EXCED_RANGE
# Seconds between the tries at a file in use: an ERP import or an antivirus scan lets go quickly.
IN_USE_PAUSES = (0.25, 0.5, 1.0)

T = TypeVar("T")
_SYSTEM_CLOCK = SystemClock()


class ExportWriteFailed(CapturaError):
    """The destination refused a write (full disk, read-only, missing drive): retried later.

    ``in_use``: only this file failed, held open by another program; the others go on."""

    def __init__(self, message: str, *, destination_down: bool, in_use: bool = False) -> None:
        super().__init__(message)
        self.destination_down = destination_down
        self.in_use = in_use


Writer = Callable[[Path, bytes], None]
Remover = Callable[[Path], None]


def remove_file(path: Path) -> None:
    path.unlink()


def in_use(error: OSError, path: Path) -> bool:
    """Windows refused ``path`` because another program holds it open.

    A sharing violation says so itself; ``os.replace`` onto a file opened without
    FILE_SHARE_DELETE answers "access denied" instead, as it would for a read-only file: it is
    a file in use when the file itself is writable (the folder took the temporary file)."""
    winerror = getattr(error, "winerror", None)
    if winerror in _WIN_IN_USE:
        return True
    if winerror != _WIN_ACCESS_DENIED or error.filename2 is None:
        return False
    try:
        # the write bit is Windows' read-only attribute (os.access would say yes to root on POSIX)
        return path.is_file() and bool(path.stat().st_mode & stat.S_IWRITE)
    except OSError:
        return False


@dataclass
class WriteReport:
    written: list[Path] = field(default_factory=list)  # files created or changed
    unchanged: list[Path] = field(default_factory=list)  # already there with the same bytes
    removed: list[Path] = field(default_factory=list)  # an item's file under a name it no longer has
    pdf_skipped: int = 0

    @property
    def files(self) -> list[Path]:
        return self.written + self.unchanged


def make_folders(folder: Path) -> None:
    """``folder`` and its parents. A file standing where a folder of the path should be is ENOTDIR,
    as POSIX reports it: Windows reports "already exists" there (creating the parent collides with
    the file, and pathlib's ``exist_ok`` lets that through only for folders), which would otherwise
    read as a fault of the item rather than an unusable destination."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError as error:
        raise NotADirectoryError(errno.ENOTDIR, "Um arquivo ocupa o lugar de uma pasta", error.filename) from error


def reason_of(error: OSError, path: Path) -> str:
    code = error.errno
    if getattr(error, "winerror", None) in _WIN_TOO_LONG and beyond_max_path(str(path)):
        return f"caminho longo demais ({len(str(path))} caracteres; o limite do Windows é {MAX_PATH - 1}): {path}"
    if code == errno.ENOSPC:
        return f"disco cheio em {path.parent}"
    if code in _READ_ONLY:
        return f"sem permissão de gravação (somente leitura) em {path.parent}"
    if code in _UNREACHABLE:
        return f"pasta ou unidade de rede indisponível: {path.parent}"
    if code == errno.ENAMETOOLONG:
        return f"nome de arquivo longo demais: {path}"
    return f"{error.strerror or error} ({path})"


def facts_of(item: ExportItem, *, as_kind: DocumentKind | None = None) -> NameFacts:
    doc, event = item.document, item.event
    kind = as_kind or item.kind
    when = None
    if event is not None:
        when = event.event_at or event.created_at
    elif doc is not None and doc.issued_at is not None:
        offset = timezone(timedelta(minutes=doc.issued_offset_minutes or 0))
        when = doc.issued_at.astimezone(offset)
    if event is not None:
        tipo = "Eventos"
    elif kind in SUMMARY_KINDS:
        tipo = "Resumos"
    else:
        tipo = PRODUCT_NAMES[item.product]
    key = item.access_key
    readable = len(key) == 44 and key.isascii() and key.isdigit()
    number = doc.number if doc is not None else (int(key[25:34]) if readable else None)
    emitter = doc.emitter_id if doc is not None else (key[6:20] if len(key) == 44 else None)
    return NameFacts(
        cnpj=item.company.cnpj.value,
        empresa=item.company.name,
        produto=PRODUCT_NAMES[item.product],
        tipo=tipo,
        chave=key,
        when=when,
        nsu=event.nsu if event is not None else (doc.nsu if doc is not None else None),
        direcao=DIRECTION_NAMES[doc.direction] if doc is not None else DIRECTION_NAMES[Direction.RECEIVED],
        emitente_cnpj=emitter,
        numero=number,
        serie=doc.serie if doc is not None else None,
        layout=kind.value,
        tp_evento=event.tp_evento if event is not None else None,
        seq=event.n_seq_evento if event is not None else None,
    )


def _cancelled(item: ExportItem) -> bool:
    return item.document is not None and item.document.status is DocumentStatus.CANCELLED


def is_cancellation(item: ExportItem) -> bool:
    return item.event is not None and item.event.tp_evento in CANCELLATION_TYPES


def wants(profile: ExportProfile, item: ExportItem) -> bool:
    """The profile's own choice of products, kinds, directions, companies and statuses."""
    if profile.products and item.product not in profile.products:
        return False
    if profile.kinds and item.content not in profile.kinds:
        return False
    if profile.company_ids and item.company.id not in profile.company_ids:
        return False
    doc = item.document
    if profile.directions and (doc is None or doc.direction not in profile.directions):
        return False
    if profile.only_authorised and (
        item.event is not None or doc is None or doc.status is not DocumentStatus.AUTHORISED
    ):
        return False
    return True


class Exporter:
    """Writes items of one profile (or a manual export's settings) under its destination.

    ``write`` and ``remove`` are the only functions that change the disk (tests inject faults
    there); ``sleep`` waits between the tries at a file in use (a clock's).
    """

    def __init__(
        self,
        profile: ExportProfile,
        *,
        write: Writer = write_atomic,
        remove: Remover = remove_file,
        sleep: Callable[[float], None] = _SYSTEM_CLOCK.sleep,
    ) -> None:
        self.profile = profile
        self.root = Path(profile.destination)
        self._write = write
        self._remove = remove
        self._sleep = sleep

    # ------------------------------------------------------------------ names

    def document_path(
        self, item: ExportItem, *, as_kind: DocumentKind | None = None, cancelled: bool | None = None
    ) -> str:
        relative = render(self.profile.pattern, facts_of(item, as_kind=as_kind))
        moved = _cancelled(item) if cancelled is None else cancelled
        if moved and self.profile.cancelled_mode == "move":
            relative = f"{CANCELLED_FOLDER}/{relative}"
        return relative

    def event_path(self, item: ExportItem) -> str:
        relative = render(self.profile.pattern, facts_of(item))
        if self.profile.cancelled_mode == "beside" and is_cancellation(item) and item.document is not None:
            beside = self._document_of_event(item)
            folder = beside.rpartition("/")[0]
            relative = f"{folder}/{relative.rpartition('/')[2]}" if folder else relative.rpartition("/")[2]
        return relative

    def _document_of_event(self, item: ExportItem) -> str:
        assert item.document is not None
        doc_item = replace(item, item_type="document", kind=item.document.kind, event=None)
        return self.document_path(doc_item)

    def _other_names(self, item: ExportItem, target: str) -> set[str]:
        if item.event is not None:
            plain = render(self.profile.pattern, facts_of(item))
            return {plain} - {target}
        names = set()
        for kind in {item.kind, DocumentKind.RES_NFE, DocumentKind(_COMPLETE_LAYOUT[item.product])}:
            if item.product is not Product.NFE and kind is DocumentKind.RES_NFE:
                continue
            for cancelled in (False, True):
                names.add(self.document_path(item, as_kind=kind, cancelled=cancelled))
        return names - {target}

    # ------------------------------------------------------------------ writing

    def export(
        self, item: ExportItem, events: Iterable[ExportItem] = (), report: WriteReport | None = None
    ) -> WriteReport:
        """Write ``item`` (and, for a document, the PDF when the profile asks); ``events`` are the
        key's events, written beside a cancelled document when the profile says so."""
        report = report or WriteReport()
        if item.event is not None:
            self._place(item, self.event_path(item), report)
            return report
        target = self.document_path(item)
        self._place(item, target, report)
        if self.profile.include_pdf and item.content == "complete":
            self._pdf(item, target, events, report)
        if self.profile.cancelled_mode == "beside" and _cancelled(item):
            for event in events:
                if is_cancellation(event):
                    self._place(event, self.event_path(replace(event, document=item.document)), report)
        return report

    def _place(self, item: ExportItem, relative: str, report: WriteReport) -> None:
        path = self.root / relative
        if self._put(path, item.xml):
            report.written.append(path)
        else:
            report.unchanged.append(path)
        for other in self._other_names(item, relative):
            stale = self.root / other
            for path_of_it in (stale, stale.with_suffix(".pdf")):
                if self._delete(path_of_it):
                    report.removed.append(path_of_it)

    def _pdf(self, item: ExportItem, target: str, events: Iterable[ExportItem], report: WriteReport) -> None:
        try:
            content = render_pdf(item.xml, events=[e.xml for e in events])
        except PdfUnavailable:
            report.pdf_skipped += 1
            return
        path = (self.root / target).with_suffix(".pdf")
        if self._put(path, content):
            report.written.append(path)
        else:
            report.unchanged.append(path)

    def _put(self, path: Path, content: bytes) -> bool:
        """True when the file was (re)written; False when it already held exactly ``content``."""
        target = self._os_path(path)

        def put() -> bool:
            if target.is_file() and target.stat().st_size == len(content) and target.read_bytes() == content:
                return False
            make_folders(target.parent)
            self._write(target, content)
            return True

        return self._trying(path, target, put)

    def _delete(self, path: Path) -> bool:
        """Remove ``path`` (an item's file under a name it no longer has); False when absent."""
        target = self._os_path(path)

        def delete() -> bool:
            with contextlib.suppress(FileNotFoundError):
                self._remove(target)
                return True
            return False

        return self._trying(path, target, delete)

    def _os_path(self, path: Path) -> Path:
        try:
            return for_writing(path)
        except PathTooLong as problem:
            raise ExportWriteFailed(
                f"Exportação para {self.root} falhou: caminho longo demais ({problem}): {path}. "
                "Use um modelo de nome mais curto ou uma pasta de destino mais próxima da raiz.",
                destination_down=False,
            ) from None

    def _trying(self, path: Path, target: Path, action: Callable[[], T]) -> T:
        """``action()`` on ``target`` (``path`` as the OS takes it); a file held open by another
        program is tried again after each pause."""
        pauses = iter(IN_USE_PAUSES)
        while True:
            try:
                return action()
            except (OSError, CapturaError) as raised:
                error = raised if isinstance(raised, OSError) else raised.__cause__
                if not isinstance(error, OSError):
                    raise
                busy = in_use(error, target)
                pause = next(pauses, None) if busy else None
                if pause is None:
                    raise self._failure(error, path, busy=busy) from raised
                log.info("arquivo em uso por outro programa, nova tentativa em %.2f s: %s", pause, path)
                self._sleep(pause)

    def _failure(self, error: OSError, path: Path, *, busy: bool = False) -> ExportWriteFailed:
        if busy:
            return ExportWriteFailed(
                f"Exportação para {self.root} falhou: arquivo em uso por outro programa: {path.name} "
                f"(em {path.parent}).",
                destination_down=False,
                in_use=True,
            )
        down = error.errno in _DOWN or not self._root_usable()
        return ExportWriteFailed(
            f"Exportação para {self.root} falhou: {reason_of(error, path)}.", destination_down=down
        )

    def _root_usable(self) -> bool:
        try:
            return self.root.is_dir()
        except OSError:
            return False
