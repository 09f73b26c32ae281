"""Validation against the official XSDs shipped inside the installed ``nfelib`` package.

The XSDs are located with ``importlib.resources`` (never copied), compiled once per process and
cached. An lxml ``XMLSchema`` keeps its error log on the object, so one schema is never used by
two threads at once: each compiled schema has its own lock.
"""

from __future__ import annotations

import importlib.resources
import re
import threading
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TypeAlias

from lxml import etree

from app.core.errors import CapturaError
from app.safexml import parse_xml

_PACKAGE = "nfelib"
_SHOWN_ERRORS = 3
# "{http://www.portalfiscal.inf.br/nfe}NSU" → "NSU": the namespace only clutters a user message.
_NAMESPACE_PREFIX = re.compile(r"\{(?:https?|urn):[^}]*\}")


class Schema(Enum):
    """An official root schema; the value is its path inside the ``nfelib`` package."""

    # NF-e distribution (NT 2014.002, PL_NFeDistDFe_104)
    NFE_DIST_REQUEST = "nfe_dist_dfe/schemas/v1_0/distDFeInt_v1.01.xsd"
    NFE_DIST_RESPONSE = "nfe_dist_dfe/schemas/v1_0/retDistDFeInt_v1.01.xsd"
    NFE_RES_NFE = "nfe_dist_dfe/schemas/v1_0/resNFe_v1.01.xsd"
    NFE_RES_EVENTO = "nfe_dist_dfe/schemas/v1_0/resEvento_v1.01.xsd"
    # NF-e 4.00 authorised document and events
    NFE_PROC = "nfe/schemas/v4_0/procNFe_v4.00.xsd"
    NFE_PROC_EVENTO = "nfe_evento_generico/schemas/v1_0/procEventoNFe_v1.00.xsd"
    NFE_ENV_EVENTO = "nfe_evento_generico/schemas/v1_0/envEvento_v1.00.xsd"
    NFE_RET_ENV_EVENTO = "nfe_evento_generico/schemas/v1_0/retEnvEvento_v1.00.xsd"
    # Recipient manifestation (MD-e, 210200/210210/210220/210240)
    MDE_ENV_EVENTO = "nfe_evento_mde/schemas/v1_0/envConfRecebto_v1.00.xsd"
    MDE_RET_ENV_EVENTO = "nfe_evento_mde/schemas/v1_0/retEnvConfRecebto_v1.00.xsd"
    MDE_PROC_EVENTO = "nfe_evento_mde/schemas/v1_0/procConfRecebtoNFe_v1.00.xsd"
    # CT-e distribution (NT 2015.002) and CT-e 4.00
    CTE_DIST_REQUEST = "cte_dist_dfe/schemas/v1_0/distDFeInt_v1.00.xsd"
    CTE_DIST_RESPONSE = "cte_dist_dfe/schemas/v1_0/retDistDFeInt_v1.00.xsd"
    CTE_PROC = "cte/schemas/v4_0/procCTe_v4.00.xsd"
    CTE_PROC_EVENTO = "cte/schemas/v4_0/procEventoCTe_v4.00.xsd"
    # NFS-e Nacional: nfelib 3.2.0 ships leiaute 1.01 (the 1.00 files are gone)
    NFSE = "nfse/schemas/v1_0/NFSe_v1.01.xsd"
    NFSE_DPS = "nfse/schemas/v1_0/DPS_v1.01.xsd"
    NFSE_EVENTO = "nfse/schemas/v1_0/evento_v1.01.xsd"
    NFSE_PED_REG_EVENTO = "nfse/schemas/v1_0/pedRegEvento_v1.01.xsd"

    @property
    def file_name(self) -> str:
        """The XSD file name, as in a docZip's ``schema`` attribute (e.g. "resNFe_v1.01.xsd")."""
        return self.value.rsplit("/", 1)[1]

    @property
    def path(self) -> Path:
        """The XSD on disk (its includes are resolved relative to it, so it must be a real file)."""
        resource = importlib.resources.files(_PACKAGE)
        # One part at a time: Python 3.11's MultiplexedPath (what a PyInstaller bundle's package
        # reader gives) takes a single name.
        for part in self.value.split("/"):
            resource = resource.joinpath(part)
        path = Path(str(resource))
        if not path.is_file():
            raise SchemaUnavailable(self)
        return path

    @classmethod
    def by_file_name(cls, file_name: str) -> Schema | None:
        """The schema a docZip ``schema`` attribute names, if it is one of ours."""
        for schema in cls:
            if schema.file_name == file_name:
                return schema
        return None


class SchemaUnavailable(CapturaError):
    """The installation lacks an official XSD (a packaging fault, not a document fault)."""

    def __init__(self, schema: Schema) -> None:
        super().__init__(
            f"O esquema oficial {schema.file_name} não foi encontrado na instalação "
            f"(pacote {_PACKAGE}, {schema.value}). Reinstale o programa."
        )
        self.schema = schema


class SchemaInvalid(CapturaError):
    """The document does not follow the official schema; ``errors`` has every message found."""

    def __init__(self, schema: Schema, errors: list[str]) -> None:
        shown = "; ".join(errors[:_SHOWN_ERRORS])
        more = f" (e mais {len(errors) - _SHOWN_ERRORS} erro(s))" if len(errors) > _SHOWN_ERRORS else ""
        super().__init__(f"O documento não confere com o esquema oficial {schema.file_name}: {shown}{more}")
        self.schema = schema
        self.errors = errors


@dataclass(frozen=True)
class _Compiled:
    validator: etree.XMLSchema
    lock: threading.Lock


_compiled: dict[Schema, _Compiled] = {}
_compile_lock = threading.Lock()

Document: TypeAlias = etree._Element | etree._ElementTree | bytes


def errors(document: Document, schema: Schema) -> list[str]:
    """Every schema error, as "linha N: mensagem"; empty when valid.

    ``bytes`` are parsed with :func:`app.safexml.parse_xml` (so they may raise ``XmlRejected``);
    an element may be a sub-tree (e.g. ``retDistDFeInt`` inside a SOAP envelope).
    """
    element = _element(document)
    compiled = _get(schema)
    with compiled.lock:
        if compiled.validator.validate(element):
            return []
        entries = list(compiled.validator.error_log)
    return [f"linha {entry.line}: {_NAMESPACE_PREFIX.sub('', entry.message)}" for entry in entries]


def validate(document: Document, schema: Schema) -> None:
    """Raise :class:`SchemaInvalid` when ``document`` does not follow ``schema``."""
    found = errors(document, schema)
    if found:
        raise SchemaInvalid(schema, found)


def _element(document: Document) -> etree._Element:
    if isinstance(document, bytes):
        return parse_xml(document)
    if isinstance(document, etree._ElementTree):
        return document.getroot()
    return document


def _get(schema: Schema) -> _Compiled:
    compiled = _compiled.get(schema)
    if compiled is None:
        with _compile_lock:
            compiled = _compiled.get(schema)
            if compiled is None:
                compiled = _Compiled(_compile(schema), threading.Lock())
                _compiled[schema] = compiled
    return compiled


def _compile(schema: Schema) -> etree.XMLSchema:
    # The XSDs are trusted package files; still, never let a schema import reach the network.
    parser = etree.XMLParser(no_network=True, resolve_entities=False)
    return etree.XMLSchema(etree.parse(str(schema.path), parser))
