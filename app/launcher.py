"""Entry point: a subcommand runs headless (app.cli); no subcommand opens the window (app.ui).

The only module that knows both faces of the app, so that neither imports the other.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from app.cli.main import build_parser, run_command
from app.config.paths import ensure_data_dir, resolve_data_dir


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is not None:
        return run_command(args)
    data_dir = ensure_data_dir(resolve_data_dir(args.data_dir, demo=args.demo))
    # Imported here so that headless commands never load Qt.
    from app.ui.app import run_gui

    return run_gui(data_dir, demo=args.demo)


if __name__ == "__main__":
    sys.exit(main())
