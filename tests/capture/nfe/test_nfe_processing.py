"""Per-document processing: a docZip in, the store's input out, the docZip's gzip kept as the blob."""

from __future__ import annotations

import base64
import gzip
import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from app.capture.nfe.processing import process_document
from app.core.clock import FakeClock
from app.core.ids import Cnpj
from app.core.keys import AccessKey, DocumentModel
from app.fiscal.distribution import decode_document
from app.store.companies import CompanyRepository
from app.store.db import Database, open_database
from app.store.documents import DocumentRepository
from app.store.records import Company, DocumentInput, DocumentKind, Product, StoredDocument

COMPANY = Cnpj.from_body("112223330001")
SUPPLIER = "11444777000161"
KEY = AccessKey.build(
    uf="SP",
    year_month="2611",
    issuer=SUPPLIER,
    model=DocumentModel.NFE,
    serie=1,
    number=77,
    tp_emis=1,
    code=12345678,
).value
RES_NFE = (
    '<?xml version="1.0" encoding="UTF-8"?>\r\n<resNFe xmlns="http://www.portalfiscal.inf.br/nfe" versao="1.01">'
    f"<chNFe>{KEY}</chNFe><CNPJ>{SUPPLIER}</CNPJ><xNome>AÇÚCAR &amp; CIA</xNome><IE>1</IE>"
    "<dhEmi>2026-11-02T09:00:00-03:00</dhEmi><tpNF>1</tpNF><vNF>10.00</vNF><digVal>x</digVal>"
    "<dhRecbto>2026-11-02T09:00:30-03:00</dhRecbto><nProt>135260000000001</nProt><cSitNFe>1</cSitNFe></resNFe>\n"
).encode()


def _doczip(data: bytes) -> str:
    return base64.b64encode(gzip.compress(data, compresslevel=6)).decode("ascii")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "captura.db", clock=FakeClock())
    try:
        yield database
    finally:
        database.close()


@pytest.fixture
def company(db: Database) -> Company:
    return CompanyRepository(db).add(COMPANY, "Alfa Comércio Ltda")


def _blob(db: Database) -> bytes:
    with db.reader() as s:
        return bytes(s.execute(text("SELECT xml_zlib FROM document_versions")).scalar_one())


def test_the_docZips_gzip_rides_to_the_store_and_reads_back_byte_exact(db: Database, company: Company) -> None:
    raw_b64 = _doczip(RES_NFE)
    item = process_document(COMPANY, decode_document(7, "resNFe_v1.01.xsd", raw_b64))
    assert isinstance(item, DocumentInput) and item.parse_error is None
    assert item.kind is DocumentKind.RES_NFE and item.xml == RES_NFE
    assert item.xml_gzip == base64.b64decode(raw_b64)
    docs = DocumentRepository(db)
    [stored] = docs.store_batch(company.id, [item])
    assert isinstance(stored, StoredDocument)
    assert _blob(db) == item.xml_gzip  # stored as it arrived, not compressed again
    assert docs.get_xml(company.id, Product.NFE, KEY) == RES_NFE
    [version] = docs.versions(stored.document_id)
    assert version.sha256 == hashlib.sha256(RES_NFE).hexdigest() and version.size == len(RES_NFE)


def test_a_corrupt_gzip_is_still_quarantined_with_the_base64_as_received(db: Database, company: Company) -> None:
    packed = bytearray(gzip.compress(RES_NFE))
    packed[-8] ^= 0xFF  # CRC-32 no longer matches
    raw_b64 = base64.b64encode(bytes(packed)).decode("ascii")
    doc = decode_document(8, "resNFe_v1.01.xsd", raw_b64)
    assert doc.xml is None and doc.xml_gzip is None and doc.error is not None
    item = process_document(COMPANY, doc)
    assert isinstance(item, DocumentInput) and item.kind is DocumentKind.UNKNOWN
    assert item.parse_error and item.xml == raw_b64.encode() and item.xml_gzip is None
    [stored] = DocumentRepository(db).store_batch(company.id, [item])
    assert isinstance(stored, StoredDocument)
    summary = DocumentRepository(db).get(stored.document_id)
    assert summary.quarantined and summary.parse_error == item.parse_error
    assert DocumentRepository(db).get_document_xml(summary.id) == raw_b64.encode()


def test_unreadable_xml_in_a_good_gzip_is_quarantined_with_its_gzip(db: Database, company: Company) -> None:
    broken = b"<resNFe><chNFe>sem fim"
    item = process_document(COMPANY, decode_document(9, "resNFe_v1.01.xsd", _doczip(broken)))
    assert isinstance(item, DocumentInput) and item.parse_error and item.xml == broken
    assert item.xml_gzip is not None and gzip.decompress(item.xml_gzip) == broken
    [stored] = DocumentRepository(db).store_batch(company.id, [item])
    assert isinstance(stored, StoredDocument)
    assert _blob(db) == item.xml_gzip
    assert DocumentRepository(db).get_document_xml(stored.document_id) == broken
