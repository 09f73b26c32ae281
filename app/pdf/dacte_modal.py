"""The modal-specific block of the DACTE (rodoviário, aéreo, aquaviário, ferroviário, dutoviário,
multimodal, and the CT-e OS road modal), read into labelled fields and an optional table.

Each modal has its own XML group under infModal; the DACTE prints its fields in a titled block
("DADOS ESPECÍFICOS DO MODAL ..."). The fields are a flat list of (label, value) the layout lays
out in columns, so one drawing routine serves every modal.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.pdf import formats
from app.pdf.xmlnode import Node


@dataclass(frozen=True, slots=True)
class ModalBlock:
    title: str
    fields: tuple[tuple[str, str], ...]
    table_header: tuple[str, ...] = ()
    table: tuple[tuple[str, ...], ...] = ()
    note: str = ""


_AIR_UNITS = {"1": "KG", "2": "KG G", "3": "LITROS", "4": "TI", "5": "UNIDADES"}
_FERRO_TRAFFIC = {"0": "PRÓPRIO", "1": "MÚTUO", "2": "RODOFERROVIÁRIO", "3": "RODOVIÁRIO"}
_FERRO_BILLING = {"1": "FERROVIA DE ORIGEM", "2": "FERROVIA DE DESTINO"}
_DIRECTION = {"N": "NORTE", "S": "SUL", "L": "LESTE", "O": "OESTE"}
_NAVIGATION = {"0": "INTERIOR", "1": "CABOTAGEM"}
_NEGOTIABLE = {"0": "NÃO NEGOCIÁVEL", "1": "NEGOCIÁVEL"}
_ROAD_NOTE = "ESTE CONHECIMENTO DE TRANSPORTE ATENDE À LEGISLAÇÃO DE TRANSPORTE RODOVIÁRIO EM VIGOR"
_CHARTER = {"1": "EVENTUAL", "2": "CONTÍNUO"}
_OWNER_TYPE = {"0": "TAC AGREGADO", "1": "TAC INDEPENDENTE", "2": "OUTROS"}


def read_modal(group: Node, *, delivery: str = "") -> ModalBlock | None:
    """The block for ``group`` (the child of infModal); None when the CT-e has no modal group.
    ``delivery`` is the expected delivery of compl/Entrega (layout 4.00 moved it out of rodo)."""
    if not group:
        return None
    if group.local == "rodo":
        return _road(group, delivery)
    builder = _BUILDERS.get(group.local)
    return builder(group) if builder else ModalBlock(f"DADOS ESPECÍFICOS DO MODAL ({group.local.upper()})", ())


def _road(r: Node, delivery: str) -> ModalBlock:
    orders = tuple(
        (
            o.text("serie"),
            o.text("nOcc"),
            formats.date(o.text("dEmi")),
            formats.tax_id(o.text("emiOcc/CNPJ")),
            o.text("emiOcc/UF"),
        )
        for o in r.all("occ")
    )
    return ModalBlock(
        "DADOS ESPECÍFICOS DO MODAL RODOVIÁRIO",
        (("RNTRC DA EMPRESA", r.text("RNTRC")), ("DATA PREVISTA DE ENTREGA", r.text("dPrev") or delivery)),
        ("SÉRIE OCC", "NÚMERO OCC", "EMISSÃO", "CNPJ EMITENTE OCC", "UF") if orders else (),
        orders,
        _ROAD_NOTE,
    )


def delivery_text(entrega: Node) -> str:
    """compl/Entrega as one line: "15/04/2024 08:00" / "DE 10/04/2024 ATÉ 12/04/2024" / ""."""
    day = entrega.text("comData/dProg")
    if not day and entrega.text("noPeriodo/dIni"):
        day = f"DE {formats.date(entrega.text('noPeriodo/dIni'))} ATÉ {formats.date(entrega.text('noPeriodo/dFim'))}"
    elif day:
        day = formats.date(day)
    hour = entrega.text("comHora/hProg")
    if not hour and entrega.text("noInter/hIni"):
        hour = f"DAS {entrega.text('noInter/hIni')[:5]} ÀS {entrega.text('noInter/hFim')[:5]}"
    elif hour:
        hour = hour[:5]
    return " ".join(p for p in (day, hour) if p)


def _road_os(r: Node) -> ModalBlock:
    fields = [
        ("TERMO DE AUTORIZAÇÃO DE FRETAMENTO", r.text("TAF")),
        ("Nº DE REGISTRO ESTADUAL", r.text("NroRegEstadual")),
        ("PLACA DO VEÍCULO", r.text("veic/placa")),
        ("RENAVAM", r.text("veic/RENAVAM")),
        ("UF DO VEÍCULO", r.text("veic/UF")),
    ]
    owner = r.text("veic/prop/xNome")
    if owner:
        fields += [
            ("PROPRIETÁRIO", owner),
            ("CNPJ/CPF DO PROPRIETÁRIO", r.text("veic/prop/CNPJ") or r.text("veic/prop/CPF")),
            ("TIPO DE PROPRIETÁRIO", _OWNER_TYPE.get(r.text("veic/prop/tpProp"), r.text("veic/prop/tpProp"))),
        ]
    charter = r.text("infFretamento/tpFretamento")
    if charter:
        fields += [
            ("TIPO DE FRETAMENTO", _CHARTER.get(charter, charter)),
            ("DATA E HORA DA VIAGEM", r.text("infFretamento/dhViagem")),
        ]
    return ModalBlock("DADOS ESPECÍFICOS DO MODAL RODOVIÁRIO", tuple(fields), note=_ROAD_NOTE)


def _air(r: Node) -> ModalBlock:
    handling = ", ".join(r.texts("natCarga/cInfManu"))
    fields = (
        ("NÚMERO DA MINUTA", r.text("nMinu")),
        ("NÚMERO OPERACIONAL (AWB)", r.text("nOCA")),
        ("DATA PREVISTA DA ENTREGA", r.text("dPrevAereo")),
        ("DIMENSÕES (CM)", r.text("natCarga/xDime")),
        ("INFORMAÇÕES DE MANUSEIO", handling),
        ("CLASSE DA TARIFA", r.text("tarifa/CL")),
        ("CÓDIGO DA TARIFA", r.text("tarifa/cTar")),
        ("VALOR DA TARIFA", r.text("tarifa/vTar")),
    )
    dangerous = tuple(
        (
            p.text("nONU"),
            p.text("qTotEmb"),
            formats.quantity(p.text("infTotAP/qTotProd")),
            _AIR_UNITS.get(p.text("infTotAP/uniAP"), p.text("infTotAP/uniAP")),
        )
        for p in r.all("peri")
    )
    header = ("Nº ONU (ARTIGO PERIGOSO)", "QTD. VOLUMES", "QTD. TOTAL", "UNIDADE") if dangerous else ()
    return ModalBlock("DADOS ESPECÍFICOS DO MODAL AÉREO", fields, header, dangerous)


def _water(r: Node) -> ModalBlock:
    barges = ", ".join(r.texts("balsa/xBalsa"))
    fields = (
        ("BASE DE CÁLCULO AFRMM", r.text("vPrest")),
        ("VALOR DO AFRMM", r.text("vAFRMM")),
        ("IDENTIFICAÇÃO DO NAVIO", r.text("xNavio")),
        ("IRIN DO NAVIO", r.text("irin")),
        ("NÚMERO DA VIAGEM", r.text("nViag")),
        ("DIREÇÃO", _DIRECTION.get(r.text("direc"), r.text("direc"))),
        ("TIPO DE NAVEGAÇÃO", _NAVIGATION.get(r.text("tpNav"), r.text("tpNav"))),
        ("BALSAS", barges),
    )
    containers = tuple(
        (c.text("nCont"), ", ".join(c.texts("lacre/nLacre")), ", ".join(c.texts("infDoc/infNFe/chave")))
        for c in r.all("detCont")
    )
    header = ("CONTÊINER", "LACRES", "NF-E NO CONTÊINER") if containers else ()
    return ModalBlock("DADOS ESPECÍFICOS DO MODAL AQUAVIÁRIO", fields, header, containers)


def _rail(r: Node) -> ModalBlock:
    fields = [
        ("TIPO DE TRÁFEGO", _FERRO_TRAFFIC.get(r.text("tpTraf"), r.text("tpTraf"))),
        ("FLUXO FERROVIÁRIO", r.text("fluxo")),
    ]
    if r.text("trafMut/respFat"):
        fields += [
            ("RESPONSÁVEL PELO FATURAMENTO", _FERRO_BILLING.get(r.text("trafMut/respFat"), r.text("trafMut/respFat"))),
            ("FERROVIA EMITENTE", _FERRO_BILLING.get(r.text("trafMut/ferrEmi"), r.text("trafMut/ferrEmi"))),
            ("VALOR DO FRETE DO TRÁFEGO MÚTUO", r.text("trafMut/vFrete")),
            ("CT-E FERROVIÁRIO DE ORIGEM", r.text("trafMut/chCTeFerroOrigem")),
        ]
    railways = tuple(
        (
            formats.tax_id(f.text("CNPJ")),
            f.text("xNome"),
            f.text("IE"),
            f"{f.text('enderFerro/xMun')} - {f.text('enderFerro/UF')}",
        )
        for f in r.all("trafMut/ferroEnv")
    )
    header = ("CNPJ FERROVIA ENVOLVIDA", "RAZÃO SOCIAL", "IE", "MUNICÍPIO") if railways else ()
    return ModalBlock("DADOS ESPECÍFICOS DO MODAL FERROVIÁRIO", tuple(fields), header, railways)


def _pipeline(r: Node) -> ModalBlock:
    return ModalBlock(
        "DADOS ESPECÍFICOS DO MODAL DUTOVIÁRIO",
        (
            ("VALOR DA TARIFA", r.text("vTar")),
            ("DATA DE INÍCIO DA PRESTAÇÃO", r.text("dIni")),
            ("DATA DE FIM DA PRESTAÇÃO", r.text("dFim")),
            ("CLASSIFICAÇÃO DO DUTO", r.text("classDuto")),
            ("TIPO DE CONTRATAÇÃO", r.text("tpContratacao")),
            ("PONTO DE ENTRADA", r.text("codPontoEntrada")),
            ("PONTO DE SAÍDA", r.text("codPontoSaida")),
            ("NÚMERO DO CONTRATO", r.text("nContrato")),
        ),
    )


def _multimodal(r: Node) -> ModalBlock:
    return ModalBlock(
        "DADOS ESPECÍFICOS DO TRANSPORTE MULTIMODAL",
        (
            ("COTM", r.text("COTM")),
            ("INDICADOR DE NEGOCIABILIDADE", _NEGOTIABLE.get(r.text("indNegociavel"), r.text("indNegociavel"))),
            ("SEGURADORA", r.text("seg/infSeg/xSeg")),
            ("CNPJ DA SEGURADORA", r.text("seg/infSeg/CNPJ")),
            ("NÚMERO DA APÓLICE", r.text("seg/nApol")),
            ("NÚMERO DA AVERBAÇÃO", r.text("seg/nAver")),
        ),
    )


_BUILDERS = {
    "rodoOS": _road_os,
    "aereo": _air,
    "aquav": _water,
    "ferrov": _rail,
    "duto": _pipeline,
    "multimodal": _multimodal,
}
