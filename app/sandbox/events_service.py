"""NFeRecepcaoEvento4 at the Ambiente Nacional: recipient manifestation (210200/210210/210220/210240).

Answers like the real AN (recorded exchanges in shared/fixtures/recorded): result element
``nfeRecepcaoEventoNFResult``, lot cStat 128 with one ``retEvento`` per event. Rules: protocol.md
§3.2–3.7 (NT 2020.001 v1.50/1.60) and NT 2018.002 (the same event rejected again within the hour).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from lxml import etree

from app.core import event_types as ev
from app.core.clock import brasilia_iso
from app.core.cstat import EVENT_REGISTERED
from app.fiscal.xmldsig import SignatureCertificateInvalid, SignatureInvalid, extract_signed_element
from app.sandbox import rules, xsd
from app.sandbox.context import VER_APLIC_AN, Context
from app.sandbox.soap import NFE_NS, SOAP12, BadEnvelope, find_first, parse_envelope, soap_response, sub
from app.sandbox.state import NfeRecord
from app.sandbox.verify import EventSignatureVerifier
from app.sandbox.wire import Caller, SandboxRequest, SandboxResponse, caller_from_pem

WSDL_NS = "http://www.portalfiscal.inf.br/nfe/wsdl/NFeRecepcaoEvento4"
SERVICE = "nfe_evento"
MANIFESTATIONS = {
    "210200": "Confirmacao da Operacao",
    "210210": "Ciencia da Operacao",
    "210220": "Desconhecimento da Operacao",
    "210240": "Operacao nao Realizada",
}
CONCLUSIVE = (ev.CONFIRMACAO, ev.DESCONHECIMENTO, ev.NAO_REALIZADA)
CIENCIA_DEADLINE = timedelta(days=10)
CONCLUSIVE_DEADLINE = timedelta(days=90)
MAX_REPEATED_REJECTIONS = 20
N = f"{{{NFE_NS}}}"

MOTIVOS = {
    108: "Servico Paralisado Momentaneamente (curto prazo)",
    109: "Servico Paralisado sem Previsao",
    128: "Lote de evento processado",
    135: "Evento registrado e vinculado a NF-e",
    213: "Rejeicao: CNPJ-Base do Autor difere do CNPJ-Base do Certificado Digital",
    215: "Rejeicao: Falha no schema XML",
    243: "Rejeicao: XML Mal Formado",
    250: "Rejeicao: UF diverge da UF autorizadora",
    252: "Rejeicao: Ambiente informado diverge do Ambiente de recebimento",
    291: "Rejeicao: Certificado Assinatura Data Validade",
    293: "Rejeicao: Certificado Assinatura erro Cadeia de Certificacao",
    297: "Rejeicao: Assinatura difere do calculado",
    402: "Rejeicao: XML da area de dados com codificacao diferente de UTF-8",
    494: "Rejeicao: Chave de Acesso inexistente",
    572: "Rejeicao: Erro Atributo ID do evento nao corresponde a concatenacao dos campos (ID + tpEvento + "
    "chNFe + nSeqEvento)",
    573: "Rejeicao: Duplicidade de evento",
    575: "Rejeicao: O autor do evento diverge do destinatario da NF-e",
    577: "Rejeicao: A data do evento nao pode ser menor que a data de emissao da NF-e",
    578: "Rejeicao: A data do evento nao pode ser maior que a data do processamento",
    579: "Rejeicao: A data do evento nao pode ser menor que a data de autorizacao para NF-e nao emitida em "
    "contingencia",
    594: "Rejeicao: O numero de sequencia do evento informado e maior que o permitido",
    595: "Rejeicao: Obrigatoria a informacao da justificativa do evento",
    650: 'Rejeicao: Evento de "Ciencia da Operacao" para NF-e Cancelada ou Denegada',
    651: 'Rejeicao: Evento de "Desconhecimento da Operacao" para NF-e Cancelada ou Denegada',
    655: "Rejeicao: Evento de Ciencia da Operacao informado apos a manifestacao final do destinatario",
    656: "Rejeicao: Consumo Indevido (evento rejeitado repetidamente: aguarde 1 hora)",
}


@dataclass
class _Outcome:
    cstat: int
    motivo: str
    ret_evento: etree._Element | None = None  # a ready retEvento (success), else built from the fields


_EVENTO_START = b"<evento"
_EVENTO_END = b"</evento>"


def _signed_evento(body: bytes) -> bytes | None:
    """The only ``<evento>`` of a lot, cut as written, when that is all extraction would do.

    ``extract_signed_element`` re-parses the whole envelope to add inherited namespace
    declarations; an evento that declares its namespace itself and uses no prefixes needs none.
    Anything else (several events, prefixes, comments, CDATA) returns None: the full extraction.
    """
    start = body.find(_EVENTO_START)
    if start < 0 or body.find(_EVENTO_START, start + 1) >= 0:
        return None
    tag_end = body.find(b">", start)
    end = body.find(_EVENTO_END, tag_end)
    if tag_end < 0 or end < 0 or body[start + len(_EVENTO_START)] not in b" \t\r\n>":
        return None
    fragment = body[start : end + len(_EVENTO_END)]
    if b'xmlns="' not in body[start:tag_end] or b"<!" in fragment:
        return None
    if _PREFIXED_TAG.search(fragment) or _PREFIXED_ATTRIBUTE.search(fragment):
        return None
    return fragment


# Two searches, each starting with a literal the regex engine skips to (one alternation of the
# two costs ~35 us an event); the attribute one also flags "a:b=" in text, which only means the
# full extraction.
_PREFIXED_TAG = re.compile(rb"</?[A-Za-z_][\w.\-]*:")
_PREFIXED_ATTRIBUTE = re.compile(rb":[\w.\-]+\s*=")


@lru_cache(maxsize=1024)
def _caller(cert_pem: bytes) -> Caller:
    return caller_from_pem(cert_pem)


def _parse_dh(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo else None


class EventService:
    """Answers ``envEvento`` lots."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._rejections: dict[tuple[str, str], list[datetime]] = {}
        self._signatures = EventSignatureVerifier()

    def handle(self, req: SandboxRequest) -> SandboxResponse:
        ctx = self.ctx
        with ctx.state.lock:
            now = ctx.clock.now()
            soap_ns = SOAP12
            try:
                soap_ns, body = parse_envelope(req.body)
            except BadEnvelope as exc:
                code = 402 if "UTF" in str(exc) else 243
                return self._finish(req, now, soap_ns, "0", code, [], {})
            env = find_first(body, NFE_NS, "envEvento")
            if env is None:
                return self._finish(req, now, soap_ns, "0", 215, [], {})
            id_lote = (env.findtext(N + "idLote") or "0").strip() or "0"
            outage = ctx.outages.active(SERVICE, now)
            if outage is not None:
                return self._finish(req, now, soap_ns, id_lote, outage, [], {})
            eventos = env.findall(N + "evento")
            types = {e.findtext(f"{N}infEvento/{N}tpEvento") for e in eventos}
            schema = "envConfRecebto_v1.00" if types <= set(MANIFESTATIONS) else "envEvento_v1.00"
            # Valid lots are judged in place; a standalone copy only words the error (line numbers).
            problems = xsd.errors(env, schema) and xsd.errors(etree.fromstring(etree.tostring(env)), schema)
            if problems:
                return self._finish(req, now, soap_ns, id_lote, 215, [], {"xsd": problems[0]})
            results: list[etree._Element] = []
            summary: list[dict[str, object]] = []
            single = len(eventos) == 1
            for index, evento in enumerate(eventos):
                raw = _signed_evento(req.body) if single else None
                if raw is None:
                    raw = extract_signed_element(req.body, "evento", index=index)
                outcome = self._one(req, now, evento, raw)
                inf = evento.find(N + "infEvento")
                assert inf is not None  # guaranteed by the schema
                results.append(outcome.ret_evento if outcome.ret_evento is not None else self._ret(inf, outcome, now))
                summary.append({"Id": inf.get("Id"), "cStat": outcome.cstat})
            return self._finish(req, now, soap_ns, id_lote, 128, results, {"eventos": summary})

    # --- one event ---------------------------------------------------------------------------
    def _one(self, req: SandboxRequest, now: datetime, evento: etree._Element, raw: bytes) -> _Outcome:
        inf = evento.find(N + "infEvento")
        assert inf is not None
        event_id = inf.get("Id") or ""
        repeat_key = (req.caller.doc, event_id)
        recent = [t for t in self._rejections.get(repeat_key, []) if now - t < rules.HOUR]
        self._rejections[repeat_key] = recent
        if len(recent) >= MAX_REPEATED_REJECTIONS:
            outcome = _Outcome(656, MOTIVOS[656])
        else:
            outcome = self._check(now, inf, raw)
        if outcome.cstat not in EVENT_REGISTERED:
            if recent:
                self.ctx.referee.violation(
                    at=now,
                    rule=rules.REPEATED_REJECTED_EVENT,
                    service=SERVICE,
                    caller=req.caller,
                    cnpj=inf.findtext(N + "CNPJ") or inf.findtext(N + "CPF") or "",
                    detail=f"evento {event_id} rejeitado de novo (cStat {outcome.cstat}); "
                    f"{len(recent)} rejeição(ões) idêntica(s) na última hora",
                )
            recent.append(now)
        return outcome

    def _check(self, now: datetime, inf: etree._Element, raw: bytes) -> _Outcome:
        ctx = self.ctx

        def text(tag: str) -> str:
            return (inf.findtext(N + tag) or "").strip()

        def reject(code: int, motivo: str | None = None) -> _Outcome:
            return _Outcome(code, motivo or MOTIVOS[code])

        tp, key, seq_text = text("tpEvento"), text("chNFe"), text("nSeqEvento")
        author = text("CNPJ") or text("CPF")
        # signxml's verdict; the usual event is checked without it once its signer is known to
        # chain to the CA (app.sandbox.verify), anything else is left to signxml.
        try:
            verified = self._signatures.verify(raw, ca=ctx.pki.ca_certificate, at=now)
        except SignatureCertificateInvalid as exc:
            return reject(291 if "validade" in str(exc) else 293)
        except SignatureInvalid:
            return reject(297)
        signer = _caller(verified.cert_pem)
        signer_base = (verified.subject_cnpj or signer.cnpj or "")[:8] if len(author) == 14 else signer.cpf
        if signer_base != (author[:8] if len(author) == 14 else author):
            return reject(213)
        seq = int(seq_text)
        if inf.get("Id") != f"ID{tp}{key}{seq:02d}":
            return reject(572)
        if text("cOrgao") != "91":
            return reject(250)
        if text("tpAmb") != str(ctx.tp_amb):
            return reject(252)
        record = ctx.state.nfe.get(key)
        if record is None:
            return reject(494)
        if author != record.recipient:
            return reject(575)
        generated = record.generated
        dh = _parse_dh(text("dhEvento"))
        if dh is None or dh < generated.issued_at.replace(microsecond=0):
            return reject(577)
        if dh > now + timedelta(minutes=5):
            return reject(578)
        if dh < generated.authorised_at.replace(microsecond=0):
            return reject(579)
        if record.cancelled and tp in (ev.CIENCIA, ev.DESCONHECIMENTO):
            return reject(650 if tp == ev.CIENCIA else 651)
        if tp == ev.NAO_REALIZADA and not (inf.findtext(f"{N}detEvento/{N}xJust") or "").strip():
            return reject(595)
        if seq > (1 if tp == ev.CIENCIA else 2):
            return reject(594)
        if (tp, seq) in record.events:
            return reject(573)
        if tp == ev.CIENCIA and any(t in CONCLUSIVE for t, _ in record.events):
            return reject(655)
        deadline = CIENCIA_DEADLINE if tp == ev.CIENCIA else CONCLUSIVE_DEADLINE
        if now > generated.authorised_at + deadline:
            return reject(
                596, f"Rejeicao: Evento apresentado apos o prazo permitido para o evento: [{deadline.days} dias]"
            )
        return self._register(now, record, tp, seq, key, raw)

    def _register(self, now: datetime, record: NfeRecord, tp: str, seq: int, key: str, raw: bytes) -> _Outcome:
        event = self.ctx.factory.nfe_event_from_signed(key, raw, at=now, c_stat=135)
        record.events[(tp, seq)] = now
        self.ctx.publisher.on_manifestation(record, event, tp, now)
        # only the retEvento is parsed, inside its procEventoNFe start tag (same namespaces)
        proc = event.proc_evento
        ret_xml = proc[proc.rindex(b"<retEvento") : proc.rindex(b"</procEventoNFe>")]
        ret = etree.fromstring(f'<procEventoNFe xmlns="{NFE_NS}">'.encode() + ret_xml + b"</procEventoNFe>")[0]
        return _Outcome(135, MOTIVOS[135], ret)

    # --- rendering ---------------------------------------------------------------------------
    def _ret(self, inf: etree._Element, outcome: _Outcome, now: datetime) -> etree._Element:
        ret = etree.Element(N + "retEvento", versao="1.00", nsmap={None: NFE_NS})
        body = sub(ret, N + "infEvento")
        sub(body, N + "tpAmb", str(self.ctx.tp_amb))
        sub(body, N + "verAplic", VER_APLIC_AN)
        sub(body, N + "cOrgao", "91")
        sub(body, N + "cStat", str(outcome.cstat))
        sub(body, N + "xMotivo", outcome.motivo[:255])
        key = (inf.findtext(N + "chNFe") or "").strip()
        if len(key) == 44 and key.isdigit():
            sub(body, N + "chNFe", key)
        tp = (inf.findtext(N + "tpEvento") or "").strip()
        if tp:
            sub(body, N + "tpEvento", tp)
        desc = (inf.findtext(f"{N}detEvento/{N}descEvento") or MANIFESTATIONS.get(tp, "")).strip()
        if 5 <= len(desc) <= 60:
            sub(body, N + "xEvento", desc)
        seq = (inf.findtext(N + "nSeqEvento") or "").strip()
        if seq:
            sub(body, N + "nSeqEvento", seq)
        sub(body, N + "dhRegEvento", brasilia_iso(now))
        return ret

    def _finish(
        self,
        req: SandboxRequest,
        now: datetime,
        soap_ns: str,
        id_lote: str,
        cstat: int,
        results: list[etree._Element],
        summary: dict[str, object],
    ) -> SandboxResponse:
        wrapper = etree.Element(f"{{{WSDL_NS}}}nfeRecepcaoEventoNFResult", nsmap={None: WSDL_NS})
        ret = etree.SubElement(wrapper, N + "retEnvEvento", versao="1.00", nsmap={None: NFE_NS})
        sub(ret, N + "idLote", id_lote if id_lote.isdigit() and len(id_lote) <= 15 else "0")
        sub(ret, N + "tpAmb", str(self.ctx.tp_amb))
        sub(ret, N + "verAplic", VER_APLIC_AN)
        sub(ret, N + "cOrgao", "91")
        sub(ret, N + "cStat", str(cstat))
        sub(ret, N + "xMotivo", MOTIVOS.get(cstat, ""))
        for item in results:
            ret.append(item)
        self.ctx.referee.record(
            at=now,
            service=SERVICE,
            operation="nfeRecepcaoEvento",
            caller=req.caller,
            queried=req.caller.doc,
            summary=summary,
            cstat=cstat,
        )
        return soap_response(soap_ns, wrapper)
