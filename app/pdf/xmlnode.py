"""Namespace-aware reading of one fiscal XML element for the renderers: an absent element reads
as empty text, so a document missing an optional group still prints (blank or "-")."""

from __future__ import annotations

from lxml import etree


class Node:
    """``element`` (or nothing) in the namespace ``prefix`` ("{http://...}"); paths are "a/b/c"."""

    __slots__ = ("element", "prefix")

    def __init__(self, element: etree._Element | None, prefix: str) -> None:
        self.element = element
        self.prefix = prefix

    def __bool__(self) -> bool:
        return self.element is not None

    def _path(self, path: str) -> str:
        return "/".join(self.prefix + part for part in path.split("/"))

    def find(self, path: str) -> Node:
        if self.element is None:
            return Node(None, self.prefix)
        return Node(self.element.find(self._path(path)), self.prefix)

    def all(self, path: str) -> list[Node]:
        if self.element is None:
            return []
        return [Node(e, self.prefix) for e in self.element.iterfind(self._path(path))]

    def deep(self, name: str) -> Node:
        """The first descendant called ``name``, at whatever depth."""
        if self.element is None:
            return Node(None, self.prefix)
        return Node(next(self.element.iterfind(f".//{self.prefix}{name}"), None), self.prefix)

    def text(self, path: str = "") -> str:
        """The text at ``path`` (this element when empty), white space collapsed; "" when absent."""
        element = self.element if not path else self.find(path).element
        if element is None:
            return ""
        return " ".join("".join(element.itertext()).split())

    def texts(self, path: str) -> list[str]:
        return [t for t in (n.text() for n in self.all(path)) if t]

    def attr(self, name: str) -> str:
        return "" if self.element is None else str(self.element.get(name, "")).strip()

    def first_child(self) -> Node:
        if self.element is not None:
            for child in self.element:
                if isinstance(child.tag, str):
                    return Node(child, self.prefix)
        return Node(None, self.prefix)

    @property
    def local(self) -> str:
        if self.element is None or not isinstance(self.element.tag, str):
            return ""
        return str(etree.QName(self.element).localname)
