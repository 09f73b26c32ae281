"""`python main.py --demo --headless`: the demo in a terminal, with readable progress lines.

Prints what the capture service tells its listeners (documents arrived, Ciência registered...),
a status line per company every few real seconds, and at the end the referee's verdict. Runs
until Ctrl+C, SIGTERM or ``duration`` real seconds; exits 0 when the referee saw no violation.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from app.capture.context import CaptureNotice
from app.core.clock import to_brasilia
from app.core.errors import CapturaError
from app.core.ids import Cnpj
from app.demo.environment import DemoEnvironment, DemoOptions, DemoVerdict
from app.store.records import DocumentKind

STATUS_EVERY = 5.0  # real seconds between two status blocks


class _Printer:
    """Lines from worker threads and the main loop, never interleaved mid-line.

    Identical notices in a row (ten Ciências registered for one company) become one line with a
    count, flushed by the main loop a fraction of a second later.
    """

    def __init__(self, out: TextIO, env: DemoEnvironment) -> None:
        self.out = out
        self.env = env
        self._lock = threading.Lock()
        self._pending: tuple[str, str] | None = None  # (stamp, text)
        self._count = 0

    def _stamp(self) -> str:
        return to_brasilia(self.env.clock.now()).strftime("%d/%m %H:%M")

    def _write(self, stamp: str, text: str) -> None:
        self.out.write(f"[{stamp}] {text}\n")
        self.out.flush()

    def line(self, text: str) -> None:
        with self._lock:
            self._flush_locked()
            self._write(self._stamp(), text)

    def notice(self, notice: CaptureNotice) -> None:
        who = self.env.company_names().get(notice.company_id or -1, "Todas as empresas")
        text = f"{who}: {notice.message}"
        with self._lock:
            if self._pending is not None and self._pending[1] == text:
                self._count += 1
                return
            self._flush_locked()
            self._pending, self._count = (self._stamp(), text), 1

    def flush(self) -> None:
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._pending is None:
            return
        stamp, text = self._pending
        self._write(stamp, text if self._count == 1 else f"{text} ({self._count} vezes)")
        self._pending, self._count = None, 0


def run_headless(
    data_dir: Path,
    options: DemoOptions | None = None,
    *,
    duration: float | None = None,
    out: TextIO | None = None,
    status_every: float = STATUS_EVERY,
) -> int:
    out = out or sys.stdout
    env = DemoEnvironment(data_dir, options)
    printer = _Printer(out, env)
    env.add_listener(printer.notice)
    stop = threading.Event()
    opts = env.options
    out.write(
        f"Demonstração do Captura DF-e: ambiente nacional simulado, relógio {opts.speed:g}x mais rápido.\n"
        f"Pasta de dados da demonstração: {data_dir}\n"
        "Ctrl+C para parar.\n"
    )
    out.flush()
    try:
        env.start()
    except CapturaError as error:
        print(f"Erro: {error.message}", file=sys.stderr)
        return 1
    assert env.sandbox is not None
    printer.line(
        f"Sandbox em {env.sandbox.base_url}; {len(env.companies)} empresas, Ciência automática após 5 minutos."
    )
    with _stop_on_sigterm(stop):
        try:
            _loop(env, printer, stop, duration, status_every)
        except KeyboardInterrupt:
            pass
    printer.line("Parando o serviço de captura (termina o que está em andamento)...")
    env.stop()
    printer.flush()
    verdict = env.verdict()
    _print_verdict(out, verdict)
    if verdict.violations:
        print(f"Erro: o árbitro registrou {len(verdict.violations)} violação(ões).", file=sys.stderr)
        return 1
    # Ctrl+C is how a person ends the demo: a normal end, not an error.
    return 0


def _loop(env: DemoEnvironment, printer: _Printer, stop: threading.Event, duration: float | None, every: float) -> None:
    deadline = time.monotonic() + duration if duration is not None else None
    next_status = time.monotonic() + min(every, 1.0)
    while not stop.is_set():
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return
        if now >= next_status:
            _print_status(env, printer)
            next_status = now + every
        printer.flush()
        wait = next_status - now
        if deadline is not None:
            wait = min(wait, deadline - now)
        stop.wait(max(0.05, min(wait, 0.5)))


def _print_status(env: DemoEnvironment, printer: _Printer) -> None:
    service = env.service
    if service is None:
        return
    names = env.company_names()
    for status in service.status():
        company_id = status.company_id
        summaries = env.stored(company_id, DocumentKind.RES_NFE)
        complete = env.stored(company_id, DocumentKind.NFE_PROC)
        state = status.label
        if status.reason:
            state = f"{state}: {status.reason}"
        printer.line(f"  {names.get(company_id, company_id)}: {state} | resumos {summaries}, NF-e completas {complete}")


def _print_verdict(out: TextIO, verdict: DemoVerdict) -> None:
    out.write("\nResultado da demonstração\n")
    out.write(
        f"  Documentos guardados: {verdict.documents} "
        f"({verdict.complete} NF-e completas, {verdict.summaries} ainda em resumo)\n"
    )
    for cnpj, count in verdict.by_company.items():
        out.write(f"    {Cnpj.parse(cnpj).formatted()}: {count} documento(s)\n")
    out.write(
        f"  Ambiente simulado: {verdict.published} NSU publicados, {verdict.delivered} entregues, "
        f"{verdict.requests} requisições\n"
    )
    if verdict.other_taken:
        out.write(
            f"  Outro sistema com o mesmo certificado levou {verdict.other_taken} NSU de NF-e; "
            f"{verdict.other_recovered} voltaram por consulta pontual (consNSU)\n"
        )
    count = len(verdict.violations)
    out.write(f"  Árbitro: {count} violações das regras de uso{'' if count else ' (nenhuma)'}\n")
    for violation in verdict.violations[:10]:
        out.write(f"    {violation['at']} {violation['rule']} {violation['cnpj']}: {violation['detail']}\n")
    out.flush()


@contextmanager
def _stop_on_sigterm(stop: threading.Event) -> Iterator[None]:
    """SIGTERM (a service manager, ``kill``) ends the demo as gracefully as Ctrl+C."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda _signo, _frame: stop.set())
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
