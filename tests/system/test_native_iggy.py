"""Interop with a native Iggy client (docs/mapping.md), against the real bridge on a real iggy-server.

The native side is the official Python SDK `apache-iggy` 0.9.0 from PyPI (a binding of the Rust
SDK 0.11.0, released with Iggy server 0.9.0, wire protocol 0.11). Against the test server
(0.9.0-edge.5) its login, SendMessages and PollMessages work; its typed `create_topic` does not
(it sends an option key edge.5 does not know: "Unsupported option key"), so topics here are
always created through the bridge, which is the case under test anyway. It is independent of the
bridge's C++ Iggy client, so a mapping or codec bug in the bridge cannot hide itself.

The Kafka side is confluent-kafka (librdkafka) from the test venv. The Iggy stream is "kafka" and
the Iggy topic is named like the Kafka topic.
"""
import asyncio, struct, time, uuid
import pytest

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
iggy_sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from apache_iggy import Consumer, HeaderKey, HeaderValue, IggyClient, PollingStrategy, SendMessage  # noqa: E402

STREAM = "kafka"


def K(name):
    return HeaderKey.String(name)


def R(raw):
    return HeaderValue.Raw(raw)


async def _native_client(address):
    c = IggyClient(address)
    await c.connect()
    await c.login_user("iggy", "iggy")
    return c


def native_poll(address, topic, partition=0, count=100):
    """All messages of one partition, from offset 0, as (offset, payload, headers dict, id, origin µs)."""
    async def go():
        c = await _native_client(address)
        msgs = await c.poll_messages(STREAM, topic, consumer=Consumer.Single("kib-native-test"),
                                     polling_strategy=PollingStrategy.Offset(0), count=count, auto_commit=False,
                                     partition_id=partition)
        return [(m.offset(), m.payload(), dict(m.user_headers() or {}), m.id(), m.origin_timestamp()) for m in msgs]
    return asyncio.run(go())


def native_send(address, topic, messages, partition=0):
    """messages: [(payload bytes, {HeaderKey: HeaderValue})]. Returns the base offset Iggy confirmed."""
    async def go():
        c = await _native_client(address)
        r = await c.send_messages(STREAM, topic, partition, [SendMessage(p, h or None) for p, h in messages])
        return [x.base_offset for x in r.confirmations]
    return asyncio.run(go())


def create_topic_via_bridge(port, name, partitions=1):
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
    fut = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])[name]
    fut.result(timeout=30)


def kafka_produce(port, topic, records):
    """records: [dict(key=, value=, headers=, timestamp=)] to partition 0, in one flush; every delivery must succeed."""
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "linger.ms": 5, "acks": "all"})
    reports = []
    for r in records:
        kw = {k: v for k, v in r.items() if v is not None and k in ("key", "headers", "timestamp")}
        p.produce(topic, value=r.get("value"), partition=0, on_delivery=lambda err, msg: reports.append((err, msg)), **kw)
    assert p.flush(30) == 0
    assert [e for e, _ in reports if e is not None] == []
    return sorted(m.offset() for _, m in reports)


def kafka_consume(port, topic, expect, partition=0, timeout=30):
    """Reads partition `partition` from the beginning with assign (no group use) until `expect` records
    or end of partition after them."""
    c = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "unused-" + topic,
                     "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([ck.TopicPartition(topic, partition, ck.OFFSET_BEGINNING)])
    out, deadline = [], time.time() + timeout
    try:
        while time.time() < deadline:
            m = c.poll(1.0)
            if m is None:
                continue
            if m.error():
                if m.error().code() == ck.KafkaError._PARTITION_EOF and len(out) >= expect:
                    break
                if m.error().code() != ck.KafkaError._PARTITION_EOF:
                    raise AssertionError(f"consume error: {m.error()}")
                continue
            out.append(m)
    finally:
        c.close()
    return out


def test_kafka_records_read_natively_with_documented_payload_and_headers(bridge_on_iggy, iggy):
    port = bridge_on_iggy.port
    topic = "nat-k2i-" + uuid.uuid4().hex[:8]
    create_topic_via_bridge(port, topic)
    ts = 1_700_000_000_123
    records = [
        # key, value, ordered unique headers: the native form
        dict(key=b"order-1", value=b'{"id":1}', headers=[("source", b"kcat"), ("trace", b"t-1")], timestamp=ts),
        # no key, no headers: exactly one header, kafka.v
        dict(key=None, value=b"plain", timestamp=ts + 1),
        # tombstone with a key
        dict(key=b"order-1", value=None, timestamp=ts + 2),
        # empty value
        dict(key=None, value=b"", timestamp=ts + 3),
        # a real one-byte 00 value carries no marker
        dict(key=None, value=b"\x00", timestamp=ts + 4),
        # an empty key takes the envelope (docs/mapping.md's example, byte for byte)
        dict(key=b"", value=b"v", timestamp=ts + 5),
    ]
    assert kafka_produce(port, topic, records) == list(range(len(records)))

    got = native_poll(iggy.address, topic)
    assert [m[0] for m in got] == list(range(len(records)))
    v1 = {K("kafka.v"): R(b"\x01")}
    expected = [
        (b'{"id":1}', {K("kafka.h.source"): R(b"kcat"), K("kafka.h.trace"): R(b"t-1"), K("kafka.key"): R(b"order-1"), **v1}),
        (b"plain", dict(v1)),
        (b"\x00", {K("kafka.key"): R(b"order-1"), K("kafka.value"): R(b"null"), **v1}),
        (b"\x00", {K("kafka.value"): R(b"empty"), **v1}),
        (b"\x00", dict(v1)),
        (bytes.fromhex("03" "00000000" "01000000" "76" "00000000"), {K("kafka.envelope"): R(b"\x01"), **v1}),
    ]
    for (off, payload, headers, mid, origin), (want_payload, want_headers), rec in zip(got, expected, records):
        assert payload == want_payload, f"offset {off}"
        assert headers == want_headers, f"offset {off}"
        # Kind check, not only equality: every key String, every value Raw (no kafka.ts here).
        assert all(isinstance(k, HeaderKey.String) and isinstance(v, HeaderValue.Raw) for k, v in headers.items())
        assert mid == 0, f"offset {off}: Iggy message id {mid}"
        assert origin == rec["timestamp"] * 1000, f"offset {off}"

    # The same records read back through Kafka, unchanged (the round trip the native reads sit in).
    back = kafka_consume(port, topic, len(records))
    assert [(m.key(), m.value(), m.headers(), m.timestamp()[1]) for m in back] == \
        [(r["key"], r["value"], r.get("headers"), r["timestamp"]) for r in records]


def test_native_iggy_messages_are_consumed_by_kafka_clients(bridge_on_iggy, iggy):
    port = bridge_on_iggy.port
    topic = "nat-i2k-" + uuid.uuid4().hex[:8]
    create_topic_via_bridge(port, topic)
    # One record through the bridge first, so the bridge has read and cached this partition's end
    # before the native appends: it must still see what others append to Iggy.
    assert kafka_produce(port, topic, [dict(key=b"k0", value=b"from-kafka")]) == [0]
    before_us = int(time.time() * 1_000_000)
    native = [
        (b"native-1", {K("trace-id"): R(b"abc"), K("source"): HeaderValue.String("iggy-py"),
                       K("count"): HeaderValue.Int64(42)}),
        (b"native-2", None),
        # A native message may carry kafka.* names: without kafka.v they mean nothing and are
        # passed through as ordinary headers.
        (b"\x00", {K("kafka.key"): R(b"not-a-key"), K("kafka.value"): R(b"null")}),
    ]
    assert native_send(iggy.address, topic, native) == [1]
    after_us = int(time.time() * 1_000_000)

    got = kafka_consume(port, topic, 4)
    assert [m.offset() for m in got] == [0, 1, 2, 3]
    assert (got[0].key(), got[0].value(), got[0].headers()) == (b"k0", b"from-kafka", None)
    n1, n2, n3 = got[1:]
    assert n1.key() is None and n1.value() == b"native-1"
    # Every header becomes a Kafka header with the raw stored bytes, in stored (key) order;
    # an Int64 arrives as 8 little-endian bytes.
    assert n1.headers() == [("count", struct.pack("<q", 42)), ("source", b"iggy-py"), ("trace-id", b"abc")]
    assert (n2.key(), n2.value(), n2.headers()) == (None, b"native-2", None)
    assert n3.key() is None and n3.value() == b"\x00"
    assert n3.headers() == [("kafka.key", b"not-a-key"), ("kafka.value", b"null")]
    for m in (n1, n2, n3):
        ts_type, ts = m.timestamp()
        assert ts_type == ck.TIMESTAMP_CREATE_TIME
        # origin_timestamp (µs, set by the SDK at send) ÷ 1000
        assert before_us // 1000 - 1000 <= ts <= after_us // 1000 + 1000, (ts, before_us, after_us)

    # And the native reader agrees on what is stored (no bridge marker on native messages).
    stored = native_poll(iggy.address, topic)
    assert [(o, p) for o, p, *_ in stored] == [(0, b"from-kafka"), (1, b"native-1"), (2, b"native-2"), (3, b"\x00")]
    assert K("kafka.v") in stored[0][2] and all(K("kafka.v") not in h for _, _, h, *_ in stored[1:])
