"""Official endpoints and SOAP bindings match protocol.md."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from app.config.endpoints import (
    NFE_RECEPCAO_EVENTO_ACTION_AN,
    NFE_RECEPCAO_EVENTO_ACTION_GENERIC,
    OFFICIAL_URLS,
    SOAP_BINDINGS,
    Service,
    Transport,
    official_url,
    transport,
)
from app.core.products import Environment, Product


def test_environment_values_are_tp_amb() -> None:
    assert Environment.PRODUCAO.value == 1
    assert Environment.HOMOLOGACAO.value == 2
    assert Environment(2).label == "Homologação / Produção restrita"
    assert Environment.PRODUCAO.label == "Produção"
    assert Environment.from_key("homologacao") is Environment.HOMOLOGACAO
    with pytest.raises(ValueError):
        Environment.from_key("teste")


def test_every_service_has_both_environments_over_https() -> None:
    assert len(OFFICIAL_URLS) == len(Service) * len(Environment)
    for service in Service:
        for environment in Environment:
            parts = urlsplit(official_url(service, environment))
            assert parts.scheme == "https"
            assert parts.hostname


@pytest.mark.parametrize(
    ("service", "environment", "url"),
    [
        (
            Service.NFE_DISTRIBUICAO,
            Environment.PRODUCAO,
            "https://www1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx",
        ),
        (
            Service.NFE_DISTRIBUICAO,
            Environment.HOMOLOGACAO,
            "https://hom1.nfe.fazenda.gov.br/NFeDistribuicaoDFe/NFeDistribuicaoDFe.asmx",
        ),
        (
            Service.CTE_DISTRIBUICAO,
            Environment.PRODUCAO,
            "https://www1.cte.fazenda.gov.br/CTeDistribuicaoDFe/CTeDistribuicaoDFe.asmx",
        ),
        (
            Service.CTE_DISTRIBUICAO,
            Environment.HOMOLOGACAO,
            "https://hom1.cte.fazenda.gov.br/CTeDistribuicaoDFe/CTeDistribuicaoDFe.asmx",
        ),
        (
            Service.NFE_RECEPCAO_EVENTO,
            Environment.PRODUCAO,
            "https://www.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx",
        ),
        (
            Service.NFE_RECEPCAO_EVENTO,
            Environment.HOMOLOGACAO,
            "https://hom1.nfe.fazenda.gov.br/NFeRecepcaoEvento4/NFeRecepcaoEvento4.asmx",
        ),
        (Service.NFSE_ADN_CONTRIBUINTES, Environment.PRODUCAO, "https://adn.nfse.gov.br/contribuintes"),
        (
            Service.NFSE_ADN_CONTRIBUINTES,
            Environment.HOMOLOGACAO,
            "https://adn.producaorestrita.nfse.gov.br/contribuintes",
        ),
        (Service.NFSE_SEFIN, Environment.PRODUCAO, "https://sefin.nfse.gov.br/SefinNacional"),
        (Service.NFSE_SEFIN, Environment.HOMOLOGACAO, "https://sefin.producaorestrita.nfse.gov.br/SefinNacional"),
    ],
)
def test_official_urls(service: Service, environment: Environment, url: str) -> None:
    assert official_url(service, environment) == url


def test_products_and_transports() -> None:
    assert Service.NFE_RECEPCAO_EVENTO.product is Product.NFE
    assert Service.CTE_DISTRIBUICAO.product is Product.CTE
    assert Service.NFSE_SEFIN.product is Product.NFSE
    assert transport(Service.NFE_DISTRIBUICAO) is Transport.SOAP12
    assert transport(Service.NFSE_ADN_CONTRIBUINTES) is Transport.REST_JSON
    assert all(service.label for service in Service)


def test_soap_bindings() -> None:
    nfe = SOAP_BINDINGS[Service.NFE_DISTRIBUICAO]
    assert nfe.action == "http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe/nfeDistDFeInteresse"
    assert (nfe.operation, nfe.message_element) == ("nfeDistDFeInteresse", "nfeDadosMsg")
    cte = SOAP_BINDINGS[Service.CTE_DISTRIBUICAO]
    assert cte.action == "http://www.portalfiscal.inf.br/cte/wsdl/CTeDistribuicaoDFe/cteDistDFeInteresse"
    assert (cte.operation, cte.message_element) == ("cteDistDFeInteresse", "cteDadosMsg")
    event = SOAP_BINDINGS[Service.NFE_RECEPCAO_EVENTO]
    assert event.operation is None
    assert event.action == NFE_RECEPCAO_EVENTO_ACTION_AN
    assert event.action.endswith("/nfeRecepcaoEventoNF")
    assert NFE_RECEPCAO_EVENTO_ACTION_GENERIC.endswith("/nfeRecepcaoEvento")
    assert set(event.result_elements) == {"nfeRecepcaoEventoNFResult", "nfeResultMsg"}
