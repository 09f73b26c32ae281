"""The copy to the office server and its verification: a difference in a row or a blob shows up."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from app.core.clock import FakeClock
from app.store.companies import CompanyRepository
from app.store.db import open_database
from app.store.documents import DocumentRepository
from app.store.records import DocumentInput, DocumentKind, Product
from app.store.transfer import copy_tables, verify
from tests.store.conftest import CNPJ_A


def test_verify_sees_a_changed_xml_and_a_missing_row(db_path: Path, postgres_url: str, clock: FakeClock) -> None:
    with open_database(db_path, clock=clock) as source, open_database(postgres_url, clock=clock) as target:
        company = CompanyRepository(source).add(CNPJ_A, "Alfa Comércio Ltda")
        for n in range(1, 8):
            DocumentRepository(source).store(
                company.id,
                DocumentInput(Product.NFE, DocumentKind.RES_NFE, f"<resNFe n='{n}'/>".encode(), f"{n:044d}", nsu=n),
            )
        copy_tables(source, target, batch_rows=3)
        report = verify(source, target, batch_rows=3)
        assert report.ok and report.xml_checked == 7
        assert {c.table: c.target for c in report.counts}["document_versions"] == 7
        # A new document gets an id after the copied ones: the server's sequence followed them.
        DocumentRepository(target).store(
            company.id, DocumentInput(Product.NFE, DocumentKind.RES_NFE, b"<resNFe n='8'/>", f"{8:044d}", nsu=8)
        )
        with target.session() as session:
            session.execute(text("UPDATE document_versions SET xml_sha256 = :h WHERE id = 3"), {"h": "0" * 64})
        report = verify(source, target, batch_rows=3)
        assert not report.ok
        assert {c.table: (c.source, c.target) for c in report.counts}["documents"] == (7, 8)
        assert any(m.startswith("document_versions 3: XML armazenado corrompido") for m in report.mismatches)
        with source.session() as session:  # a row changed in the SQLite file after its copy
            session.execute(text("UPDATE documents SET emitter_name = 'OUTRO' WHERE id = 2"))
        assert "documents 2: diferente do banco de origem (emitter_name)" in verify(source, target).mismatches
        assert "document_versions 8: não existe no banco de origem" in report.mismatches
