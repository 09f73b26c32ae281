"""The CT-e reader on every CT-e of shared/fixtures, on generated cteProc/procEventoCTe 4.00, on a
CT-e OS (model 67) and on what it must keep without reading (GTV-e, unknown roots)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from app.core.documents import Direction, DocumentKind, DocumentStatus, PartyRole
from app.documents.cte import read_cte_document
from app.documents.model import CteMeta, DocumentDataError, EventMeta, UnknownMeta, direction_of
from app.safexml import XmlRejected
from app.sandbox.docgen import DocumentFactory, Party

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cte"
CTE = "http://www.portalfiscal.inf.br/cte"
BFR_KEY = "42240302484555000343570020003396861082134657"
BFR_NFE = "02394910232349239234934138491040891884149930"

# file -> (root, version, key, model, modal, tpCTe, vTPrest cents, dhEmi, toma code,
#          {role: CNPJ}, carried NF-e keys (distinct, in order)). Read by hand from each file.
EXPECTED = {
    "35190602427026001207570040000522031000522035-cte-multimodal.xml": (
        "CTe",
        "3.00",
        "35190611111111111111570040000222221000222222",
        "57",
        "06",
        "0",
        1180775,
        datetime(2019, 6, 14, 12, 3, 13, tzinfo=timezone(timedelta(hours=-3))),
        "3",
        {
            "emitter": "11111111111111",
            "sender": "99999999999999",
            "shipper": "99999999999999",
            "receiver": "99999999999999",
            "recipient": "99999999999999",
            "taker": "99999999999999",
        },
        ("9" * 44,),
    ),
    "43120178408960000182570010000000041000000047-cte.xml": (
        "CTe",
        "3.00",
        "43120178408960000182570010000000041000000047",
        "57",
        "01",
        "0",
        230000,
        datetime(2012, 1, 6, 17, 25, 56, tzinfo=timezone(timedelta(hours=-2))),
        "0",
        {
            "emitter": "78408960000182",
            "sender": "78408960000182",
            "shipper": "78408960000182",
            "receiver": "81639791000104",
            "recipient": "81639791000104",
            "taker": "78408960000182",
        },
        (),
    ),
    "bfr-dacte_aereo_test.xml": (
        "CTe",
        "4.00",
        "35240781583054000129570010000057411040645890",
        "57",
        "02",
        "0",
        4700,
        datetime(2020, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=1))),
        "3",
        {
            "emitter": "81583054000129",
            "sender": "12046835000161",
            "shipper": "12046835000161",
            "receiver": "84148732000113",
            "recipient": "46081676000158",
            "taker": "46081676000158",
        },
        ("41190806117473000150550010000586251016759484",),
    ),
    "bfr-dacte_reforma_tributaria.xml": (
        "cteProc",
        "4.00",
        BFR_KEY,
        "57",
        "01",
        "0",
        22119,
        datetime(2024, 3, 27, tzinfo=timezone(timedelta(hours=-3))),
        "0",
        {
            "emitter": "92382301841312",
            "sender": "23924902942209",
            "recipient": "02394820392092",
            "taker": "23924902942209",
        },
        (BFR_NFE,),
    ),
    "bfr-dacte_test_1.xml": (
        "cteProc",
        "4.00",
        BFR_KEY,
        "57",
        "01",
        "0",
        22119,
        datetime(2024, 3, 27, tzinfo=timezone(timedelta(hours=-3))),
        "0",
        {
            "emitter": "92382301841312",
            "sender": "23924902942209",
            "recipient": "02394820392092",
            "taker": "23924902942209",
        },
        (BFR_NFE,),
    ),
    "bfr-dacte_test_multi_pages.xml": (
        "cteProc",
        "4.00",
        BFR_KEY,
        "57",
        "01",
        "0",
        22119,
        datetime(2024, 3, 27, tzinfo=timezone(timedelta(hours=-3))),
        "0",
        {
            "emitter": "92382301841312",
            "sender": "23924902942209",
            "recipient": "02394820392092",
            "taker": "23924902942209",
        },
        (
            BFR_NFE,
            "62367248427294724924247484294724947224924724",
            "26647257237588237892912038492427378248782474",
            "21421432123787842376346723647623767432762367",
            "26467762782874893612467784782478278782684286",
            "27146726719120087166248234671990472672849217",
            "23432423747432562783672839271638578534746644",
            "42232387690480348792673297204795735037539474",
        ),
    ),
}


def test_every_shared_cte_fixture_is_covered() -> None:
    assert sorted(p.name for p in FIXTURES.glob("*.xml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_real_cte_gives_its_parties_modal_values_and_carried_keys(name: str) -> None:
    root, version, key, model, modal, tp_cte, cents, issued, toma, roles, keys = EXPECTED[name]
    meta = read_cte_document((FIXTURES / name).read_bytes())
    assert isinstance(meta, CteMeta)
    assert (meta.kind, meta.root, meta.version, meta.access_key) == (DocumentKind.CTE_PROC, root, version, key)
    assert (meta.model, meta.modal, meta.cte_type, meta.total_cents, meta.taker_code) == (
        model,
        modal,
        tp_cte,
        cents,
        toma,
    )
    assert meta.issued_at == issued and meta.issued_at.utcoffset() == issued.utcoffset()
    assert {p.role.value: p.doc for p in meta.parties} == roles
    assert meta.nfe_keys == keys
    assert meta.uf == {"35": "SP", "43": "RS", "42": "SC"}[key[:2]]


def test_a_cte_proc_carries_its_protocol_and_status() -> None:
    meta = read_cte_document((FIXTURES / "bfr-dacte_test_1.xml").read_bytes())
    assert isinstance(meta, CteMeta)
    assert meta.status is DocumentStatus.AUTHORISED and meta.cstat == "100"
    # The fixture's protocol key is 34 digits: kept as a warning, the CT-e's own Id wins.
    assert any("chave do protocolo" in w for w in meta.warnings)


def test_a_bare_signed_cte_has_no_status() -> None:
    meta = read_cte_document((FIXTURES / "bfr-dacte_aereo_test.xml").read_bytes())
    assert isinstance(meta, CteMeta) and meta.status is DocumentStatus.UNKNOWN and meta.protocol is None


def test_direction_is_emitted_only_for_an_emitter_with_no_other_role() -> None:
    air = read_cte_document((FIXTURES / "bfr-dacte_aereo_test.xml").read_bytes())
    assert direction_of("81583054000129", air) is Direction.EMITTED
    assert direction_of("46081676000158", air) is Direction.RECEIVED  # dest and taker
    own = read_cte_document((FIXTURES / "43120178408960000182570010000000041000000047-cte.xml").read_bytes())
    # The carrier is also sender, shipper and payer of this CT-e: received, not emitted.
    assert direction_of("78408960000182", own) is Direction.RECEIVED


@pytest.fixture(scope="module")
def parties() -> dict[str, Party]:
    return {
        "carrier": Party("12ABC34501DE35", "TRANSPORTADORA ALFA LTDA", "SC", "4205407", ie="254123456"),
        "sender": Party("11222333000181", "FORNECEDORA DE TESTE LTDA", "SP", "3550308", ie="110042490114"),
        "recipient": Party("11444777000161", "CLIENTE & FILHOS LTDA", "PR", "4106902", ie="9032000301"),
        "payer": Party("99888777000100", "PAGADORA SA", "RJ", "3304557"),
    }


def test_a_generated_cte_with_toma4_names_the_fourth_party(factory: DocumentFactory, parties: dict[str, Party]) -> None:
    nfe = "35261111222333000181550010000000011000000010"
    cte = factory.cte(
        emitter=parties["carrier"],
        sender=parties["sender"],
        recipient=parties["recipient"],
        taker_role=4,
        taker=parties["payer"],
        issued_at=datetime(2026, 11, 2, 12, tzinfo=UTC),
        modal="02",
        total_cents=12345,
        nfe_keys=(nfe,),
    )
    meta = read_cte_document(cte.cte_proc)
    assert isinstance(meta, CteMeta)
    assert meta.access_key == cte.key and meta.status is DocumentStatus.AUTHORISED
    assert (meta.modal, meta.total_cents, meta.taker_code, meta.nfe_keys) == ("02", 12345, "4", (nfe,))
    assert meta.taker is not None and meta.taker.doc == "99888777000100" and meta.taker.role is PartyRole.TAKER
    assert meta.emitter is not None and meta.emitter.doc == "12ABC34501DE35"


@pytest.mark.parametrize(("tp_evento", "description"), [("110111", "Cancelamento"), ("610110", None)])
def test_a_proc_evento_cte_gives_type_sequence_registration_and_description(
    factory: DocumentFactory, parties: dict[str, Party], tp_evento: str, description: str | None
) -> None:
    cte = factory.cte(
        emitter=parties["carrier"],
        sender=parties["sender"],
        recipient=parties["recipient"],
        taker_role=0,
        issued_at=datetime(2026, 11, 2, 12, tzinfo=UTC),
    )
    at = datetime(2026, 11, 3, 9, tzinfo=UTC)
    event = factory.cte_event(cte, tp_evento=tp_evento, author=parties["carrier"], seq=2, at=at)
    meta = read_cte_document(event.proc_payload.xml)
    assert isinstance(meta, EventMeta)
    assert (meta.kind, meta.access_key, meta.tp_evento, meta.n_seq_evento) == (
        DocumentKind.PROC_EVENTO_CTE,
        cte.key,
        tp_evento,
        2,
    )
    assert meta.registered_at == event.registered_at and meta.cstat == "135" and meta.protocol == event.protocol
    assert meta.description is not None
    if description:
        assert meta.description.startswith(description)


CTE_OS = f"""<cteOSProc xmlns="{CTE}" versao="4.00"><CTeOS versao="4.00">
<infCte versao="4.00" Id="CTe35261112345678000195670010000000071000000071"><ide><cUF>35</cUF><mod>67</mod>
<serie>1</serie><nCT>7</nCT><dhEmi>2026-11-02T08:30:00-03:00</dhEmi><tpAmb>2</tpAmb><tpCTe>0</tpCTe>
<modal>01</modal></ide><emit><CNPJ>12345678000195</CNPJ><xNome>FRETAMENTO BETA</xNome></emit>
<toma><CNPJ>11444777000161</CNPJ><xNome>CLIENTE</xNome><enderToma><UF>PR</UF></enderToma></toma>
<vPrest><vTPrest>950.10</vTPrest></vPrest></infCte></CTeOS>
<protCTe versao="4.00"><infProt><chCTe>35261112345678000195670010000000071000000071</chCTe>
<nProt>135260000000001</nProt><cStat>100</cStat><xMotivo>Autorizado o uso do CT-e</xMotivo></infProt></protCTe>
</cteOSProc>""".encode()


def test_a_cte_os_model_67_is_read_with_its_payer() -> None:
    meta = read_cte_document(CTE_OS)
    assert isinstance(meta, CteMeta)
    assert (meta.root, meta.model, meta.total_cents) == ("cteOSProc", "67", 95010)
    assert meta.status is DocumentStatus.AUTHORISED
    assert meta.taker is not None and (meta.taker.doc, meta.taker.uf) == ("11444777000161", "PR")
    assert direction_of("12345678000195", meta) is Direction.EMITTED
    assert direction_of("11444777000161", meta) is Direction.RECEIVED


def test_a_gtv_e_or_an_unknown_root_is_kept_as_unknown() -> None:
    gtve = read_cte_document(f'<GTVeProc xmlns="{CTE}" versao="4.00"><GTVe/></GTVeProc>'.encode())
    assert isinstance(gtve, UnknownMeta) and gtve.root == "GTVeProc" and gtve.namespace == CTE
    other = read_cte_document(b"<qualquer><coisa/></qualquer>", "outro_v1.00.xsd")
    assert isinstance(other, UnknownMeta) and other.schema == "outro_v1.00.xsd"


def test_a_cte_without_a_key_or_not_xml_is_refused_with_a_reason() -> None:
    with pytest.raises(DocumentDataError):
        read_cte_document(f'<cteProc xmlns="{CTE}"><CTe><infCte/></CTe></cteProc>'.encode())
    with pytest.raises(XmlRejected):
        read_cte_document(b"<cteProc")
