"""CT-e 4.00: cteProc (signed CTe + protCTe) and procEventoCTe (signed eventoCTe + retEventoCTe).

Road (01) and air (02) modals, taker as toma3 (0 rem, 1 exped, 2 receb, 3 dest) or toma4 (4, a
fourth party), in the shape of the DACTE samples in shared/fixtures/cte.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.core.errors import CapturaError
from app.core.event_types import CANCELLATION, CORRECTION_LETTER
from app.core.keys import DocumentModel
from app.sandbox.docgen.common import (
    XML_DECLARATION,
    Party,
    Signers,
    address,
    digest_value,
    dt,
    esc,
    issued_key,
    money,
    phone,
    protocol_number,
    random_code,
)
from app.sandbox.docgen.nfe_events import GeneratedEvent
from app.sandbox.docgen.reform import Rates, cte_group
from app.sandbox.payload import Payload

CTE_NS = "http://www.portalfiscal.inf.br/cte"
TAKER_ROLES = {0: "rem", 1: "exped", 2: "receb", 3: "dest", 4: "toma"}
_CARGO = (
    "MATERIAL DE CONSTRUCAO",
    "ALIMENTOS NAO PERECIVEIS",
    "AUTOPECAS",
    "ELETRONICOS",
    "TEXTEIS",
    "PRODUTOS QUIMICOS EMBALADOS",
    "MOVEIS DESMONTADOS",
)
_CTE_EVENTS = {
    "110111": "Cancelamento",
    "110110": "Carta de Correcao",
    "610110": "Prestacao do Servico em Desacordo",
}
_CCE_CONDITIONS = (
    "A Carta de Correcao e disciplinada pelo Art. 58-B do CONVENIO/SINIEF 06/89: Fica permitida a "
    "utilizacao de "
    "carta de correcao, para regularizacao de erro ocorrido na emissao de documentos fiscais relativos a "
    "prestacao de servico de transporte, desde que o erro nao esteja relacionado com: I - as variaveis que "
    "determinam o valor do imposto tais como: base de calculo, aliquota, diferenca de preco, quantidade, "
    "valor "
    "da prestacao;II - a correcao de dados cadastrais que implique mudanca do emitente, tomador, remetente "
    "ou "
    "do destinatario;III - a data de emissao ou de saida."
)


@dataclass(frozen=True)
class GeneratedCTe:
    """An authorised CT-e; ``parties`` maps emit/rem/exped/receb/dest/toma to who plays each role."""

    key: str
    cte_proc: bytes
    parties: dict[str, Party]
    issued_at: datetime
    authorised_at: datetime
    total_cents: int
    protocol: str
    modal: str
    taker_role: int


def _party(tag: str, address_tag: str, party: Party, rng: random.Random, *, with_country: bool = True) -> str:
    street, number, district, cep = address(rng)
    ie = f"<IE>{party.ie}</IE>" if party.ie else ""
    country = "<cPais>1058</cPais><xPais>BRASIL</xPais>" if with_country else ""
    return (
        f"<{tag}>{party.doc_xml()}{ie}<xNome>{esc(party.name)}</xNome><fone>{phone(rng)}</fone>"
        f"<{address_tag}><xLgr>{street}</xLgr><nro>{number}</nro><xBairro>{district}</xBairro>"
        f"<cMun>{party.c_mun}</cMun><xMun>{esc(party.x_mun)}</xMun><CEP>{cep}</CEP><UF>{party.uf}</UF>"
        f"{country}</{address_tag}></{tag}>"
    )


def _modal(modal: str, rng: random.Random, issued_at: datetime) -> str:
    if modal == "01":
        rntrc = rng.randrange(10_000_000, 99_999_999)
        return f'<infModal versaoModal="4.00"><rodo><RNTRC>{rntrc}</RNTRC></rodo></infModal>'
    if modal == "02":
        return (
            f'<infModal versaoModal="4.00"><aereo><nMinu>{rng.randrange(100_000_000, 999_999_999)}</nMinu>'
            f"<nOCA>{rng.randrange(10**10, 10**11 - 1)}</nOCA>"
            f"<dPrevAereo>{(issued_at + timedelta(days=2)).date().isoformat()}</dPrevAereo>"
            "<natCarga>"
            f"<xDime>{rng.randrange(10, 99)}0X{rng.randrange(10, 99)}0X{rng.randrange(10, 99)}0</xDime>"
            "<cInfManu>99</cInfManu></natCarga><tarifa><CL>G</CL>"
            f"<vTar>{money(rng.randrange(1000, 90000))}</vTar>"
            f"</tarifa></aereo></infModal>"
        )
    raise CapturaError(f"Modal de CT-e não suportado pelo gerador: {modal!r} (use 01 ou 02).")


def build_cte(
    signers: Signers,
    rng: random.Random,
    *,
    emitter: Party,
    sender: Party,
    recipient: Party,
    taker_role: int,
    taker: Party | None = None,
    expeditor: Party | None = None,
    receiver: Party | None = None,
    issued_at: datetime,
    modal: str = "01",
    total_cents: int | None = None,
    nfe_keys: Sequence[str] = (),
    number: int,
    serie: int = 1,
    tp_amb: int,
    protocol_seq: int,
    reform: Rates | None = None,
) -> GeneratedCTe:
    parties: dict[str, Party] = {"emit": emitter, "rem": sender, "dest": recipient}
    if expeditor is not None:
        parties["exped"] = expeditor
    if receiver is not None:
        parties["receb"] = receiver
    if taker_role not in TAKER_ROLES:
        raise CapturaError(f"Tomador do CT-e inválido: {taker_role} (0 a 4).")
    if taker_role == 4:
        if taker is None:
            raise CapturaError("Tomador 4 (outros) exige a parte tomadora.")
        toma = taker
    else:
        role = TAKER_ROLES[taker_role]
        if role not in parties:
            raise CapturaError(f"Tomador {taker_role} ({role}) não está presente no CT-e.")
        toma = parties[role]
    parties["toma"] = toma
    if total_cents is None:
        total_cents = rng.randrange(5_000, 800_000)
    code = random_code(rng, number)
    key = issued_key(emitter, issued_at, DocumentModel.CTE, serie, number, code)
    start, end = sender, recipient
    intra = start.uf == end.uf
    if taker_role == 4:
        street, nro, district, cep = address(rng)
        ie = f"<IE>{toma.ie}</IE>" if toma.ie else ""
        toma_xml = (
            f"<toma4><toma>4</toma>{toma.doc_xml()}{ie}<xNome>{esc(toma.name)}</xNome><enderToma>"
            f"<xLgr>{street}</xLgr><nro>{nro}</nro><xBairro>{district}</xBairro><cMun>{toma.c_mun}</cMun>"
            f"<xMun>{esc(toma.x_mun)}</xMun><CEP>{cep}</CEP><UF>{toma.uf}</UF><cPais>1058</cPais>"
            f"<xPais>BRASIL</xPais></enderToma></toma4>"
        )
    else:
        toma_xml = f"<toma3><toma>{taker_role}</toma></toma3>"
    cargo_cents = total_cents * rng.randrange(8, 40)
    icms = round(total_cents * 0.12)
    freight = total_cents * 7 // 10
    docs = "".join(f"<infNFe><chave>{k}</chave></infNFe>" for k in nfe_keys) or (
        "<infOutros><tpDoc>99</tpDoc><descOutros>DECLARACAO</descOutros>"
        f"<nDoc>{rng.randrange(1, 99999)}</nDoc>"
        f"<dEmi>{issued_at.date().isoformat()}</dEmi><vDocFisc>{money(cargo_cents)}</vDocFisc></infOutros>"
    )
    inf_id = "CTe" + key
    emit_street, emit_nro, emit_district, emit_cep = address(rng)
    cte = (
        f'<CTe xmlns="{CTE_NS}"><infCte versao="4.00" Id="{inf_id}"><ide><cUF>{emitter.cuf}</cUF>'
        f"<cCT>{code:08d}</cCT><CFOP>{'5353' if intra else '6353'}</CFOP>"
        "<natOp>PRESTACAO DE SERVICO DE TRANSPORTE"
        f"</natOp><mod>57</mod><serie>{serie}</serie><nCT>{number}</nCT><dhEmi>{dt(issued_at)}</dhEmi>"
        f"<tpImp>1</tpImp><tpEmis>1</tpEmis><cDV>{key[-1]}</cDV><tpAmb>{tp_amb}</tpAmb><tpCTe>0</tpCTe>"
        f"<procEmi>0</procEmi><verProc>Sandbox Captura 1.0</verProc><cMunEnv>{emitter.c_mun}</cMunEnv>"
        f"<xMunEnv>{esc(emitter.x_mun)}</xMunEnv><UFEnv>{emitter.uf}</UFEnv><modal>{modal}</modal>"
        f"<tpServ>0</tpServ><cMunIni>{start.c_mun}</cMunIni><xMunIni>{esc(start.x_mun)}</xMunIni>"
        f"<UFIni>{start.uf}</UFIni><cMunFim>{end.c_mun}</cMunFim><xMunFim>{esc(end.x_mun)}</xMunFim>"
        f"<UFFim>{end.uf}</UFFim><retira>1</retira>"
        f"<indIEToma>{1 if toma.ie else 9}</indIEToma>{toma_xml}</ide>"
        f"<compl><xObs>{esc('CT-e gerado pelo sandbox Captura DF-e; sem valor fiscal.')}</xObs></compl>"
        f"<emit>{emitter.doc_xml()}<IE>{emitter.ie_or_derived()}</IE><xNome>{esc(emitter.name)}</xNome>"
        f"<enderEmit><xLgr>{emit_street}</xLgr><nro>{emit_nro}</nro><xBairro>{emit_district}</xBairro>"
        f"<cMun>{emitter.c_mun}</cMun><xMun>{esc(emitter.x_mun)}</xMun><CEP>{emit_cep}</CEP>"
        f"<UF>{emitter.uf}</UF><fone>{phone(rng)}</fone></enderEmit><CRT>3</CRT></emit>"
        f"{_party('rem', 'enderReme', sender, rng)}"
        f"{_party('exped', 'enderExped', expeditor, rng) if expeditor else ''}"
        f"{_party('receb', 'enderReceb', receiver, rng) if receiver else ''}"
        f"{_party('dest', 'enderDest', recipient, rng)}"
        f"<vPrest><vTPrest>{money(total_cents)}</vTPrest><vRec>{money(total_cents)}</vRec>"
        f"<Comp><xNome>FRETE PESO</xNome><vComp>{money(freight)}</vComp></Comp>"
        f"<Comp><xNome>OUTROS</xNome><vComp>{money(total_cents - freight)}</vComp></Comp></vPrest>"
        f"<imp><ICMS><ICMS00><CST>00</CST><vBC>{money(total_cents)}</vBC><pICMS>12.00</pICMS>"
        f"<vICMS>{money(icms)}</vICMS></ICMS00></ICMS>"
        f"{cte_group(total_cents, reform) if reform else ''}</imp>"
        f"<infCTeNorm><infCarga><vCarga>{money(cargo_cents)}</vCarga><proPred>{rng.choice(_CARGO)}</proPred>"
        f"<infQ><cUnid>01</cUnid><tpMed>PESO BRUTO</tpMed><qCarga>{rng.randrange(10, 20000)}.0000</qCarga>"
        "</infQ>"
        f"<vCargaAverb>{money(cargo_cents)}</vCargaAverb></infCarga><infDoc>{docs}</infDoc>"
        f"{_modal(modal, rng, issued_at)}</infCTeNorm></infCte>"
        "<infCTeSupl>"
        f"<qrCodCTe>https://nfe.fazenda.sp.gov.br/CTeConsulta/qrCode?chCTe={key}&amp;tpAmb={tp_amb}"
        f"</qrCodCTe></infCTeSupl></CTe>"
    )
    signed = signers.sign_sefaz(cte, inf_id, emitter.doc, emitter.name)
    authorised_at = issued_at + timedelta(seconds=rng.randrange(2, 90))
    protocol = protocol_number(f"1{emitter.cuf}", authorised_at, protocol_seq)
    prot = (
        f'<protCTe versao="4.00"><infProt><tpAmb>{tp_amb}</tpAmb><verAplic>SP-CTe-2024</verAplic>'
        f"<chCTe>{key}</chCTe><dhRecbto>{dt(authorised_at)}</dhRecbto><nProt>{protocol}</nProt>"
        f"<digVal>{digest_value(signed)}</digVal><cStat>100</cStat>"
        "<xMotivo>Autorizado o uso do CT-e</xMotivo>"
        f"</infProt></protCTe>"
    )
    proc = f'{XML_DECLARATION}<cteProc xmlns="{CTE_NS}" versao="4.00">'.encode() + signed + f"{prot}</cteProc>".encode()
    return GeneratedCTe(
        key=key,
        cte_proc=proc,
        parties=parties,
        issued_at=issued_at,
        authorised_at=authorised_at,
        total_cents=total_cents,
        protocol=protocol,
        modal=modal,
        taker_role=taker_role,
    )


def _cte_detail(tp_evento: str, cte: GeneratedCTe, rng: random.Random) -> str:
    desc = _CTE_EVENTS[tp_evento]
    if tp_evento == CANCELLATION:
        body = (
            f"<evCancCTe><descEvento>{desc}</descEvento><nProt>{cte.protocol}</nProt>"
            f"<xJust>Erro na emissao do conhecimento</xJust></evCancCTe>"
        )
    elif tp_evento == CORRECTION_LETTER:
        body = (
            f"<evCCeCTe><descEvento>{desc}</descEvento><infCorrecao><grupoAlterado>compl</grupoAlterado>"
            "<campoAlterado>xObs</campoAlterado>"
            f"<valorAlterado>Entrega agendada {rng.randrange(1, 28)}</valorAlterado>"
            f"</infCorrecao><xCondUso>{_CCE_CONDITIONS}</xCondUso></evCCeCTe>"
        )
    else:
        body = (
            f"<evPrestDesacordo><descEvento>{desc}</descEvento><indDesacordoOper>1</indDesacordoOper>"
            f"<xObs>Servico prestado em desacordo com o contratado</xObs></evPrestDesacordo>"
        )
    return f'<detEvento versaoEvento="4.00">{body}</detEvento>'


def build_cte_event(
    signers: Signers,
    rng: random.Random,
    cte: GeneratedCTe,
    *,
    tp_evento: str,
    author: Party,
    seq: int,
    at: datetime,
    tp_amb: int,
    protocol_seq: int,
) -> GeneratedEvent:
    """procEventoCTe 4.00 for cancellation 110111, CC-e 110110 or 610110 (service in disagreement)."""
    if tp_evento not in _CTE_EVENTS:
        raise CapturaError(f"Evento de CT-e não suportado pelo gerador: {tp_evento}.")
    c_orgao = cte.key[:2]
    inf_id = f"ID{tp_evento}{cte.key}{seq:03d}"
    evento = (
        f'<eventoCTe xmlns="{CTE_NS}" versao="4.00"><infEvento Id="{inf_id}"><cOrgao>{c_orgao}</cOrgao>'
        f"<tpAmb>{tp_amb}</tpAmb>{author.doc_xml()}<chCTe>{cte.key}</chCTe><dhEvento>{dt(at)}</dhEvento>"
        f"<tpEvento>{tp_evento}</tpEvento><nSeqEvento>{seq}</nSeqEvento>{_cte_detail(tp_evento, cte, rng)}"
        f"</infEvento></eventoCTe>"
    )
    signed = signers.sign_sefaz(evento, inf_id, author.doc, author.name)
    registered_at = at + timedelta(seconds=rng.randrange(1, 30))
    protocol = protocol_number(f"1{c_orgao}", registered_at, protocol_seq)
    ret = (
        f'<retEventoCTe versao="4.00"><infEvento Id="ID{protocol}"><tpAmb>{tp_amb}</tpAmb>'
        f"<verAplic>SP-CTe-2024</verAplic><cOrgao>{c_orgao}</cOrgao><cStat>135</cStat>"
        f"<xMotivo>Evento registrado e vinculado a CT-e</xMotivo><chCTe>{cte.key}</chCTe>"
        f"<tpEvento>{tp_evento}</tpEvento><xEvento>{_CTE_EVENTS[tp_evento]}</xEvento>"
        f"<nSeqEvento>{seq}</nSeqEvento><dhRegEvento>{dt(registered_at)}</dhRegEvento>"
        f"<nProt>{protocol}</nProt></infEvento></retEventoCTe>"
    )
    proc = (
        f'{XML_DECLARATION}<procEventoCTe xmlns="{CTE_NS}" versao="4.00">'.encode()
        + signed
        + f"{ret}</procEventoCTe>".encode()
    )
    return GeneratedEvent(
        key=cte.key,
        tp_evento=tp_evento,
        seq=seq,
        proc_payload=Payload(proc),
        res_payload=None,
        author=author,
        at=at,
        protocol=protocol,
        registered_at=registered_at,
    )
