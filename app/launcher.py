"""Entry point: a subcommand runs headless (app.cli); no subcommand opens the window (app.ui).

``--demo --headless`` runs the demonstration in the terminal (app.demo) without loading Qt.
The only module that knows both faces of the app, so that neither imports the other.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from app.cli.context import Runtime
from app.cli.main import EXIT_USAGE, build_parser, run_command
from app.config.paths import ensure_data_dir, resolve_data_dir
from app.config.runtime import tune_garbage_collector


def main(argv: Sequence[str] | None = None, *, runtime: Runtime | None = None) -> int:
    tune_garbage_collector()
    words = list(sys.argv[1:] if argv is None else argv)
    # The window's options alone first: opening the window imports no command module.
    helping = any(word in ("-h", "--help") for word in words)
    args, rest = build_parser(commands=False).parse_known_args([] if helping else words)
    if rest or helping:
        args = build_parser().parse_args(words)
    if args.command is not None:
        return run_command(args, runtime=runtime)
    if args.headless and not args.demo:
        print("Erro: --headless só existe com --demo (sem janela, use os subcomandos).", file=sys.stderr)
        return EXIT_USAGE
    data_dir = ensure_data_dir(resolve_data_dir(args.data_dir, demo=args.demo))
    if args.demo and args.headless:
        from app.demo.environment import DemoOptions
        from app.demo.headless import run_headless

        return run_headless(data_dir, DemoOptions(speed=args.speed), duration=args.duration)
    # Imported here so that headless commands never load Qt.
    from app.ui.app import run_gui

    return run_gui(data_dir, demo=args.demo, demo_speed=args.speed, duration=args.duration)


if __name__ == "__main__":
    sys.exit(main())
