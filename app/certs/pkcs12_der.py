"""Just enough PKCS#12 (RFC 7292) reading to explain why a .pfx failed to open.

cryptography answers every failure with the same "Invalid password or PKCS12 data". To tell the
user whether the file is not a certificate at all, the password is wrong, or the file uses an
encryption this machine cannot decrypt (RC2-40 from old Windows exports when OpenSSL's legacy
provider is missing), we read the outer DER and check the integrity MAC with the password
ourselves. Nothing here decrypts keys: it only diagnoses.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

_OID_DATA = "1.2.840.113549.1.7.1"
_OID_SIGNED_DATA = "1.2.840.113549.1.7.2"
_OID_PBMAC1 = "1.2.840.113549.1.5.14"
_MAX_ITERATIONS = 1_000_000  # a pure-Python KDF; real files use 2,048 to 100,000

_DIGEST_BY_OID = {
    "1.3.14.3.2.26": "sha1",
    "2.16.840.1.101.3.4.2.1": "sha256",
    "2.16.840.1.101.3.4.2.2": "sha384",
    "2.16.840.1.101.3.4.2.3": "sha512",
    "2.16.840.1.101.3.4.2.4": "sha224",
}

# PKCS#12 PBE schemes (1.2.840.113549.1.12.1.x) that need OpenSSL's legacy provider.
LEGACY_PBE_OIDS = {
    "1.2.840.113549.1.12.1.1": "pbeWithSHAAnd128BitRC4",
    "1.2.840.113549.1.12.1.2": "pbeWithSHAAnd40BitRC4",
    "1.2.840.113549.1.12.1.5": "pbeWithSHAAnd128BitRC2-CBC",
    "1.2.840.113549.1.12.1.6": "pbeWithSHAAnd40BitRC2-CBC",
}


class DerError(ValueError):
    """The bytes are not the DER/BER structure expected."""


@dataclass(frozen=True)
class Tlv:
    tag: int
    constructed: bool
    content: bytes  # for BER indefinite-length values: the raw children, end marker removed


def read_tlv(data: bytes, pos: int = 0) -> tuple[Tlv, int]:
    """One tag-length-value at ``pos``; returns it and the position after it. Accepts BER."""
    if pos + 2 > len(data):
        raise DerError("truncated")
    tag = data[pos]
    if tag & 0x1F == 0x1F:
        raise DerError("high tag numbers are not used by PKCS#12")
    constructed = bool(tag & 0x20)
    first = data[pos + 1]
    pos += 2
    if first == 0x80:  # indefinite length (BER): children until 00 00
        if not constructed:
            raise DerError("indefinite length on a primitive value")
        start = pos
        while True:
            if data[pos : pos + 2] == b"\x00\x00":
                return Tlv(tag, constructed, data[start:pos]), pos + 2
            _, pos = read_tlv(data, pos)
    if first & 0x80:
        count = first & 0x7F
        if count == 0 or count > 4 or pos + count > len(data):
            raise DerError("bad length")
        length = int.from_bytes(data[pos : pos + count], "big")
        pos += count
    else:
        length = first
    end = pos + length
    if end > len(data):
        raise DerError("truncated")
    return Tlv(tag, constructed, data[pos:end]), end


def children(tlv: Tlv) -> list[Tlv]:
    out: list[Tlv] = []
    pos = 0
    while pos < len(tlv.content):
        child, pos = read_tlv(tlv.content, pos)
        out.append(child)
    return out


def _expect(tlv: Tlv, tag: int) -> Tlv:
    if tlv.tag != tag:
        raise DerError(f"expected tag {tag:#x}, found {tlv.tag:#x}")
    return tlv


def decode_oid(content: bytes) -> str:
    if not content:
        raise DerError("empty OID")
    arcs: list[int] = []
    value = 0
    for byte in content:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    first = min(arcs[0] // 40, 2)
    return ".".join(str(a) for a in [first, arcs[0] - 40 * first, *arcs[1:]])


def _octets(tlv: Tlv) -> bytes:
    """An OCTET STRING's value, joining BER's constructed chunks."""
    if tlv.tag == 0x04:
        return tlv.content
    if tlv.tag == 0x24:
        return b"".join(_octets(c) for c in children(tlv))
    raise DerError("expected OCTET STRING")


@dataclass(frozen=True)
class PfxOutline:
    """The unencrypted skeleton of a PFX: what is signed by the MAC, and the MAC parameters."""

    auth_safe: bytes
    mac_digest: str | None  # hashlib name; None when absent or not understood (e.g. PBMAC1)
    mac_value: bytes
    mac_salt: bytes
    mac_iterations: int
    legacy_algorithms: tuple[str, ...]  # names of legacy PBE schemes found in the file


def outline(data: bytes) -> PfxOutline:
    """Reads the outer PFX structure; raises ``DerError`` when ``data`` is not a PKCS#12 file."""
    pfx, end = read_tlv(data)
    if end != len(data) and data[end:].strip(b"\x00"):
        raise DerError("trailing bytes")
    parts = children(_expect(pfx, 0x30))
    if len(parts) < 2 or _expect(parts[0], 0x02).content != b"\x03":
        raise DerError("not PFX version 3")
    content_info = children(_expect(parts[1], 0x30))
    oid = decode_oid(_expect(content_info[0], 0x06).content)
    if oid not in (_OID_DATA, _OID_SIGNED_DATA) or len(content_info) < 2:
        raise DerError("authSafe is not PKCS#7 data")
    explicit = children(_expect(content_info[1], 0xA0))
    auth_safe = _octets(explicit[0]) if oid == _OID_DATA else b""
    digest: str | None = None
    mac_value = salt = b""
    iterations = 1
    if len(parts) > 2:
        mac_data = children(_expect(parts[2], 0x30))
        digest_info = children(_expect(mac_data[0], 0x30))
        algorithm = children(_expect(digest_info[0], 0x30))
        alg_oid = decode_oid(_expect(algorithm[0], 0x06).content)
        digest = None if alg_oid == _OID_PBMAC1 else _DIGEST_BY_OID.get(alg_oid)
        mac_value = _octets(digest_info[1])
        salt = _octets(mac_data[1])
        if len(mac_data) > 2:
            iterations = int.from_bytes(_expect(mac_data[2], 0x02).content, "big")
    legacy = tuple(name for o, name in LEGACY_PBE_OIDS.items() if _encode_oid(o) in data)
    return PfxOutline(auth_safe, digest, mac_value, salt, iterations, legacy)


def _encode_oid(dotted: str) -> bytes:
    arcs = [int(a) for a in dotted.split(".")]
    body = bytearray()
    for arc in [40 * arcs[0] + arcs[1], *arcs[2:]]:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.append(0x80 | (arc & 0x7F))
            arc >>= 7
        body.extend(reversed(chunk))
    return bytes([0x06, len(body)]) + bytes(body)


def pkcs12_kdf(digest: str, password: bytes, salt: bytes, purpose: int, iterations: int, size: int) -> bytes:
    """RFC 7292 appendix B.2 key derivation. ``password`` is already BMPString with its 00 00."""
    u = hashlib.new(digest).digest_size
    v = hashlib.new(digest).block_size

    def stretch(value: bytes) -> bytes:
        if not value:
            return b""
        length = v * -(-len(value) // v)
        return (value * (length // len(value) + 1))[:length]

    diversifier = bytes([purpose]) * v
    block = bytearray(stretch(salt) + stretch(password))
    out = b""
    while True:
        a = hashlib.new(digest, diversifier + bytes(block)).digest()
        for _ in range(iterations - 1):
            a = hashlib.new(digest, a).digest()
        out += a
        if len(out) >= size:
            return out[:size]
        b = int.from_bytes((a * (v // u + 1))[:v], "big")
        for j in range(0, len(block), v):
            chunk = (int.from_bytes(block[j : j + v], "big") + b + 1) % (1 << (8 * v))
            block[j : j + v] = chunk.to_bytes(v, "big")


def mac_matches(pfx: PfxOutline, password: str) -> bool | None:
    """Whether ``password`` opens the file's integrity MAC; None when the file gives no way to know."""
    if pfx.mac_digest is None or not pfx.auth_safe or pfx.mac_iterations > _MAX_ITERATIONS:
        return None
    candidates = [(password + "\x00").encode("utf-16-be")]
    if password == "":
        candidates.append(b"")  # OpenSSL also accepts an absent password for an empty one
    size = hashlib.new(pfx.mac_digest).digest_size
    for bmp in candidates:
        key = pkcs12_kdf(pfx.mac_digest, bmp, pfx.mac_salt, 3, pfx.mac_iterations, size)
        computed = hmac.new(key, pfx.auth_safe, pfx.mac_digest).digest()
        if hmac.compare_digest(computed, pfx.mac_value):
            return True
    return False
