"""NF-e events: procEventoNFe 1.00 (signed evento + retEvento) and resEvento 1.01.

Cancellation (110111) and CC-e (110110) are registered by the emitter's UF (cOrgao = its cUF);
the recipient's manifestations (2102x0) and other national events by the Ambiente Nacional
(cOrgao 91, protocol prefix 891), as in the real 2016 procEventoNFe.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from lxml import etree

from app.core.errors import CapturaError
from app.core.event_types import (
    CANCELLATION,
    CIENCIA,
    CONFIRMACAO,
    CORRECTION_LETTER,
    DESCONHECIMENTO,
    NAO_REALIZADA,
    event_name,
)
from app.sandbox.docgen.common import (
    XML_DECLARATION,
    Party,
    Signers,
    dt,
    esc,
    protocol_number,
    strip_declaration,
)
from app.sandbox.docgen.nfe import NFE_NS, GeneratedNFe
from app.sandbox.payload import Payload

DESCRIPTIONS: dict[str, str] = {
    "110111": "Cancelamento",
    "110110": "Carta de Correcao",
    "210200": "Confirmacao da Operacao",
    "210210": "Ciencia da Operacao",
    "210220": "Desconhecimento da Operacao",
    "210240": "Operacao nao Realizada",
    "610600": "Registro de Autorização de CT-e para a NF-e",
    "610614": "Registro de Autorização de MDF-e com CT-e",
    "790700": "Averbação para Exportação",
}
_N = f"{{{NFE_NS}}}"
MANIFESTATIONS = frozenset({CONFIRMACAO, CIENCIA, DESCONHECIMENTO, NAO_REALIZADA})
CCE_CONDITIONS = (
    "A Carta de Correcao e disciplinada pelo paragrafo 1o-A do art. 7o do Convenio S/N, de 15 de dezembro de "
    "1970 e pode ser utilizada para regularizacao de erro ocorrido na emissao de documento fiscal, desde "
    "que o "
    "erro nao esteja relacionado com: I - as variaveis que determinam o valor do imposto tais como: base de "
    "calculo, aliquota, diferenca de preco, quantidade, valor da operacao ou da prestacao; II - a correcao "
    "de "
    "dados cadastrais que implique mudanca do remetente ou do destinatario; III - a data de emissao ou de "
    "saida."
)
_STATUS_TEXT = {
    135: "Evento registrado e vinculado a NF-e",
    136: "Evento registrado, mas nao vinculado a NF-e",
}


@dataclass(frozen=True, slots=True, eq=False)
class GeneratedEvent:
    """A registered event (NF-e or CT-e) with its distribution forms."""

    key: str
    tp_evento: str
    seq: int
    proc_payload: Payload
    res_payload: Payload | None
    author: Party
    at: datetime
    protocol: str
    registered_at: datetime

    @property
    def proc_evento(self) -> bytes:
        return self.proc_payload.xml

    @property
    def res_evento(self) -> bytes | None:
        return self.res_payload.xml if self.res_payload is not None else None


def is_national(tp_evento: str) -> bool:
    """Registered by the Ambiente Nacional (cOrgao 91) rather than the emitter's UF."""
    return tp_evento in MANIFESTATIONS or tp_evento.startswith("6") or tp_evento.startswith("7")


def event_id(tp_evento: str, key: str, seq: int) -> str:
    return f"ID{tp_evento}{key}{seq:02d}"


def _detail(tp_evento: str, nfe: GeneratedNFe, justification: str | None, correction: str | None) -> str:
    desc = DESCRIPTIONS.get(tp_evento) or event_name(tp_evento)  # the reform's: as the NT names them
    body = f"<descEvento>{esc(desc)}</descEvento>"
    if tp_evento == CANCELLATION:
        if not justification:
            raise CapturaError("Cancelamento de NF-e exige justificativa (xJust).")
        body += f"<nProt>{nfe.protocol}</nProt><xJust>{esc(justification)}</xJust>"
    elif tp_evento == CORRECTION_LETTER:
        if not correction:
            raise CapturaError("Carta de Correção exige o texto da correção (xCorrecao).")
        body += f"<xCorrecao>{esc(correction)}</xCorrecao><xCondUso>{CCE_CONDITIONS}</xCondUso>"
    elif tp_evento == NAO_REALIZADA and not justification:
        raise CapturaError("Operação não Realizada exige justificativa (xJust).")
    elif tp_evento in (DESCONHECIMENTO, NAO_REALIZADA) and justification:
        body += f"<xJust>{esc(justification)}</xJust>"
    return f'<detEvento versao="1.00">{body}</detEvento>'


def build_nfe_event(
    signers: Signers,
    rng: random.Random,
    nfe: GeneratedNFe,
    *,
    tp_evento: str,
    author: Party,
    seq: int,
    at: datetime,
    justification: str | None = None,
    correction: str | None = None,
    tp_amb: int,
    protocol_seq: int,
) -> GeneratedEvent:
    c_orgao = "91" if is_national(tp_evento) else nfe.key[:2]
    inf_id = event_id(tp_evento, nfe.key, seq)
    evento = (
        f'<evento xmlns="{NFE_NS}" versao="1.00"><infEvento Id="{inf_id}"><cOrgao>{c_orgao}</cOrgao>'
        f"<tpAmb>{tp_amb}</tpAmb>{author.doc_xml()}<chNFe>{nfe.key}</chNFe><dhEvento>{dt(at)}</dhEvento>"
        f"<tpEvento>{tp_evento}</tpEvento><nSeqEvento>{seq}</nSeqEvento><verEvento>1.00</verEvento>"
        f"{_detail(tp_evento, nfe, justification, correction)}</infEvento></evento>"
    )
    signed = signers.sign_sefaz(evento, inf_id, author.doc, author.name)
    registered_at = at + timedelta(seconds=rng.randrange(1, 30))
    return _wrap(
        nfe.key,
        signed,
        author=author,
        tp_evento=tp_evento,
        seq=seq,
        at=at,
        registered_at=registered_at,
        c_orgao=c_orgao,
        tp_amb=tp_amb,
        c_stat=135,
        protocol_seq=protocol_seq,
        recipient_doc=author.doc if tp_evento in MANIFESTATIONS else nfe.recipient.doc,
    )


def nfe_event_from_signed(
    nfe_key: str,
    signed_evento: bytes,
    *,
    at: datetime,
    c_stat: int = 135,
    protocol_seq: int,
    author_name: str = "",
) -> GeneratedEvent:
    """Register an evento the APP signed (a manifestation the sandbox received), keeping its bytes."""
    inf = etree.fromstring(signed_evento).find(_N + "infEvento")

    def text(path: str) -> str:
        # the string value of the first match, "" when absent (as XPath string() gives it)
        node = inf.find(_N + path.replace("n:", _N)) if inf is not None else None
        return "".join(node.itertext()) if node is not None else ""

    doc = text("CNPJ") or text("CPF")
    author = Party(doc=doc, name=author_name or doc)
    tp_evento = text("tpEvento")
    return _wrap(
        nfe_key,
        strip_declaration(signed_evento),
        author=author,
        tp_evento=tp_evento,
        seq=int(text("nSeqEvento")),
        at=datetime.fromisoformat(text("dhEvento")),
        registered_at=at,
        c_orgao=text("cOrgao"),
        tp_amb=int(text("tpAmb")),
        c_stat=c_stat,
        protocol_seq=protocol_seq,
        recipient_doc=doc,
        description=text("detEvento/n:descEvento"),
    )


def _wrap(
    key: str,
    signed: bytes,
    *,
    author: Party,
    tp_evento: str,
    seq: int,
    at: datetime,
    registered_at: datetime,
    c_orgao: str,
    tp_amb: int,
    c_stat: int,
    protocol_seq: int,
    recipient_doc: str,
    description: str | None = None,
) -> GeneratedEvent:
    national = c_orgao == "91"
    protocol = protocol_number("891" if national else f"1{c_orgao}", registered_at, protocol_seq)
    x_evento = description or DESCRIPTIONS.get(tp_evento) or event_name(tp_evento)
    dest_tag = "CPFDest" if len(recipient_doc) == 11 else "CNPJDest"
    ret = (
        f'<retEvento versao="1.00"><infEvento Id="ID{protocol}"><tpAmb>{tp_amb}</tpAmb>'
        f"<verAplic>{'AN_1.10.2' if national else 'SP_EVENTOS_PL_100'}</verAplic><cOrgao>{c_orgao}</cOrgao>"
        f"<cStat>{c_stat}</cStat><xMotivo>{_STATUS_TEXT.get(c_stat, 'Evento registrado')}</xMotivo>"
        f"<chNFe>{key}</chNFe><tpEvento>{tp_evento}</tpEvento><xEvento>{esc(x_evento)}</xEvento>"
        f"<nSeqEvento>{seq}</nSeqEvento><{dest_tag}>{recipient_doc}</{dest_tag}>"
        f"<dhRegEvento>{dt(registered_at)}</dhRegEvento><nProt>{protocol}</nProt></infEvento></retEvento>"
    )
    proc = (
        f'{XML_DECLARATION}<procEventoNFe xmlns="{NFE_NS}" versao="1.00">'.encode()
        + signed
        + f"{ret}</procEventoNFe>".encode()
    )
    res = (
        f'{XML_DECLARATION}<resEvento xmlns="{NFE_NS}" versao="1.01"><cOrgao>{c_orgao}</cOrgao>'
        f"{author.doc_xml()}<chNFe>{key}</chNFe><dhEvento>{dt(at)}</dhEvento><tpEvento>{tp_evento}</tpEvento>"
        f"<nSeqEvento>{seq}</nSeqEvento><xEvento>{esc(x_evento)}</xEvento>"
        f"<dhRecbto>{dt(registered_at)}</dhRecbto><nProt>{protocol}</nProt></resEvento>"
    ).encode()
    return GeneratedEvent(
        key=key,
        tp_evento=tp_evento,
        seq=seq,
        proc_payload=Payload(proc),
        res_payload=Payload(res),
        author=author,
        at=at,
        protocol=protocol,
        registered_at=registered_at,
    )
