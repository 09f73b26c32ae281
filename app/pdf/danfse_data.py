"""What a DANFSe v2.0 prints (NT SE/CGNFS-e 008), read from an NFS-e Nacional (``NFSe``, 1.00/1.01).

Pure functions from the lxml tree to frozen dataclasses of display-ready strings: the layout
(``app.pdf.danfse``) only places them. Following the NT, an empty field prints "-"; the domain
codes (tribISSQN, tpRetISSQN, opSimpNac...) print their official descriptions.
What the NFS-e reader (``app.documents.nfse``) reads (key, numbers, dates, codes, who each
party is, the values and the IBS/CBS group) comes from it, on the same parsed tree; the tree is
read here only for what the DANFSe alone prints (addresses, phones, descriptions, rates).

The NFS-e does not say it was cancelled or substituted: those are events (101101, 105104 and
305101 cancel it, 105102 cancels it by substitution), read from ``events`` by :func:`app.pdf.events.nfse_marks`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

from lxml import etree

from app.core.documents import PartyRole
from app.core.keys import UF_BY_CODE
from app.documents.model import DocumentError
from app.documents.nfse import NfseIbsCbs, NfseMeta, NfseParty, read_nfse_root
from app.documents.values import cents_text
from app.pdf import danfse_codes as codes
from app.pdf import formats
from app.pdf.errors import PdfError
from app.pdf.events import nfse_marks
from app.pdf.xmlnode import Node

NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"
_P = f"{{{NFSE_NS}}}"
DASH = "-"


@dataclass(frozen=True, slots=True)
class Person:
    """PRESTADOR, TOMADOR, INTERMEDIÁRIO or DESTINATÁRIO, every field ready to print."""

    doc: str
    municipal_id: str
    phone: str
    name: str
    town: str  # "Belo Horizonte / MG"
    ibge_cep: str  # "3106200 / 31160-370"
    address: str
    email: str


@dataclass(frozen=True, slots=True)
class Danfse:
    key: str
    environment: str  # tpAmb of the DPS: "1" produção, "2" produção restrita
    header_town: str
    generator: str
    environment_name: str
    number: str
    competence: str
    issued_at: str  # NFS-e: dhProc
    dps_number: str
    dps_serie: str
    dps_issued_at: str
    emitter_type: str
    status: str
    purpose: str
    provider: Person
    simples: str
    simples_regime: str
    taker: Person | None
    recipient: Person | None
    intermediary: Person | None
    service_code: str
    nbs: str
    service_place: str
    service_code_text: str
    description: str
    issqn: dict[str, str] | None  # None: the operation is not subject to ISSQN (no tribMun)
    federal: dict[str, str]
    show_pis_cofins: bool
    ibscbs: dict[str, str] | None
    totals: dict[str, str]
    additional: str  # the optional fields, "|"-separated ("" when none)
    approx_taxes: str  # Lei 12.741/2012 line, which always closes INFORMAÇÕES COMPLEMENTARES
    cancelled: bool = False
    substituted: bool = False

    @property
    def restricted(self) -> bool:
        return self.environment == "2"


def _or_dash(text: str) -> str:
    """The text with its white space collapsed, as the DANFSe prints every field; "-" when empty."""
    return " ".join(text.split()) or DASH


def _money(text: str) -> str:
    return f"R$ {formats.money(text)}" if text.strip() else DASH


def _pct(text: str) -> str:
    return f"{formats.decimal(text, 2)}%" if text.strip() else DASH


def _join(*parts: str) -> str:
    return " / ".join(p for p in parts if p) or DASH


def _sum(*texts: str) -> str:
    total = Decimal(0)
    for text in texts:
        try:
            total += Decimal(text.strip()) if text.strip() else 0
        except InvalidOperation:
            continue
    return str(total)


def _uf_of(c_mun: str) -> str:
    return UF_BY_CODE.get(c_mun[:2], "") if len(c_mun) == 7 else ""


def read_danfse(root: etree._Element, events: Iterable[bytes] = ()) -> Danfse:
    """The DANFSe of ``root``, with the marks of ``events``; :class:`PdfError` for bad input."""
    danfse = _read(root)
    cancelled, substituted = nfse_marks(danfse.key, events)
    if cancelled or substituted:
        danfse = replace(danfse, cancelled=cancelled and not substituted, substituted=substituted)
    return danfse


def _meta(root: etree._Element) -> NfseMeta:
    """The NFS-e reader's reading of ``root`` (the same the capture stores), or a :class:`PdfError`."""
    if root.tag != f"{_P}NFSe":
        local = etree.QName(root).localname if isinstance(root.tag, str) else "?"
        raise PdfError(f"Não foi possível gerar o DANFSe: o XML não é uma NFS-e Nacional (raiz <{local}>).")
    if root.find(f"{_P}infNFSe/{_P}DPS/{_P}infDPS") is None:
        raise PdfError("Não foi possível gerar o DANFSe: a NFS-e não tem os grupos infNFSe e DPS/infDPS.")
    try:
        meta = read_nfse_root(root)
    except DocumentError as error:
        raise PdfError(f"Não foi possível gerar o DANFSe: {error.message}") from error
    if not isinstance(meta, NfseMeta) or meta.access_key is None:
        raise PdfError("Não foi possível gerar o DANFSe: NFS-e sem chave de acesso (atributo Id de infNFSe).")
    return meta


def _read(root: etree._Element) -> Danfse:
    """The DANFSe's values: what the NFS-e reader (``app.documents.nfse``) reads, and from the
    tree only what the DANFSe alone prints (addresses, phones, code descriptions, rates)."""
    meta = _meta(root)
    node = Node(root, _P)
    inf = node.find("infNFSe")
    dps = inf.find("DPS/infDPS")
    serv = dps.find("serv")
    values = inf.find("valores")
    dps_values = dps.find("valores")
    dps_ibscbs = dps.find("IBSCBS")
    nfse_ibscbs = inf.find("IBSCBS")
    reg = dps.find("prest/regTrib")
    tax_code = meta.national_code or ""
    competence = formats.written(meta.competence)
    towns = _towns(inf, dps, nfse_ibscbs)
    environment = _number(meta.environment)
    issuer_type = meta.issuer_type or ""
    emitter_uf = (meta.emitter.uf if meta.emitter is not None else None) or ""
    return Danfse(
        key=meta.access_key or "",
        environment=environment,
        header_town="" if tax_code[:2] == "99" else _join(inf.text("xLocEmi"), emitter_uf),
        generator=codes.GENERATORS.get(inf.text("ambGer"), _or_dash(inf.text("ambGer"))),
        environment_name=codes.ENVIRONMENTS.get(environment, _or_dash(environment)),
        number=_or_dash(_number(meta.number)),
        competence=_or_dash(formats.date(competence)),
        issued_at=_or_dash(formats.date_time(formats.written(meta.processed_at))),
        dps_number=_or_dash(_number(meta.dps_number)),
        dps_serie=_or_dash(meta.serie or ""),
        dps_issued_at=_or_dash(formats.date_time(formats.written(meta.issued_at))),
        emitter_type=codes.EMITTER_TYPES.get(issuer_type, _or_dash(issuer_type)),
        status=codes.STATUSES.get(meta.cstat or "", _or_dash(meta.cstat or "")),
        purpose=codes.PURPOSES.get(dps_ibscbs.text("finNFSe"), _or_dash(dps_ibscbs.text("finNFSe"))),
        provider=_provider(dps.find("prest"), inf.find("emit"), meta, towns),
        simples=codes.SIMPLES.get(reg.text("opSimpNac"), _or_dash(reg.text("opSimpNac"))),
        simples_regime=codes.SIMPLES_REGIME.get(reg.text("regApTribSN"), _or_dash(reg.text("regApTribSN"))),
        taker=_person(dps.find("toma"), towns, meta.taker),
        recipient=_person(dps_ibscbs.find("dest"), towns),
        intermediary=_person(dps.find("interm"), towns, meta.intermediary),
        service_code=_join(_dotted(tax_code, (2, 4)), meta.municipal_code or ""),
        nbs=_or_dash(_dotted(meta.nbs or "", (1, 5, 7))),
        service_place=_join(
            inf.text("xLocPrestacao"), _uf_of(meta.place_code or ""), serv.text("locPrest/cPaisPrestacao") or "BR"
        ),
        service_code_text=_or_dash(inf.text("xTribMun") or meta.national_description or ""),
        description=_or_dash(meta.description or ""),
        issqn=_issqn(meta, dps, values, dps_values, nfse_ibscbs),
        federal=_federal(dps_values.deep("tribFed"), dict(meta.retentions)),
        show_pis_cofins=(competence[:4] or "0000") <= "2026",
        ibscbs=_ibscbs(meta.ibscbs, meta, nfse_ibscbs, dps_values) if meta.ibscbs is not None else None,
        totals=_totals(meta, dps_values),
        additional=_additional(inf, dps, serv, meta.replaced_key or ""),
        approx_taxes=_approx_taxes(dps_values),
    )


def _number(value: int | None) -> str:
    return "" if value is None else str(value)


def _cents(cents: int | None) -> str:
    return _money(cents_text(cents))


def _dotted(code: str, cuts: tuple[int, ...]) -> str:
    """ "010701" -> "01.07.01"; "115013000" -> "1.1501.30.00" (the NT's masks); other lengths as written."""
    expected = {2: 6, 3: 9}.get(len(cuts))
    if not code or len(code) != expected:
        return code
    parts, start = [], 0
    for cut in (*cuts, len(code)):
        parts.append(code[start:cut])
        start = cut
    return ".".join(parts)


def _towns(inf: Node, dps: Node, nfse_ibscbs: Node) -> dict[str, str]:
    """Municipality names the NFS-e itself spells out, by IBGE code: an address carries only the
    code, and the app ships no table of the 5,570 municipalities."""
    found = {
        dps.text("cLocEmi"): inf.text("xLocEmi"),
        dps.text("serv/locPrest/cLocPrestacao"): inf.text("xLocPrestacao"),
        inf.text("cLocIncid"): inf.text("xLocIncid"),
        nfse_ibscbs.text("cLocalidadeIncid"): nfse_ibscbs.text("xLocalidadeIncid"),
    }
    return {code: name for code, name in found.items() if code and name}


def _person(node: Node, towns: dict[str, str], known: NfseParty | None = None) -> Person | None:
    """A party: who it is as the NFS-e reader read it (``known``; from ``node`` for the IBS/CBS
    recipient, which no reader reads, and a prest the reader completed from someone else's emit),
    its address and phone from ``node``."""
    if not node:
        return None
    end = node.find("end")
    if known is None:
        known = NfseParty(
            PartyRole.RECIPIENT, node.text("CNPJ") or node.text("CPF") or None, node.text("xNome"),
            node.text("IM"), node.text("NIF"), municipality=end.text("endNac/cMun"), email=node.text("email"),
        )  # fmt: skip
    town, ibge_cep, address = _place(end, end.find("endNac"), towns, known.municipality or "", "")
    return _shown(known, node.text("fone"), town, ibge_cep, address)


def _shown(party: NfseParty, phone: str, town: str, ibge_cep: str, address: str) -> Person:
    return Person(
        doc=_or_dash(formats.tax_id(party.doc) or party.nif or ""),
        municipal_id=_or_dash(party.municipal_registration or ""),
        phone=_or_dash(formats.phone(phone)),
        name=_or_dash(party.name or ""),
        town=town,
        ibge_cep=ibge_cep,
        address=address,
        email=_or_dash(party.email or ""),
    )


def _place(end: Node, national: Node, towns: dict[str, str], c_mun: str, uf: str) -> tuple[str, str, str]:
    """(town, IBGE code / CEP, street line) of an address: ``end`` holds the street, ``national``
    the code and CEP (the same element in infNFSe/emit/enderNac)."""
    abroad = end.find("endExt")
    if abroad:
        town = _join(abroad.text("xCidade"), abroad.text("xEstProvReg"), abroad.text("cPais"))
        ibge_cep = _join(abroad.text("cEndPost"))
    else:
        town = _join(towns.get(c_mun, ""), uf or _uf_of(c_mun))
        ibge_cep = _join(c_mun, formats.cep(national.text("CEP")))
    parts = (end.text("xLgr"), end.text("nro"), end.text("xCpl"), end.text("xBairro"))
    return town, ibge_cep, _or_dash(", ".join(p for p in parts if p and p != "-"))


_NOBODY = Person(DASH, DASH, DASH, DASH, DASH, DASH, DASH, DASH)


def _provider(prest: Node, emit: Node, meta: NfseMeta, towns: dict[str, str]) -> Person:
    """The provider as the NFS-e reader reads it (the DPS's prest completed by infNFSe/emit), with
    emit's address when prest has none; when the taker or the intermediary issued the NFS-e
    (tpEmit 2, 3), prest alone."""
    if (meta.issuer_type or "") not in ("", "1"):
        return _person(prest, towns) or _NOBODY
    known = meta.provider or meta.emitter or NfseParty(PartyRole.EMITTER, None)
    if prest.find("end"):
        place = _place(prest.find("end"), prest.find("end/endNac"), towns, known.municipality or "", "")
    else:
        address = emit.find("enderNac")
        place = _place(address, address, towns, address.text("cMun"), address.text("UF"))
    return _shown(known, prest.text("fone") or emit.text("fone"), *place)


def _issqn(meta: NfseMeta, dps: Node, values: Node, dps_values: Node, nfse_ibscbs: Node) -> dict[str, str] | None:
    trib = dps_values.find("trib/tribMun")
    if not trib:
        return None
    susp = trib.find("exigSusp")
    benefit = dps_values.deep("BM")
    deductions = dps_values.text("vDedRed/vDR") or values.text("vCalcDR")
    reimbursed = nfse_ibscbs.text("valores/vCalcReeRepRes")
    discount = dps_values.text("vDescCondIncond/vDescIncond")
    retention = meta.iss_retention or ""
    return {
        "taxation": codes.ISSQN_TAXATION.get(trib.text("tribISSQN"), _or_dash(trib.text("tribISSQN"))),
        "town": _join(meta.incidence_name or "", _uf_of(meta.incidence_code or ""), trib.text("cPaisResult") or "BR"),
        "special": codes.SPECIAL_REGIMES.get(dps.text("prest/regTrib/regEspTrib"), DASH),
        "immunity": codes.IMMUNITIES.get(trib.text("tpImunidade"), _or_dash(trib.text("tpImunidade"))),
        "suspension": codes.SUSPENSIONS.get(susp.text("tpSusp"), DASH),
        "process": _or_dash(susp.text("nProcesso")),
        "benefit": codes.BENEFITS.get(values.text("tpBM"), DASH)
        if values.text("tpBM")
        else (_or_dash(benefit.text("nBM"))),
        "benefit_value": _money(values.text("vCalcBM") or benefit.text("vRedBCBM")),
        "deductions": _money(_sum(deductions, reimbursed)) if (deductions or reimbursed) else DASH,
        "discount": _money(discount),
        "base": _cents(meta.base_cents),
        "rate": _pct(meta.iss_rate or trib.text("pAliq")),
        "retention": codes.ISSQN_RETENTION.get(retention, _or_dash(retention)),
        "value": _cents(meta.iss_cents),
    }


def _federal(fed: Node, withheld: dict[str, int]) -> dict[str, str]:
    """The federal taxes: the withholdings the NFS-e reader reads, PIS and COFINS from ``fed``
    (printed withheld or not)."""
    pis_cofins = fed.find("piscofins")
    return {
        "irrf": _cents(withheld.get("vRetIRRF")),
        "cp": _cents(withheld.get("vRetCP")),
        "csll": _cents(withheld.get("vRetCSLL")),
        "pis": _money(pis_cofins.text("vPis")),
        "cofins": _money(pis_cofins.text("vCofins")),
        "retention": codes.PIS_COFINS_RETENTION.get(pis_cofins.text("tpRetPisCofins"), DASH),
    }


def _ibscbs(read: NfseIbsCbs, meta: NfseMeta, nfse_ibscbs: Node, dps_values: Node) -> dict[str, str]:
    """TRIBUTAÇÃO IBS / CBS: the NFS-e reader's group (``read``), the effective rates, reductions
    and exclusions (which only the DANFSe prints) from the tree."""
    rates = nfse_ibscbs.find("valores")
    place = read.locality_code or ""
    exclusions = [
        dps_values.text("vDescCondIncond/vDescIncond"),
        rates.text("vCalcReeRepRes"),
        cents_text(meta.iss_cents),
        dps_values.deep("piscofins").text("vPis"),
        dps_values.deep("piscofins").text("vCofins"),
    ]
    reductions = [rates.text(p) for p in ("uf/pRedAliqUF", "mun/pRedAliqMun", "fed/pRedAliqCBS")]
    return {
        "cst": _join(read.cst or "", read.class_code or ""),
        "operation": _join(read.operation_code or "", place, read.locality_name or "", _uf_of(place)),
        "exclusions": _money(_sum(*exclusions)) if any(exclusions) else DASH,
        "base": _cents(read.base_cents),
        "reductions": " / ".join(_pct(r) for r in reductions) if any(reductions) else DASH,
        "ibs_rates": _join(*(_pct(r) for r in (read.ibs_uf_rate or "", read.ibs_mun_rate or "") if r)),
        "ibs_mun_rate": _pct(rates.text("mun/pAliqEfetMun")),
        "ibs_mun": _cents(read.ibs_mun_cents),
        "ibs_uf_rate": _pct(rates.text("uf/pAliqEfetUF")),
        "ibs_uf": _cents(read.ibs_uf_cents),
        "ibs_total": _cents(read.ibs_cents),
        "cbs_rate": _pct(read.cbs_rate or ""),
        "cbs_effective": _pct(rates.text("fed/pAliqEfetCBS")),
        "cbs": _cents(read.cbs_cents),
    }


def _totals(meta: NfseMeta, dps_values: Node) -> dict[str, str]:
    read = meta.ibscbs
    ibs, cbs = (read.ibs_cents, read.cbs_cents) if read is not None else (None, None)
    return {
        "service": _cents(meta.service_cents),
        "unconditional": _money(dps_values.text("vDescCondIncond/vDescIncond")),
        "conditional": _money(dps_values.text("vDescCondIncond/vDescCond")),
        "retentions": _cents(meta.retained_cents),
        "net": _cents(meta.net_cents),
        "ibscbs": _cents((ibs or 0) + (cbs or 0)) if (ibs is not None or cbs is not None) else DASH,
        "net_ibscbs": _cents(read.total_cents if read is not None else None),
    }


def _approx(value: str, pct: str) -> str:
    if value:
        return f"R$ {formats.money(value)}"
    if pct:
        return f"{formats.decimal(pct, 2)}%"
    return DASH


def _additional(inf: Node, dps: Node, serv: Node, replaced: str) -> str:
    """INFORMAÇÕES COMPLEMENTARES: the optional fields in the NT's order, "|"-separated."""
    info = serv.find("infoCompl")
    segments = [
        ("Inf. Cont.:", info.text("xInfComp")),
        ("NFS-e Subst.:", replaced),
        ("Doc. Ref.:", info.text("docRef")),
        ("Cód. Obra:", serv.text("obra/cObra")),
        ("Insc. Imob.:", serv.text("obra/inscImobFisc")),
        ("Cód. Evt.:", serv.text("atvEvento/idAtvEvt")),
        ("Doc. Téc.:", info.text("idDocTec")),
        ("Núm. Ped.:", info.text("xPed")),
        ("Item Ped.:", "; ".join(i.text("xItemPed") for i in info.all("gItemPed") if i.text("xItemPed"))),
        ("Inf. A. T. Mun.:", inf.text("xOutInf")),
    ]
    return " | ".join(f"{label} {value}" for label, value in segments if value)


def _approx_taxes(dps_values: Node) -> str:
    """The approximate taxes of Lei 12.741/2012, in value or percentage, as the DPS gives them."""
    total = dps_values.find("trib/totTrib")
    approx = (
        "Totais Aproximados dos Tributos cfe. Lei nº 12.741/2012: "
        f"Federais: {_approx(total.text('vTotTrib/vTotTribFed'), total.text('pTotTrib/pTotTribFed'))} ; "
        f"Estaduais: {_approx(total.text('vTotTrib/vTotTribEst'), total.text('pTotTrib/pTotTribEst'))} ; "
        f"Municipais: {_approx(total.text('vTotTrib/vTotTribMun'), total.text('pTotTrib/pTotTribMun'))}"
    )
    if total.text("pTotTribSN"):
        approx += f" ; Simples Nacional: {formats.decimal(total.text('pTotTribSN'), 2)}%"
    return approx
