"""The consumption-tax reform's groups in the sandbox's documents (issue 23).

NF-e (NT 2025.002-RTC): per item ``imposto/IS`` and ``imposto/IBSCBS`` (CST, cClassTrib,
``gIBSCBS`` and, for farm produce, a presumed credit ``gCredPresOper``); in ``total``
``ISTot``, ``IBSCBSTot`` and ``vNFTot``. CT-e (NT 2025.001-RTC): ``imp/IBSCBS`` and
``imp/vTotDFe``. The NFS-e's group is written by ``nfse.py`` (its ``with_ibscbs``, at these ``rates``).

Which documents carry the groups is drawn from the document's own seed (``reform_rates``), so a
sandbox with the same seed issues the same reform documents; the rates are the 2026 test year's
(IBS 0.1% to the state, CBS 0.9%) or the 2027-2028 ones (IBS 0.05% + 0.05%, CBS 8.8%). Amounts
are exact integer centavos, so the totals are the items' sums to the centavo.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from app.sandbox.docgen.common import money

_DRAW = 0x5EF0_23  # mixes the document's seed so the draw is independent of its other values


@dataclass(frozen=True, slots=True)
class Rates:
    """Rates in hundredths of a percent (10 = 0.10%), as the layouts print them with two places."""

    ibs_uf: int
    ibs_mun: int
    cbs: int


RATES = (Rates(10, 0, 90), Rates(5, 5, 880))
SELECTIVE_NCM = ("2710",)  # items that pay the selective tax IS in the sandbox (oils)
SELECTIVE_RATE = 100  # 1.00%
PRESUMED_NCM = ("0901",)  # farm produce bought with a presumed credit (coffee)
PRESUMED_RATE = 100  # 1.00% of the base, for IBS and CBS each
PRESUMED_CODE = "01"


def reform_rates(seed: int, share: float, forced: bool | None = None) -> Rates | None:
    """The rates of a document drawn from ``seed``, or None when it carries no groups: ``forced``
    True/False decides; None draws with probability ``share``."""
    draw = random.Random(seed ^ _DRAW)
    wanted = draw.random() < share if forced is None else forced
    return draw.choice(RATES) if wanted else None


def percent(hundredths: int) -> str:
    return f"{hundredths // 100}.{hundredths % 100:02d}"


def part(cents: int, hundredths: int) -> int:
    """``cents`` × rate, rounded half up to the centavo (rate in hundredths of a percent)."""
    return (cents * hundredths + 5000) // 10000


@dataclass(slots=True)
class NfeSums:
    """The NF-e's running totals in centavos (``sums``: base, ibs_uf, ibs_mun, cbs, selective,
    presumed), as its items are written."""

    rates: Rates
    sums: Counter[str] = field(default_factory=Counter)

    def item(self, cents: int, ncm: str) -> str:
        """``<IS>`` (when the NCM pays it) and ``<IBSCBS>`` of one item, added to the sums."""
        rates, sums = self.rates, self.sums
        sums.update(base=cents, ibs_uf=part(cents, rates.ibs_uf), ibs_mun=part(cents, rates.ibs_mun))
        sums["cbs"] += part(cents, rates.cbs)
        selective = ""
        if ncm.startswith(SELECTIVE_NCM):
            value = part(cents, SELECTIVE_RATE)
            sums["selective"] += value
            selective = (
                f"<IS><CSTIS>000</CSTIS><cClassTribIS>000001</cClassTribIS><vBCIS>{money(cents)}</vBCIS>"
                f"<pIS>{percent(SELECTIVE_RATE)}</pIS><vIS>{money(value)}</vIS></IS>"
            )
        presumed = ""
        if ncm.startswith(PRESUMED_NCM):
            credit = part(cents, PRESUMED_RATE)
            sums["presumed"] += credit  # the same rate for IBS and for CBS
            one = f"<pCredPres>{percent(PRESUMED_RATE)}</pCredPres><vCredPres>{money(credit)}</vCredPres>"
            presumed = (
                f"<gCredPresOper><vBCCredPres>{money(cents)}</vBCCredPres><cCredPres>{PRESUMED_CODE}</cCredPres>"
                f"<gIBSCredPres>{one}</gIBSCredPres><gCBSCredPres>{one}</gCBSCredPres></gCredPresOper>"
            )
        group = f"<CST>000</CST><cClassTrib>000001</cClassTrib>{_gibscbs(cents, rates)}{presumed}"
        return f"{selective}<IBSCBS>{group}</IBSCBS>"

    def totals(self, v_nf_cents: int) -> str:
        """``ISTot`` (when any item paid IS), ``IBSCBSTot`` and ``vNFTot`` (vNF + IBS + CBS + IS)."""
        s = self.sums
        ibs = s["ibs_uf"] + s["ibs_mun"]
        selective = f"<ISTot><vIS>{money(s['selective'])}</vIS></ISTot>" if s["selective"] else ""
        no_deferral = "<vDif>0.00</vDif><vDevTrib>0.00</vDevTrib>"
        presumed = f"<vCredPres>{money(s['presumed'])}</vCredPres><vCredPresCondSus>0.00</vCredPresCondSus>"
        return (
            f"{selective}<IBSCBSTot><vBCIBSCBS>{money(s['base'])}</vBCIBSCBS><gIBS>"
            f"<gIBSUF>{no_deferral}<vIBSUF>{money(s['ibs_uf'])}</vIBSUF></gIBSUF>"
            f"<gIBSMun>{no_deferral}<vIBSMun>{money(s['ibs_mun'])}</vIBSMun></gIBSMun>"
            f"<vIBS>{money(ibs)}</vIBS>{presumed}</gIBS>"
            f"<gCBS>{no_deferral}<vCBS>{money(s['cbs'])}</vCBS>{presumed}</gCBS>"
            f"</IBSCBSTot><vNFTot>{money(v_nf_cents + ibs + s['cbs'] + s['selective'])}</vNFTot>"
        )


def _gibscbs(cents: int, rates: Rates) -> str:
    """``gIBSCBS`` (the layouts' TCIBS): base, IBS of the state and of the municipality, CBS."""
    ibs_uf, ibs_mun, cbs = part(cents, rates.ibs_uf), part(cents, rates.ibs_mun), part(cents, rates.cbs)
    return (
        f"<gIBSCBS><vBC>{money(cents)}</vBC>"
        f"<gIBSUF><pIBSUF>{percent(rates.ibs_uf)}</pIBSUF><vIBSUF>{money(ibs_uf)}</vIBSUF></gIBSUF>"
        f"<gIBSMun><pIBSMun>{percent(rates.ibs_mun)}</pIBSMun><vIBSMun>{money(ibs_mun)}</vIBSMun></gIBSMun>"
        f"<vIBS>{money(ibs_uf + ibs_mun)}</vIBS>"
        f"<gCBS><pCBS>{percent(rates.cbs)}</pCBS><vCBS>{money(cbs)}</vCBS></gCBS></gIBSCBS>"
    )


CREDIT_NOTE, DEBIT_NOTE = "5", "6"  # finNFe of a nota de crédito and of a nota de débito
# tpNFCredito 04 redução de valores; tpNFDebito 04 multa e juros
_NOTE_TYPES = {CREDIT_NOTE: ("tpNFCredito", "04"), DEBIT_NOTE: ("tpNFDebito", "04")}


def note_ide(note: tuple[str, str] | None) -> tuple[str, str, str]:
    """(finNFe with its tpNFCredito/tpNFDebito, the NFref naming the adjusted NF-e, natOp) of a
    nota de crédito or de débito (``note``: its finNFe and the key it adjusts), or of a normal NF-e."""
    if note is None:
        return "<finNFe>1</finNFe>", "", "VENDA DE MERCADORIA"
    purpose, key = note
    tag, code = _NOTE_TYPES[purpose]
    nat_op = "NOTA DE CREDITO" if purpose == CREDIT_NOTE else "NOTA DE DEBITO"
    return f"<finNFe>{purpose}</finNFe><{tag}>{code}</{tag}>", f"<NFref><refNFe>{key}</refNFe></NFref>", nat_op


def cte_group(total_cents: int, rates: Rates) -> str:
    """The CT-e's ``IBSCBS`` and ``vTotDFe`` (the service plus IBS and CBS), the end of ``imp``."""
    ibs = part(total_cents, rates.ibs_uf) + part(total_cents, rates.ibs_mun)
    cbs = part(total_cents, rates.cbs)
    return (
        f"<IBSCBS><CST>000</CST><cClassTrib>000001</cClassTrib>{_gibscbs(total_cents, rates)}</IBSCBS>"
        f"<vTotDFe>{money(total_cents + ibs + cbs)}</vTotDFe>"
    )
