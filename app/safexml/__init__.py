"""Safe handling of XML and compressed payloads received from outside the app.

Every byte that comes from a government service, a docZip, the ADN or a user import goes through
:func:`parse_xml` (strict lxml, no DTD, no entities, UTF-8 only, bounded size) and, when
compressed, through :func:`inflate` / :func:`decode_doczip` (bounded streaming gunzip;
:func:`doczip_gzip` gives a docZip's gzip bytes for a caller that keeps them).
"""

from app.safexml.errors import (
    CorruptPayload,
    DoctypeForbidden,
    EntityForbidden,
    MalformedXml,
    NotUtf8,
    TooLarge,
    XmlRejected,
)
from app.safexml.parse import DEFAULT_MAX, MiB, parse_xml, parse_xml_file
from app.safexml.payload import decode_doczip, doczip_gzip, inflate

__all__ = [
    "DEFAULT_MAX",
    "CorruptPayload",
    "DoctypeForbidden",
    "EntityForbidden",
    "MalformedXml",
    "MiB",
    "NotUtf8",
    "TooLarge",
    "XmlRejected",
    "decode_doczip",
    "doczip_gzip",
    "inflate",
    "parse_xml",
    "parse_xml_file",
]
