"""Hand-written encoders and decoders for the topic admin APIs (DeleteTopics v1/v6,
CreatePartitions v0/v3, DescribeTopicPartitions v0), independent of the bridge's generated codecs
(like kafka_wire.py), for the wire tests and the side-by-side tests against a real Kafka broker."""
from __future__ import annotations

import socket
import struct
import uuid as uuidlib

from kafka_wire import recv_frame, uvarint, read_uvarint

ZERO_ID = b"\x00" * 16


def cstr(s: str | None) -> bytes:
    if s is None:
        return uvarint(0)
    b = s.encode()
    return uvarint(len(b) + 1) + b


def str16(s: str | None) -> bytes:
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def carray(items: list[bytes] | None) -> bytes:
    if items is None:
        return uvarint(0)
    return uvarint(len(items) + 1) + b"".join(items)


def array32(items: list[bytes] | None) -> bytes:
    if items is None:
        return struct.pack(">i", -1)
    return struct.pack(">i", len(items)) + b"".join(items)


def frame(api_key: int, version: int, corr: int, body: bytes, flexible: bool, client_id="kib-admin-test") -> bytes:
    hdr = struct.pack(">hhi", api_key, version, corr) + str16(client_id)
    if flexible:
        hdr += b"\x00"
    payload = hdr + body
    return struct.pack(">i", len(payload)) + payload


class Reader:
    def __init__(self, buf: bytes, pos: int = 0):
        self.buf, self.pos = buf, pos

    def take(self, fmt: str):
        v = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0]

    def i8(self): return self.take(">b")
    def i16(self): return self.take(">h")
    def i32(self): return self.take(">i")
    def boolean(self): return self.take(">b") != 0

    def uv(self):
        v, self.pos = read_uvarint(self.buf, self.pos)
        return v

    def uuid(self):
        b = self.buf[self.pos:self.pos + 16]
        self.pos += 16
        return bytes(b)

    def cstr(self):
        n = self.uv()
        if n == 0:
            return None
        s = self.buf[self.pos:self.pos + n - 1].decode()
        self.pos += n - 1
        return s

    def str16(self):
        n = self.i16()
        if n < 0:
            return None
        s = self.buf[self.pos:self.pos + n].decode()
        self.pos += n
        return s

    def carray(self, item):
        n = self.uv()
        if n == 0:
            return None
        return [item() for _ in range(n - 1)]

    def array32(self, item):
        n = self.i32()
        if n < 0:
            return None
        return [item() for _ in range(n)]

    def tags(self):
        for _ in range(self.uv()):
            self.uv()
            self.pos += self.uv()


class Conn:
    def __init__(self, port: int, host="127.0.0.1", timeout=30.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.corr = 0

    def close(self):
        self.sock.close()

    def call(self, api_key: int, version: int, body: bytes, flexible: bool) -> Reader:
        self.corr += 1
        self.sock.sendall(frame(api_key, version, self.corr, body, flexible))
        resp = recv_frame(self.sock)
        r = Reader(resp)
        assert r.i32() == self.corr
        if flexible:
            r.tags()
        return r

    # ---- DeleteTopics (20)
    def delete_topics(self, names=None, entries=None, version=6, timeout_ms=30000):
        """v6: `entries` = [(name or None, 16-byte id or None)], or `names` (sent as entries with
        a zero id). v1: `names` in topic_names. Returns [(name, id, error, message)]."""
        if version >= 6:
            if entries is None:
                entries = [(n, None) for n in names]
            body = carray([cstr(n) + (i or ZERO_ID) + b"\x00" for n, i in entries]) + struct.pack(">i", timeout_ms) + b"\x00"
            r = self.call(20, version, body, True)
            r.i32()

            def item():
                name, tid, err, msg = r.cstr(), r.uuid(), r.i16(), r.cstr()
                r.tags()
                return (name, tid, err, msg)
            return r.carray(item)
        assert version <= 3
        body = array32([str16(n) for n in names]) + struct.pack(">i", timeout_ms)
        r = self.call(20, version, body, False)
        r.i32()
        return r.array32(lambda: (r.str16(), None, r.i16(), None))

    # ---- CreatePartitions (37)
    def create_partitions(self, topics, validate_only=False, version=3, timeout_ms=30000):
        """`topics` = [(name, count, assignments or None)], assignments = [[broker ids]].
        Returns [(name, error, message)]."""
        if version >= 2:
            def t(name, count, assignments):
                a = None if assignments is None else [carray([struct.pack(">i", b) for b in ids]) + b"\x00" for ids in assignments]
                return cstr(name) + struct.pack(">i", count) + carray(a) + b"\x00"
            body = carray([t(*x) for x in topics]) + struct.pack(">ib", timeout_ms, 1 if validate_only else 0) + b"\x00"
            r = self.call(37, version, body, True)
            r.i32()

            def item():
                v = (r.cstr(), r.i16(), r.cstr())
                r.tags()
                return v
            return r.carray(item)

        def t0(name, count, assignments):
            a = None if assignments is None else [array32([struct.pack(">i", b) for b in ids]) for ids in assignments]
            return str16(name) + struct.pack(">i", count) + array32(a)
        body = array32([t0(*x) for x in topics]) + struct.pack(">ib", timeout_ms, 1 if validate_only else 0)
        r = self.call(37, version, body, False)
        r.i32()
        return r.array32(lambda: (r.str16(), r.i16(), r.str16()))

    # ---- DescribeTopicPartitions (75)
    def describe_topic_partitions(self, names, limit=2000, cursor=None):
        """Returns (topics, next_cursor): topics = [dict], next_cursor = (topic, partition) or None."""
        body = carray([cstr(n) + b"\x00" for n in names]) + struct.pack(">i", limit)
        if cursor is None:
            body += struct.pack(">b", -1)
        else:
            body += struct.pack(">b", 1) + cstr(cursor[0]) + struct.pack(">i", cursor[1]) + b"\x00"
        body += b"\x00"
        r = self.call(75, 0, body, True)
        r.i32()

        def ints():
            return r.carray(r.i32)

        def partition():
            p = dict(error=r.i16(), index=r.i32(), leader=r.i32(), leader_epoch=r.i32(), replicas=ints(), isr=ints(),
                     elr=ints(), last_known_elr=ints(), offline=ints())
            r.tags()
            return p

        def topic():
            t = dict(error=r.i16(), name=r.cstr(), id=r.uuid(), internal=r.boolean(), partitions=r.carray(partition),
                     authorized_operations=r.i32())
            r.tags()
            return t
        topics = r.carray(topic)
        nxt = None
        if r.i8() >= 0:
            nxt = (r.cstr(), r.i32())
            r.tags()
        r.tags()
        return topics, nxt

    # ---- Metadata v12 (3) by topic id: the error code of the one topic
    def metadata_by_id(self, topic_id: bytes, name: str | None = None):
        # The Java admin client sends name "" (its generated default), not null, with the id.
        body = carray([topic_id + cstr(name) + b"\x00"]) + struct.pack(">bb", 0, 0) + b"\x00"
        r = self.call(3, 12, body, True)
        r.i32()

        def broker():
            v = (r.i32(), r.cstr(), r.i32(), r.cstr())
            r.tags()
            return v
        r.carray(broker)
        r.cstr()
        r.i32()

        def partition():
            v = (r.i16(), r.i32(), r.i32(), r.i32(), r.carray(r.i32), r.carray(r.i32), r.carray(r.i32))
            r.tags()
            return v

        def topic():
            v = dict(error=r.i16(), name=r.cstr(), id=r.uuid(), internal=r.boolean(), partitions=r.carray(partition),
                     ops=r.i32())
            r.tags()
            return v
        return r.carray(topic)


def kafka_id_text(topic_id: bytes) -> str:
    """A topic id as kafka-topics prints it (URL-safe base64 without padding)."""
    import base64
    return base64.urlsafe_b64encode(topic_id).decode().rstrip("=")


def random_id() -> bytes:
    return uuidlib.uuid4().bytes
