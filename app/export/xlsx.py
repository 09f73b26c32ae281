"""A streaming XLSX writer for the reports' tables: typed cells, three number formats, the first row
frozen, and nothing else, written straight into the zip as SpreadsheetML.

openpyxl builds a cell object per value and styles each one; a report's documents sheet has
hundreds of thousands of rows, which took it minutes. Here each row becomes one string: numbers as
numbers, ``Decimal`` with the money format, dates and date-times as Excel serials with theirs,
text inline (no shared-strings table to hold), an empty cell left out. Excel, LibreOffice and
openpyxl read the result; the tests read it back with openpyxl.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal

from openpyxl.utils import get_column_letter

_EPOCH = datetime(1899, 12, 30)  # Excel's day 0 (its 1900 leap-year bug included)
_EPOCH_DATE = _EPOCH.date()
_XML_SPECIAL = re.compile(r"[&<>\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
HEADER, MONEY, DATE, DATETIME = 1, 2, 3, 4  # cellXfs indexes in _STYLES
_CHUNK = 2_000  # rows per write into the zip stream

_STYLES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    '<numFmts count="3"><numFmt numFmtId="164" formatCode="#,##0.00"/>'
    '<numFmt numFmtId="165" formatCode="dd/mm/yyyy"/><numFmt numFmtId="166" formatCode="dd/mm/yyyy hh:mm"/>'
    "</numFmts>"
    '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font>'
    '<font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill>'
    "</fills>"
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="5"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>'
    '<xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
    '<xf numFmtId="166" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _escape(text: str) -> str:
    if _XML_SPECIAL.search(text) is None:
        return text
    return _XML_SPECIAL.sub(lambda m: _ESCAPES.get(m.group(), ""), text)  # control characters dropped


def _cell(ref: str, value: object) -> str:
    """One ``<c>``; the common types first (the report's rows are mostly money and text)."""
    kind = type(value)
    if kind is Decimal:
        return f'<c r="{ref}" s="{MONEY}"><v>{value:f}</v></c>'
    if kind is str:
        return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{_escape(value)}</t></is></c>'  # type: ignore[arg-type]
    if kind is int or kind is bool:
        return f'<c r="{ref}"><v>{int(value)}</v></c>'  # type: ignore[call-overload]
    if kind is datetime:
        delta = value - _EPOCH  # type: ignore[operator]
        return f'<c r="{ref}" s="{DATETIME}"><v>{delta.days + delta.seconds / 86400:.10f}</v></c>'
    if kind is date:
        return f'<c r="{ref}" s="{DATE}"><v>{(value - _EPOCH_DATE).days}</v></c>'  # type: ignore[operator]
    if isinstance(value, float):
        return f'<c r="{ref}" s="{MONEY}"><v>{value!r}</v></c>'
    return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{_escape(str(value))}</t></is></c>'


def _row(number: int, letters: Sequence[str], values: Sequence[object]) -> str:
    pairs = zip(letters, values, strict=False)
    cells = "".join([_cell(f"{letter}{number}", v) for letter, v in pairs if v is not None])
    return f'<row r="{number}">{cells}</row>'


def _sheet_xml(
    out: zipfile.ZipFile, name: str, headers: Sequence[str], rows: Iterable[Sequence[object]], widths: Sequence[int]
) -> None:
    columns = max(len(headers), 1)
    letters = [get_column_letter(i) for i in range(1, columns + 1)]
    head = "".join(
        f'<c r="{letter}1" s="{HEADER}" t="inlineStr"><is><t>{_escape(str(h))}</t></is></c>'
        for letter, h in zip(letters, headers, strict=True)
    )
    cols = "".join(f'<col min="{i}" max="{i}" width="{w}" customWidth="1"/>' for i, w in enumerate(widths, start=1))
    with out.open(name, "w", force_zip64=True) as stream:
        stream.write(
            (
                f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="{_MAIN}">'
                '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" '
                'state="frozen"/></sheetView></sheetViews>'
                f'{f"<cols>{cols}</cols>" if cols else ""}<sheetData><row r="1">{head}</row>'
            ).encode()
        )
        chunk: list[str] = []
        for number, values in enumerate(rows, start=2):
            chunk.append(_row(number, letters, values))
            if len(chunk) >= _CHUNK:
                stream.write("".join(chunk).encode())
                chunk.clear()
        stream.write(("".join(chunk) + "</sheetData></worksheet>").encode())


def write_xlsx(sheets: Sequence[tuple[str, Sequence[str], Iterable[Sequence[object]], Sequence[int]]]) -> bytes:
    """The workbook of ``(name, headers, rows, column widths)`` sheets, in order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out:
        count = len(sheets)
        overrides = "".join(
            f'<Override PartName="/xl/worksheets/sheet{i}.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
            for i in range(1, count + 1)
        )
        out.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Override PartName="/xl/workbook.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
            '<Override PartName="/xl/styles.xml" '
            'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
            f"{overrides}</Types>",
        )
        out.writestr("_rels/.rels", _RELS)
        names = "".join(
            f'<sheet name="{_escape(name)}" sheetId="{i}" r:id="rId{i}"/>'
            for i, (name, _, _, _) in enumerate(sheets, start=1)
        )
        out.writestr(
            "xl/workbook.xml",
            f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="{_MAIN}" '
            f'xmlns:r="{_REL_NS}"><sheets>{names}</sheets></workbook>',
        )
        links = "".join(
            f'<Relationship Id="rId{i}" Type="{_REL_NS}/worksheet" Target="worksheets/sheet{i}.xml"/>'
            for i in range(1, count + 1)
        )
        out.writestr(
            "xl/_rels/workbook.xml.rels",
            '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'{links}<Relationship Id="rId{count + 1}" Type="{_REL_NS}/styles" Target="styles.xml"/>'
            "</Relationships>",
        )
        out.writestr("xl/styles.xml", _STYLES)
        for i, (_, headers, rows, widths) in enumerate(sheets, start=1):
            _sheet_xml(out, f"xl/worksheets/sheet{i}.xml", headers, rows, widths)
    return buffer.getvalue()
