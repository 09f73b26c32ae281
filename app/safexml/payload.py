"""Bounded decoding of compressed payloads: docZip (base64 + gzip) and the ADN's gzip'd XML.

Decompression streams through ``zlib.decompressobj`` with ``max_length``, so a gzip bomb stops at
``max_output`` + one step instead of exhausting memory. The caller keeps the returned bytes as the
document's original bytes and parses them with :func:`app.safexml.parse_xml`.
"""

from __future__ import annotations

import base64
import binascii
import zlib

from app.safexml.errors import CorruptPayload, TooLarge
from app.safexml.parse import MiB, human_size

_GZIP_MAGIC = b"\x1f\x8b"
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # gzip container only: docZip and ADN are GZip by specification
_INPUT_CHUNK = 64 * 1024
_OUTPUT_STEP = 1 * MiB
# What ``\s`` matches in bytes: line wrapping inside the base64 is tolerated and dropped.
_WHITESPACE = b" \t\n\r\x0b\x0c"


def inflate(data: bytes, *, max_output: int) -> bytes:
    """Gunzip ``data`` (one or more members), refusing more than ``max_output`` inflated bytes.

    Raises :class:`TooLarge` (``what="inflated"``) or :class:`CorruptPayload` (``corrupt_gzip``,
    ``truncated_gzip``).
    """
    if max_output <= 0:
        raise ValueError("max_output deve ser positivo")
    if not data.startswith(_GZIP_MAGIC):
        raise CorruptPayload("Conteúdo compactado corrompido: não começa com a assinatura gzip.", reason="corrupt_gzip")
    whole = _one_member(data, max_output) if len(data) <= _INPUT_CHUNK else None
    if whole is not None:
        return whole
    out = bytearray()
    rest = memoryview(data)
    while True:  # one pass per gzip member (concatenated members are legal gzip)
        unused = _inflate_member(rest, out, max_output)
        if not unused or not unused.strip(b"\x00"):  # trailing NUL padding is tolerated, as gzip does
            return bytes(out)
        if not unused.startswith(_GZIP_MAGIC):
            raise CorruptPayload(
                "Conteúdo compactado corrompido: há dados estranhos após o fim do gzip.",
                reason="corrupt_gzip",
            )
        rest = memoryview(unused)


def _one_member(data: bytes, max_output: int) -> bytes | None:
    """A small gzip of one member and nothing after it (every docZip): inflated in one call,
    without the streaming loop's buffer and its two copies (issue 23). None for anything else
    (several members, padding, a corrupt or truncated stream), which the loop then reads and
    judges from the start, with its own errors."""
    decompressor = zlib.decompressobj(wbits=_GZIP_WBITS)
    try:
        whole = decompressor.decompress(data, max_output + 1)
    except zlib.error:
        return None
    if len(whole) > max_output:
        raise _inflated_too_large(max_output)
    if not decompressor.eof or decompressor.unused_data:
        return None
    return whole


def _inflated_too_large(limit: int) -> TooLarge:
    return TooLarge(
        f"Conteúdo descompactado excede o limite de {human_size(limit)} "
        "(possível bomba de compressão). Documento recusado.",
        what="inflated",
        limit=limit,
    )


def _inflate_member(data: memoryview, out: bytearray, max_output: int) -> bytes:
    """Inflate one member into ``out``; return the bytes that follow it."""
    decompressor = zlib.decompressobj(wbits=_GZIP_WBITS)
    position = 0
    try:
        while position < len(data) and not decompressor.eof:
            pending: bytes | memoryview = data[position : position + _INPUT_CHUNK]
            position += len(pending)
            while True:
                step = min(_OUTPUT_STEP, max_output - len(out) + 1)
                piece = decompressor.decompress(pending, step)
                out += piece
                if len(out) > max_output:
                    raise _inflated_too_large(max_output)
                pending = decompressor.unconsumed_tail
                # zlib may hold output back when max_length was hit: drain until it returns short.
                if decompressor.eof or (not pending and len(piece) < step):
                    break
    except zlib.error as exc:
        raise CorruptPayload(f"Conteúdo compactado corrompido (gzip inválido): {exc}.", reason="corrupt_gzip") from None
    if not decompressor.eof:
        raise CorruptPayload(
            "Conteúdo compactado truncado: o gzip termina antes do fim dos dados.", reason="truncated_gzip"
        )
    return decompressor.unused_data + bytes(data[position:])


def decode_doczip(b64_text: str | bytes, *, max_compressed: int, max_inflated: int) -> bytes:
    """Decode a ``docZip`` (base64 of gzip) into the original document bytes.

    Whitespace inside the base64 (line wrapping) is allowed, anything else outside the base64
    alphabet is :class:`CorruptPayload` (``corrupt_base64``). Both sizes are bounded by
    :class:`TooLarge` (``what="compressed"`` or ``"inflated"``).
    """
    return inflate(doczip_gzip(b64_text, max_compressed=max_compressed), max_output=max_inflated)


def doczip_gzip(b64_text: str | bytes, *, max_compressed: int) -> bytes:
    """The gzip bytes of a ``docZip`` (its base64 decoded, not yet inflated), bounded by
    ``max_compressed``; the first half of :func:`decode_doczip`, with the same refusals.

    For a caller that keeps the compressed form beside the document: pass the result to
    :func:`inflate` (the bounded, checked gunzip) before trusting it.
    """
    if isinstance(b64_text, str):
        try:
            raw = b64_text.encode("ascii")
        except UnicodeEncodeError:
            raise CorruptPayload(
                "Conteúdo compactado (docZip) com caracteres fora do base64.", reason="corrupt_base64"
            ) from None
    else:
        raw = bytes(b64_text)
    # Rough bound before any copy (base64 is 4/3 of the payload, plus generous room for wrapping).
    if len(raw) > 2 * max_compressed + 64:
        raise _compressed_too_large(max_compressed)
    compressed = _unwrapped(raw)
    if compressed is None:
        compact = raw.translate(None, _WHITESPACE)  # C-speed delete; a regex cost half the decode
        if not compact:
            raise CorruptPayload("Conteúdo compactado (docZip) vazio.", reason="corrupt_base64")
        try:
            compressed = base64.b64decode(compact, validate=True)
        except binascii.Error as exc:
            raise CorruptPayload(
                f"Conteúdo compactado (docZip) com base64 inválido: {exc}.", reason="corrupt_base64"
            ) from None
    if len(compressed) > max_compressed:
        raise _compressed_too_large(max_compressed)
    return compressed


def _unwrapped(raw: bytes) -> bytes | None:
    """``raw`` decoded as it is, the services' one unwrapped line, with no copy made first; None
    when it is empty, wrapped or corrupt (then the whitespace is dropped and it is judged)."""
    if not raw:
        return None
    try:
        return base64.b64decode(raw, validate=True)
    except binascii.Error:
        return None


def _compressed_too_large(limit: int) -> TooLarge:
    return TooLarge(
        f"Conteúdo compactado excede o limite de {human_size(limit)}. Documento recusado.",
        what="compressed",
        limit=limit,
    )
