"""Hand-written encoders and decoders for CreateAcls (30), DescribeAcls (29) and DeleteAcls (31)
v1-3, plus the minimal Fetch v4 and Metadata v1 the ACL tests read errors from; independent of
the bridge's generated codecs (like kafka_wire.py and admin_wire.py)."""
from __future__ import annotations

import struct

from admin_wire import Conn, array32, carray, cstr, str16

# Kafka's codes (org.apache.kafka.common.resource / .acl).
ANY, MATCH, LITERAL, PREFIXED = 1, 2, 3, 4
TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID = 2, 3, 4, 5
OP_ANY, ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 1, 2, 3, 4, 5, 6, 7, 8
PERM_ANY, DENY, ALLOW = 1, 2, 3


def _s(s, flexible):
    return cstr(s) if flexible else str16(s)


def _arr(items, flexible):
    return carray(items) if flexible else array32(items)


def create_acls(conn: Conn, creations, version=3):
    """creations = [(resource_type, name, pattern_type, principal, host, operation, permission)];
    returns [(error, message)]."""
    flex = version >= 2
    tag = b"\x00" if flex else b""
    items = [struct.pack(">b", t) + _s(n, flex) + struct.pack(">b", p) + _s(pr, flex) + _s(h, flex) +
             struct.pack(">bb", op, perm) + tag for t, n, p, pr, h, op, perm in creations]
    r = conn.call(30, version, _arr(items, flex) + tag, flex)
    r.i32()

    def item():
        v = (r.i16(), r.cstr() if flex else r.str16())
        if flex:
            r.tags()
        return v
    return r.carray(item) if flex else r.array32(item)


def _filter(f, flex):
    t, n, p, pr, h, op, perm = f
    return (struct.pack(">b", t) + _s(n, flex) + struct.pack(">b", p) + _s(pr, flex) + _s(h, flex) +
            struct.pack(">bb", op, perm))


def describe_acls(conn: Conn, f=(ANY, None, ANY, None, None, OP_ANY, PERM_ANY), version=3):
    """Returns (error, message, {(resource_type, name, pattern_type): {(principal, host, op, perm)}})."""
    flex = version >= 2
    r = conn.call(29, version, _filter(f, flex) + (b"\x00" if flex else b""), flex)
    r.i32()
    err = r.i16()
    msg = r.cstr() if flex else r.str16()
    s = (r.cstr if flex else r.str16)
    arr = (r.carray if flex else r.array32)
    out = {}

    def acl():
        v = (s(), s(), r.i8(), r.i8())
        if flex:
            r.tags()
        return v

    def resource():
        key = (r.i8(), s(), r.i8())
        out[key] = set(arr(acl))
        if flex:
            r.tags()
    arr(resource)
    return err, msg, out


def delete_acls(conn: Conn, filters, version=3):
    """Returns [(error, message, {(resource_type, name, pattern_type, principal, host, op, perm)})]."""
    flex = version >= 2
    tag = b"\x00" if flex else b""
    r = conn.call(31, version, _arr([_filter(f, flex) + tag for f in filters], flex) + tag, flex)
    r.i32()
    s = (r.cstr if flex else r.str16)
    arr = (r.carray if flex else r.array32)

    def matching():
        r.i16()
        s()
        v = (r.i8(), s(), r.i8(), s(), s(), r.i8(), r.i8())
        if flex:
            r.tags()
        return v

    def result():
        v = (r.i16(), s(), set(arr(matching)))
        if flex:
            r.tags()
        return v
    return arr(result)


def fetch_v4(conn: Conn, topic: str, partition: int = 0, offset: int = 0):
    """One partition, no wait; returns (error, high watermark, record bytes)."""
    body = struct.pack(">iiiib", -1, 0, 0, 1 << 20, 0)
    body += array32([str16(topic) + array32([struct.pack(">iqi", partition, offset, 1 << 20)])])
    r = conn.call(1, 4, body, False)
    r.i32()  # throttle
    r.i32()  # topics
    r.str16()
    r.i32()  # partitions
    r.i32()  # index
    err, hw = r.i16(), r.take(">q")
    r.take(">q")  # last stable offset
    n = r.i32()
    for _ in range(max(n, 0)):
        r.take(">q")
        r.take(">q")
    records = r.i32()
    return err, hw, max(records, 0)


def metadata_v1(conn: Conn, topics=None):
    """Returns {name: error} (topics=None: every topic)."""
    r = conn.call(3, 1, array32(None if topics is None else [str16(t) for t in topics]), False)
    r.array32(lambda: (r.i32(), r.str16(), r.i32(), r.str16()))
    r.i32()  # controller

    def partition():
        v = (r.i16(), r.i32(), r.i32())
        r.array32(r.i32)
        r.array32(r.i32)
        return v

    def topic():
        err, name = r.i16(), r.str16()
        r.boolean()
        r.array32(partition)
        return name, err
    return dict(r.array32(topic))
