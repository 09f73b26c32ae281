"""Roles and direction of the company in a document, and the JSON form of the metadata."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from app.core.documents import DocumentStatus
from app.core.ids import Cnpj
from app.documents import (
    Direction,
    DocumentKind,
    EventMeta,
    NfeMeta,
    PartyInfo,
    PartyRole,
    UnknownMeta,
    direction_of,
    roles_of,
    to_json_dict,
)

ME = "11444777000161"
BRANCH = "11444777000242"  # same base, another establishment
OTHER = "11222333000181"
KEY = "35170307705364000116550010000158771254375877"


def nfe(
    emitter: str = OTHER,
    recipient: str | None = None,
    transporter: str | None = None,
    authorised: tuple[str, ...] = (),
) -> NfeMeta:
    return NfeMeta(
        kind=DocumentKind.NFE_PROC,
        root="nfeProc",
        version="4.00",
        access_key=KEY,
        uf="SP",
        model="55",
        serie=1,
        number=15877,
        issued_at=datetime(2017, 3, 17, 14, 52, 25, tzinfo=timezone(timedelta(hours=-3))),
        emitter=PartyInfo(PartyRole.EMITTER, emitter, "EMITENTE"),
        recipient=PartyInfo(PartyRole.RECIPIENT, recipient, "DEST") if recipient else None,
        transporter=PartyInfo(PartyRole.TRANSPORTER, transporter, "TRANSP") if transporter else None,
        authorised=authorised,
        total_cents=329020,
        status=DocumentStatus.AUTHORISED,
    )


@pytest.mark.parametrize(
    ("meta", "roles", "direction"),
    [
        (nfe(emitter=ME, recipient=OTHER), {PartyRole.EMITTER}, Direction.EMITTED),
        (
            nfe(emitter=ME, recipient=OTHER, transporter=ME),
            {PartyRole.EMITTER, PartyRole.TRANSPORTER},
            Direction.RECEIVED,
        ),
        (
            nfe(emitter=ME, recipient=OTHER, authorised=(ME,)),
            {PartyRole.EMITTER, PartyRole.AUTHORISED},
            Direction.RECEIVED,
        ),
        (nfe(emitter=OTHER, recipient=ME), {PartyRole.RECIPIENT}, Direction.RECEIVED),
        (nfe(emitter=OTHER, recipient=OTHER, transporter=ME), {PartyRole.TRANSPORTER}, Direction.RECEIVED),
        (nfe(emitter=BRANCH, recipient=OTHER), set(), Direction.RECEIVED),  # a branch is another party
        (nfe(emitter=OTHER, recipient=None), set(), Direction.RECEIVED),
    ],
)
def test_roles_and_direction(meta: NfeMeta, roles: set[PartyRole], direction: Direction) -> None:
    assert roles_of(ME, meta) == roles
    assert roles_of(Cnpj(ME), meta) == roles
    assert roles_of(ME.lower() + " ", meta) == roles
    assert direction_of(ME, meta) is direction


def test_event_roles() -> None:
    event = EventMeta(
        kind=DocumentKind.PROC_EVENTO_NFE,
        root="procEventoNFe",
        version="1.00",
        access_key=KEY,
        tp_evento="210210",
        n_seq_evento=1,
        description="Ciencia da Operacao",
        author_doc=ME,
        c_orgao="91",
        event_at=None,
        protocol="891170419030368",
        recipient_doc=ME,
    )
    assert roles_of(ME, event) == {PartyRole.EMITTER, PartyRole.RECIPIENT}
    assert roles_of(OTHER, event) == set()
    assert roles_of(ME, UnknownMeta(root="x", namespace=None, version=None)) == set()


def test_json_form_keeps_offsets_and_nests_parties() -> None:
    meta = nfe(emitter=OTHER, recipient=ME, authorised=(OTHER,))
    data = json.loads(json.dumps(to_json_dict(meta)))
    assert data["kind"] == "nfeProc" and data["status"] == "authorised"
    assert data["issued_at"] == "2017-03-17T14:52:25-03:00"
    assert data["recipient"] == {
        "role": "recipient",
        "doc": ME,
        "name": "DEST",
        "ie": None,
        "uf": None,
        "foreign_id": None,
    }
    assert data["authorised"] == [OTHER] and data["total_cents"] == 329020
    assert json.loads(json.dumps(to_json_dict(UnknownMeta("foo", None, None))))["kind"] == "unknown"
