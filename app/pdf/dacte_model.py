"""What a DACTE prints, as frozen dataclasses of the XML's own strings (``app.pdf.dacte_data`` reads
them, ``app.pdf.dacte`` draws them): parties, values, taxes, carried documents, the modal block."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.pdf.dacte_modal import ModalBlock


@dataclass(frozen=True, slots=True)
class Address:
    street: str = ""
    number: str = ""
    complement: str = ""
    district: str = ""
    city: str = ""
    uf: str = ""
    cep: str = ""
    country: str = ""

    @property
    def line(self) -> str:
        """ "RUA X, 12, SALA 3, CENTRO": the street line as the DACTE prints it."""
        return ", ".join(p for p in (self.street, self.number, self.complement, self.district) if p)

    @property
    def town(self) -> str:
        return " - ".join(p for p in (self.city, self.uf) if p)


@dataclass(frozen=True, slots=True)
class Party:
    """One party of the CT-e; ``doc`` is the CNPJ or CPF as written (unformatted)."""

    name: str = ""
    doc: str = ""
    ie: str = ""
    phone: str = ""
    address: Address = field(default_factory=Address)
    trade_name: str = ""
    email: str = ""

    @property
    def present(self) -> bool:
        return bool(self.name or self.doc)


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class Quantity:
    measure: str  # tpMed ("PESO BRUTO", "UNIDADE")
    unit: str  # cUnid as text: KG, M3, TON, UN, LT, MMBTU
    amount: str


@dataclass(frozen=True, slots=True)
class CarriedDoc:
    """One line of DOCUMENTOS ORIGINÁRIOS: kind ("NF-E", "NF", "OUTROS"), its key or issuer, serie/number."""

    kind: str
    ident: str
    serie_number: str = ""


@dataclass(frozen=True, slots=True)
class Icms:
    situation: str = ""
    base: str = ""
    rate: str = ""
    value: str = ""
    base_reduction: str = ""
    st_value: str = ""
    credit: str = ""


@dataclass(frozen=True, slots=True)
class IbsCbs:
    """Reforma Tributária group (imp/IBSCBS), when the CT-e carries it."""

    cst: str = ""
    class_code: str = ""
    base: str = ""
    ibs_uf_rate: str = ""
    ibs_uf: str = ""
    ibs_mun_rate: str = ""
    ibs_mun: str = ""
    ibs_total: str = ""
    cbs_rate: str = ""
    cbs: str = ""


@dataclass(frozen=True, slots=True)
class Dacte:
    key: str
    model: str  # "57" CT-e, "67" CT-e OS
    version: str
    serie: str
    number: str
    issued_at: str
    environment: str  # tpAmb: "1" produção, "2" homologação
    emission_type: str
    cte_type: str
    service_type: str
    modal: str  # code "01".."06"
    cfop: str
    nature: str
    start: str  # "SAO JOAO BATISTA - SC"
    end: str
    emitter: Party
    sender: Party
    shipper: Party
    receiver: Party
    recipient: Party
    taker: Party
    taker_role: str
    total: str
    receivable: str
    components: tuple[Component, ...]
    icms: Icms
    ibscbs: IbsCbs | None
    approx_taxes: str
    product: str
    other_features: str
    cargo_value: str
    quantities: tuple[Quantity, ...]
    documents: tuple[CarriedDoc, ...]
    observations: tuple[str, ...]
    fisco_observations: tuple[str, ...]
    modal_block: ModalBlock | None
    protocol: str
    authorised_at: str
    protocol_status: str
    qr_url: str
    service_description: str = ""  # CT-e OS: infServico/xDescServ
    insurance: tuple[tuple[str, str, str], ...] = ()  # CT-e OS: (responsible, insurer, policy) of infCTeNorm/seg
    route: str = ""  # CT-e OS: the states crossed (ide/infPercurso/UFPer)
    federal_taxes: tuple[tuple[str, str], ...] = ()  # CT-e OS: imp/infTribFed (label, value), when present
    referenced_key: str = ""  # complement / annulment / substitute: the CT-e it refers to
    cancelled: bool = False

    @property
    def is_os(self) -> bool:
        return self.model == "67"

    @property
    def homologation(self) -> bool:
        return self.environment == "2"
