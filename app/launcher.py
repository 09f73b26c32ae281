"""Entry point: a subcommand runs headless (app.cli); no subcommand opens the window (app.ui).

``--demo --headless`` runs the demonstration in the terminal (app.demo) without loading Qt.
The only module that knows both faces of the app, so that neither imports the other.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

from app.cli.context import Runtime
from app.cli.io import utf8_streams
from app.cli.main import EXIT_REFUSED, EXIT_USAGE, build_parser, run_command
from app.config.paths import ensure_data_dir, resolve_data_dir
from app.config.runtime import qt_font_dir, tune_garbage_collector
from app.core.errors import CapturaError

# Qt platforms that draw without a display server (tests, screenshots, remote framebuffers).
_NO_DISPLAY_PLATFORMS = ("offscreen", "minimal", "minimalegl", "vnc", "linuxfb", "eglfs", "vkkhrdisplay")
_DEMO_HINT = (
    " Para ver a demonstração no terminal, sem janela: python main.py --demo --headless"
    " (ou python3 packaging/dev.py demo --headless)."
)
_WINDOW_HINT = " Sem janela, use os comandos de linha de comando (python main.py --help)."


def display_problem(environ: Mapping[str, str], platform: str) -> str | None:
    """Why the window cannot open here, before Qt is loaded (Qt would abort in English with
    exit 250); None when it can. Only Linux and the BSDs need a display server's address."""
    if platform.startswith(("win", "darwin", "cygwin")):
        return None
    qpa = environ.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()
    if qpa in _NO_DISPLAY_PLATFORMS:
        return None
    if qpa.startswith("wayland"):
        present = bool(environ.get("WAYLAND_DISPLAY"))
    elif qpa == "xcb":
        present = bool(environ.get("DISPLAY"))
    else:
        present = bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))
    if present:
        return None
    return "Erro: não há tela disponível para abrir a janela (nenhum DISPLAY nem WAYLAND_DISPLAY nesta sessão)."


def _parser(*, commands: bool = True) -> argparse.ArgumentParser:
    parser = build_parser(commands=commands)
    # The window's own option, what the Run key of "Iniciar com o Windows" starts (app.desk.autostart).
    parser.add_argument("--tray", action="store_true", help="abre só o ícone na bandeja, com a janela escondida")
    return parser


def main(argv: Sequence[str] | None = None, *, runtime: Runtime | None = None) -> int:
    tune_garbage_collector()
    utf8_streams()  # redirected output (the headless demo into a pipe, --json into a file) in UTF-8 on Windows
    words = list(sys.argv[1:] if argv is None else argv)
    # The window's options alone first: opening the window imports no command module.
    helping = any(word in ("-h", "--help") for word in words)
    args, rest = _parser(commands=False).parse_known_args([] if helping else words)
    if rest or helping:
        args = _parser().parse_args(words)
    if args.command is not None:
        return run_command(args, runtime=runtime)
    if args.headless and not args.demo:
        print("Erro: --headless só existe com --demo (sem janela, use os subcomandos).", file=sys.stderr)
        return EXIT_USAGE
    problem = None if args.headless else display_problem(os.environ, sys.platform)
    if problem is not None:
        print(problem + (_DEMO_HINT if args.demo else _WINDOW_HINT), file=sys.stderr)
        return EXIT_REFUSED
    try:
        data_dir = ensure_data_dir(resolve_data_dir(args.data_dir, demo=args.demo))
        if not args.demo:  # --database / CAPTURA_DATABASE: remembered, then opened by the desk
            from app.desk import office_database

            office_database.choose(data_dir, args.database)
    except CapturaError as error:  # a network folder (SQLite there corrupts), an unwritable one
        print(f"Erro: {error.message}", file=sys.stderr)
        if not args.headless:  # started from a shortcut, nobody reads stderr
            from app.ui.app import refuse_to_start

            refuse_to_start(error.message)
        return EXIT_REFUSED
    if args.demo and args.headless:
        from app.demo.environment import DemoOptions
        from app.demo.headless import run_headless

        return run_headless(data_dir, DemoOptions(speed=args.speed), duration=args.duration)
    qt_font_dir(os.environ)  # Windows offscreen (the demo under Wine): Qt finds the app's fonts
    # Imported here so that headless commands never load Qt.
    from app.ui.app import run_gui

    return run_gui(data_dir, demo=args.demo, demo_speed=args.speed, duration=args.duration, tray_only=args.tray)


if __name__ == "__main__":
    sys.exit(main())
