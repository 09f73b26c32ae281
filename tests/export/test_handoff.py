"""ERP hand-off against a real HTTP receiver on loopback that fails on purpose: every document and
event arrives exactly once per idempotency key on its side, every signature valid."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import keyring
import pytest

from app.export.handoff import IDEMPOTENCY_HEADER, SIGNATURE_HEADER, Handoff, HandoffSecrets
from app.store.handoff import DELIVERED, HandoffRepository
from app.store.records import PartyRole, Product
from tests.support.nfe_harness import RECIPIENT, SUPPLIER, Harness


@dataclass
class Receiver:
    """An ERP endpoint: answers 500 to the first ``fail_first`` posts, 200 afterwards."""

    url: str = ""
    fail_first: int = 0
    posts: list[tuple[dict[str, str], bytes, int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def accepted(self) -> dict[str, list[bytes]]:
        """What the ERP kept: bodies by idempotency key, for the posts it answered 2xx."""
        kept: dict[str, list[bytes]] = {}
        for headers, body, status in self.posts:
            if status == 200:
                kept.setdefault(headers[IDEMPOTENCY_HEADER], []).append(body)
        return kept


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with state.lock:
                status = 500 if len(state.posts) < state.fail_first else 200
                state.posts.append(({k: v for k, v in self.headers.items()}, body, status))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/webhook"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    from tests.support.nfe_harness import nfe_harness

    with nfe_harness(tmp_path) as h:
        yield h


def _valid(secret: str, headers: dict[str, str], body: bytes) -> bool:
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(headers[SIGNATURE_HEADER], expected)


def test_documents_and_events_are_delivered_signed_and_retried_after_a_500(
    harness: Harness, receiver: Receiver
) -> None:
    handoff = Handoff(harness.office.db, harness.clock)
    secret = handoff.configure(harness.company.id, receiver.url)
    assert keyring.get_password("CapturaDFe", f"handoff:{RECIPIENT}") == secret  # in the keyring...
    db_bytes = Path(harness.office.db.path).read_bytes()
    assert secret.encode() not in db_bytes  # ...and never in the database
    nfe = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    other = harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_pending()
    harness.clock.advance(timedelta(hours=1, minutes=5))
    harness.sandbox.publish_nfe_event(nfe, "210210")  # Ciência: the nfeProc and the event arrive
    harness.run_pending()
    receiver.fail_first = 2

    first = handoff.run()

    assert first.queued == 4  # two resumos, then the complete NF-e and the Ciência registered elsewhere
    assert first.failed == 2 and first.delivered == first.queued - 2
    repo = HandoffRepository(harness.office.db)
    pending = [d for d in repo.log() if d.status != DELIVERED]
    assert len(pending) == 2
    assert all(d.last_http_status == 500 and d.attempts == 1 for d in pending)
    assert all(d.next_attempt_at == harness.clock.now() + timedelta(minutes=1) for d in pending)
    assert handoff.run().delivered == 0  # not due yet: the backoff holds
    harness.clock.advance(timedelta(minutes=1))

    second = handoff.run()

    assert second.delivered == 2 and second.queued == 0
    kept = receiver.accepted()
    assert len(kept) == first.queued and all(len(bodies) == 1 for bodies in kept.values())
    assert all(_valid(secret, headers, body) for headers, body, _ in receiver.posts)
    bodies = [json.loads(b[0]) for b in kept.values()]
    kinds = sorted((b["type"], b["action"], b["layout"]) for b in bodies)
    assert ("product_invoice_inbound", "issued_successfully", "nfeProc") in kinds
    assert ("product_invoice_inbound", "input_event_raised_successfully", "procEventoNFe") in kinds
    assert kinds.count(("product_invoice_inbound_summary", "issued_successfully", "resNFe")) == 2
    resumo = next(b for b in bodies if b["layout"] == "resNFe" and b["accessKey"] == str(nfe.key))
    assert "<resNFe" in resumo["xml"] and "<nfeProc" not in resumo["xml"]  # the version that arrived then
    complete = next(b for b in bodies if b["layout"] == "nfeProc")
    stored = harness.ctx.documents.get_xml(harness.company.id, Product.NFE, str(nfe.key))
    assert complete["xml"].encode() == stored and complete["xmlSha256"] == hashlib.sha256(stored).hexdigest()
    assert complete["id"] == f"{RECIPIENT}:{nfe.key}:nfeProc:{complete['nsu']}"
    assert str(other.key) in {b["accessKey"] for b in bodies}

    # "Reenviar" by key: posted again under the same idempotency key, the ERP still holds one.
    assert repo.resend(harness.company.id, access_keys=[str(other.key)]) == 1
    handoff.run()
    assert len(receiver.accepted()) == first.queued
    resent = [k for k, v in receiver.accepted().items() if str(other.key) in k]
    assert len(resent) == 1 and len(receiver.accepted()[resent[0]]) == 2


def test_a_receiver_that_is_down_is_retried_up_to_an_hour_apart(harness: Harness, tmp_path: Path) -> None:
    handoff = Handoff(harness.office.db, harness.clock)
    handoff.configure(harness.company.id, "http://127.0.0.1:9/nobody-listens")  # discard port: refused
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_pending()
    delays = []
    for _ in range(9):
        handoff.run()
        [delivery] = HandoffRepository(harness.office.db).log()
        assert delivery.status == "pending" and "Falha de comunicação" in (delivery.last_error or "")
        delays.append(delivery.next_attempt_at - harness.clock.now())
        harness.clock.set(delivery.next_attempt_at)
    assert delays[:3] == [timedelta(minutes=1), timedelta(minutes=2), timedelta(minutes=4)]
    assert delays[-1] == timedelta(hours=1)


def test_a_missing_secret_is_said_in_portuguese_and_nothing_is_lost(harness: Harness, receiver: Receiver) -> None:
    handoff = Handoff(harness.office.db, harness.clock)
    handoff.configure(harness.company.id, receiver.url)
    keyring.delete_password("CapturaDFe", f"handoff:{RECIPIENT}")
    harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_pending()
    handoff.run()
    [delivery] = HandoffRepository(harness.office.db).log()
    assert receiver.posts == [] and delivery.status == "pending"
    assert "segredo de assinatura" in (delivery.last_error or "")
    HandoffSecrets().create(RECIPIENT)
    harness.clock.advance(timedelta(minutes=1))
    assert handoff.run().delivered == 1


def test_an_unreachable_receiver_is_tried_once_per_run_and_the_rest_keep_their_turn(harness: Harness) -> None:
    handoff = Handoff(harness.office.db, harness.clock)
    handoff.configure(harness.company.id, "http://127.0.0.1:9/nobody-listens")
    for _ in range(3):
        harness.sandbox.publish_nfe(SUPPLIER, RECIPIENT)
    harness.run_pending()

    run = handoff.run()

    attempts = sorted(d.attempts for d in HandoffRepository(harness.office.db).log())
    assert (run.queued, run.failed, attempts) == (3, 1, [0, 0, 1])


def test_ctes_go_out_as_transportation_invoices_obeying_the_party_filter(tmp_path: Path, receiver: Receiver) -> None:
    from tests.support.nfe_harness import CARRIER, cte_harness

    with cte_harness(tmp_path) as cte:
        cte.sandbox.party(CARRIER)
        me = cte.company.cnpj.value
        cte.settings(cte_party_roles=(PartyRole.TAKER,))
        handoff = Handoff(cte.office.db, cte.clock)
        handoff.configure(cte.company.id, receiver.url)
        taken = cte.sandbox.publish_cte(CARRIER, SUPPLIER, me, taker_role=3)  # the company pays: sent
        cte.sandbox.publish_cte(CARRIER, SUPPLIER, me, taker_role=0)  # the sender pays: kept, not sent
        cte.run_pending()

        assert handoff.run().delivered == 1

    [(headers, body, _)] = receiver.posts
    sent = json.loads(body)
    assert (sent["type"], sent["action"], sent["accessKey"]) == (
        "transportation_invoice_inbound",
        "issued_successfully",
        str(taken.key),
    )
    assert headers[IDEMPOTENCY_HEADER] == f"{me}:{taken.key}:cteProc:{sent['nsu']}"


def test_without_a_keyring_the_handoff_secret_error_names_the_secret_not_a_certificate() -> None:
    import keyring
    import keyring.backends.fail

    from app.certs.vault import NoSecureStorage
    from app.export.handoff import HandoffSecrets

    keyring.set_keyring(keyring.backends.fail.Keyring())  # the autouse fixture puts the test keyring back
    with pytest.raises(NoSecureStorage) as caught:
        HandoffSecrets().create("11222333000181")
    assert "para guardar o segredo de assinatura da entrega ao ERP" in caught.value.message
    assert "certificado" not in caught.value.message
