"""The capture itself from the command line (``Desk.capturing_now``): one round now (``capture
--once``), and what every company and product is doing (``status``). The continuous service is
the desk opened to capture (``capture --daemon``, the window). Slow: from a worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.capture.context import CaptureNotice
from app.capture.status import CompanyOutcome, CompanyStatus, OnceReport, captured_elsewhere
from app.desk.errors import DeskError
from app.desk.sending import Sender

if TYPE_CHECKING:
    from pathlib import Path

    from app.capture.service import CaptureService
    from app.core.products import Product

__all__ = ["CaptureNotice", "CaptureRounds", "CompanyOutcome", "CompanyStatus", "OnceReport"]


class CaptureRounds:
    """One data folder's capture on request, over the desk's service and sender."""

    def __init__(self, data_dir: Path, service: CaptureService, sender: Sender) -> None:
        self._data_dir = data_dir
        self._service = service
        self._sender = sender

    def once(self, company_id: int | None = None, product: Product | None = None) -> OnceReport:
        """Everything due now (all companies and products, or one), obeying every wait; refused
        when another instance captures here (never two capturers of one folder)."""

        def round_now() -> OnceReport:
            self._service.recover_after_crash()  # the folder is ours: take up what a killed process left
            return self._service.run_once(company_id=company_id, product=product)

        sent = self._sender.now_or_leave(round_now, "capture --once")
        if sent.value is None and sent.office_node:
            who = f"a estação {sent.holder}" if sent.holder else "outra estação"
            raise DeskError(f"A captura do escritório está com {who}: esta estação não consulta o governo.")
        if sent.value is None:
            raise DeskError(sent.message or "Outra instância do Captura DF-e já está capturando nesta pasta de dados.")
        return sent.value

    def status(self) -> tuple[str | None, list[CompanyStatus]]:
        """Who captures here when another process (or the office's node elsewhere) does (None:
        nobody), and every company and product's state as stored (that process's certificates
        are its own: not judged here)."""
        holder = captured_elsewhere(self._data_dir) or self._sender.node_elsewhere()
        self._service.captured_elsewhere = holder
        return holder, self._service.status()
