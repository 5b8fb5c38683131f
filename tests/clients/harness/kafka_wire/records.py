"""Record batches (magic 2): CRC-32C, building a batch of records, and decoding the batches of a
Fetch answer (checking their CRCs, decompressing gzip and zstd)."""
from __future__ import annotations

import gzip
import struct

from .codec import read_varint, varint

TRANSACTIONAL, CONTROL = 0x10, 0x20  # batch attribute bits; the low three bits are the codec
BASE_TIMESTAMP = 1700000000000


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(data) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def zigzag(n: int) -> bytes:
    return varint(n)


def _varbytes(b: bytes | None) -> bytes:
    return varint(-1) if b is None else varint(len(b)) + b


def record(value: bytes | None, offset_delta: int = 0, key: bytes | None = None, timestamp_delta: int = 0,
           headers=()) -> bytes:
    """One record: attributes 0, the deltas, key, value and `headers` [(name, value or None)]."""
    body = b"\x00" + varint(timestamp_delta) + varint(offset_delta) + _varbytes(key) + _varbytes(value)
    body += varint(len(headers)) + b"".join(_varbytes(n.encode()) + _varbytes(v) for n, v in headers)
    return varint(len(body)) + body


def batch(records_blob: bytes, count: int, attributes: int = 0, corrupt_crc: bool = False,
          claimed_count: int | None = None, producer_id: int = -1, producer_epoch: int = -1,
          base_sequence: int = -1, timestamp: int = BASE_TIMESTAMP) -> bytes:
    """A batch of `count` records (already encoded, maybe compressed, in `records_blob`) at base
    offset 0. `claimed_count`: the record count the header states, when it should lie;
    `corrupt_crc`: a CRC one bit off."""
    after_crc = struct.pack(">hiqqqhii", attributes, count - 1, timestamp, timestamp, producer_id, producer_epoch,
                            base_sequence, claimed_count if claimed_count is not None else count) + records_blob
    crc = crc32c(after_crc) ^ (1 if corrupt_crc else 0)
    head = struct.pack(">iBI", -1, 2, crc)  # partitionLeaderEpoch, magic, crc
    return struct.pack(">qi", 0, len(head) + len(after_crc)) + head + after_crc


def decompress(codec: int, data: bytes) -> bytes:
    if codec == 0:
        return data
    if codec == 1:
        return gzip.decompress(data)
    if codec == 4:
        import zstandard
        return zstandard.ZstdDecompressor().decompressobj().decompress(data)
    raise AssertionError("codec %d not expected here" % codec)


def _records(data: bytes, count: int, base_offset: int, base_ts: int) -> list[tuple]:
    records, rp = [], 0
    for _ in range(count):
        length_r, rp = read_varint(data, rp)
        end = rp + length_r
        rp += 1  # attributes
        ts_delta, rp = read_varint(data, rp)
        off_delta, rp = read_varint(data, rp)
        kl, rp = read_varint(data, rp)
        key = None if kl < 0 else bytes(data[rp:rp + kl])
        rp += max(kl, 0)
        vl, rp = read_varint(data, rp)
        value = None if vl < 0 else bytes(data[rp:rp + vl])
        rp += max(vl, 0)
        nh, rp = read_varint(data, rp)
        headers = []
        for _ in range(nh):
            hk, rp = read_varint(data, rp)
            name = bytes(data[rp:rp + hk]).decode()
            rp += hk
            hv, rp = read_varint(data, rp)
            headers.append((name, None if hv < 0 else bytes(data[rp:rp + hv])))
            rp += max(hv, 0)
        assert rp == end
        records.append((base_offset + off_delta, base_ts + ts_delta, key, value, tuple(headers)))
    return records


def decode_batches(blob: bytes, check_crc: bool = True) -> list[tuple[dict, list[tuple]]]:
    """[(batch header dict, [records])] of the v2 batches in `blob`, a partial batch at the end
    left out (the protocol allows one); each record a tuple (offset, timestamp, key, value,
    headers). Checks every CRC unless told not to."""
    out, pos = [], 0
    while pos + 12 <= len(blob):
        base_offset, length = struct.unpack_from(">qi", blob, pos)
        if pos + 12 + length > len(blob):
            break
        epoch, magic, crc = struct.unpack_from(">iBI", blob, pos + 12)
        assert magic == 2
        body = blob[pos + 21:pos + 12 + length]
        if check_crc:
            assert crc32c(body) == crc, "CRC mismatch in the batch at %d" % base_offset
        (attrs, last_delta, base_ts, _max_ts, pid, _pepoch, bseq, count) = struct.unpack_from(">hiqqqhii", body, 0)
        records = _records(decompress(attrs & 7, body[40:]), count, base_offset, base_ts)
        out.append(({"base_offset": base_offset, "epoch": epoch, "codec": attrs & 7, "producer_id": pid,
                     "base_sequence": bseq, "count": count, "last_offset_delta": last_delta,
                     "control": bool(attrs & CONTROL)}, records))
        pos += 12 + length
    return out


__all__ = ["TRANSACTIONAL", "CONTROL", "BASE_TIMESTAMP", "crc32c", "zigzag", "record", "batch", "decompress",
           "decode_batches"]
