"""The office's spreadsheets (documents, summary, gaps, deadlines, IBS/CBS credits) from the desk: the command
line's ``report`` and any window that offers them. Slow (the database, the file): from a worker."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from app.capture.context import CaptureContext
from app.core.products import Product

REPORTS = ("documents", "summary", "gaps", "deadlines", "ibs-cbs")


def save_report(
    ctx: CaptureContext,
    name: str,
    target: Path,
    *,
    company_ids: tuple[int, ...] = (),
    products: tuple[Product, ...] = (),
    first_day: date | None = None,
    last_day: date | None = None,
    csv: bool = False,
) -> int:
    """Write report ``name`` to ``target`` (an .xlsx, or a CSV Excel in Portuguese opens); returns its rows."""
    from app.export.reports import Filters, Reports
    from app.export.sheets import save

    filters = Filters(company_ids=company_ids, products=products, first_day=first_day, last_day=last_day)
    reports = Reports(ctx.db)
    if name == "documents":
        sheets = reports.documents(filters)
    elif name == "summary":
        sheets = reports.summary(filters)
    elif name == "gaps":
        sheets = reports.gaps(filters)
    elif name == "ibs-cbs":  # no CSV holds two tables: its documents go to <name>-documentos.csv
        sheets = reports.ibs_cbs(filters)
    else:
        sheets = reports.deadlines(filters, ctx.clock.now())
    save(sheets, target, csv_format=csv)
    return sum(len(sheet.rows) for sheet in sheets)
