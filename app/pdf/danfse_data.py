"""What a DANFSe v2.0 prints (NT SE/CGNFS-e 008), read from an NFS-e Nacional (``NFSe``, 1.00/1.01).

Pure functions from the lxml tree to frozen dataclasses of display-ready strings: the layout
(``app.pdf.danfse``) only places them. Following the NT, an empty field prints "-"; the domain
codes (tribISSQN, tpRetISSQN, opSimpNac...) print their official descriptions.

The NFS-e does not say it was cancelled or substituted: those are events (101101, 105104 and
305101 cancel it, 105102 cancels it by substitution), read from ``events`` by :func:`app.pdf.events.nfse_marks`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

from lxml import etree

from app.core.keys import UF_BY_CODE
from app.pdf import danfse_codes as codes
from app.pdf import formats
from app.pdf.errors import PdfError
from app.pdf.events import nfse_marks
from app.pdf.xmlnode import Node
from app.safexml import XmlRejected, parse_xml

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
    return text.strip() or DASH


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


def read_danfse_bytes(data: bytes, events: Iterable[bytes] = ()) -> Danfse:
    """:func:`read_danfse` of raw bytes, with the marks of ``events``; :class:`PdfError` for bad input."""
    try:
        root = parse_xml(data)
    except XmlRejected as error:
        raise PdfError(f"Não foi possível gerar o DANFSe: XML ilegível ({error.message}).") from error
    danfse = read_danfse(root)
    cancelled, substituted = nfse_marks(danfse.key, events)
    if cancelled or substituted:
        danfse = replace(danfse, cancelled=cancelled and not substituted, substituted=substituted)
    return danfse


def read_danfse(root: etree._Element) -> Danfse:
    node = Node(root, _P)
    if root.tag != f"{_P}NFSe":
        local = etree.QName(root).localname if isinstance(root.tag, str) else "?"
        raise PdfError(f"Não foi possível gerar o DANFSe: o XML não é uma NFS-e Nacional (raiz <{local}>).")
    inf = node.find("infNFSe")
    dps = inf.find("DPS/infDPS")
    if not inf or not dps:
        raise PdfError("Não foi possível gerar o DANFSe: a NFS-e não tem os grupos infNFSe e DPS/infDPS.")
    key = inf.attr("Id").removeprefix("NFS")
    if not key:
        raise PdfError("Não foi possível gerar o DANFSe: NFS-e sem chave de acesso (atributo Id de infNFSe).")
    serv = dps.find("serv")
    values = inf.find("valores")
    dps_values = dps.find("valores")
    dps_ibscbs = dps.find("IBSCBS")
    nfse_ibscbs = inf.find("IBSCBS")
    reg = dps.find("prest/regTrib")
    emit = inf.find("emit")
    tax_code = serv.text("cServ/cTribNac")
    c_loc = serv.text("locPrest/cLocPrestacao")
    competence = dps.text("dCompet")
    towns = _towns(inf, dps, nfse_ibscbs)
    return Danfse(
        key=key,
        environment=dps.text("tpAmb"),
        header_town="" if tax_code[:2] == "99" else _join(inf.text("xLocEmi"), emit.text("enderNac/UF")),
        generator=codes.GENERATORS.get(inf.text("ambGer"), _or_dash(inf.text("ambGer"))),
        environment_name=codes.ENVIRONMENTS.get(dps.text("tpAmb"), _or_dash(dps.text("tpAmb"))),
        number=_or_dash(inf.text("nNFSe")),
        competence=_or_dash(formats.date(competence)),
        issued_at=_or_dash(formats.date_time(inf.text("dhProc"))),
        dps_number=_or_dash(dps.text("nDPS")),
        dps_serie=_or_dash(dps.text("serie")),
        dps_issued_at=_or_dash(formats.date_time(dps.text("dhEmi"))),
        emitter_type=codes.EMITTER_TYPES.get(dps.text("tpEmit"), _or_dash(dps.text("tpEmit"))),
        status=codes.STATUSES.get(inf.text("cStat"), _or_dash(inf.text("cStat"))),
        purpose=codes.PURPOSES.get(dps_ibscbs.text("finNFSe"), _or_dash(dps_ibscbs.text("finNFSe"))),
        provider=_provider(dps.find("prest"), emit, inf, dps.text("tpEmit"), towns),
        simples=codes.SIMPLES.get(reg.text("opSimpNac"), _or_dash(reg.text("opSimpNac"))),
        simples_regime=codes.SIMPLES_REGIME.get(reg.text("regApTribSN"), _or_dash(reg.text("regApTribSN"))),
        taker=_person(dps.find("toma"), towns),
        recipient=_person(dps_ibscbs.find("dest"), towns),
        intermediary=_person(dps.find("interm"), towns),
        service_code=_join(_dotted(tax_code, (2, 4)), serv.text("cServ/cTribMun")),
        nbs=_or_dash(_dotted(serv.text("cServ/cNBS"), (1, 5, 7))),
        service_place=_join(inf.text("xLocPrestacao"), _uf_of(c_loc), serv.text("locPrest/cPaisPrestacao") or "BR"),
        service_code_text=_or_dash(inf.text("xTribMun") or inf.text("xTribNac")),
        description=_or_dash(serv.text("cServ/xDescServ")),
        issqn=_issqn(inf, dps, values, dps_values, nfse_ibscbs),
        federal=_federal(dps_values.deep("tribFed")),
        show_pis_cofins=(competence[:4] or "0000") <= "2026",
        ibscbs=_ibscbs(dps_ibscbs, nfse_ibscbs, values, dps_values) if (dps_ibscbs or nfse_ibscbs) else None,
        totals=_totals(values, dps_values, nfse_ibscbs),
        additional=_additional(inf, dps, serv),
        approx_taxes=_approx_taxes(dps_values),
    )


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


def _person(node: Node, towns: dict[str, str]) -> Person | None:
    if not node:
        return None
    end = node.find("end")
    national = end.find("endNac")
    abroad = end.find("endExt")
    c_mun = national.text("cMun")
    if abroad:
        town = _join(abroad.text("xCidade"), abroad.text("xEstProvReg"), abroad.text("cPais"))
        ibge_cep = _join(abroad.text("cEndPost"))
    else:
        town = _join(towns.get(c_mun, ""), _uf_of(c_mun))
        ibge_cep = _join(c_mun, formats.cep(national.text("CEP")))
    return Person(
        doc=_or_dash(formats.tax_id(node.text("CNPJ") or node.text("CPF")) or node.text("NIF")),
        municipal_id=_or_dash(node.text("IM")),
        phone=_or_dash(formats.phone(node.text("fone"))),
        name=_or_dash(node.text("xNome")),
        town=town,
        ibge_cep=ibge_cep,
        address=_or_dash(
            ", ".join(
                p for p in (end.text("xLgr"), end.text("nro"), end.text("xCpl"), end.text("xBairro")) if p and p != "-"
            )
        ),
        email=_or_dash(node.text("email")),
    )


def _provider(prest: Node, emit: Node, inf: Node, tp_emit: str, towns: dict[str, str]) -> Person:
    """The provider from the DPS, completed from infNFSe/emit when the provider issued it (tpEmit 1)."""
    fallback = emit if tp_emit in ("", "1") else Node(None, _P)
    mine = _person(prest, towns) if prest.find("end") else None
    address = fallback.find("enderNac")
    c_mun = address.text("cMun")
    return Person(
        doc=_or_dash(
            formats.tax_id(prest.text("CNPJ") or prest.text("CPF") or fallback.text("CNPJ") or fallback.text("CPF"))
            or prest.text("NIF")
        ),
        municipal_id=_or_dash(prest.text("IM") or fallback.text("IM")),
        phone=_or_dash(formats.phone(prest.text("fone") or fallback.text("fone"))),
        name=_or_dash(prest.text("xNome") or fallback.text("xNome")),
        town=mine.town if mine else _join(towns.get(c_mun, ""), address.text("UF") or _uf_of(c_mun)),
        ibge_cep=mine.ibge_cep if mine else _join(c_mun, formats.cep(address.text("CEP"))),
        address=mine.address
        if mine
        else _or_dash(
            ", ".join(
                p
                for p in (address.text("xLgr"), address.text("nro"), address.text("xCpl"), address.text("xBairro"))
                if p and p != "-"
            )
        ),
        email=_or_dash(prest.text("email") or fallback.text("email")),
    )


def _issqn(inf: Node, dps: Node, values: Node, dps_values: Node, nfse_ibscbs: Node) -> dict[str, str] | None:
    trib = dps_values.find("trib/tribMun")
    if not trib:
        return None
    susp = trib.find("exigSusp")
    benefit = dps_values.deep("BM")
    deductions = dps_values.text("vDedRed/vDR") or values.text("vCalcDR")
    reimbursed = nfse_ibscbs.text("valores/vCalcReeRepRes")
    discount = dps_values.text("vDescCondIncond/vDescIncond")
    return {
        "taxation": codes.ISSQN_TAXATION.get(trib.text("tribISSQN"), _or_dash(trib.text("tribISSQN"))),
        "town": _join(inf.text("xLocIncid"), _uf_of(inf.text("cLocIncid")), trib.text("cPaisResult") or "BR"),
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
        "base": _money(values.text("vBC")),
        "rate": _pct(values.text("pAliqAplic") or trib.text("pAliq")),
        "retention": codes.ISSQN_RETENTION.get(trib.text("tpRetISSQN"), _or_dash(trib.text("tpRetISSQN"))),
        "value": _money(values.text("vISSQN")),
    }


def _federal(fed: Node) -> dict[str, str]:
    pis_cofins = fed.find("piscofins")
    return {
        "irrf": _money(fed.text("vRetIRRF")),
        "cp": _money(fed.text("vRetCP")),
        "csll": _money(fed.text("vRetCSLL")),
        "pis": _money(pis_cofins.text("vPis")),
        "cofins": _money(pis_cofins.text("vCofins")),
        "retention": codes.PIS_COFINS_RETENTION.get(pis_cofins.text("tpRetPisCofins"), DASH),
    }


def _ibscbs(dps_ibscbs: Node, nfse_ibscbs: Node, values: Node, dps_values: Node) -> dict[str, str]:
    group = dps_ibscbs.find("valores/trib/gIBSCBS")
    rates = nfse_ibscbs.find("valores")
    total = nfse_ibscbs.find("totCIBS")
    place = nfse_ibscbs.text("cLocalidadeIncid")
    exclusions = [
        dps_values.text("vDescCondIncond/vDescIncond"),
        rates.text("vCalcReeRepRes"),
        values.text("vISSQN"),
        dps_values.deep("piscofins").text("vPis"),
        dps_values.deep("piscofins").text("vCofins"),
    ]
    reductions = [rates.text(p) for p in ("uf/pRedAliqUF", "mun/pRedAliqMun", "fed/pRedAliqCBS")]
    return {
        "cst": _join(group.text("CST"), group.text("cClassTrib")),
        "operation": _join(dps_ibscbs.text("cIndOp"), place, nfse_ibscbs.text("xLocalidadeIncid"), _uf_of(place)),
        "exclusions": _money(_sum(*exclusions)) if any(exclusions) else DASH,
        "base": _money(rates.text("vBC")),
        "reductions": " / ".join(_pct(r) for r in reductions) if any(reductions) else DASH,
        "ibs_rates": _join(*(_pct(r) for r in (rates.text("uf/pIBSUF"), rates.text("mun/pIBSMun")) if r)),
        "ibs_mun_rate": _pct(rates.text("mun/pAliqEfetMun")),
        "ibs_mun": _money(total.text("gIBS/gIBSMunTot/vIBSMun")),
        "ibs_uf_rate": _pct(rates.text("uf/pAliqEfetUF")),
        "ibs_uf": _money(total.text("gIBS/gIBSUFTot/vIBSUF")),
        "ibs_total": _money(total.text("gIBS/vIBSTot")),
        "cbs_rate": _pct(rates.text("fed/pCBS")),
        "cbs_effective": _pct(rates.text("fed/pAliqEfetCBS")),
        "cbs": _money(total.text("gCBS/vCBS")),
    }


def _totals(values: Node, dps_values: Node, nfse_ibscbs: Node) -> dict[str, str]:
    ibs, cbs = nfse_ibscbs.text("totCIBS/gIBS/vIBSTot"), nfse_ibscbs.text("totCIBS/gCBS/vCBS")
    return {
        "service": _money(dps_values.text("vServPrest/vServ")),
        "unconditional": _money(dps_values.text("vDescCondIncond/vDescIncond")),
        "conditional": _money(dps_values.text("vDescCondIncond/vDescCond")),
        "retentions": _money(values.text("vTotalRet")),
        "net": _money(values.text("vLiq")),
        "ibscbs": _money(_sum(ibs, cbs)) if (ibs or cbs) else DASH,
        "net_ibscbs": _money(nfse_ibscbs.text("totCIBS/vTotNF")),
    }


def _approx(value: str, pct: str) -> str:
    if value:
        return f"R$ {formats.money(value)}"
    if pct:
        return f"{formats.decimal(pct, 2)}%"
    return DASH


def _additional(inf: Node, dps: Node, serv: Node) -> str:
    """INFORMAÇÕES COMPLEMENTARES: the optional fields in the NT's order, "|"-separated."""
    info = serv.find("infoCompl")
    segments = [
        ("Inf. Cont.:", info.text("xInfComp")),
        ("NFS-e Subst.:", dps.text("subst/chSubstda")),
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
