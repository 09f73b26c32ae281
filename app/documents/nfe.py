"""Read one distributed NF-e document or event into metadata (rule book §4.4, protocol.md §1.5-1.6).

The hot path of NF-e capture: one strict parse through ``app.safexml``, one dictionary lookup on
the root tag, then each container's children read once into a dictionary by tag (``_Kids``),
whose look-ups give what the XPath ``string(n:a/n:b)`` of each field gives, as plain ``str``
(nothing keeps the tree alive). No schema validation and no re-serialisation: the caller keeps
the original bytes; this returns metadata only.

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
from app.documents.reform import read_nfe_reform
from app.documents.values import checked_key, tax_id_problem, to_cents, to_datetime, to_int
from app.safexml import parse_xml

_NS = {"n": NFE_NS}
_PREFIX = f"{{{NFE_NS}}}"


class _Tags(dict[str, str]):
    """Local name -> namespace-qualified tag, built once per name: a look-up by a literal (whose
    hash Python keeps) instead of a new string to build and hash on every field read."""

    def __missing__(self, local: str) -> str:
        tag = self[local] = _PREFIX + local
        return tag


_TAG = _Tags()

# XPath ``string()`` of one element: the concatenated text of its descendants. Only needed for
# an element with children (a comment or a stray element inside a field); a leaf's ``.text`` is it.
_STRING = etree.XPath("string()", smart_strings=False)
# A node-set of text nodes; one evaluation per nfeProc.
_AUT_XML = etree.XPath("n:autXML/n:CNPJ/text() | n:autXML/n:CPF/text()", namespaces=_NS, smart_strings=False)


def _string(element: etree._Element) -> str:
    if len(element) == 0:  # no child node at all (comments count): the text is the whole value
        text = element.text
        return "" if text is None else str(text)
    return cast(str, _STRING(element))


def _first_path(element: etree._Element, path: tuple[str, ...]) -> etree._Element | None:
    """The first element at ``n:a/n:b/...`` below ``element`` in document order (what XPath's
    first node of that node-set is), searching every ``a`` when there are several."""
    if not path:
        return element
    for child in element.iterchildren(_TAG[path[0]]):
        found = _first_path(child, path[1:])
        if found is not None:
            return found
    return None


class _Kids:
    """The children of one element by tag, read once: look-ups give exactly what the compiled
    XPath ``string(n:a/n:b)`` gave (first match in document order, "" when absent), at a
    fraction of the cost of one XPath evaluation per field."""

    __slots__ = ("_first", "_repeated", "element")

    def __init__(self, element: etree._Element | None, only: tuple[str, ...] = ()) -> None:
        """``only``: the qualified tags looked up later, when they are few among many children
        (infNFe, whose items app.documents.reform reads): the others are never made into Python
        objects, and a look-up of any other tag finds nothing."""
        self.element = element
        first: dict[Any, etree._Element] = {}
        repeated: set[Any] = set()
        if element is not None:
            for child in element.iterchildren(*only) if only else element:
                tag = child.tag
                if tag in first:
                    repeated.add(tag)
                else:
                    first[tag] = child
        self._first = first
        self._repeated = repeated

    def first(self, *path: str) -> etree._Element | None:
        tag = _TAG[path[0]]
        if len(path) == 1:
            return self._first.get(tag)
        if tag in self._repeated:  # several containers: the first one may lack the field
            return _first_path(cast(etree._Element, self.element), path)
        container = self._first.get(tag)
        return None if container is None else _first_path(container, path[1:])

    def text(self, *path: str) -> str:
        # The hot call (a few dozen per document): the one-step case and _string inlined.
        node = self._first.get(_TAG[path[0]]) if len(path) == 1 else self.first(*path)
        if node is None:
            return ""
        if len(node) == 0:
            return node.text or ""
        return cast(str, _STRING(node))

    def sub(self, local: str) -> _Kids | _Below:
        """Look-ups relative to the child ``local`` (as XPath ``n:local/...`` paths)."""
        tag = _TAG[local]
        if tag in self._repeated:
            return _Below(cast(etree._Element, self.element), (local,))
        return _Kids(self._first.get(tag))


class _Below:
    """``_Kids``'s look-ups under a repeated container: every path searched from ``element``."""

    __slots__ = ("element", "prefix")

    def __init__(self, element: etree._Element, prefix: tuple[str, ...]) -> None:
        self.element = element
        self.prefix = prefix

    def first(self, *path: str) -> etree._Element | None:
        return _first_path(self.element, self.prefix + path)

    def text(self, *path: str) -> str:
        node = self.first(*path)
        return "" if node is None else _string(node)

    def sub(self, local: str) -> _Below:
        return _Below(self.element, (*self.prefix, local))


# What _nfe_proc looks up among infNFe's children (its items, up to 990, are read by app.documents.reform).
_INF_PARTS = tuple(_TAG[local] for local in ("ide", "emit", "dest", "total", "transp"))
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


def read_nfe_document(data: bytes, schema: str | None = None, *, allow_unknown: bool = True) -> DocumentMeta:
    """Parse ``data`` (the inflated bytes of one docZip) safely and read its metadata.

    ``schema`` (the docZip attribute) is only a hint: the root element decides. Raises the
    ``app.safexml`` errors for bytes that are not acceptable XML, :class:`DocumentDataError` for a
    known document with an invalid key, event type or sequence, and, only when ``allow_unknown``
    is False, :class:`UnsupportedDocument` for an unknown root (else an :class:`UnknownMeta`).
    """
    return read_nfe_root(parse_xml(data), schema, allow_unknown=allow_unknown)


def read_nfe_root(root: etree._Element, schema: str | None = None, *, allow_unknown: bool = True) -> DocumentMeta:
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


def _party(kids: _Kids | _Below, role: PartyRole, uf_path: tuple[str, ...], warnings: list[str]) -> PartyInfo:
    """emit, dest or transporta: CNPJ or CPF, name, IE, UF (at ``uf_path``) and a foreigner's id."""
    foreign = kids.first("idEstrangeiro")
    return PartyInfo(
        role,
        _doc(kids.text("CNPJ"), kids.text("CPF"), role, warnings),
        _opt(kids.text("xNome")),
        ie=_opt(kids.text("IE")),
        uf=_opt(kids.text(*uf_path)),
        foreign_id=(foreign.text or "").strip() if foreign is not None else None,
    )


def _check_issuer(key: str, emitter: PartyInfo | None, warnings: list[str]) -> None:
    if emitter is None or emitter.doc is None:
        return
    if key[6:20] != emitter.doc.rjust(14, "0"):
        warnings.append(f"A chave indica o emitente {key[6:20]}, mas o XML informa {emitter.doc}.")


# ---------------------------------------------------------------- NF-e


def _res_nfe(root: etree._Element, warnings: list[str]) -> NfeMeta:
    res = _Kids(root)
    key = checked_key(res.text("chNFe"), "Resumo de NF-e (resNFe)")
    emitter = PartyInfo(
        PartyRole.EMITTER,
        _doc(res.text("CNPJ"), res.text("CPF"), PartyRole.EMITTER, warnings),
        _opt(res.text("xNome")),
        ie=_opt(res.text("IE")),
        uf=UF_BY_CODE.get(key[:2]),
    )
    _check_issuer(key, emitter, warnings)
    situation = _opt(res.text("cSitNFe"))
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
        issued_at=_when(res.text("dhEmi"), "Data de emissão", warnings),
        emitter=emitter,
        total_cents=_cents(res.text("vNF"), "Valor total (vNF)", warnings),
        operation_type=to_int(res.text("tpNF")),
        protocol=_opt(res.text("nProt")),
        authorised_at=_when(res.text("dhRecbto"), "Data de autorização", warnings),
        situation=situation,
        dig_val=_opt(res.text("digVal")),
        status=status,
        warnings=tuple(warnings),
    )


def _nfe_proc(root: etree._Element, warnings: list[str]) -> NfeMeta:
    bare = root.tag.endswith("}NFe")
    top = _Kids(root)
    inf = top.first("infNFe") if bare else top.first("NFe", "infNFe")
    if inf is None:
        raise DocumentDataError("NF-e sem o grupo infNFe: documento incompleto.")
    prot_element = None if bare else top.first("protNFe", "infProt")
    prot = _Kids(prot_element) if prot_element is not None else None
    id_attr = (inf.get("Id") or "").strip()
    prot_key = prot.text("chNFe").strip().upper() if prot is not None else ""
    key = checked_key(id_attr[3:] if id_attr[:3].upper() == "NFE" else (id_attr or prot_key), "NF-e")
    if prot_key and prot_key != key:
        raise DocumentDataError(f"O protocolo de autorização é da chave {prot_key}, não da NF-e {key}.")

    nfe = _Kids(inf, _INF_PARTS)
    emitter = _party(nfe.sub("emit"), PartyRole.EMITTER, ("enderEmit", "UF"), warnings)
    _check_issuer(key, emitter, warnings)
    dest_element = nfe.first("dest")
    recipient = (
        _party(_Kids(dest_element), PartyRole.RECIPIENT, ("enderDest", "UF"), warnings)
        if dest_element is not None
        else None
    )
    carrier_element = nfe.first("transp", "transporta")
    transporter = (
        _party(_Kids(carrier_element), PartyRole.TRANSPORTER, ("UF",), warnings)
        if carrier_element is not None
        else None
    )
    authorised = tuple(
        doc
        for doc in (_doc(text, "", PartyRole.AUTHORISED, warnings) for text in cast(list[str], _AUT_XML(inf)))
        if doc is not None
    )
    ide = nfe.sub("ide")
    dh_emi = ide.text("dhEmi")
    issued_at = _when(dh_emi or ide.text("dEmi"), "Data de emissão", warnings)

    cstat = _opt(prot.text("cStat")) if prot is not None else None
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
    environment = to_int(ide.text("tpAmb"))
    total = nfe.sub("total")
    purpose = _opt(ide.text("finNFe"))
    total_element = total.element if isinstance(total, _Kids) else nfe.first("total")
    return NfeMeta(
        kind=DocumentKind.NFE_PROC,
        root="NFe" if bare else "nfeProc",
        version=root.get("versao") or inf.get("versao"),
        access_key=key,
        uf=UF_BY_CODE.get(key[:2]),
        model=_opt(ide.text("mod")) or key[20:22],
        serie=to_int(ide.text("serie")),
        number=to_int(ide.text("nNF")),
        issued_at=issued_at,
        emitter=emitter,
        recipient=recipient,
        transporter=transporter,
        authorised=authorised,
        total_cents=_cents(total.text("ICMSTot", "vNF"), "Valor total (vNF)", warnings),
        total_nf_tot_cents=_cents(total.text("vNFTot"), "Valor total com IBS/CBS (vNFTot)", warnings),
        operation_type=to_int(ide.text("tpNF")),
        environment=environment if environment is not None or prot is None else to_int(prot.text("tpAmb")),
        protocol=_opt(prot.text("nProt")) if prot is not None else None,
        authorised_at=_when(prot.text("dhRecbto"), "Data de autorização", warnings) if prot is not None else None,
        cstat=cstat,
        reason=_opt(prot.text("xMotivo")) if prot is not None else None,
        dig_val=_opt(prot.text("digVal")) if prot is not None else None,
        status=status,
        purpose=purpose,
        referenced_keys=_referenced(ide) if ide.first("NFref") is not None else (),
        reform=read_nfe_reform(inf, total_element, NFE_NS, warnings)
        if total.first("IBSCBSTot") is not None or total.first("ISTot") is not None
        else None,
        warnings=tuple(warnings),
    )


def _referenced(ide: _Kids | _Below) -> tuple[str, ...]:
    """The NF-e keys ``ide/NFref/refNFe`` names, in order, once each (refNF, refECF... skipped)."""
    element = ide.element if isinstance(ide, _Kids) else None
    if element is None:
        return ()
    keys = (_string(ref).strip().upper() for ref in element.iterfind(f"{_PREFIX}NFref/{_PREFIX}refNFe"))
    return tuple(dict.fromkeys(key for key in keys if key))


# ---------------------------------------------------------------- events


def _event(root: etree._Element, kind: DocumentKind, warnings: list[str]) -> EventMeta:
    ret: _Kids | None
    if kind is DocumentKind.RES_EVENTO:
        inf_element, ret, root_name = root, None, "resEvento"
    else:
        bare = root.tag.endswith("}evento")
        top = _Kids(root)
        found = top.first("infEvento") if bare else top.first("evento", "infEvento")
        if found is None:
            raise DocumentDataError("Evento de NF-e sem o grupo infEvento: documento incompleto.")
        inf_element = found
        ret_element = None if bare else top.first("retEvento", "infEvento")
        ret = _Kids(ret_element) if ret_element is not None else None
        root_name = "evento" if bare else "procEventoNFe"
        if ret is None:
            warnings.append("Evento sem o retorno de registro (retEvento).")

    inf = _Kids(inf_element)
    what = f"Evento de NF-e ({root_name})"
    key = checked_key(inf.text("chNFe"), what)
    tp_evento = inf.text("tpEvento").strip()
    if not (len(tp_evento) == 6 and tp_evento.isdigit()):
        raise DocumentDataError(f"{what} com tipo de evento inválido: {tp_evento!r} (esperados 6 dígitos).")
    seq_text = inf.text("nSeqEvento")
    seq = to_int(seq_text)
    if seq is None or not 1 <= seq <= 99:
        raise DocumentDataError(f"{what} com sequência inválida (nSeqEvento): {seq_text!r}.")
    author = _doc(inf.text("CNPJ"), inf.text("CPF"), PartyRole.EMITTER, warnings)

    if ret is None:  # resEvento (its own protocol) or a bare evento (none)
        registered_text = inf.text("dhRecbto")
        protocol = _opt(inf.text("nProt"))
        description = _opt(inf.text("xEvento")) or _opt(inf.text("detEvento", "descEvento"))
        cstat = reason = recipient = None
        environment = to_int(inf.text("tpAmb"))
    else:
        ret_key = ret.text("chNFe").strip().upper()
        if ret_key and ret_key != key:
            warnings.append(f"O retorno do evento cita a chave {ret_key}, e o evento a chave {key}.")
        registered_text = ret.text("dhRegEvento")
        protocol = _opt(ret.text("nProt"))
        description = _opt(inf.text("detEvento", "descEvento")) or _opt(ret.text("xEvento"))
        cstat = _opt(ret.text("cStat"))
        reason = _opt(ret.text("xMotivo"))
        recipient = _opt((ret.text("CNPJDest") or ret.text("CPFDest")).upper())
        environment = to_int(inf.text("tpAmb")) or to_int(ret.text("tpAmb"))
    return EventMeta(
        kind=kind,
        root=root_name,
        version=root.get("versao"),
        access_key=key,
        tp_evento=tp_evento,
        n_seq_evento=seq,
        description=description,
        author_doc=author,
        c_orgao=_opt(inf.text("cOrgao")),
        event_at=_when(inf.text("dhEvento"), "Data do evento", warnings),
        protocol=protocol,
        cstat=cstat,
        reason=reason,
        registered_at=_when(registered_text, "Data de registro do evento", warnings),
        environment=environment,
        justification=_opt(inf.text("detEvento", "xJust")),
        correction=_opt(inf.text("detEvento", "xCorrecao")),
        recipient_doc=recipient,
        warnings=tuple(warnings),
    )
