"""Reports for the office: the document list, the monthly summary per company, the gap ledger and
the manifestation deadlines still open, as sheets (``app.export.sheets`` writes XLSX or CSV).

Money is ``Decimal`` from integer centavos, dates are dates (in the document's own offset, the
day printed on it), counts are integers: a spreadsheet sums and filters them as they are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

from app.core.clock import BRASILIA
from app.core.documents import DIRECTION_LABELS, STATUS_LABELS
from app.core.manifestation import CONFIRMACAO, MANIFESTATION_TYPES, manifestation_state, next_deadline
from app.export.manual import Selection, issued_ids
from app.export.reform_report import credit_report
from app.export.sheets import Cell, Sheet
from app.store.companies import CompanyRepository
from app.store.db import Database
from app.store.documents import DocumentRepository
from app.store.grid import GridRepository
from app.store.records import (
    Company,
    Direction,
    DocumentKind,
    DocumentStatus,
    DocumentSummary,
    GapStatus,
    Product,
)
from app.store.reports import ReportRepository

PAGE = 500
PRODUCT_SHEETS = {Product.NFE: "NF-e", Product.CTE: "CT-e", Product.NFSE: "NFS-e"}
GAP_STATUSES = {
    GapStatus.PENDING: "pendente",
    GapStatus.RECOVERED: "recuperada",
    GapStatus.NOT_FOUND: "inexistente (137)",
    GapStatus.ABANDONED: "abandonada",
}
SUMMARY_KINDS = frozenset({DocumentKind.RES_NFE, DocumentKind.DPS})
CONCLUSIVE_DAYS = MANIFESTATION_TYPES[CONFIRMACAO].deadline_days

DOCUMENT_HEADERS = (
    "CNPJ da empresa",
    "Empresa",
    "Produto",
    "Layout",
    "Chave de acesso",
    "NSU",
    "Modelo",
    "Série",
    "Número",
    "Emissão",
    "Emitente (CNPJ/CPF)",
    "Emitente",
    "Destinatário (CNPJ/CPF)",
    "Destinatário",
    "Valor (R$)",
    "Direção",
    "Situação",
)
VALUE_AT = DOCUMENT_HEADERS.index("Valor (R$)")
# NFS-e: both values, named as the DANFSe names them (the taker pays the net when taxes are withheld).
NFSE_HEADERS = (
    *DOCUMENT_HEADERS[:VALUE_AT],
    "Valor do serviço (R$)",
    "Valor líquido (R$)",
    *DOCUMENT_HEADERS[VALUE_AT + 1 :],
)


# Companies and products (empty: all); an issue period in Brasília days, both inclusive.
Filters = Selection


def money(cents: int | None) -> Decimal | None:
    return None if cents is None else Decimal(cents).scaleb(-2)


def local(instant: datetime | None, offset_minutes: int | None) -> datetime | None:
    """The instant as printed on the document (its own offset), naive for a spreadsheet."""
    if instant is None:
        return None
    return instant.astimezone(timezone(timedelta(minutes=offset_minutes or 0))).replace(tzinfo=None)


class Reports:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._companies = {c.id: c for c in CompanyRepository(db).list_companies()}

    def company(self, company_id: int) -> Company:
        return self._companies[company_id]

    # ------------------------------------------------------------------ documents

    def documents(self, filters: Filters) -> list[Sheet]:
        """One sheet per product, in issue order."""
        sheets = []
        for product in filters.products or tuple(Product):
            docs = self._documents(filters, product)
            if product is Product.NFSE:  # both values: one more read for the page's net values
                listed = list(docs)
                nets = GridRepository(self.db).net_values([d.id for d in listed])
                rows: list[Sequence[Cell]] = [self._document_row(d, nets) for d in listed]
                sheets.append(Sheet(PRODUCT_SHEETS[product], NFSE_HEADERS, rows))
            else:
                rows = [self._document_row(d) for d in docs]
                sheets.append(Sheet(PRODUCT_SHEETS[product], DOCUMENT_HEADERS, rows))
        return sheets

    def _documents(self, filters: Filters, product: Product) -> Iterator[DocumentSummary]:
        start, end = filters.period()
        documents = DocumentRepository(self.db)
        page: list[int] = []
        for document_id in issued_ids(self.db, product, filters.company_ids, start, end):
            page.append(document_id)
            if len(page) == PAGE:
                yield from documents.summaries(page)
                page = []
        yield from documents.summaries(page)

    def _document_row(self, doc: DocumentSummary, nets: dict[int, int] | None = None) -> list[Cell]:
        """``nets``: an NFS-e sheet's net values (vLiq), a column after the service value."""
        company = self.company(doc.company_id)
        values: list[Cell] = [money(doc.total_cents)]
        if nets is not None:
            values.append(money(nets.get(doc.id)))
        return [
            company.cnpj.value,
            company.name,
            PRODUCT_SHEETS[doc.product],
            doc.kind.value,
            doc.access_key,
            doc.nsu,
            doc.model,
            doc.serie,
            doc.number,
            local(doc.issued_at, doc.issued_offset_minutes),
            doc.emitter_id,
            doc.emitter_name,
            doc.recipient_id,
            doc.recipient_name,
            *values,
            DIRECTION_LABELS[doc.direction],
            STATUS_LABELS[doc.status],
        ]

    # ------------------------------------------------------------------ IBS and CBS credits

    def ibs_cbs(self, filters: Filters) -> list[Sheet]:
        """Créditos de IBS e CBS por empresa e mês, and the documents behind them (``reform_report``)."""
        return credit_report(self.db, filters, self._companies)

    # ------------------------------------------------------------------ monthly summary

    def summary(self, filters: Filters) -> list[Sheet]:
        """Per company and month: counts and totals per product, content (complete, resumo) and direction."""
        start, end = filters.period()
        groups: dict[tuple[int, date, Product, str, Direction], list[int]] = defaultdict(lambda: [0, 0, 0])
        lines = ReportRepository(self.db).summary_lines(
            company_ids=filters.company_ids, products=filters.products, issued_from=start, issued_to=end
        )
        for line in lines:
            issued = local(line.issued_at, line.issued_offset_minutes)
            if issued is None:
                continue
            content = "resumo" if line.kind in SUMMARY_KINDS else "completa"
            month = date(issued.year, issued.month, 1)
            totals = groups[(line.company_id, month, line.product, content, line.direction)]
            totals[0] += 1
            totals[1] += line.total_cents or 0
            totals[2] += 1 if line.status is DocumentStatus.CANCELLED else 0
        headers = (
            "CNPJ da empresa",
            "Empresa",
            "Mês",
            "Produto",
            "Conteúdo",
            "Direção",
            "Quantidade",
            "Canceladas",
            "Valor total (R$)",
        )
        rows: list[Sequence[Cell]] = []
        for (cid, month, product, content, direction), (count, cents, cancelled) in sorted(
            groups.items(), key=lambda item: (self.company(item[0][0]).name, item[0][1], item[0][2].value, item[0][3])
        ):
            company = self.company(cid)
            rows.append(
                [
                    company.cnpj.value,
                    company.name,
                    month,
                    PRODUCT_SHEETS[product],
                    content,
                    DIRECTION_LABELS[direction],
                    count,
                    cancelled,
                    money(cents),
                ]
            )
        return [Sheet("Resumo mensal", headers, rows)]

    # ------------------------------------------------------------------ gap ledger

    def gaps(self, filters: Filters) -> list[Sheet]:
        headers = (
            "CNPJ da empresa",
            "Empresa",
            "Produto",
            "NSU",
            "Chave de acesso",
            "Situação",
            "Tentativas",
            "Próxima tentativa",
            "Último erro",
            "Encontrada em",
            "Atualizada em",
        )
        rows: list[Sequence[Cell]] = []
        for gap in ReportRepository(self.db).gap_lines(company_ids=filters.company_ids, products=filters.products):
            company = self.company(gap.company_id)
            pending = gap.status is GapStatus.PENDING
            rows.append(
                [
                    company.cnpj.value,
                    company.name,
                    PRODUCT_SHEETS[gap.product],
                    gap.nsu,
                    gap.access_key,
                    GAP_STATUSES[gap.status],
                    gap.attempts,
                    _brasilia(gap.next_attempt_at) if pending else None,
                    gap.last_error,
                    _brasilia(gap.created_at),
                    _brasilia(gap.updated_at),
                ]
            )
        return [Sheet("Lacunas de NSU", headers, rows)]

    # ------------------------------------------------------------------ manifestation deadlines

    def deadlines(self, filters: Filters, now: datetime) -> list[Sheet]:
        """Received NF-e still needing a manifestation within its legal deadline (Ciência 10 days,
        a conclusive event 90 days from authorisation), soonest first."""
        headers = (
            "CNPJ da empresa",
            "Empresa",
            "Chave de acesso",
            "Número",
            "Emitente (CNPJ/CPF)",
            "Emitente",
            "Valor (R$)",
            "Emissão",
            "Manifestação pendente",
            "Prazo",
            "Dias restantes",
        )
        since = now - timedelta(days=CONCLUSIVE_DAYS + 1)
        start, end = filters.period()
        start = max(start, since) if start else since
        grid = GridRepository(self.db)
        found: list[tuple[datetime, Sequence[Cell]]] = []
        received = Filters(filters.company_ids, (Product.NFE,), None, None)
        docs = [
            d
            for d in self._documents_between(received, start, end)
            if d.direction is Direction.RECEIVED
            and d.access_key
            and not d.quarantined
            and d.issued_at
            and d.status not in (DocumentStatus.CANCELLED, DocumentStatus.DENIED)
        ]
        pairs = [(d.company_id, d.access_key or "") for d in docs]
        facts = grid.event_facts(Product.NFE, pairs)
        requested = grid.requested_keys(Product.NFE, pairs)
        for doc in docs:
            assert doc.access_key is not None and doc.issued_at is not None
            pair = (doc.company_id, doc.access_key)
            registered = [
                (f.tp_evento, f.n_seq_evento) for f in facts.get(pair, []) if f.tp_evento in MANIFESTATION_TYPES
            ]
            pending = next_deadline(manifestation_state(registered, pair in requested), doc.issued_at, now)
            if pending is None or pending.due < now:
                continue
            company = self.company(doc.company_id)
            found.append(
                (
                    pending.due,
                    [
                        company.cnpj.value,
                        company.name,
                        doc.access_key,
                        doc.number,
                        doc.emitter_id,
                        doc.emitter_name,
                        money(doc.total_cents),
                        local(doc.issued_at, doc.issued_offset_minutes),
                        MANIFESTATION_TYPES[pending.tp_evento].label,
                        _brasilia(pending.due),
                        pending.days_left(now),
                    ],
                )
            )
        found.sort(key=lambda item: item[0])
        return [Sheet("Prazos de manifestação", headers, [row for _, row in found])]

    def _documents_between(
        self, filters: Filters, start: datetime | None, end: datetime | None
    ) -> Iterator[DocumentSummary]:
        first = start.astimezone(BRASILIA).date() if start else None
        last = (end.astimezone(BRASILIA) - timedelta(microseconds=1)).date() if end else None
        yield from self._documents(Filters(filters.company_ids, filters.products, first, last), Product.NFE)


def _brasilia(instant: datetime) -> datetime:
    return instant.astimezone(BRASILIA).replace(tzinfo=None)
