"""Hypothesis strategies for the PDF tests."""

from __future__ import annotations

from hypothesis import strategies as st


def _xml_legal(ch: str) -> bool:
    code = ord(ch)
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000


def xml_text(max_size: int = 300) -> st.SearchStrategy[str]:
    """Any text an XML 1.0 document can carry: every script, symbols, emoji, combining marks, tabs."""
    return st.text(st.characters(exclude_categories=("Cs",)).filter(_xml_legal), min_size=1, max_size=max_size)
