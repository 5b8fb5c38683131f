"""Kafka's primitive types and request framing, written from the protocol guide
(kafka.apache.org/protocol), never from the bridge's codecs.

Encoders return bytes: `string`, `array` and `nbytes` write the classic form (int16 / int32
length, -1 for null) or, with flexible=True, the compact form of flexible versions (uvarint
length + 1, 0 for null). A `Reader` walks a response the same way. `request` frames a request:
the 4-byte size, then header v1 (api key, version, correlation id, client id) or, flexible, v2
(header v1 and empty tagged fields)."""
from __future__ import annotations

import struct

TAGS = b"\x00"  # empty tagged fields, the end of every flexible structure


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def varint(n: int) -> bytes:
    """A signed varint, zigzag-encoded (record fields)."""
    return uvarint((n << 1) ^ (n >> 63))


def read_uvarint(buf, pos: int) -> tuple[int, int]:
    """(value, position after it)."""
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def read_varint(buf, pos: int) -> tuple[int, int]:
    value, pos = read_uvarint(buf, pos)
    return (value >> 1) ^ -(value & 1), pos


def _raw(s: str | bytes) -> bytes:
    return s if isinstance(s, bytes) else s.encode()


def string(s: str | bytes | None, flexible: bool = False) -> bytes:
    """A nullable string: int16 length (classic) or uvarint length + 1 (compact)."""
    if s is None:
        return uvarint(0) if flexible else struct.pack(">h", -1)
    b = _raw(s)
    return (uvarint(len(b) + 1) if flexible else struct.pack(">h", len(b))) + b


def compact_string(s: str | bytes | None) -> bytes:
    return string(s, flexible=True)


def nbytes(b: bytes | None, flexible: bool = False) -> bytes:
    """Nullable bytes: int32 length (classic) or uvarint length + 1 (compact)."""
    if b is None:
        return uvarint(0) if flexible else struct.pack(">i", -1)
    return (uvarint(len(b) + 1) if flexible else struct.pack(">i", len(b))) + b


def array(items: list[bytes] | None, flexible: bool = False) -> bytes:
    """A nullable array of encoded items: int32 count (classic) or uvarint count + 1 (compact)."""
    if items is None:
        return uvarint(0) if flexible else struct.pack(">i", -1)
    return (uvarint(len(items) + 1) if flexible else struct.pack(">i", len(items))) + b"".join(items)


def compact_array(items: list[bytes] | None) -> bytes:
    return array(items, flexible=True)


def request(api_key: int, version: int, corr: int, body: bytes = b"", client_id: str | bytes | None = "kib-test",
            flexible: bool = False) -> bytes:
    """A whole request frame. `client_id` may be raw bytes (any length up to 32767) or None."""
    hdr = struct.pack(">hhi", api_key, version, corr) + string(client_id)
    if flexible:
        hdr += TAGS
    payload = hdr + body
    return struct.pack(">i", len(payload)) + payload


class Reader:
    """Reads a response (or a request) from `pos`. `flexible` picks the form `string`, `nbytes`
    and `array` read; `str16`, `compact_string`, `array32` and `compact_array` read one form
    whatever the flag. Reading past the end raises ValueError."""

    def __init__(self, buf: bytes, pos: int = 0, flexible: bool = False):
        self.buf, self.pos, self.flexible = buf, pos, flexible

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.buf):
            raise ValueError(f"short buffer: {n} bytes wanted at {self.pos} of {len(self.buf)}")
        b = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return b

    def unpack(self, fmt: str):
        """Big-endian struct format without the '>': one value, or a tuple of several."""
        v = struct.unpack(">" + fmt, self.raw(struct.calcsize(">" + fmt)))
        return v[0] if len(v) == 1 else v

    def int8(self) -> int: return self.unpack("b")
    def int16(self) -> int: return self.unpack("h")
    def int32(self) -> int: return self.unpack("i")
    def int64(self) -> int: return self.unpack("q")
    def boolean(self) -> bool: return self.unpack("b") != 0

    def uvarint(self) -> int:
        v, self.pos = read_uvarint(self.buf, self.pos)
        return v

    def varint(self) -> int:
        v, self.pos = read_varint(self.buf, self.pos)
        return v

    def uuid(self) -> bytes:
        return self.raw(16)

    def str16(self) -> str | None:
        n = self.int16()
        return None if n < 0 else self.raw(n).decode()

    def compact_string(self) -> str | None:
        n = self.uvarint()
        return None if n == 0 else self.raw(n - 1).decode()

    def string(self) -> str | None:
        return self.compact_string() if self.flexible else self.str16()

    def nbytes(self) -> bytes | None:
        if self.flexible:
            n = self.uvarint() - 1
        else:
            n = self.int32()
        return None if n < 0 else self.raw(n)

    def compact_bytes(self) -> bytes | None:
        n = self.uvarint()
        return None if n == 0 else self.raw(n - 1)

    def array32(self, item) -> list | None:
        n = self.int32()
        return None if n < 0 else [item() for _ in range(n)]

    def compact_array(self, item) -> list | None:
        n = self.uvarint()
        return None if n == 0 else [item() for _ in range(n - 1)]

    def array(self, item) -> list | None:
        return self.compact_array(item) if self.flexible else self.array32(item)

    def length(self) -> int:
        """An array's count (-1: null) in the form `flexible` picks."""
        return self.uvarint() - 1 if self.flexible else self.int32()

    def tagged_fields(self) -> int:
        """Skips tagged fields; returns how many there were."""
        n = self.uvarint()
        for _ in range(n):
            self.uvarint()
            self.raw(self.uvarint())
        return n

    def tags(self):
        """The tagged fields that end a structure, when `flexible` (none in a classic one)."""
        if self.flexible:
            self.tagged_fields()

    def rest(self) -> bytes:
        return self.raw(len(self.buf) - self.pos)


__all__ = ["TAGS", "uvarint", "varint", "read_uvarint", "read_varint", "string", "compact_string", "nbytes",
           "array", "compact_array", "request", "Reader"]
