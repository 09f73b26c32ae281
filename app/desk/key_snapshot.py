"""The key-event rows kept between openings of a data folder (issue 24).

Finding every key that has events and no document reads every event and looks each one up among
the documents: 3 s at a million documents, 15 s at ten million (tests/benchmarks/bench_grid.py),
and the desk's opening did it every time, before the window's first page. What
``KeyEventIndex`` knew is saved in the data folder (``key-events.json``: its rows and the
high-water ids they are current to) when the desk opens; the next opening restores it and reads
only what was stored after those ids (a range of each primary key; the documents' keys, or a look-up
of each saved key, whichever is fewer). With nothing saved and many events (a new ten-million folder:
122 s), or many rows saved (0.5 s to restore at ten million), the rows are made on a thread apart:
the window shows its first rows at once, and the key-event rows join the open grids when done.

A saved state is used only with the database it was taken from: the same location (the SQLite file,
or the server's URL without its password), and the same document and event at its high-water ids
(company, key and arrival, read again by primary key). Anything else (another database, ids that
went back, an unreadable or older file) builds the index again, as before. The rows of a company
removed since are dropped: removing a company is how documents and events are deleted.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

from app.core.products import Product
from app.desk.files import write_atomic
from app.desk.grid import KeyEventIndex
from app.store.db import Database
from app.store.grid import GridRepository
from app.store.records import KeyEvents

log = logging.getLogger(__name__)
FILE_NAME = "key-events.json"
FORMAT = 1  # change when the saved shape changes: older files are rebuilt
# Events (the highest id) up to which a folder's first opening builds the rows before the window's
# first page (a second or less); above, they are built on a thread apart and the grids take them in
# when it ends (``KeyEventIndex.generation`` moves the desk's change mark).
BUILD_INLINE_EVENTS = 20_000
# Saved rows restored before the first page up to this size of the file (about 6,000 rows, tens of
# milliseconds); above, apart too: 33,000 rows (ten million documents) took 0.5 s of the opening.
RESTORE_INLINE_BYTES = 1_000_000


def open_index(grid: GridRepository, data_dir: Path, db: Database, company_ids: set[int]) -> KeyEventIndex:
    """The index, restored from the data folder when saved from this database, else built; made
    current (for NF-e, the window's first grid) and saved when it was built or moved on. Many
    events and nothing saved, or many rows saved: all of that on a thread apart."""
    index = KeyEventIndex(grid)
    path = data_dir / FILE_NAME
    saved: list[tuple[tuple[int, int], list[KeyEvents]] | None] = [None]

    def work() -> None:
        saved[0] = _load(grid, path, str(db.location), company_ids)
        if saved[0] is not None:
            index.restore(*saved[0])
        index.made_current(Product.NFE)

    def then() -> None:
        if saved[0] is None or index.state()[0] != saved[0][0]:
            save(index, grid, data_dir, db)

    try:
        large = path.stat().st_size > RESTORE_INLINE_BYTES
    except OSError:  # nothing saved (or unreadable: built again)
        large = grid.high_water()[1] > BUILD_INLINE_EVENTS
    if large:  # the window opens meanwhile; the rows join its grids when done
        index.apart(work, then)
    else:
        work()
        then()
    return index


def save(index: KeyEventIndex, grid: GridRepository, data_dir: Path, db: Database) -> None:
    """Write the index's state into the data folder (atomically); a failure only costs the next
    opening the time to build it again."""
    seen, rows = index.state()
    if seen is None:
        return
    path, location = data_dir / FILE_NAME, str(db.location)
    try:
        landmarks = grid.landmarks(*seen)
        body = {
            "format": FORMAT,
            "location": location,
            "seen": list(seen),
            "landmarks": list(landmarks),
            "rows": [_row_out(row) for row in rows],
        }
        write_atomic(path, json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except Exception:  # a read-only folder, a full disk, the database gone: rebuilt next time
        log.warning("Índice de chaves com eventos não salvo em %s", path, exc_info=True)


def _load(
    grid: GridRepository, path: Path, location: str, company_ids: set[int]
) -> tuple[tuple[int, int], list[KeyEvents]] | None:
    try:
        body = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        log.warning("Índice de chaves com eventos ilegível em %s: reconstruído", path, exc_info=True)
        return None
    try:
        if body.get("format") != FORMAT or body.get("location") != location:
            return None
        seen = (int(body["seen"][0]), int(body["seen"][1]))
        high = grid.high_water()
        if seen[0] > high[0] or seen[1] > high[1] or list(grid.landmarks(*seen)) != body["landmarks"]:
            return None  # another database, or rows taken away: built again
        rows = [_row_in(item) for item in body["rows"]]
    except (KeyError, TypeError, ValueError, IndexError):
        log.warning("Índice de chaves com eventos inválido em %s: reconstruído", path, exc_info=True)
        return None
    return seen, [row for row in rows if row.company_id in company_ids]


def _row_out(row: KeyEvents) -> list[Any]:
    return [
        row.row_id, row.company_id, row.product.value, row.access_key, _when_out(row.first_event_at),
        _when_out(row.last_event_at), row.event_count, row.last_tp_evento, row.last_description, row.emitted,
    ]  # fmt: skip


def _row_in(item: list[Any]) -> KeyEvents:
    row_id, company_id, product, key, first, last, count, tp, description, emitted = item
    return KeyEvents(
        row_id=int(row_id),
        company_id=int(company_id),
        product=Product(product),
        access_key=str(key),
        first_event_at=_when_in(first),
        last_event_at=_when_in(last),
        event_count=int(count),
        last_tp_evento=str(tp),
        last_description=None if description is None else str(description),
        emitted=bool(emitted),
    )


def _when_out(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _when_in(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)
