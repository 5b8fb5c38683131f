"""The requests of a producer and a consumer, at the versions the tests send: ApiVersions,
Metadata v1/v4, Produce v7, Fetch v4, ListOffsets v1, and the group and idempotence calls
(OffsetCommit v2, OffsetFetch v1, InitProducerId v1), and the transaction calls a test sends by
hand (AddPartitionsToTxn v1 and the brokers' v4+, EndTxn v1).

Builders named after a request and version return a whole frame (`request`); `parse_*` read a
whole answer frame, correlation id first. The helpers that take a Conn send and parse."""
from __future__ import annotations

import struct

from .codec import TAGS, Reader, array, compact_array, compact_string, request, string
from .conn import recv_frame

API_VERSIONS, METADATA, PRODUCE, FETCH, LIST_OFFSETS = 18, 3, 0, 1, 2
INT32_MAX = 2**31 - 1


# ---- ApiVersions (18) ----------------------------------------------------------------------------

def api_versions_request(version: int, corr: int) -> bytes:
    body = b""
    if version >= 3:
        body = string("kib-test", True) + string("1.0", True) + b"\x00"
    return request(API_VERSIONS, version, corr, body, flexible=version >= 3)


def parse_api_versions(frame: bytes, version: int) -> tuple[int, int, dict[int, tuple[int, int]]]:
    """The response header is v0 at every version. Returns (corr, error, {key: (min, max)})."""
    r = Reader(frame, 0, flexible=version >= 3)
    corr, err = r.int32(), r.int16()
    apis = {}
    for _ in range(r.length()):
        k, lo, hi = r.unpack("hhh")
        r.tags()
        apis[k] = (lo, hi)
    return corr, err, apis


# ---- Metadata (3) --------------------------------------------------------------------------------

def metadata_v4_body(topics: list[str] | None = None, auto_create: bool = False) -> bytes:
    """Metadata v4's body: `topics` (None: all of them) and allow_auto_topic_creation."""
    return array(None if topics is None else [string(t) for t in topics]) + (b"\x01" if auto_create else b"\x00")


def metadata_v4(corr: int, names: list[str], auto_create: bool = True) -> bytes:
    return request(METADATA, 4, corr, metadata_v4_body(names, auto_create))


def _metadata_brokers(r: Reader) -> list[tuple[int, str, int]]:
    """The brokers of a classic (v1-v8) Metadata answer: [(node id, host, port)], racks skipped."""
    def broker():
        node, host, port = r.int32(), r.str16(), r.int32()
        r.str16()  # rack
        return node, host, port
    return r.array32(broker)


def parse_metadata_v4(frame: bytes) -> list[tuple[int, str, int]]:
    """[(error, name, partition count)] of a v4 Metadata answer."""
    r = Reader(frame, 8)  # correlation id, throttle
    _metadata_brokers(r)
    r.str16()  # cluster id
    r.int32()  # controller id

    def partition():
        r.unpack("hii")  # error, index, leader
        r.array32(r.int32)  # replicas
        r.array32(r.int32)  # isr

    def topic():
        err, name = r.int16(), r.str16()
        r.boolean()  # is_internal
        return err, name, len(r.array32(partition))
    return r.array32(topic)


def parse_metadata_v4_brokers(frame: bytes) -> list[tuple[int, str, int]]:
    """[(node id, host, port)] of a v4 Metadata answer."""
    return _metadata_brokers(Reader(frame, 8))


def create_topic(sock, name: str, corr: int = 1, check: bool = True) -> int | None:
    """Creates `name` by asking Metadata v4 for it with auto-creation on. `check`: asserts it was
    answered without error and returns its partition count; else the answer goes unread."""
    sock.sendall(metadata_v4(corr, [name]))
    frame = recv_frame(sock)
    if not check:
        return None
    (err, got, parts), = parse_metadata_v4(frame)
    assert (err, got) == (0, name)
    return parts


# ---- Produce (0) ---------------------------------------------------------------------------------

def produce_v7_body(topic: str, parts: list[tuple[int, bytes]], transactional_id: str | None = None,
                    acks: int = 1) -> bytes:
    """Produce v7 of one topic, `parts` = [(partition, records bytes)] (repeats allowed)."""
    body = string(transactional_id) + struct.pack(">hi", acks, 30000)
    return body + array([string(topic) + array([struct.pack(">ii", idx, len(recs)) + recs for idx, recs in parts])])


def produce_v7_partitions(corr: int, topic: str, parts: list[tuple[int, bytes]]) -> bytes:
    """Produce v7, acks=1, one topic, `parts` = [(partition, records bytes)]."""
    return request(PRODUCE, 7, corr, produce_v7_body(topic, parts))


def produce_v7(corr: int, topic: str, partition: int, records: bytes) -> bytes:
    """Produce v7, acks=1, one topic and one partition."""
    return produce_v7_partitions(corr, topic, [(partition, records)])


def parse_produce_v7_partitions(frame: bytes) -> tuple[int, list[tuple[int, int]]]:
    """(corr, [(partition, error)]) of the first topic of a Produce v7 answer."""
    r = Reader(frame)
    corr = r.int32()
    r.int32()  # topics
    r.str16()
    out = []
    for _ in range(r.int32()):
        idx, err, _base, _append_time, _log_start = r.unpack("ihqqq")
        out.append((idx, err))
    return corr, out


def parse_produce_v7(frame: bytes) -> tuple[int, int, int]:
    """(corr, error, base offset) of the first partition of the first topic."""
    r = Reader(frame)
    corr = r.int32()
    r.int32()  # topics
    r.str16()
    r.int32()  # partitions
    _idx, err, base = r.unpack("ihq")
    return corr, err, base


# ---- Fetch (1) -----------------------------------------------------------------------------------

def fetch_v4_body(entries, max_wait_ms: int = 0, min_bytes: int = 1, max_bytes: int = INT32_MAX,
                  isolation: int = 0) -> bytes:
    """`entries`: [(topic, partition, fetch_offset, partition_max_bytes)], one topic entry each;
    `isolation` 1: read_committed."""
    body = struct.pack(">iiiib", -1, max_wait_ms, min_bytes, max_bytes, isolation)
    return body + array([string(topic) + array([struct.pack(">iqi", partition, offset, pmb)])
                         for topic, partition, offset, pmb in entries])


def fetch_v4(corr: int, entries, max_wait_ms: int = 0, min_bytes: int = 1, max_bytes: int = INT32_MAX) -> bytes:
    return request(FETCH, 4, corr, fetch_v4_body(entries, max_wait_ms, min_bytes, max_bytes))


def fetch_v4_one_topic(corr: int, topic: str, partitions, max_wait_ms: int = 0, max_bytes: int = INT32_MAX) -> bytes:
    """One topic entry naming `partitions`: [(partition, fetch_offset, partition_max_bytes)]."""
    body = struct.pack(">iiiib", -1, max_wait_ms, 1, max_bytes, 0)
    body += array([string(topic) + array([struct.pack(">iqi", *p) for p in partitions])])
    return request(FETCH, 4, corr, body)


def parse_fetch_v4(frame: bytes) -> list[tuple[str, int, int, int, bytes]]:
    """[(topic, partition, error, high_watermark, records bytes)] of a v4 Fetch answer."""
    r = Reader(frame, 8)  # correlation id, throttle
    out = []
    for _ in range(r.int32()):
        topic = r.str16()
        for _ in range(r.int32()):
            idx, err, hw, _lso = r.unpack("ihqq")
            r.array32(lambda: r.unpack("qq"))  # aborted transactions
            records = r.nbytes() or b""
            out.append((topic, idx, err, hw, records))
    return out


# ---- ListOffsets (2) -----------------------------------------------------------------------------

def list_offsets_v1(corr: int, topic: str, partitions, timestamp: int = -1) -> bytes:
    body = struct.pack(">i", -1) + array([string(topic) + array([struct.pack(">iq", p, timestamp) for p in partitions])])
    return request(LIST_OFFSETS, 1, corr, body)


def parse_list_offsets_v1(frame: bytes) -> list[tuple[int, int, int]]:
    """[(partition, error, offset)] of the one topic."""
    r = Reader(frame, 4)
    (_name, parts), = r.array32(lambda: (r.str16(), r.array32(lambda: r.unpack("ihqq"))))
    return [(p, e, o) for p, e, _ts, o in parts]


def latest_offset(sock, topic: str, corr: int = 900) -> int:
    """The log end offset of partition 0 (ListOffsets v1, latest); asserts no error."""
    sock.sendall(list_offsets_v1(corr, topic, [0]))
    (_p, err, off), = parse_list_offsets_v1(recv_frame(sock))
    assert err == 0
    return off


# ---- groups and idempotence, over a Conn ----------------------------------------------------------

def metadata_v1_broker_count(conn) -> int:
    """Metadata v1 for no topics (brokers and controller only); returns the broker count."""
    return conn.call(METADATA, 1, struct.pack(">i", 0)).int32()


def api_versions_v0(conn) -> int:
    """ApiVersions v0's error code."""
    return conn.call(API_VERSIONS, 0, b"").int16()


def _per_partition(r: Reader, partition) -> dict:
    """Walks a classic [topics [partitions]] answer; `partition()` reads one entry as (partition, value)."""
    out = {}
    for _ in range(r.int32()):
        r.str16()
        for _ in range(r.int32()):
            p, value = partition()
            out[p] = value
    return out


def offset_commit_v2(conn, group: str, topic: str, offsets: dict[int, int], metadata: str | None = "") -> dict[int, int]:
    """A simple (generation -1, no member) commit; returns partition -> error code."""
    parts = [struct.pack(">iq", p, o) + string(metadata) for p, o in sorted(offsets.items())]
    body = (string(group) + struct.pack(">i", -1) + string("") + struct.pack(">q", -1) +
            array([string(topic) + array(parts)]))
    r = conn.call(8, 2, body)
    return _per_partition(r, lambda: r.unpack("ih"))


def offset_fetch_v1(conn, group: str, topic: str, partitions) -> dict[int, tuple[int, int]]:
    """partition -> (committed offset or -1, error code)."""
    body = string(group) + array([string(topic) + array([struct.pack(">i", p) for p in partitions])])
    r = conn.call(9, 1, body)

    def partition():
        p, off = r.int32(), r.int64()
        r.str16()  # metadata
        return p, (off, r.int16())
    return _per_partition(r, partition)


def init_producer_id_v1(conn, transactional_id: str | None = None, timeout_ms: int = 60000) -> tuple[int, int, int]:
    """(error code, producer id, epoch)."""
    r = conn.call(22, 1, string(transactional_id) + struct.pack(">i", timeout_ms))
    _throttle, err, pid, epoch = r.unpack("ihqh")
    return err, pid, epoch


def add_partitions_to_txn_v1(conn, transactional_id: str, pid: int, epoch: int,
                             topics: dict[str, list[int]]) -> dict[tuple[str, int], int]:
    """A client's AddPartitionsToTxn (v1): {(topic, partition): error code}."""
    body = string(transactional_id) + struct.pack(">qh", pid, epoch)
    body += array([string(t) + array([struct.pack(">i", p) for p in parts]) for t, parts in topics.items()])
    r = conn.call(24, 1, body)
    r.int32()  # throttle
    out = {}
    for t, results in r.array32(lambda: (r.str16(), r.array32(lambda: (r.int32(), r.int16())))):
        for p, err in results:
            out[(t, p)] = err
    return out


def add_partitions_to_txn_batched(conn, version: int, transactions: list[tuple]) -> tuple[int, dict]:
    """A broker's AddPartitionsToTxn (v4+, KIP-890): `transactions` are (transactional id,
    producer id, epoch, verify_only, {topic: [partitions]}). Returns (top-level error code,
    {transactional id: {(topic, partition): error code}})."""
    def txn(tid, pid, epoch, verify, topics):
        tps = [compact_string(t) + compact_array([struct.pack(">i", p) for p in parts]) + TAGS
               for t, parts in topics.items()]
        return compact_string(tid) + struct.pack(">qh?", pid, epoch, verify) + compact_array(tps) + TAGS
    r = conn.call(24, version, compact_array([txn(*t) for t in transactions]) + TAGS, flexible=True)
    r.int32()  # throttle
    error = r.int16()

    def topic():
        name = r.compact_string()
        parts = r.compact_array(lambda: (r.int32(), r.int16(), r.tagged_fields())[:2])
        r.tagged_fields()
        return name, parts

    def result():
        tid = r.compact_string()
        topics = r.compact_array(topic) or []
        r.tagged_fields()
        return tid, {(t, p): err for t, parts in topics for p, err in parts}
    results = dict(r.compact_array(result) or [])
    r.tagged_fields()
    return error, results


def end_txn_v1(conn, transactional_id: str, pid: int, epoch: int, commit: bool) -> int:
    r = conn.call(26, 1, string(transactional_id) + struct.pack(">qh?", pid, epoch, commit))
    r.int32()
    return r.int16()


__all__ = ["API_VERSIONS", "METADATA", "PRODUCE", "FETCH", "LIST_OFFSETS", "INT32_MAX", "api_versions_request",
           "parse_api_versions", "metadata_v4_body", "metadata_v4", "parse_metadata_v4", "parse_metadata_v4_brokers",
           "create_topic", "produce_v7_body", "produce_v7_partitions", "produce_v7", "parse_produce_v7_partitions", "parse_produce_v7",
           "fetch_v4_body", "fetch_v4", "fetch_v4_one_topic", "parse_fetch_v4", "list_offsets_v1", "parse_list_offsets_v1",
           "latest_offset", "metadata_v1_broker_count", "api_versions_v0", "offset_commit_v2", "offset_fetch_v1",
           "init_producer_id_v1", "add_partitions_to_txn_v1", "add_partitions_to_txn_batched", "end_txn_v1"]
