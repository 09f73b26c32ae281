"""A distributed XML document as the sandbox keeps it: the gzip its docZips carry, the XML on demand.

A month of simulation publishes ~100,000 documents, each delivered once or a few times and never
read otherwise; keeping them compressed (a third of the size) and compressing each only once
bounds both the memory and the per-request cost. A payload may also be produced on first use
(the signed nfeProc, see :mod:`app.sandbox.docgen.nfe`).
"""

from __future__ import annotations

import base64
import gzip
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor


class Payload:
    """One XML document: given as bytes or made on first use, then held gzip-compressed."""

    __slots__ = ("_ahead", "_gz", "_make", "_xml")

    def __init__(self, xml: bytes | None = None, *, make: Callable[[], bytes] | None = None) -> None:
        if (xml is None) == (make is None):
            raise ValueError("Payload: give the XML or the function that makes it, not both")
        self._xml = xml
        self._make = make
        self._gz: bytes | None = None
        self._ahead: Future[bytes] | None = None

    @property
    def made(self) -> bool:
        """False while a lazily made document has not been needed yet."""
        return self._make is None

    def make_ahead(self, maker: AheadMaker) -> None:
        """A lazily made document that will be needed soon: start making it on ``maker``'s thread
        (``make`` is a pure function of its recipe: the bytes are the same either way)."""
        if self._make is not None and self._ahead is None:
            self._ahead = maker.submit(self._make)

    @property
    def xml(self) -> bytes:
        xml = self._xml
        if xml is not None:
            return xml
        gz = self._gz
        if gz is not None:
            return gzip.decompress(gz)
        ahead, make = self._ahead, self._make
        if ahead is not None:
            xml = ahead.result()
        else:
            assert make is not None
            xml = make()
        self._xml = xml
        self._make = self._ahead = None
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


class AheadMaker:
    """One worker thread that makes documents before they are asked for.

    The national environment signs on its own machines; here its RSA signatures (which release
    the GIL) run on the machine's other core while the app under test goes on. Started on the
    first document, stopped with the sandbox.
    """

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, make: Callable[[], bytes]) -> Future[bytes]:
        with self._lock:
            if self._closed:  # a stopped sandbox still answers: made on first use then
                done: Future[bytes] = Future()
                done.set_result(make())
                return done
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="sandbox-ahead")
            return self._executor.submit(make)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)


def as_payload(xml: bytes | Payload) -> Payload:
    return xml if isinstance(xml, Payload) else Payload(xml)
