"""How a command reaches the data folder: through the desk, as the window does.

``Runtime`` is the one injection point of the command line: the app runs with the system clock;
tests pass a ``FakeClock`` shared with the sandbox (``main(argv, runtime=Runtime(clock=...))``).
Everything else (data folder, settings pointing at the sandbox, certificates) comes from the
data folder itself, as in production.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from app.cli.args import UsageError
from app.config.paths import resolve_data_dir
from app.core.clock import Clock
from app.core.errors import CapturaError
from app.core.products import Product

if TYPE_CHECKING:  # imported on use: `--help` and the window's start load none of them
    from app.desk.desk import Desk
    from app.desk.nodes import LeaseTiming


@dataclass(frozen=True, slots=True)
class Runtime:
    """What a test may replace; ``None`` means the real thing (the system clock)."""

    clock: Clock | None = None
    lease: LeaseTiming | None = None  # the capture node's lease times (two-process tests shorten them)


def runtime_of(args: argparse.Namespace) -> Runtime:
    runtime = getattr(args, "runtime", None)
    return runtime if isinstance(runtime, Runtime) else Runtime()


def data_dir_of(args: argparse.Namespace) -> Path:
    return resolve_data_dir(args.data_dir, demo=args.demo)


@contextmanager
def open_desk(args: argparse.Namespace, *, capture: bool = False, owner: str = "linha de comando") -> Iterator[Desk]:
    """The data folder through the desk: by default without a capture service of its own (a
    command reads, or sends one request and ends); ``capture`` runs the service (``capture
    --daemon``), refused when another instance captures here."""
    from app.desk import office_database
    from app.desk.desk import Desk

    runtime = runtime_of(args)
    data_dir = data_dir_of(args)
    office_database.choose(data_dir, getattr(args, "database", None))  # --database / CAPTURA_DATABASE, remembered
    desk = Desk(data_dir, clock=runtime.clock, capture=capture, owner=owner, lease=runtime.lease)
    opened = desk.open()
    try:
        if capture and opened.read_only:
            raise CapturaError(opened.message or "Outra instância já está capturando nesta pasta de dados.")
        yield desk
    finally:
        desk.close()


def parse_day(text: str | None, option: str) -> date | None:
    """An AAAA-MM-DD option (``--from``), or a refusal that names it."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"Data inválida em {option}: {text!r}. Use AAAA-MM-DD.") from None


def parse_product(text: str | None) -> Product | None:
    if text is None:
        return None
    try:
        return Product(text.strip().lower())
    except ValueError:
        raise CapturaError(f"Produto desconhecido: {text!r}. Use nfe, cte ou nfse.") from None
