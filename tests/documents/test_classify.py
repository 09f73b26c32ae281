"""Root-element classification and the docZip schema hint, for every schema spelling seen."""

from __future__ import annotations

import pytest

from app.documents import DocumentKind, classify, kind_from_schema
from app.safexml import parse_xml

NFE = "http://www.portalfiscal.inf.br/nfe"


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        ("resNFe_v1.00.xsd", DocumentKind.RES_NFE),
        ("resNFe_v1.01.xsd", DocumentKind.RES_NFE),
        ("procNFe_v3.10.xsd", DocumentKind.NFE_PROC),
        ("procNFe_v4.00.xsd", DocumentKind.NFE_PROC),
        ("resEvento_1.00.xsd", DocumentKind.RES_EVENTO),  # the XSD annotation's spelling
        ("resEvento_v1.01.xsd", DocumentKind.RES_EVENTO),
        ("procEventoNFe_v1.00.xsd", DocumentKind.PROC_EVENTO_NFE),
        (" ProcEventoNFe_v1.00.xsd ", DocumentKind.PROC_EVENTO_NFE),
        ("procCTe_v4.00.xsd", None),
        ("", None),
        (None, None),
    ],
)
def test_kind_from_schema(schema: str | None, kind: DocumentKind | None) -> None:
    assert kind_from_schema(schema) is kind


@pytest.mark.parametrize(
    ("root", "kind"),
    [
        ("resNFe", DocumentKind.RES_NFE),
        ("nfeProc", DocumentKind.NFE_PROC),
        ("NFe", DocumentKind.NFE_PROC),
        ("resEvento", DocumentKind.RES_EVENTO),
        ("procEventoNFe", DocumentKind.PROC_EVENTO_NFE),
        ("evento", DocumentKind.PROC_EVENTO_NFE),
        ("retDistDFeInt", DocumentKind.UNKNOWN),
        ("procNFe", DocumentKind.UNKNOWN),  # a schema name, never a root
    ],
)
def test_classify_by_root(root: str, kind: DocumentKind) -> None:
    assert classify(parse_xml(f'<{root} xmlns="{NFE}"/>'.encode())) is kind


def test_classify_needs_the_nfe_namespace() -> None:
    assert classify(parse_xml(b'<resNFe xmlns="http://www.portalfiscal.inf.br/cte"/>')) is DocumentKind.UNKNOWN
