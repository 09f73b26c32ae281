"""read_nfe_document on generated documents (metadata equals what was generated), and refusals."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from app.documents import (
    DocumentDataError,
    DocumentKind,
    DocumentStatus,
    EventMeta,
    NfeMeta,
    PartyRole,
    UnknownMeta,
    UnsupportedDocument,
    read_nfe_document,
)
from app.safexml import DoctypeForbidden, MalformedXml, NotUtf8
from app.sandbox.docgen import DocumentFactory, GeneratedNFe, Party

ISSUED_AT = datetime(2026, 11, 10, 13, 30, tzinfo=UTC)
AUTHORISED = ("99888777000100", "52998224725")  # autXML: a CNPJ (accountant) and a CPF


@pytest.fixture(scope="module")
def nfe(factory: DocumentFactory, supplier: Party, company: Party, carrier: Party) -> GeneratedNFe:
    return factory.nfe(
        emitter=supplier,
        recipient=company,
        issued_at=ISSUED_AT,
        total_cents=1_234_567,
        transporter=carrier,
        aut_xml=AUTHORISED,
        items=7,
    )


def test_generated_nfe_proc_metadata_equals_what_was_generated(
    nfe: GeneratedNFe, supplier: Party, company: Party, carrier: Party
) -> None:
    meta = read_nfe_document(nfe.nfe_proc, "procNFe_v4.00.xsd")
    assert isinstance(meta, NfeMeta)
    assert (meta.kind, meta.root, meta.version) == (DocumentKind.NFE_PROC, "nfeProc", "4.00")
    assert meta.access_key == nfe.key
    assert meta.uf == supplier.uf and meta.model == "55" and meta.serie == 1 and meta.number == int(nfe.key[25:34])
    assert meta.total_cents == 1_234_567 == nfe.total_cents
    assert meta.issued_at == nfe.issued_at and meta.issued_offset_minutes == -180
    assert meta.authorised_at == nfe.authorised_at
    assert (meta.protocol, meta.dig_val, meta.cstat) == (nfe.protocol, nfe.dig_val, "100")
    assert meta.status is DocumentStatus.AUTHORISED
    assert (meta.operation_type, meta.environment) == (1, 2)
    assert meta.emitter is not None and meta.recipient is not None and meta.transporter is not None
    assert (meta.emitter.doc, meta.emitter.name, meta.emitter.ie, meta.emitter.uf) == (
        supplier.doc,
        supplier.name,
        supplier.ie,
        supplier.uf,
    )
    assert (meta.recipient.doc, meta.recipient.name, meta.recipient.ie) == (company.doc, company.name, company.ie)
    assert (meta.transporter.doc, meta.transporter.name) == (carrier.doc, carrier.name)  # alphanumeric CNPJ
    assert meta.authorised == AUTHORISED
    assert [(p.role, p.doc) for p in meta.parties] == [
        (PartyRole.EMITTER, supplier.doc),
        (PartyRole.RECIPIENT, company.doc),
        (PartyRole.TRANSPORTER, carrier.doc),
        (PartyRole.AUTHORISED, AUTHORISED[0]),
        (PartyRole.AUTHORISED, AUTHORISED[1]),
    ]
    assert meta.warnings == ()


def test_generated_res_nfe_metadata(nfe: GeneratedNFe, supplier: Party) -> None:
    meta = read_nfe_document(nfe.res_nfe, "resNFe_v1.01.xsd")
    assert isinstance(meta, NfeMeta)
    assert (meta.kind, meta.access_key, meta.total_cents) == (DocumentKind.RES_NFE, nfe.key, nfe.total_cents)
    assert (meta.protocol, meta.dig_val, meta.situation) == (nfe.protocol, nfe.dig_val, "1")
    assert meta.issued_at == nfe.issued_at and meta.authorised_at == nfe.authorised_at
    assert meta.emitter is not None and (meta.emitter.doc, meta.emitter.ie) == (supplier.doc, supplier.ie)
    assert meta.status is DocumentStatus.SUMMARY and meta.warnings == ()


@pytest.mark.parametrize(
    ("c_sit", "status"), [(1, DocumentStatus.SUMMARY), (2, DocumentStatus.DENIED), (3, DocumentStatus.CANCELLED)]
)
def test_res_nfe_situation(nfe: GeneratedNFe, c_sit: int, status: DocumentStatus) -> None:
    from app.sandbox.docgen.nfe import res_nfe

    xml = res_nfe(nfe.key, nfe.emitter, nfe.issued_at, 100, nfe.dig_val, nfe.authorised_at, nfe.protocol, c_sit=c_sit)
    meta = read_nfe_document(xml)
    assert isinstance(meta, NfeMeta) and meta.situation == str(c_sit) and meta.status is status


EVENT_CASES = [
    ("110111", "emitter", {"justification": "Erro no valor da mercadoria"}),
    ("110110", "emitter", {"correction": "Corrigir o endereco de entrega"}),
    ("210200", "recipient", {}),
    ("210210", "recipient", {}),
    ("210220", "recipient", {"justification": "Nao reconheco esta operacao"}),
    ("210240", "recipient", {"justification": "Mercadoria nao foi entregue"}),
]


@pytest.mark.parametrize(("tp", "who", "extra"), EVENT_CASES)
def test_generated_events_in_both_forms(
    factory: DocumentFactory, nfe: GeneratedNFe, tp: str, who: str, extra: dict[str, str]
) -> None:
    author = nfe.emitter if who == "emitter" else nfe.recipient
    at = ISSUED_AT + timedelta(hours=2)
    event = factory.nfe_event(nfe, tp_evento=tp, author=author, seq=1, at=at, **extra)
    proc = read_nfe_document(event.proc_evento, "procEventoNFe_v1.00.xsd")
    assert isinstance(proc, EventMeta)
    assert (proc.kind, proc.root, proc.access_key) == (DocumentKind.PROC_EVENTO_NFE, "procEventoNFe", nfe.key)
    assert (proc.tp_evento, proc.n_seq_evento, proc.author_doc) == (tp, 1, author.doc)
    assert (proc.protocol, proc.cstat) == (event.protocol, "135")
    assert proc.event_at == at and proc.registered_at == event.registered_at
    assert proc.c_orgao == ("91" if tp.startswith("2") else nfe.key[:2])
    assert proc.justification == extra.get("justification")
    assert proc.correction == extra.get("correction")
    assert proc.description
    assert proc.warnings == ()

    assert event.res_evento is not None
    res = read_nfe_document(event.res_evento, "resEvento_v1.01.xsd")
    assert isinstance(res, EventMeta)
    assert (res.kind, res.access_key, res.tp_evento, res.n_seq_evento) == (DocumentKind.RES_EVENTO, nfe.key, tp, 1)
    assert (res.protocol, res.author_doc, res.registered_at) == (event.protocol, author.doc, event.registered_at)
    assert res.description == proc.description
    assert res.cstat is None and res.warnings == ()


# ---------------------------------------------------------------- refusals and tolerance


def test_unknown_root_is_kept_with_its_name() -> None:
    xml = b'<?xml version="1.0" encoding="UTF-8"?><cteProc xmlns="http://www.portalfiscal.inf.br/cte" versao="4.00"/>'
    meta = read_nfe_document(xml, "procCTe_v4.00.xsd")
    assert isinstance(meta, UnknownMeta)
    assert (meta.kind, meta.root, meta.namespace, meta.version) == (
        DocumentKind.UNKNOWN,
        "cteProc",
        "http://www.portalfiscal.inf.br/cte",
        "4.00",
    )
    assert meta.schema == "procCTe_v4.00.xsd" and meta.access_key is None


def test_nfe_root_in_another_namespace_is_unknown() -> None:
    meta = read_nfe_document(b"<resNFe versao='1.01'><chNFe>1</chNFe></resNFe>")
    assert isinstance(meta, UnknownMeta) and meta.root == "resNFe" and meta.namespace is None


def test_unknown_root_refused_when_asked() -> None:
    with pytest.raises(UnsupportedDocument, match="raiz <foo>"):
        read_nfe_document(b"<foo/>", allow_unknown=False)


def test_malformed_xml_raises_the_safexml_error(nfe: GeneratedNFe) -> None:
    with pytest.raises(MalformedXml):
        read_nfe_document(nfe.res_nfe[:-20])
    with pytest.raises(DoctypeForbidden):
        read_nfe_document(b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><resNFe/>')
    with pytest.raises(NotUtf8):
        read_nfe_document(b'<?xml version="1.0" encoding="ISO-8859-1"?><resNFe/>')


def _swap(xml: bytes, old: str, new: str) -> bytes:
    assert old.encode() in xml
    return xml.replace(old.encode(), new.encode())


def test_invalid_key_is_a_document_data_error(nfe: GeneratedNFe) -> None:
    wrong = nfe.key[:43] + str((int(nfe.key[43]) + 1) % 10)
    with pytest.raises(DocumentDataError, match="dígito verificador"):
        read_nfe_document(_swap(nfe.res_nfe, nfe.key, wrong))
    with pytest.raises(DocumentDataError) as caught:
        read_nfe_document(_swap(nfe.nfe_proc, nfe.key, wrong))
    assert caught.value.reason == "invalid_data"
    with pytest.raises(DocumentDataError, match="sem chave"):
        read_nfe_document(_swap(nfe.res_nfe, f"<chNFe>{nfe.key}</chNFe>", ""))


def test_protocol_of_another_key_is_a_document_data_error(nfe: GeneratedNFe, factory: DocumentFactory) -> None:
    other = factory.nfe(emitter=nfe.emitter, recipient=nfe.recipient, issued_at=ISSUED_AT, items=1)
    xml = _swap(nfe.nfe_proc, f"<chNFe>{nfe.key}</chNFe>", f"<chNFe>{other.key}</chNFe>")
    with pytest.raises(DocumentDataError, match="protocolo"):
        read_nfe_document(xml)


def test_invalid_event_type_or_sequence(factory: DocumentFactory, nfe: GeneratedNFe) -> None:
    event = factory.nfe_event(nfe, tp_evento="210210", author=nfe.recipient, seq=1, at=ISSUED_AT)
    assert event.res_evento is not None
    with pytest.raises(DocumentDataError, match="tipo de evento"):
        read_nfe_document(_swap(event.res_evento, "<tpEvento>210210</tpEvento>", "<tpEvento>2102</tpEvento>"))
    with pytest.raises(DocumentDataError, match="sequência"):
        read_nfe_document(_swap(event.res_evento, "<nSeqEvento>1</nSeqEvento>", "<nSeqEvento>0</nSeqEvento>"))


def test_invalid_party_cnpj_keeps_the_document_with_a_warning(nfe: GeneratedNFe, company: Party) -> None:
    bad = company.doc[:13] + str((int(company.doc[13]) + 1) % 10)
    meta = read_nfe_document(_swap(nfe.nfe_proc, f"<CNPJ>{company.doc}</CNPJ>", f"<CNPJ>{bad}</CNPJ>"))
    assert isinstance(meta, NfeMeta) and meta.recipient is not None
    assert meta.recipient.doc == bad  # recorded raw
    assert len(meta.warnings) == 1 and "Destinatário com documento inválido" in meta.warnings[0]


def test_unreadable_total_and_date_are_warnings(nfe: GeneratedNFe) -> None:
    xml = _swap(nfe.res_nfe, f"<vNF>{nfe.total_cents / 100:.2f}</vNF>", "<vNF>12,50</vNF>")
    xml = xml.replace(b"<dhEmi>", b"<dhEmi>x")
    meta = read_nfe_document(xml)
    assert isinstance(meta, NfeMeta)
    assert meta.total_cents is None and meta.issued_at is None
    assert any("vNF" in w for w in meta.warnings) and any("emissão ilegível" in w for w in meta.warnings)


def test_old_layout_with_demi_only(nfe_fixture: Callable[[str], bytes]) -> None:
    xml = nfe_fixture("41170706117473000150550010000463202612756525-procNFe.xml")
    xml = xml.replace(b"<dhEmi>2017-07-12T09:45:50-03:00</dhEmi>", b"<dEmi>2017-07-12</dEmi>")
    meta = read_nfe_document(xml)
    assert isinstance(meta, NfeMeta)
    assert meta.issued_at is not None and meta.issued_at.isoformat() == "2017-07-12T00:00:00-03:00"
    assert meta.warnings == ()


def test_schema_hint_never_overrides_the_root(nfe: GeneratedNFe) -> None:
    meta = read_nfe_document(nfe.res_nfe, "procNFe_v4.00.xsd")
    assert meta.kind is DocumentKind.RES_NFE
    assert meta.warnings == ("O schema informado (procNFe_v4.00.xsd) não corresponde ao documento (resNFe).",)
    assert read_nfe_document(nfe.res_nfe, "resNFe_v1.00.xsd").warnings == ()
    assert read_nfe_document(nfe.res_nfe, "algo_estranho.xsd").warnings == ()


def test_fields_read_as_xpath_string_reads_them_in_odd_shapes(nfe: GeneratedNFe, supplier: Party) -> None:
    # A field split by a comment reads as its whole text; with two containers, a field the first
    # lacks comes from the second (first match in document order), as XPath string() gives them.
    name = supplier.name.encode()
    xml = nfe.nfe_proc.replace(b"<xNome>" + name, b"<xNome>" + name[:3] + b"<!-- c -->" + name[3:], 1)
    xml = xml.replace(b"<ide>", b"<ide><cUF>35</cUF></ide><ide>", 1)
    meta = read_nfe_document(xml)
    assert isinstance(meta, NfeMeta) and meta.emitter is not None
    assert meta.emitter.name == supplier.name
    assert (meta.model, meta.number, meta.issued_at) == ("55", int(nfe.key[25:34]), nfe.issued_at)

    res = nfe.res_nfe.replace(b"<vNF>", b'<vNF>1<x xmlns="urn:x">2</x>', 1)
    res = res.replace(b"<CNPJ>", b"<CNPJ>" + supplier.doc.encode() + b"</CNPJ><CNPJ>", 1)
    summary = read_nfe_document(res)
    assert isinstance(summary, NfeMeta) and summary.emitter is not None
    assert summary.emitter.doc == supplier.doc  # the first of two
    expected = f"12{nfe.total_cents / 100:.2f}"
    assert summary.total_cents == int(expected.replace(".", ""))
