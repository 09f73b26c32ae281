"""The PDF of an exported document, behind one function the lead wires after merging app.pdf.

Another branch writes ``app.pdf.render_pdf(xml: bytes, *, events: Sequence[bytes] = ()) -> bytes``;
until it lands, :func:`render_pdf` raises ``PdfUnavailable`` with a sentence for the user, and
the exporters keep writing the XML.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.errors import CapturaError

UNAVAILABLE = (
    "A geração de PDF (DANFE, DACTE, DANFSe) ainda não está disponível nesta versão do Captura DF-e: "
    "exporte sem --pdf; os XML são exportados normalmente."
)


class PdfUnavailable(CapturaError):
    def __init__(self) -> None:
        super().__init__(UNAVAILABLE)


def pdf_available() -> bool:
    return False


def render_pdf(xml: bytes, *, events: Sequence[bytes] = ()) -> bytes:
    """The document's PDF; to be ``return app.pdf.render_pdf(xml, events=events)``."""
    raise PdfUnavailable()
