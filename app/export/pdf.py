"""The PDF written beside an exported document (DANFE, DACTE, DANFSe), from ``app.pdf``.

A document whose PDF cannot be made (an odd layout the renderers refuse) costs its PDF only:
:class:`PdfUnavailable` carries the reason, the exporters count it and keep writing the XML.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from app.core.errors import CapturaError

log = logging.getLogger(__name__)


class PdfUnavailable(CapturaError):
    """No PDF for this document; the message says why."""


def render_pdf(xml: bytes, *, events: Sequence[bytes] = ()) -> bytes:
    """The document's PDF (its cancellation among ``events`` marks it)."""
    from app.pdf import render_pdf as render  # reportlab: loaded by the first export with PDFs
    from app.pdf.errors import PdfError

    try:
        return render(xml, events=events)
    except PdfError as error:
        log.warning("PDF não gerado na exportação: %s", error.message)
        raise PdfUnavailable(error.message) from error
