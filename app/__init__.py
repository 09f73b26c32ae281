"""Captura DF-e: captures NF-e, CT-e and NFS-e issued against an accounting office's clients."""

import sys

__version__ = "0.1.0"
APP_NAME = "Captura DF-e"

# httpx imports its command-line client (httpx._main) whenever click, rich and pygments are
# installed (import-linter brings them into the development environment, and a build made there
# bundles them): ~7 MB of every process's memory for a client the app never runs (issue 20).
# Marked absent, ``import httpx`` takes its own "CLI not installed" branch.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
