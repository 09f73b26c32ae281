"""`capture --once | --daemon`: the capture service without a window.

``--once`` runs what is due now and returns (cron, scripts, tests); ``--daemon`` runs the service
until SIGINT/SIGTERM. Both hold the data folder's lock: never two capture processes on the same
folder (the second would query companies the first is waiting on).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from app.cli.console import console_stop
from app.cli.context import open_desk, parse_product
from app.cli.exits import EXIT_OK, EXIT_WAITING
from app.cli.io import print_json
from app.config.logs import setup_logging, shutdown_logging
from app.core.cadence import ACTION_LABELS, display_time
from app.core.ids import Cnpj
from app.core.products import Product

if TYPE_CHECKING:  # the capture loads when a command runs, never for `--help`
    from app.desk.capturing import CaptureNotice, CompanyOutcome, OnceReport

log = logging.getLogger(__name__)

STOP_HINT = "Ctrl+C ou SIGTERM para parar (no Windows, também fechar o console ou encerrar a sessão)."
STOP_MARGIN = 5.0  # seconds past --stop-timeout a console handler waits for the service to close
CHECK_STOP_EVERY = 1.0  # seconds: a wait with a timeout lets Windows deliver Ctrl+C promptly


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "capture",
        help="captura sem janela: uma rodada (--once) ou o serviço contínuo (--daemon)",
        description="Consulta os serviços nacionais obedecendo a todas as esperas e bloqueios.",
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--once", action="store_true", help="executa o que está liberado agora e termina")
    mode.add_argument("--daemon", action="store_true", help="roda o serviço até Ctrl+C ou SIGTERM")
    parser.add_argument("--company", metavar="CNPJ", help="só esta empresa (com --once)")
    parser.add_argument("--product", choices=[p.value for p in Product], help="só este produto (com --once)")
    parser.add_argument("--json", action="store_true", help="saída em JSON (com --once)")
    parser.add_argument("--verbose", action="store_true", help="também mostra o log no terminal")
    parser.add_argument(
        "--stop-timeout",
        type=float,
        default=60.0,
        metavar="SEGUNDOS",
        help="espera pelo trabalho em andamento ao parar (padrão 60)",
    )
    parser.set_defaults(handler=_capture)


def _capture(args: argparse.Namespace) -> int:
    return _once(args) if args.once else _daemon(args)


# ---------------------------------------------------------------------------- --once


def describe(outcome: CompanyOutcome, now: datetime) -> str:
    """One line per company and product: what happened and why it stopped there."""
    who = f"{Cnpj.parse(outcome.cnpj).formatted()} {outcome.name}"
    if outcome.skipped:
        done = "consulta já em andamento"
    elif outcome.queries:
        done = f"{outcome.queries} consulta(s), {outcome.documents} documento(s)"
        if outcome.quarantined:
            done += f", {outcome.quarantined} em quarentena"
    else:
        done = "nenhuma consulta"
    state = ACTION_LABELS[outcome.action]
    if outcome.until is not None:
        state += f" até {display_time(outcome.until, now)}"
    return f"{who} · {outcome.product.label}: {done}. {state}: {outcome.reason}".rstrip()


def _once(args: argparse.Namespace) -> int:
    product = parse_product(args.product)
    with open_desk(args, owner="linha de comando (capture --once)") as desk:
        setup_logging(desk.data_dir, level=desk.settings().log_level, console=args.verbose)
        try:
            company_id = desk.company(args.company).id if args.company else None
            report: OnceReport = desk.rounds.once(company_id, product)  # refused if another instance captures
            for outcome in report.outcomes:
                log.info("capture --once: %s", describe(outcome, report.finished_at))
        finally:
            shutdown_logging()
    if args.json:
        print_json(report.to_json())
    else:
        if not report.outcomes:
            print("Nenhuma empresa configurada para capturar.")
        for outcome in report.outcomes:
            print(describe(outcome, report.finished_at))
        if report.manifestations_sent:
            print(f"{report.manifestations_sent} manifestação(ões) enviada(s).")
    nothing_done = report.queries == 0 and report.manifestations_sent == 0 and report.recoveries_tried == 0
    return EXIT_WAITING if nothing_done else EXIT_OK


# ---------------------------------------------------------------------------- --daemon


def _daemon(args: argparse.Namespace) -> int:
    stop, stopped = threading.Event(), threading.Event()
    # Windows: closing the console, logoff and shutdown wait for this stop (app.cli.console)
    with console_stop(stop, stopped, grace=args.stop_timeout + STOP_MARGIN):
        try:
            _serve(args, stop)
            print("Serviço de captura parado.", flush=True)
        finally:
            stopped.set()  # lets a waiting console handler return: then Windows ends the process
    return EXIT_OK


def _serve(args: argparse.Namespace, stop: threading.Event) -> None:
    # The desk that captures, as the window's: the data-folder lock, the service, the automatic
    # exports and the ERP hand-off (refused when another instance captures here).
    with open_desk(args, capture=True, owner="linha de comando (capture --daemon)") as desk:
        log_path = setup_logging(desk.data_dir, level=desk.settings().log_level, console=args.verbose)
        try:
            desk.subscribe(_log_notice)
            with _stop_on_signals(stop):
                log.info("Serviço de captura iniciado (pasta %s)", desk.data_dir)
                print(f"Serviço de captura em execução na pasta {desk.data_dir} (log em {log_path}).")
                print(desk.capture_node().text(desk.now()))  # this workstation, or the office's node
                print(STOP_HINT, flush=True)
                while not stop.wait(CHECK_STOP_EVERY):
                    pass
                print("Parando: terminando o trabalho em andamento...", flush=True)
                finished = desk.close(timeout=args.stop_timeout)
                log.info("Serviço de captura parado%s", "" if finished else " (trabalho em andamento interrompido)")
        finally:
            shutdown_logging()


def _log_notice(notice: CaptureNotice) -> None:
    product = notice.product.label if notice.product else "-"
    log.info("[%s] empresa %s %s: %s", notice.kind, notice.company_id, product, notice.message)


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT, SIGTERM (and SIGBREAK on Windows) ask for a graceful stop instead of killing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = ("SIGINT", "SIGTERM", "SIGBREAK")
    wanted = [getattr(signal, name) for name in names if hasattr(signal, name)]
    previous = {signo: signal.signal(signo, lambda _signo, _frame: stop.set()) for signo in wanted}
    try:
        yield
    finally:
        for signo, handler in previous.items():
            signal.signal(signo, handler)
        sys.stdout.flush()
