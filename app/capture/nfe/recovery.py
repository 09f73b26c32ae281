"""NF-e point queries: the engine's gap recovery plus a user's "buscar esta nota" (consChNFe, §4.7)."""

from __future__ import annotations

from app.capture.context import CaptureContext
from app.capture.engine.locks import CompanyLocks
from app.capture.engine.lookup import ReprocessResult
from app.capture.engine.points import PointQueries
from app.capture.nfe.adapter import NfeAdapter
from app.core.cstat import DOCUMENTS_FOUND, KEY_NOT_FOUND, NO_DOCUMENTS
from app.core.keys import AccessKey
from app.fiscal.distribution import ConsChNFe

__all__ = ["NfePointQueries", "ReprocessResult"]


class NfePointQueries(PointQueries):
    """NF-e's recoveries, by NSU or by key, and a user's request for one note."""

    def __init__(self, ctx: CaptureContext, locks: CompanyLocks) -> None:
        super().__init__(ctx, NfeAdapter(ctx), locks)

    # ------------------------------------------------------------------ user reprocessing

    def reprocess_key(self, company_id: int, key: str, *, queue: bool = False) -> ReprocessResult:
        """A user asks for one NF-e by key: from the database when there, else consChNFe if allowed.
        ``queue``: the capture service running elsewhere on this data folder makes the query (its
        recovery dispatch respects the quota and the blocks)."""
        company = self.ctx.companies.get(company_id)
        access_key = AccessKey.parse(key)
        summary = self.ctx.documents.find(company.id, self.product, access_key.value)
        if summary is not None and summary.kind.value == "nfeProc":
            return ReprocessResult("local", "A nota completa já está na base; nenhuma consulta foi feita.", summary.id)
        if queue:
            self.ctx.recoveries.add(
                company.id, self.product, next_attempt_at=self.ctx.clock.now(), access_key=access_key.value
            )
            return ReprocessResult(
                "deferred",
                "Consulta agendada: o serviço de captura em execução nesta pasta de dados fará o consChNFe "
                "dentro da cota de consultas pontuais.",
            )
        lock = self.locks.for_cnpj(company.cnpj.value)
        if not lock.acquire(timeout=30):
            return ReprocessResult("deferred", "Outra consulta desta empresa está em andamento; tente em instantes.")
        try:
            now = self.ctx.clock.now()
            wait = self._user_wait(company, now, access_key.value)
            if wait is not None:
                return ReprocessResult("deferred", wait[0], available_at=wait[1])
            reply, error = self._query(company, ConsChNFe(access_key), access_key.value)
        finally:
            lock.release()
        if reply is None:
            return ReprocessResult("rejected", error or "Falha de comunicação.")
        if reply.cstat == DOCUMENTS_FOUND:
            found = self.ctx.documents.find(company.id, self.product, access_key.value)
            return ReprocessResult("fetched", "Documento obtido do Ambiente Nacional.", found.id if found else None)
        status = "not_found" if reply.cstat in (NO_DOCUMENTS, KEY_NOT_FOUND) else "rejected"
        return ReprocessResult(status, f"cStat {reply.cstat}: {reply.xmotivo}")
