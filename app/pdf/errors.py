"""What the renderers refuse, in a sentence the user understands."""

from __future__ import annotations

from lxml import etree

from app.core.errors import CapturaError
from app.safexml import XmlRejected, parse_xml


class PdfError(CapturaError):
    """This XML cannot be printed (not a document we render, or missing what the layout needs)."""


def parsed(xml: bytes, kind: str) -> etree._Element:
    """``xml`` through the one safe parser, or a :class:`PdfError` saying which PDF it stops
    (``kind``: "PDF", "DANFE"...). Parsed once: every reader of one PDF takes this root."""
    try:
        return parse_xml(xml)
    except XmlRejected as error:
        raise PdfError(f"Não foi possível gerar o {kind}: XML ilegível ({error.message}).") from error
