"""Validation against nfelib's official XSDs, with real documents and hand-built requests."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from lxml import etree

from app.core.errors import CapturaError
from app.fiscal import schemas
from app.fiscal.schemas import Schema, SchemaInvalid, errors, validate
from app.safexml import DoctypeForbidden, MiB, decode_doczip, parse_xml

NFE = "http://www.portalfiscal.inf.br/nfe"
CTE = "http://www.portalfiscal.inf.br/cte"
DSIG = "http://www.w3.org/2000/09/xmldsig#"


def _nfe_dist(choice: str, *, cnpj: str = "11222333000181") -> bytes:
    return (
        f'<distDFeInt xmlns="{NFE}" versao="1.01"><tpAmb>2</tpAmb><cUFAutor>35</cUFAutor>'
        f"<CNPJ>{cnpj}</CNPJ>{choice}</distDFeInt>"
    ).encode()


def _cte_dist(choice: str, *, cnpj: str = "11222333000181") -> bytes:
    return (
        f'<distDFeInt xmlns="{CTE}" versao="1.00"><tpAmb>1</tpAmb><cUFAutor>43</cUFAutor>'
        f"<CNPJ>{cnpj}</CNPJ>{choice}</distDFeInt>"
    ).encode()


@pytest.mark.parametrize("schema", list(Schema))
def test_every_schema_is_in_the_installed_nfelib_and_compiles(schema: Schema) -> None:
    path = schema.path
    assert path.is_file()
    assert path.parts[-len(schema.value.split("/")) - 1] == "nfelib"
    compiled = schemas._get(schema)
    assert isinstance(compiled.validator, etree.XMLSchema)
    assert schemas._get(schema) is compiled  # cached, compiled once


def test_file_name_lookup_matches_doczip_attributes() -> None:
    assert Schema.by_file_name("resNFe_v1.01.xsd") is Schema.NFE_RES_NFE
    assert Schema.by_file_name("procEventoNFe_v1.00.xsd") is Schema.NFE_PROC_EVENTO
    assert Schema.by_file_name("procCTe_v4.00.xsd") is Schema.CTE_PROC
    assert Schema.by_file_name("resNFe_v1.00.xsd") is None
    assert len({schema.file_name for schema in Schema}) == len(Schema)


def test_hand_built_nfe_dist_request_validates() -> None:
    validate(_nfe_dist("<distNSU><ultNSU>000000000000000</ultNSU></distNSU>"), Schema.NFE_DIST_REQUEST)
    validate(_nfe_dist("<consNSU><NSU>000000000006762</NSU></consNSU>"), Schema.NFE_DIST_REQUEST)
    validate(
        _nfe_dist("<consChNFe><chNFe>41170706117473000150550010000463202612756525</chNFe></consChNFe>"),
        Schema.NFE_DIST_REQUEST,
    )


def test_alphanumeric_cnpj_is_accepted_by_nfe_dist_1_01() -> None:
    request = _nfe_dist("<distNSU><ultNSU>000000000000000</ultNSU></distNSU>", cnpj="12ABC34501DE35")
    assert errors(request, Schema.NFE_DIST_REQUEST) == []


def test_three_digit_nsu_fails_with_schema_invalid() -> None:
    with pytest.raises(SchemaInvalid) as info:
        validate(_nfe_dist("<consNSU><NSU>123</NSU></consNSU>"), Schema.NFE_DIST_REQUEST)
    error = info.value
    assert isinstance(error, CapturaError)
    assert error.schema is Schema.NFE_DIST_REQUEST
    assert len(error.errors) >= 1
    assert "NSU" in error.errors[0]
    assert error.errors[0].startswith("linha 1:")
    assert "distDFeInt_v1.01.xsd" in error.message
    assert "{http" not in error.message  # namespaces are stripped for readability


def test_error_list_is_capped_in_the_message() -> None:
    bad = (
        f'<distDFeInt xmlns="{NFE}" versao="9"><tpAmb>7</tpAmb><cUFAutor>99</cUFAutor>'
        "<CNPJ>1</CNPJ><consNSU><NSU>1</NSU></consNSU></distDFeInt>"
    ).encode()
    found = errors(bad, Schema.NFE_DIST_REQUEST)
    assert len(found) > 3
    with pytest.raises(SchemaInvalid) as info:
        validate(bad, Schema.NFE_DIST_REQUEST)
    assert info.value.errors == found
    assert f"e mais {len(found) - 3} erro(s)" in info.value.message


def test_hand_built_cte_dist_request_validates() -> None:
    validate(_cte_dist("<distNSU><ultNSU>000000000000000</ultNSU></distNSU>"), Schema.CTE_DIST_REQUEST)
    validate(_cte_dist("<consNSU><NSU>000000000000042</NSU></consNSU>"), Schema.CTE_DIST_REQUEST)


def test_cte_dist_1_00_rejects_what_it_does_not_define() -> None:
    # No consChCTe in the official schema, and CNPJ is still numeric-only (libraries.md §0).
    by_key = _cte_dist("<consChCTe><chCTe>43120178408960000182570010000000041000000047</chCTe></consChCTe>")
    assert errors(by_key, Schema.CTE_DIST_REQUEST)
    alnum = _cte_dist("<distNSU><ultNSU>000000000000000</ultNSU></distNSU>", cnpj="12ABC34501DE35")
    assert errors(alnum, Schema.CTE_DIST_REQUEST)
    # cUFAutor is required for CT-e (optional for NF-e).
    no_uf = _cte_dist("<distNSU><ultNSU>000000000000000</ultNSU></distNSU>").replace(b"<cUFAutor>43</cUFAutor>", b"")
    assert errors(no_uf, Schema.CTE_DIST_REQUEST)


def test_real_signed_procnfe_validates(fixtures_dir: Path) -> None:
    data = (fixtures_dir / "nfe" / "41170706117473000150550010000463202612756525-procNFe.xml").read_bytes()
    validate(data, Schema.NFE_PROC)


@pytest.mark.parametrize(
    "name",
    [
        "42210775277525000178550030000266631762885493-procNFe.xml",
        "42211275277525000178550030000276771368212013-procNFe.xml",
    ],
)
def test_nfelib_4221_samples_fail_only_for_their_missing_signature(fixtures_dir: Path, name: str) -> None:
    # These published samples had their ds:Signature stripped; that is the one and only deviation
    # from procNFe 4.00 (PL_010f). Not schema drift: the document itself is incomplete.
    found = errors((fixtures_dir / "nfe" / name).read_bytes(), Schema.NFE_PROC)
    assert len(found) == 1
    assert "NFe': Missing child element(s)" in found[0]
    assert "Signature" in found[0]


def test_removing_the_signature_reproduces_that_failure(fixtures_dir: Path) -> None:
    path = fixtures_dir / "nfe" / "41170706117473000150550010000463202612756525-procNFe.xml"
    root = parse_xml(path.read_bytes())
    signature = root.find(f"{{{NFE}}}NFe/{{{DSIG}}}Signature")
    assert signature is not None
    signature.getparent().remove(signature)
    with pytest.raises(SchemaInvalid) as info:
        validate(root, Schema.NFE_PROC)
    assert "Signature" in info.value.errors[0]


def test_real_2017_response_and_its_doczips_validate(fixtures_dir: Path) -> None:
    envelope = parse_xml((fixtures_dir / "nfe" / "soap-retDistDFeInt-138-prod-2017.xml").read_bytes())
    ret = envelope.find(f".//{{{NFE}}}retDistDFeInt")
    assert ret is not None
    validate(ret, Schema.NFE_DIST_RESPONSE)  # a sub-tree of the SOAP envelope
    checked: dict[Schema, int] = {}
    for doczip in ret.iter(f"{{{NFE}}}docZip"):
        schema = Schema.by_file_name(doczip.get("schema", ""))
        assert schema is not None
        validate(decode_doczip(doczip.text or "", max_compressed=MiB, max_inflated=MiB), schema)
        checked[schema] = checked.get(schema, 0) + 1
    assert checked == {Schema.NFE_RES_NFE: 6, Schema.NFE_RES_EVENTO: 33, Schema.NFE_PROC_EVENTO: 11}


def test_tampered_response_fails(fixtures_dir: Path) -> None:
    envelope = parse_xml((fixtures_dir / "nfe" / "soap-retDistDFeInt-138-prod-2017.xml").read_bytes())
    ret = copy.deepcopy(envelope.find(f".//{{{NFE}}}retDistDFeInt"))
    assert ret is not None
    ret.find(f"{{{NFE}}}ultNSU").text = "6811"
    with pytest.raises(SchemaInvalid) as info:
        validate(etree.ElementTree(ret), Schema.NFE_DIST_RESPONSE)
    assert any("ultNSU" in message for message in info.value.errors)


@pytest.mark.parametrize("name", ["nfse-homolog-2025.xml", "nfse-prestador-pessoa-fisica.xml"])
def test_real_nfse_validates_against_leiaute_1_01(fixtures_dir: Path, name: str) -> None:
    validate((fixtures_dir / "nfse" / name).read_bytes(), Schema.NFSE)


def test_bytes_are_parsed_safely_before_validation() -> None:
    hostile = b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><distDFeInt>&x;</distDFeInt>'
    with pytest.raises(DoctypeForbidden):
        validate(hostile, Schema.NFE_DIST_REQUEST)


def test_concurrent_validation_gives_each_caller_its_own_result() -> None:
    good = etree.fromstring(_nfe_dist("<distNSU><ultNSU>000000000000000</ultNSU></distNSU>"))
    bad = etree.fromstring(_nfe_dist("<consNSU><NSU>123</NSU></consNSU>"))

    def work(n: int) -> list[bool]:
        return [not errors(good if (n + i) % 2 else bad, Schema.NFE_DIST_REQUEST) for i in range(100)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(work, range(8)))
    for n, outcome in enumerate(results):
        assert outcome == [bool((n + i) % 2) for i in range(100)]


def test_the_schemas_are_found_through_a_reader_that_takes_one_name_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Windows bundle (PyInstaller) reads nfelib through Python 3.11's MultiplexedPath, whose
    joinpath takes a single name: the XSD path is walked one part at a time."""
    import importlib.resources
    from importlib.readers import MultiplexedPath

    real = Path(str(importlib.resources.files("nfelib")))
    monkeypatch.setattr(importlib.resources, "files", lambda package: MultiplexedPath(real))
    assert Schema.NFE_DIST_RESPONSE.path == real / "nfe_dist_dfe" / "schemas" / "v1_0" / "retDistDFeInt_v1.01.xsd"
