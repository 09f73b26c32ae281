"""Tables to XLSX (openpyxl: numbers as numbers, dates as dates) and CSV (for Excel in Brazil).

A cell is ``int``, ``Decimal`` (money), ``date``, ``datetime`` (naive: the document's own local
time; Excel has no time zones), ``str`` or ``None``. Both files are written atomically.
The CSV follows what Excel in pt-BR opens without a wizard: ``;`` between fields, decimal comma,
dates as dd/mm/aaaa, UTF-8 with a BOM.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

from app.config.files import write_atomic
from app.export.xlsx import write_xlsx

Cell = int | Decimal | date | datetime | str | None
MAX_SHEET_NAME = 31  # Excel's limit


@dataclass
class Sheet:
    name: str
    headers: Sequence[str]
    rows: list[Sequence[Cell]] = field(default_factory=list)


def to_xlsx(sheets: Sequence[Sheet]) -> bytes:
    """The workbook (``app.export.xlsx``: streamed, typed, header frozen); widths from the first 200 rows."""
    chosen = sheets or [Sheet("Vazio", ["Nenhum registro"])]
    return write_xlsx([(s.name[:MAX_SHEET_NAME], s.headers, s.rows, _widths(s)) for s in chosen])


def _widths(sheet: Sheet) -> list[int]:
    sample = sheet.rows[:200]
    return [
        min(60, max([len(str(header)), *(len(_shown(r[column])) for r in sample)]) + 2)
        for column, header in enumerate(sheet.headers)
    ]


def _shown(value: Cell) -> str:
    if isinstance(value, datetime):
        return f"{value:%d/%m/%Y %H:%M}"
    if isinstance(value, date):
        return f"{value:%d/%m/%Y}"
    if isinstance(value, Decimal):
        return f"{value:.2f}".replace(".", ",")
    return "" if value is None else str(value)


def to_csv(sheets: Sequence[Sheet]) -> bytes:
    """One CSV: the sheets' rows one after the other (they share the headers of the first)."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
    if sheets:
        writer.writerow(sheets[0].headers)
    for sheet in sheets:
        for row in sheet.rows:
            writer.writerow([_shown(value) for value in row])
    return ("\ufeff" + out.getvalue()).encode("utf-8")


def save(sheets: Sequence[Sheet], path: Path, *, csv_format: bool) -> list[Path]:
    """The XLSX, or the CSV; sheets whose headers differ from the first's (a report's second
    sheet) go to their own CSV beside it, ``<name>-<sheet>.csv``. Returns the files written."""
    if not csv_format:
        write_atomic(path, to_xlsx(sheets))
        return [path]
    first = [s for s in sheets if not sheets or s.headers == sheets[0].headers]
    write_atomic(path, to_csv(first))
    written = [path]
    for sheet in sheets:
        if sheet.headers != sheets[0].headers:
            apart = path.with_name(f"{path.stem}-{_file_part(sheet.name)}{path.suffix or '.csv'}")
            write_atomic(apart, to_csv([sheet]))
            written.append(apart)
    return written


def _file_part(name: str) -> str:
    """A sheet's name as part of a file name on Windows (no reserved characters, no spaces)."""
    kept = "".join(c if c.isalnum() else "-" for c in name.lower())
    return "-".join(part for part in kept.split("-") if part)
