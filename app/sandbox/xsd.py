"""Official XSD validation for the sandbox, by the file names the wire uses ("resNFe_v1.01").

A thin adapter over :mod:`app.fiscal.schemas`, so the sandbox and the app judge documents by the
same compiled schemas.
"""

from __future__ import annotations

import functools

from lxml import etree

from app.fiscal import schemas
from app.fiscal.schemas import Schema


class SchemaError(Exception):
    """The document does not validate; ``str()`` is the first error line."""


@functools.cache  # a handful of names, asked on every request
def _schema(name: str) -> Schema:
    schema = Schema.by_file_name(name.removesuffix(".xsd") + ".xsd")
    if schema is None:
        raise KeyError(f"no official schema named {name!r}")
    return schema


def errors(element: etree._Element | bytes, name: str) -> list[str]:
    """The validation errors (empty when valid); ``name`` is the XSD file name with or without .xsd."""
    return schemas.errors(element, _schema(name))


def validate(element: etree._Element | bytes, name: str) -> None:
    problems = errors(element, name)
    if problems:
        raise SchemaError(problems[0])


# The @schema attribute value announced in a docZip, by document kind.
DOCZIP_SCHEMA = {
    "resNFe": "resNFe_v1.01.xsd",
    "procNFe": "procNFe_v4.00.xsd",
    "resEvento": "resEvento_v1.01.xsd",
    "procEventoNFe": "procEventoNFe_v1.00.xsd",
    "procCTe": "procCTe_v4.00.xsd",
    "procEventoCTe": "procEventoCTe_v4.00.xsd",
}
