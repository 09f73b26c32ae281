"""Drawing primitives every printed document uses, in millimetres measured from the top-left.

A ``Sheet`` wraps one reportlab canvas page. ``field`` is the labelled box of the official
layouts (a small upper-case title over the value). Text always fits its box: it shrinks down to
a minimum size, then wraps; only where a layout asks for it (``ellipsis=True``) is it cut with
"..."; otherwise it keeps shrinking to a floor and, if even that fails, is cut rather than
allowed to overlap the neighbouring box.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas

from app.pdf.fonts import BOLD, REGULAR, register_fonts, sanitize, width

LEADING = 1.15  # line height as a multiple of the font size
FLOOR = 3.5  # points: below this nobody reads a printed field
TITLE_SIZE = 5.0
PAD = 0.6 * mm


@dataclass(frozen=True, slots=True)
class Fitted:
    size: float
    lines: tuple[str, ...]
    cut: bool  # some text did not fit and was cut


def wrap(text: str, max_width: float, size: float, bold: bool = False) -> list[str]:
    """Greedy word wrap; a word longer than the line is broken between characters.
    Explicit line breaks ("\\n") are kept."""
    lines: list[str] = []
    space = width(" ", size, bold=bold)
    for paragraph in text.split("\n"):
        current: list[str] = []
        used = 0.0
        for word in paragraph.split(" "):
            if not word:
                continue
            w = width(word, size, bold=bold)
            if w > max_width:  # break the long word itself
                if current:
                    lines.append(" ".join(current))
                    current, used = [], 0.0
                piece = ""
                for ch in word:
                    if width(piece + ch, size, bold=bold) > max_width and piece:
                        lines.append(piece)
                        piece = ""
                    piece += ch
                current, used = [piece], width(piece, size, bold=bold)
                continue
            extra = w + (space if current else 0.0)
            if current and used + extra > max_width:
                lines.append(" ".join(current))
                current, used = [word], w
            else:
                current.append(word)
                used += extra
        lines.append(" ".join(current))
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
    return lines


def _cut(line: str, max_width: float, size: float, bold: bool) -> str:
    """``line`` shortened to end in "..." within ``max_width``."""
    if width(line + "...", size, bold=bold) <= max_width:
        return line + "..."
    low, high = 0, len(line)
    while low < high:  # longest prefix that fits with the dots
        mid = (low + high + 1) // 2
        if width(line[:mid].rstrip() + "...", size, bold=bold) <= max_width:
            low = mid
        else:
            high = mid - 1
    return line[:low].rstrip() + "..."


def fit(
    text: str,
    box_width: float,
    box_height: float,
    size: float,
    *,
    min_size: float = 5.0,
    bold: bool = False,
    wrap_lines: bool = True,
    ellipsis: bool = False,
) -> Fitted:
    """Choose the size and lines for sanitised ``text`` in a box (points)."""
    if box_width <= 0 or box_height <= 0:
        return Fitted(size, (), bool(text))
    one_line = "\n" not in text
    full = width(text, size, bold=bold) if one_line else box_width + 1
    if one_line and full <= box_width and size * LEADING <= box_height + 0.01 * size:
        return Fitted(size, (text,), False)
    shrunk = min(int(size * box_width / full * 10) / 10, size) if one_line and full else 0.0
    one_line_ok = shrunk >= min_size and shrunk * LEADING <= box_height * 1.05
    if one_line_ok and shrunk >= 0.85 * size:  # a little smaller on one line reads best
        return Fitted(shrunk, (text,), False)
    if wrap_lines:  # then wrap, at the largest size whose lines fit the box
        candidate = size
        while candidate >= min_size - 1e-6 and 2 * candidate * LEADING <= box_height + 0.01:
            lines = wrap(text, box_width, candidate, bold)
            if len(lines) * candidate * LEADING <= box_height + 0.01:
                return Fitted(candidate, tuple(lines), False)
            candidate -= 0.5
    if one_line_ok:
        return Fitted(shrunk, (text,), False)
    if ellipsis:
        chosen = min_size
    else:  # no cut allowed: go below min_size before giving up
        chosen = min_size
        while chosen > FLOOR:
            chosen = max(FLOOR, chosen - 0.5)
            lines = wrap(text, box_width, chosen, bold) if wrap_lines else [text]
            if len(lines) * chosen * LEADING <= box_height + 0.01 and all(
                width(line, chosen, bold=bold) <= box_width for line in lines
            ):
                return Fitted(chosen, tuple(lines), False)
    lines = wrap(text, box_width, chosen, bold) if wrap_lines else [text]
    room = max(1, int((box_height + 0.01) / (chosen * LEADING)))
    kept = lines[:room]
    if len(lines) > room or width(kept[-1], chosen, bold=bold) > box_width:
        kept[-1] = _cut(kept[-1], box_width, chosen, bold)
        return Fitted(chosen, tuple(kept), True)
    return Fitted(chosen, tuple(kept), False)


def new_canvas(out: BinaryIO, page_size: tuple[float, float], title: str) -> Canvas:
    """A canvas whose only font is the embedded family (no Helvetica in the file) and whose bytes
    depend only on what is drawn (``invariant``): the same XML gives the same PDF."""
    register_fonts()
    canvas = Canvas(out, pagesize=page_size, invariant=True, initialFontName=REGULAR, initialFontSize=8)
    canvas.setTitle(sanitize(title))
    canvas.setCreator("Captura DF-e")
    return canvas


class Sheet:
    """One page of a canvas, addressed in mm from its top-left corner."""

    def __init__(self, canvas: Canvas, page_width: float, page_height: float) -> None:
        self.canvas = canvas
        self.width = page_width / mm
        self.height = page_height / mm

    def _y(self, top: float) -> float:
        return float((self.height - top) * mm)

    def line_width(self, points: float) -> None:
        self.canvas.setLineWidth(points)

    def rect(self, x: float, y: float, w: float, h: float, *, fill: float | None = None) -> None:
        """A box; ``fill`` a grey level (0 black, 1 white) when shaded."""
        c = self.canvas
        if fill is not None:
            c.saveState()
            c.setFillGray(fill)
            c.rect(x * mm, self._y(y + h), w * mm, h * mm, stroke=1, fill=1)
            c.restoreState()
        else:
            c.rect(x * mm, self._y(y + h), w * mm, h * mm, stroke=1, fill=0)

    def hline(self, x: float, y: float, w: float, *, dash: bool = False) -> None:
        c = self.canvas
        if dash:
            c.saveState()
            c.setDash(2, 2)
        c.line(x * mm, self._y(y), (x + w) * mm, self._y(y))
        if dash:
            c.restoreState()

    def vline(self, x: float, y: float, h: float) -> None:
        self.canvas.line(x * mm, self._y(y), x * mm, self._y(y + h))

    def text(
        self, x: float, baseline: float, text: str, size: float, *, bold: bool = False, align: str = "left"
    ) -> None:
        """One line at a baseline (mm from the top); ``x`` is the left, centre or right edge."""
        c = self.canvas
        c.setFont(BOLD if bold else REGULAR, size)
        y = self._y(baseline)
        if align == "center":
            c.drawCentredString(x * mm, y, text)
        elif align == "right":
            c.drawRightString(x * mm, y, text)
        else:
            c.drawString(x * mm, y, text)

    def block(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        text: object,
        size: float,
        *,
        bold: bool = False,
        align: str = "left",
        valign: str = "top",
        min_size: float = 5.0,
        wrap_lines: bool = True,
        ellipsis: bool = False,
        keep_newlines: bool = False,
    ) -> Fitted:
        """``text`` fitted into the box (x, y, w, h in mm) without padding; returns what was drawn."""
        clean = sanitize(text, keep_newlines=keep_newlines)
        fitted = fit(
            clean, w * mm, h * mm, size, min_size=min_size, bold=bold, wrap_lines=wrap_lines, ellipsis=ellipsis
        )
        self.draw_lines(x, y, w, h, fitted, bold=bold, align=align, valign=valign)
        return fitted

    def draw_lines(
        self, x: float, y: float, w: float, h: float, fitted: Fitted, *, bold: bool, align: str, valign: str
    ) -> None:
        if not fitted.lines:
            return
        step = fitted.size * LEADING / mm
        total = step * len(fitted.lines)
        if valign == "middle":
            top = y + (h - total) / 2
        elif valign == "bottom":
            top = y + h - total
        else:
            top = y
        anchor = {"center": x + w / 2, "right": x + w}.get(align, x)
        for i, line in enumerate(fitted.lines):
            baseline = top + step * i + fitted.size * 0.93 / mm
            self.text(anchor, baseline, line, fitted.size, bold=bold, align=align)

    def field(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        title: str,
        value: object,
        *,
        size: float = 8.0,
        bold: bool = False,
        align: str = "left",
        border: bool = True,
        min_size: float = 5.0,
        wrap_lines: bool = True,
        ellipsis: bool = False,
    ) -> Fitted:
        """The layouts' labelled box: the title in small capitals at the top, the value below."""
        if border:
            self.rect(x, y, w, h)
        title_h = TITLE_SIZE * LEADING / mm + 0.3
        if title:
            self.block(
                x + PAD / mm,
                y + 0.4,
                w - 2 * PAD / mm,
                title_h,
                title.upper(),
                TITLE_SIZE,
                min_size=3.5,
                wrap_lines=False,
            )
        inner_y = y + (title_h + 0.4 if title else 0.5)
        inner_h = h - (inner_y - y) - 0.3
        return self.block(
            x + PAD / mm,
            inner_y,
            w - 2 * PAD / mm,
            inner_h,
            value,
            size,
            bold=bold,
            align=align,
            valign="middle" if not title else "bottom",
            min_size=min_size,
            wrap_lines=wrap_lines,
            ellipsis=ellipsis,
        )

    def fields(
        self,
        x: float,
        y: float,
        h: float,
        cells: Sequence[tuple[float, str, object]],
        *,
        size: float = 8.0,
        align: str = "left",
    ) -> float:
        """A row of labelled boxes: (width, title, value) each; returns the row's right edge."""
        for w, title, value in cells:
            self.field(x, y, w, h, title, value, size=size, align=align)
            x += w
        return x

    def section(self, x: float, y: float, title: str) -> float:
        """A section caption above a group of boxes ("DESTINATÁRIO / REMETENTE"); returns its height."""
        self.text(x + 0.3, y + 2.3, sanitize(title.upper()), 6.0, bold=True)
        return 3.0
