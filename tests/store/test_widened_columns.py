"""Revision 0012: the columns PostgreSQL found too short take their longest values on both engines,
and the revision goes down and up again on a database with documents without losing a row."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import inspect, text

from app.core.clock import FakeClock
from app.store.audit import AuditRepository
from app.store.db import Database, alembic_config, head_revision, open_database
from app.store.documents import DocumentRepository
from app.store.records import (
    CallOutcome,
    CallRecord,
    Company,
    DocumentInput,
    DocumentKind,
    DocumentStatus,
    Party,
    PartyRole,
    Product,
)

KEY = "35210775277525000178550030000266631762885493"
NFSE_EVENT_ID = "PRE" + "3" * 50 + "101101" + "001"  # 62 characters, the longest operation logged
LONG_NAME = "Prestadora de Serviços " + "x" * 277  # an NFS-e xNome: up to 300
LONG_REASON = "Rejeição: " + "m" * 245  # a CT-e's xMotivo: up to 255


def _store_long_values(db: Database, company: Company, clock: FakeClock) -> None:
    DocumentRepository(db).store(
        company.id,
        DocumentInput(
            product=Product.NFE,
            kind=DocumentKind.NFE_PROC,
            xml=b"<nfeProc/>",
            access_key=KEY,
            nsu=1,
            emitter_name=LONG_NAME,
            recipient_name=LONG_NAME,
            situation=LONG_REASON,
            status=DocumentStatus.AUTHORISED,
            parties=(Party(PartyRole.EMITTER, "75277525000178", LONG_NAME),),
        ),
    )
    AuditRepository(db).log_call(
        CallRecord("nfse_eventos", CallOutcome.OK, clock.now(), 5, company.id, Product.NFSE, NFSE_EVENT_ID)
    )


def _long_values(db: Database) -> tuple[object, ...]:
    with db.reader() as s:
        return tuple(
            s.execute(
                text(
                    "SELECT d.emitter_name, d.recipient_name, d.situation, p.name, c.operation FROM documents d "
                    "JOIN document_parties p ON p.document_id = d.id, government_calls c"
                )
            ).one()
        )


def test_the_widened_columns_keep_their_longest_values_whole(db: Database, company: Company, clock: FakeClock) -> None:
    _store_long_values(db, company, clock)
    assert _long_values(db) == (LONG_NAME, LONG_NAME, LONG_REASON, LONG_NAME, NFSE_EVENT_ID)


def test_0012_goes_down_and_up_again_keeping_every_row(
    db_target: Path | str, db: Database, company: Company, clock: FakeClock
) -> None:
    DocumentRepository(db).store(
        company.id,
        DocumentInput(Product.NFE, DocumentKind.RES_NFE, b"<resNFe/>", KEY, nsu=1, emitter_name="EMITENTE",
                      parties=(Party(PartyRole.EMITTER, "75277525000178", "EMITENTE"),)),
    )  # fmt: skip
    with db.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0011")
    db.close()
    with open_database(db_target, clock=clock) as again:
        assert again.revision() == head_revision()
        lengths = {
            c["name"]: getattr(c["type"], "length", None) for c in inspect(again.engine).get_columns("documents")
        }
        assert (lengths["situation"], lengths["emitter_name"], lengths["recipient_name"]) == (255, 300, 300)
        with again.reader() as s:
            counts = [
                s.execute(text(f"SELECT count(*) FROM {t}")).scalar()
                for t in ("documents", "document_versions", "document_parties")
            ]
            assert counts == [1, 1, 1]  # no table was dropped under its children
            if again.dialect == "sqlite":
                assert s.execute(text("PRAGMA integrity_check")).scalar() == "ok"
        _store_long_values(again, company, clock)
        assert _long_values(again)[2:] == (LONG_REASON, LONG_NAME, NFSE_EVENT_ID)
