"""Official XSD validation for the sandbox (schemas shipped by nfelib), compiled once and cached.

Kept local to the sandbox so it works whatever shape ``app.fiscal.schemas`` ends up with; lxml
schema objects are thread-safe for validation once compiled.
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path

from lxml import etree

_SCHEMAS: dict[str, tuple[str, str]] = {
    # name -> (nfelib subpackage, file)
    "distDFeInt_v1.01": ("nfe_dist_dfe/schemas/v1_0", "distDFeInt_v1.01.xsd"),
    "retDistDFeInt_v1.01": ("nfe_dist_dfe/schemas/v1_0", "retDistDFeInt_v1.01.xsd"),
    "resNFe_v1.01": ("nfe_dist_dfe/schemas/v1_0", "resNFe_v1.01.xsd"),
    "resEvento_v1.01": ("nfe_dist_dfe/schemas/v1_0", "resEvento_v1.01.xsd"),
    "procNFe_v4.00": ("nfe/schemas/v4_0", "procNFe_v4.00.xsd"),
    "procEventoNFe_v1.00": ("nfe_evento_generico/schemas/v1_0", "procEventoNFe_v1.00.xsd"),
    "envEvento_v1.00": ("nfe_evento_generico/schemas/v1_0", "envEvento_v1.00.xsd"),
    "retEnvEvento_v1.00": ("nfe_evento_generico/schemas/v1_0", "retEnvEvento_v1.00.xsd"),
    "envConfRecebto_v1.00": ("nfe_evento_mde/schemas/v1_0", "envConfRecebto_v1.00.xsd"),
    "retEnvConfRecebto_v1.00": ("nfe_evento_mde/schemas/v1_0", "retEnvConfRecebto_v1.00.xsd"),
    "distDFeInt_v1.00": ("cte_dist_dfe/schemas/v1_0", "distDFeInt_v1.00.xsd"),
    "retDistDFeInt_v1.00": ("cte_dist_dfe/schemas/v1_0", "retDistDFeInt_v1.00.xsd"),
    "procCTe_v4.00": ("cte/schemas/v4_0", "procCTe_v4.00.xsd"),
    "procEventoCTe_v4.00": ("cte/schemas/v4_0", "procEventoCTe_v4.00.xsd"),
    "NFSe_v1.01": ("nfse/schemas/v1_0", "NFSe_v1.01.xsd"),
    "DPS_v1.01": ("nfse/schemas/v1_0", "DPS_v1.01.xsd"),
    "evento_v1.01": ("nfse/schemas/v1_0", "evento_v1.01.xsd"),
    "pedRegEvento_v1.01": ("nfse/schemas/v1_0", "pedRegEvento_v1.01.xsd"),
}

_cache: dict[str, etree.XMLSchema] = {}
_lock = threading.Lock()


class SchemaError(Exception):
    """The document does not validate; ``str()`` is the first lxml error line."""


def schema_path(name: str) -> Path:
    package, filename = _SCHEMAS[name.removesuffix(".xsd")]
    root = resources.files("nfelib")
    return Path(str(root.joinpath(package, filename)))


def schema(name: str) -> etree.XMLSchema:
    key = name.removesuffix(".xsd")
    with _lock:
        compiled = _cache.get(key)
        if compiled is None:
            compiled = etree.XMLSchema(etree.parse(str(schema_path(key))))
            _cache[key] = compiled
        return compiled


def errors(element: etree._Element | bytes, name: str) -> list[str]:
    """The validation errors (empty when valid)."""
    root = etree.fromstring(element) if isinstance(element, bytes) else element
    compiled = schema(name)
    # assertValid/validate keep error_log state on the schema object: copy it under the lock.
    with _lock:
        ok = compiled.validate(root)
        log = [] if ok else [f"{e.line}: {e.message}" for e in compiled.error_log]
    return log


def validate(element: etree._Element | bytes, name: str) -> None:
    problems = errors(element, name)
    if problems:
        raise SchemaError(problems[0])


# The @schema attribute value announced in a docZip, by document kind.
DOCZIP_SCHEMA = {
    "resNFe": "resNFe_v1.01.xsd",
    "procNFe": "procNFe_v4.00.xsd",
    "resEvento": "resEvento_v1.01.xsd",
    "procEventoNFe": "procEventoNFe_v1.00.xsd",
    "procCTe": "procCTe_v4.00.xsd",
    "procEventoCTe": "procEventoCTe_v4.00.xsd",
}
