"""What a DANFE prints, read from an nfeProc (or a bare NFe) into plain values.

Only reading happens here: no drawing, no formatting beyond choosing which XML field a DANFE
box shows. What the NF-e reader (``app.documents.nfe``) reads (key, numbers, dates, protocol,
who each party is, the total, IBS/CBS/IS values, the status) comes from it, on the same parsed
tree; the tree is read here only for what a DANFE alone prints. Every value is text as the XML
writes it (``""`` when absent), so the renderer decides how to print it and an odd value never raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation

from lxml import etree

from app.core.documents import DocumentStatus
from app.documents.model import DocumentError, NfeMeta, PartyInfo
from app.documents.nfe import read_nfe_root
from app.documents.reform_model import ReformItem, ReformValues
from app.documents.values import cents_text, to_int
from app.pdf import formats
from app.pdf.errors import PdfError, parsed
from app.pdf.events import registered_cancellation

NS = "http://www.portalfiscal.inf.br/nfe"
N = f"{{{NS}}}"
NT_2026_010_FROM = "2026-12-01"  # dhEmi from this day: the NT 2026.010 layout (IBS/CBS/IS)


def _find(element: etree._Element | None, path: str) -> etree._Element | None:
    if element is None:
        return None
    return element.find("/".join(N + part for part in path.split("/")))


def text(element: etree._Element | None, path: str) -> str:
    found = _find(element, path)
    return (found.text or "").strip() if found is not None else ""


def _first(element: etree._Element | None, *paths: str) -> str:
    for path in paths:
        value = text(element, path)
        if value:
            return value
    return ""


@dataclass(frozen=True, slots=True)
class Party:
    name: str = ""
    tax_id: str = ""  # CNPJ, CPF or idEstrangeiro as written
    ie: str = ""
    street: str = ""
    district: str = ""
    city: str = ""
    uf: str = ""
    cep: str = ""
    phone: str = ""
    fantasy: str = ""
    iest: str = ""
    im: str = ""
    crt: str = ""

    @property
    def simples(self) -> bool:
        """CRT 1 or 4 (Simples Nacional, MEI): its items carry a CSOSN instead of a CST."""
        return self.crt in ("1", "4")


def _party(element: etree._Element | None, address_tag: str | None, known: PartyInfo | None = None) -> Party:
    """A party: who it is (name, CNPJ/CPF, IE, UF) as the NF-e reader read it (``known``), its
    address and the DANFE's other boxes from ``element``. Retirada and entrega, which no reader
    reads, come whole from ``element`` (``address_tag`` None: the address sits in it)."""
    if element is None:
        return Party()
    address = _find(element, address_tag) if address_tag else element
    street = ", ".join(p for p in (text(address, "xLgr"), text(address, "nro"), text(address, "xCpl")) if p)
    name, tax_id, ie, uf = (
        (known.name or "", known.doc or known.foreign_id or "", known.ie or "", known.uf or "")
        if known is not None
        else (text(element, "xNome"), _first(element, "CNPJ", "CPF", "idEstrangeiro"), text(element, "IE"),
              text(address, "UF"))
    )  # fmt: skip
    return Party(
        name=name,
        tax_id=tax_id,
        ie=ie,
        street=street,
        district=text(address, "xBairro"),
        city=text(address, "xMun"),
        uf=uf,
        cep=text(address, "CEP"),
        phone=text(address, "fone"),
        fantasy=text(element, "xFant"),
        iest=text(element, "IEST"),
        im=text(element, "IM"),
        crt=text(element, "CRT"),
    )


@dataclass(frozen=True, slots=True)
class Item:
    code: str
    description: str  # xProd plus infAdProd, as the DANFE prints it in the description column
    ncm: str
    cst: str  # orig + CST, or orig + CSOSN
    cfop: str
    unit: str
    quantity: str
    unit_value: str
    total: str
    icms_base: str
    icms_value: str
    ipi_value: str
    icms_rate: str
    ipi_rate: str
    class_trib: str = ""  # cClassTrib (NT 2026.010)
    reform: dict[str, str] = field(default_factory=dict)  # IBS/CBS/IS item values present (NT 2026.010)


def _item(det: etree._Element, known: ReformItem | None) -> Item:
    prod = _find(det, "prod")
    tax = _find(det, "imposto")
    icms_group = _find(tax, "ICMS")
    icms = icms_group[0] if icms_group is not None and len(icms_group) else None
    orig, cst = text(icms, "orig"), _first(icms, "CST", "CSOSN")
    ipi = _find(tax, "IPI/IPITrib")
    description = text(prod, "xProd")
    extra = text(det, "infAdProd")
    if extra:
        description = f"{description}\n{extra}"
    return Item(
        code=text(prod, "cProd"),
        description=description,
        ncm=text(prod, "NCM"),
        cst=f"{orig}{cst}",
        cfop=text(prod, "CFOP"),
        unit=text(prod, "uCom"),
        quantity=text(prod, "qCom"),
        unit_value=text(prod, "vUnCom"),
        total=text(prod, "vProd"),
        icms_base=text(icms, "vBC"),
        icms_value=text(icms, "vICMS"),
        ipi_value=text(ipi, "vIPI"),
        icms_rate=text(icms, "pICMS"),
        ipi_rate=text(ipi, "pIPI"),
        class_trib=(known.class_code or "") if known is not None else "",
        reform=_reform(tax, known),
    )


# The item's rates and IS base, which the reform reader (app.documents.reform) leaves out: the
# DANFE prints them beside the values that reader gives.
_RATE_PATHS = {"pIBSUF": "IBSCBS/gIBSCBS/gIBSUF/pIBSUF", "pIBSMun": "IBSCBS/gIBSCBS/gIBSMun/pIBSMun",
               "pCBS": "IBSCBS/gIBSCBS/gCBS/pCBS", "vBCIS": "IS/vBCIS", "pIS": "IS/pIS"}  # fmt: skip


def _reform(tax: etree._Element | None, known: ReformItem | None) -> dict[str, str]:
    values = {name: value for name, path in _RATE_PATHS.items() if (value := text(tax, path))}
    if known is not None:
        read = {"vBC": known.base_cents, "vIBSUF": known.ibs_uf_cents, "vIBSMun": known.ibs_mun_cents,
                "vCBS": known.cbs_cents, "vIS": known.is_cents}  # fmt: skip
        values.update((name, cents_text(cents)) for name, cents in read.items() if cents is not None)
    return values


def _sum(*values: str) -> str:
    present = [v for v in values if v]
    if not present:
        return ""
    try:
        return str(sum((Decimal(v) for v in present), Decimal(0)))
    except InvalidOperation:
        return present[0]


@dataclass(frozen=True, slots=True)
class Volumes:
    quantity: str = ""
    species: str = ""
    brand: str = ""
    numbering: str = ""
    gross: str = ""
    net: str = ""


def _volumes(transp: etree._Element | None) -> Volumes:
    vols = [] if transp is None else transp.findall(N + "vol")
    if not vols:
        return Volumes()

    def joined(tag: str) -> str:
        seen: list[str] = []
        for vol in vols:
            value = text(vol, tag)
            if value and value not in seen:
                seen.append(value)
        return " / ".join(seen)

    return Volumes(
        quantity=_sum(*(text(v, "qVol") for v in vols)),
        species=joined("esp"),
        brand=joined("marca"),
        numbering=joined("nVol"),
        gross=_sum(*(text(v, "pesoB") for v in vols)),
        net=_sum(*(text(v, "pesoL") for v in vols)),
    )


@dataclass(frozen=True, slots=True)
class Carrier:
    freight: str = ""  # modFrete
    party: Party = field(default_factory=Party)
    plate: str = ""
    plate_uf: str = ""
    antt: str = ""


@dataclass(frozen=True, slots=True)
class Nfe:
    key: str
    number: str
    series: str
    model: str
    issued: str  # dhEmi as written
    moved: str  # dhSaiEnt (or dSaiEnt + hSaiEnt)
    direction: str  # tpNF: 0 entrada, 1 saída
    environment: str  # tpAmb: 1 produção, 2 homologação
    print_format: str  # tpImp: 1 retrato, 2 paisagem
    emission_type: str  # tpEmis
    operation: str  # natOp
    emitter: Party
    recipient: Party
    totals: dict[str, str]
    ibscbs: dict[str, str]  # NT 2026.010 totals, only the tags present
    issqn: dict[str, str]
    carrier: Carrier
    volumes: Volumes
    invoice: dict[str, str]
    duplicates: tuple[tuple[str, str, str], ...]  # (nDup, dVenc, vDup)
    payments: tuple[tuple[str, str], ...]  # (tPag, vPag)
    items: tuple[Item, ...]
    fisco_info: str
    complementary_info: str
    protocol: str
    protocol_at: str
    protocol_status: str
    pickup: Party | None = None  # retirada: where the goods are collected, when not at the emitter
    delivery: Party | None = None  # entrega: where they go, when not to the recipient
    contingency: str = ""  # dhCont and xJust when issued in contingency
    cancelled: bool = False

    @property
    def homologation(self) -> bool:
        return self.environment == "2"

    @property
    def landscape(self) -> bool:
        return self.print_format == "2"

    @property
    def nt_2026_010(self) -> bool:
        return self.issued[:10] >= NT_2026_010_FROM


_TOTAL_TAGS = (
    "vBC vICMS vICMSDeson vFCPUFDest vICMSUFDest vICMSUFRemet vFCP vBCST vST vFCPST vFCPSTRet vProd vFrete "
    "vSeg vDesc vII vIPI vIPIDevol vPIS vCOFINS vOutro vNF vTotTrib"
).split()
_MONO_PATHS = {"vIBSMono": "IBSCBSTot/gMono/vIBSMono", "vCBSMono": "IBSCBSTot/gMono/vCBSMono"}


def _ibscbs(total: etree._Element | None, meta: NfeMeta) -> dict[str, str]:
    """NT 2026.010's totals, only those present: the reform reader's values, the monophasic ones
    (which it does not read) from ``total``."""
    reform = meta.reform or ReformValues()
    read = {
        "vBCIBSCBS": reform.base_cents, "vIBSUF": reform.ibs_uf_cents, "vIBSMun": reform.ibs_mun_cents,
        "vIBS": reform.ibs_cents, "vCredPresIBS": reform.ibs_presumed_cents, "vCBS": reform.cbs_cents,
        "vCredPresCBS": reform.cbs_presumed_cents, "vIS": reform.is_cents, "vNFTot": meta.total_nf_tot_cents,
    }  # fmt: skip
    found = {name: cents_text(cents) for name, cents in read.items() if cents is not None}
    found.update((name, value) for name, path in _MONO_PATHS.items() if (value := text(total, path)))
    return found


def read_meta(root: etree._Element) -> NfeMeta:
    """The NF-e reader's reading of ``root`` (the same the capture stores), or a :class:`PdfError`."""
    try:
        meta = read_nfe_root(root, allow_unknown=False)
    except DocumentError as error:
        raise PdfError(f"Não foi possível gerar o DANFE: {error.message}") from error
    if not isinstance(meta, NfeMeta):
        raise PdfError("Não foi possível gerar o DANFE: o XML não é uma NF-e.")
    return meta


def read_nfe(root: etree._Element, events: Sequence[bytes] = ()) -> Nfe:
    """The DANFE's values from a parsed nfeProc or NFe root: what the NF-e reader
    (``app.documents.nfe``) reads, and the boxes only a DANFE prints from the tree."""
    meta = read_meta(root)
    nfe = root if root.tag == N + "NFe" else _find(root, "NFe")
    inf = _find(nfe, "infNFe")
    ide = _find(inf, "ide")
    total = _find(inf, "total")
    icms_tot = _find(total, "ICMSTot")
    transp = _find(inf, "transp")
    transporta = _find(transp, "transporta")
    vehicle = _find(transp, "veicTransp")
    cobr = _find(inf, "cobr")
    fat = _find(cobr, "fat")
    duplicates = tuple(
        (text(d, "nDup"), text(d, "dVenc"), text(d, "vDup")) for d in ([] if cobr is None else cobr.findall(N + "dup"))
    )
    pag = _find(inf, "pag")
    payments = tuple((text(p, "tPag"), text(p, "vPag")) for p in ([] if pag is None else pag.findall(N + "detPag")))
    moved = text(ide, "dhSaiEnt")
    if not moved and text(ide, "dSaiEnt"):
        moved = f"{text(ide, 'dSaiEnt')}T{text(ide, 'hSaiEnt')}"
    issqn_tot = _find(total, "ISSQNtot")
    totals = {tag: text(icms_tot, tag) for tag in _TOTAL_TAGS}
    if meta.total_cents is not None:
        totals["vNF"] = cents_text(meta.total_cents)
    reform_items = {item.number: item for item in meta.reform.items} if meta.reform is not None else {}
    key = meta.access_key
    return Nfe(
        key=key,
        number="" if meta.number is None else str(meta.number),
        series="" if meta.serie is None else str(meta.serie),
        model=meta.model,
        issued=formats.written(meta.issued_at),
        moved=moved,
        direction="" if meta.operation_type is None else str(meta.operation_type),
        environment="" if meta.environment is None else str(meta.environment),
        print_format=text(ide, "tpImp"),
        emission_type=text(ide, "tpEmis"),
        operation=text(ide, "natOp"),
        emitter=_party(_find(inf, "emit"), "enderEmit", meta.emitter),
        recipient=_party(_find(inf, "dest"), "enderDest", meta.recipient),
        totals=totals,
        ibscbs=_ibscbs(total, meta),
        issqn={tag: text(issqn_tot, tag) for tag in ("vServ", "vBC", "vISS")} if issqn_tot is not None else {},
        carrier=Carrier(
            freight=text(transp, "modFrete"),
            party=replace(_party(transporta, None, meta.transporter), street=text(transporta, "xEnder")),
            plate=text(vehicle, "placa"),
            plate_uf=text(vehicle, "UF"),
            antt=text(vehicle, "RNTC"),
        ),
        volumes=_volumes(transp),
        invoice={tag: text(fat, tag) for tag in ("nFat", "vOrig", "vDesc", "vLiq")} if fat is not None else {},
        duplicates=duplicates,
        payments=payments,
        items=tuple(_item(det, reform_items.get(to_int(det.get("nItem") or "") or 0)) for det in _dets(inf)),
        fisco_info=text(inf, "infAdic/infAdFisco"),
        complementary_info=text(inf, "infAdic/infCpl"),
        protocol=meta.protocol or "",
        protocol_at=formats.written(meta.authorised_at),
        protocol_status=meta.cstat or "",
        pickup=_party(_find(inf, "retirada"), None) if _find(inf, "retirada") is not None else None,
        delivery=_party(_find(inf, "entrega"), None) if _find(inf, "entrega") is not None else None,
        contingency=_contingency(ide),
        cancelled=meta.status is DocumentStatus.CANCELLED or is_cancelled(key, events),
    )


def _dets(inf: etree._Element | None) -> list[etree._Element]:
    return [] if inf is None else inf.findall(N + "det")


def _contingency(ide: etree._Element | None) -> str:
    if text(ide, "tpEmis") in ("", "1"):
        return ""
    when = text(ide, "dhCont")
    shown = f"{when[8:10]}/{when[5:7]}/{when[:4]} {when[11:19]}" if len(when) >= 19 else when
    return f"EMITIDA EM CONTINGÊNCIA (tpEmis {text(ide, 'tpEmis')}) em {shown}: {text(ide, 'xJust')}".strip()


def is_cancelled(key: str, events: Sequence[bytes]) -> bool:
    """A cancellation (110111) of this key among the stored events, not refused by the SEFAZ."""
    return registered_cancellation(key, events, read_nfe_root)


def parse_nfe(xml: bytes, events: Sequence[bytes] = ()) -> Nfe:
    return read_nfe(parsed(xml, "DANFE"), events)
