"""NFS-e Nacional: ADN contributor API (distribution) and Sefin Nacional (NFS-e by key, events).

JSON shapes follow the official OpenAPI files (shared/fixtures/specs): the ADN uses PascalCase
(``LoteDistribuicaoNSUResponse``), the Sefin camelCase. An empty ADN queue is HTTP 404 with
``NENHUM_DOCUMENTO_LOCALIZADO``/E2220 (observed in produção restrita); HTTP 429 with Retry-After
is the rate limit (not in the swagger; modelled: a new query < 1 h after an empty answer, or more
than ``rate_per_minute`` calls in a minute).
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime
from typing import Any
from urllib.parse import unquote

from lxml import etree

from app.core.clock import brasilia_iso
from app.fiscal.xmldsig import SignatureInvalid, verify_enveloped
from app.safexml import XmlRejected, parse_xml
from app.sandbox import rules, xsd
from app.sandbox.context import Context
from app.sandbox.faults import ADN_FAULTS, CONTENT_FAULTS, apply_content_fault
from app.sandbox.soap import gzip_b64
from app.sandbox.state import Entry
from app.sandbox.wire import SandboxRequest, SandboxResponse, caller_from_pem

NFSE_NS = "http://www.sped.fazenda.gov.br/nfse"
VERSION = "SBX-ADN-1.0.0"
LOT_SIZE = 50
TIPO_EVENTO = {
    "101101": "CANCELAMENTO",
    "105102": "CANCELAMENTO_POR_SUBSTITUICAO",
    "101103": "SOLICITACAO_CANCELAMENTO_ANALISE_FISCAL",
    "105104": "CANCELAMENTO_DEFERIDO_ANALISE_FISCAL",
    "105105": "CANCELAMENTO_INDEFERIDO_ANALISE_FISCAL",
    "202201": "CONFIRMACAO_PRESTADOR",
    "203202": "CONFIRMACAO_TOMADOR",
    "204203": "CONFIRMACAO_INTERMEDIARIO",
    "205204": "CONFIRMACAO_TACITA",
    "202205": "REJEICAO_PRESTADOR",
    "203206": "REJEICAO_TOMADOR",
    "204207": "REJEICAO_INTERMEDIARIO",
    "205208": "ANULACAO_REJEICAO",
    "305101": "CANCELAMENTO_POR_OFICIO",
    "305102": "BLOQUEIO_POR_OFICIO",
    "305103": "DESBLOQUEIO_POR_OFICIO",
}
TAKER_EVENTS = ("203202", "203206")
# The real ADN and Sefin are ASP.NET Core, whose routes ignore case: published clients ask
# ``/contribuintes/dfe/0`` as well as ``/contribuintes/DFe/0`` (issue 22), and both are served.
_DFE_PATH = re.compile(r"^/contribuintes/DFe/([^/]+)$", re.IGNORECASE)
_EVENTS_PATH = re.compile(r"^/contribuintes/NFSe/([^/]+)/Eventos$", re.IGNORECASE)
_SEFIN_NFSE = re.compile(r"^/SefinNacional/nfse/([^/]+)$", re.IGNORECASE)
_SEFIN_EVENTS = re.compile(r"^/SefinNacional/nfse/([^/]+)/eventos$", re.IGNORECASE)


@dataclass
class AdnGuard:
    empty_at: datetime | None = None
    calls: list[datetime] = field(default_factory=list)


def _json(status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> SandboxResponse:
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return SandboxResponse(status, {"Content-Type": "application/json; charset=utf-8", **(headers or {})}, body)


class NfseServices:
    """ADN ``/contribuintes`` and Sefin ``/SefinNacional`` handlers."""

    def __init__(self, ctx: Context, *, rate_per_minute: int = 60, empty_wait: timedelta = rules.HOUR) -> None:
        self.ctx = ctx
        self.rate_per_minute = rate_per_minute
        self.empty_wait = empty_wait
        self._guards: dict[str, AdnGuard] = {}
        self._rejections: dict[tuple[str, str], list[datetime]] = {}  # (caller, pedido Id) -> when

    # --- routing -----------------------------------------------------------------------------
    def handle_adn(self, req: SandboxRequest) -> SandboxResponse:
        with self.ctx.state.lock:
            now = self.ctx.clock.now()
            path = unquote(req.path)
            match = _DFE_PATH.match(path)
            if match and req.method == "GET":
                response, summary = self._dfe(req, match.group(1), now)
            elif (match := _EVENTS_PATH.match(path)) and req.method == "GET":
                response, summary = self._events(req, match.group(1), now)
            else:
                response, summary = _json(404, {"Erros": [{"Codigo": "404", "Descricao": "Recurso inexistente"}]}), {}
            status = json.loads(response.body or b"{}").get("StatusProcessamento") if response.body else None
            self.ctx.referee.record(
                at=now,
                service="adn",
                operation=f"{req.method} {path}",
                caller=req.caller,
                queried=str(summary.get("cnpj", req.caller.doc)),
                summary={**summary, "status": status},
                http_status=response.status,
            )
            return response

    def handle_sefin(self, req: SandboxRequest) -> SandboxResponse:
        with self.ctx.state.lock:
            now = self.ctx.clock.now()
            path = unquote(req.path)
            if (match := _SEFIN_EVENTS.match(path)) and req.method == "POST":
                response = self._post_event(req, match.group(1), now)
            elif (match := _SEFIN_NFSE.match(path)) and req.method == "GET":
                response = self._get_nfse(req, match.group(1), now)
            else:
                response = self._erro(404, "E404", "Recurso inexistente", now)
            self.ctx.referee.record(
                at=now,
                service="sefin",
                operation=f"{req.method} {path}",
                caller=req.caller,
                queried=req.caller.doc,
                http_status=response.status,
            )
            return response

    # --- ADN ---------------------------------------------------------------------------------
    def _envelope(
        self,
        status: str,
        now: datetime,
        lote: list[dict[str, Any]] | None = None,
        erros: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return {
            "StatusProcessamento": status,
            "LoteDFe": lote or [],
            "Alertas": [],
            "Erros": erros or [],
            "TipoAmbiente": "PRODUCAO" if self.ctx.tp_amb == 1 else "HOMOLOGACAO",
            "VersaoAplicativo": VERSION,
            "DataHoraProcessamento": brasilia_iso(now),
        }

    @staticmethod
    def _message(code: str, text: str) -> dict[str, Any]:
        return {"Mensagem": None, "Parametros": [], "Codigo": code, "Descricao": text, "Complemento": None}

    def _reject(self, now: datetime, code: str, text: str, status: int = 400) -> SandboxResponse:
        return _json(status, self._envelope("REJEICAO", now, erros=[self._message(code, text)]))

    def _too_soon(self, guard: AdnGuard, now: datetime) -> tuple[str, str, int] | None:
        """The rate rule this call breaks, what it did and the seconds to wait; None when it may go."""
        if len(guard.calls) > self.rate_per_minute:
            retry = 60 - int((now - guard.calls[0]).total_seconds())
            return rules.ADN_RATE, f"{len(guard.calls)} consultas no último minuto", max(1, retry)
        if guard.empty_at is not None and now < guard.empty_at + self.empty_wait:
            retry = int((guard.empty_at + self.empty_wait - now).total_seconds()) + 1
            return (
                rules.ADN_PREMATURE,
                f"consulta {int((now - guard.empty_at).total_seconds())} s após fila vazia",
                retry,
            )
        return None

    def _dfe(self, req: SandboxRequest, nsu_text: str, now: datetime) -> tuple[SandboxResponse, dict[str, Any]]:
        caller = req.caller
        target = (req.query.get("cnpjConsulta") or caller.doc).strip()
        summary: dict[str, Any] = {"cnpj": target, "nsu": nsu_text}
        if not nsu_text.isdigit():
            return self._reject(now, "E2201", "NSU informado inválido."), summary
        if self.ctx.outages.active("adn", now) is not None:
            return SandboxResponse(503, {"Content-Type": "text/plain"}, b"Service Unavailable"), summary
        if not caller.doc:
            return self._reject(now, "E2202", "Certificado sem CNPJ/CPF do contribuinte.", 403), summary
        if target != caller.doc and (not caller.cnpj or len(target) != 14 or target[:8] != caller.cnpj[:8]):
            return self._reject(
                now, "E2210", "O CNPJ consultado não pertence à raiz do CNPJ do certificado digital."
            ), summary
        answer = self._fault_answer(target, now)
        if answer is not None:
            return answer, {**summary, "fault": True}
        guard = self._guards.setdefault(target, AdnGuard())
        guard.calls = [t for t in guard.calls if now - t < timedelta(minutes=1)]
        guard.calls.append(now)
        too_soon = self._too_soon(guard, now)
        if too_soon is not None:
            rule, detail, retry = too_soon
            self.ctx.referee.violation(at=now, rule=rule, service="adn", caller=caller, cnpj=target, detail=detail)
            return _json(429, {"message": "Too Many Requests"}, {"Retry-After": str(retry)}), summary
        nsu = int(nsu_text)
        ledger = self.ctx.state.ledger("nfse", target)
        if req.query.get("lote", "true").lower() == "false":
            found = ledger.at(nsu, now)
            entries = [found] if found else []
        else:
            entries = ledger.after(nsu, now, LOT_SIZE)
        if not entries:
            guard.empty_at = now
            return _json(
                404,
                self._envelope(
                    "NENHUM_DOCUMENTO_LOCALIZADO", now, erros=[self._message("E2220", "Nenhum documento localizado.")]
                ),
            ), summary
        guard.empty_at = None
        for entry in entries:
            self.ctx.referee.delivered("nfse", target, entry.nsu, now, "adn_dfe", caller)
        summary["nsus"] = [e.nsu for e in entries]
        return _json(200, self._envelope("DOCUMENTOS_LOCALIZADOS", now, self._lote(entries, target, now))), summary

    def _fault_answer(self, target: str, now: datetime) -> SandboxResponse | None:
        """An ADN answer injected by a test (``app.sandbox.faults.ADN_FAULTS``), if one is pending."""
        fault = self.ctx.faults.take("adn", target, ADN_FAULTS, now)
        if fault is None:
            return None
        too_many = {"message": "Too Many Requests"}
        if fault.kind == "http_429":
            return _json(429, too_many, {"Retry-After": str(max(1, int(fault.stall_seconds)))})
        if fault.kind == "http_429_date":
            when = now + timedelta(seconds=max(1, int(fault.stall_seconds)))
            return _json(429, too_many, {"Retry-After": format_datetime(when, usegmt=True)})
        if fault.kind == "http_429_bare":
            return _json(429, too_many)
        if fault.kind == "http_403":
            return self._reject(now, "E0403", "Certificado digital não autorizado para esta consulta.", 403)
        return self._reject(now, "E2230", "Parâmetros da consulta inválidos para o contribuinte.")

    def _lote(self, entries: list[Entry], doc: str, now: datetime) -> list[dict[str, Any]]:
        items = [(e.nsu, e.kind, e.payload.doczip()) for e in entries]
        fault = self.ctx.faults.take("adn", doc, CONTENT_FAULTS, now)
        if fault is not None:
            items = apply_content_fault(fault.kind, items)
        by_nsu = {e.nsu: e for e in entries}
        lote = []
        for nsu, kind, payload in items:
            entry = by_nsu[nsu]
            lote.append(
                {
                    "NSU": nsu,
                    "ChaveAcesso": entry.key,
                    "TipoDocumento": "EVENTO" if kind == "EVENTO" else ("NFSE" if kind == "NFSE" else kind),
                    "TipoEvento": TIPO_EVENTO.get(entry.tp_evento or "") if entry.kind == "EVENTO" else None,
                    "ArquivoXml": payload,
                    "DataHoraGeracao": brasilia_iso(entry.published_at),
                }
            )
        return lote

    def _events(self, req: SandboxRequest, key: str, now: datetime) -> tuple[SandboxResponse, dict[str, Any]]:
        caller = req.caller
        record = self.ctx.state.nfse.get(key)
        entries: list[Entry] = []
        if record is not None:
            mine = [d for d in record.parties.values() if d == caller.doc or (caller.cnpj and d[:8] == caller.cnpj[:8])]
            for doc in dict.fromkeys(mine):
                entries = [e for e in self.ctx.state.ledger("nfse", doc).entries if e.key == key and e.kind == "EVENTO"]
                if entries:
                    break
        if not entries:
            return _json(
                404,
                self._envelope(
                    "NENHUM_DOCUMENTO_LOCALIZADO", now, erros=[self._message("E2220", "Nenhum documento localizado.")]
                ),
            ), {"chave": key}
        return _json(200, self._envelope("DOCUMENTOS_LOCALIZADOS", now, self._lote(entries, caller.doc, now))), {
            "chave": key,
            "nsus": [e.nsu for e in entries],
        }

    # --- Sefin -------------------------------------------------------------------------------
    def _erro(self, status: int, code: str, text: str, now: datetime, complemento: str = "") -> SandboxResponse:
        return _json(
            status,
            {
                "tipoAmbiente": self.ctx.tp_amb,
                "versaoAplicativo": VERSION,
                "dataHoraProcessamento": brasilia_iso(now),
                "erro": {"mensagem": text, "codigo": code, "descricao": text, "complemento": complemento},
            },
        )

    def _is_party(self, req: SandboxRequest, docs: list[str]) -> bool:
        caller = req.caller
        return any(
            d == caller.doc or (caller.cnpj is not None and len(d) == 14 and d[:8] == caller.cnpj[:8]) for d in docs
        )

    def _get_nfse(self, req: SandboxRequest, key: str, now: datetime) -> SandboxResponse:
        if not (len(key) == 50 and key.isdigit()):
            return self._erro(400, "E0400", "A chave de acesso deve conter 50 números.", now)
        if self.ctx.outages.active("sefin", now) is not None:
            return SandboxResponse(503, {"Content-Type": "text/plain"}, b"Service Unavailable")
        record = self.ctx.state.nfse.get(key)
        if record is None:
            return self._erro(404, "E0404", "NFS-e não encontrada.", now)
        if not self._is_party(req, list(record.parties.values())):
            return self._erro(403, "E0403", "A consulta desta NFS-e não é permitida para este usuário.", now)
        return _json(
            200,
            {
                "tipoAmbiente": self.ctx.tp_amb,
                "versaoAplicativo": VERSION,
                "dataHoraProcessamento": brasilia_iso(now),
                "chaveAcesso": key,
                "nfseXmlGZipB64": gzip_b64(record.generated.nfse),
            },
        )

    def _post_event(self, req: SandboxRequest, key: str, now: datetime) -> SandboxResponse:
        if self.ctx.outages.active("sefin", now) is not None:
            return SandboxResponse(503, {"Content-Type": "text/plain"}, b"Service Unavailable")
        try:
            payload = json.loads(req.body or b"{}")
            raw = gzip.decompress(base64.b64decode(payload["pedidoRegistroEventoXmlGZipB64"], validate=True))
            root = parse_xml(raw)
        except (ValueError, KeyError, TypeError, binascii.Error, OSError, EOFError, XmlRejected) as exc:
            return self._erro(
                400, "E0001", "Pedido de registro de evento ilegível (JSON, base64, gzip ou XML).", now, str(exc)[:200]
            )
        inf_id = root.find(f"{{{NFSE_NS}}}infPedReg")
        ident = (inf_id.get("Id") or "") if inf_id is not None else ""
        response = self._register(req, key, now, raw, root)
        if response.status >= 400 and ident:
            self._repeated_rejection(req, ident, response, now)
        return response

    def _repeated_rejection(self, req: SandboxRequest, ident: str, response: SandboxResponse, now: datetime) -> None:
        """NT 2018.002, as the NF-e events service judges it: the same pedido rejected again within
        the hour of a rejection is a violation (the client should not have sent it)."""
        repeat_key = (req.caller.doc, ident)
        recent = [t for t in self._rejections.get(repeat_key, []) if now - t < rules.HOUR]
        if recent:
            code = json.loads(response.body or b"{}").get("erro", {}).get("codigo", response.status)
            self.ctx.referee.violation(
                at=now,
                rule=rules.REPEATED_REJECTED_EVENT,
                service="sefin",
                caller=req.caller,
                cnpj=req.caller.doc,
                detail=f"pedido {ident} rejeitado de novo ({code}); {len(recent)} rejeição(ões) na última hora",
            )
        self._rejections[repeat_key] = [*recent, now]

    def _register(
        self, req: SandboxRequest, key: str, now: datetime, raw: bytes, root: etree._Element
    ) -> SandboxResponse:
        problems = xsd.errors(root, "pedRegEvento_v1.01")
        if problems:
            return self._erro(400, "E0002", "Pedido de registro de evento fora do schema XSD.", now, problems[0][:250])
        try:
            verified = verify_enveloped(raw, ca_pem=self.ctx.pki.ca_cert_pem, at=now)
        except SignatureInvalid as exc:
            return self._erro(
                400, "E0714", "Assinatura digital do pedido de registro de evento inválida.", now, str(exc)[:250]
            )
        n = f"{{{NFSE_NS}}}"
        inf = root.find(n + "infPedReg")
        assert inf is not None  # schema-checked
        author = (inf.findtext(n + "CNPJAutor") or inf.findtext(n + "CPFAutor") or "").strip()
        group = next(
            (c for c in inf if etree.QName(c).localname.startswith("e") and etree.QName(c).localname[1:].isdigit()),
            None,
        )
        code = etree.QName(group).localname[1:] if group is not None else ""
        if (inf.findtext(n + "chNFSe") or "").strip() != key:
            return self._erro(400, "E1235", "Chave de acesso do pedido difere da chave informada na URL.", now)
        if not (inf.get("Id") or "").startswith(f"PRE{key}{code}"):
            return self._erro(400, "E1236", "Identificador do pedido de registro de evento inválido.", now)
        if (inf.findtext(n + "tpAmb") or "") != str(self.ctx.tp_amb):
            return self._erro(400, "E0003", "Ambiente do pedido difere do ambiente de recebimento.", now)
        signer = caller_from_pem(verified.cert_pem)
        if (signer.doc[:8] if len(author) == 14 else signer.doc) != (author[:8] if len(author) == 14 else author):
            return self._erro(400, "E0715", "O autor do evento difere do titular do certificado da assinatura.", now)
        if not self._is_party(req, [author]):
            return self._erro(401, "E0401", "O certificado de transmissão não pertence ao autor do evento.", now)
        record = self.ctx.state.nfse.get(key)
        if record is None:
            return self._erro(400, "E0404", "NFS-e inexistente para a chave informada.", now)
        if code not in TAKER_EVENTS:
            return self._erro(400, "E1830", f"Evento {code} não aceito por este serviço de teste.", now)
        taker = next((doc for role, doc in record.parties.items() if role.lower().startswith("toma")), None)
        if author != taker:
            return self._erro(400, "E1831", "O autor do evento não é o tomador da NFS-e.", now)
        if any(c in TAKER_EVENTS for c in record.events):
            return self._erro(400, "E1833", "Já existe uma manifestação (confirmação ou rejeição) do tomador.", now)
        event = self.ctx.publisher.nfse_event(key, code, self.ctx.publisher.party(author), at=now, ped_reg_evento=raw)
        return _json(
            201,
            {
                "tipoAmbiente": self.ctx.tp_amb,
                "versaoAplicativo": VERSION,
                "dataHoraProcessamento": brasilia_iso(now),
                "eventoXmlGZipB64": gzip_b64(event.evento),
            },
        )
