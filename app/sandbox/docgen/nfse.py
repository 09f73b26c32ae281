"""NFS-e Nacional 1.01: the NFSe the Sefin generates (holding the provider's signed DPS) and events.

The DPS and pedRegEvento are signed by their author with the SEFAZ profile (as real DPS are);
the NFSe and the registered evento by the Sefin certificate with RSA-SHA256 (as the real
homologation NFS-e in tests/fixtures/nfse). Event Ids follow the nfelib 1.01 schemas:
``PRE`` + key + code (no nPedRegEvento) and ``EVT`` + key + code + sequence (3).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from lxml import etree

from app.core.errors import CapturaError
from app.core.keys import NfseKey
from app.fiscal.xmldsig import SignatureProfile
from app.sandbox.docgen.common import (
    AUTHORITY_NAME,
    SEFIN_CNPJ,
    XML_DECLARATION,
    Party,
    Signers,
    address,
    dt,
    esc,
    money,
    phone,
    strip_declaration,
    year_month,
)
from app.sandbox.docgen.reform import RATES, Rates, part, percent

NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"
VERSION = "1.01"
_SERVICES = (
    ("010101", "Análise e desenvolvimento de sistemas.", "Desenvolvimento de sistema sob encomenda", "115013000"),
    (
        "010701",
        "Suporte técnico em informática, inclusive instalação, configuração e manutenção de programas "
        "de computação e bancos de dados.",
        "Suporte técnico mensal",
        "115021000",
    ),
    ("171901", "Contabilidade, inclusive serviços técnicos e auxiliares.", "Honorários contábeis do mês", "118011000"),
    (
        "070201",
        "Execução, por administração, empreitada ou subempreitada, de obras de construção civil.",
        "Reforma de sala comercial",
        "101011100",
    ),
    (
        "040303",
        "Clínicas, sanatórios, manicômios, casas de saúde, prontos-socorros, ambulatórios e congêneres.",
        "Consulta e exames",
        "123012100",
    ),
)
EVENT_DESCRIPTIONS: dict[str, str] = {
    "101101": "Cancelamento de NFS-e",
    "203202": "Manifestação de NFS-e - Confirmação do Tomador",
    "203206": "Manifestação de NFS-e - Rejeição do Tomador",
}


@dataclass(frozen=True)
class GeneratedNfse:
    """An NFS-e as the ADN distributes it; ``parties`` maps prest/toma/interm to who plays each role."""

    key: str
    nfse: bytes
    dps: bytes
    parties: dict[str, Party]
    issued_at: datetime
    processed_at: datetime
    number: int
    service_cents: int
    with_ibscbs: bool


@dataclass(frozen=True)
class GeneratedNfseEvent:
    """A registered NFS-e event: ``evento`` wraps the author's signed pedRegEvento."""

    key: str
    code: str
    evento: bytes
    author: Party
    at: datetime
    seq: int


def _person(tag: str, party: Party, rng: random.Random) -> str:
    street, number, district, cep = address(rng)
    return (
        f"<{tag}>{party.doc_xml()}<xNome>{esc(party.name)}</xNome><end><endNac><cMun>{party.c_mun}</cMun>"
        f"<CEP>{cep}</CEP></endNac><xLgr>{street}</xLgr><nro>{number}</nro><xBairro>{district}</xBairro>"
        "</end>"
        f"<fone>{phone(rng)}</fone></{tag}>"
    )


def dps_id(provider: Party, serie: int, number: int) -> str:
    tp_insc = "1" if provider.is_cpf else "2"
    return f"DPS{provider.c_mun}{tp_insc}{provider.doc:0>14}{serie:05d}{number:015d}"


def build_nfse(
    signers: Signers,
    rng: random.Random,
    *,
    provider: Party,
    taker: Party | None,
    intermediary: Party | None = None,
    issued_at: datetime,
    service_cents: int | None = None,
    with_ibscbs: bool = False,
    rates: Rates | None = None,
    number: int,
    tp_amb: int,
    retained_cents: int = 0,
) -> GeneratedNfse:
    """``retained_cents``: ISS or federal taxes withheld by the taker (vTotalRet), so vLiq < vServ;
    ``rates``: the IBS/CBS rates ``with_ibscbs`` applies (the factory draws them per document: 2026's,
    all the IBS the state's, or 2027-2028's, half of it the municipality's); 2026's by default."""
    if service_cents is None:
        service_cents = rng.randrange(10_000, 2_000_000)
    c_trib, x_trib, x_desc, c_nbs = rng.choice(_SERVICES)
    serie = 900
    ident = dps_id(provider, serie, number)
    people = _person("toma", taker, rng) if taker else ""
    people += _person("interm", intermediary, rng) if intermediary else ""
    ibscbs_dps = (
        "<IBSCBS><finNFSe>0</finNFSe><indFinal>0</indFinal><cIndOp>100301</cIndOp><indDest>0</indDest>"
        "<valores><trib><gIBSCBS><CST>000</CST><cClassTrib>000001</cClassTrib></gIBSCBS></trib></valores>"
        "</IBSCBS>"
        if with_ibscbs
        else ""
    )
    dps = (
        f'<DPS xmlns="{NFSE_NS}" versao="{VERSION}"><infDPS Id="{ident}"><tpAmb>{tp_amb}</tpAmb>'
        f"<dhEmi>{dt(issued_at)}</dhEmi><verAplic>SandboxCaptura_1.0</verAplic><serie>{serie}</serie>"
        f"<nDPS>{number}</nDPS><dCompet>{dt(issued_at)[:10]}</dCompet><tpEmit>1</tpEmit>"
        f"<cLocEmi>{provider.c_mun}</cLocEmi><prest>{provider.doc_xml()}<fone>{phone(rng)}</fone>"
        f"<regTrib><opSimpNac>1</opSimpNac><regEspTrib>0</regEspTrib></regTrib></prest>{people}"
        f"<serv><locPrest><cLocPrestacao>{provider.c_mun}</cLocPrestacao></locPrest><cServ>"
        f"<cTribNac>{c_trib}</cTribNac><xDescServ>{esc(x_desc)}</xDescServ><cNBS>{c_nbs}</cNBS></cServ>"
        "</serv>"
        f"<valores><vServPrest><vServ>{money(service_cents)}</vServ></vServPrest><trib><tribMun>"
        f"<tribISSQN>1</tribISSQN><tpRetISSQN>1</tpRetISSQN></tribMun><totTrib><indTotTrib>0</indTotTrib>"
        f"</totTrib></trib></valores>{ibscbs_dps}</infDPS></DPS>"
    )
    signed_dps = strip_declaration(signers.sign(dps, ident, provider.doc, provider.name))
    processed_at = issued_at + timedelta(seconds=rng.randrange(1, 20))
    key = NfseKey.build(
        c_mun=provider.c_mun,
        amb_ger=2,
        insc_fed=provider.doc,
        number=number,
        year_month=year_month(processed_at),
        code=rng.randrange(100_000_000, 999_999_999),
    ).value
    iss = round(service_cents * 0.05)
    town = esc(provider.x_mun)
    street, nro, district, cep = address(rng)
    ibscbs_nfse = ""
    if with_ibscbs:
        r = rates or RATES[0]
        ibs_uf, ibs_mun, cbs = part(service_cents, r.ibs_uf), part(service_cents, r.ibs_mun), part(service_cents, r.cbs)
        uf, mun, fed = percent(r.ibs_uf), percent(r.ibs_mun), percent(r.cbs)
        ibscbs_nfse = (
            f"<IBSCBS><cLocalidadeIncid>{provider.c_mun}</cLocalidadeIncid><xLocalidadeIncid>{town}"
            f"</xLocalidadeIncid><valores><vBC>{money(service_cents)}</vBC><uf><pIBSUF>{uf}</pIBSUF>"
            f"<pAliqEfetUF>{uf}</pAliqEfetUF></uf><mun><pIBSMun>{mun}</pIBSMun><pAliqEfetMun>{mun}</pAliqEfetMun>"
            f"</mun><fed><pCBS>{fed}</pCBS><pAliqEfetCBS>{fed}</pAliqEfetCBS></fed></valores><totCIBS>"
            f"<vTotNF>{money(service_cents)}</vTotNF><gIBS><vIBSTot>{money(ibs_uf + ibs_mun)}</vIBSTot><gIBSUFTot>"
            f"<vIBSUF>{money(ibs_uf)}</vIBSUF></gIBSUFTot><gIBSMunTot><vIBSMun>{money(ibs_mun)}</vIBSMun></gIBSMunTot>"
            f"</gIBS><gCBS><vCBS>{money(cbs)}</vCBS></gCBS></totCIBS></IBSCBS>"
        )
    nfse = (
        (
            f'<NFSe xmlns="{NFSE_NS}" versao="{VERSION}"><infNFSe Id="NFS{key}"><xLocEmi>{town}</xLocEmi>'
            f"<xLocPrestacao>{town}</xLocPrestacao><nNFSe>{number}</nNFSe><cLocIncid>{provider.c_mun}</cLocIncid>"
            f"<xLocIncid>{town}</xLocIncid><xTribNac>{esc(x_trib)}</xTribNac>"
            "<verAplic>SefinNacional_1.6.0</verAplic>"
            f"<ambGer>2</ambGer><tpEmis>1</tpEmis><procEmi>1</procEmi><cStat>100</cStat>"
            f"<dhProc>{dt(processed_at)}</dhProc><nDFSe>{number}</nDFSe><emit>{provider.doc_xml()}"
            f"<xNome>{esc(provider.name)}</xNome><enderNac><xLgr>{street}</xLgr><nro>{nro}</nro>"
            f"<xBairro>{district}</xBairro><cMun>{provider.c_mun}</cMun><UF>{provider.uf}</UF><CEP>{cep}</CEP>"
            f"</enderNac></emit><valores><vBC>{money(service_cents)}</vBC><pAliqAplic>5.00</pAliqAplic>"
            f"<vISSQN>{money(iss)}</vISSQN><vTotalRet>{money(retained_cents)}</vTotalRet>"
            f"<vLiq>{money(service_cents - retained_cents)}</vLiq>"
            f"</valores>{ibscbs_nfse}"
        ).encode()
        + signed_dps
        + b"</infNFSe></NFSe>"
    )
    signed_nfse = signers.sign(nfse, f"NFS{key}", SEFIN_CNPJ, AUTHORITY_NAME, profile=SignatureProfile.SEFIN_SHA256)
    parties = {"prest": provider}
    if taker:
        parties["toma"] = taker
    if intermediary:
        parties["interm"] = intermediary
    return GeneratedNfse(
        key=key,
        nfse=XML_DECLARATION.encode() + strip_declaration(signed_nfse),
        dps=XML_DECLARATION.encode() + signed_dps,
        parties=parties,
        issued_at=issued_at,
        processed_at=processed_at,
        number=number,
        service_cents=service_cents,
        with_ibscbs=with_ibscbs,
    )


def build_ped_reg_evento(
    signers: Signers, nfse: GeneratedNfse, *, code: str, author: Party, at: datetime, tp_amb: int
) -> bytes:
    """A pedRegEvento signed by ``author`` (what a client POSTs to the Sefin)."""
    desc = EVENT_DESCRIPTIONS.get(code)
    if desc is None:
        raise CapturaError(f"Evento de NFS-e não suportado pelo gerador: {code}.")
    if code == "101101":
        group = f"<xDesc>{desc}</xDesc><cMotivo>1</cMotivo><xMotivo>Erro na emissão da nota fiscal.</xMotivo>"
    elif code == "203206":
        group = f"<xDesc>{desc}</xDesc><cMotivo>3</cMotivo><xMotivo>Serviço não foi prestado ao tomador.</xMotivo>"
    else:
        group = f"<xDesc>{desc}</xDesc>"
    ident = f"PRE{nfse.key}{code}"
    author_tag = "CPFAutor" if author.is_cpf else "CNPJAutor"
    ped = (
        f'<pedRegEvento xmlns="{NFSE_NS}" versao="{VERSION}"><infPedReg Id="{ident}"><tpAmb>{tp_amb}</tpAmb>'
        f"<verAplic>SandboxCaptura_1.0</verAplic><dhEvento>{dt(at)}</dhEvento>"
        f"<{author_tag}>{author.doc}</{author_tag}><chNFSe>{nfse.key}</chNFSe><e{code}>{group}</e{code}>"
        f"</infPedReg></pedRegEvento>"
    )
    return strip_declaration(signers.sign(ped, ident, author.doc, author.name))


def build_nfse_event(
    signers: Signers,
    rng: random.Random,
    nfse: GeneratedNfse,
    *,
    code: str,
    author: Party,
    at: datetime,
    ped_reg_evento: bytes | None = None,
    seq: int,
    n_dfse: int,
    tp_amb: int,
) -> GeneratedNfseEvent:
    if ped_reg_evento is None:
        ped = build_ped_reg_evento(signers, nfse, code=code, author=author, at=at, tp_amb=tp_amb)
    else:
        ped = strip_declaration(ped_reg_evento)
        found = etree.fromstring(ped).find(f"{{{NFSE_NS}}}infPedReg")
        if found is None or not str(found.get("Id", "")).endswith(code):
            raise CapturaError("pedRegEvento não corresponde ao código de evento informado.")
    processed_at = at + timedelta(seconds=rng.randrange(1, 20))
    ident = f"EVT{nfse.key}{code}{seq:03d}"
    evento = (
        (
            f'<evento xmlns="{NFSE_NS}" versao="{VERSION}"><infEvento Id="{ident}">'
            f"<verAplic>SefinNacional_1.6.0</verAplic><ambGer>2</ambGer><nSeqEvento>{seq}</nSeqEvento>"
            f"<dhProc>{dt(processed_at)}</dhProc><nDFSe>{n_dfse}</nDFSe>"
        ).encode()
        + ped
        + b"</infEvento></evento>"
    )
    signed = signers.sign(evento, ident, SEFIN_CNPJ, AUTHORITY_NAME, profile=SignatureProfile.SEFIN_SHA256)
    return GeneratedNfseEvent(
        key=nfse.key,
        code=code,
        evento=XML_DECLARATION.encode() + strip_declaration(signed),
        author=author,
        at=at,
        seq=seq,
    )
