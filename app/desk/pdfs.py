"""Where PDFs come from: the DANFE is generated on first request and kept; DACTE and DANFSe on
each request (seed 000 §4.8, §5.6, §6.4.5).

A kept DANFE is named after the key and a digest of everything it was drawn from (the XML, the
stored events, the renderer's version), so a new version of the document, a cancellation that
arrives later or a new layout regenerates it, and an older file of the same key is removed.
Rendering takes tens of milliseconds: callers run it on a worker, never on the GUI thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
from collections.abc import Sequence
from pathlib import Path

from app.core.products import Product
from app.desk.files import write_atomic
from app.pdf import render_pdf

log = logging.getLogger(__name__)
RENDERER_VERSION = b"danfe-2"  # change when the DANFE's drawing changes: kept files regenerate
CACHE_DIR = "pdf"
_SAFE_KEY = re.compile(r"[0-9A-Za-z]{1,60}")


class PdfCache:
    """The data folder's kept DANFEs (``<data>/pdf/<key>-<digest>.pdf``)."""

    def __init__(self, data_dir: Path) -> None:
        self.folder = data_dir / CACHE_DIR

    @staticmethod
    def digest(xml: bytes, events: Sequence[bytes]) -> str:
        h = hashlib.sha256(RENDERER_VERSION)
        for part in (xml, *sorted(events)):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
        return h.hexdigest()[:20]

    def path(self, key: str, xml: bytes, events: Sequence[bytes]) -> Path:
        name = key if _SAFE_KEY.fullmatch(key) else hashlib.sha256(key.encode()).hexdigest()[:44]
        return self.folder / f"{name}-{self.digest(xml, events)}.pdf"

    def pdf(self, product: Product, key: str, xml: bytes, events: Sequence[bytes] = ()) -> bytes:
        """The PDF of a document: a kept DANFE when there is one, else rendered now (and, for an
        NF-e, kept). Raises :class:`app.pdf.PdfError` for what cannot be rendered."""
        if product is not Product.NFE:
            return render_pdf(xml, events=events)
        target = self.path(key, xml, events)
        try:
            return target.read_bytes()
        except OSError:
            pass
        content = render_pdf(xml, events=events)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(target, content)
        except Exception:  # a full or read-only disk costs the cache, never the PDF
            log.warning("DANFE não guardado em %s", target, exc_info=True)
            return content
        self._drop_older(target)
        return content

    def _drop_older(self, kept: Path) -> None:
        prefix = kept.name.rsplit("-", 1)[0] + "-"
        for old in self.folder.glob(f"{prefix}*.pdf"):
            if old != kept and len(old.name) == len(kept.name):
                with contextlib.suppress(OSError):
                    old.unlink()
