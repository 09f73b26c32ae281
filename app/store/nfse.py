"""NFS-e Nacional in the store: its details, delivery rules and substitution keys (revision 0006).

Written by the NFS-e adapter inside a lot's transaction (``Unit.save_nfse``), never on the NF-e
or CT-e path. Read by the CLI and the window: an NFS-e's details, and whether it is withheld
(stored, but not listed, notified or exported: before the cutoff date until the history is
released, or own-issued while that capture is off).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select, update

from app.store.db import Database
from app.store.models import DocumentRow, EventRow, NfseDetailsRow
from app.store.records import NfseDetails, Product, Withheld
from app.store.types import utc_text

_UPSERT_DETAILS = (
    "INSERT INTO nfse_details (document_id, competence, processed_at, national_code, municipal_code, nbs, "
    "description, incidence_code, incidence_name, service_cents, net_cents, iss_rate, iss_cents, "
    "retained_cents, iss_retention, intermediary_id, ibscbs_base_cents, ibscbs_total_cents, ibs_cents, "
    "cbs_cents, replaced_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (document_id) DO UPDATE SET competence = excluded.competence, "
    "processed_at = excluded.processed_at, national_code = excluded.national_code, "
    "municipal_code = excluded.municipal_code, nbs = excluded.nbs, description = excluded.description, "
    "incidence_code = excluded.incidence_code, incidence_name = excluded.incidence_name, "
    "service_cents = excluded.service_cents, net_cents = excluded.net_cents, iss_rate = excluded.iss_rate, "
    "iss_cents = excluded.iss_cents, retained_cents = excluded.retained_cents, "
    "iss_retention = excluded.iss_retention, intermediary_id = excluded.intermediary_id, "
    "ibscbs_base_cents = excluded.ibscbs_base_cents, ibscbs_total_cents = excluded.ibscbs_total_cents, "
    "ibs_cents = excluded.ibs_cents, cbs_cents = excluded.cbs_cents, replaced_key = excluded.replaced_key"
)
_SET_WITHHELD = "UPDATE documents SET withheld = ? WHERE id = ?"
_SET_SUBSTITUTE = "UPDATE events SET substitute_key = ? WHERE id = ?"


def _row(document_id: int, d: NfseDetails) -> tuple[Any, ...]:
    return (
        document_id,
        d.competence.isoformat() if d.competence else None,
        utc_text(d.processed_at),
        d.national_code,
        d.municipal_code,
        d.nbs,
        d.description,
        d.incidence_code,
        d.incidence_name,
        d.service_cents,
        d.net_cents,
        d.iss_rate,
        d.iss_cents,
        d.retained_cents,
        d.iss_retention,
        d.intermediary_id,
        d.ibscbs_base_cents,
        d.ibscbs_total_cents,
        d.ibs_cents,
        d.cbs_cents,
        d.replaced_key,
    )


def save_nfse_in(
    driver: Any,
    details: Sequence[tuple[int, NfseDetails]],
    substitutes: Sequence[tuple[int, str]] = (),
) -> None:
    """(document id, details) rows upserted with their ``withheld`` flag; (event id, key) too."""
    if details:
        driver.executemany(_UPSERT_DETAILS, [_row(document_id, d) for document_id, d in details])
        driver.executemany(
            _SET_WITHHELD, [(d.withheld.value if d.withheld else None, document_id) for document_id, d in details]
        )
    if substitutes:
        driver.executemany(_SET_SUBSTITUTE, [(key, event_id) for event_id, key in substitutes])


class NfseRepository:
    """Reads of NFS-e details, and the user's releases of withheld NFS-e."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def details(self, document_id: int) -> NfseDetails | None:
        with self._db.reader() as s:
            row = s.get(NfseDetailsRow, document_id)
            withheld = s.scalar(select(DocumentRow.withheld).where(DocumentRow.id == document_id))
        if row is None:
            return None
        return NfseDetails(
            competence=row.competence,
            processed_at=row.processed_at,
            national_code=row.national_code,
            municipal_code=row.municipal_code,
            nbs=row.nbs,
            description=row.description,
            incidence_code=row.incidence_code,
            incidence_name=row.incidence_name,
            service_cents=row.service_cents,
            net_cents=row.net_cents,
            iss_rate=row.iss_rate,
            iss_cents=row.iss_cents,
            retained_cents=row.retained_cents,
            iss_retention=row.iss_retention,
            intermediary_id=row.intermediary_id,
            ibscbs_base_cents=row.ibscbs_base_cents,
            ibscbs_total_cents=row.ibscbs_total_cents,
            ibs_cents=row.ibs_cents,
            cbs_cents=row.cbs_cents,
            replaced_key=row.replaced_key,
            withheld=Withheld(str(withheld)) if withheld else None,
        )

    def withheld_counts(self, company_id: int) -> dict[Withheld, int]:
        """How many of the company's NFS-e each delivery rule holds back."""
        with self._db.reader() as s:
            rows = s.execute(
                select(DocumentRow.withheld, func.count())
                .where(
                    DocumentRow.company_id == company_id,
                    DocumentRow.product == Product.NFSE.value,
                    DocumentRow.withheld.is_not(None),
                )
                .group_by(DocumentRow.withheld)
            ).all()
        return {Withheld(str(reason)): count for reason, count in rows}

    def release(self, company_id: int, reason: Withheld) -> int:
        """The company's NFS-e held by ``reason`` become listed; returns how many."""
        with self._db.session() as s:
            result = s.execute(
                update(DocumentRow)
                .where(
                    DocumentRow.company_id == company_id,
                    DocumentRow.product == Product.NFSE.value,
                    DocumentRow.withheld == reason.value,
                )
                .values(withheld=None)
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def withhold_own_issued(self, company_id: int) -> int:
        """Own-issued capture switched off: the company's emitted NFS-e listed so far are held."""
        with self._db.session() as s:
            result = s.execute(
                update(DocumentRow)
                .where(
                    DocumentRow.company_id == company_id,
                    DocumentRow.product == Product.NFSE.value,
                    DocumentRow.direction == "emitted",
                    DocumentRow.withheld.is_(None),
                )
                .values(withheld=Withheld.OWN_ISSUED.value)
            )
            return int(getattr(result, "rowcount", 0) or 0)

    def substitute_of(self, company_id: int, key: str) -> str | None:
        """The substitute key a 105102 event of ``key`` named, if one was stored."""
        with self._db.reader() as s:
            return s.scalar(
                select(EventRow.substitute_key).where(
                    EventRow.company_id == company_id,
                    EventRow.product == Product.NFSE.value,
                    EventRow.access_key == key,
                    EventRow.substitute_key.is_not(None),
                )
            )
