"""The crash rig: the capture service in a child process, killed with SIGKILL and restarted.

Parent (this module, in the test process):

* the sandbox over real HTTPS with mutual TLS on loopback, on a :class:`ScaledClock` (``factor``
  virtual seconds per real second: the one-hour waits, the chained lots, the Ciência delays
  happen many times in a few real seconds);
* a data folder with ``companies`` companies registered as the app does it (certificates in the
  vault, their secrets in a TestKeyring file in the rig's folder) and a settings.json
  pointing the homologation endpoints at the sandbox;
* a publisher thread issuing NF-e to the companies all along, plus bursts of 55-130 NF-e to one
  company (more than a lot of 50: the service chains lots).

Child (:mod:`tests.support.crash_child`): ``capture --daemon`` on that folder, on a ScaledClock
with the same three numbers (factor, virtual origin, real origin), so both sides read the same
virtual time. A child is up when it prints that the service runs (its signal handlers are in
place); the answer waits and the catch-up count from then, so a slow start-up (a Windows
process under Wine imports its thousand modules in 10-30 s on the loaded 2-core machine,
against 0.6 s on Linux) does not eat the time meant for capturing. Each life ends with SIGKILL,
in one of four ways chosen by the seeded RNG:

* ``startup``: within the start-up (imports, migrations, the lock, the first pass): the first
  ``startup`` seconds, or as long as the slowest start-up seen so far took;
* ``random``: at a random moment of a life of up to that start-up plus ``max_life`` seconds;
* ``answer``: a few milliseconds after the sandbox answered a lot to the child (the child is
  then reading the answer, processing it or inside the lot's store transaction);
* ``chain``: after a burst, a few milliseconds after an answer with ``ultNSU < maxNSU`` (a
  chained lot: the next one is due at once).

Between two lives (no child alive) the parent reads every cursor from the SQLite file, read-only;
after the last kill one clean life runs until the store has every published NSU, then stops
with SIGTERM (the graceful path). :class:`CrashOutcome` holds what the test asserts.

On Windows the kill is ``TerminateProcess`` (``Popen.kill``: as abrupt as SIGKILL) and the
graceful stop is Ctrl+Break (Windows has no SIGTERM). Windows carries CTRL_BREAK_EVENT only over a
console the parent shares with the child, and a test run may have none (under Wine a program
started with pipes has none, and in a Wine console GenerateConsoleCtrlEvent fails): the parent
closes the child's stdin and the child raises SIGBREAK on itself, which is what the C runtime
turns CTRL_BREAK_EVENT into, so the daemon's own handler stops it as Ctrl+Break would.
"""

from __future__ import annotations

import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import keyring

from app.capture.office import Office
from app.config.paths import database_path
from app.config.settings import CallTimeouts, load_settings, save_settings
from app.core.clock import ScaledClock
from app.core.ids import Cnpj
from app.core.products import Environment, Product
from app.sandbox.referee import RequestRecord
from app.sandbox.sandbox import Sandbox
from app.sandbox.serve import write_settings
from app.store.records import CaptureSettings
from tests.support.crash_child import CLOCK_ENV, KEYRING_ENV, clock_spec
from tests.support.test_keyring import TestKeyring

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SUPPLIERS = ("99888777000100", "44555666000181")
MODES = ("startup", "random", "answer", "chain")
TICK = 0.005  # real seconds between two looks at the sandbox's request log
WINDOWS = sys.platform == "win32"
# Windows: the child in its own process group (a console's Ctrl+Break never reaches the tests),
# its stdin a pipe whose end asks it to stop (tests.support.crash_child).
_SPAWN_FLAGS = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) if WINDOWS else 0
_STDIN = subprocess.PIPE if WINDOWS else None
WINE_SPAWN_FLAKE = 1359  # ERROR_INTERNAL_ERROR
UP_LINE = b"captura em execu"  # of "Serviço de captura em execução", printed once serving


def crash_cnpj(index: int) -> str:
    return Cnpj.from_body(f"{33_100_000 + index:08d}0001").value


@dataclass(frozen=True, slots=True)
class CrashPlan:
    """The knobs; every random choice (modes, delays, bursts, publications) comes from ``seed``."""

    kills: int = 20
    seed: int = 1
    companies: int = 3
    factor: float = 1800.0  # one virtual hour in 2 real seconds
    burst: tuple[int, int] = (55, 130)
    publish_every: float = 0.25  # real seconds between two NF-e of the steady publisher, on average
    startup: float = 0.6  # real seconds: the start-up window, until a slower start-up is seen
    max_life: float = 2.5  # real seconds: the longest random life after the start-up
    answer_timeout: float = 5.0  # real seconds an 'answer'/'chain' life waits for its answer once up
    ready_timeout: float = 120.0  # real seconds a child may take to be up
    # The children's call timeout, real seconds (a socket's): at factor 1800 the default 300 s
    # would be 150 virtual hours of wait after a kill during a call; 1 s is half a virtual hour,
    # and twenty times the slowest loopback call measured on the 2-core machine (51 ms: the first
    # one, with its TLS handshake; the median was 1 ms).
    # Windows under Wine on the loaded machine: a call answered by the sandbox outlived 1 s, and the
    # retry of the same distNSU met the service's hour (a 656 the referee counts): 10 s there.
    call_timeout: float = 10.0 if WINDOWS else 1.0
    auto_ciencia: bool = True
    # Once up; a deadline (Linux catches up in seconds). Under Wine a life lasts longer, so more NF-e
    # are published meanwhile: ~4,000 NF-e and their Ciências took over 4 minutes at load 7.
    catch_up_timeout: float = 600.0


@dataclass
class CrashOutcome:
    """What happened, for the assertions and the benchmark's JSON line."""

    kills: int = 0
    restarts: int = 0
    modes: Counter[str] = field(default_factory=Counter)
    answers_lost: int = 0  # answers the sandbox gave whose lot the kill kept from being committed
    chains_cut: int = 0  # of those, lots with ultNSU < maxNSU (the kill cut a chain of lots)
    published: int = 0
    stored: int = 0
    lost: list[tuple[str, int]] = field(default_factory=list)  # (CNPJ, NSU) published, never stored
    extra: list[tuple[str, int]] = field(default_factory=list)  # stored, never published
    duplicated: int = 0
    unresolved: int = 0  # NSUs stored without a document or event (quarantined)
    cursor_history: dict[str, list[int]] = field(default_factory=dict)
    cursor_regressions: list[str] = field(default_factory=list)
    asked_regressions: list[str] = field(default_factory=list)  # a distNSU below an earlier one
    violations: list[dict[str, Any]] = field(default_factory=list)
    manifestations_stuck: int = 0  # left 'sent' by a kill, never settled
    final_exit: int | None = None
    caught_up: bool = False
    catch_up_seconds: float = 0.0
    wall_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "kills": self.kills,
            "restarts": self.restarts,
            "modes": dict(self.modes),
            "answers_lost": self.answers_lost,
            "chains_cut": self.chains_cut,
            "published": self.published,
            "stored": self.stored,
            "lost": len(self.lost),
            "duplicated": self.duplicated,
            "unresolved": self.unresolved,
            "cursor_regressions": len(self.cursor_regressions) + len(self.asked_regressions),
            "violations": len(self.violations),
            "violations_by_rule": dict(Counter(v["rule"] for v in self.violations)),
            "manifestations_stuck": self.manifestations_stuck,
            "final_exit": self.final_exit,
            "caught_up": self.caught_up,
            "catch_up_seconds": round(self.catch_up_seconds, 2),
            "wall_seconds": round(self.wall_seconds, 2),
        }


class _Publisher(threading.Thread):
    """The only thread that publishes (the document factory is not shared across threads)."""

    def __init__(self, sandbox: Sandbox, cnpjs: list[str], rng: random.Random, every: float) -> None:
        super().__init__(name="crash-publisher", daemon=True)
        self.sandbox, self.cnpjs, self.rng, self.every = sandbox, cnpjs, rng, every
        self.bursts: queue.Queue[tuple[str, int, threading.Event]] = queue.Queue()
        self.stopping = threading.Event()
        self.error: Exception | None = None

    def burst(self, cnpj: str, count: int) -> None:
        done = threading.Event()
        self.bursts.put((cnpj, count, done))
        if not done.wait(120):
            raise AssertionError("the publisher did not publish its burst")

    def run(self) -> None:
        try:
            while not self.stopping.wait(self.rng.expovariate(1 / self.every)):
                while not self.bursts.empty():
                    cnpj, count, done = self.bursts.get()
                    for _ in range(count):
                        self._one(cnpj)
                    done.set()
                self._one(self.rng.choice(self.cnpjs))
        except Exception as error:  # noqa: BLE001 - surfaced by stop(): a dead publisher fails the test
            self.error = error

    def _one(self, cnpj: str) -> None:
        self.sandbox.publish_nfe(self.rng.choice(SUPPLIERS), cnpj)

    def stop(self) -> None:
        self.stopping.set()
        self.join(30)
        if self.error is not None:
            raise AssertionError(f"publisher failed: {self.error!r}") from self.error


class CrashRig:
    """Sandbox, data folder and child processes; use :func:`crash_rig`."""

    def __init__(self, root: Path, plan: CrashPlan, sandbox: Sandbox, clock: ScaledClock, keyring_file: Path) -> None:
        self.root, self.plan, self.sandbox, self.clock = root, plan, sandbox, clock
        self.keyring_file = keyring_file
        self.data_dir = root / "dados"
        self.rng = random.Random(plan.seed)
        self.cnpjs = [crash_cnpj(i) for i in range(plan.companies)]
        self.company_ids: dict[str, int] = {}
        self.publisher = _Publisher(sandbox, self.cnpjs, random.Random(plan.seed * 7919 + 1), plan.publish_every)
        self.outcome = CrashOutcome(cursor_history={c: [] for c in self.cnpjs})
        self._lives = 0
        self.startup_seconds = plan.startup  # the slowest start-up seen (spawn to up)
        self._spawned_at = 0.0

    # ------------------------------------------------------------------ set-up

    def register(self) -> None:
        ca = self.root / "sandbox-ca.pem"
        ca.write_bytes(self.sandbox.ca_cert_pem)
        self.data_dir.mkdir()
        write_settings(self.sandbox, self.data_dir, ca)
        settings = load_settings(self.data_dir)
        timeouts = CallTimeouts(nfe=self.plan.call_timeout, cte=self.plan.call_timeout, nfse=self.plan.call_timeout)
        save_settings(self.data_dir, replace(settings, call_timeouts=timeouts))
        with Office(self.data_dir, clock=self.clock) as office:
            for index, cnpj in enumerate(self.cnpjs):
                cert = self.sandbox.company(cnpj, f"EMPRESA CRASH {index:02d} LTDA")
                company = office.register_company(
                    cert.pfx, cert.password, environment=Environment.HOMOLOGACAO, products=(Product.NFE,)
                )
                office.companies.save_settings(
                    CaptureSettings(
                        company.id,
                        Product.NFE,
                        environment=Environment.HOMOLOGACAO,
                        auto_ciencia=self.plan.auto_ciencia,
                        c_uf_autor="35",
                    )
                )
                self.company_ids[cnpj] = company.id
        for supplier in SUPPLIERS:
            self.sandbox.party(supplier)

    # ------------------------------------------------------------------ children

    def modes(self) -> list[str]:
        """``plan.kills`` modes, each of them at least once when there are enough kills, shuffled."""
        modes = [MODES[i % len(MODES)] for i in range(self.plan.kills)]
        self.rng.shuffle(modes)
        return modes

    def spawn(self) -> subprocess.Popen[bytes]:
        self._lives += 1
        self._spawned_at = time.monotonic()
        self._spawned_at = time.monotonic()
        log = self.root / f"child-{self._lives:03d}.log"
        return spawn_child("tests.support.crash_child", self.data_dir, log, self.clock, self.keyring_file)

    def life(self, mode: str) -> None:
        """One child, killed (SIGKILL; TerminateProcess on Windows) in ``mode``; then the cursors are read."""
        rng = self.rng
        if mode == "chain":
            self.publisher.burst(rng.choice(self.cnpjs), rng.randint(*self.plan.burst))
        seen = len(self.sandbox.referee.requests)
        child = self.spawn()
        try:
            if mode == "startup":
                _pause(rng.uniform(0.0, self.startup_seconds))
            elif mode == "random":
                _pause(rng.uniform(0.1, self.startup_seconds + self.plan.max_life))
            else:
                wanted = _chained if mode == "chain" else _lot
                self._wait_until_up(child)
                self._wait_for_answer(child, seen, wanted)
                _pause(rng.uniform(0.0, 0.04))
            if child.poll() is not None:
                raise AssertionError(f"the child ended by itself ({child.returncode}): {self._log_tail()}")
            child.kill()  # SIGKILL on POSIX, TerminateProcess on Windows: no handler runs
        finally:
            child.kill()
            child.wait(30)
            close_stdin(child)
        self.outcome.kills += 1
        self.outcome.modes[mode] += 1
        self._after_kill(seen)

    def _wait_until_up(self, child: subprocess.Popen[bytes]) -> None:
        """Until the child prints that the service runs; the start-up's length is remembered."""
        spawned = self._spawned_at
        log = self.root / f"child-{self._lives:03d}.log"
        while UP_LINE not in log.read_bytes():
            if child.poll() is not None:
                raise AssertionError(f"the child ended while starting ({child.returncode}): {self._log_tail()}")
            if time.monotonic() - spawned > self.plan.ready_timeout:
                raise AssertionError(f"the child was not up within {self.plan.ready_timeout:.0f} s: {self._log_tail()}")
            _pause(0.02)
        self.startup_seconds = max(self.startup_seconds, time.monotonic() - spawned)

    def _wait_for_answer(
        self, child: subprocess.Popen[bytes], seen: int, wanted: Callable[[RequestRecord], bool]
    ) -> None:
        deadline = time.monotonic() + self.plan.answer_timeout
        requests = self.sandbox.referee.requests
        while time.monotonic() < deadline and child.poll() is None:
            if any(wanted(r) for r in _ours(requests[seen:])):
                return
            _pause(TICK)

    def _after_kill(self, seen: int) -> None:
        cursors = self.read_cursors()
        for cnpj, history in self.outcome.cursor_history.items():
            history.append(cursors.get(cnpj, 0))
        last: dict[str, RequestRecord] = {}
        for record in _ours(self.sandbox.referee.requests[seen:]):
            if record.cstat in (137, 138):
                last[record.caller_doc] = record
        # The sandbox answered a lot this life whose cursor the store does not have: the kill
        # fell between the answer and the commit (in the call, the processing or the transaction).
        lost = [r for cnpj, r in last.items() if r.summary.get("ultNSU", 0) > cursors.get(cnpj, 0)]
        self.outcome.answers_lost += len(lost)
        # ... and among them, a lot that was to be chained at once (ultNSU < maxNSU).
        self.outcome.chains_cut += sum(1 for r in lost if _chained(r))

    def final_life(self) -> None:
        """A clean life until every published NSU is stored, then a graceful stop (SIGTERM)."""
        stuck = self._manifestations("sent")
        child = self.spawn()
        try:
            self._wait_until_up(child)
            started = time.monotonic()
            deadline = started + self.plan.catch_up_timeout
            while not self._caught_up(stuck):
                if child.poll() is not None:
                    raise AssertionError(f"the final child ended by itself: {self._log_tail()}")
                if time.monotonic() > deadline:
                    break  # the verdict says what is missing
                _pause(0.05)
            else:
                self.outcome.caught_up = True
            self.outcome.catch_up_seconds = time.monotonic() - started
            ask_graceful_stop(child)
            self.outcome.final_exit = child.wait(60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(30)
            close_stdin(child)
        self.outcome.manifestations_stuck = len(self._manifestations("sent"))

    def _caught_up(self, stuck: set[int]) -> bool:
        # The store first, then the sandbox: a Ciência accepted in between shows as not caught up.
        pending = self._manifestations("pending") | (self._manifestations("sent") - stuck)
        stored = self.stored_nsus()
        published = self.published_nsus()
        return not pending and all(stored.get(c, set()) >= published[c] for c in self.cnpjs)

    def progress(self) -> dict[str, Any]:
        stored = self.stored_nsus()
        return {
            c: {"published": len(p), "stored": len(stored.get(c, ())), "missing": sorted(p - stored.get(c, set()))[:10]}
            for c, p in self.published_nsus().items()
        }

    def _log_tail(self) -> str:
        return (self.root / f"child-{self._lives:03d}.log").read_text(errors="replace")[-3000:]

    # ------------------------------------------------------------------ reading

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        path = database_path(self.data_dir)
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            yield connection
        finally:
            connection.close()

    def read_cursors(self) -> dict[str, int]:
        with self._db() as db:
            rows = db.execute(
                "SELECT c.cnpj, s.ult_nsu FROM capture_state s JOIN companies c ON c.id = s.company_id "
                "WHERE s.product = 'nfe'"
            ).fetchall()
        return {cnpj: int(ult) for cnpj, ult in rows}

    def stored_nsus(self) -> dict[str, set[int]]:
        with self._db() as db:
            rows = db.execute(
                "SELECT c.cnpj, i.nsu FROM distribution_items i JOIN companies c ON c.id = i.company_id "
                "WHERE i.product = 'nfe'"
            ).fetchall()
        result: dict[str, set[int]] = {}
        for cnpj, nsu in rows:
            result.setdefault(cnpj, set()).add(int(nsu))
        return result

    def _manifestations(self, status: str) -> set[int]:
        with self._db() as db:
            return {row[0] for row in db.execute("SELECT id FROM manifestations WHERE status = ?", (status,))}

    def published_nsus(self) -> dict[str, set[int]]:
        return {cnpj: {e.nsu for e in self.sandbox.entries("nfe", cnpj)} for cnpj in self.cnpjs}

    # ------------------------------------------------------------------ verdict

    def verdict(self) -> CrashOutcome:
        """After the final life: the store (through the app's repositories) against the sandbox."""
        out = self.outcome
        out.restarts = max(0, self._lives - 1)
        published = self.published_nsus()
        with Office(self.data_dir, clock=self.clock) as office:
            ctx = office.capture_context()
            for cnpj in self.cnpjs:
                company_id = self.company_ids[cnpj]
                state = ctx.cursors.get(company_id, Product.NFE)
                top = max([state.ult_nsu, *published[cnpj], 1])
                stored = ctx.items.received(company_id, Product.NFE, 1, top)
                out.published += len(published[cnpj])
                out.stored += len(stored)
                out.duplicated += len(stored) - len(set(stored))
                out.lost += [(cnpj, n) for n in sorted(published[cnpj] - set(stored))]
                out.extra += [(cnpj, n) for n in sorted(set(stored) - published[cnpj])]
                out.cursor_history[cnpj].append(state.ult_nsu)
        with self._db() as db:
            out.duplicated += db.execute(
                "SELECT COUNT(*) FROM (SELECT 1 FROM distribution_items GROUP BY company_id, product, nsu "
                "HAVING COUNT(*) > 1)"
            ).fetchone()[0]
            out.unresolved = db.execute(
                "SELECT COUNT(*) FROM distribution_items WHERE document_id IS NULL AND event_id IS NULL"
            ).fetchone()[0]
        for cnpj, history in out.cursor_history.items():
            out.cursor_regressions += [
                f"{cnpj}: {a} -> {b} (after kill {i + 1})" for i, (a, b) in enumerate(pairwise(history)) if b < a
            ]
        asked: dict[str, int] = {}
        for record in _ours(self.sandbox.referee.requests):
            if record.operation != "distNSU" or "asked" not in record.summary:
                continue
            value = int(record.summary["asked"])
            if value < asked.get(record.caller_doc, 0):
                out.asked_regressions.append(f"{record.caller_doc}: distNSU {value} after {asked[record.caller_doc]}")
            asked[record.caller_doc] = max(value, asked.get(record.caller_doc, 0))
        out.violations = list(self.sandbox.referee.report()["violations"])
        return out


def spawn_child(
    module: str,
    data_dir: Path,
    log: Path,
    clock: ScaledClock,
    keyring_file: Path,
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """``python -m module data_dir`` from the project's root, with the rig's keyring file and
    clock (and ``extra_env``) in its environment, its output in ``log``."""
    env = dict(os.environ)
    env[KEYRING_ENV] = str(keyring_file)
    env[CLOCK_ENV] = clock_spec(clock.factor, clock.origin, clock.real_origin)
    env.update(extra_env or {})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    with open(log, "wb") as output:  # the child keeps its own descriptor
        for attempt in range(3):
            try:
                command = [sys.executable, "-m", module, str(data_dir)]
                streams = {"stdin": _STDIN, "stdout": output, "stderr": subprocess.STDOUT}
                return subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, creationflags=_SPAWN_FLAGS, **streams)
            except OSError as error:
                # Wine's CreateProcess now and then fails with ERROR_INTERNAL_ERROR on a loaded
                # machine (seen once in 21 spawns at a load of 9 on 2 cores): asked again.
                if getattr(error, "winerror", None) != WINE_SPAWN_FLAKE or attempt == 2:
                    raise
        raise AssertionError("unreachable")


def ask_graceful_stop(child: subprocess.Popen[bytes]) -> None:
    """Ask ``capture --daemon`` to stop gracefully: SIGTERM, or on Windows the end of its stdin,
    on which the child raises SIGBREAK (Ctrl+Break) on itself (see the module's docstring)."""
    if WINDOWS:
        close_stdin(child)
    else:
        child.send_signal(signal.SIGTERM)


def close_stdin(child: subprocess.Popen[bytes]) -> None:
    """The end of a child's stdin pipe (Windows), once it has ended or been asked to stop."""
    if child.stdin is not None and not child.stdin.closed:
        child.stdin.close()


def _ours(records: list[RequestRecord]) -> Iterator[RequestRecord]:
    return (r for r in records if not r.competitor and r.service == "nfe_dist")


def _lot(record: RequestRecord) -> bool:
    return record.operation == "distNSU" and bool(record.summary.get("nsus"))


def _chained(record: RequestRecord) -> bool:
    return _lot(record) and record.summary.get("ultNSU", 0) < record.summary.get("maxNSU", 0)


def _pause(seconds: float) -> None:
    threading.Event().wait(max(0.0, seconds))


@contextmanager
def crash_rig(root: Path, plan: CrashPlan) -> Iterator[CrashRig]:
    """The sandbox on HTTPS, the registered data folder, the publisher; the keyring swapped for a
    TestKeyring file under ``root`` (restored at the end)."""
    real_origin = datetime.now(UTC).replace(microsecond=0)
    clock = ScaledClock(plan.factor, real_origin, real_origin=real_origin)
    keyring_file = root / "keyring.cfg"
    ring = TestKeyring()
    ring.file_path = str(keyring_file)
    previous = keyring.get_keyring()
    keyring.set_keyring(ring)
    sandbox = Sandbox(clock, seed=plan.seed)
    try:
        sandbox.start_https()
        rig = CrashRig(root, plan, sandbox, clock, keyring_file)
        rig.register()
        yield rig
    finally:
        sandbox.stop()
        keyring.set_keyring(previous)


def run_crash(root: Path, plan: CrashPlan) -> CrashOutcome:
    """The whole run: ``plan.kills`` killed lives, one clean life, the verdict."""
    started = time.monotonic()
    with crash_rig(root, plan) as rig:
        for cnpj in rig.cnpjs:  # a backlog waiting for the first life
            for _ in range(rig.rng.randint(3, 12)):
                rig.sandbox.publish_nfe(SUPPLIERS[0], cnpj, at=rig.clock.now() - timedelta(minutes=30))
        rig.publisher.start()
        try:
            for mode in rig.modes():
                rig.life(mode)
        finally:
            rig.publisher.stop()
        rig.final_life()
        outcome = rig.verdict()
    outcome.wall_seconds = time.monotonic() - started
    return outcome
