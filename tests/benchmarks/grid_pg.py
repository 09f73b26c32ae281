"""bench_grid on PostgreSQL: a cached cluster and a database filled by COPY from the cached SQLite file.

``database migrate --to`` takes ~440 s a million documents (it verifies every row and XML), so the
benchmark copies its generated SQLite file itself: the schema is the app's migrations run on an
empty database, then each table goes through ``sqlite3 -csv | psql \\copy`` (both in C; BLOBs as
hex, which ``bytea`` reads), with the big tables' secondary indexes and constraints dropped during
the copy and built again after it, foreign-key triggers off (``session_replication_role``),
the sequences moved past the copied ids, then ``VACUUM ANALYZE`` (statistics, and the visibility
map that index-only scans need).

The cluster lives in the SQLite file's cache folder (``<folder>/pg/data``, owned by the ``postgres``
system user), is started on a free loopback port for the run and stopped after it; it is filled
once and reused, like the SQLite file. Its settings are an office server's, sized for this
machine (``SETTINGS``), durability off as in the tests' throwaway clusters.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from tests.support.pg_server import SUPERUSER, free_port, server_binaries

DATABASE = "grid"
SETTINGS = (
    "shared_buffers=1GB",
    "effective_cache_size=12GB",
    "work_mem=32MB",
    "maintenance_work_mem=1GB",
    "max_wal_size=8GB",
    "random_page_cost=1.1",  # SSD storage
    "jit=off",  # compiling a short grid query costs more than it saves
    "fsync=off",
    "full_page_writes=off",
    "synchronous_commit=off",
)
BIG_TABLES = ("documents", "document_versions", "document_parties", "events")
_SKIP = {"alembic_version"}


class CachedCluster:
    """A PostgreSQL cluster kept in ``root`` between runs; ``url`` names the benchmark's database."""

    def __init__(self, root: Path) -> None:
        self.bin = server_binaries()
        self.root = root
        self.data = root / "data"
        self.port = _kept_port(root / "port")  # the same URL from run to run: the desk's saved index is kept
        self._as_user: tuple[str, ...] = ()
        if os.name == "posix" and os.geteuid() == 0:
            self._as_user = ("runuser", "-u", "postgres", "--")

    def _run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self._as_user, *args], capture_output=True, text=True, check=False, timeout=timeout)

    def start(self) -> CachedCluster:
        self.root.mkdir(parents=True, exist_ok=True)
        if self._as_user:
            shutil.chown(self.root, "postgres")
        if not (self.data / "PG_VERSION").exists():
            init = self._run(
                str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8",
                "--locale=C.UTF-8", "--no-sync",
            )  # fmt: skip
            if init.returncode != 0:
                raise RuntimeError(f"initdb falhou: {init.stderr or init.stdout}")
        options = " ".join(
            [f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root}", *(f"-c {s}" for s in SETTINGS)]
        )
        started = self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"), "-o", options,
            "-w", "-t", "120", "start",
        )  # fmt: skip
        if started.returncode != 0:
            raise RuntimeError(f"pg_ctl start falhou: {started.stderr or started.stdout}")
        return self

    def stop(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def libpq(self, database: str = DATABASE) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def url(self, database: str = DATABASE) -> str:
        return self.libpq(database).replace("postgresql://", "postgresql+psycopg://", 1)

    def recreate(self) -> None:
        with psycopg.connect(self.libpq("postgres"), autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{DATABASE}"')


def fill_from_sqlite(sqlite_file: Path, libpq: str, url: str, log: Any = print) -> dict[str, float]:
    """Copy every table of ``sqlite_file`` into the empty database at ``libpq`` (migrated first
    through ``url`` by the app's own migrations); returns the seconds of each step."""
    from app.store.db import open_database
    from app.store.names import REFILL_SQL

    timings: dict[str, float] = {}
    started = time.perf_counter()
    db = open_database(url)
    db.close()
    timings["migrate_s"] = round(time.perf_counter() - started, 1)
    sqlite_columns = _sqlite_columns(sqlite_file)
    with psycopg.connect(libpq, autocommit=True) as c:
        tables = _copy_order(c)
        kept = _drop_secondary(c, BIG_TABLES)
        for table in tables:
            if table in _SKIP or table not in sqlite_columns:
                continue
            has_rows = c.execute(f'SELECT EXISTS (SELECT 1 FROM "{table}")').fetchone()
            if has_rows and has_rows[0]:
                continue  # made by a migration (the node lease's row)
            columns = _pg_columns(c, table)
            shared = [name for name in columns if name in sqlite_columns[table]]
            t0 = time.perf_counter()
            _copy_table(sqlite_file, libpq, table, shared, columns)
            timings[f"copy_{table}_s"] = round(time.perf_counter() - t0, 1)
            log(f"  copied {table} in {timings[f'copy_{table}_s']} s", flush=True)
        t0 = time.perf_counter()
        for statement in kept:
            c.execute(statement)
        timings["indexes_s"] = round(time.perf_counter() - t0, 1)
        log(f"  indexes and constraints built again in {timings['indexes_s']} s", flush=True)
        c.execute(REFILL_SQL)  # the names' dictionary (revision 0018): its triggers were off
        for table in tables:
            if "id" not in _pg_columns(c, table):
                continue
            serial = c.execute("SELECT pg_get_serial_sequence(%s, 'id')", (f'"{table}"',)).fetchone()
            if serial is not None and serial[0]:
                c.execute(f'SELECT setval(%s, coalesce((SELECT max(id) FROM "{table}"), 0) + 1, false)', (serial[0],))
        t0 = time.perf_counter()
        c.execute("VACUUM ANALYZE")
        timings["vacuum_analyze_s"] = round(time.perf_counter() - t0, 1)
        c.execute("CREATE TABLE bench_grid_filled (at timestamptz DEFAULT now())")
    timings["total_s"] = round(time.perf_counter() - started, 1)
    return timings


def _sqlite_columns(path: Path) -> dict[str, set[str]]:
    import sqlite3

    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: {r[1] for r in connection.execute(f'PRAGMA table_info("{n}")')} for n in names}
    finally:
        connection.close()


def _pg_columns(c: psycopg.Connection[Any], table: str) -> dict[str, str]:
    rows = c.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' "
        "AND table_name = %s ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return {name: kind for name, kind in rows}


def _copy_order(c: psycopg.Connection[Any]) -> list[str]:
    """Tables, the referenced before those that reference them (triggers are off anyway)."""
    names = [r[0] for r in c.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
    edges = c.execute(
        "SELECT cl.relname, ref.relname FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid "
        "JOIN pg_class ref ON ref.oid = co.confrelid WHERE co.contype = 'f'"
    ).fetchall()
    needs: dict[str, set[str]] = {n: set() for n in names}
    for table, referenced in edges:
        if table in needs and referenced != table:
            needs[table].add(referenced)
    ordered: list[str] = []
    while needs:
        ready = sorted(n for n, deps in needs.items() if not deps - set(ordered))
        if not ready:
            ready = sorted(needs)
        for n in ready:
            ordered.append(n)
            needs.pop(n)
    return ordered


def _drop_secondary(c: psycopg.Connection[Any], tables: tuple[str, ...]) -> list[str]:
    """Drop the tables' unique constraints and secondary indexes; the statements that make them again."""
    again: list[str] = []
    for name, table, definition in c.execute(
        "SELECT co.conname, cl.relname, pg_get_constraintdef(co.oid) FROM pg_constraint co "
        "JOIN pg_class cl ON cl.oid = co.conrelid WHERE co.contype = 'u' AND cl.relname = ANY(%s)",
        (list(tables),),
    ).fetchall():
        c.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
        again.append(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}')
    for name, definition in c.execute(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i WHERE i.schemaname = 'public' AND i.tablename = ANY(%s) "
        "AND NOT EXISTS (SELECT 1 FROM pg_constraint co WHERE co.conname = i.indexname)",
        (list(tables),),
    ).fetchall():
        c.execute(f'DROP INDEX "{name}"')
        again.append(definition)
    return again


def _copy_table(sqlite_file: Path, libpq: str, table: str, names: list[str], types: dict[str, str]) -> None:
    selected = ", ".join(f"'\\x' || hex(\"{n}\")" if types[n] == "bytea" else f'"{n}"' for n in names)
    columns = ", ".join(f'"{n}"' for n in names)
    reader = subprocess.Popen(
        ["sqlite3", "-readonly", "-csv", str(sqlite_file), f'SELECT {selected} FROM "{table}"'],
        stdout=subprocess.PIPE,
    )
    env = dict(os.environ, PGOPTIONS="-c session_replication_role=replica")
    copy = f'\\copy "{table}" ({columns}) FROM STDIN WITH (FORMAT csv)'
    writer = subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", libpq, "-c", copy],
        stdin=reader.stdout, capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert reader.stdout is not None
    reader.stdout.close()
    if reader.wait() != 0 or writer.returncode != 0:
        raise RuntimeError(f"cópia de {table} falhou: {writer.stderr.strip()}")


@contextmanager
def postgres_for(folder: Path, database: str | None) -> Iterator[tuple[Path, str, int, dict[str, float] | None]]:
    """(a data folder for the desk, the SQLAlchemy URL, the database's bytes, the fill's timings or
    None when it was filled before) for the generated SQLite folder ``folder``: the server at
    ``database``, or the cluster cached beside ``folder`` (started now, stopped after)."""
    cluster = None
    if database:
        url = database if "+psycopg" in database else database.replace("postgresql://", "postgresql+psycopg://", 1)
        libpq = url.replace("postgresql+psycopg://", "postgresql://", 1)
        name = hashlib.sha256(url.encode()).hexdigest()[:12]
        desk_folder = folder.with_name(f"{folder.name}-pg-{name}")
    else:
        meta = json.loads((folder / "bench-grid.json").read_text(encoding="utf-8"))
        if meta.get("replicated_from"):  # copies of a smaller folder: its cluster copied as well
            print("replicating PostgreSQL from the smaller folder's cluster (once: cached)", flush=True)
            built = replicate_cluster(folder.with_name(meta["replicated_from"]), folder, int(meta["replicas"]))
            if built:
                print(f"PostgreSQL replicated: {built}", flush=True)
        cluster = CachedCluster(folder.with_name(folder.name + "-pg") / "cluster").start()
        url, libpq = cluster.url(), cluster.libpq()
        desk_folder = folder.with_name(folder.name + "-pg") / "desk"
    try:
        fill = None
        if not _filled(libpq):
            if cluster is not None:
                cluster.recreate()
            print(f"filling PostgreSQL from {folder} (once: cached)", flush=True)
            fill = fill_from_sqlite(folder / "captura.sqlite3", libpq, url)
            print(f"filled in {fill['total_s']} s: {fill}", flush=True)
        desk_folder.mkdir(parents=True, exist_ok=True)
        with psycopg.connect(libpq) as c:
            row = c.execute("SELECT pg_database_size(current_database())").fetchone()
        yield desk_folder, url, int(row[0]) if row else 0, fill
    finally:
        if cluster is not None:
            cluster.stop()


def _filled(libpq: str) -> bool:
    try:
        with psycopg.connect(libpq, autocommit=True) as c:
            done = c.execute("SELECT to_regclass('bench_grid_filled')").fetchone()
    except psycopg.OperationalError:  # no such database yet
        return False
    return done is not None and done[0] is not None


def _cluster_filled(root: Path) -> bool:
    """Whether the cached (stopped) cluster in ``root`` holds the benchmark's data."""
    cluster = CachedCluster(root).start()
    try:
        return _filled(cluster.libpq())
    finally:
        cluster.stop()


def _kept_port(path: Path) -> int:
    import socket

    try:
        port = int(path.read_text())
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", port))
        return port
    except (OSError, ValueError):
        port = free_port()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(port))
        return port


def replicate_cluster(source_folder: Path, target_folder: Path, times: int) -> dict[str, float]:
    """The PostgreSQL twin of ``grid_scale.replicate``: the source folder's cached cluster copied
    (stopped, file by file), then its database made ``times`` copies of itself in SQL, with the same
    ids, keys, NSUs and instants as the SQLite copies, secondary indexes built again after."""
    started = time.perf_counter()
    source = source_folder.with_name(source_folder.name + "-pg") / "cluster"
    target_root = target_folder.with_name(target_folder.name + "-pg")
    target = target_root / "cluster"
    if (target / "data" / "PG_VERSION").exists():
        kept = CachedCluster(target).start()  # stopped between runs: asked whether it was filled
        try:
            if _filled(kept.libpq()):
                return {}
        finally:
            kept.stop()
    shutil.rmtree(target_root, ignore_errors=True)
    if not (source / "data" / "PG_VERSION").exists() or not _cluster_filled(source):
        print(f"filling the PostgreSQL twin of {source_folder} first", flush=True)
        with postgres_for(source_folder, None):
            pass
    target_root.mkdir(parents=True)
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)
    (target / "port").unlink(missing_ok=True)
    for stale in ("postmaster.pid", "server.log"):
        (target / "data" / stale).unlink(missing_ok=True)
    cluster = CachedCluster(target).start()
    timings: dict[str, float] = {"copy_cluster_s": round(time.perf_counter() - started, 1)}
    try:
        with psycopg.connect(cluster.libpq(), autocommit=True) as c:
            c.execute("DROP TABLE bench_grid_filled")
            c.execute("SET session_replication_role = replica")
            kept = _drop_secondary(c, BIG_TABLES)
            docs, versions, events = (
                c.execute(f"SELECT max(id) FROM {t}").fetchone()[0]  # type: ignore[index]
                for t in ("documents", "document_versions", "events")
            )
            for k in range(1, times):
                t0 = time.perf_counter()
                for statement in _copies(k, docs, versions, events):
                    c.execute(statement)
                print(f"  PostgreSQL copy {k + 1} of {times}: {time.perf_counter() - t0:.0f} s", flush=True)
            t0 = time.perf_counter()
            for statement in kept:
                c.execute(statement)
            timings["indexes_s"] = round(time.perf_counter() - t0, 1)
            for table in BIG_TABLES:
                if "id" in _pg_columns(c, table):
                    highest = f"(SELECT max(id) FROM {table}) + 1"
                    c.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), {highest}, false)")
            t0 = time.perf_counter()
            c.execute("VACUUM ANALYZE")
            timings["vacuum_analyze_s"] = round(time.perf_counter() - t0, 1)
            c.execute("CREATE TABLE bench_grid_filled (at timestamptz DEFAULT now())")
    finally:
        cluster.stop()
    timings["total_s"] = round(time.perf_counter() - started, 1)
    return timings


def _copies(k: int, docs: int, versions: int, events: int) -> list[str]:
    key = (
        f"substr(access_key, 1, 35) || lpad(((substr(access_key, 36, 8)::bigint + {k} * 12345679) % 100000000)::text, "
        "8, '0') || substr(access_key, 44)"
    )
    ago = f"interval '{k} seconds'"
    return [
        "INSERT INTO documents (id, company_id, product, kind, access_key, nsu, model, serie, number, emitter_id, "
        "emitter_name, recipient_id, recipient_name, total_cents, issued_at, issued_offset_minutes, direction, status, "
        "situation, quarantined, parse_error, version_count, created_at, updated_at, withheld) "
        f"SELECT id + {k * docs}, company_id, product, kind, {key}, nsu + {k} * 10000000, model, serie, number, "
        f"emitter_id, emitter_name, recipient_id, recipient_name, total_cents, issued_at - {ago}, "
        "issued_offset_minutes, direction, status, situation, quarantined, parse_error, version_count, "
        f"created_at - {ago}, updated_at - {ago}, withheld FROM documents WHERE id <= {docs}",
        "INSERT INTO document_versions (id, document_id, kind, nsu, schema, xml_zlib, xml_sha256, xml_size, "
        f"is_current, parse_error, received_at) SELECT id + {k * versions}, document_id + {k * docs}, kind, "
        f"nsu + {k} * 10000000, schema, xml_zlib, xml_sha256, xml_size, is_current, parse_error, "
        f"received_at - {ago} FROM document_versions WHERE id <= {versions}",
        f"INSERT INTO document_parties (document_id, role, tax_id, name) SELECT document_id + {k * docs}, role, "
        f"tax_id, name FROM document_parties WHERE document_id <= {docs}",
        "INSERT INTO events (id, company_id, product, kind, access_key, tp_evento, n_seq_evento, nsu, schema, "
        "description, protocol, event_at, cstat, author_id, xml_zlib, xml_sha256, xml_size, created_at, updated_at) "
        f"SELECT id + {k * events}, company_id, product, kind, {key}, tp_evento, n_seq_evento, "
        f"nsu + {k} * 10000000, schema, description, protocol, event_at - {ago}, cstat, author_id, xml_zlib, "
        f"xml_sha256, xml_size, created_at - {ago}, updated_at - {ago} FROM events WHERE id <= {events}",
    ]
