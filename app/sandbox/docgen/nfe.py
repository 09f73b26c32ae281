"""NF-e 4.00: the signed NFe with its authorisation (nfeProc) and the recipient's summary (resNFe 1.01)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from app.core.keys import DocumentModel
from app.sandbox.docgen.common import (
    XML_DECLARATION,
    Party,
    Signers,
    address,
    dt,
    esc,
    issued_key,
    money,
    phone,
    protocol_number,
    random_code,
)
from app.sandbox.docgen.reform import NfeSums, Rates, note_ide
from app.sandbox.docgen.signing import canonical_part, digest_of, sign_document
from app.sandbox.payload import Payload

NFE_NS = "http://www.portalfiscal.inf.br/nfe"
_PRODUCTS = (
    ("PARAFUSO SEXTAVADO 1/4 ZINCADO", "73181500", "CX"),
    ("CHAPA DE ACO 2MM", "72085200", "KG"),
    ("CABO FLEXIVEL 2,5MM 100M", "85444900", "RL"),
    ("TINTA ACRILICA BRANCA 18L", "32091010", "LT"),
    ("PAPEL A4 75G RESMA", "48025610", "PCT"),
    ("OLEO LUBRIFICANTE 1L", "27101932", "UN"),
    ("MOTOR ELETRICO 1CV", "85014019", "UN"),
    ("ROLAMENTO 6205 2RS", "84821010", "UN"),
    ("CAFE TORRADO 500G", "09012100", "PCT"),
    ("EMBALAGEM PAPELAO 40X30", "48191000", "UN"),
)


@dataclass(frozen=True, slots=True, eq=False)
class GeneratedNFe:
    """An authorised NF-e as the services distribute it.

    The nfeProc is signed on first use (``nfe_proc``): most recipients only ever receive the
    resNFe, whose digVal (the signature's DigestValue) follows from the canonical form alone.
    """

    key: str
    res_payload: Payload
    proc_payload: Payload
    emitter: Party
    recipient: Party
    transporter: Party | None
    aut_xml: tuple[str, ...]
    issued_at: datetime
    authorised_at: datetime
    total_cents: int
    protocol: str
    dig_val: str
    reform: bool = False  # carries the tax reform's groups

    @property
    def nfe_proc(self) -> bytes:
        return self.proc_payload.xml

    @property
    def res_nfe(self) -> bytes:
        return self.res_payload.xml


@dataclass(frozen=True, slots=True)
class _Recipe:
    """Everything ``_render`` needs to write the same NFe again (the signature is made later)."""

    seed: int
    emitter: Party
    recipient: Party
    issued_at: datetime
    number: int
    serie: int
    tp_amb: int
    total_cents: int | None
    transporter: Party | None
    aut_xml: tuple[str, ...]
    items: int
    reform: Rates | None = None  # the reform's groups (docgen.reform), or none
    note: tuple[str, str] | None = None  # a nota de crédito/débito: (finNFe, the key it adjusts)


def _item(
    n: int, product: tuple[str, str, str], cents: int, intra: bool, rng: random.Random, reform: NfeSums | None
) -> tuple[str, int, int, int]:
    name, ncm, unit = product
    qty = rng.randrange(1, 50)
    unit_price = f"{cents / qty / 100:.10f}"
    v = money(cents)
    icms = round(cents * 0.18)
    pis = round(cents * 0.0165)
    cofins = round(cents * 0.076)
    cfop = "5102" if intra else "6102"
    return (
        (
            f'<det nItem="{n}"><prod><cProd>{1000 + n}</cProd><cEAN>SEM GTIN</cEAN><xProd>{esc(name)}</xProd>'
            f"<NCM>{ncm}</NCM><CFOP>{cfop}</CFOP><uCom>{unit}</uCom><qCom>{qty}.0000</qCom>"
            f"<vUnCom>{unit_price}</vUnCom><vProd>{v}</vProd><cEANTrib>SEM GTIN</cEANTrib><uTrib>{unit}</uTrib>"
            f"<qTrib>{qty}.0000</qTrib><vUnTrib>{unit_price}</vUnTrib><indTot>1</indTot></prod>"
            f"<imposto><ICMS><ICMS00><orig>0</orig><CST>00</CST><modBC>3</modBC><vBC>{v}</vBC>"
            f"<pICMS>18.0000</pICMS><vICMS>{money(icms)}</vICMS></ICMS00></ICMS>"
            f"<PIS><PISAliq><CST>01</CST><vBC>{v}</vBC><pPIS>1.6500</pPIS><vPIS>{money(pis)}</vPIS></PISAliq>"
            "</PIS>"
            f"<COFINS><COFINSAliq><CST>01</CST><vBC>{v}</vBC><pCOFINS>7.6000</pCOFINS>"
            f"<vCOFINS>{money(cofins)}</vCOFINS></COFINSAliq></COFINS>"
            f"{reform.item(cents, ncm) if reform else ''}</imposto></det>"
        ),
        icms,
        pis,
        cofins,
    )


def _address_xml(tag: str, party: Party, rng: random.Random) -> str:
    street, number, district, cep = address(rng)
    return (
        f"<{tag}><xLgr>{street}</xLgr><nro>{number}</nro><xBairro>{district}</xBairro>"
        f"<cMun>{party.c_mun}</cMun><xMun>{esc(party.x_mun)}</xMun><UF>{party.uf}</UF><CEP>{cep}</CEP>"
        f"<cPais>1058</cPais><xPais>BRASIL</xPais><fone>{phone(rng)}</fone></{tag}>"
    )


def _split(total: int, parts: int, rng: random.Random) -> list[int]:
    weights = [rng.randrange(1, 10) for _ in range(parts)]
    values = [max(1, total * w // sum(weights)) for w in weights]
    values[-1] += total - sum(values)
    return values


def build_nfe(
    signers: Signers,
    seed: int,
    *,
    emitter: Party,
    recipient: Party,
    issued_at: datetime,
    number: int,
    serie: int = 1,
    tp_amb: int,
    total_cents: int | None = None,
    transporter: Party | None = None,
    aut_xml: Sequence[str] = (),
    items: int = 3,
    protocol_seq: int,
    reform: Rates | None = None,
    note: tuple[str, str] | None = None,
) -> GeneratedNFe:
    """An NF-e drawn from ``random.Random(seed)``: the same seed always writes the same NF-e."""
    recipe = _Recipe(
        seed, emitter, recipient, issued_at, number, serie, tp_amb, total_cents, transporter, tuple(aut_xml), items,
        reform, note,
    )  # fmt: skip
    rng = random.Random(seed)
    document, key, total = _render(recipe, rng)
    dig_val = digest_of(canonical_part(document, "NFe" + key))
    authorised_at = issued_at + timedelta(seconds=rng.randrange(2, 90))
    protocol = protocol_number(f"1{emitter.cuf}", authorised_at, protocol_seq)
    res = res_nfe(key, emitter, issued_at, total, dig_val, authorised_at, protocol)
    return GeneratedNFe(
        key=key,
        res_payload=Payload(res),
        proc_payload=Payload(make=partial(_signed_proc, signers, recipe, dig_val, authorised_at, protocol)),
        emitter=emitter,
        recipient=recipient,
        transporter=transporter,
        aut_xml=recipe.aut_xml,
        issued_at=issued_at,
        authorised_at=authorised_at,
        total_cents=total,
        protocol=protocol,
        dig_val=dig_val,
        reform=reform is not None,
    )


def _signed_proc(signers: Signers, recipe: _Recipe, dig_val: str, authorised_at: datetime, protocol: str) -> bytes:
    """The nfeProc: the NFe written again from its recipe, signed, with its protNFe."""
    document, key, _ = _render(recipe, random.Random(recipe.seed))
    inf_id = "NFe" + key
    emitter = recipe.emitter
    # The rewrite is a pure function of the recipe; on the cross-check sample, sign_document
    # compares lxml's C14N digest of it with the published digVal (CanonicalMismatch otherwise),
    # which also proves the rewrite identical to the published document.
    signed = sign_document(
        document, inf_id, dig_val, signers.key_for(emitter.doc, emitter.name), check=signers.cross_check()
    )
    prot = (
        f'<protNFe versao="4.00"><infProt><tpAmb>{recipe.tp_amb}</tpAmb><verAplic>SP_NFE_PL009_V4</verAplic>'
        f"<chNFe>{key}</chNFe><dhRecbto>{dt(authorised_at)}</dhRecbto><nProt>{protocol}</nProt>"
        f"<digVal>{dig_val}</digVal><cStat>100</cStat><xMotivo>Autorizado o uso da NF-e</xMotivo>"
        f"</infProt></protNFe>"
    )
    return f'{XML_DECLARATION}<nfeProc xmlns="{NFE_NS}" versao="4.00">'.encode() + signed + f"{prot}</nfeProc>".encode()


def _render(recipe: _Recipe, rng: random.Random) -> tuple[str, str, int]:
    """(the unsigned ``<NFe>``, its key, its total in cents), drawing from ``rng`` in a fixed order."""
    emitter, recipient, transporter, aut_xml = recipe.emitter, recipe.recipient, recipe.transporter, recipe.aut_xml
    issued_at, number, serie, tp_amb = recipe.issued_at, recipe.number, recipe.serie, recipe.tp_amb
    total_cents, items = recipe.total_cents, recipe.items
    if total_cents is None:
        total_cents = rng.randrange(5_000, 5_000_000)
    items = max(1, min(items, total_cents))
    code = random_code(rng, number)
    key = issued_key(emitter, issued_at, DocumentModel.NFE, serie, number, code)
    intra = emitter.uf == recipient.uf
    dets, icms, pis, cofins = [], 0, 0, 0
    reform = NfeSums(recipe.reform) if recipe.reform else None
    for n, cents in enumerate(_split(total_cents, items, rng), start=1):
        xml, i, p, c = _item(n, rng.choice(_PRODUCTS), cents, intra, rng, reform)
        dets.append(xml)
        icms, pis, cofins = icms + i, pis + p, cofins + c
    v = money(total_cents)
    dest_ie = f"<indIEDest>1</indIEDest><IE>{recipient.ie}</IE>" if recipient.ie else "<indIEDest>9</indIEDest>"
    if transporter is not None:
        transp = (
            f"<transp><modFrete>0</modFrete><transporta>{transporter.doc_xml()}"
            f"<xNome>{esc(transporter.name)}</xNome><xMun>{esc(transporter.x_mun)}</xMun>"
            f"<UF>{transporter.uf}</UF></transporta><vol><qVol>{rng.randrange(1, 40)}</qVol>"
            f"<esp>CAIXA</esp><pesoL>{rng.randrange(1, 900)}.000</pesoL>"
            f"<pesoB>{rng.randrange(900, 999)}.000</pesoB>"
            f"</vol></transp>"
        )
    else:
        transp = "<transp><modFrete>9</modFrete></transp>"
    aut = "".join(
        f"<autXML><{'CPF' if len(doc) == 11 else 'CNPJ'}>{doc}</{'CPF' if len(doc) == 11 else 'CNPJ'}></autXML>"
        for doc in aut_xml
    )
    inf_id = "NFe" + key
    emit_street, emit_nro, emit_district, emit_cep = address(rng)
    purpose, nf_ref, nat_op = note_ide(recipe.note)
    document = (
        f'<NFe xmlns="{NFE_NS}"><infNFe versao="4.00" Id="{inf_id}"><ide><cUF>{emitter.cuf}</cUF>'
        f"<cNF>{code:08d}</cNF><natOp>{nat_op}</natOp><mod>55</mod><serie>{serie}</serie><nNF>{number}</nNF>"
        f"<dhEmi>{dt(issued_at)}</dhEmi><dhSaiEnt>{dt(issued_at)}</dhSaiEnt><tpNF>1</tpNF>"
        f"<idDest>{1 if intra else 2}</idDest><cMunFG>{emitter.c_mun}</cMunFG><tpImp>1</tpImp>"
        "<tpEmis>1</tpEmis>"
        f"<cDV>{key[-1]}</cDV><tpAmb>{tp_amb}</tpAmb>{purpose}"
        f"<indFinal>{0 if recipient.ie else 1}</indFinal>"
        f"<indPres>9</indPres><procEmi>0</procEmi><verProc>Sandbox Captura 1.0</verProc>{nf_ref}</ide>"
        f"<emit>{emitter.doc_xml()}<xNome>{esc(emitter.name)}</xNome><enderEmit><xLgr>{emit_street}</xLgr>"
        f"<nro>{emit_nro}</nro><xBairro>{emit_district}</xBairro><cMun>{emitter.c_mun}</cMun>"
        f"<xMun>{esc(emitter.x_mun)}</xMun><UF>{emitter.uf}</UF><CEP>{emit_cep}</CEP><cPais>1058</cPais>"
        f"<xPais>BRASIL</xPais></enderEmit><IE>{emitter.ie_or_derived()}</IE><CRT>3</CRT></emit>"
        f"<dest>{recipient.doc_xml()}<xNome>{esc(recipient.name)}</xNome>"
        f"{_address_xml('enderDest', recipient, rng)}{dest_ie}</dest>{aut}{''.join(dets)}"
        f"<total><ICMSTot><vBC>{v}</vBC><vICMS>{money(icms)}</vICMS><vICMSDeson>0.00</vICMSDeson>"
        f"<vFCP>0.00</vFCP><vBCST>0.00</vBCST><vST>0.00</vST><vFCPST>0.00</vFCPST><vFCPSTRet>0.00</vFCPSTRet>"
        f"<vProd>{v}</vProd><vFrete>0.00</vFrete><vSeg>0.00</vSeg><vDesc>0.00</vDesc><vII>0.00</vII>"
        f"<vIPI>0.00</vIPI><vIPIDevol>0.00</vIPIDevol><vPIS>{money(pis)}</vPIS>"
        f"<vCOFINS>{money(cofins)}</vCOFINS>"
        f"<vOutro>0.00</vOutro><vNF>{v}</vNF></ICMSTot>"
        f"{reform.totals(total_cents) if reform else ''}</total>{transp}"
        f"<cobr><fat><nFat>{number}</nFat><vOrig>{v}</vOrig><vDesc>0.00</vDesc><vLiq>{v}</vLiq></fat>"
        f"<dup><nDup>001</nDup><dVenc>{(issued_at + timedelta(days=30)).date().isoformat()}</dVenc>"
        f"<vDup>{v}</vDup></dup></cobr>"
        f"<pag><detPag><indPag>1</indPag><tPag>15</tPag><vPag>{v}</vPag></detPag></pag>"
        f"<infAdic><infCpl>{esc('Documento gerado pelo sandbox Captura DF-e; sem valor fiscal.')}</infCpl>"
        "</infAdic>"
        f"</infNFe></NFe>"
    )
    return document, key, total_cents


def res_nfe(
    key: str,
    emitter: Party,
    issued_at: datetime,
    total_cents: int,
    dig_val: str,
    authorised_at: datetime,
    protocol: str,
    *,
    c_sit: int = 1,
) -> bytes:
    """resNFe 1.01: what a recipient receives until it manifests (cSitNFe 1 authorised, 3 cancelled)."""
    return (
        f'{XML_DECLARATION}<resNFe xmlns="{NFE_NS}" versao="1.01"><chNFe>{key}</chNFe>{emitter.doc_xml()}'
        f"<xNome>{esc(emitter.name)}</xNome><IE>{emitter.ie_or_derived()}</IE><dhEmi>{dt(issued_at)}</dhEmi>"
        f"<tpNF>1</tpNF><vNF>{money(total_cents)}</vNF><digVal>{dig_val}</digVal>"
        f"<dhRecbto>{dt(authorised_at)}</dhRecbto><nProt>{protocol}</nProt><cSitNFe>{c_sit}</cSitNFe>"
        "</resNFe>"
    ).encode()


__all__ = ["NFE_NS", "GeneratedNFe", "build_nfe", "res_nfe"]
