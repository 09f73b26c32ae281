"""Parsing and classifying NF-e, CT-e and NFS-e documents into metadata.

NF-e: :func:`read_nfe_document` turns the bytes of one distributed document into
:class:`NfeMeta`, :class:`EventMeta` or :class:`UnknownMeta`; :func:`roles_of` and
:func:`direction_of` say who the company is in it.
"""

from app.core.documents import Direction, DocumentKind, DocumentStatus, PartyRole
from app.documents.classify import NFE_NS, classify, kind_from_schema
from app.documents.model import (
    DocumentDataError,
    DocumentError,
    DocumentMeta,
    EventMeta,
    NfeMeta,
    PartyInfo,
    UnknownMeta,
    UnsupportedDocument,
    direction_of,
    roles_of,
    to_json_dict,
)
from app.documents.nfe import read_nfe_document, read_nfe_root

__all__ = [
    "NFE_NS",
    "Direction",
    "DocumentDataError",
    "DocumentError",
    "DocumentKind",
    "DocumentMeta",
    "DocumentStatus",
    "EventMeta",
    "NfeMeta",
    "PartyInfo",
    "PartyRole",
    "UnknownMeta",
    "UnsupportedDocument",
    "classify",
    "direction_of",
    "kind_from_schema",
    "read_nfe_document",
    "read_nfe_root",
    "roles_of",
    "to_json_dict",
]
