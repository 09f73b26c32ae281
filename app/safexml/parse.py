"""The one strict parser for XML that comes from outside (SOAP replies, docZip, ADN, user imports).

Refusals, in the order they are checked (cheapest first, before lxml sees a byte):
size limit → encoding declaration other than UTF-8, UTF-16/32 or NUL bytes → invalid UTF-8 →
``<!DOCTYPE`` in the prolog (with ``<!ENTITY`` → :class:`EntityForbidden`) → lxml strict parse
(never a recovering parser) → a DOCTYPE or DTD left after parsing (defence in depth).
"""

from __future__ import annotations

import codecs
import os
import re
import threading
from pathlib import Path

from lxml import etree

from app.safexml.errors import DoctypeForbidden, EntityForbidden, MalformedXml, NotUtf8, TooLarge

MiB = 1024 * 1024
# A 990-item NF-e is about 2 MB and a 50-docZip reply a few MB; 20 MiB leaves room and caps memory.
DEFAULT_MAX = 20 * MiB

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff")  # also covers the UTF-32 LE BOM (ff fe 00 00)
_XML_DECLARATION = re.compile(rb"<\?xml\s[^>]*?\?>")
# What nearly every fiscal document begins with: accepted without the two regular expressions.
_UTF8_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>'
_ENCODING_PSEUDO_ATTR = re.compile(rb"""encoding\s*=\s*(["'])([^"']*)\1""")
_UTF8_NAMES = frozenset({"utf-8", "utf8"})
# The prolog ends where the root element starts: "<" followed by a name-start character.
_ELEMENT_START = re.compile(rb"<[A-Za-z_:\x80-\xff]")
_UTF8_CHECK_CHUNK = 1 * MiB
_LXML_POSITION_SUFFIX = re.compile(r"(,\s*line \d+, column \d+|\s*\(<string>, line \d+\))\s*$")

_DOCTYPE_MESSAGE = "O documento contém DOCTYPE, que documentos fiscais não usam. Documento recusado."
_ENTITY_MESSAGE = (
    "O documento declara entidades XML (DOCTYPE com <!ENTITY>), recurso usado em ataques; "
    "documentos fiscais nunca as usam. Documento recusado."
)

_local = threading.local()


def _parser() -> etree.XMLParser:
    # lxml parsers keep per-parse state and must not be shared across threads.
    parser: etree.XMLParser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            huge_tree=False,
            remove_blank_text=False,
            recover=False,
            dtd_validation=False,
            attribute_defaults=False,
            # No ID table: nothing looks elements up by Id through lxml's index (signature
            # references are resolved by XPath), and building it cost 15% of a parse.
            collect_ids=False,
        )
        _local.parser = parser
    return parser


def human_size(n: int) -> str:
    """Bytes as a PT-BR size for messages: "52,4 MB", "900 bytes"."""
    if n < 1024:
        return f"{n} bytes"
    if n < MiB:
        return f"{n / 1024:.1f} KB".replace(".", ",")
    return f"{n / MiB:.1f} MB".replace(".", ",")


def parse_xml(data: bytes | bytearray | memoryview, *, max_bytes: int = DEFAULT_MAX) -> etree._Element:
    """Parse external XML strictly and return its root element; raise an ``XmlRejected`` subclass.

    The element's tree (``root.getroottree()``) is the whole document. A UTF-8 BOM is tolerated.
    """
    if isinstance(data, str):
        raise TypeError("parse_xml recebe bytes, não str (a codificação faz parte da verificação)")
    size = len(data) if not isinstance(data, memoryview) else data.nbytes
    if size > max_bytes:
        raise TooLarge(
            f"Documento XML de {human_size(size)} excede o limite de {human_size(max_bytes)}.",
            what="xml",
            limit=max_bytes,
        )
    raw = bytes(data) if not isinstance(data, bytes) else data
    _check_declared_encoding(raw)
    _check_prolog(raw)
    try:
        root = etree.fromstring(raw, _parser())
    except etree.XMLSyntaxError as exc:
        # Bytes that are not UTF-8 (NUL, a lone byte, UTF-16 without its BOM) fail libxml2's own
        # strict decoding: only then is the whole body scanned, for a clearer message.
        _check_encoding(raw)
        line, column = exc.position if exc.position else (None, None)
        raise MalformedXml(_clean_lxml_message(exc.msg), line=line or None, column=column) from None
    _check_tree(root)
    return root


def parse_xml_file(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX) -> etree._Element:
    """Parse a file (user import) with :func:`parse_xml`; an oversized file is refused before reading.

    ``OSError`` (missing file, no permission) propagates unchanged.
    """
    path = Path(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise TooLarge(
            f"O arquivo {path.name} tem {human_size(size)} e excede o limite de {human_size(max_bytes)}.",
            what="xml",
            limit=max_bytes,
        )
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)  # the file may have grown since stat()
    return parse_xml(data, max_bytes=max_bytes)


def _check_declared_encoding(data: bytes) -> None:
    """What libxml2 would accept but the services refuse: a UTF-16/32 BOM or another declared
    encoding (cheap: the first bytes). The body itself is left to the parser."""
    if data.startswith(_UTF8_DECLARATION):
        return
    if data.startswith(_UTF16_32_BOMS):
        raise NotUtf8("O documento está em UTF-16/UTF-32; os serviços fiscais exigem UTF-8.")
    _check_declaration(data[len(_UTF8_BOM) :] if data.startswith(_UTF8_BOM) else data)


def _check_encoding(data: bytes) -> None:
    if data.startswith(_UTF16_32_BOMS) or b"\x00" in data:
        raise NotUtf8("O documento está em UTF-16/UTF-32; os serviços fiscais exigem UTF-8.")
    body = data[len(_UTF8_BOM) :] if data.startswith(_UTF8_BOM) else data
    _check_declaration(body)
    _check_utf8_bytes(body)


def _check_declaration(body: bytes) -> None:
    declaration = _XML_DECLARATION.match(body)
    if declaration:
        encoding = _ENCODING_PSEUDO_ATTR.search(declaration.group(0))
        if encoding:
            name = encoding.group(2).decode("ascii", "replace")
            if name.strip().lower() not in _UTF8_NAMES:
                raise NotUtf8(f"O documento declara a codificação '{name}'; os serviços fiscais exigem UTF-8.")


def _check_utf8_bytes(data: bytes) -> None:
    if data.isascii():  # ASCII is valid UTF-8; the scan runs at memory speed
        return
    # Chunked so a 20 MB document never becomes an 80 MB str just to be checked.
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(data)
    for offset in range(0, len(data), _UTF8_CHECK_CHUNK):
        chunk = view[offset : offset + _UTF8_CHECK_CHUNK]
        try:
            decoder.decode(chunk, final=offset + _UTF8_CHECK_CHUNK >= len(data))
        except UnicodeDecodeError as exc:
            buffered = len(exc.object) - len(chunk)
            position = max(0, offset - buffered + exc.start)
            line = data.count(b"\n", 0, position) + 1
            raise NotUtf8(
                f"O documento contém bytes que não são UTF-8 válido (linha {line}, byte {position}); "
                "os serviços fiscais exigem UTF-8."
            ) from None


def _check_prolog(data: bytes) -> None:
    root_start = _ELEMENT_START.search(data)
    prolog = data[: root_start.start()] if root_start else data
    doctype_at = prolog.find(b"<!DOCTYPE")
    if doctype_at < 0:
        return
    if b"<!ENTITY" in data[doctype_at:]:
        raise EntityForbidden(_ENTITY_MESSAGE)
    raise DoctypeForbidden(_DOCTYPE_MESSAGE)


def _check_tree(root: etree._Element) -> None:
    docinfo = root.getroottree().docinfo
    dtd = docinfo.internalDTD
    if dtd is not None and next(iter(dtd.iterentities()), None) is not None:
        raise EntityForbidden(_ENTITY_MESSAGE)
    if docinfo.doctype or docinfo.internalDTD is not None or docinfo.externalDTD is not None:
        raise DoctypeForbidden(_DOCTYPE_MESSAGE)
    # No walk for entity nodes: without a DTD none can exist (the strict parser refuses an
    # undeclared reference as malformed, tested), and any DTD was refused above. The walk cost
    # 8% of parsing a 14 KB nfeProc.


def _clean_lxml_message(message: str) -> str:
    # libxml2 appends ", line N, column M"; the position is reported separately.
    cleaned = _LXML_POSITION_SUFFIX.sub("", message or "")
    return cleaned.strip() or "erro de sintaxe"
