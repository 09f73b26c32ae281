"""Bounded gunzip and docZip decoding: bombs stop early, corrupt input gets a typed error."""

from __future__ import annotations

import base64
import gzip
import struct
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

from app.safexml import (
    CorruptPayload,
    MiB,
    TooLarge,
    XmlRejected,
    decode_doczip,
    doczip_gzip,
    inflate,
    parse_xml,
)
from app.safexml.payload import _INPUT_CHUNK  # the largest gzip inflate() reads in one call

NFE_NS = "{http://www.portalfiscal.inf.br/nfe}"
SAMPLE = '<?xml version="1.0" encoding="UTF-8"?><resNFe xmlns="http://www.portalfiscal.inf.br/nfe"><xNome>Ação</xNome></resNFe>'.encode()


def _zero_bomb(mib: int) -> bytes:
    """A single-stream gzip of ``mib`` MiB of zeros, built without ever holding them.

    After a full flush deflate restarts from an empty state, so every 1 MiB block compresses to
    the same bytes: the stream is one block repeated, plus the real CRC-32 and size trailer.
    """
    zeros = bytes(MiB)
    block_compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = block_compressor.compress(zeros) + block_compressor.flush(zlib.Z_FULL_FLUSH)
    final = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush()
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    return header + block * mib + final + struct.pack("<II", crc, (mib * MiB) & 0xFFFFFFFF)


@pytest.fixture(scope="module")
def gigabyte_bomb() -> bytes:
    return _zero_bomb(1024)


def test_bomb_builder_makes_valid_gzip() -> None:
    assert gzip.decompress(_zero_bomb(4)) == bytes(4 * MiB)


def test_gzip_bomb_stops_at_the_limit_with_low_memory(gigabyte_bomb: bytes) -> None:
    assert len(gigabyte_bomb) < 2 * MiB  # 1 GiB of zeros in about 1 MB
    limit = 10 * MiB
    started = time.perf_counter()
    error, peak = _inflate_refused(gigabyte_bomb, limit)
    assert error.reason == "too_large"
    assert peak < 3 * limit  # the output buffer plus one step, never the gigabyte
    assert time.perf_counter() - started < 5.0


def _inflate_refused(bomb: bytes, limit: int) -> tuple[TooLarge, int]:
    """The refusal of ``inflate`` at ``limit`` (asserted to be the inflated size's, in Portuguese)
    and the peak of Python's memory meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge) as info:
            inflate(bomb, max_output=limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (info.value.what, info.value.limit) == ("inflated", limit)
    assert "bomba" in info.value.message
    return info.value, peak


def test_gzip_bomb_inside_a_doczip_is_refused(gigabyte_bomb: bytes) -> None:
    encoded = base64.b64encode(gigabyte_bomb)
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge) as info:
            decode_doczip(encoded, max_compressed=4 * MiB, max_inflated=5 * MiB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert info.value.what == "inflated"
    assert peak < 40 * MiB


def test_small_bomb_refused_in_one_call_with_low_memory() -> None:
    """A bomb small enough for the one-call path (one member within its input size) stops at the limit too."""
    bomb = _zero_bomb(40)
    assert len(bomb) <= _INPUT_CHUNK
    limit = 4 * MiB
    _error, peak = _inflate_refused(bomb, limit)
    assert peak < 3 * limit


def test_inflate_round_trip_and_exact_limit() -> None:
    packed = gzip.compress(SAMPLE)
    assert inflate(packed, max_output=len(SAMPLE)) == SAMPLE
    with pytest.raises(TooLarge):
        inflate(packed, max_output=len(SAMPLE) - 1)


def test_inflate_output_larger_than_one_step() -> None:
    data = bytes(range(256)) * (12 * 1024)  # 3 MiB: several max_length steps and input chunks
    assert inflate(gzip.compress(data), max_output=len(data)) == data


def test_concatenated_members_and_nul_padding() -> None:
    packed = gzip.compress(b"<a/>") + gzip.compress(b"<b/>") + b"\x00" * 8
    assert inflate(packed, max_output=100) == b"<a/><b/>"


@pytest.mark.parametrize("cut", [5, 20, -4, -1])
def test_truncated_gzip(cut: int) -> None:
    packed = gzip.compress(SAMPLE * 20)
    with pytest.raises(CorruptPayload) as info:
        inflate(packed[:cut], max_output=MiB)
    assert info.value.reason == "truncated_gzip"
    assert "truncado" in info.value.message


def test_corrupt_gzip_bad_crc() -> None:
    packed = bytearray(gzip.compress(SAMPLE))
    packed[-8] ^= 0xFF  # CRC-32 of the trailer
    with pytest.raises(CorruptPayload) as info:
        inflate(bytes(packed), max_output=MiB)
    assert info.value.reason == "corrupt_gzip"


def test_corrupt_gzip_bad_method_and_not_gzip() -> None:
    with pytest.raises(CorruptPayload) as info:
        inflate(b"\x1f\x8b\x63" + b"\x00" * 20, max_output=MiB)
    assert info.value.reason == "corrupt_gzip"
    with pytest.raises(CorruptPayload) as info:
        inflate(SAMPLE, max_output=MiB)
    assert info.value.reason == "corrupt_gzip"
    with pytest.raises(CorruptPayload):
        inflate(b"", max_output=MiB)


def test_trailing_garbage_after_gzip() -> None:
    with pytest.raises(CorruptPayload) as info:
        inflate(gzip.compress(SAMPLE) + b"junk", max_output=MiB)
    assert info.value.reason == "corrupt_gzip"


def test_decode_doczip_round_trip_with_wrapped_base64() -> None:
    encoded = base64.encodebytes(gzip.compress(SAMPLE))  # wrapped every 76 chars
    assert b"\n" in encoded
    assert decode_doczip(encoded, max_compressed=MiB, max_inflated=MiB) == SAMPLE
    assert decode_doczip(encoded.decode(), max_compressed=MiB, max_inflated=MiB) == SAMPLE


@pytest.mark.parametrize(
    "text",
    ["H4sI@@@@", "H4sIAAAAAAAEAIW", "H4sIAAAAAAAEAIWSb2+CMBDGv0r=DaM", "ação", "", "   "],
)
def test_corrupt_base64(text: str) -> None:
    with pytest.raises(CorruptPayload) as info:
        decode_doczip(text, max_compressed=MiB, max_inflated=MiB)
    assert info.value.reason == "corrupt_base64"


def test_doczip_with_truncated_gzip() -> None:
    encoded = base64.b64encode(gzip.compress(SAMPLE)[:-6])
    with pytest.raises(CorruptPayload) as info:
        decode_doczip(encoded, max_compressed=MiB, max_inflated=MiB)
    assert info.value.reason == "truncated_gzip"


def test_doczip_compressed_limit() -> None:
    packed = gzip.compress(bytes(range(256)) * 64)
    encoded = base64.b64encode(packed)
    with pytest.raises(TooLarge) as info:
        decode_doczip(encoded, max_compressed=len(packed) - 1, max_inflated=MiB)
    assert info.value.what == "compressed"
    with pytest.raises(TooLarge) as info:
        decode_doczip(encoded * 10, max_compressed=len(packed), max_inflated=MiB)
    assert info.value.what == "compressed"
    assert len(decode_doczip(encoded, max_compressed=len(packed), max_inflated=MiB)) == 256 * 64


def test_real_doczips_from_the_2017_response(fixtures_dir: Path) -> None:
    root = parse_xml((fixtures_dir / "nfe" / "soap-retDistDFeInt-138-prod-2017.xml").read_bytes())
    roots: dict[str, int] = {}
    for doczip in root.iter(f"{NFE_NS}docZip"):
        document = decode_doczip(doczip.text or "", max_compressed=MiB, max_inflated=10 * MiB)
        inner = parse_xml(document)
        local = inner.tag.split("}")[1]
        assert doczip.get("schema", "").startswith(local)
        roots[local] = roots.get(local, 0) + 1
    assert roots == {"resNFe": 6, "resEvento": 33, "procEventoNFe": 11}


def test_all_payload_errors_share_the_base() -> None:
    for error_type in (CorruptPayload, TooLarge):
        assert issubclass(error_type, XmlRejected)


def test_doczip_gzip_gives_the_bytes_decode_doczip_inflates() -> None:
    packed = gzip.compress(SAMPLE)
    encoded = base64.encodebytes(packed).decode()  # wrapped, as str
    assert doczip_gzip(encoded, max_compressed=MiB) == packed
    assert inflate(doczip_gzip(encoded, max_compressed=MiB), max_output=MiB) == SAMPLE
    with pytest.raises(TooLarge) as info:
        doczip_gzip(encoded, max_compressed=len(packed) - 1)
    assert info.value.what == "compressed"
    with pytest.raises(CorruptPayload) as bad:
        doczip_gzip("H4sI@@@@", max_compressed=MiB)
    assert bad.value.reason == "corrupt_base64"
