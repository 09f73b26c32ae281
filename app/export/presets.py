"""Ready-made profiles: the archive tree and the flat import folder a bookkeeping system scans."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from app.core.event_types import CANCELLATION
from app.export.patterns import DEFAULT_PATTERN, IMPORT_PATTERN, NameFacts, render, validate_pattern
from app.store.records import ExportProfile

ARCHIVE = "arquivo"
IMPORT = "importacao"
PRESETS = (ARCHIVE, IMPORT)


def archive_profile(name: str, destination: str, pattern: str = DEFAULT_PATTERN) -> ExportProfile:
    """Everything (complete documents, resumos, events) in ``{cnpj}/{ano}-{mes}/{tipo}/``."""
    return ExportProfile(name=name, destination=destination, pattern=validate_pattern(pattern))


def import_profile(name: str, destination: str, pattern: str = IMPORT_PATTERN) -> ExportProfile:
    """Only authorised complete documents, one file per key, no resumos and no events: what an
    ERP's import folder expects (it would choke on a resumo or take a cancelled NF-e in)."""
    return ExportProfile(
        name=name,
        destination=destination,
        pattern=validate_pattern(pattern),
        kinds=("complete",),
        only_authorised=True,
    )


def preset(kind: str, name: str, destination: str, pattern: str | None = None) -> ExportProfile:
    if kind == IMPORT:
        return import_profile(name, destination, pattern or IMPORT_PATTERN)
    return archive_profile(name, destination, pattern or DEFAULT_PATTERN)


SAMPLE = NameFacts(
    cnpj="11222333000181",
    empresa="EMPRESA EXEMPLO LTDA",
    produto="NFe",
    tipo="NFe",
    chave="35261199888777000100550010000001231000001234",
    when=datetime(2026, 11, 2, 9, 30, tzinfo=timezone(timedelta(hours=-3))),
    nsu=1234,
    emitente_cnpj="99888777000100",
    numero=123,
    serie=1,
    layout="nfeProc",
)


def preview(pattern: str) -> str:
    """The path a sample complete NF-e would get (the dialog shows it before saving a profile)."""
    return render(pattern, SAMPLE)


def preview_event(pattern: str) -> str:
    """The path the sample NF-e's cancellation would get."""
    return render(pattern, replace(SAMPLE, tipo="Eventos", layout="procEventoNFe", tp_evento=CANCELLATION, seq=1))
