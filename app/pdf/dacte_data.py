"""What a DACTE prints, read from a cteProc / cteOSProc (or a bare CTe / CTeOS), layouts 3.00 and 4.00.

Pure functions from the lxml tree to small frozen dataclasses; the drawing (``app.pdf.dacte``)
never touches XML. What the CT-e reader (``app.documents.cte``) reads (key, numbers, dates, total,
protocol, who each party is, IBS/CBS values) comes from it, on the same tree; the tree is read
here only for what the DACTE alone prints. Values are the XML's text ("221.19",
"2024-03-27T00:00:00-03:00"; the reader's back as that text):
the layout formats them in pt-BR. A field the document lacks is "" (the layout prints it blank
or "-"), never a crash: a DACTE of a strange but authorised CT-e must still print.

    dacte = read_dacte(parse_xml(data))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from lxml import etree

from app.documents.cte import MODAL_LABELS, TAKER_TAGS, read_cte_root
from app.documents.model import CteMeta, DocumentDataError, PartyInfo
from app.documents.reform_model import ReformValues
from app.documents.values import cents_text
from app.pdf import formats
from app.pdf.dacte_modal import delivery_text, read_modal
from app.pdf.dacte_model import Address, CarriedDoc, Component, Dacte, IbsCbs, Icms, Party, Quantity
from app.pdf.events import registered_cancellation
from app.pdf.xmlnode import Node

CTE_NS = "http://www.portalfiscal.inf.br/cte"
_P = f"{{{CTE_NS}}}"
_ROOTS = {"cteProc": "CTe", "CTe": None, "cteOSProc": "CTeOS", "CTeOS": None}

CTE_TYPES = {"0": "NORMAL", "1": "COMPLEMENTO DE VALORES", "2": "ANULAÇÃO", "3": "SUBSTITUTO"}
SERVICE_TYPES = {
    "0": "NORMAL",
    "1": "SUBCONTRATAÇÃO",
    "2": "REDESPACHO",
    "3": "REDESPACHO INTERMEDIÁRIO",
    "4": "SERVIÇO VINCULADO A MULTIMODAL",
    "6": "TRANSPORTE DE PESSOAS",
    "7": "TRANSPORTE DE VALORES",
    "8": "EXCESSO DE BAGAGEM",
    "9": "MULTIMODAL",  # layout 3.00 samples carry 9 for a multimodal service
}
MODALS = {code: label.upper() for code, label in MODAL_LABELS.items()}
TAKER_ROLES = {"0": "REMETENTE", "1": "EXPEDIDOR", "2": "RECEBEDOR", "3": "DESTINATÁRIO", "4": "OUTROS"}
EMISSION_TYPES = {
    "1": "NORMAL",
    "4": "EPEC PELA SVC",
    "5": "CONTINGÊNCIA FSDA",
    "7": "AUTORIZAÇÃO PELA SVC-RS",
    "8": "AUTORIZAÇÃO PELA SVC-SP",
}
ICMS_SITUATIONS = {
    "00": "00 - TRIBUTAÇÃO NORMAL ICMS",
    "20": "20 - TRIBUTAÇÃO COM BC REDUZIDA DO ICMS",
    "40": "40 - ICMS ISENÇÃO",
    "41": "41 - ICMS NÃO TRIBUTADA",
    "51": "51 - ICMS DIFERIDO",
    "60": "60 - ICMS COBRADO POR SUBSTITUIÇÃO TRIBUTÁRIA",
    "90": "90 - ICMS OUTROS",
}
_INSURANCE_RESPONSIBLE = {"4": "EMITENTE DO CT-E OS", "5": "TOMADOR DO SERVIÇO"}
_REFERENCE_KINDS = {"1": "CT-E COMPLEMENTADO", "2": "CT-E ANULADO", "3": "CT-E SUBSTITUÍDO"}
_DOC_TYPES_OTHER = {"00": "DECLARAÇÃO", "10": "DUTOVIÁRIO", "59": "CF-E SAT", "65": "NFC-E", "99": "OUTROS"}


class DacteError(DocumentDataError):
    """The XML is well-formed but not a CT-e this app can print (another root, no infCte)."""

    reason = "dacte"


# ---------------------------------------------------------------- reading


def is_cancelled(key: str, events: Iterable[bytes]) -> bool:
    """Whether a registered cancellation (110111) of ``key`` is among ``events``; unreadable ones are skipped."""
    return registered_cancellation(key, events, read_cte_root)


def read_dacte(root: etree._Element, events: Sequence[bytes] = ()) -> Dacte:
    """The DACTE's content of one CT-e or CT-e OS document; cancelled when ``events`` hold a
    registered cancellation of it."""
    dacte = _read(root)
    return replace(dacte, cancelled=True) if is_cancelled(dacte.key, events) else dacte


def _meta(root: etree._Element) -> CteMeta:
    """The CT-e reader's reading of ``root`` (the same the capture stores)."""
    try:
        meta = read_cte_root(root)
    except DocumentDataError as error:
        raise DacteError(error.message) from error
    if not isinstance(meta, CteMeta):
        raise DacteError("CT-e sem o grupo infCte: não há o que imprimir no DACTE.")
    return meta


def _read(root: etree._Element) -> Dacte:
    node = Node(root, _P)
    local = node.local
    if root.tag != _P + local or local not in _ROOTS:
        raise DacteError(
            f"O XML não é um CT-e (raiz <{local}>): o DACTE é gerado a partir de cteProc, cteOSProc, CTe ou CTeOS."
        )
    wrapper = _ROOTS[local]
    cte = node.find(wrapper) if wrapper else node
    inf = cte.find("infCte")
    if not inf:
        raise DacteError("CT-e sem o grupo infCte: não há o que imprimir no DACTE.")
    meta = _meta(root)
    key = meta.access_key
    ide = inf.find("ide")
    known = {"emit": meta.emitter, "rem": meta.sender, "exped": meta.shipper, "receb": meta.receiver,
             "dest": meta.recipient}  # fmt: skip
    parties = {tag: _party(inf.find(tag), known[tag]) for tag in known}
    taker_role, taker = _taker(inf, ide, parties, meta)
    norm = inf.find("infCTeNorm")
    compl = inf.find("compl")
    modal = ide.text("modal")
    referenced = inf.text("infCteComp/chCTe") or inf.text("infCteComp/chCte") or norm.text("infCteSub/chCte")
    documents = _documents(norm)
    if referenced:
        kind = _REFERENCE_KINDS.get(ide.text("tpCTe"), "CT-E REFERENCIADO")
        documents = (CarriedDoc(kind, referenced, _serie_number_of_key(referenced)), *documents)
    return Dacte(
        key=key,
        model=meta.model,
        version=inf.attr("versao"),
        serie="" if meta.serie is None else str(meta.serie),
        number="" if meta.number is None else str(meta.number),
        issued_at=formats.written(meta.issued_at),
        environment="" if meta.environment is None else str(meta.environment),
        emission_type=EMISSION_TYPES.get(ide.text("tpEmis"), ide.text("tpEmis")),
        cte_type=CTE_TYPES.get(ide.text("tpCTe"), ide.text("tpCTe")),
        service_type=SERVICE_TYPES.get(ide.text("tpServ"), ide.text("tpServ")),
        modal=modal,
        cfop=ide.text("CFOP"),
        nature=ide.text("natOp"),
        start=_town(ide.text("xMunIni"), ide.text("UFIni")),
        end=_town(ide.text("xMunFim"), ide.text("UFFim")),
        emitter=parties["emit"],
        sender=parties["rem"],
        shipper=parties["exped"],
        receiver=parties["receb"],
        recipient=parties["dest"],
        taker=taker,
        taker_role=taker_role,
        total=cents_text(meta.total_cents),
        receivable=inf.text("vPrest/vRec"),
        components=tuple(Component(c.text("xNome"), c.text("vComp")) for c in inf.all("vPrest/Comp")),
        icms=_icms(inf.find("imp/ICMS").first_child()),
        ibscbs=_ibscbs(inf.find("imp/IBSCBS"), meta.reform),
        approx_taxes=inf.text("imp/vTotTrib"),
        product=norm.text("infCarga/proPred"),
        other_features=norm.text("infCarga/xOutCat"),
        cargo_value=norm.text("infCarga/vCarga"),
        quantities=_quantities(norm),
        documents=documents,
        observations=_observations(compl, inf),
        fisco_observations=tuple(f"{o.attr('xCampo')}: {o.text('xTexto')}".strip(": ") for o in compl.all("ObsFisco")),
        modal_block=read_modal(norm.find("infModal").first_child(), delivery=delivery_text(compl.find("Entrega"))),
        protocol=meta.protocol or "",
        authorised_at=formats.written(meta.authorised_at),
        protocol_status=meta.cstat or "",
        qr_url=cte.text("infCTeSupl/qrCodCTe"),
        service_description=norm.text("infServico/xDescServ"),
        insurance=tuple(
            (_INSURANCE_RESPONSIBLE.get(g.text("respSeg"), g.text("respSeg")), g.text("xSeg"), g.text("nApol"))
            for g in norm.all("seg")
        ),
        route=" > ".join(ide.texts("infPercurso/UFPer")),
        federal_taxes=tuple(
            (label, inf.text(f"imp/infTribFed/{tag}"))
            for tag, label in (
                ("vPIS", "PIS"),
                ("vCOFINS", "COFINS"),
                ("vIR", "IR"),
                ("vINSS", "INSS"),
                ("vCSLL", "CSLL"),
            )
        )
        if inf.find("imp/infTribFed")
        else (),
        referenced_key=referenced,
    )


def _town(city: str, uf: str) -> str:
    return " - ".join(p for p in (city, uf) if p)


def _address(node: Node) -> Address:
    return Address(
        street=node.text("xLgr"),
        number=node.text("nro"),
        complement=node.text("xCpl"),
        district=node.text("xBairro"),
        city=node.text("xMun"),
        uf=node.text("UF"),
        cep=node.text("CEP"),
        country=node.text("xPais"),
    )


_ADDRESS_TAGS = ("enderEmit", "enderReme", "enderExped", "enderReceb", "enderDest", "enderToma", "enderTome")


def _party(node: Node, known: PartyInfo | None) -> Party:
    """A party: who it is (name, CNPJ/CPF, IE) as the CT-e reader read it, its address, phone,
    trade name and e-mail from ``node``."""
    if not node or known is None:
        return Party()
    address = Address()
    phone = node.text("fone")
    for tag in _ADDRESS_TAGS:
        found = node.find(tag)
        if found:
            address = _address(found)
            phone = phone or found.text("fone")
            break
    return Party(
        name=" ".join((known.name or "").split()),
        doc=known.doc or "",
        ie=known.ie or "",
        phone=phone,
        address=address,
        trade_name=node.text("xFant"),
        email=node.text("email"),
    )


def _taker(inf: Node, ide: Node, parties: dict[str, Party], meta: CteMeta) -> tuple[str, Party]:
    """Who pays, as the CT-e reader reads it: toma3 (toma03 in old layouts) names one of the four;
    toma4 / CT-e OS's toma is its own party."""
    code = meta.taker_code or ""
    if code in TAKER_TAGS:
        return TAKER_ROLES[code], parties[TAKER_TAGS[code]]
    toma4 = ide.find("toma4")
    if toma4:
        return TAKER_ROLES["4"], _party(toma4, meta.taker)
    os_taker = inf.find("toma")
    if os_taker:
        return "TOMADOR", _party(os_taker, meta.taker)
    return "", Party()


def _icms(group: Node) -> Icms:
    if not group:
        return Icms()
    cst = group.text("CST")
    local = group.local
    if local == "ICMSSN":
        situation = "SIMPLES NACIONAL"
    elif local == "ICMSOutraUF":
        situation = "90 - ICMS OUTRA UF"
    else:
        situation = ICMS_SITUATIONS.get(cst, cst)
    return Icms(
        situation=situation,
        base=group.text("vBC") or group.text("vBCOutraUF") or group.text("vBCSTRet"),
        rate=group.text("pICMS") or group.text("pICMSOutraUF") or group.text("pICMSSTRet"),
        value=group.text("vICMS") or group.text("vICMSOutraUF"),
        base_reduction=group.text("pRedBC") or group.text("pRedBCOutraUF"),
        st_value=group.text("vICMSSTRet"),
        credit=group.text("vCred"),
    )


def _ibscbs(node: Node, reform: ReformValues | None) -> IbsCbs | None:
    """imp/IBSCBS: the reform reader's values (``reform``, one item), the rates, which it does
    not read, from ``node``."""
    if reform is None or not reform.items:
        return None
    item, rates = reform.items[0], node.find("gIBSCBS")
    return IbsCbs(
        cst=item.cst or "",
        class_code=item.class_code or "",
        base=cents_text(item.base_cents),
        ibs_uf_rate=rates.text("gIBSUF/pIBSUF"),
        ibs_uf=cents_text(item.ibs_uf_cents),
        ibs_mun_rate=rates.text("gIBSMun/pIBSMun"),
        ibs_mun=cents_text(item.ibs_mun_cents),
        ibs_total=cents_text(item.ibs_cents),
        cbs_rate=rates.text("gCBS/pCBS"),
        cbs=cents_text(item.cbs_cents),
    )


_UNITS = {"00": "M3", "01": "KG", "02": "TON", "03": "UN", "04": "LT", "05": "MMBTU"}


def _quantities(norm: Node) -> tuple[Quantity, ...]:
    found = [
        Quantity(q.text("tpMed"), _UNITS.get(q.text("cUnid"), q.text("cUnid")), q.text("qCarga"))
        for q in norm.all("infCarga/infQ")
    ]
    # CT-e OS: infServico/infQ carries only the quantity (passengers, volumes).
    found += [Quantity("QUANTIDADE", "", q.text("qCarga")) for q in norm.all("infServico/infQ")]
    return tuple(found)


def _documents(norm: Node) -> tuple[CarriedDoc, ...]:
    docs: list[CarriedDoc] = []
    for nfe in norm.all("infDoc/infNFe"):
        key = nfe.text("chave")
        docs.append(CarriedDoc("NF-E", key, _serie_number_of_key(key)))
    for nf in norm.all("infDoc/infNF"):
        docs.append(CarriedDoc("NF", f"MOD. {nf.text('mod')}".strip(), f"{nf.text('serie')}/{nf.text('nDoc')}"))
    for other in norm.all("infDoc/infOutros"):
        kind = _DOC_TYPES_OTHER.get(other.text("tpDoc"), other.text("tpDoc"))
        docs.append(CarriedDoc(kind, other.text("descOutros"), other.text("nDoc")))
    for previous in norm.all("docAnt/emiDocAnt"):
        issuer = previous.text("CNPJ") or previous.text("CPF")
        for paper in previous.all("idDocAnt/idDocAntPap"):
            docs.append(CarriedDoc("DOC. ANTERIOR", issuer, f"{paper.text('serie')}/{paper.text('nDoc')}"))
        for electronic in previous.all("idDocAnt/idDocAntEle"):
            key = electronic.text("chCTe") or electronic.text("chave")
            docs.append(CarriedDoc("CT-E ANTERIOR", key, _serie_number_of_key(key)))
    for ref in norm.all("infDocRef"):  # CT-e OS
        key = ref.text("chBPe")
        if key:
            docs.append(CarriedDoc("BP-E", key, _serie_number_of_key(key)))
        else:
            docs.append(CarriedDoc("DOC. REFERENCIADO", ref.text("dEmi"), f"{ref.text('serie')}/{ref.text('nDoc')}"))
    return tuple(docs)


def _serie_number_of_key(key: str) -> str:
    """The serie/number a 44-character key carries (positions 23-25 and 26-34), without leading zeros."""
    if len(key) != 44:
        return ""
    serie, number = key[22:25].lstrip("0") or "0", key[25:34].lstrip("0") or "0"
    return f"{serie}/{number}"


def _observations(compl: Node, inf: Node) -> tuple[str, ...]:
    lines: list[str] = []
    for tag in ("xCaracAd", "xCaracSer"):
        if compl.text(tag):
            lines.append(compl.text(tag))
    for obs in compl.all("xObs"):
        if obs.text():
            lines.append(obs.text())
    for obs in compl.all("ObsCont"):
        label = obs.attr("xCampo")
        text = obs.text("xTexto")
        if text:
            lines.append(f"{label}: {text}" if label else text)
    if inf.text("imp/infAdFisco"):
        lines.append(inf.text("imp/infAdFisco"))
    return tuple(lines)
