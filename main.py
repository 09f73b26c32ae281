"""Captura DF-e: `python main.py` opens the app; `python main.py --help` lists the headless commands."""

import sys

from app.launcher import main

if __name__ == "__main__":
    sys.exit(main())
