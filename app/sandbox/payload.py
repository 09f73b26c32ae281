"""A distributed XML document as the sandbox keeps it: the gzip its docZips carry, the XML on demand.

A month of simulation publishes ~100,000 documents, each delivered once or a few times and never
read otherwise; keeping them compressed (a third of the size) and compressing each only once
bounds both the memory and the per-request cost. A payload may also be produced on first use
(the signed nfeProc, see :mod:`app.sandbox.docgen.nfe`).
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Callable


class Payload:
    """One XML document: given as bytes or made on first use, then held gzip-compressed."""

    __slots__ = ("_gz", "_make", "_xml")

    def __init__(self, xml: bytes | None = None, *, make: Callable[[], bytes] | None = None) -> None:
        if (xml is None) == (make is None):
            raise ValueError("Payload: give the XML or the function that makes it, not both")
        self._xml = xml
        self._make = make
        self._gz: bytes | None = None

    @property
    def made(self) -> bool:
        """False while a lazily made document has not been needed yet."""
        return self._make is None

    @property
    def xml(self) -> bytes:
        xml = self._xml
        if xml is not None:
            return xml
        gz = self._gz
        if gz is not None:
            return gzip.decompress(gz)
        make = self._make
        assert make is not None
        xml = self._xml = make()
        self._make = None
        return xml

    def gzip(self) -> bytes:
        """The gzip (mtime 0: the same document always gives the same bytes); the XML is dropped."""
        gz = self._gz
        if gz is None:
            # Level 1: a tenth larger than level 9 and three times faster; sizes do not matter
            # here, and every byte still round-trips exactly.
            gz = self._gz = gzip.compress(self.xml, compresslevel=1, mtime=0)
            self._xml = None
        return gz

    def doczip(self) -> str:
        """The docZip text: base64 of the gzip."""
        return base64.b64encode(self.gzip()).decode("ascii")


def as_payload(xml: bytes | Payload) -> Payload:
    return xml if isinstance(xml, Payload) else Payload(xml)
