"""The NFS-e Nacional reader on every real fixture and on generated notes with IBS/CBS."""

from __future__ import annotations

import base64
import gzip
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from app.core.documents import Direction, DocumentKind, DocumentStatus, PartyRole
from app.documents.model import UnknownMeta
from app.documents.nfse import (
    NfseEventMeta,
    NfseMeta,
    decode_payload,
    direction_of_nfse,
    read_nfse,
    read_nfse_payload,
)
from app.safexml import CorruptPayload, MalformedXml
from app.sandbox.docgen import DocumentFactory, Party

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "nfse"


def _read(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _nfse(name: str) -> NfseMeta:
    meta = read_nfse(_read(name))
    assert isinstance(meta, NfseMeta)
    return meta


# (file, key, number, prestador, tomador, vServ, vLiq, vISSQN, competence, cstat)
REAL = [
    ("bfr-real_nfse.xml", "31062002211111111000111000000000023426054805029948", 234,
     ("11111111000111", "11.111.111 PRESTADOR EXEMPLO ME", None),
     ("33333333000133", "TOMADOR EXEMPLO COMERCIO LTDA", None), 35000, 35000, None, date(2026, 5, 4), "107"),
    ("bfr-nfse_cancelada_242.xml", "31062002211111111000111000000000024226067411147892", 242,
     ("11111111000111", "11.111.111 PRESTADOR EXEMPLO ME", None),
     ("22222222000122", "TOMADOR EXEMPLO SERVICOS LTDA", None), 87271, 87271, None, date(2026, 6, 5), "107"),
    ("bfr-6187ae43-fd6b-4819-8e9e-9a0911eceec3.xml", "31062002211111111000111000000000024326069400065407", 243,
     ("11111111000111", "11.111.111 PRESTADOR EXEMPLO ME", None),
     ("22222222000122", "TOMADOR EXEMPLO SERVICOS LTDA", None), 91102, 91102, None, date(2026, 6, 9), "107"),
    ("nfse-homolog-2025.xml", "15054862231305199000190000000000000225121645026250", 2,
     ("31305199000190", "DINAMARQUES T SANTOS", "2348"),
     ("76920500230", "FRANCIONE DA ROCHA NASCIMENTO", "9199"), 23000, 23000, 1150, date(2025, 12, 3), "100"),
    ("nfse-prestador-pessoa-fisica.xml", "23140031100006672992383000000000004625120025708585", 46,
     ("06672992383", "NAGILA DE SOUSA FREITAS", None),
     ("10237604000100", "FUNDO MUNICIPAL DE SAUDE - VARZEA ALEGRE", None), 185000, 175750, 9250,
     date(2025, 12, 15), "100"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "key", "number", "prest", "toma", "serv", "liq", "iss", "compet", "cstat"), REAL)
def test_real_nfse_parties_and_values(
    name: str,
    key: str,
    number: int,
    prest: tuple[str, str, str | None],
    toma: tuple[str, str, str | None],
    serv: int,
    liq: int,
    iss: int | None,
    compet: date,
    cstat: str,
) -> None:
    meta = _nfse(name)
    assert (meta.kind, meta.access_key, meta.number, meta.cstat) == (DocumentKind.NFSE, key, number, cstat)
    assert meta.status is DocumentStatus.AUTHORISED
    provider = meta.parties[0]
    assert (provider.role, provider.doc, provider.name, provider.municipal_registration) == (PartyRole.EMITTER, *prest)
    assert meta.taker is not None
    assert (meta.taker.doc, meta.taker.name, meta.taker.municipal_registration) == toma
    assert meta.taker.doc_type == ("CPF" if len(toma[0]) == 11 else "CNPJ")
    assert meta.intermediary is None
    assert (meta.service_cents, meta.net_cents, meta.iss_cents) == (serv, liq, iss)
    assert meta.competence == compet
    assert meta.issued_at is not None and meta.issued_at.utcoffset() is not None
    assert meta.national_code and len(meta.national_code) == 6
    assert meta.nbs and meta.description
    assert meta.incidence_code == key[:7]
    assert meta.ibscbs is None  # none of the real ones carries the reform's group
    if name.startswith("bfr-"):  # anonymised: their CNPJs lost their check digits, a warning only
        assert meta.warnings and all("dígito verificador" in w for w in meta.warnings)
        assert len(meta.warnings) == len(set(meta.warnings)) == 2
    else:
        assert meta.warnings == ()


def test_real_nfse_service_codes_and_retention() -> None:
    meta = _nfse("bfr-real_nfse.xml")
    assert (meta.national_code, meta.municipal_code, meta.nbs) == ("010701", "001", "115013000")
    assert meta.incidence_name == "Belo Horizonte"
    assert meta.description is not None and meta.description.endswith("Contrato Manutenção R$ 350,00")
    assert meta.iss_retention == "1"
    homolog = _nfse("nfse-homolog-2025.xml")
    assert (homolog.base_cents, homolog.iss_rate, homolog.retained_cents) == (23000, "5.00", 0)
    assert homolog.environment == 2 and homolog.serie == "900" and homolog.dps_number == 3
    pf = _nfse("nfse-prestador-pessoa-fisica.xml")
    assert pf.iss_retention == "2"  # withheld by the taker
    assert pf.parties[0].doc_type == "CPF"


def test_real_cancellation_event_linked_to_its_nfse() -> None:
    event = read_nfse(_read("bfr-5e6ca60e-7148-4d44-8bd8-d3aff2a6c16f_cancel.xml"))
    assert isinstance(event, NfseEventMeta)
    cancelled = _nfse("bfr-nfse_cancelada_242.xml")
    assert event.access_key == cancelled.access_key
    assert (event.tp_evento, event.n_seq_evento, event.reason_code, event.reason) == (
        "101101", 1, "1", "Erro na emissão."
    )  # fmt: skip
    assert event.description == "Cancelamento de NFS-e"
    assert event.author_doc == "11111111000111"
    assert event.cancels and event.registered
    assert event.registered_at == datetime(2026, 6, 5, 21, 14, 40, tzinfo=UTC)
    assert event.event_id == "EVT31062002211111111000111000000000024226067411147892101101001"


def test_malformed_nfse_refused_with_a_clear_message() -> None:
    with pytest.raises(MalformedXml) as caught:
        read_nfse(_read("malformed-nfse-unescaped-ampersand.xml"))
    assert "linha 98" in caught.value.message


def test_payload_round_trip_is_byte_exact() -> None:
    xml = _read("nfse-homolog-2025.xml")
    arquivo = base64.b64encode(gzip.compress(xml)).decode()
    assert decode_payload(arquivo) == xml
    meta = read_nfse_payload(arquivo)
    assert isinstance(meta, NfseMeta) and meta.number == 2


def test_corrupt_payload_refused() -> None:
    with pytest.raises(CorruptPayload):
        decode_payload("não é base64!")
    with pytest.raises(CorruptPayload):
        decode_payload(base64.b64encode(b"plain, not gzip").decode())


def test_unknown_and_cnc_roots_kept() -> None:
    cnc = read_nfse(b'<CNC xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.00"><infCNC/></CNC>')
    assert isinstance(cnc, UnknownMeta) and cnc.root == "CNC"
    other = read_nfse(b"<qualquer/>")
    assert isinstance(other, UnknownMeta) and other.root == "qualquer"


ISSUED = datetime(2026, 9, 14, 13, 0, tzinfo=UTC)
CLIENT = Party("11444777000161", "CLIENTE & FILHOS LTDA", "PR", "4106902")
MIDDLE = Party("12ABC34501DE35", "INTERMEDIÁRIA ALFA S.A.", "SP", "3550308")


def test_generated_nfse_with_ibscbs_and_intermediary(factory: DocumentFactory, supplier: Party) -> None:
    generated = factory.nfse(
        provider=supplier,
        taker=CLIENT,
        intermediary=MIDDLE,
        issued_at=ISSUED,
        service_cents=250_000,
        with_ibscbs=True,
    )
    meta = read_nfse(generated.nfse)
    assert isinstance(meta, NfseMeta)
    assert meta.access_key == generated.key
    assert meta.intermediary is not None and meta.intermediary.doc == "12ABC34501DE35"  # alphanumeric CNPJ
    assert meta.intermediary.role is PartyRole.INTERMEDIARY
    assert meta.taker is not None and meta.taker.name == "CLIENTE & FILHOS LTDA"
    ibs = meta.ibscbs
    assert ibs is not None
    assert (ibs.base_cents, ibs.total_cents, ibs.cst, ibs.class_code, ibs.operation_code) == (
        250_000, 250_000, "000", "000001", "100301"
    )  # fmt: skip
    # at the rates the sandbox drew: 2026's (all the IBS the state's) or 2027-2028's (half the municipality's)
    assert (ibs.cbs_rate, ibs.ibs_uf_rate, ibs.ibs_mun_rate, ibs.cbs_cents, ibs.ibs_uf_cents, ibs.ibs_mun_cents) in (
        ("0.90", "0.10", "0.00", 2250, 250, 0), ("8.80", "0.05", "0.05", 22_000, 125, 125)
    )  # fmt: skip
    assert ibs.ibs_cents == ibs.ibs_uf_cents + ibs.ibs_mun_cents
    assert meta.iss_cents == 12_500 and meta.service_cents == 250_000
    assert meta.warnings == ()
    dps = read_nfse(generated.dps)
    assert isinstance(dps, NfseMeta) and dps.kind is DocumentKind.DPS and dps.access_key is None
    assert dps.ibscbs is not None and dps.ibscbs.cst == "000"


def test_direction_emitted_only_when_only_provider(factory: DocumentFactory, supplier: Party) -> None:
    own = read_nfse(factory.nfse(provider=CLIENT, taker=supplier, issued_at=ISSUED).nfse)
    to_self = read_nfse(factory.nfse(provider=CLIENT, taker=CLIENT, issued_at=ISSUED).nfse)
    received = read_nfse(factory.nfse(provider=supplier, taker=CLIENT, issued_at=ISSUED).nfse)
    via = read_nfse(factory.nfse(provider=CLIENT, taker=supplier, intermediary=CLIENT, issued_at=ISSUED).nfse)
    assert isinstance(own, NfseMeta) and isinstance(to_self, NfseMeta)
    assert isinstance(received, NfseMeta) and isinstance(via, NfseMeta)
    assert direction_of_nfse(CLIENT.doc, own) is Direction.EMITTED
    assert direction_of_nfse(CLIENT.doc, to_self) is Direction.RECEIVED
    assert direction_of_nfse(CLIENT.doc, received) is Direction.RECEIVED
    assert direction_of_nfse(CLIENT.doc, via) is Direction.RECEIVED


def test_generated_taker_event(factory: DocumentFactory, supplier: Party) -> None:
    nfse = factory.nfse(provider=supplier, taker=CLIENT, issued_at=ISSUED)
    event = factory.nfse_event(nfse, code="203206", author=CLIENT, at=ISSUED)
    meta = read_nfse(event.evento)
    assert isinstance(meta, NfseEventMeta)
    assert (meta.access_key, meta.tp_evento, meta.author_doc, meta.reason_code) == (nfse.key, "203206", CLIENT.doc, "3")
    assert not meta.cancels


def test_substitution_event_records_the_substitute_key() -> None:
    key = "31062002211111111000111000000000024226067411147892"
    substitute = "31062002211111111000111000000000024326069400065407"
    xml = (
        '<pedRegEvento xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01">'
        f'<infPedReg Id="PRE{key}105102"><tpAmb>1</tpAmb><verAplic>x</verAplic>'
        f"<dhEvento>2026-06-09T10:30:00-03:00</dhEvento><CNPJAutor>11111111000111</CNPJAutor><chNFSe>{key}</chNFSe>"
        "<e105102><xDesc>Cancelamento de NFS-e por Substituição</xDesc><cMotivo>01</cMotivo>"
        f"<xMotivo>Desenquadramento de NFS-e do Simples Nacional</xMotivo><chSubstituta>{substitute}</chSubstituta>"
        "</e105102></infPedReg></pedRegEvento>"
    ).encode()
    meta = read_nfse(xml)
    assert isinstance(meta, NfseEventMeta)
    assert (meta.tp_evento, meta.substitute_key, meta.registered, meta.cancels) == ("105102", substitute, False, False)
