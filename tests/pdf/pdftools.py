"""Reading a rendered PDF back: its text (pypdf), PNG pages (pdftoppm) and barcodes (zxing-cpp)."""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader

RENDERS = Path(tempfile.gettempdir()) / "captura-pdf-renders"  # PNGs for a person to look at


def page_texts(pdf: bytes) -> list[str]:
    return [page.extract_text() or "" for page in PdfReader(io.BytesIO(pdf)).pages]


def flat(text: str) -> str:
    """Text with every run of white space made one space (pypdf splits lines where it likes)."""
    return " ".join(text.split())


def pdftoppm() -> str:
    found = shutil.which("pdftoppm")
    if found is None:
        pytest.fail("pdftoppm ausente: apt-get install poppler-utils (packaging/dev.py instala)")
    return found


def page_images(pdf: bytes, dpi: int = 200, first: int = 1, last: int | None = None) -> list[Image.Image]:
    """Pages rasterised by poppler, in grey."""
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "doc.pdf"
        source.write_bytes(pdf)
        args = [pdftoppm(), "-r", str(dpi), "-gray", "-png", "-f", str(first)]
        if last is not None:
            args += ["-l", str(last)]
        subprocess.run([*args, str(source), str(Path(folder) / "page")], check=True, timeout=120)
        pages = sorted(Path(folder).glob("page*.png"))
        return [Image.open(p).copy() for p in pages]


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
