"""The topic admin APIs, as the wire tests and the side-by-side tests against a real Kafka
broker send them: DeleteTopics v1/v6, CreatePartitions v0/v3, DescribeTopicPartitions v0 and
Metadata v12 by topic id, as methods of AdminConn."""
from __future__ import annotations

import base64
import struct
import uuid as uuidlib

from .codec import array, compact_array, compact_string, string
from .conn import Conn

ZERO_ID = b"\x00" * 16


class AdminConn(Conn):
    # ---- DeleteTopics (20)
    def delete_topics(self, names=None, entries=None, version=6, timeout_ms=30000):
        """v6: `entries` = [(name or None, 16-byte id or None)], or `names` (sent as entries with
        a zero id). v1: `names` in topic_names. Returns [(name, id, error, message)]."""
        if version >= 6:
            if entries is None:
                entries = [(n, None) for n in names]
            body = compact_array([compact_string(n) + (i or ZERO_ID) + b"\x00" for n, i in entries])
            r = self.call(20, version, body + struct.pack(">i", timeout_ms) + b"\x00", True)
            r.int32()

            def item():
                name, tid, err, msg = r.compact_string(), r.uuid(), r.int16(), r.compact_string()
                r.tagged_fields()
                return (name, tid, err, msg)
            return r.compact_array(item)
        assert version <= 3
        r = self.call(20, version, array([string(n) for n in names]) + struct.pack(">i", timeout_ms), False)
        r.int32()
        return r.array32(lambda: (r.str16(), None, r.int16(), None))

    # ---- CreatePartitions (37)
    def create_partitions(self, topics, validate_only=False, version=3, timeout_ms=30000):
        """`topics` = [(name, count, assignments or None)], assignments = [[broker ids]].
        Returns [(name, error, message)]."""
        flex = version >= 2
        tag = b"\x00" if flex else b""

        def t(name, count, assignments):
            a = None if assignments is None else [array([struct.pack(">i", b) for b in ids], flex) + tag
                                                  for ids in assignments]
            return string(name, flex) + struct.pack(">i", count) + array(a, flex) + tag
        body = array([t(*x) for x in topics], flex) + struct.pack(">ib", timeout_ms, 1 if validate_only else 0) + tag
        r = self.call(37, version, body, flex)
        r.int32()

        def item():
            v = (r.string(), r.int16(), r.string())
            r.tags()
            return v
        return r.array(item)

    # ---- DescribeTopicPartitions (75)
    def describe_topic_partitions(self, names, limit=2000, cursor=None):
        """Returns (topics, next_cursor): topics = [dict], next_cursor = (topic, partition) or None."""
        body = compact_array([compact_string(n) + b"\x00" for n in names]) + struct.pack(">i", limit)
        if cursor is None:
            body += struct.pack(">b", -1)
        else:
            body += struct.pack(">b", 1) + compact_string(cursor[0]) + struct.pack(">i", cursor[1]) + b"\x00"
        r = self.call(75, 0, body + b"\x00", True)
        r.int32()

        def ints():
            return r.compact_array(r.int32)

        def partition():
            p = dict(error=r.int16(), index=r.int32(), leader=r.int32(), leader_epoch=r.int32(), replicas=ints(),
                     isr=ints(), elr=ints(), last_known_elr=ints(), offline=ints())
            r.tagged_fields()
            return p

        def topic():
            t = dict(error=r.int16(), name=r.compact_string(), id=r.uuid(), internal=r.boolean(),
                     partitions=r.compact_array(partition), authorized_operations=r.int32())
            r.tagged_fields()
            return t
        topics = r.compact_array(topic)
        nxt = None
        if r.int8() >= 0:
            nxt = (r.compact_string(), r.int32())
            r.tagged_fields()
        r.tagged_fields()
        return topics, nxt

    # ---- Metadata v12 (3) by topic id: the error code of the one topic
    def metadata_by_id(self, topic_id: bytes, name: str | None = None):
        # The Java admin client sends name "" (its generated default), not null, with the id.
        body = compact_array([topic_id + compact_string(name) + b"\x00"]) + struct.pack(">bb", 0, 0) + b"\x00"
        r = self.call(3, 12, body, True)
        r.int32()

        def broker():
            v = (r.int32(), r.compact_string(), r.int32(), r.compact_string())
            r.tagged_fields()
            return v
        r.compact_array(broker)
        r.compact_string()
        r.int32()

        def partition():
            v = (r.int16(), r.int32(), r.int32(), r.int32(), r.compact_array(r.int32), r.compact_array(r.int32),
                 r.compact_array(r.int32))
            r.tagged_fields()
            return v

        def topic():
            v = dict(error=r.int16(), name=r.compact_string(), id=r.uuid(), internal=r.boolean(),
                     partitions=r.compact_array(partition), ops=r.int32())
            r.tagged_fields()
            return v
        return r.compact_array(topic)


def kafka_id_text(topic_id: bytes) -> str:
    """A topic id as kafka-topics prints it (URL-safe base64 without padding)."""
    return base64.urlsafe_b64encode(topic_id).decode().rstrip("=")


def random_id() -> bytes:
    return uuidlib.uuid4().bytes


__all__ = ["ZERO_ID", "AdminConn", "kafka_id_text", "random_id"]
