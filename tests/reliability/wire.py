"""Hand-written Kafka requests the checker needs beyond tests/system/kafka_wire.py: OffsetCommit
v2, OffsetFetch v1, InitProducerId v1, Metadata v1 and ApiVersions v0, all non-flexible (request
header v1, response header v0). Independent of the bridge's generated codecs."""
from __future__ import annotations

import os
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "system"))
import kafka_wire  # noqa: E402

# Kafka error codes (org.apache.kafka.common.protocol.Errors) and which are retriable there.
NAMES = {
    -1: "UNKNOWN_SERVER_ERROR", 0: "NONE", 3: "UNKNOWN_TOPIC_OR_PARTITION", 5: "LEADER_NOT_AVAILABLE",
    6: "NOT_LEADER_OR_FOLLOWER", 7: "REQUEST_TIMED_OUT", 13: "NETWORK_EXCEPTION",
    14: "COORDINATOR_LOAD_IN_PROGRESS", 15: "COORDINATOR_NOT_AVAILABLE", 16: "NOT_COORDINATOR",
    19: "NOT_ENOUGH_REPLICAS", 20: "NOT_ENOUGH_REPLICAS_AFTER_APPEND", 28: "OFFSET_METADATA_TOO_LARGE",
    56: "KAFKA_STORAGE_ERROR",
}
RETRIABLE = {3, 5, 6, 7, 13, 14, 15, 16, 19, 20, 56}


def name(code: int) -> str:
    return NAMES.get(code, f"error {code}")


def _str(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b



def _per_partition(r: bytes, partition) -> dict:
    """Walks a non-flexible [topics [partitions]] response body; `partition(r, pos)` reads one
    partition entry and returns (partition, value, next pos)."""
    pos = 0
    out = {}
    (nt,) = struct.unpack_from(">i", r, pos); pos += 4
    for _ in range(nt):
        (ln,) = struct.unpack_from(">h", r, pos); pos += 2 + ln
        (np_,) = struct.unpack_from(">i", r, pos); pos += 4
        for _ in range(np_):
            p, value, pos = partition(r, pos)
            out[p] = value
    return out

class Conn:
    def __init__(self, port: int, timeout: float = 15.0):
        self.sock = kafka_wire.connect(port, timeout)
        self.corr = 0

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def call(self, api_key: int, version: int, body: bytes) -> bytes:
        self.corr += 1
        self.sock.sendall(kafka_wire.request(api_key, version, self.corr, body, client_id="kib-reliability"))
        frame = kafka_wire.recv_frame(self.sock)
        (corr,) = struct.unpack_from(">i", frame, 0)
        if corr != self.corr:
            raise AssertionError(f"correlation id {corr}, expected {self.corr}")
        return frame[4:]

    def api_versions(self) -> int:
        body = self.call(18, 0, b"")
        return struct.unpack_from(">h", body, 0)[0]

    def metadata(self) -> int:
        """Metadata v1 for no topics (brokers and controller only); returns the broker count."""
        body = self.call(3, 1, struct.pack(">i", 0))
        return struct.unpack_from(">i", body, 0)[0]

    def offset_commit(self, group: str, topic: str, offsets: dict[int, int], metadata: str | None = "") -> dict[int, int]:
        """A simple (generation -1, no member) commit; returns partition -> error code."""
        parts = b"".join(struct.pack(">iq", p, o) + _str(metadata) for p, o in sorted(offsets.items()))
        body = (_str(group) + struct.pack(">i", -1) + _str("") + struct.pack(">q", -1) +
                struct.pack(">i", 1) + _str(topic) + struct.pack(">i", len(offsets)) + parts)
        def partition(r, pos):
            p, err = struct.unpack_from(">ih", r, pos)
            return p, err, pos + 6
        return _per_partition(self.call(8, 2, body), partition)

    def offset_fetch(self, group: str, topic: str, partitions) -> dict[int, tuple[int, int]]:
        """partition -> (committed offset or -1, error code)."""
        parts = list(partitions)
        body = _str(group) + struct.pack(">i", 1) + _str(topic) + struct.pack(">i", len(parts)) + \
            b"".join(struct.pack(">i", p) for p in parts)
        def partition(r, pos):
            p, off = struct.unpack_from(">iq", r, pos); pos += 12
            (ml,) = struct.unpack_from(">h", r, pos); pos += 2 + max(ml, 0)
            (err,) = struct.unpack_from(">h", r, pos)
            return p, (off, err), pos + 2
        return _per_partition(self.call(9, 1, body), partition)

    def init_producer_id(self) -> tuple[int, int]:
        """(error code, producer id) for an idempotent (non-transactional) producer."""
        r = self.call(22, 1, _str(None) + struct.pack(">i", 60000))
        _throttle, err, pid, _epoch = struct.unpack_from(">ihqh", r, 0)
        return err, pid


def try_conn(port: int, timeout: float = 5.0) -> Conn | None:
    try:
        return Conn(port, timeout)
    except OSError:
        return None


__all__ = ["Conn", "try_conn", "name", "RETRIABLE", "socket"]
