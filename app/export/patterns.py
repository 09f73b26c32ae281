"""File patterns: which path a document or event gets under an export folder.

A pattern is a relative path with tokens in braces, ``{cnpj}/{ano}-{mes}/{tipo}/{chave}.xml``.
Token values are made safe before they are put in (a company name with a slash never makes a
folder), and every segment of the result is safe on Windows: no reserved name (CON, NUL, COM1...),
no forbidden character, no trailing dot or space, bounded length.

Names when the file name is just ``{chave}``: a complete NF-e is ``{chave}-procNFe.xml`` and an
event ``{chave}-{tpEvento}-{seq}.xml``. Whatever the pattern, an event's name carries its type and
sequence, so it never overwrites its document or another event of the same key.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from app.core.errors import CapturaError

DEFAULT_PATTERN = "{cnpj}/{ano}-{mes}/{tipo}/{chave}.xml"
IMPORT_PATTERN = "{chave}.xml"
CANCELLED_FOLDER = "Canceladas"

TOKENS: Mapping[str, str] = {
    "cnpj": "CNPJ da empresa",
    "empresa": "nome da empresa",
    "produto": "NFe, CTe ou NFSe",
    "ano": "ano de emissão (4 dígitos)",
    "mes": "mês de emissão (2 dígitos)",
    "dia": "dia de emissão (2 dígitos)",
    "tipo": "NFe, CTe, NFSe, Eventos ou Resumos",
    "chave": "chave de acesso",
    "nsu": "NSU",
    "direcao": "Recebidas ou Emitidas",
    "emitente_cnpj": "CNPJ/CPF do emitente",
    "numero": "número do documento",
    "serie": "série",
    "tpEvento": "tipo do evento (eventos)",
    "seq": "sequência do evento (eventos)",
}

_TOKEN = re.compile(r"\{([^{}]*)\}")
_FORBIDDEN = re.compile(r'[<>:"/\\|?*\x00-\x1f]')
_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"COM{i}" for i in range(1, 10)] + [f"LPT{i}" for i in range(1, 10)]
)
MAX_SEGMENT = 120  # NTFS allows 255; the whole path must also fit Windows' 260 without long paths
MAX_RELATIVE = 180  # leaves room for a destination folder of ~70 characters under MAX_PATH


class PatternError(CapturaError):
    """The pattern cannot name files (unknown token, absolute path, '..')."""


@dataclass(frozen=True, slots=True)
class NameFacts:
    """What a pattern can say about one document or event."""

    cnpj: str
    empresa: str
    produto: str  # NFe, CTe, NFSe
    tipo: str  # NFe, CTe, NFSe, Eventos, Resumos
    chave: str
    when: datetime | None  # issue date (document) or event date, in its own offset
    nsu: int | None = None
    direcao: str = "Recebidas"
    emitente_cnpj: str | None = None
    numero: int | None = None
    serie: int | None = None
    layout: str = ""  # nfeProc, resNFe, cteProc...: the stored root
    tp_evento: str | None = None
    seq: int | None = None


@functools.lru_cache(maxsize=64)  # rendered several times per file: checked once
def validate_pattern(pattern: str) -> str:
    """The pattern as it will be used (``.xml`` added if missing); raises ``PatternError``."""
    text = pattern.strip().replace("\\", "/")
    if not text:
        raise PatternError("O padrão de nomes está vazio.")
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        raise PatternError("O padrão de nomes deve ser relativo à pasta de destino (sem C:\\ nem / no início).")
    if any(part == ".." for part in text.split("/")):
        raise PatternError("O padrão de nomes não pode subir de pasta ('..').")
    unknown = sorted({name for name in _TOKEN.findall(text) if name not in TOKENS})
    if unknown:
        known = ", ".join("{" + t + "}" for t in TOKENS)
        raise PatternError(f"Campo desconhecido no padrão: {', '.join('{' + u + '}' for u in unknown)}. Use: {known}.")
    if "{chave}" not in text and "{nsu}" not in text:
        raise PatternError(
            "O padrão precisa de {chave} (ou {nsu}): sem ela, documentos diferentes teriam o mesmo nome."
        )
    if not text.lower().endswith(".xml"):
        text += ".xml"
    return text


def safe_segment(text: str) -> str:
    """One folder or file name Windows accepts, the same on every system."""
    clean = unicodedata.normalize("NFC", text)
    clean = _FORBIDDEN.sub("_", clean).strip()
    clean = clean.rstrip(". ") or "_"
    stem, dot, ext = clean.partition(".")
    if stem.upper().rstrip(" ") in _RESERVED:
        clean = "_" + clean
    if len(clean) > MAX_SEGMENT:
        stem, dot, ext = clean.rpartition(".")
        if dot and len(ext) <= 8:
            clean = stem[: MAX_SEGMENT - len(ext) - 1].rstrip(". ") + "." + ext
        else:
            clean = clean[:MAX_SEGMENT].rstrip(". ")
    return clean


def _values(facts: NameFacts) -> dict[str, str]:
    when = facts.when
    return {
        "cnpj": facts.cnpj,
        "empresa": facts.empresa,
        "produto": facts.produto,
        "ano": f"{when:%Y}" if when else "sem-data",
        "mes": f"{when:%m}" if when else "00",
        "dia": f"{when:%d}" if when else "00",
        "tipo": facts.tipo,
        "chave": facts.chave,
        "nsu": str(facts.nsu) if facts.nsu is not None else "sem-nsu",
        "direcao": facts.direcao,
        "emitente_cnpj": facts.emitente_cnpj or "sem-emitente",
        "numero": str(facts.numero) if facts.numero is not None else "sem-numero",
        "serie": str(facts.serie) if facts.serie is not None else "0",
        "tpEvento": facts.tp_evento or "",
        "seq": str(facts.seq) if facts.seq is not None else "",
    }


def render(pattern: str, facts: NameFacts) -> str:
    """The relative path (``/``-separated, every segment safe) of ``facts`` under ``pattern``."""
    text = validate_pattern(pattern)
    folders, _, name = text.rpartition("/")
    stem = name[: -len(".xml")]
    is_event = facts.tp_evento is not None
    if stem == "{chave}":
        if is_event:
            stem = "{chave}-{tpEvento}-{seq}"
        elif facts.layout == "nfeProc":
            stem = "{chave}-procNFe"
    elif is_event and "{tpEvento}" not in stem:
        stem += "-{tpEvento}-{seq}"
    values = {k: _safe_value(v) for k, v in _values(facts).items()}

    def fill(part: str) -> str:
        return _TOKEN.sub(lambda m: values[m.group(1)], part)

    segments = [safe_segment(fill(part)) for part in folders.split("/") if part] if folders else []
    segments.append(safe_segment(fill(stem) + ".xml"))
    path = "/".join(segments)
    if len(path) > MAX_RELATIVE:
        # Long company names are the usual cause: shorten the folders, never the file name.
        budget = max(8, (MAX_RELATIVE - len(segments[-1])) // max(1, len(segments) - 1) - 1)
        segments = [s[:budget].rstrip(". ") or "_" for s in segments[:-1]] + segments[-1:]
        path = "/".join(segments)
    return path


def _safe_value(value: str) -> str:
    return _FORBIDDEN.sub("_", value).strip()
