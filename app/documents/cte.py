"""Read one distributed CT-e document or event into metadata (rule book §5.4, protocol.md §2).

Knows ``cteProc`` (CT-e, model 57) and ``cteOSProc`` (CT-e OS, model 67), the bare signed
``CTe``/``CTeOS`` of an import, and ``procEventoCTe``, in layouts 3.00 and 4.00 (the fields read
here did not move between them). A GTV-e (model 64) or any other root is returned as
``UnknownMeta``: the caller keeps it and shows it, never drops it. Tolerant like the NF-e reader:
a faulty CNPJ or access key is a warning, not a refusal, because the government distributed it.

    meta = read_cte_document(inflated_bytes, schema="procCTe_v4.00.xsd")
"""

from __future__ import annotations

from lxml import etree

from app.core.documents import DocumentKind, DocumentStatus, PartyRole
from app.core.keys import UF_BY_CODE
from app.documents.classify import split_tag
from app.documents.kids import Kids, leaf_text
from app.documents.model import CteMeta, DocumentDataError, DocumentMeta, EventMeta, PartyInfo, UnknownMeta
from app.documents.reform import read_cte_reform
from app.documents.values import dated, party_doc, to_cents, to_int
from app.safexml import parse_xml

CTE_NS = "http://www.portalfiscal.inf.br/cte"
_P = f"{{{CTE_NS}}}"

_DOCUMENT_ROOTS = {"cteProc": "CTe", "CTe": "CTe", "cteOSProc": "CTeOS", "CTeOS": "CTeOS"}
_EVENT_ROOTS = ("procEventoCTe", "eventoCTe")
_AUTHORISED_CSTAT = frozenset({"100", "150"})
_DENIED_CSTAT = frozenset({"110", "301", "302"})
_CANCELLED_CSTAT = frozenset({"101", "151", "135"})
# toma3/toma (and toma03 of old layouts): who among the four pays the service.
TAKER_TAGS = {"0": "rem", "1": "exped", "2": "receb", "3": "dest"}  # toma3/toma: the party named
MODAL_LABELS = {
    "01": "Rodoviário",
    "02": "Aéreo",
    "03": "Aquaviário",
    "04": "Ferroviário",
    "05": "Dutoviário",
    "06": "Multimodal",
}


def read_cte_document(data: bytes, schema: str | None = None) -> DocumentMeta:
    """Metadata of one CT-e document or event; ``UnknownMeta`` for anything else (GTV-e included).

    Raises ``XmlRejected`` for bytes that are not acceptable XML and ``DocumentDataError`` for a
    CT-e without an access key.
    """
    root = parse_xml(data)
    return read_cte_root(root, schema)


def read_cte_root(root: etree._Element, schema: str | None = None) -> DocumentMeta:
    tag = root.tag if isinstance(root.tag, str) else ""
    namespace, local = split_tag(tag)
    version = root.get("versao")
    if namespace == CTE_NS and local in _DOCUMENT_ROOTS:
        return _document(root, local, version)
    if namespace == CTE_NS and local in _EVENT_ROOTS:
        return _event(root, local, version)
    return UnknownMeta(root=local, namespace=namespace, version=version, schema=schema)


# ---------------------------------------------------------------- helpers


def _child(element: etree._Element | None, *path: str) -> etree._Element | None:
    for name in path:
        if element is None:
            return None
        element = element.find(_P + name)
    return element


def _text(element: etree._Element | None, *path: str) -> str:
    found = _child(element, *path)
    return "" if found is None else leaf_text(found)


class _Kids(Kids):
    """A CT-e container's children (``app.documents.kids``)."""

    __slots__ = ()
    PREFIX = _P


def _opt(text: str) -> str | None:
    return text or None


def _party(element: etree._Element | None, role: PartyRole, warnings: list[str]) -> PartyInfo | None:
    if element is None:
        return None
    kids = _Kids(element)
    doc = party_doc(kids.text("CNPJ"), kids.text("CPF"), _ROLE_LABEL[role], warnings)
    uf = kids.text("UF") or _address_uf(kids)
    return PartyInfo(role, doc, _opt(kids.text("xNome")), _opt(kids.text("IE")), _opt(uf))


def _address_uf(kids: _Kids) -> str:
    for name in kids.names():
        if name.startswith("ender"):
            return kids.kids(name).text("UF")
    return ""


_ROLE_LABEL = {
    PartyRole.EMITTER: "Emitente",
    PartyRole.SENDER: "Remetente",
    PartyRole.SHIPPER: "Expedidor",
    PartyRole.RECEIVER: "Recebedor",
    PartyRole.RECIPIENT: "Destinatário",
    PartyRole.TAKER: "Tomador",
}


def _uf(cuf: str, key: str, warnings: list[str]) -> str | None:
    """The emitter's UF by ide/cUF, else by the key's first two digits."""
    uf = UF_BY_CODE.get(cuf)
    if uf is None:
        uf = UF_BY_CODE.get(key[:2])
        if cuf:
            warnings.append(f"Código de UF inválido em ide/cUF: {cuf!r}.")
    return uf


def _status(cstat: str | None) -> DocumentStatus:
    if cstat in _AUTHORISED_CSTAT:
        return DocumentStatus.AUTHORISED
    if cstat in _CANCELLED_CSTAT:
        return DocumentStatus.CANCELLED
    if cstat in _DENIED_CSTAT:
        return DocumentStatus.DENIED
    return DocumentStatus.UNKNOWN


def _key_of(inf: etree._Element, protocol_key: str, warnings: list[str]) -> str:
    identifier = (inf.get("Id") or "").strip().upper()
    key = identifier[3:] if identifier.startswith("CTE") else identifier
    if not key:
        key = protocol_key.strip().upper()
    if not key:
        raise DocumentDataError("CT-e sem chave de acesso (infCte/@Id).")
    if len(key) != 44 or not key.isdigit():
        warnings.append(f"Chave de acesso fora do padrão de 44 dígitos: {key}.")
    if protocol_key and protocol_key != key:
        warnings.append(f"A chave do protocolo ({protocol_key}) difere da do CT-e ({key}).")
    return key


# ---------------------------------------------------------------- documents


def _document(root: etree._Element, local: str, version: str | None) -> CteMeta:
    warnings: list[str] = []
    signed = root if local in ("CTe", "CTeOS") else _child(root, _DOCUMENT_ROOTS[local])
    inf_element = _child(signed, "infCte")
    if inf_element is None:
        raise DocumentDataError(f"<{local}> sem o grupo infCte.")
    inf = _Kids(inf_element)
    prot = _Kids(_child(root, "protCTe", "infProt"))
    ide = inf.kids("ide")
    key = _key_of(inf_element, prot.text("chCTe"), warnings)
    cstat = _opt(prot.text("cStat"))
    taker_code, taker = _takers(inf, ide, warnings)
    emitter = _party(inf.get("emit"), PartyRole.EMITTER, warnings)
    sender = _party(inf.get("rem"), PartyRole.SENDER, warnings)
    shipper = _party(inf.get("exped"), PartyRole.SHIPPER, warnings)
    receiver = _party(inf.get("receb"), PartyRole.RECEIVER, warnings)
    recipient = _party(inf.get("dest"), PartyRole.RECIPIENT, warnings)
    if taker is None and taker_code in TAKER_TAGS:
        named = {"rem": sender, "exped": shipper, "receb": receiver, "dest": recipient}[TAKER_TAGS[taker_code]]
        if named is not None:
            taker = PartyInfo(PartyRole.TAKER, named.doc, named.name, named.ie, named.uf)
    model = ide.text("mod") or key[20:22]
    has_protocol = prot.element is not None
    return CteMeta(
        kind=DocumentKind.CTE_PROC,
        root=local,
        version=version or inf_element.get("versao"),
        access_key=key,
        uf=_uf(ide.text("cUF"), key, warnings),
        model=model,
        serie=to_int(ide.text("serie")),
        number=to_int(ide.text("nCT")),
        issued_at=dated(ide.text("dhEmi"), "Data de emissão", warnings),
        cte_type=_opt(ide.text("tpCTe")),
        modal=_opt(ide.text("modal")),
        emitter=emitter,
        sender=sender,
        shipper=shipper,
        receiver=receiver,
        recipient=recipient,
        taker=taker,
        taker_code=taker_code,
        authorised=_authorised(inf_element),
        nfe_keys=_carried_keys(inf_element),
        total_cents=to_cents(inf.kids("vPrest").text("vTPrest")),
        environment=to_int(ide.text("tpAmb")),
        protocol=_opt(prot.text("nProt")),
        authorised_at=dated(prot.text("dhRecbto"), "Data de autorização", warnings) if has_protocol else None,
        cstat=cstat,
        reason=_opt(prot.text("xMotivo")),
        status=_status(cstat) if has_protocol else DocumentStatus.UNKNOWN,
        situation=_opt(prot.text("xMotivo")),
        reform=read_cte_reform(inf_element, CTE_NS, warnings),
        warnings=tuple(warnings),
    )


def _authorised(inf: etree._Element) -> tuple[str, ...]:
    found = []
    for element in inf.iterfind(_P + "autXML"):
        kids = _Kids(element)
        doc = kids.text("CNPJ") or kids.text("CPF")
        if doc:
            found.append(doc)
    return tuple(found)


def _takers(inf: _Kids, ide: _Kids, warnings: list[str]) -> tuple[str | None, PartyInfo | None]:
    """(toma code, the payer when it is its own party): toma3/toma03 name one of the four,
    toma4 (and the CT-e OS ``toma``) carry the party."""
    for name in ("toma3", "toma03"):
        code = ide.kids(name).text("toma")
        if code:
            return code, None
    toma4 = ide.get("toma4")
    if toma4 is not None:
        return _opt(_Kids(toma4).text("toma")) or "4", _party(toma4, PartyRole.TAKER, warnings)
    toma_os = inf.get("toma")  # CT-e OS
    if toma_os is not None:
        return "4", _party(toma_os, PartyRole.TAKER, warnings)
    return None, None


def _carried_keys(inf: etree._Element) -> tuple[str, ...]:
    """The NF-e carried (infCTeNorm/infDoc/infNFe/chave), in order, each once."""
    seen: dict[str, None] = {}
    for element in inf.iterfind(f".//{_P}infNFe/{_P}chave"):
        key = "".join(element.itertext()).strip().upper()
        if key:
            seen.setdefault(key, None)
    return tuple(seen)


# ---------------------------------------------------------------- events


def _event(root: etree._Element, local: str, version: str | None) -> EventMeta:
    warnings: list[str] = []
    evento = root if local == "eventoCTe" else _child(root, "eventoCTe")
    inf = _child(evento, "infEvento")
    if inf is None:
        raise DocumentDataError(f"<{local}> sem o grupo infEvento.")
    ret = _child(root, "retEventoCTe", "infEvento")
    key = _text(inf, "chCTe").upper()
    if not key:
        raise DocumentDataError("Evento de CT-e sem a chave do CT-e (chCTe).")
    tp_evento = _text(inf, "tpEvento")
    if not tp_evento:
        raise DocumentDataError(f"Evento do CT-e {key} sem tipo (tpEvento).")
    seq = to_int(_text(inf, "nSeqEvento"))
    detail = _child(inf, "detEvento")
    description = _detail_text(detail, "descEvento") or _opt(_text(ret, "xEvento"))
    return EventMeta(
        kind=DocumentKind.PROC_EVENTO_CTE,
        root=local,
        version=version,
        access_key=key,
        tp_evento=tp_evento,
        n_seq_evento=seq if seq is not None else 1,
        description=description,
        author_doc=_opt((_text(inf, "CNPJ") or _text(inf, "CPF")).upper()),
        c_orgao=_opt(_text(inf, "cOrgao")),
        event_at=dated(_text(inf, "dhEvento"), "Data do evento", warnings),
        protocol=_opt(_text(ret, "nProt")),
        cstat=_opt(_text(ret, "cStat")),
        reason=_opt(_text(ret, "xMotivo")),
        registered_at=dated(_text(ret, "dhRegEvento"), "Data de registro", warnings) if ret is not None else None,
        environment=to_int(_text(inf, "tpAmb")),
        justification=_detail_text(detail, "xJust"),
        warnings=tuple(warnings),
    )


def _detail_text(detail: etree._Element | None, name: str) -> str | None:
    """A field of the event's detail, whatever its group (evCancCTe, evCCeCTe, ...)."""
    if detail is None:
        return None
    for element in detail.iterfind(f".//{_P}{name}"):
        text = "".join(element.itertext()).strip()
        if text:
            return text
    return None
