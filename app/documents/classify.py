"""What a distributed document is, decided by its root element; the docZip ``schema`` is a hint only.

Schema names vary by version and source (``resNFe_v1.00.xsd``/``_v1.01``, ``procNFe_v3.10.xsd``/
``v4.00``, the annotation's ``resEvento_1.00.xsd``), so only the name before the first ``_`` counts,
and where it disagrees with the root the root wins (protocol.md §1.5).
"""

from __future__ import annotations

from lxml import etree

from app.core.documents import DocumentKind

NFE_NS = "http://www.portalfiscal.inf.br/nfe"

# (namespace-qualified root tag) -> kind. A bare signed ``NFe`` or ``evento`` (user imports, never
# distributed) is read as the full form without its protocol.
ROOT_KINDS: dict[str, DocumentKind] = {
    f"{{{NFE_NS}}}resNFe": DocumentKind.RES_NFE,
    f"{{{NFE_NS}}}nfeProc": DocumentKind.NFE_PROC,
    f"{{{NFE_NS}}}NFe": DocumentKind.NFE_PROC,
    f"{{{NFE_NS}}}resEvento": DocumentKind.RES_EVENTO,
    f"{{{NFE_NS}}}procEventoNFe": DocumentKind.PROC_EVENTO_NFE,
    f"{{{NFE_NS}}}evento": DocumentKind.PROC_EVENTO_NFE,
}

_SCHEMA_KINDS: dict[str, DocumentKind] = {
    "resnfe": DocumentKind.RES_NFE,
    "procnfe": DocumentKind.NFE_PROC,
    "nfeproc": DocumentKind.NFE_PROC,
    "resevento": DocumentKind.RES_EVENTO,
    "proceventonfe": DocumentKind.PROC_EVENTO_NFE,
}


def kind_from_schema(schema: str | None) -> DocumentKind | None:
    """The kind a docZip ``schema`` attribute announces, or None when it names nothing known."""
    if not schema:
        return None
    return _SCHEMA_KINDS.get(schema.strip().split("_", 1)[0].split(".", 1)[0].lower())


def split_tag(tag: str) -> tuple[str | None, str]:
    """``"{ns}local"`` → (ns, local); an un-namespaced tag gives (None, tag)."""
    if tag.startswith("{"):
        ns, _, local = tag[1:].partition("}")
        return ns, local
    return None, tag


def classify(root: etree._Element) -> DocumentKind:
    """The kind of a parsed document by its root element (UNKNOWN for anything else)."""
    tag = root.tag
    if not isinstance(tag, str):  # a comment or processing instruction cannot be a root, but be sure
        return DocumentKind.UNKNOWN
    return ROOT_KINDS.get(tag, DocumentKind.UNKNOWN)
