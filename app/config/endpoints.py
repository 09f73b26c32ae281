"""The national services the app talks to: official URLs per environment and SOAP bindings.

Sources are in shared/docs/protocol.md (§1.1-1.2 NF-e distribution, §2 CT-e distribution, §3.1
NFeRecepcaoEvento4 at the Ambiente Nacional, §4.1 NFS-e hosts). A settings file may point any
service at another URL (the sandbox, a proxy); see :mod:`app.config.settings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum

from app.core.products import Environment, Product


class Service(StrEnum):
    """A remote service; the value is its key in settings.json."""

    NFE_DISTRIBUICAO = "nfe_distribuicao"
    CTE_DISTRIBUICAO = "cte_distribuicao"
    NFE_RECEPCAO_EVENTO = "nfe_recepcao_evento"
    NFSE_ADN_CONTRIBUINTES = "nfse_adn_contribuintes"
    NFSE_SEFIN = "nfse_sefin"

    @property
    def product(self) -> Product:
        return _PRODUCT_BY_SERVICE[self]

    @property
    def label(self) -> str:
        """Name shown to the user."""
        return _SERVICE_LABELS[self]


_PRODUCT_BY_SERVICE = {
    Service.NFE_DISTRIBUICAO: Product.NFE,
    Service.NFE_RECEPCAO_EVENTO: Product.NFE,
    Service.CTE_DISTRIBUICAO: Product.CTE,
    Service.NFSE_ADN_CONTRIBUINTES: Product.NFSE,
    Service.NFSE_SEFIN: Product.NFSE,
}

_SERVICE_LABELS = {
    Service.NFE_DISTRIBUICAO: "Distribuição de DF-e da NF-e (Ambiente Nacional)",
    Service.CTE_DISTRIBUICAO: "Distribuição de DF-e do CT-e (Ambiente Nacional)",
    Service.NFE_RECEPCAO_EVENTO: "Recepção de Eventos da NF-e (manifestação do destinatário)",
    Service.NFSE_ADN_CONTRIBUINTES: "NFS-e Nacional: ADN Contribuintes",
    Service.NFSE_SEFIN: "NFS-e Nacional: Sefin Nacional",
}


OFFICIAL_URLS: dict[tuple[Service, Environment], str] = {
    (
        Service.NFE_DISTRIBUICAO,
        Environment.PRODUCAO,
    ): "https://www1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx",
    # ⚠ some third-party code uses hom.nfe…; hom1 is what sped-nfe and nfelib use.
    (
        Service.NFE_DISTRIBUICAO,
        Environment.HOMOLOGACAO,
    ): "https://hom1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx",
    (
        Service.CTE_DISTRIBUICAO,
        Environment.PRODUCAO,
    ): "https://www1.cte.fazenda.gov.br/CTeDistribuicaoDFe/CTeDistribuicaoDFe.asmx",
    (
        Service.CTE_DISTRIBUICAO,
        Environment.HOMOLOGACAO,
    ): "https://hom1.cte.fazenda.gov.br/CTeDistribuicaoDFe/CTeDistribuicaoDFe.asmx",
    # ⚠ the AN's event service is on www. (not www1.) in production; the recorded real WSDL agrees.
    (
        Service.NFE_RECEPCAO_EVENTO,
        Environment.PRODUCAO,
    ): "https://www.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx",
    (
        Service.NFE_RECEPCAO_EVENTO,
        Environment.HOMOLOGACAO,
    ): "https://hom1.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx",
    (Service.NFSE_ADN_CONTRIBUINTES, Environment.PRODUCAO): "https://adn.nfse.gov.br/contribuintes",
    (Service.NFSE_ADN_CONTRIBUINTES, Environment.HOMOLOGACAO): "https://adn.producaorestrita.nfse.gov.br/contribuintes",
    (Service.NFSE_SEFIN, Environment.PRODUCAO): "https://sefin.nfse.gov.br/SefinNacional",
    (Service.NFSE_SEFIN, Environment.HOMOLOGACAO): "https://sefin.producaorestrita.nfse.gov.br/SefinNacional",
}


def official_url(service: Service, environment: Environment) -> str:
    return OFFICIAL_URLS[(service, environment)]


SOAP12_ENVELOPE_NS = "http://www.w3.org/2003/05/soap-envelope"
NFE_NS = "http://www.portalfiscal.inf.br/nfe"
CTE_NS = "http://www.portalfiscal.inf.br/cte"


@dataclass(frozen=True)
class SoapBinding:
    """How one SOAP 1.2 operation is wrapped (no header block is sent to any of these services).

    Body: ``<{operation} xmlns={namespace}><{message_element} xmlns={namespace}>payload…``, or with
    ``operation=None`` the message element sits directly in the Body. ``action`` goes in the
    Content-Type's ``action=`` parameter. ``result_elements`` lists every reply wrapper seen.
    """

    namespace: str
    operation: str | None
    message_element: str
    action: str
    result_elements: tuple[str, ...]


NFE_DISTRIBUICAO_NS = "http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe"
CTE_DISTRIBUICAO_NS = "http://www.portalfiscal.inf.br/cte/wsdl/CTeDistribuicaoDFe"
NFE_RECEPCAO_EVENTO_NS = "http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4"

NFE_DISTRIBUICAO_ACTION = f"{NFE_DISTRIBUICAO_NS}/nfeDistDFeInteresse"
# ⚠ sped-cte sends …/CTeDistribuicaoDFe/CTeDistribuicaoDFe; independent clients use cteDistDFeInteresse.
CTE_DISTRIBUICAO_ACTION = f"{CTE_DISTRIBUICAO_NS}/cteDistDFeInteresse"
CTE_DISTRIBUICAO_ACTION_SPED_CTE = f"{CTE_DISTRIBUICAO_NS}/CTeDistribuicaoDFe"
# ⚠ The AN's own ASMX (real WSDL recorded in 2020, real replies 2023) uses nfeRecepcaoEventoNF and
# replies in nfeRecepcaoEventoNFResult; the generic SVRS WSDL shipped in nfelib (and sped-nfe) uses
# nfeRecepcaoEvento / nfeResultMsg. Send the AN's; accept either wrapper in replies.
NFE_RECEPCAO_EVENTO_ACTION_AN = f"{NFE_RECEPCAO_EVENTO_NS}/nfeRecepcaoEventoNF"
NFE_RECEPCAO_EVENTO_ACTION_GENERIC = f"{NFE_RECEPCAO_EVENTO_NS}/nfeRecepcaoEvento"


def _distribution_binding(prefix: str, namespace: str, action: str) -> SoapBinding:
    """NFeDistribuicaoDFe and CTeDistribuicaoDFe name their parts alike, but for the product's prefix."""
    operation = f"{prefix}DistDFeInteresse"
    return SoapBinding(
        namespace=namespace,
        operation=operation,
        message_element=f"{prefix}DadosMsg",
        action=action,
        result_elements=(f"{operation}Response", f"{operation}Result"),
    )


SOAP_BINDINGS: dict[Service, SoapBinding] = {
    Service.NFE_DISTRIBUICAO: _distribution_binding("nfe", NFE_DISTRIBUICAO_NS, NFE_DISTRIBUICAO_ACTION),
    Service.CTE_DISTRIBUICAO: _distribution_binding("cte", CTE_DISTRIBUICAO_NS, CTE_DISTRIBUICAO_ACTION),
    Service.NFE_RECEPCAO_EVENTO: SoapBinding(
        namespace=NFE_RECEPCAO_EVENTO_NS,
        operation=None,  # nfeDadosMsg sits directly in the Body (no operation wrapper)
        message_element="nfeDadosMsg",
        action=NFE_RECEPCAO_EVENTO_ACTION_AN,
        result_elements=("nfeRecepcaoEventoNFResult", "nfeResultMsg"),
    ),
}


class Transport(Enum):
    """How a service is reached."""

    SOAP12 = "soap12"
    REST_JSON = "rest_json"


def transport(service: Service) -> Transport:
    return Transport.SOAP12 if service in SOAP_BINDINGS else Transport.REST_JSON
