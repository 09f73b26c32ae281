"""The embedded TrueType family every PDF uses, and the sanitiser that keeps any text drawable.

DejaVu Sans Condensed ships with the app (``resources/fonts``, Bitstream Vera licence) so a
DANFE looks the same on every machine and covers Portuguese, €, º, ª and the usual symbols.
Text from an XML can still hold control characters or glyphs no font here has (emoji): the
sanitiser drops the former and replaces the latter with a visible substitute, so drawing never
raises and nothing silently vanishes.
"""

from __future__ import annotations

import threading
import unicodedata
from functools import lru_cache

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

from app.config.runtime import FONT_DIR  # one place for the shipped fonts (Qt's offscreen plugin reads them too)

REGULAR = "DejaVuSansCondensed"
BOLD = "DejaVuSansCondensed-Bold"
_FILES = {REGULAR: "DejaVuSansCondensed.ttf", BOLD: "DejaVuSansCondensed-Bold.ttf"}
SUBSTITUTE = "\ufffd"  # "�": the reader sees that something was there
_lock = threading.Lock()
_registered = False


def register_fonts() -> None:
    """Register the family with reportlab once per process (thread-safe, cheap after the first)."""
    global _registered
    if _registered:
        return
    with _lock:
        if _registered:
            return
        for name, file in _FILES.items():
            pdfmetrics.registerFont(TTFont(name, str(FONT_DIR / file)))
        pdfmetrics.registerFontFamily(REGULAR, normal=REGULAR, bold=BOLD, italic=REGULAR, boldItalic=BOLD)
        _registered = True


@lru_cache(maxsize=1)
def _covered() -> frozenset[int]:
    """Code points both faces draw (regular and bold cover nearly the same set)."""
    register_fonts()
    faces = [pdfmetrics.getFont(name).face for name in _FILES]
    sets = [set(face.charToGlyph) for face in faces]
    return frozenset(sets[0] & sets[1])


_SPACES = {"\t": " ", "\n": " ", "\r": " ", "\u00a0": " ", "\u2028": " ", "\u2029": " "}


def sanitize(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` as something the embedded font draws: NFC, control characters dropped (tabs and
    line breaks become spaces unless ``keep_newlines``), missing glyphs replaced by "�"."""
    if text is None:
        return ""
    raw = unicodedata.normalize("NFC", str(text))
    covered = _covered()
    out: list[str] = []
    for ch in raw:
        if ch == "\n" and keep_newlines:
            out.append(ch)
            continue
        if ch in _SPACES:
            out.append(_SPACES[ch])
            continue
        code = ord(ch)
        category = unicodedata.category(ch)
        if category in ("Cc", "Cs", "Cf", "Co", "Cn"):
            continue  # control, lone surrogate, invisible format mark (ZWJ, BOM), unassigned
        if 0xFE00 <= code <= 0xFE0F or 0x1F3FB <= code <= 0x1F3FF:
            continue  # emoji variation selectors and skin tones belong to the glyph before them
        if code in covered:
            out.append(ch)
        elif category.startswith("M"):
            continue  # a combining mark NFC could not merge and the font lacks: drop it
        elif out and out[-1] == SUBSTITUTE:
            continue  # one substitute per run of missing glyphs (an emoji sequence)
        else:
            out.append(SUBSTITUTE)
    return "".join(out)


def width(text: str, size: float, *, bold: bool = False) -> float:
    """Width in points of already sanitised ``text``."""
    return float(pdfmetrics.stringWidth(text, BOLD if bold else REGULAR, size))
