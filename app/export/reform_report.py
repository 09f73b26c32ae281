"""The report "Créditos de IBS e CBS por empresa e mês": what the office's client companies
received, per company, month of issue (Brasília) and product, with the reform's values.

Counted: documents received, authorised and not cancelled. Those with the reform's groups give
the sums; a nota de crédito (finNFe 5) reduces them and a nota de débito (finNFe 6) adds, both
also shown apart. Documents without the groups (older ones, the Simples Nacional) are counted
apart, so the accountant sees how much of the month the reform covers; a document whose values
could not be read is counted and listed as such and never summed as zero. The second sheet lists
every document behind the sums, with the signed values the first sheet adds up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import date, datetime, time
from decimal import Decimal
from operator import itemgetter

from app.core.clock import BRASILIA
from app.export.manual import Selection
from app.export.sheets import Cell, Sheet
from app.store.db import Database
from app.store.records import Company, Product
from app.store.reform import CREDIT_NOTE, DEBIT_NOTE, NOTES, VALUE_COLUMNS
from app.store.reform_lines import CreditLine, ReformLines

PRODUCTS = {Product.NFE: "NF-e", Product.CTE: "CT-e", Product.NFSE: "NFS-e"}
PURPOSES = {
    "1": "normal",
    "2": "complementar",
    "3": "ajuste",
    "4": "devolução",
    CREDIT_NOTE: "nota de crédito",
    DEBIT_NOTE: "nota de débito",
}
MONEY = (
    ("base_cents", "Base IBS/CBS (R$)"),
    ("ibs_uf_cents", "IBS estadual (R$)"),
    ("ibs_mun_cents", "IBS municipal (R$)"),
    ("ibs_cents", "IBS total (R$)"),
    ("cbs_cents", "CBS (R$)"),
    ("is_cents", "Imposto Seletivo (R$)"),
    ("ibs_presumed_cents", "Crédito presumido IBS (R$)"),
    ("cbs_presumed_cents", "Crédito presumido CBS (R$)"),
    ("ibs_presumed_suspended_cents", "Crédito presumido IBS sob condição (R$)"),
    ("cbs_presumed_suspended_cents", "Crédito presumido CBS sob condição (R$)"),
    ("total_cents", "Valor total com IBS/CBS (R$)"),
)
_FIELDS = tuple(name for name, _ in MONEY)
_PICK = itemgetter(*(VALUE_COLUMNS.index(name) for name in _FIELDS))  # a line's values in _FIELDS' order
_NOTES = ("ibs_cents", "cbs_cents")  # shown apart for each kind of note
_NOTE_FIELDS = tuple(_FIELDS.index(name) for name in _NOTES)
_CENT = Decimal("0.01")  # centavos to reais: a product, twice as fast as scaleb
TOTAL_HEADERS = (
    "CNPJ da empresa", "Empresa", "Mês", "Produto", "Documentos com IBS/CBS", "Notas de crédito", "Notas de débito",
    "Sem grupos da reforma", "Valores ilegíveis", *(title for _, title in MONEY),
    "IBS em notas de crédito (R$)", "CBS em notas de crédito (R$)", "IBS em notas de débito (R$)",
    "CBS em notas de débito (R$)",
)  # fmt: skip
DOCUMENT_HEADERS = (
    "CNPJ da empresa", "Empresa", "Mês", "Produto", "Chave de acesso", "Número", "Emissão",
    "Emitente (CNPJ/CPF)", "Emitente", "Finalidade", "Valores", *(title for _, title in MONEY),
)  # fmt: skip
TOTALS_SHEET = "Créditos IBS e CBS"
DOCUMENTS_SHEET = "Documentos"


class _Group:
    __slots__ = ("credit", "credit_notes", "debit", "debit_notes", "documents", "signed", "uncovered", "unreadable")

    def __init__(self) -> None:
        self.documents = self.credit_notes = self.debit_notes = self.uncovered = self.unreadable = 0
        self.signed: list[tuple[int | None, ...]] = []  # each document's values in _FIELDS' order, signed
        self.credit = [0] * len(_NOTES)  # in _NOTES' order
        self.debit = [0] * len(_NOTES)

    def sums(self) -> list[int]:
        """The signed values' sums per field, a column at a time (``filter`` drops the None)."""
        if not self.signed:
            return [0] * len(_FIELDS)
        return [sum(filter(None, column)) for column in zip(*self.signed, strict=True)]


def _money(cents: int | None) -> Decimal | None:
    return None if cents is None else _CENT * cents


def _month_of(instant: datetime) -> date:
    local = instant.astimezone(BRASILIA)
    return date(local.year, local.month, 1)


def _months(first: datetime, last: datetime) -> list[date]:
    month, end, found = _month_of(first), _month_of(last), []
    while month <= end:
        found.append(month)
        month = date(month.year + month.month // 12, month.month % 12 + 1, 1)
    found.append(month)  # the bound after the last
    return found


def credit_report(db: Database, selection: Selection, companies: dict[int, Company]) -> list[Sheet]:
    """The two sheets: totals per company, month and product; the documents behind them."""
    start, end = selection.period()
    reads = ReformLines(db)
    first, last = reads.bounds(selection.company_ids, selection.products, start, end)
    if first is None or last is None:
        return [Sheet(TOTALS_SHEET, TOTAL_HEADERS), Sheet(DOCUMENTS_SHEET, DOCUMENT_HEADERS)]
    months = _months(first, last)
    bounds = [datetime.combine(m, time(), BRASILIA) for m in months]
    if start is not None:
        bounds[0] = max(bounds[0], start)
    if end is not None:
        bounds[-1] = min(bounds[-1], end)
    groups: dict[tuple[int, date, Product], _Group] = defaultdict(_Group)
    counts = reads.received_counts(selection.company_ids, selection.products, bounds)
    for (cid, product, index), count in counts.items():
        groups[(cid, months[index], product)].uncovered += count
    documents: list[Sequence[Cell]] = []
    append = documents.append
    for line in reads.lines(selection.company_ids, selection.products, bounds[0], bounds[-1]):
        if not line.has_groups:
            continue  # a note without the groups: one of the uncovered
        local = line.issued_local
        month = date(local.year, local.month, 1)
        group = groups[(line.company_id, month, line.product)]
        group.uncovered -= 1  # received_counts counted every document
        append(_document_row(line, month, local, companies[line.company_id], group))
    totals: list[Sequence[Cell]] = [
        _total_row(companies[cid], month, product, group)
        for (cid, month, product), group in sorted(
            groups.items(), key=lambda item: (companies[item[0][0]].name, item[0][0], item[0][1], item[0][2].value)
        )
    ]
    return [Sheet(TOTALS_SHEET, TOTAL_HEADERS, totals), Sheet(DOCUMENTS_SHEET, DOCUMENT_HEADERS, documents)]


def _document_row(line: CreditLine, month: date, issued: datetime, company: Company, group: _Group) -> list[Cell]:
    head: list[Cell] = [
        company.cnpj.value, company.name, month, PRODUCTS[line.product], line.access_key, line.number,
        issued, line.emitter_id, line.emitter_name,
        PURPOSES.get(line.purpose or "", line.purpose),
    ]  # fmt: skip
    if line.unreadable:
        group.unreadable += 1
        return [*head, "ilegíveis: não somados", *([None] * len(MONEY))]
    purpose, values = line.purpose, _PICK(line.values)
    group.documents += 1
    if purpose in NOTES:
        if purpose == CREDIT_NOTE:
            group.credit_notes += 1
        else:
            group.debit_notes += 1
        noted = group.credit if purpose == CREDIT_NOTE else group.debit
        for index, field in enumerate(_NOTE_FIELDS):
            noted[index] += values[field] or 0
        if purpose == CREDIT_NOTE:  # a nota de crédito takes away
            values = tuple(None if cents is None else -cents for cents in values)
    group.signed.append(values)
    head.append("lidos")
    # Decimal × int: half the time of Decimal(int) × Decimal, the same exact value
    head.extend([None if cents is None else _CENT * cents for cents in values])
    return head


def _total_row(company: Company, month: date, product: Product, group: _Group) -> list[Cell]:
    return [
        company.cnpj.value, company.name, month, PRODUCTS[product], group.documents, group.credit_notes,
        group.debit_notes, group.uncovered, group.unreadable, *(_money(cents) for cents in group.sums()),
        *(_money(cents) for cents in group.credit), *(_money(cents) for cents in group.debit),
    ]  # fmt: skip
