"""Writing a file the office will open: kept here for the desk's callers; the function lives in
app.config.files so that layers below the desk (app.export) write the same way."""

from app.config.files import write_atomic as write_atomic

__all__ = ["write_atomic"]
