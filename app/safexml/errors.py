"""Typed refusals for payloads received from outside: each has a PT message and a machine ``reason``."""

from __future__ import annotations

from app.core.errors import CapturaError


class XmlRejected(CapturaError):
    """Base of every refusal by the safe XML layer.

    ``reason`` is a stable machine word (for logs, call records and tests); ``message`` is the
    sentence for the user.
    """

    reason: str = "rejected"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class MalformedXml(XmlRejected):
    """The bytes are not well-formed XML; ``line``/``column`` point at the first fault (1-based)."""

    reason = "malformed"

    def __init__(self, detail: str, *, line: int | None = None, column: int | None = None) -> None:
        where = f" na linha {line}, coluna {column}" if line else ""
        super().__init__(f"XML malformado{where}: {detail}")
        self.detail = detail
        self.line = line
        self.column = column


class DoctypeForbidden(XmlRejected):
    """The document carries a DOCTYPE (DTD); fiscal documents never do, so it is refused."""

    reason = "doctype"


class EntityForbidden(DoctypeForbidden):
    """The document declares or references custom entities (XML bomb or external entity attempt).

    A subclass of :class:`DoctypeForbidden` because entities can only be declared inside a DOCTYPE.
    """

    reason = "entity"


class NotUtf8(XmlRejected):
    """The document declares an encoding other than UTF-8, or its bytes are not valid UTF-8."""

    reason = "not_utf8"


class TooLarge(XmlRejected):
    """The input (``what``: "xml", "compressed" or "inflated") exceeds ``limit`` bytes."""

    reason = "too_large"

    def __init__(self, message: str, *, what: str, limit: int) -> None:
        super().__init__(message)
        self.what = what
        self.limit = limit


class CorruptPayload(XmlRejected):
    """Base64 or gzip that cannot be decoded.

    ``reason`` is "corrupt_base64", "corrupt_gzip" or "truncated_gzip".
    """

    reason = "corrupt_gzip"
