"""NFeDistribuicaoDFe (distDFeInt 1.01) and CTeDistribuicaoDFe (distDFeInt 1.00) as the AN runs them.

One implementation, two flavours. Rules: MOC §5.7 (protocol.md §1.7), NT 2014.002 v1.12–1.15 (656:
premature query, block that restarts, out-of-sequence NSU, 20 point queries/hour), NT 2015.002.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache

from lxml import etree

from app.core.clock import BRASILIA, brasilia_iso
from app.core.cstat import CONSUMO_INDEVIDO, DOCUMENTS_FOUND, KEY_NOT_FOUND, NO_DOCUMENTS, NSU_ABOVE_MAX
from app.core.errors import InvalidIdentifier
from app.core.ids import Cnpj, Cpf
from app.core.keys import AccessKey
from app.sandbox import rules, xsd
from app.sandbox.context import VER_APLIC_DIST, Context
from app.sandbox.faults import CONTENT_FAULTS, apply_content_fault
from app.sandbox.rules import DistGuard
from app.sandbox.soap import (
    CTE_NS,
    NFE_NS,
    SOAP12,
    BadEnvelope,
    attribute,
    find_first,
    parse_envelope,
    soap_text_response,
    text,
)
from app.sandbox.state import RETENTION, Entry
from app.sandbox.wire import Caller, SandboxRequest, SandboxResponse

LOT_SIZE = 50


@dataclass(frozen=True)
class Flavor:
    product: str
    service: str
    ns: str
    versao: str
    wsdl_ns: str
    response_tag: str
    result_tag: str
    request_schema: str
    dh_resp_with_tz: bool


NFE = Flavor(
    "nfe",
    "nfe_dist",
    NFE_NS,
    "1.01",
    "http://www.portalfiscal.inf.br/nfe/wsdl/NFeDistribuicaoDFe",
    "nfeDistDFeInteresseResponse",
    "nfeDistDFeInteresseResult",
    "distDFeInt_v1.01",
    True,
)
CTE = Flavor(
    "cte",
    "cte_dist",
    CTE_NS,
    "1.00",
    "http://www.portalfiscal.inf.br/cte/wsdl/CTeDistribuicaoDFe",
    "cteDistDFeInteresseResponse",
    "cteDistDFeInteresseResult",
    "distDFeInt_v1.00",
    False,
)

MOTIVOS = {
    137: "Nenhum documento localizado",
    138: "Documento(s) localizado(s)",
    108: "Servico Paralisado Momentaneamente (curto prazo)",
    109: "Servico Paralisado sem Previsao",
    215: "Rejeicao: Falha no schema XML",
    217: "Rejeicao: NF-e nao consta na base de dados do Ambiente Nacional",
    236: "Rejeicao: Chave de Acesso com digito verificador invalido",
    243: "Rejeicao: XML Mal Formado",
    252: "Rejeicao: Ambiente informado diverge do Ambiente de recebimento",
    402: "Rejeicao: XML da area de dados com codificacao diferente de UTF-8",
    472: "Rejeicao: CPF consultado difere do CPF do Certificado Digital",
    489: "Rejeicao: CNPJ informado invalido (DV ou zeros)",
    490: "Rejeicao: CPF informado invalido (DV ou zeros)",
    589: "Rejeicao: Numero do NSU informado superior ao maior NSU da base de dados do Ambiente Nacional",
    593: "Rejeicao: CNPJ-Base consultado difere do CNPJ-Base do Certificado Digital",
    632: "Rejeicao: Solicitacao fora de prazo, a NF-e nao esta mais disponivel para download",
    640: "Rejeicao: CNPJ/CPF do interessado nao possui permissao para consultar esta NF-e",
    641: "Rejeicao: NF-e indisponivel para o emitente",
    653: "Rejeicao: NF-e cancelada, arquivo indisponivel para download",
}


@dataclass
class Answer:
    cstat: int
    motivo: str = ""
    ult_nsu: int = 0
    max_nsu: int = 0
    docs: list[Entry] = field(default_factory=list)


# Another system sharing the CNPJ polls on its own clock: it queries this long after the AN
# allows it again (the end of the hour after an empty queue, or of a block), before the app's
# own margin ends (40 s): the race the app loses in the field (issue 22).
OTHER_CONSUMER_DELAY = timedelta(seconds=5)
OTHER_SYSTEM = Caller(cnpj=None, cpf=None, common_name="OUTRO SISTEMA", competitor=True)


class DistributionService:
    """Answers ``distDFeInt`` requests for one product (NF-e or CT-e)."""

    def __init__(self, ctx: Context, flavor: Flavor) -> None:
        self.ctx = ctx
        self.flavor = flavor
        names = ("distNSU", "consNSU", "consChNFe", "consChCTe")
        self._operations = {f"{{{flavor.ns}}}{name}": name for name in names}
        # CNPJ -> when another system wants to read its queue (``other_consumer``), oldest first
        self._others: dict[str, list[datetime]] = {}

    # --- another system using the same CNPJ --------------------------------------------------
    def other_consumer(self, cnpj: str, at: datetime) -> None:
        """Another system reads ``cnpj``'s queue the first moment the AN allows it from ``at``
        on, by distNSU from the CNPJ's shared ultNSU up to maxNSU: the NSUs it takes are not
        delivered again by distNSU (consNSU still serves them). Played when the CNPJ's next
        request arrives, at the instant it happened, so the AN's state is as it was then."""
        with self.ctx.state.lock:
            self._others.setdefault(cnpj, []).append(at)
            self._others[cnpj].sort()

    def pending_other_consumers(self, cnpj: str) -> int:
        with self.ctx.state.lock:
            return len(self._others.get(cnpj, ()))

    def _play_others(self, queried: str, now: datetime) -> None:
        """The other system's queries of ``queried`` that happened before ``now``, in order."""
        pending = self._others.get(queried)
        while pending:
            guard = self.ctx.guard(self.flavor.product, queried)
            at = pending[0]
            if guard.idle_since is not None:
                at = max(at, guard.idle_since + rules.HOUR + OTHER_CONSUMER_DELAY)
            if guard.blocked_until is not None:
                at = max(at, guard.blocked_until + OTHER_CONSUMER_DELAY)
            if at >= now:
                return  # the app's request comes first; the AN decides again at the next one
            pending.pop(0)
            self._take(queried, guard, at)

    def _take(self, queried: str, guard: DistGuard, at: datetime) -> None:
        """The other system's chain of distNSU at ``at``, until the queue held then was empty."""
        ledger = self.ctx.state.ledger(self.flavor.product, queried)
        req = SandboxRequest("POST", "/", {}, {}, b"", replace(OTHER_SYSTEM, cnpj=queried))
        max_nsu = ledger.max_nsu_at(at)
        for _ in range(max_nsu // LOT_SIZE + 2):
            ult = guard.last_ult_nsu or 0
            answer = self._dist_nsu(req, guard, queried, ult, max_nsu, at, until=at)
            self.ctx.referee.record(
                at=at,
                service=self.flavor.service,
                operation="distNSU",
                caller=req.caller,
                queried=queried,
                summary={"asked": ult, "ultNSU": answer.ult_nsu, "maxNSU": answer.max_nsu,
                         "nsus": [d.nsu for d in answer.docs]},
                cstat=answer.cstat,
            )  # fmt: skip
            if answer.cstat != 138 or answer.ult_nsu >= max_nsu:
                return

    # --- entry point -------------------------------------------------------------------------
    def handle(self, req: SandboxRequest) -> SandboxResponse:
        ctx, fl = self.ctx, self.flavor
        with ctx.state.lock:
            now = ctx.clock.now()
            soap_ns = SOAP12
            operation, queried, summary = "?", "", dict[str, object]()
            try:
                soap_ns, body = parse_envelope(req.body)
            except BadEnvelope as exc:
                code = 402 if "UTF-8" in str(exc) or "UTF-16" in str(exc) else 243
                answer = Answer(code)
            else:
                operation, queried, summary, answer = self._process(body, req, now)
            if not answer.motivo:
                answer.motivo = MOTIVOS.get(answer.cstat, rules.MOTIVO_656 if answer.cstat == CONSUMO_INDEVIDO else "")
            summary["ultNSU"] = answer.ult_nsu
            summary["maxNSU"] = answer.max_nsu
            summary["nsus"] = [d.nsu for d in answer.docs]
            ctx.referee.record(
                at=now,
                service=fl.service,
                operation=operation,
                caller=req.caller,
                queried=queried,
                summary=summary,
                cstat=answer.cstat,
            )
            payload = self._render(answer, now, queried, req)
        return soap_text_response(soap_ns, payload)

    # --- processing --------------------------------------------------------------------------
    def _process(
        self, body: etree._Element, req: SandboxRequest, now: datetime
    ) -> tuple[str, str, dict[str, object], Answer]:
        ctx, fl = self.ctx, self.flavor
        dist = find_first(body, fl.ns, "distDFeInt")
        if dist is None:
            return "?", "", {}, Answer(215, "Rejeicao: Falha no schema XML (distDFeInt ausente)")
        operations = self._operations
        operation = next((operations[c.tag] for c in dist if c.tag in operations), "?")
        queried = (dist.findtext(f"{{{fl.ns}}}CNPJ") or dist.findtext(f"{{{fl.ns}}}CPF") or "").strip()
        cstat = ctx.outages.active(fl.service, now)
        if cstat is not None:
            return operation, queried, {}, Answer(cstat)
        # Valid requests are judged in place; a standalone copy only words the error (line numbers).
        problems = xsd.errors(dist, fl.request_schema) and xsd.errors(
            etree.fromstring(etree.tostring(dist)), fl.request_schema
        )
        if problems:
            return (
                operation,
                queried,
                {"xsd": problems[0]},
                Answer(215, f"Rejeicao: Falha no schema XML: {problems[0]}"[:255]),
            )
        if dist.findtext(f"{{{fl.ns}}}tpAmb") != str(ctx.tp_amb):
            return operation, queried, {}, Answer(252)
        identity = self._check_identity(dist, req)
        if identity is not None:
            return operation, queried, {}, Answer(identity)
        self._play_others(queried, now)
        guard = ctx.guard(fl.product, queried)
        ledger = ctx.state.ledger(fl.product, queried)
        max_nsu = ledger.max_nsu
        if operation == "distNSU":
            ult = int(dist.findtext(f"{{{fl.ns}}}distNSU/{{{fl.ns}}}ultNSU") or "0")
            return operation, queried, {"asked": ult}, self._dist_nsu(req, guard, queried, ult, max_nsu, now)
        nsu = int(dist.findtext(f"{{{fl.ns}}}consNSU/{{{fl.ns}}}NSU") or "0")
        key = (dist.findtext(f"{{{fl.ns}}}consChNFe/{{{fl.ns}}}chNFe") or "").strip()
        by_nsu = operation == "consNSU"
        asked: dict[str, object] = {"asked": nsu} if by_nsu else {"chave": key}
        rule = rules.point_query_violation(guard, now)  # one slot rule for both point queries
        if rule is not None:
            detail = f"consNSU NSU={nsu}" if by_nsu else f"consChNFe {key}"
            return operation, queried, asked, self._violate(guard, req, now, rule, queried, detail)
        if by_nsu:
            return operation, queried, asked, self._cons_nsu(req, guard, queried, nsu, max_nsu, now)
        return operation, queried, asked, self._cons_key(req, guard, queried, key, max_nsu, now)

    def _check_identity(self, dist: etree._Element, req: SandboxRequest) -> int | None:
        ns = self.flavor.ns
        cnpj_text, cpf_text = dist.findtext(f"{{{ns}}}CNPJ"), dist.findtext(f"{{{ns}}}CPF")
        if cnpj_text is not None:
            base = _cnpj_base(cnpj_text)
            if base is None:
                return 489
            return None if req.caller.cnpj and req.caller.cnpj[:8] == base else 593
        try:
            Cpf.parse(cpf_text or "")
        except InvalidIdentifier:
            return 490
        return None if req.caller.cpf == cpf_text else 472

    def _violate(
        self, guard: DistGuard, req: SandboxRequest, now: datetime, rule: str, queried: str, detail: str
    ) -> Answer:
        """Record the broken rule, (re)start the block and answer 656 with the last ultNSU (v1.14)."""
        caller = req.caller
        provoked = not caller.competitor and guard.competitor_touched
        if provoked:
            # The shared sequence/hour was moved by another system using this CNPJ: not the app's
            # fault. This 656 is how the app learns of it (issue 22): the referee counts it apart.
            detail += " (provocado por outro sistema que usa o mesmo CNPJ)"
        guard.competitor_touched = req.caller.competitor
        self.ctx.referee.violation(
            at=now, rule=rule, service=self.flavor.service, caller=caller, cnpj=queried, detail=detail,
            provoked=provoked,
        )  # fmt: skip
        rules.block(guard, now)
        ledger = self.ctx.state.ledger(self.flavor.product, queried)
        return Answer(CONSUMO_INDEVIDO, rules.motivo_656(rule), guard.last_ult_nsu or 0, ledger.max_nsu)

    def _dist_nsu(
        self,
        req: SandboxRequest,
        guard: DistGuard,
        queried: str,
        ult: int,
        max_nsu: int,
        now: datetime,
        *,
        until: datetime | None = None,
    ) -> Answer:
        rule = rules.dist_nsu_violation(guard, ult, now)
        if rule is not None and rule != rules.OUT_OF_SEQUENCE:
            return self._violate(guard, req, now, rule, queried, f"distNSU ultNSU={ult}")
        if ult > max_nsu:
            return Answer(NSU_ABOVE_MAX, ult_nsu=guard.last_ult_nsu or 0, max_nsu=max_nsu)
        if rule == rules.OUT_OF_SEQUENCE:
            return self._violate(guard, req, now, rule, queried, f"distNSU ultNSU={ult}, esperado {guard.last_ult_nsu}")
        ledger = self.ctx.state.ledger(self.flavor.product, queried)
        docs = ledger.after(ult, now, LOT_SIZE, until=until)
        if len(docs) == LOT_SIZE:
            new_ult = docs[-1].nsu
        else:
            new_ult = max(max_nsu, ult)
        rules.after_dist_answer(guard, ult, new_ult, max_nsu, now)
        guard.competitor_touched = req.caller.competitor
        if not docs:
            return Answer(NO_DOCUMENTS, ult_nsu=new_ult, max_nsu=max_nsu)
        self._delivered(queried, docs, now, "distNSU", req)
        return Answer(DOCUMENTS_FOUND, ult_nsu=new_ult, max_nsu=max_nsu, docs=docs)

    def _cons_nsu(
        self, req: SandboxRequest, guard: DistGuard, queried: str, nsu: int, max_nsu: int, now: datetime
    ) -> Answer:
        if nsu > max_nsu:
            return Answer(NSU_ABOVE_MAX, ult_nsu=nsu, max_nsu=max_nsu)
        entry = self.ctx.state.ledger(self.flavor.product, queried).at(nsu, now)
        if entry is None:
            return Answer(NO_DOCUMENTS, ult_nsu=nsu, max_nsu=max_nsu)
        guard.point_hits.append(now)
        self._delivered(queried, [entry], now, "consNSU", req)
        return Answer(DOCUMENTS_FOUND, ult_nsu=nsu, max_nsu=max_nsu, docs=[entry])

    def _cons_key(
        self, req: SandboxRequest, guard: DistGuard, queried: str, key: str, max_nsu: int, now: datetime
    ) -> Answer:
        last = guard.last_ult_nsu or 0
        try:
            AccessKey.parse(key)
        except InvalidIdentifier:
            return Answer(236, ult_nsu=last, max_nsu=max_nsu)
        record = self.ctx.state.nfe.get(key)
        if record is None:
            return Answer(KEY_NOT_FOUND, ult_nsu=last, max_nsu=max_nsu)
        if now - record.published_at > RETENTION:
            return Answer(632, ult_nsu=last, max_nsu=max_nsu)
        if queried == record.emitter and queried not in (record.recipient, record.transporter, *record.aut_xml):
            return Answer(641, ult_nsu=last, max_nsu=max_nsu)
        if queried == record.recipient:
            kind = "procNFe" if record.released_to_recipient else "resNFe"
        elif queried == record.transporter or queried in record.aut_xml:
            kind = "procNFe"
        else:
            return Answer(640, ult_nsu=last, max_nsu=max_nsu)
        if record.cancelled and kind == "procNFe":
            return Answer(653, ult_nsu=last, max_nsu=max_nsu)
        ledger = self.ctx.state.ledger(self.flavor.product, queried)
        entry = next((e for e in reversed(ledger.entries) if e.key == key and e.kind == kind), None)
        if entry is None:  # released but not yet queued (should not happen): build from the record
            payload = record.generated.proc_payload if kind == "procNFe" else record.generated.res_payload
            entry = Entry(nsu=0, product="nfe", kind=kind, payload=payload, key=key, published_at=record.published_at)
        guard.point_hits.append(now)
        if entry.nsu:
            self._delivered(queried, [entry], now, "consChNFe", req)
        return Answer(DOCUMENTS_FOUND, ult_nsu=last, max_nsu=max_nsu, docs=[entry])

    def _delivered(self, doc: str, entries: list[Entry], now: datetime, via: str, req: SandboxRequest) -> None:
        for entry in entries:
            self.ctx.referee.delivered(self.flavor.product, doc, entry.nsu, now, via, req.caller)

    # --- rendering ---------------------------------------------------------------------------
    def _render(self, answer: Answer, now: datetime, queried: str, req: SandboxRequest) -> str:
        """The operation's response element, written as lxml would serialise it (no tree: cheaper)."""
        fl = self.flavor
        dh = brasilia_iso(now) if fl.dh_resp_with_tz else now.astimezone(BRASILIA).strftime("%Y-%m-%dT%H:%M:%S")
        parts = [
            f'<{fl.response_tag} xmlns="{fl.wsdl_ns}"><{fl.result_tag}>'
            f'<retDistDFeInt xmlns="{fl.ns}" versao="{fl.versao}"><tpAmb>{self.ctx.tp_amb}</tpAmb>'
            f"<verAplic>{VER_APLIC_DIST}</verAplic><cStat>{answer.cstat}</cStat>"
            f"<xMotivo>{text(answer.motivo)}</xMotivo><dhResp>{dh}</dhResp>"
            f"<ultNSU>{answer.ult_nsu:015d}</ultNSU><maxNSU>{answer.max_nsu:015d}</maxNSU>"
        ]
        if answer.docs:
            items = [(e.nsu, e.schema_label or xsd.DOCZIP_SCHEMA[e.kind], e.payload.doczip()) for e in answer.docs]
            fault = self.ctx.faults.take(fl.service, queried, CONTENT_FAULTS, now)
            if fault is not None:
                items = apply_content_fault(fault.kind, items)
            parts.append("<loteDistDFeInt>")
            parts.extend(
                f'<docZip NSU="{nsu:015d}" schema={attribute(label)}>{text(payload)}</docZip>'
                for nsu, label, payload in items
            )
            parts.append("</loteDistDFeInt>")
        parts.append(f"</retDistDFeInt></{fl.result_tag}></{fl.response_tag}>")
        return "".join(parts)


@lru_cache(maxsize=4096)
def _cnpj_base(text: str) -> str | None:
    """The CNPJ base of a valid CNPJ text, None when invalid (DV or zeros): 489."""
    try:
        return Cnpj.parse(text).base
    except InvalidIdentifier:
        return None
