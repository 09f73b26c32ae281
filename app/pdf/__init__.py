"""DANFE, DACTE and DANFSe rendered from the stored XML (reportlab, embedded DejaVu fonts).

``render_pdf`` is the one entry: it reads the root element and hands the bytes to the
product's renderer, each with the same signature ``(xml, *, events=()) -> bytes``. ``events``
are the stored event XMLs of the same key (a cancellation among them marks the PDF).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from app.pdf.errors import PdfError
from app.safexml import parse_xml
from app.safexml.errors import XmlRejected

__all__ = ["PdfError", "document_type", "render_pdf"]

NFE_NS = "http://www.portalfiscal.inf.br/nfe"
CTE_NS = "http://www.portalfiscal.inf.br/cte"
NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"

# root (namespace, local name) -> (document type, module, function)
_RENDERERS: dict[tuple[str, str], tuple[str, str, str]] = {
    (NFE_NS, "nfeProc"): ("DANFE", "app.pdf.danfe", "render_danfe"),
    (NFE_NS, "NFe"): ("DANFE", "app.pdf.danfe", "render_danfe"),
    (NFE_NS, "resNFe"): ("DANFE", "app.pdf.danfe", "render_danfe"),
    (CTE_NS, "cteProc"): ("DACTE", "app.pdf.dacte", "render_dacte"),
    (CTE_NS, "CTe"): ("DACTE", "app.pdf.dacte", "render_dacte"),
    (CTE_NS, "cteOSProc"): ("DACTE", "app.pdf.dacte", "render_dacte"),
    (CTE_NS, "CTeOS"): ("DACTE", "app.pdf.dacte", "render_dacte"),
    (NFSE_NS, "NFSe"): ("DANFSe", "app.pdf.danfse", "render_danfse"),
}
Renderer = Callable[..., bytes]


def _root_name(xml: bytes) -> tuple[str, str]:
    try:
        root = parse_xml(xml)
    except XmlRejected as error:
        raise PdfError(f"Não foi possível gerar o PDF: XML ilegível ({error.message}).") from error
    tag = root.tag if isinstance(root.tag, str) else ""
    ns, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    return ns, local


def document_type(xml: bytes) -> str:
    """ "DANFE", "DACTE" or "DANFSe" for the XML; raises :class:`PdfError` for anything else."""
    return _entry(xml)[0]


def _entry(xml: bytes) -> tuple[str, str, str]:
    ns, local = _root_name(xml)
    found = _RENDERERS.get((ns, local))
    if found is None:
        raise PdfError(
            f"Não há PDF para este documento ({local or 'sem elemento raiz'}): "
            "só NF-e (DANFE), CT-e (DACTE) e NFS-e (DANFSe) são impressos."
        )
    return found


def _pick(xml: bytes) -> tuple[str, Renderer]:
    kind, module, function = _entry(xml)
    try:
        renderer = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as error:
        raise PdfError(f"O {kind} ainda não está disponível nesta versão.") from error
    return kind, renderer


def render_pdf(xml: bytes, *, events: Sequence[bytes] = ()) -> bytes:
    """The PDF of a stored document; ``events`` are its stored events (cancellation marks it).
    Raises :class:`PdfError` (Portuguese message) for what cannot be rendered."""
    _kind, renderer = _pick(xml)
    try:
        return renderer(xml, events=events)
    except PdfError:
        raise
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, ArithmeticError) as error:
        # a renderer's bug on an odd document: the user gets a sentence, the log gets the cause
        raise PdfError(f"Não foi possível gerar o {_kind}: {type(error).__name__} ({error}).") from error
