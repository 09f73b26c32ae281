"""DANFE, DACTE and DANFSe rendered from the stored XML (reportlab, embedded DejaVu fonts).

``render_pdf`` is the one entry: it parses the XML once and hands the tree to the
product's renderer, each with the same signature ``(root, *, events=()) -> bytes``. ``events``
are the stored event XMLs of the same key (a cancellation among them marks the PDF).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence

from lxml import etree

from app.pdf.errors import PdfError, parsed

__all__ = ["PdfError", "document_type", "render_pdf"]

NFE_NS = "http://www.portalfiscal.inf.br/nfe"
CTE_NS = "http://www.portalfiscal.inf.br/cte"
NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"

# root (namespace, local name) -> (document type, module, function)
_RENDERERS: dict[tuple[str, str], tuple[str, str, str]] = {
    (NFE_NS, "nfeProc"): ("DANFE", "app.pdf.danfe", "render_danfe_root"),
    (NFE_NS, "NFe"): ("DANFE", "app.pdf.danfe", "render_danfe_root"),
    (NFE_NS, "resNFe"): ("DANFE", "app.pdf.danfe", "render_danfe_root"),
    (CTE_NS, "cteProc"): ("DACTE", "app.pdf.dacte", "render_dacte_root"),
    (CTE_NS, "CTe"): ("DACTE", "app.pdf.dacte", "render_dacte_root"),
    (CTE_NS, "cteOSProc"): ("DACTE", "app.pdf.dacte", "render_dacte_root"),
    (CTE_NS, "CTeOS"): ("DACTE", "app.pdf.dacte", "render_dacte_root"),
    (NFSE_NS, "NFSe"): ("DANFSe", "app.pdf.danfse", "render_danfse_root"),
}
Renderer = Callable[..., bytes]


def _root_name(root: etree._Element) -> tuple[str, str]:
    tag = root.tag if isinstance(root.tag, str) else ""
    ns, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    return ns, local


def document_type(xml: bytes) -> str:
    """ "DANFE", "DACTE" or "DANFSe" for the XML; raises :class:`PdfError` for anything else."""
    return _entry(parsed(xml, "PDF"))[0]


def _entry(root: etree._Element) -> tuple[str, str, str]:
    ns, local = _root_name(root)
    found = _RENDERERS.get((ns, local))
    if found is None:
        raise PdfError(
            f"Não há PDF para este documento ({local or 'sem elemento raiz'}): "
            "só NF-e (DANFE), CT-e (DACTE) e NFS-e (DANFSe) são impressos."
        )
    return found


def _pick(root: etree._Element) -> tuple[str, Renderer]:
    kind, module, function = _entry(root)
    try:
        renderer = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as error:
        raise PdfError(f"O {kind} ainda não está disponível nesta versão.") from error
    return kind, renderer


def render_pdf(xml: bytes, *, events: Sequence[bytes] = ()) -> bytes:
    """The PDF of a stored document; ``events`` are its stored events (cancellation marks it).
    Raises :class:`PdfError` (Portuguese message) for what cannot be rendered."""
    root = parsed(xml, "PDF")  # once: the renderer and the documents reader take this tree
    _kind, renderer = _pick(root)
    try:
        return renderer(root, events=events)
    except PdfError:
        raise
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, ArithmeticError) as error:
        # a renderer's bug on an odd document: the user gets a sentence, the log gets the cause
        raise PdfError(f"Não foi possível gerar o {_kind}: {type(error).__name__} ({error}).") from error
