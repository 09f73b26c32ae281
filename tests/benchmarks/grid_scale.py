"""bench_grid's larger folders made from a generated one: ``--scale-from N`` copies N's cached file k times.

The generator writes ~0.15 GB a minute on this shared machine: ten million documents take more than
an hour. ``replicate`` makes the 10,000,000-document file from the cached 1,000,000 one in SQL
(``INSERT ... SELECT`` ten times, in SQLite's C code): copy k of every document, version, party and
event gets its id moved past the copies before it, its access key a different random code
(positions 36-43, ``(code + k * 12345679) mod 10^8``; the check digit is not recomputed: nothing
here validates it), its NSU moved by k * 10^7, and its instants k seconds earlier. Companies, the
name pool, the shares per company, the issue-date spread, the values, the kinds and the events per
document are the generated ones: the grid's queries meet the same distribution, ten times denser.
A key that happens to clash with one already there (none expected) is skipped with its rows.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

_DOCUMENTS = (
    "id, company_id, product, kind, access_key, nsu, model, serie, number, emitter_id, emitter_name, recipient_id, "
    "recipient_name, total_cents, issued_at, issued_offset_minutes, direction, status, situation, quarantined, "
    "parse_error, version_count, created_at, updated_at, withheld"
)


def _key(k: int) -> str:
    return (
        f"substr(access_key, 1, 35) || printf('%08d', (CAST(substr(access_key, 36, 8) AS INTEGER) + {k} * 12345679) "
        "% 100000000) || substr(access_key, 44)"
    )


def _earlier(column: str, k: int) -> str:
    return f"strftime('%Y-%m-%d %H:%M:%S', {column}, '-{k} seconds') || substr({column}, 20)"


def replicate(source: Path, target: Path, times: int) -> dict[str, Any]:
    """Make ``target`` (a data folder) hold ``times`` copies of the folder ``source``'s documents."""
    started = time.perf_counter()
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    database = partial / "captura.sqlite3"
    origin = sqlite3.connect(f"file:{source / 'captura.sqlite3'}?mode=ro", uri=True)
    copy = sqlite3.connect(database)
    origin.backup(copy)  # a consistent copy, whatever another process does meanwhile
    origin.close()
    copy.close()
    c = sqlite3.connect(database, isolation_level=None)
    c.execute("PRAGMA journal_mode = OFF")
    c.execute("PRAGMA synchronous = OFF")
    c.execute("PRAGMA cache_size = -2000000")
    c.execute("PRAGMA temp_store = MEMORY")
    tables = ("documents", "document_versions", "events")
    docs, versions, events = (c.execute(f"SELECT max(id) FROM {t}").fetchone()[0] for t in tables)
    c.execute("BEGIN")
    # Secondary indexes dropped during the copies and built again after (sorted, not inserted
    # into at random ten million times); the unique constraints' own indexes stay.
    indexes = c.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN "
        "('documents', 'document_versions', 'document_parties', 'events')"
    ).fetchall()
    for name, _sql in indexes:
        c.execute(f'DROP INDEX "{name}"')
    for k in range(1, times):
        c.execute(
            f"INSERT OR IGNORE INTO documents ({_DOCUMENTS}) SELECT id + {k * docs}, company_id, product, kind, "
            f"{_key(k)}, nsu + {k} * 10000000, model, serie, number, emitter_id, emitter_name, recipient_id, "
            f"recipient_name, total_cents, {_earlier('issued_at', k)}, issued_offset_minutes, direction, status, "
            f"situation, quarantined, parse_error, version_count, {_earlier('created_at', k)}, "
            f"{_earlier('updated_at', k)}, withheld FROM documents WHERE id <= {docs}"
        )
        c.execute(
            "INSERT INTO document_versions (id, document_id, kind, nsu, schema, xml_zlib, xml_sha256, xml_size, "
            f"is_current, parse_error, received_at) SELECT v.id + {k * versions}, v.document_id + {k * docs}, "
            f"v.kind, v.nsu + {k} * 10000000, v.schema, v.xml_zlib, v.xml_sha256, v.xml_size, v.is_current, "
            f"v.parse_error, {_earlier('v.received_at', k)} FROM document_versions v WHERE v.id <= {versions} "
            f"AND EXISTS (SELECT 1 FROM documents d WHERE d.id = v.document_id + {k * docs})"
        )
        c.execute(
            f"INSERT INTO document_parties (document_id, role, tax_id, name) SELECT p.document_id + {k * docs}, "
            f"p.role, p.tax_id, p.name FROM document_parties p WHERE p.document_id <= {docs} "
            f"AND EXISTS (SELECT 1 FROM documents d WHERE d.id = p.document_id + {k * docs})"
        )
        c.execute(
            "INSERT OR IGNORE INTO events (id, company_id, product, kind, access_key, tp_evento, n_seq_evento, nsu, "
            "schema, description, protocol, event_at, cstat, author_id, xml_zlib, xml_sha256, xml_size, "
            f"created_at, updated_at) SELECT id + {k * events}, company_id, product, kind, {_key(k)}, tp_evento, "
            f"n_seq_evento, nsu + {k} * 10000000, schema, description, protocol, {_earlier('event_at', k)}, cstat, "
            f"author_id, xml_zlib, xml_sha256, xml_size, {_earlier('created_at', k)}, {_earlier('updated_at', k)} "
            f"FROM events WHERE id <= {events}"
        )
        print(f"  copy {k + 1} of {times}: {time.perf_counter() - started:.0f} s", flush=True)
    for _name, sql in indexes:
        c.execute(sql)
    print(f"  indexes built again: {time.perf_counter() - started:.0f} s", flush=True)
    c.execute("COMMIT")
    c.execute("PRAGMA journal_mode = WAL")  # as the app keeps it
    meta: dict[str, Any] = json.loads((source / "bench-grid.json").read_text(encoding="utf-8"))
    counts = dict(c.execute("SELECT company_id, count(*) FROM documents GROUP BY company_id").fetchall())
    ranked = sorted(counts.values(), reverse=True)
    meta.update(
        documents=c.execute("SELECT count(*) FROM documents").fetchone()[0],
        events=c.execute("SELECT count(*) FROM events").fetchone()[0],
        big_company_documents=counts[meta["big_company_id"]],
        company_documents_top5=ranked[:5],
        company_documents_median=ranked[len(ranked) // 2],
        generation_seconds=round(time.perf_counter() - started, 1),
        replicated_from=source.name,
        replicas=times,
    )
    for name in ("nfe_proc", "res_nfe", "cancelled", "emitted"):
        meta[name] = meta[name] * times
    c.close()
    (partial / "bench-grid.json").write_text(json.dumps(meta), encoding="utf-8")
    partial.rename(target)
    return meta
