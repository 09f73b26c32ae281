"""Reading a rendered PDF back: its text (pypdf), page images (PDFium, through pypdfium2) and
barcodes (zxing-cpp).

Pages are rasterised by PDFium on every platform: it ships as a wheel for Windows too, where
poppler's pdftoppm does not exist; one renderer everywhere, so a barcode that scans here scans there.
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from PIL import Image
from pypdf import PdfReader

RENDERS = Path(tempfile.gettempdir()) / "captura-pdf-renders"  # PNGs for a person to look at


def page_texts(pdf: bytes) -> list[str]:
    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(pdf)).pages]


def flat(text: str) -> str:
    """Text with every run of white space made one space (pypdf splits lines where it likes)."""
    return " ".join(text.split())


def page_images(pdf: bytes, dpi: int = 200, first: int = 1, last: int | None = None) -> list[Image.Image]:
    """Pages ``first``..``last`` (1-based, inclusive; None: to the end) rasterised by PDFium, in grey."""
    import pypdfium2

    document = pypdfium2.PdfDocument(pdf)
    try:
        images = []
        for index in range(first - 1, len(document) if last is None else last):
            page = document[index]
            bitmap = page.render(scale=dpi / 72, grayscale=True)
            images.append(bitmap.to_pil().convert("L"))  # a copy: the bitmap's buffer is freed below
            bitmap.close()
            page.close()
        return images
    finally:
        document.close()


def write_pngs(pdf: bytes, name: str, dpi: int = 110) -> list[Path]:
    """Every page as RENDERS/name-N.png (kept after the run, for a person to look at)."""
    RENDERS.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, image in enumerate(page_images(pdf, dpi), start=1):
        path = RENDERS / f"{name}-{number}.png"
        image.save(path)
        paths.append(path)
    return paths


def barcodes(image: Image.Image) -> list[tuple[str, str]]:
    """(format, text) of every barcode zxing-cpp finds on the image."""
    import zxingcpp

    return [(str(found.format).replace(" ", ""), found.text) for found in zxingcpp.read_barcodes(image)]
