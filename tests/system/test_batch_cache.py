"""The produced-batch cache (src/bridge/log/batch_cache.h), against the real bridge on a real
iggy-server. Two bridges share one Iggy stream: "cached" (the default [limits]
produced_batch_cache_bytes) takes the produces, "rebuilt" (produced_batch_cache_bytes = 0) reads
the same partitions from Iggy and rebuilds their batches. Raw Fetch v4 requests (harness/kafka_wire,
not the bridge's codecs) read both, and its v2 batch decoder compares them:

* a Fetch of recent data from the producing bridge answers with the producer's own batches
  (zstd and the producer id kept, the CRC valid, base offsets patched) and the same records,
  offsets, timestamps, keys and headers as the rebuilt batches; kib_fetch_cache_hits_total counts it;
* records a native Iggy producer appended between two Kafka produces are never served from the
  cache: the cached run stops before them, and the rest is read from Iggy;
* after DeleteRecords no cached batch is served again (the first read starts at the new log
  start, from Iggy), and below it is OFFSET_OUT_OF_RANGE;
* a deleted and recreated topic answers its new records, never the old topic's cached batches;
* with the cache off, the same reads are all misses and still correct.
"""
import struct, time, uuid

import pytest

from harness.kafka_wire import array, connect, decode_batches, fetch_v4, parse_fetch_v4, recv_frame, request, string
from test_amplification import metric, with_http

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
zstandard = pytest.importorskip("zstandard", reason="SKIPPED: zstandard not installed (tests/clients/setup.sh)")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


# ---- helpers ------------------------------------------------------------------------------------

def fetch_once(bridge, topic, offset, max_bytes=1 << 20):
    """(error, high watermark, decoded batches) of one Fetch v4 of partition 0 at `offset`."""
    s = connect(bridge.port)
    try:
        s.sendall(fetch_v4(1, [(topic, 0, offset, max_bytes)], max_wait_ms=0))
        (_t, _p, err, hw, records), = parse_fetch_v4(recv_frame(s))
    finally:
        s.close()
    return err, hw, decode_batches(records)


def read_all(bridge, topic, end):
    """Every record of partition 0 from its log start up to `end`, fetch after fetch, and the
    batches each fetch answered (to tell cached from rebuilt)."""
    offset, records, answers = 0, [], []
    deadline = time.time() + 30
    while offset < end and time.time() < deadline:
        err, _hw, batches = fetch_once(bridge, topic, offset)
        assert err == 0, err
        answers.append(batches)
        for _h, recs in batches:
            for r in recs:
                if r[0] >= offset:
                    records.append(r)
        if records:
            offset = records[-1][0] + 1
    return records, answers


def produce(port, topic, n, tag, compression="zstd", idempotent=True):
    p = ck.Producer({"bootstrap.servers": "127.0.0.1:%d" % port, "compression.type": compression,
                     "enable.idempotence": idempotent, "linger.ms": 20, "acks": "all"})
    for i in range(n):
        headers = [("h", b"%s-%d" % (tag.encode(), i)), ("empty", b"")] if i % 3 else None
        key = None if i % 5 == 0 else b"k%d" % (i % 7)
        p.produce(topic, value=b'{"tag": "%s", "i": %d, "pad": "%s"}' % (tag.encode(), i, b"x" * (i % 50)),
                  key=key, headers=headers, partition=0, timestamp=1_760_000_000_000 + i)
    assert p.flush(30) == 0


def create(port, topic):
    admin = AdminClient({"bootstrap.servers": "127.0.0.1:%d" % port})
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(timeout=30)


def delete(port, topic):
    admin = AdminClient({"bootstrap.servers": "127.0.0.1:%d" % port})
    admin.delete_topics([topic])[topic].result(timeout=30)


def delete_records_v0(port, topic, offset):
    body = array([string(topic) + array([struct.pack(">iq", 0, offset)])]) + struct.pack(">i", 30000)
    s = connect(port)
    try:
        s.sendall(request(21, 0, 7, body))
        frame = recv_frame(s)
    finally:
        s.close()
    pos = 8 + 4  # correlation id, throttle, topic count
    (tl,) = struct.unpack_from(">h", frame, pos)
    pos += 2 + tl + 4
    _idx, low, err = struct.unpack_from(">iqh", frame, pos)
    return err, low


@pytest.fixture
def bridges(bridge_factory, iggy):
    cached = with_http(bridge_factory(iggy_address=iggy.address))
    rebuilt = with_http(bridge_factory("[limits]\nproduced_batch_cache_bytes = 0\n", iggy_address=iggy.address))
    return cached.start().wait_ready(), rebuilt.start().wait_ready()


def hits(bridge):
    return metric(bridge, "kib_fetch_cache_hits_total") or 0.0


# ---- tests --------------------------------------------------------------------------------------

def test_recent_batches_are_answered_as_produced_and_equal_the_rebuilt_ones(bridges):
    cached, rebuilt = bridges
    topic = "cache-" + uuid.uuid4().hex[:8]
    create(cached.port, topic)
    produce(cached.port, topic, 500, "a")
    before = hits(cached)
    got, answers = read_all(cached, topic, 500)
    want, rebuilt_answers = read_all(rebuilt, topic, 500)
    assert len(got) == 500
    assert got == want  # offsets, timestamps, keys (null too), values, headers (empty values too)
    assert [r[0] for r in got] == list(range(500))
    assert hits(cached) > before
    cached_batches = [h for a in answers for h, _ in a]
    # The producer's batches: zstd, its producer id and sequences, leader epoch 0, offsets Iggy gave.
    assert all(h["codec"] == 4 for h in cached_batches), cached_batches[:3]
    assert all(h["producer_id"] >= 0 for h in cached_batches)
    assert [h["base_sequence"] for h in cached_batches] == [h["base_offset"] for h in cached_batches]
    assert all(h["epoch"] == 0 for h in cached_batches)
    # The rebuilt ones: uncompressed, and never from a cache.
    assert all(h["codec"] == 0 for a in rebuilt_answers for h, _ in a)
    assert hits(rebuilt) == 0
    assert metric(rebuilt, "kib_fetch_cache_misses_total") > 0
    assert metric(cached, "kib_fetch_cache_bytes") > 0
    # A fetch inside a cached batch answers the whole batch, as Kafka does; the client skips ahead.
    mid = cached_batches[0]["base_offset"] + cached_batches[0]["count"] // 2
    if cached_batches[0]["count"] > 1:
        err, _hw, batches = fetch_once(cached, topic, mid)
        assert err == 0 and batches[0][0]["base_offset"] == cached_batches[0]["base_offset"]


def test_native_iggy_records_between_kafka_produces_are_read_from_iggy(bridges, iggy):
    pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")
    from test_native_iggy import native_send
    cached, rebuilt = bridges
    topic = "cache-native-" + uuid.uuid4().hex[:8]
    create(cached.port, topic)
    produce(cached.port, topic, 40, "before", idempotent=False)
    native_send(iggy.address, topic, [(b"native-%d" % i, None) for i in range(5)])
    produce(cached.port, topic, 40, "after", idempotent=False)
    # The cached bridge learns the native append when it reads; each fetch moves on from the last.
    got, answers = read_all(cached, topic, 85)
    want, _ = read_all(rebuilt, topic, 85)
    assert len(got) == 85 and got == want
    natives = [r for r in got if r[3] and r[3].startswith(b"native-")]
    assert [r[0] for r in natives] == list(range(40, 45))
    # No answer mixed a cached (zstd) batch with the native records: they came rebuilt.
    for a in answers:
        for h, recs in a:
            if any(r[3].startswith(b"native-") for r in recs):
                assert h["codec"] == 0 and h["producer_id"] == -1


def test_delete_records_and_topic_deletion_drop_the_cached_batches(bridges):
    cached, rebuilt = bridges
    topic = "cache-del-" + uuid.uuid4().hex[:8]
    create(cached.port, topic)
    produce(cached.port, topic, 200, "old")
    err, _hw, batches = fetch_once(cached, topic, 0)
    assert err == 0 and batches[0][0]["codec"] == 4  # cached before the delete
    err, low = delete_records_v0(cached.port, topic, 120)
    assert (err, low) == (0, 120)
    before = hits(cached)
    err, _hw, batches = fetch_once(cached, topic, 120)
    assert err == 0 and batches
    assert batches[0][1][0][0] == 120  # starts at the new log start: rebuilt from Iggy, not a cached batch from before
    assert all(h["codec"] == 0 for h, _ in batches)
    assert hits(cached) == before
    assert fetch_once(cached, topic, 10)[0] == 1  # OFFSET_OUT_OF_RANGE below the log start

    # Deleted and created again: offsets start at 0 again, and only the new records are answered.
    delete(cached.port, topic)
    create(cached.port, topic)
    produce(cached.port, topic, 30, "new")
    got, _ = read_all(cached, topic, 30)
    assert len(got) == 30
    assert all(b'"tag": "new"' in r[3] for r in got)
    want, _ = read_all(rebuilt, topic, 30)
    assert got == want
