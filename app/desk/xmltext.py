"""A stored XML as the detail's XML tab shows it: indented, for reading only.

Done where the detail is read (a worker), with lxml through the safe parser: minidom took ~50 ms
for an ordinary NF-e on the GUI thread, most of a click's wait (tests/benchmarks/bench_grid.py).
What is saved stays byte for byte as received.
"""

from __future__ import annotations

from lxml import etree

from app.safexml.errors import XmlRejected
from app.safexml.parse import parse_xml


def pretty_xml(content: bytes) -> str:
    """Indented text of ``content``; unreadable XML (quarantined) comes back as it is."""
    try:
        root = parse_xml(content)
    except XmlRejected:
        return content.decode("utf-8", "replace")
    tree = root.getroottree()
    etree.indent(tree, space="  ")
    return str(etree.tostring(tree, encoding="unicode"))
