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
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is not None:
        return run_command(args, runtime=runtime)
    if args.headless and not args.demo:
        print("Erro: --headless só existe com --demo (sem janela, use os subcomandos).", file=sys.stderr)
        return EXIT_USAGE
    data_dir = ensure_data_dir(resolve_data_dir(args.data_dir, demo=args.demo))
    if args.demo:
        from app.demo.environment import DemoOptions

        options = DemoOptions(speed=args.speed)
        if args.headless:
            from app.demo.headless import run_headless

            return run_headless(data_dir, options, duration=args.duration)
    else:
        options = None
    # Imported here so that headless commands never load Qt.
    from app.ui.app import run_gui

    return run_gui(data_dir, demo=args.demo, demo_options=options, duration=args.duration)


if __name__ == "__main__":
    sys.exit(main())
