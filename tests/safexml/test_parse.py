"""The strict parser refuses bombs, DTDs, foreign encodings and oversized input, and reads real files."""

from __future__ import annotations

import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.core.errors import CapturaError
from app.safexml import (
    DEFAULT_MAX,
    DoctypeForbidden,
    EntityForbidden,
    MalformedXml,
    MiB,
    NotUtf8,
    TooLarge,
    XmlRejected,
    parse_xml,
    parse_xml_file,
)

NFE_NS = "{http://www.portalfiscal.inf.br/nfe}"

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<lolz>&lol9;</lolz>
"""

XXE = b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE nfeProc [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<nfeProc xmlns="http://www.portalfiscal.inf.br/nfe"><xNome>&xxe;</xNome></nfeProc>
"""


def _quadratic_blowup() -> bytes:
    # One 100 KB entity referenced 10,000 times: 1 GB once expanded, no nesting needed.
    big = b"A" * 100_000
    refs = b"&a;" * 10_000
    return b'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "' + big + b'">]>\n<r>' + refs + b"</r>"


def _rejection(data: bytes) -> XmlRejected:
    with pytest.raises(XmlRejected) as info:
        parse_xml(data)
    return info.value


def test_rejections_are_captura_errors_with_a_reason() -> None:
    error = _rejection(b"<a>")
    assert isinstance(error, CapturaError)
    assert error.reason == "malformed"
    assert str(error) == error.message


def test_billion_laughs_is_refused_before_expanding() -> None:
    started = time.perf_counter()
    error = _rejection(BILLION_LAUGHS)
    assert type(error) is EntityForbidden
    assert error.reason == "entity"
    assert time.perf_counter() - started < 1.0


def test_quadratic_blowup_is_refused() -> None:
    tracemalloc.start()
    try:
        error = _rejection(_quadratic_blowup())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert type(error) is EntityForbidden
    assert peak < 20 * MiB


def test_external_entity_is_refused_and_nothing_leaks() -> None:
    passwd = Path("/etc/passwd")
    error = _rejection(XXE)
    assert type(error) is EntityForbidden
    assert "root:" not in error.message
    if passwd.exists():
        first_line = passwd.read_text(errors="replace").splitlines()[0]
        assert first_line not in str(error)


def test_doctype_without_entities_is_refused() -> None:
    data = (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<!DOCTYPE nfeProc SYSTEM "http://example.invalid/nfe.dtd">\n'
        b'<nfeProc xmlns="http://www.portalfiscal.inf.br/nfe" versao="4.00"/>'
    )
    error = _rejection(data)
    assert type(error) is DoctypeForbidden
    assert error.reason == "doctype"
    assert "DOCTYPE" in error.message


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # A comment holding "<a" ends the prolog scan early: the post-parse check must still refuse.
        (b"<!-- <a --><!DOCTYPE r><r/>", DoctypeForbidden),
        (b'<!-- <a --><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>', EntityForbidden),
    ],
)
def test_doctype_hidden_from_the_prolog_scan_is_still_refused(data: bytes, expected: type) -> None:
    error = _rejection(data)
    assert type(error) is expected
    assert "root:" not in error.message


def test_undeclared_entity_reference_is_malformed() -> None:
    error = _rejection(b"<a>&x;</a>")
    assert type(error) is MalformedXml
    assert "x" in error.detail


def test_real_malformed_nfse_gives_its_line(fixtures_dir: Path) -> None:
    data = (fixtures_dir / "nfse" / "malformed-nfse-unescaped-ampersand.xml").read_bytes()
    error = _rejection(data)
    assert type(error) is MalformedXml
    assert error.line == 98
    assert error.column is not None and error.column > 0
    assert "linha 98" in error.message
    assert error.message.startswith("XML malformado")


@pytest.mark.parametrize("data", [b"", b"   ", b"<a><b></a>", b"<a>", b"not xml at all"])
def test_broken_documents_are_malformed(data: bytes) -> None:
    assert type(_rejection(data)) is MalformedXml


def test_invalid_utf8_bytes_are_refused_with_position() -> None:
    data = b'<?xml version="1.0" encoding="UTF-8"?>\n<a>\n<xNome>Jo\xe3o</xNome></a>'
    error = _rejection(data)
    assert type(error) is NotUtf8
    assert error.reason == "not_utf8"
    assert "linha 3" in error.message


def test_invalid_utf8_without_declaration_is_refused() -> None:
    assert type(_rejection(b"<a>caf\xe9</a>")) is NotUtf8


def test_invalid_utf8_far_into_a_large_document_is_found() -> None:
    # Crosses the 1 MiB chunk boundary used by the UTF-8 check, with a split multi-byte char.
    padding = b"x" * (MiB - 6)
    ok = b"<a>" + padding + "ção".encode() + b"</a>"
    assert parse_xml(ok).text.endswith("ção")
    error = _rejection(b"<a>" + padding + b"\xc3\x28</a>")
    assert type(error) is NotUtf8


def test_latin1_declaration_is_refused_even_with_ascii_content() -> None:
    error = _rejection(b'<?xml version="1.0" encoding="ISO-8859-1"?><a>abc</a>')
    assert type(error) is NotUtf8
    assert "ISO-8859-1" in error.message


def test_utf16_document_is_refused() -> None:
    data = '<?xml version="1.0" encoding="UTF-16"?><a>abc</a>'.encode("utf-16")
    assert type(_rejection(data)) is NotUtf8
    assert type(_rejection("<a>abc</a>".encode("utf-16-le"))) is NotUtf8


def test_utf8_bom_and_declaration_spellings_are_accepted() -> None:
    root = parse_xml(b'\xef\xbb\xbf<?xml version="1.0" encoding="UTF-8"?><a>S\xc3\xa3o Paulo</a>')
    assert root.text == "São Paulo"
    assert parse_xml(b"<?xml version='1.0' encoding='utf8'?><b/>").tag == "b"
    assert parse_xml(b"<?xml version='1.0'?><c/>").tag == "c"


def test_str_input_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        parse_xml("<a/>")  # type: ignore[arg-type]


def test_size_limit_is_exact() -> None:
    data = b"<a>" + b"x" * 93 + b"</a>"
    assert len(data) == 100
    assert parse_xml(data, max_bytes=100).tag == "a"
    error = _rejection_with_limit(data, 99)
    assert error.what == "xml" and error.limit == 99


def _rejection_with_limit(data: bytes, limit: int) -> TooLarge:
    with pytest.raises(TooLarge) as info:
        parse_xml(data, max_bytes=limit)
    return info.value


def _write_large_xml(path: Path, size: int) -> None:
    chunk = b"<item>" + b"x" * 1000 + b"</item>\n"
    with path.open("wb") as handle:
        handle.write(b'<?xml version="1.0" encoding="UTF-8"?>\n<root>\n')
        written = 0
        while written < size:
            handle.write(chunk)
            written += len(chunk)
        handle.write(b"</root>\n")


def test_50mb_file_is_refused_by_size_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.xml"
    _write_large_xml(big, 50 * MiB)
    assert big.stat().st_size > DEFAULT_MAX
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(TooLarge) as info:
            parse_xml_file(big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 1.0
    assert peak < 1 * MiB
    assert info.value.what == "xml"
    assert "big.xml" in info.value.message


def test_50mb_bytes_are_refused_before_parsing() -> None:
    data = b"<root>" + b"x" * (50 * MiB) + b"</root>"
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(TooLarge):
            parse_xml(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 1.0
    assert peak < 1 * MiB


def test_file_within_limit_parses(tmp_path: Path) -> None:
    path = tmp_path / "ok.xml"
    path.write_bytes(b'<?xml version="1.0" encoding="UTF-8"?><nota><n>1</n></nota>')
    assert parse_xml_file(path).findtext("n") == "1"
    with pytest.raises(FileNotFoundError):
        parse_xml_file(tmp_path / "missing.xml")


def test_real_2017_soap_response_parses(fixtures_dir: Path) -> None:
    root = parse_xml((fixtures_dir / "nfe" / "soap-retDistDFeInt-138-prod-2017.xml").read_bytes())
    ret = root.find(f".//{NFE_NS}retDistDFeInt")
    assert ret is not None
    assert ret.findtext(f"{NFE_NS}cStat") == "138"
    assert ret.findtext(f"{NFE_NS}ultNSU") == "000000000006811"
    assert len(ret.findall(f"{NFE_NS}loteDistDFeInt/{NFE_NS}docZip")) == 50


@pytest.mark.parametrize(
    "name",
    [
        "41170706117473000150550010000463202612756525-procNFe.xml",
        "42210775277525000178550030000266631762885493-procNFe.xml",
    ],
)
def test_real_procnfe_parses(fixtures_dir: Path, name: str) -> None:
    root = parse_xml((fixtures_dir / "nfe" / name).read_bytes())
    assert root.tag == f"{NFE_NS}nfeProc"
    key = name[:44]
    assert root.findtext(f"{NFE_NS}protNFe/{NFE_NS}infProt/{NFE_NS}chNFe") == key


def test_parsing_from_many_threads_gives_each_its_own_result() -> None:
    barrier = threading.Barrier(8)

    def work(n: int) -> list[str]:
        barrier.wait(timeout=10)
        results = []
        for i in range(50):
            doc = f'<?xml version="1.0" encoding="UTF-8"?><r><t>{n}-{i}</t>{"<p/>" * 200}</r>'.encode()
            results.append(parse_xml(doc).findtext("t") or "")
        return results

    with ThreadPoolExecutor(max_workers=8) as pool:
        outputs = list(pool.map(work, range(8)))
    for n, results in enumerate(outputs):
        assert results == [f"{n}-{i}" for i in range(50)]


def test_ascii_skips_the_utf8_scan_but_one_high_byte_does_not() -> None:
    body = b"<a>" + b"x" * 5000 + b"</a>"
    assert parse_xml(body).text == "x" * 5000
    assert type(_rejection(body[:-4] + b"\x80</a>")) is NotUtf8
