"""Read one distributed NF-e document or event into metadata (rule book §4.4, protocol.md §1.5-1.6).

The hot path of NF-e capture: one strict parse through ``app.safexml``, one dictionary lookup on
the root tag, then module-level compiled XPath ``string()`` expressions with plain-``str``
results (``smart_strings=False``, so nothing keeps the tree alive). No schema validation and no
re-serialisation: the caller keeps the original bytes; this returns metadata only.

    meta = read_nfe_document(inflated_bytes, schema="resNFe_v1.01.xsd")
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from lxml import etree

from app.core.documents import DocumentKind, DocumentStatus, PartyRole
from app.core.keys import UF_BY_CODE
from app.documents.classify import NFE_NS, classify, kind_from_schema, split_tag
from app.documents.model import (
    DocumentDataError,
    DocumentMeta,
    EventMeta,
    NfeMeta,
    PartyInfo,
    UnknownMeta,
    UnsupportedDocument,
)
from app.documents.values import checked_key, tax_id_problem, to_cents, to_datetime, to_int
from app.safexml import parse_xml

_NS = {"n": NFE_NS}


def _s(path: str) -> Any:
    return etree.XPath(f"string({path})", namespaces=_NS, smart_strings=False)


def _nodes(path: str) -> Any:
    return etree.XPath(path, namespaces=_NS, smart_strings=False)


# ---- nfeProc / NFe: containers, then paths relative to infNFe and protNFe/infProt
_INF_NFE_OF_PROC = _nodes("n:NFe/n:infNFe")
_INF_NFE_OF_NFE = _nodes("n:infNFe")
_INF_PROT = _nodes("n:protNFe/n:infProt")
_IDE_MOD = _s("n:ide/n:mod")
_IDE_SERIE = _s("n:ide/n:serie")
_IDE_NNF = _s("n:ide/n:nNF")
_IDE_DHEMI = _s("n:ide/n:dhEmi")
_IDE_DEMI = _s("n:ide/n:dEmi")
_IDE_TPNF = _s("n:ide/n:tpNF")
_IDE_TPAMB = _s("n:ide/n:tpAmb")
_EMIT_CNPJ = _s("n:emit/n:CNPJ")
_EMIT_CPF = _s("n:emit/n:CPF")
_EMIT_NAME = _s("n:emit/n:xNome")
_EMIT_IE = _s("n:emit/n:IE")
_EMIT_UF = _s("n:emit/n:enderEmit/n:UF")
_DEST = _nodes("n:dest")
_DEST_CNPJ = _s("n:CNPJ")
_DEST_CPF = _s("n:CPF")
_DEST_FOREIGN = _nodes("n:idEstrangeiro")
_DEST_NAME = _s("n:xNome")
_DEST_IE = _s("n:IE")
_DEST_UF = _s("n:enderDest/n:UF")
_TRANSPORTA = _nodes("n:transp/n:transporta")
_TRANSP_CNPJ = _s("n:CNPJ")
_TRANSP_CPF = _s("n:CPF")
_TRANSP_NAME = _s("n:xNome")
_TRANSP_IE = _s("n:IE")
_TRANSP_UF = _s("n:UF")
_AUT_XML = _nodes("n:autXML/n:CNPJ/text() | n:autXML/n:CPF/text()")
_TOTAL_VNF = _s("n:total/n:ICMSTot/n:vNF")
_TOTAL_VNFTOT = _s("n:total/n:vNFTot")
_PROT_CHNFE = _s("n:chNFe")
_PROT_NPROT = _s("n:nProt")
_PROT_DHRECBTO = _s("n:dhRecbto")
_PROT_CSTAT = _s("n:cStat")
_PROT_XMOTIVO = _s("n:xMotivo")
_PROT_DIGVAL = _s("n:digVal")
_PROT_TPAMB = _s("n:tpAmb")

# ---- resNFe and resEvento are flat: paths relative to the root
_CH_NFE = _s("n:chNFe")
_CNPJ = _s("n:CNPJ")
_CPF = _s("n:CPF")
_XNOME = _s("n:xNome")
_IE = _s("n:IE")
_DHEMI = _s("n:dhEmi")
_TPNF = _s("n:tpNF")
_VNF = _s("n:vNF")
_DIGVAL = _s("n:digVal")
_DHRECBTO = _s("n:dhRecbto")
_NPROT = _s("n:nProt")
_CSITNFE = _s("n:cSitNFe")
_CORGAO = _s("n:cOrgao")
_DHEVENTO = _s("n:dhEvento")
_TPEVENTO = _s("n:tpEvento")
_NSEQEVENTO = _s("n:nSeqEvento")
_XEVENTO = _s("n:xEvento")

# ---- procEventoNFe / evento: infEvento of the signed evento and of the retEvento
_EVENT_INF_OF_PROC = _nodes("n:evento/n:infEvento")
_EVENT_INF_OF_EVENTO = _nodes("n:infEvento")
_RET_INF = _nodes("n:retEvento/n:infEvento")
_TPAMB = _s("n:tpAmb")
_DESC_EVENTO = _s("n:detEvento/n:descEvento")
_XJUST = _s("n:detEvento/n:xJust")
_XCORRECAO = _s("n:detEvento/n:xCorrecao")
_RET_CSTAT = _s("n:cStat")
_RET_XMOTIVO = _s("n:xMotivo")
_RET_CNPJ_DEST = _s("n:CNPJDest")
_RET_CPF_DEST = _s("n:CPFDest")
_RET_DHREG = _s("n:dhRegEvento")

_AUTHORISED_CSTAT = frozenset({"100", "150"})
_DENIED_CSTAT = frozenset({"110", "205", "301", "302", "303"})
_CANCELLED_CSTAT = frozenset({"101", "151", "155"})
_SITUATION_STATUS = {"1": DocumentStatus.SUMMARY, "2": DocumentStatus.DENIED, "3": DocumentStatus.CANCELLED}
_ROLE_LABEL = {
    PartyRole.EMITTER: "Emitente",
    PartyRole.RECIPIENT: "Destinatário",
    PartyRole.TRANSPORTER: "Transportador",
    PartyRole.AUTHORISED: "Autorizado (autXML)",
}


def read_nfe_document(
    data: bytes, schema: str | None = None, *, allow_unknown: bool = True
) -> DocumentMeta:
    """Parse ``data`` (the inflated bytes of one docZip) safely and read its metadata.

    ``schema`` (the docZip attribute) is only a hint: the root element decides. Raises the
    ``app.safexml`` errors for bytes that are not acceptable XML, :class:`DocumentDataError` for a
    known document with an invalid key, event type or sequence, and, only when ``allow_unknown``
    is False, :class:`UnsupportedDocument` for an unknown root (else an :class:`UnknownMeta`).
    """
    return read_nfe_root(parse_xml(data), schema, allow_unknown=allow_unknown)


def read_nfe_root(
    root: etree._Element, schema: str | None = None, *, allow_unknown: bool = True
) -> DocumentMeta:
    """:func:`read_nfe_document` for a root element already parsed by ``app.safexml.parse_xml``."""
    kind = classify(root)
    warnings: list[str] = []
    hinted = kind_from_schema(schema)
    if hinted is not None and kind is not DocumentKind.UNKNOWN and hinted is not kind:
        warnings.append(f"O schema informado ({schema}) não corresponde ao documento ({kind.value}).")
    if kind is DocumentKind.RES_NFE:
        return _res_nfe(root, warnings)
    if kind is DocumentKind.NFE_PROC:
        return _nfe_proc(root, warnings)
    if kind is DocumentKind.RES_EVENTO or kind is DocumentKind.PROC_EVENTO_NFE:
        return _event(root, kind, warnings)
    ns, local = split_tag(root.tag if isinstance(root.tag, str) else "")
    if not allow_unknown:
        raise UnsupportedDocument(f"Documento não reconhecido como NF-e ou evento de NF-e (raiz <{local}>).")
    return UnknownMeta(root=local, namespace=ns, version=root.get("versao"), schema=schema)


# ---------------------------------------------------------------- helpers


def _opt(text: str) -> str | None:
    text = text.strip()
    return text or None


def _doc(cnpj: str, cpf: str, role: PartyRole, warnings: list[str]) -> str | None:
    doc = (cnpj or cpf).strip().upper()
    if not doc:
        return None
    problem = tax_id_problem(doc)
    if problem is not None:
        warnings.append(f"{_ROLE_LABEL[role]} com documento inválido ({doc}): {problem}")
    return doc


def _when(text: str, what: str, warnings: list[str]) -> datetime | None:
    value, as_written = to_datetime(text)
    if not as_written:
        if value is None:
            warnings.append(f"{what} ilegível: {text.strip()!r}.")
        else:
            warnings.append(f"{what} sem fuso horário ({text.strip()}); assumido -03:00.")
    return value


def _cents(text: str, what: str, warnings: list[str]) -> int | None:
    cents = to_cents(text)
    if cents is None and text.strip():
        warnings.append(f"{what} com valor ilegível: {text.strip()!r}.")
    return cents


def _check_issuer(key: str, emitter: PartyInfo | None, warnings: list[str]) -> None:
    if emitter is None or emitter.doc is None:
        return
    if key[6:20] != emitter.doc.rjust(14, "0"):
        warnings.append(f"A chave indica o emitente {key[6:20]}, mas o XML informa {emitter.doc}.")


# ---------------------------------------------------------------- NF-e


def _res_nfe(root: etree._Element, warnings: list[str]) -> NfeMeta:
    key = checked_key(_CH_NFE(root), "Resumo de NF-e (resNFe)")
    emitter = PartyInfo(
        PartyRole.EMITTER,
        _doc(_CNPJ(root), _CPF(root), PartyRole.EMITTER, warnings),
        _opt(_XNOME(root)),
        ie=_opt(_IE(root)),
        uf=UF_BY_CODE.get(key[:2]),
    )
    _check_issuer(key, emitter, warnings)
    situation = _opt(_CSITNFE(root))
    status = _SITUATION_STATUS.get(situation or "", DocumentStatus.UNKNOWN)
    if status is DocumentStatus.UNKNOWN:
        warnings.append(f"Situação da NF-e (cSitNFe) desconhecida: {situation!r}.")
    return NfeMeta(
        kind=DocumentKind.RES_NFE,
        root="resNFe",
        version=root.get("versao"),
        access_key=key,
        uf=UF_BY_CODE.get(key[:2]),
        model=key[20:22],
        serie=int(key[22:25]),
        number=int(key[25:34]),
        issued_at=_when(_DHEMI(root), "Data de emissão", warnings),
        emitter=emitter,
        total_cents=_cents(_VNF(root), "Valor total (vNF)", warnings),
        operation_type=to_int(_TPNF(root)),
        protocol=_opt(_NPROT(root)),
        authorised_at=_when(_DHRECBTO(root), "Data de autorização", warnings),
        situation=situation,
        dig_val=_opt(_DIGVAL(root)),
        status=status,
        warnings=tuple(warnings),
    )


def _nfe_proc(root: etree._Element, warnings: list[str]) -> NfeMeta:
    bare = root.tag.endswith("}NFe")
    infs = _INF_NFE_OF_NFE(root) if bare else _INF_NFE_OF_PROC(root)
    if not infs:
        raise DocumentDataError("NF-e sem o grupo infNFe: documento incompleto.")
    inf = infs[0]
    prots = () if bare else _INF_PROT(root)
    prot = prots[0] if prots else None
    id_attr = (inf.get("Id") or "").strip()
    prot_key = _PROT_CHNFE(prot).strip().upper() if prot is not None else ""
    key = checked_key(id_attr[3:] if id_attr[:3].upper() == "NFE" else (id_attr or prot_key), "NF-e")
    if prot_key and prot_key != key:
        raise DocumentDataError(f"O protocolo de autorização é da chave {prot_key}, não da NF-e {key}.")

    emitter = PartyInfo(
        PartyRole.EMITTER,
        _doc(_EMIT_CNPJ(inf), _EMIT_CPF(inf), PartyRole.EMITTER, warnings),
        _opt(_EMIT_NAME(inf)),
        ie=_opt(_EMIT_IE(inf)),
        uf=_opt(_EMIT_UF(inf)),
    )
    _check_issuer(key, emitter, warnings)
    recipient = None
    dests = _DEST(inf)
    if dests:
        dest = dests[0]
        foreign = _DEST_FOREIGN(dest)
        recipient = PartyInfo(
            PartyRole.RECIPIENT,
            _doc(_DEST_CNPJ(dest), _DEST_CPF(dest), PartyRole.RECIPIENT, warnings),
            _opt(_DEST_NAME(dest)),
            ie=_opt(_DEST_IE(dest)),
            uf=_opt(_DEST_UF(dest)),
            foreign_id=(foreign[0].text or "").strip() if foreign else None,
        )
    transporter = None
    carriers = _TRANSPORTA(inf)
    if carriers:
        carrier = carriers[0]
        transporter = PartyInfo(
            PartyRole.TRANSPORTER,
            _doc(_TRANSP_CNPJ(carrier), _TRANSP_CPF(carrier), PartyRole.TRANSPORTER, warnings),
            _opt(_TRANSP_NAME(carrier)),
            ie=_opt(_TRANSP_IE(carrier)),
            uf=_opt(_TRANSP_UF(carrier)),
        )
    authorised = tuple(
        doc
        for doc in (_doc(text, "", PartyRole.AUTHORISED, warnings) for text in cast(list[str], _AUT_XML(inf)))
        if doc is not None
    )
    dh_emi = _IDE_DHEMI(inf)
    issued_at = _when(dh_emi or _IDE_DEMI(inf), "Data de emissão", warnings)

    cstat = _opt(_PROT_CSTAT(prot)) if prot is not None else None
    if prot is None:
        status = DocumentStatus.UNKNOWN
        warnings.append("NF-e sem protocolo de autorização (protNFe).")
    elif cstat in _AUTHORISED_CSTAT:
        status = DocumentStatus.AUTHORISED
    elif cstat in _DENIED_CSTAT:
        status = DocumentStatus.DENIED
    elif cstat in _CANCELLED_CSTAT:
        status = DocumentStatus.CANCELLED
    else:
        status = DocumentStatus.UNKNOWN
    environment = to_int(_IDE_TPAMB(inf))
    return NfeMeta(
        kind=DocumentKind.NFE_PROC,
        root="NFe" if bare else "nfeProc",
        version=root.get("versao") or inf.get("versao"),
        access_key=key,
        uf=UF_BY_CODE.get(key[:2]),
        model=_opt(_IDE_MOD(inf)) or key[20:22],
        serie=to_int(_IDE_SERIE(inf)),
        number=to_int(_IDE_NNF(inf)),
        issued_at=issued_at,
        emitter=emitter,
        recipient=recipient,
        transporter=transporter,
        authorised=authorised,
        total_cents=_cents(_TOTAL_VNF(inf), "Valor total (vNF)", warnings),
        total_nf_tot_cents=_cents(_TOTAL_VNFTOT(inf), "Valor total com IBS/CBS (vNFTot)", warnings),
        operation_type=to_int(_IDE_TPNF(inf)),
        environment=environment if environment is not None or prot is None else to_int(_PROT_TPAMB(prot)),
        protocol=_opt(_PROT_NPROT(prot)) if prot is not None else None,
        authorised_at=_when(_PROT_DHRECBTO(prot), "Data de autorização", warnings) if prot is not None else None,
        cstat=cstat,
        reason=_opt(_PROT_XMOTIVO(prot)) if prot is not None else None,
        dig_val=_opt(_PROT_DIGVAL(prot)) if prot is not None else None,
        status=status,
        warnings=tuple(warnings),
    )


# ---------------------------------------------------------------- events


def _event(root: etree._Element, kind: DocumentKind, warnings: list[str]) -> EventMeta:
    if kind is DocumentKind.RES_EVENTO:
        inf, ret, root_name = root, None, "resEvento"
    else:
        bare = root.tag.endswith("}evento")
        infs = _EVENT_INF_OF_EVENTO(root) if bare else _EVENT_INF_OF_PROC(root)
        if not infs:
            raise DocumentDataError("Evento de NF-e sem o grupo infEvento: documento incompleto.")
        inf = infs[0]
        rets = () if bare else _RET_INF(root)
        ret = rets[0] if rets else None
        root_name = "evento" if bare else "procEventoNFe"
        if ret is None:
            warnings.append("Evento sem o retorno de registro (retEvento).")

    what = f"Evento de NF-e ({root_name})"
    key = checked_key(_CH_NFE(inf), what)
    tp_evento = _TPEVENTO(inf).strip()
    if not (len(tp_evento) == 6 and tp_evento.isdigit()):
        raise DocumentDataError(f"{what} com tipo de evento inválido: {tp_evento!r} (esperados 6 dígitos).")
    seq = to_int(_NSEQEVENTO(inf))
    if seq is None or not 1 <= seq <= 99:
        raise DocumentDataError(f"{what} com sequência inválida (nSeqEvento): {_NSEQEVENTO(inf)!r}.")
    author = _doc(_CNPJ(inf), _CPF(inf), PartyRole.EMITTER, warnings)

    if ret is None:  # resEvento (its own protocol) or a bare evento (none)
        registered_text = _DHRECBTO(inf)
        protocol = _opt(_NPROT(inf))
        description = _opt(_XEVENTO(inf)) or _opt(_DESC_EVENTO(inf))
        cstat = reason = recipient = None
        environment = to_int(_TPAMB(inf))
    else:
        ret_key = _CH_NFE(ret).strip().upper()
        if ret_key and ret_key != key:
            warnings.append(f"O retorno do evento cita a chave {ret_key}, e o evento a chave {key}.")
        registered_text = _RET_DHREG(ret)
        protocol = _opt(_NPROT(ret))
        description = _opt(_DESC_EVENTO(inf)) or _opt(_XEVENTO(ret))
        cstat = _opt(_RET_CSTAT(ret))
        reason = _opt(_RET_XMOTIVO(ret))
        recipient = _opt((_RET_CNPJ_DEST(ret) or _RET_CPF_DEST(ret)).upper())
        environment = to_int(_TPAMB(inf)) or to_int(_TPAMB(ret))
    return EventMeta(
        kind=kind,
        root=root_name,
        version=root.get("versao"),
        access_key=key,
        tp_evento=tp_evento,
        n_seq_evento=seq,
        description=description,
        author_doc=author,
        c_orgao=_opt(_CORGAO(inf)),
        event_at=_when(_DHEVENTO(inf), "Data do evento", warnings),
        protocol=protocol,
        cstat=cstat,
        reason=reason,
        registered_at=_when(registered_text, "Data de registro do evento", warnings),
        environment=environment,
        justification=_opt(_XJUST(inf)),
        correction=_opt(_XCORRECAO(inf)),
        recipient_doc=recipient,
        warnings=tuple(warnings),
    )
