"""Access keys: the 44-character NF-e/NFC-e/CT-e/MDF-e key and the 50-digit NFS-e Nacional key.

Layouts (protocol.md §5 and §4.8):
  44: cUF(2) AAMM(4) CNPJ|CPF(14, CPF left-padded) mod(2) serie(3) nNF(9) tpEmis(1) cNF(8) cDV(1);
      since NT 2025.001 the 12-character CNPJ body may be alphanumeric (``[0-9]{6}[0-9A-Z]{12}[0-9]{26}``).
  50: cMun(7) ambGer(1) tpInsc(1) inscFed(14) nNFSe(13) AAMM(4) cNum(9) DV(1).
Both check digits are the mod-11 of app.core.ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Self

from app.core.errors import InvalidIdentifier
from app.core.ids import Cnpj, Cpf, mod11_digit

_KEY44 = re.compile(r"[0-9]{6}[0-9A-Z]{12}[0-9]{26}")
_KEY50 = re.compile(r"[0-9]{50}")
_KEY50_ALNUM = re.compile(r"[0-9]{9}[0-9A-Z]{14}[0-9]{27}")

# IBGE codes of the 27 federative units (the cUF of a key).
UF_BY_CODE: dict[str, str] = {
    "11": "RO",
    "12": "AC",
    "13": "AM",
    "14": "RR",
    "15": "PA",
    "16": "AP",
    "17": "TO",
    "21": "MA",
    "22": "PI",
    "23": "CE",
    "24": "RN",
    "25": "PB",
    "26": "PE",
    "27": "AL",
    "28": "SE",
    "29": "BA",
    "31": "MG",
    "32": "ES",
    "33": "RJ",
    "35": "SP",
    "41": "PR",
    "42": "SC",
    "43": "RS",
    "50": "MS",
    "51": "MT",
    "52": "GO",
    "53": "DF",
}
CODE_BY_UF: dict[str, str] = {uf: code for code, uf in UF_BY_CODE.items()}


class DocumentModel(Enum):
    """The ``mod`` field of a 44-character key."""

    NFE = "55"
    NFCE = "65"
    CTE = "57"
    CTE_OS = "67"
    MDFE = "58"
    GTVE = "64"
    CTE_SIMP = "62"


def key44_check_digit(body43: str) -> int:
    return mod11_digit(body43.upper())


@dataclass(frozen=True, slots=True, order=True)
class AccessKey:
    """A valid 44-character access key (NF-e, NFC-e, CT-e, ...), in ``value``."""

    value: str

    def __post_init__(self) -> None:
        if not _KEY44.fullmatch(self.value):
            raise InvalidIdentifier(f"Chave de acesso inválida (esperados 44 caracteres): {self.value!r}.")
        if self.value[:2] not in UF_BY_CODE:
            raise InvalidIdentifier(f"Chave de acesso com UF inexistente ({self.value[:2]}): {self.value}.")
        month = int(self.value[4:6])
        if not 1 <= month <= 12:
            raise InvalidIdentifier(f"Chave de acesso com mês inválido ({self.value[4:6]}): {self.value}.")
        if key44_check_digit(self.value[:43]) != int(self.value[43]):
            raise InvalidIdentifier(f"Chave de acesso com dígito verificador inválido: {self.value}.")

    @classmethod
    def parse(cls, text: str) -> Self:
        """Accepts spaces (as printed on a DANFE), the ``NFe``/``CTe`` Id prefix and lower case."""
        plain = re.sub(r"\s", "", text).upper()
        for prefix in ("NFE", "CTE", "MDFE"):
            if plain.startswith(prefix) and len(plain) == 44 + len(prefix):
                plain = plain[len(prefix) :]
        return cls(plain)

    @classmethod
    def build(
        cls,
        *,
        uf: str,
        year_month: str,
        issuer: str,
        model: DocumentModel | str,
        serie: int,
        number: int,
        tp_emis: int,
        code: int,
    ) -> Self:
        """Compose a key from its fields and compute its check digit (``year_month`` is ``AAMM``)."""
        cuf = uf if uf.isdigit() else CODE_BY_UF[uf.upper()]
        mod = model.value if isinstance(model, DocumentModel) else model
        body = f"{cuf}{year_month}{issuer.upper():0>14}{mod}{serie:03d}{number:09d}{tp_emis}{code:08d}"
        return cls(body + str(key44_check_digit(body)))

    @property
    def cuf(self) -> str:
        return self.value[:2]

    @property
    def uf(self) -> str:
        return UF_BY_CODE[self.cuf]

    @property
    def year_month(self) -> str:
        """``AAMM`` of the issue."""
        return self.value[2:6]

    @property
    def issuer_id(self) -> str:
        """The 14 characters of the issuer field (a CPF is left-padded with zeros)."""
        return self.value[6:20]

    @property
    def model(self) -> str:
        return self.value[20:22]

    @property
    def serie(self) -> int:
        return int(self.value[22:25])

    @property
    def number(self) -> int:
        return int(self.value[25:34])

    @property
    def tp_emis(self) -> int:
        return int(self.value[34])

    @property
    def code(self) -> str:
        """The random ``cNF``/``cCT``."""
        return self.value[35:43]

    @property
    def check_digit(self) -> int:
        return int(self.value[43])

    def issuer(self) -> Cnpj | Cpf:
        """The issuer as CNPJ, or as CPF when the 14 characters are a zero-padded valid CPF.

        NF-e issued by a person use series 910-969 (MOC H11); the field alone is ambiguous, so a
        valid CNPJ wins and a CPF is tried only when it is not one.
        """
        raw = self.issuer_id
        try:
            return Cnpj(raw)
        except InvalidIdentifier:
            if raw.startswith("000"):
                return Cpf(raw[3:])
            raise

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True, order=True)
class NfseKey:
    """A valid 50-character NFS-e Nacional access key (``chaveAcesso``)."""

    value: str

    def __post_init__(self) -> None:
        if not (_KEY50.fullmatch(self.value) or _KEY50_ALNUM.fullmatch(self.value)):
            raise InvalidIdentifier(f"Chave de acesso de NFS-e inválida (esperados 50 caracteres): {self.value!r}.")
        if mod11_digit(self.value[:49]) != int(self.value[49]):
            raise InvalidIdentifier(f"Chave de acesso de NFS-e com dígito verificador inválido: {self.value}.")

    @classmethod
    def parse(cls, text: str) -> Self:
        plain = re.sub(r"\s", "", text).upper()
        if plain.startswith("NFS") and len(plain) == 53:
            plain = plain[3:]
        return cls(plain)

    @classmethod
    def build(cls, *, c_mun: str, amb_ger: int, insc_fed: str, number: int, year_month: str, code: int) -> Self:
        """Compose a key; ``insc_fed`` is a CNPJ (14) or a CPF (11, padded to 14)."""
        tp_insc = 1 if len(insc_fed) == 11 else 2
        body = f"{c_mun}{amb_ger}{tp_insc}{insc_fed.upper():0>14}{number:013d}{year_month}{code:09d}"
        return cls(body + str(mod11_digit(body)))

    @property
    def c_mun(self) -> str:
        return self.value[:7]

    @property
    def amb_ger(self) -> int:
        return int(self.value[7])

    @property
    def tp_insc(self) -> int:
        """1 = CPF, 2 = CNPJ."""
        return int(self.value[8])

    @property
    def insc_fed(self) -> str:
        return self.value[9:23]

    @property
    def number(self) -> int:
        return int(self.value[23:36])

    @property
    def year_month(self) -> str:
        return self.value[36:40]

    def issuer(self) -> Cnpj | Cpf:
        if self.tp_insc == 1:
            return Cpf(self.insc_fed[3:])
        return Cnpj(self.insc_fed)

    def __str__(self) -> str:
        return self.value


KEY_LENGTHS = {44: "NF-e ou CT-e", 50: "NFS-e"}
_KEY_PREFIXES = ("NFE", "CTE", "MDFE", "NFS")


def key_problem(text: str) -> str | None:
    """What is wrong with a typed or scanned access key, in Portuguese; None when it is valid.

    "Chave com 43 dígitos: uma chave de NF-e ou CT-e tem 44", "Dígito verificador da chave não
    confere: esperado 7, informado 3". Spaces, dots and dashes (a key copied from a DANFE) and
    the ``NFe``/``CTe``/``NFS`` Id prefix are allowed.
    """
    plain = re.sub(r"[\s.\-/]", "", text).upper()
    for prefix in _KEY_PREFIXES:
        if plain.startswith(prefix) and len(plain) - len(prefix) in KEY_LENGTHS:
            plain = plain[len(prefix) :]
    if not plain.isalnum() or not plain.isascii():
        return "A chave de acesso tem só dígitos (e, nas chaves novas, letras maiúsculas)."
    size = len(plain)
    if size not in KEY_LENGTHS:
        unit = "dígitos" if plain.isdigit() else "caracteres"
        if size < 44:
            expected = "uma chave de NF-e ou CT-e tem 44"
        elif size > 50:
            expected = "uma chave de NFS-e tem 50"
        else:
            expected = "uma chave de NF-e ou CT-e tem 44, uma de NFS-e tem 50"
        return f"Chave com {size} {unit}: {expected}."
    if plain[-1].isdigit():
        expected_digit = mod11_digit(plain[:-1])
        if expected_digit != int(plain[-1]):
            return f"Dígito verificador da chave não confere: esperado {expected_digit}, informado {plain[-1]}."
    try:
        if size == 44:
            AccessKey(plain)
        else:
            NfseKey(plain)
    except InvalidIdentifier as error:
        return str(error)
    return None
