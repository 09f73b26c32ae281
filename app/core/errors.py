"""Base of the domain's error tree: every error carries a sentence a user understands."""

from __future__ import annotations


class CapturaError(Exception):
    """Base for every error the app raises on purpose.

    ``message`` is Brazilian Portuguese for the user; ``str(error)`` is the same text, so a log
    line and a dialog say the same thing.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidIdentifier(CapturaError, ValueError):
    """A CNPJ, CPF, access key or NSU that does not follow its official layout."""
