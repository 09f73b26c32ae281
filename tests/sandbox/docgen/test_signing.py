"""The generator's own SEFAZ signatures: byte-identical to signxml's, digests known before signing."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from app.fiscal.xmldsig import SignatureProfile, sign_enveloped, verify_enveloped
from app.sandbox.docgen import DocumentFactory, Party
from app.sandbox.docgen.nfe import _Recipe, _render
from app.sandbox.docgen.signing import (
    CanonicalMismatch,
    canonical_part,
    digest_of,
    lxml_canonical_part,
    sign_document,
)
from app.sandbox.pki import TestPki

from .conftest import ISSUED_AT

NFE_NS = "http://www.portalfiscal.inf.br/nfe"
ODD_NAMES = (
    "FORNECEDORA & FILHOS <LTDA> 'ME' \"EPP\"",
    "AÇÚCAR E CAFÉ DO SERTÃO LTDA",
    "EMPRESA > 1000 & CIA",
)


def _unsigned(
    emitter: Party, recipient: Party, seed: int, transporter: Party | None = None, aut_xml: tuple[str, ...] = ()
) -> tuple[str, str]:
    """An unsigned NFe as the generator writes it, and its infNFe Id."""
    recipe = _Recipe(seed, emitter, recipient, ISSUED_AT, 100 + seed, 1, 2, None, transporter, aut_xml, 1 + seed % 5)
    document, key, _ = _render(recipe, random.Random(seed))
    return document, "NFe" + key


@pytest.mark.parametrize("name", ODD_NAMES)
def test_fast_signature_is_byte_identical_to_signxml(
    factory: DocumentFactory, client: Party, carrier: Party, person: Party, pki: TestPki, name: str
) -> None:
    emitter = Party("11222333000181", name, "SP", "3550308", ie="110042490114")
    signer = factory.certificate(emitter)
    for seed in range(4):
        document, inf_id = _unsigned(emitter, client if seed % 2 else person, seed, carrier, (person.doc,))
        dig_val = digest_of(canonical_part(document, inf_id))
        fast = sign_document(document, inf_id, dig_val, factory._signers.key_for(emitter.doc, emitter.name))
        reference = sign_enveloped(document.encode(), inf_id, signer.key_pem, signer.cert_pem)
        assert fast == reference
        verified = verify_enveloped(fast, ca_pem=pki.ca_cert_pem, at=ISSUED_AT, profile=SignatureProfile.SEFAZ_SHA1)
        assert verified.reference_id == inf_id


def test_textual_canonical_form_matches_lxml(client: Party) -> None:
    for index, name in enumerate(ODD_NAMES):
        emitter = Party("11222333000181", name, "SP", "3550308")
        document, inf_id = _unsigned(emitter, client, index)
        assert canonical_part(document, inf_id) == lxml_canonical_part(document.encode(), inf_id)
    # what the generator never writes goes to lxml directly (C14N writes "\r" as a reference)
    odd = f'<NFe xmlns="{NFE_NS}"><infNFe versao="4.00" Id="NFe1"><a>x&#13;y</a><b>&quot;</b></infNFe></NFe>'
    assert (
        canonical_part(odd, "NFe1")
        == (f'<infNFe xmlns="{NFE_NS}" Id="NFe1" versao="4.00"><a>x&#xD;y</a><b>"</b></infNFe>').encode()
    )


def test_a_wrong_digest_is_never_signed(factory: DocumentFactory, supplier: Party, client: Party) -> None:
    document, inf_id = _unsigned(supplier, client, 1)
    key = factory._signers.key_for(supplier.doc, supplier.name)
    with pytest.raises(CanonicalMismatch):
        sign_document(document, inf_id, digest_of(b"something else"), key)


def test_publication_does_not_sign_and_the_later_signature_carries_the_published_digest(
    supplier: Party, client: Party, pki: TestPki
) -> None:
    factory = DocumentFactory(pki, seed=3)
    nfe = factory.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT)
    assert not nfe.proc_payload.made  # nothing signed yet: the recipient gets the resNFe
    assert f"<digVal>{nfe.dig_val}</digVal>".encode() in nfe.res_nfe
    proc = nfe.nfe_proc
    assert nfe.proc_payload.made
    assert f"<DigestValue>{nfe.dig_val}</DigestValue>".encode() in proc
    assert verify_enveloped(proc, at=ISSUED_AT).reference_id == "NFe" + nfe.key
    assert nfe.nfe_proc == proc  # cached (kept compressed), the same bytes every time
    nfe.proc_payload.gzip()
    assert nfe.nfe_proc == proc


def test_same_seed_same_documents(pki: TestPki, supplier: Party, client: Party) -> None:
    first, second = DocumentFactory(pki, seed=9), DocumentFactory(pki, seed=9)
    a = [first.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT + timedelta(minutes=i)) for i in range(3)]
    b = [second.nfe(emitter=supplier, recipient=client, issued_at=ISSUED_AT + timedelta(minutes=i)) for i in range(3)]
    assert [n.res_nfe for n in a] == [n.res_nfe for n in b]
    assert [(n.key, n.dig_val, n.protocol) for n in a] == [(n.key, n.dig_val, n.protocol) for n in b]
    assert a[0].issued_at == datetime(2026, 11, 10, 13, 30, tzinfo=UTC)
