"""The reform's IBS/CBS/IS values as read from real public documents, checked against nfelib's
bindings of the official schemas (NT 2025.002-RTC NF-e 4.00, NT 2025.001-RTC CT-e 4.00)."""

from __future__ import annotations

import warnings
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from lxml import etree
from xsdata.formats.dataclass.parsers import XmlParser
from xsdata.formats.dataclass.parsers.config import ParserConfig

from app.core.event_types import EVENT_NAMES, PRESUMED_CREDIT_APPROPRIATION, event_name
from app.documents import reform as reform_reader
from app.documents.cte import read_cte_document
from app.documents.model import CteMeta, EventMeta, NfeMeta, to_json_dict
from app.documents.nfe import read_nfe_document
from app.sandbox.docgen import DocumentFactory, Party

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NFE_REFORM = FIXTURES / "nfe" / "nfe_reforma_tributaria.xml"
NFE_REFORM_BFR = FIXTURES / "nfe" / "bfr-nfe_reforma_tributaria.xml"
CTE_REFORM = FIXTURES / "cte" / "bfr-dacte_reforma_tributaria.xml"
_NS = {"n": "http://www.portalfiscal.inf.br/nfe"}
NFE_OLD = FIXTURES / "nfe" / "41170706117473000150550010000463202612756525-procNFe.xml"


def _cents(text: str | None) -> int | None:
    return None if text is None else int(Decimal(text) * 100)


def _nfe(path: Path) -> NfeMeta:
    meta = read_nfe_document(path.read_bytes())
    assert isinstance(meta, NfeMeta)
    return meta


def test_nfe_totals_and_items_are_what_nfelib_reads() -> None:
    from nfelib.nfe.bindings.v4_0.proc_nfe_v4_00 import NfeProc

    # The samples carry IS/pISEspec, newer than nfelib 2.5's bindings: unknown leaves are skipped.
    parser = XmlParser(config=ParserConfig(fail_on_unknown_properties=False))
    for path in (NFE_REFORM, NFE_REFORM_BFR):
        proc = parser.from_path(path, NfeProc)
        inf = proc.NFe.infNFe
        tot = inf.total.IBSCBSTot
        meta = _nfe(path)
        reform = meta.reform
        assert reform is not None and not reform.unreadable
        assert reform.base_cents == _cents(tot.vBCIBSCBS) == 200050
        assert reform.ibs_uf_cents == _cents(tot.gIBS.gIBSUF.vIBSUF) == 3000
        assert reform.ibs_mun_cents == _cents(tot.gIBS.gIBSMun.vIBSMun) == 4000
        assert reform.ibs_cents == _cents(tot.gIBS.vIBS) == 5000
        assert reform.cbs_cents == _cents(tot.gCBS.vCBS) == 8729
        assert reform.ibs_presumed_cents == _cents(tot.gIBS.vCredPres) == 4310
        assert reform.ibs_presumed_suspended_cents == _cents(tot.gIBS.vCredPresCondSus) == 4190
        assert reform.cbs_presumed_cents == _cents(tot.gCBS.vCredPres) == 0
        assert reform.cbs_presumed_suspended_cents == _cents(tot.gCBS.vCredPresCondSus) == 120
        assert reform.is_cents == _cents(inf.total.ISTot.vIS) == 100000
        assert reform.total_cents == _cents(inf.total.vNFTot) == meta.total_nf_tot_cents == 500000
        assert len(reform.items) == len(inf.det) == 1
        item, det = reform.items[0], inf.det[0].imposto
        assert (
            (item.number, item.cst, item.class_code)
            == (1, det.IBSCBS.CST, det.IBSCBS.cClassTrib)
            == (
                1,
                "000",
                "000001",
            )
        )
        group = det.IBSCBS.gIBSCBS
        assert item.base_cents == _cents(group.vBC) == 80000
        assert item.ibs_uf_cents == _cents(group.gIBSUF.vIBSUF) == 1600
        assert item.ibs_mun_cents == _cents(group.gIBSMun.vIBSMun) == 2500
        # gIBSCBS/vIBS is later than these bindings: what the XML says (one sample has it, one not)
        assert item.ibs_cents == (0 if b"<vIBS>0</vIBS>" in path.read_bytes() else None)
        assert item.cbs_cents == _cents(group.gCBS.vCBS) == 10100
        assert item.is_cents == _cents(det.IS.vIS) == 15000
        assert meta.purpose == inf.ide.finNFe.value == "1"
        assert list(meta.referenced_keys) == [ref.refNFe for ref in inf.ide.NFref]


def test_cte_ibscbs_is_what_nfelib_reads() -> None:
    from nfelib.cte.bindings.v4_0.proc_cte_v4_00 import CteProc

    with warnings.catch_warnings():  # the sample's cUF "01" is not a real state: nfelib warns, we read on
        warnings.simplefilter("ignore")
        proc = XmlParser().from_path(CTE_REFORM, CteProc)
    group = proc.CTe.infCte.imp.IBSCBS
    meta = read_cte_document(CTE_REFORM.read_bytes())
    assert isinstance(meta, CteMeta) and meta.reform is not None
    reform = meta.reform
    assert reform.base_cents == _cents(group.gIBSCBS.vBC) == 22119
    assert reform.ibs_uf_cents == _cents(group.gIBSCBS.gIBSUF.vIBSUF) == 221
    assert reform.ibs_mun_cents == _cents(group.gIBSCBS.gIBSMun.vIBSMun) == 111
    assert reform.ibs_cents == _cents(group.gIBSCBS.vIBS) == 332
    assert reform.cbs_cents == _cents(group.gIBSCBS.gCBS.vCBS) == 553
    assert [(i.cst, i.class_code) for i in reform.items] == [(group.CST, group.cClassTrib)] == [("100", "000001")]


def test_a_document_without_the_groups_has_none_not_zero() -> None:
    meta = _nfe(NFE_OLD)
    assert meta.reform is None
    assert meta.purpose == "1" and meta.referenced_keys == ()


def test_an_unreadable_value_is_flagged_and_never_zero() -> None:
    data = NFE_REFORM.read_bytes().replace(b"<vCBS>87.29</vCBS>", b"<vCBS>87,29</vCBS>")
    meta = read_nfe_document(data)
    assert isinstance(meta, NfeMeta) and meta.reform is not None
    assert meta.reform.unreadable is True
    assert meta.reform.cbs_cents is None
    assert meta.reform.ibs_cents == 5000  # the rest is still read
    assert any("vCBS" in w for w in meta.warnings)


def test_credit_note_purpose_and_references() -> None:
    data = NFE_REFORM.read_bytes().replace(b"<finNFe>1</finNFe>", b"<finNFe>5</finNFe>")
    meta = read_nfe_document(data)
    assert isinstance(meta, NfeMeta)
    assert meta.purpose == "5"
    assert meta.referenced_keys == (
        "35250137241249000107550014231152171571688010",
        "21323412888283895737729149494949494171688099",
    )


def test_reform_values_reach_the_json() -> None:
    as_json = to_json_dict(_nfe(NFE_REFORM))
    assert as_json["reform"]["cbs_cents"] == 8729
    assert as_json["reform"]["items"][0]["class_code"] == "000001"


def test_reform_events_are_named() -> None:
    for code in ("110001", "211110", "211120", "211124", "211128", "211130", "211140", "211150"):
        assert code in EVENT_NAMES
    for code in ("212110", "212120", "112110", "112120", "112130", "112140", "112150", "412120", "412130"):
        assert code in EVENT_NAMES
    # NT 2025.002-RTC v1.31 §8.1: the tax office's answers to a succession's transfer of credit
    assert (
        event_name("412120")
        == "Manifestação do Fisco sobre pedido de transferência de crédito de IBS em operações de sucessão"
    )
    assert event_name("412130").startswith("Manifestação do Fisco") and "de CBS" in event_name("412130")
    assert event_name(PRESUMED_CREDIT_APPROPRIATION) == "Solicitação de apropriação de crédito presumido"
    # the layouts' descEvento: the successor (not the tax office) answers 212110; 211150 is the acquirer's activity
    assert event_name("212110").startswith("Manifestação sobre pedido de transferência de crédito de IBS")
    assert event_name("211150").endswith("que dependem de atividade do adquirente")
    assert event_name("211110", "Apropriacao") == "Apropriacao"  # the XML's own words first
    assert event_name("999999") == "Evento 999999"


def test_the_positional_reading_of_an_item_agrees_with_the_general_one(
    factory: DocumentFactory, supplier: Party, company: Party
) -> None:
    """A generated NF-e's 25 items (IS on the oils, presumed credits on coffee) read by position
    (the layout's order, each tag checked) give what the first-of-each-tag reading gives: a comment
    in each gIBSCBS sends every item to the general reading."""
    nfe = factory.nfe(
        emitter=supplier, recipient=company, issued_at=datetime(2026, 11, 10, tzinfo=UTC), items=25, reform=True
    )
    fast = read_nfe_document(nfe.nfe_proc)
    general = read_nfe_document(nfe.nfe_proc.replace(b"<gIBSCBS>", b"<gIBSCBS><!-- general -->"))
    assert isinstance(fast, NfeMeta) and isinstance(general, NfeMeta)
    assert fast.reform is not None and len(fast.reform.items) == 25
    assert fast.reform == general.reform
    root = etree.fromstring(nfe.nfe_proc)
    path = "n:NFe/n:infNFe/n:det/n:imposto/n:IBSCBS/n:gIBSCBS/n:gCBS/n:vCBS/text()"
    assert [item.cbs_cents for item in fast.reform.items] == [_cents(t) for t in root.xpath(path, namespaces=_NS)]
    with_is = [item for item in fast.reform.items if item.is_cents is not None]
    path_is = "n:NFe/n:infNFe/n:det/n:imposto/n:IS/n:vIS/text()"
    assert [item.is_cents for item in with_is] == [_cents(t) for t in root.xpath(path_is, namespaces=_NS)]


def test_an_unreadable_item_value_is_read_the_general_way_and_flagged(
    factory: DocumentFactory, supplier: Party, company: Party
) -> None:
    nfe = factory.nfe(
        emitter=supplier, recipient=company, issued_at=datetime(2026, 11, 10, tzinfo=UTC), items=3, reform=True
    )
    root = etree.fromstring(nfe.nfe_proc)
    [first] = root.xpath("n:NFe/n:infNFe/n:det[1]/n:imposto/n:IBSCBS/n:gIBSCBS/n:vBC/text()", namespaces=_NS)
    data = nfe.nfe_proc.replace(f"<vBC>{first}</vBC><gIBSUF>".encode(), b"<vBC>1,00</vBC><gIBSUF>", 1)
    meta = read_nfe_document(data)
    assert isinstance(meta, NfeMeta) and meta.reform is not None
    assert meta.reform.unreadable and meta.reform.items[0].base_cents is None
    assert meta.reform.items[1].base_cents is not None
    assert any("vBC" in w and "1,00" in w for w in meta.warnings)


def test_a_tax_office_event_is_read_and_named(factory: DocumentFactory, supplier: Party, company: Party) -> None:
    """412120 (NT 2025.002-RTC §8.12) delivered in an NF-e's stream: read as any event, its type
    kept and its name the NT's, so the timeline shows it before the app knows what to do with it."""
    nfe = factory.nfe(emitter=supplier, recipient=company, issued_at=datetime(2026, 11, 10, tzinfo=UTC))
    event = factory.nfe_event(nfe, tp_evento="412120", author=supplier, seq=1, at=datetime(2026, 11, 11, tzinfo=UTC))
    meta = read_nfe_document(event.proc_evento)
    assert isinstance(meta, EventMeta)
    assert (meta.tp_evento, meta.access_key) == ("412120", nfe.key)
    assert event_name(meta.tp_evento, meta.description) == event_name("412120") == EVENT_NAMES["412120"]
    assert "Fisco" in event_name(meta.tp_evento, None)


def _item_by_item(data: bytes, monkeypatch: pytest.MonkeyPatch) -> NfeMeta:
    """The document read with every item taken one by one (no document-wide fast reading)."""
    with monkeypatch.context() as patch:
        patch.setattr(reform_reader, "_common_items", lambda inf, tags: None)
        meta = read_nfe_document(data)
    assert isinstance(meta, NfeMeta)
    return meta


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"", b""),  # unchanged: every item of the common shape
        (b"<vBC>", b"<vBC> "),  # an amount with a blank before it
        (b"</vCBS>", b"\n</vCBS>"),  # ... with a line break after it
        (b"<vIBS>", b"<vIBS>1"),  # ... with more digits: still plain
        (b"</vIBSUF>", b"00</vIBSUF>"),  # four decimals
        (b"<vIBSMun>", b"<vIBSMun>x"),  # unreadable: flagged and warned of
        (b"<vIS>", b"<vIS>1,"),  # the selective tax's amount unreadable
        (b"<vIS>", b"<vIS> "),  # ... with a blank before it
        (b"<CST>000</CST>", b"<CST> 000 </CST>"),
        (b"<cClassTrib>000001</cClassTrib>", b"<cClassTrib></cClassTrib>"),
        (b' nItem="', b' nItemX="'),  # no item numbers: numbered by position
        (b' nItem="2"', ' nItem="²"'.encode()),  # a digit int() refuses: by position, no ValueError
        (b' nItem="2"', ' nItem="١"'.encode()),  # another script's digit: by position too
        (b"<gIBSUF><pIBSUF>", b"<gIBSUF><gDif><pDif>1.00</pDif></gDif><pIBSUF>"),
    ],
)
def test_the_document_wide_reading_of_items_agrees_with_the_item_by_item_one(
    factory: DocumentFactory, supplier: Party, company: Party, monkeypatch: pytest.MonkeyPatch, old: bytes, new: bytes
) -> None:
    """The items of a generated NF-e (IS on the oils, presumed credits on coffee) read at once
    (the common shape, plain amounts converted together) or one by one give the same values and
    warnings, whatever one item (or every one) says."""
    nfe = factory.nfe(
        emitter=supplier, recipient=company, issued_at=datetime(2026, 11, 10, tzinfo=UTC), items=25, reform=True
    )
    for data in (nfe.nfe_proc.replace(old, new, 1), nfe.nfe_proc.replace(old, new)):
        meta = read_nfe_document(data)
        assert isinstance(meta, NfeMeta) and meta.reform is not None
        assert len(meta.reform.items) == 25
        slow = _item_by_item(data, monkeypatch)
        assert (meta.reform, meta.warnings) == (slow.reform, slow.warnings)
    if not old:
        assert any(item.is_cents is not None for item in meta.reform.items)


def test_an_item_without_the_group_sends_the_document_to_the_item_by_item_reading(
    factory: DocumentFactory, supplier: Party, company: Party, monkeypatch: pytest.MonkeyPatch
) -> None:
    nfe = factory.nfe(
        emitter=supplier, recipient=company, issued_at=datetime(2026, 11, 10, tzinfo=UTC), items=4, reform=True
    )
    start = nfe.nfe_proc.index(b"<IBSCBS>")
    data = nfe.nfe_proc[:start] + nfe.nfe_proc[nfe.nfe_proc.index(b"</IBSCBS>", start) + 9 :]
    root = etree.fromstring(data)
    inf = root.find("n:NFe/n:infNFe", _NS)
    assert inf is not None
    assert reform_reader._common_items(inf, reform_reader._tags(_NS["n"])) is None
    meta = read_nfe_document(data)
    assert isinstance(meta, NfeMeta) and meta.reform is not None
    assert meta.reform == _item_by_item(data, monkeypatch).reform
    first = meta.reform.items[0]
    if data[:start].endswith(b"</IS>"):  # the first item pays IS: still an item, without CST
        assert (first.number, first.cst, len(meta.reform.items)) == (1, None, 4)
    else:
        assert [item.number for item in meta.reform.items] == [2, 3, 4]
