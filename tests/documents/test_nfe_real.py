"""The real production data: the 2017 retDistDFeInt (50 docZips) and the real NF-e and event files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

import pytest
from lxml import etree

from app.documents import DocumentKind, DocumentStatus, EventMeta, NfeMeta, PartyRole, read_nfe_document
from app.documents.model import DocumentMeta
from app.safexml import decode_doczip, parse_xml

NFE = "http://www.portalfiscal.inf.br/nfe"
BRT = timezone(timedelta(hours=-3))

# NSU, root, chNFe, tpEvento: read independently of the reader under test (plain lxml, see the
# cross-check in the test) and frozen here, so a regression in either shows up.
EXPECTED_2017 = [
    "6762 resNFe 35170307705364000116550010000158771254375877 -",
    "6763 resNFe 35170307705364000116550010000158781234529698 -",
    "6764 resNFe 35170307705364000116550010000158791938245686 -",
    "6765 resEvento 35170349607369000156550010000229181075748770 610600",
    "6766 resEvento 35170349607369000156550010000229541806856854 610600",
    "6767 resEvento 35170349607369000156550010000229181075748770 610610",
    "6768 resEvento 35170349607369000156550010000229351840729295 610600",
    "6769 resEvento 35170349607369000156550010000229201369250077 610600",
    "6770 resEvento 35170349607369000156550010000229371854392926 610600",
    "6771 resEvento 35170349607369000156550010000229351840729295 610610",
    "6772 resEvento 35170349607369000156550010000229381069492630 610600",
    "6773 resEvento 35170349607369000156550010000229421315712134 610600",
    "6774 resEvento 35170349607369000156550010000229201369250077 610610",
    "6775 resEvento 35170349607369000156550010000229421315712134 610610",
    "6776 procEventoNFe 35170349607369000156550010000229481398694060 210210",
    "6777 resEvento 35170349607369000156550010000229201369250077 610610",
    "6778 resEvento 35170349607369000156550010000229201369250077 610610",
    "6779 procEventoNFe 35170349607369000156550010000228351807754515 210210",
    "6780 resEvento 35170349607369000156550010000228721751045119 610600",
    "6781 resEvento 35170349607369000156550010000229281273908517 610610",
    "6782 procEventoNFe 35170349607369000156550010000228851762395807 210210",
    "6783 procEventoNFe 35170349607369000156550010000229101353344194 210200",
    "6784 resEvento 35170349607369000156550010000229601697991745 610600",
    "6785 resEvento 35170349607369000156550010000229601697991745 610610",
    "6786 resEvento 35170349607369000156550010000229531150118731 610600",
    "6787 procEventoNFe 35170349607369000156550010000229631502200290 210210",
    "6788 resEvento 35170349607369000156550010000228721751045119 610610",
    "6789 procEventoNFe 35170349607369000156550010000229541806856854 210210",
    "6790 procEventoNFe 35170349607369000156550010000229691676336956 210210",
    "6791 resNFe 35170305542078000151550010000028461001089046 -",
    "6792 resEvento 35170349607369000156550010000229491610208701 610600",
    "6793 procEventoNFe 35170349607369000156550010000228471781371534 210200",
    "6794 procEventoNFe 35170349607369000156550010000229781178202604 210210",
    "6795 resEvento 35170349607369000156550010000229431702577505 610600",
    "6796 resEvento 35170349607369000156550010000229211421208223 610600",
    "6797 resEvento 35170349607369000156550010000229181075748770 610600",
    "6798 resEvento 35170349607369000156550010000229271218126556 610600",
    "6799 resEvento 35170349607369000156550010000229851628567688 610600",
    "6800 resEvento 35170349607369000156550010000229801087755781 610600",
    "6801 resEvento 35170349607369000156550010000229851628567688 610610",
    "6802 resEvento 35170349607369000156550010000229781178202604 610600",
    "6803 resEvento 35170349607369000156550010000229781178202604 610610",
    "6804 resEvento 35170349607369000156550010000229801087755781 610610",
    "6805 procEventoNFe 35170349607369000156550010000229181075748770 990900",
    "6806 resEvento 35170349607369000156550010000229801087755781 610610",
    "6807 resEvento 35170349607369000156550010000229851628567688 610610",
    "6808 procEventoNFe 35170349607369000156550010000229891386175340 210210",
    "6809 resNFe 35170316699648000138550010000045241010864612 -",
    "6810 resEvento 35170349607369000156550010000229891386175340 610600",
    "6811 resNFe 35170356695943000130550010000165601000523461 -",
]


@pytest.fixture(scope="module")
def response_2017(nfe_fixture: Callable[[str], bytes]) -> list[tuple[int, str, bytes, DocumentMeta]]:
    """(NSU, schema, inflated bytes, metadata) of each docZip, in order, decoded the safe way."""
    envelope = parse_xml(nfe_fixture("soap-retDistDFeInt-138-prod-2017.xml"))
    found = []
    for doczip in envelope.iter(f"{{{NFE}}}docZip"):
        xml = decode_doczip(doczip.text or "", max_compressed=1 << 20, max_inflated=1 << 22)
        schema = doczip.get("schema") or ""
        found.append((int(doczip.get("NSU") or -1), schema, xml, read_nfe_document(xml, schema)))
    return found


def test_all_50_documents_of_the_2017_response_have_the_right_kind_and_key(
    response_2017: list[tuple[int, str, bytes, DocumentMeta]],
) -> None:
    assert [nsu for nsu, *_ in response_2017] == list(range(6762, 6812))
    assert len(EXPECTED_2017) == 50
    for (nsu, _schema, xml, meta), line in zip(response_2017, EXPECTED_2017, strict=True):
        e_nsu, e_root, e_key, e_tp = line.split()
        assert nsu == int(e_nsu)
        assert meta.kind == DocumentKind(e_root), nsu
        assert meta.access_key == e_key, nsu
        # cross-check with plain lxml: the key written in the document
        assert etree.fromstring(xml).findtext(f".//{{{NFE}}}chNFe") == e_key
        if isinstance(meta, EventMeta):
            assert meta.tp_evento == e_tp
        else:
            assert e_tp == "-"
        assert meta.warnings == (), (nsu, meta.warnings)


def test_2017_response_counts_and_sums(response_2017: list[tuple[int, str, bytes, DocumentMeta]]) -> None:
    metas = [m for *_, m in response_2017]
    assert Counter(m.kind for m in metas) == {
        DocumentKind.RES_NFE: 6,
        DocumentKind.RES_EVENTO: 33,
        DocumentKind.PROC_EVENTO_NFE: 11,
    }
    events = [m for m in metas if isinstance(m, EventMeta)]
    assert Counter(e.tp_evento for e in events) == {
        "610600": 19,
        "610610": 14,
        "210210": 8,
        "210200": 2,
        "990900": 1,
    }
    summaries = [m for m in metas if isinstance(m, NfeMeta)]
    assert sum(m.total_cents or 0 for m in summaries) == 329020 + 63033 + 175538 + 71980 + 35193 + 18620
    assert all(m.status is DocumentStatus.SUMMARY and m.situation == "1" for m in summaries)
    assert all(m.uf == "SP" and m.model == "55" and m.operation_type == 1 for m in summaries)
    assert all(len(e.protocol or "") == 15 for e in events)
    # every event of the lot was registered by the Ambiente Nacional
    assert {e.c_orgao for e in events} == {"91"}
    # the schema names agreed with the roots (no hint warning) for all 50
    assert all(schema.split("_")[0] in ("resNFe", "resEvento", "procEventoNFe") for _n, schema, *_ in response_2017)


def test_2017_res_nfe_metadata(response_2017: list[tuple[int, str, bytes, DocumentMeta]]) -> None:
    meta = response_2017[0][3]
    assert isinstance(meta, NfeMeta)
    assert meta.kind is DocumentKind.RES_NFE and meta.root == "resNFe" and meta.version == "1.01"
    assert meta.access_key == "35170307705364000116550010000158771254375877"
    assert (meta.uf, meta.model, meta.serie, meta.number) == ("SP", "55", 1, 15877)
    assert meta.total_cents == 329020
    assert meta.protocol == "135170169434440"
    assert meta.issued_at == datetime(2017, 3, 17, 14, 52, 25, tzinfo=BRT)
    assert meta.issued_offset_minutes == -180
    assert meta.authorised_at == datetime(2017, 3, 17, 15, 0, 53, tzinfo=BRT)
    assert meta.dig_val == "zHNc9jjSx2W4QjHLgVwGcgmHVLA="
    assert meta.emitter is not None
    assert (meta.emitter.role, meta.emitter.doc, meta.emitter.ie) == (
        PartyRole.EMITTER,
        "07705364000116",
        "401179620113",
    )
    assert meta.emitter.name == "COGERAL COMERCIO E LAMINACAO DE ACOS EM GERAL LTDA"
    assert meta.recipient is None and meta.transporter is None and meta.authorised == ()
    assert meta.environment is None  # a resNFe does not say


def test_2017_cte_authorisation_res_evento(response_2017: list[tuple[int, str, bytes, DocumentMeta]]) -> None:
    meta = next(m for nsu, *_, m in response_2017 if nsu == 6765)
    assert isinstance(meta, EventMeta)
    assert meta.kind is DocumentKind.RES_EVENTO and meta.root == "resEvento"
    assert meta.tp_evento == "610600" and meta.n_seq_evento == 1
    assert meta.description == "Registro de Autorização de CT-e para a NF-e"
    assert meta.author_doc == "33683111000107"  # the carrier, not a party of the NF-e itself
    assert meta.protocol == "891170415199537"
    assert meta.event_at == meta.registered_at == datetime(2017, 3, 17, 17, 57, 42, tzinfo=BRT)
    assert meta.cstat is None  # a summary carries no retEvento


def test_2017_ciencia_proc_evento_and_its_author(response_2017: list[tuple[int, str, bytes, DocumentMeta]]) -> None:
    meta = next(m for nsu, *_, m in response_2017 if nsu == 6776)
    assert isinstance(meta, EventMeta)
    assert meta.kind is DocumentKind.PROC_EVENTO_NFE and meta.root == "procEventoNFe"
    assert meta.access_key == "35170349607369000156550010000229481398694060"
    assert (meta.tp_evento, meta.n_seq_evento) == ("210210", 1)
    assert meta.description == "Ciencia da Operacao"
    assert meta.author_doc == "69161982000108"
    assert meta.recipient_doc == "69161982000108"
    assert (meta.cstat, meta.reason) == ("135", "Evento registrado e vinculado a NF-e")
    assert meta.protocol == "891170419030368"
    assert meta.event_at == datetime(2017, 3, 18, 10, 30, 58, tzinfo=BRT)
    assert meta.registered_at == datetime(2017, 3, 18, 10, 36, tzinfo=BRT)
    assert meta.environment == 1


def test_2017_suframa_event_keeps_its_amazon_offset(response_2017: list[tuple[int, str, bytes, DocumentMeta]]) -> None:
    meta = next(m for nsu, *_, m in response_2017 if nsu == 6805)
    assert isinstance(meta, EventMeta)
    assert (meta.tp_evento, meta.n_seq_evento) == ("990900", 14)
    assert meta.description == "Vistoria SUFRAMA"  # from descEvento: this retEvento has no xEvento
    assert meta.event_at is not None and meta.event_at.utcoffset() == timedelta(hours=-4)


# ---------------------------------------------------------------- real single files


def test_real_proc_nfe_homologation_pr(nfe_fixture: Callable[[str], bytes]) -> None:
    meta = read_nfe_document(nfe_fixture("41170706117473000150550010000463202612756525-procNFe.xml"))
    assert isinstance(meta, NfeMeta)
    assert meta.kind is DocumentKind.NFE_PROC and meta.root == "nfeProc" and meta.version == "4.00"
    assert meta.access_key == "41170706117473000150550010000463202612756525"
    assert (meta.uf, meta.model, meta.serie, meta.number) == ("PR", "55", 1, 46320)
    assert meta.total_cents == 8490
    assert (meta.operation_type, meta.environment) == (1, 2)
    assert (meta.protocol, meta.cstat, meta.status) == ("141170000487910", "100", DocumentStatus.AUTHORISED)
    assert meta.dig_val == "+GzukUqyGg3ksWFUU/e6HsguR0A="
    assert meta.emitter is not None and meta.emitter.doc == "06117473000150" and meta.emitter.uf == "PR"
    assert meta.recipient is not None and meta.recipient.doc == "27373722000148" and meta.recipient.uf == "SP"
    assert meta.warnings == ()


def test_real_proc_nfe_export_to_a_foreign_recipient(nfe_fixture: Callable[[str], bytes]) -> None:
    meta = read_nfe_document(nfe_fixture("42210775277525000178550030000266631762885493-procNFe.xml"))
    assert isinstance(meta, NfeMeta) and meta.recipient is not None
    assert meta.recipient.doc is None and meta.recipient.foreign_id == "EXTERIOR"
    assert meta.recipient.name == "E.G.O. Elektro-Gerätebau GmbH"
    assert (meta.operation_type, meta.total_cents, meta.number) == (0, 9570068, 26663)


def test_real_proc_nfe_with_carrier_in_summer_time(nfe_fixture: Callable[[str], bytes]) -> None:
    meta = read_nfe_document(nfe_fixture("42211275277525000178550030000276771368212013-procNFe.xml"))
    assert isinstance(meta, NfeMeta) and meta.transporter is not None
    assert (meta.transporter.role, meta.transporter.doc) == (PartyRole.TRANSPORTER, "82604042000449")
    assert meta.transporter.name == "TRANSVILLE TRANSP. E SERV. LTDA."
    assert meta.recipient is not None and meta.recipient.doc == "35029428895"  # a CPF
    assert meta.issued_offset_minutes == -120  # Brazilian summer time, kept as written
    assert meta.total_cents == 1960603


def test_real_proc_evento_confirmacao_2016(nfe_fixture: Callable[[str], bytes]) -> None:
    meta = read_nfe_document(nfe_fixture("procEventoNFe-210200-real-2016.xml"), "procEventoNFe_v1.00.xsd")
    assert isinstance(meta, EventMeta)
    assert meta.kind is DocumentKind.PROC_EVENTO_NFE
    assert meta.access_key == "35161258716523000119550000000439901870176068"
    assert (meta.tp_evento, meta.description, meta.author_doc) == (
        "210200",
        "Confirmacao da Operacao",
        "89850341000160",
    )
    assert (meta.protocol, meta.cstat, meta.c_orgao) == ("891161800271770", "135", "91")
    assert meta.registered_at == datetime(2016, 12, 30, 19, 20, tzinfo=timezone(timedelta(hours=-2)))
    assert meta.warnings == ()


def test_real_cce_evento_without_its_registration(nfe_fixture: Callable[[str], bytes]) -> None:
    meta = read_nfe_document(nfe_fixture("35180803102452000172550010000476051695511860-01-cce-evento.xml"))
    assert isinstance(meta, EventMeta)
    assert meta.kind is DocumentKind.PROC_EVENTO_NFE and meta.root == "evento"
    assert (meta.tp_evento, meta.n_seq_evento, meta.c_orgao) == ("110110", 1, "35")
    assert meta.description == "Carta de Correção"
    assert meta.correction == "VOLUME: 4 VOLUMES"
    assert meta.author_doc == "75335849000115"
    assert meta.protocol is None and meta.cstat is None
    assert meta.warnings == ("Evento sem o retorno de registro (retEvento).",)


def test_alphanumeric_cnpj_emitter_is_valid_and_kept(nfe_fixture: Callable[[str], bytes]) -> None:
    meta = read_nfe_document(nfe_fixture("bfr-danfe_cnpj_alfanumerico.xml"))
    assert isinstance(meta, NfeMeta)
    assert meta.root == "NFe" and meta.kind is DocumentKind.NFE_PROC  # a bare NFe: no protocol
    assert meta.emitter is not None and meta.emitter.doc == "XT9CDVWJ000172"
    assert meta.issued_offset_minutes == 60
    assert meta.total_cents == 195000
    assert meta.protocol is None and meta.status is DocumentStatus.UNKNOWN
    # the CNPJ itself is valid (no "documento inválido" warning); the test file's key names another issuer
    assert not any("inválido" in w for w in meta.warnings)
    assert any("XT9CDVWJ000172" in w and "chave" in w for w in meta.warnings)
    assert "NF-e sem protocolo de autorização (protNFe)." in meta.warnings


def test_ibs_cbs_nfe_reads_vnf_and_vnftot(nfe_fixture: Callable[[str], bytes]) -> None:
    meta = read_nfe_document(nfe_fixture("nfe_reforma_tributaria.xml"), "procNFe_v4.00.xsd")
    assert isinstance(meta, NfeMeta)
    assert meta.access_key == "15231207933914000154550010006643501427015088"
    assert (meta.uf, meta.number, meta.total_cents, meta.total_nf_tot_cents) == ("PA", 664350, 16474681, 500000)
    assert meta.issued_offset_minutes == 0  # written "-00:00"
    assert meta.transporter is not None and meta.transporter.doc == "49929194000284"
    assert meta.recipient is not None and meta.recipient.uf == "MG"
    assert meta.protocol == "315230052780138"
