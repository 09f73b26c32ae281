"""Children of an element by local name, read once: a container's fields become dictionary
look-ups instead of one search per field (the CT-e and NFS-e readers' hot path).

Each reader binds its namespace with a subclass (``PREFIX = "{ns}"``); a child of another
namespace is not seen, the first of each name wins.
"""

from __future__ import annotations

from typing import ClassVar, Self

from lxml import etree


def leaf_text(element: etree._Element) -> str:
    """A field's value: a leaf's text, else all the text below it, stripped."""
    if len(element) == 0:  # a leaf (no child node, comments included): its text is the value
        text = element.text
        return "" if text is None else str(text).strip()
    return "".join(element.itertext()).strip()


class Kids:
    """One element's children by local name; an absent element has none."""

    __slots__ = ("_map", "element")
    PREFIX: ClassVar[str] = ""

    def __init__(self, element: etree._Element | None) -> None:
        self.element = element
        found: dict[str, etree._Element] = {}
        if element is not None:
            prefix = self.PREFIX
            size = len(prefix)
            for child in element:
                tag = child.tag
                if isinstance(tag, str) and tag.startswith(prefix):
                    found.setdefault(tag[size:], child)
        self._map = found

    def get(self, name: str) -> etree._Element | None:
        return self._map.get(name)

    def kids(self, *path: str) -> Self:
        """The children of the child ``path`` names (one level per name)."""
        current = self
        for name in path:
            current = type(self)(current._map.get(name))
        return current

    def text(self, name: str) -> str:
        element = self._map.get(name)
        return "" if element is None else leaf_text(element)

    def opt(self, name: str) -> str | None:
        return self.text(name) or None

    def names(self) -> list[str]:
        return list(self._map)
