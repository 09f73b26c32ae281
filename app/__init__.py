"""Captura DF-e: captures NF-e, CT-e and NFS-e issued against an accounting office's clients."""

__version__ = "0.1.0"
APP_NAME = "Captura DF-e"
