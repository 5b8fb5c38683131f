"""CreateAcls (30), DescribeAcls (29) and DeleteAcls (31) v1-3 over a Conn, plus the minimal
Fetch v4 and Metadata v1 the ACL tests read errors from."""
from __future__ import annotations

import struct

from .client_apis import fetch_v4_body
from .codec import array, string

# Kafka's codes (org.apache.kafka.common.resource / .acl).
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
OP_ANY, ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 1, 2, 3, 4, 5, 6, 7, 8
PERM_ANY, DENY, ALLOW = 1, 2, 3


def create_acls(conn, creations, version=3):
    """creations = [(resource_type, name, pattern_type, principal, host, operation, permission)];
    returns [(error, message)]."""
    flex = version >= 2
    tag = b"\x00" if flex else b""
    items = [struct.pack(">b", t) + string(n, flex) + struct.pack(">b", p) + string(pr, flex) + string(h, flex) +
             struct.pack(">bb", op, perm) + tag for t, n, p, pr, h, op, perm in creations]
    r = conn.call(30, version, array(items, flex) + tag, flex)
    r.int32()

    def item():
        v = (r.int16(), r.string())
        r.tags()
        return v
    return r.array(item)


def _filter(f, flex):
    t, n, p, pr, h, op, perm = f
    return (struct.pack(">b", t) + string(n, flex) + struct.pack(">b", p) + string(pr, flex) + string(h, flex) +
            struct.pack(">bb", op, perm))


def describe_acls(conn, f=(ANY, None, ANY, None, None, OP_ANY, PERM_ANY), version=3):
    """Returns (error, message, {(resource_type, name, pattern_type): {(principal, host, op, perm)}})."""
    flex = version >= 2
    r = conn.call(29, version, _filter(f, flex) + (b"\x00" if flex else b""), flex)
    r.int32()
    err = r.int16()
    msg = r.string()
    out = {}

    def acl():
        v = (r.string(), r.string(), r.int8(), r.int8())
        r.tags()
        return v

    def resource():
        key = (r.int8(), r.string(), r.int8())
        out[key] = set(r.array(acl))
        r.tags()
    r.array(resource)
    return err, msg, out


def delete_acls(conn, filters, version=3):
    """Returns [(error, message, {(resource_type, name, pattern_type, principal, host, op, perm)})]."""
    flex = version >= 2
    tag = b"\x00" if flex else b""
    r = conn.call(31, version, array([_filter(f, flex) + tag for f in filters], flex) + tag, flex)
    r.int32()

    def matching():
        r.int16()
        r.string()
        v = (r.int8(), r.string(), r.int8(), r.string(), r.string(), r.int8(), r.int8())
        r.tags()
        return v

    def result():
        v = (r.int16(), r.string(), set(r.array(matching)))
        r.tags()
        return v
    return r.array(result)


def fetch_v4(conn, topic: str, partition: int = 0, offset: int = 0):
    """One partition, no wait; returns (error, high watermark, record bytes)."""
    r = conn.call(1, 4, fetch_v4_body([(topic, partition, offset, 1 << 20)], min_bytes=0, max_bytes=1 << 20))
    r.int32()  # throttle
    r.int32()  # topics
    r.str16()
    r.int32()  # partitions
    r.int32()  # index
    err, hw = r.int16(), r.int64()
    r.int64()  # last stable offset
    r.array32(lambda: r.unpack("qq"))  # aborted transactions
    records = r.int32()
    return err, hw, max(records, 0)


def metadata_v1(conn, topics=None):
    """Returns {name: error} (topics=None: every topic)."""
    r = conn.call(3, 1, array(None if topics is None else [string(t) for t in topics]))
    r.array32(lambda: (r.int32(), r.str16(), r.int32(), r.str16()))
    r.int32()  # controller

    def partition():
        v = r.unpack("hii")
        r.array32(r.int32)
        r.array32(r.int32)
        return v

    def topic():
        err, name = r.int16(), r.str16()
        r.boolean()
        r.array32(partition)
        return name, err
    return dict(r.array32(topic))


__all__ = ["ANY", "MATCH", "LITERAL", "PREFIXED", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "OP_ANY", "ALL",
           "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "PERM_ANY", "DENY", "ALLOW", "create_acls",
           "describe_acls", "delete_acls", "fetch_v4", "metadata_v1"]
