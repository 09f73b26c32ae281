"""The DANFE item table's columns and cells, shared by MOC 7.0's layout (``danfe_items``) and
NT 2026.010's (``danfe_nt2026``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Column:
    title: str
    width: float  # mm; 0 for the description, which takes what is left
    align: str


def fill_width(cols: list[Column], width: float, grows: list[bool]) -> list[Column]:
    """The description (width 0) takes what the others leave; on a landscape page a third of the
    extra room is shared by the ``grows`` columns."""
    spare = width - sum(c.width for c in cols)
    if spare > 90:
        share = (spare - 90) / 3 / max(1, sum(grows))
        cols = [Column(c.title, c.width + share, c.align) if grow else c for c, grow in zip(cols, grows, strict=True)]
        spare = width - sum(c.width for c in cols)
    return [Column(c.title, spare, c.align) if c.width == 0 else c for c in cols]


@dataclass(frozen=True, slots=True)
class Pairs:
    """A cell of labelled values, each line one or two (label, value) side by side."""

    lines: tuple[tuple[tuple[str, str], ...], ...]


Cell = str | Pairs
