"""Placeholders of aborted records (docs/mapping.md, "Aborted records"), read by real Kafka clients.

An aborted transaction's records keep their offsets in Iggy as placeholder messages, so the records
after them keep theirs. Here the placeholders are written by the official Iggy Python SDK exactly as
docs/mapping.md specifies them, between records produced through the bridge, and read back through
the bridge by librdkafka (confluent-kafka) and kafka-python at both isolation levels: each client
gets the records at their offsets, none of the placeholders' data, and ends positioned at the high
watermark even when the partition ends in placeholders (a fetch of nothing but gaps would leave a
consumer fetching the same offset forever).
"""
import time, uuid
import pytest

from test_native_iggy import K, R, STREAM, create_topic_via_bridge, kafka_produce, native_poll, native_send  # noqa: F401

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
iggy_sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")
kafka_python = pytest.importorskip("kafka", reason="SKIPPED: kafka-python not installed (tests/clients/setup.sh)")
from apache_iggy import HeaderValue  # noqa: E402


def placeholders(count, producer_id, epoch):
    headers = {K("kafka.v"): R(b"\x01"), K("kafka.value"): R(b"null"),
               K("kib.aborted"): HeaderValue.String(f"{producer_id}/{epoch}")}
    return [(b"\x00", dict(headers)) for _ in range(count)]


def history(port, address, topic):
    """0-1 records, 2-4 aborted by 77/2, 5 a record, 6-7 aborted by 78/0: high watermark 8."""
    create_topic_via_bridge(port, topic)
    assert kafka_produce(port, topic, [dict(value=b"a"), dict(value=b"b")]) == [0, 1]
    assert native_send(address, topic, placeholders(3, 77, 2)) == [2]
    assert kafka_produce(port, topic, [dict(key=b"k", value=b"c")]) == [5]
    assert native_send(address, topic, placeholders(2, 78, 0)) == [6]
    assert [m[0] for m in native_poll(address, topic)] == list(range(8))


def librdkafka_read(port, topic, isolation, start=ck.OFFSET_BEGINNING):
    """(offset, key, value) of what a librdkafka consumer reads from `start` until it is positioned
    at the high watermark (8), and that position."""
    c = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "ph-" + uuid.uuid4().hex[:6],
                     "enable.auto.commit": False, "enable.partition.eof": True, "isolation.level": isolation})
    tp = ck.TopicPartition(topic, 0, start)
    c.assign([tp])
    got, deadline = [], time.time() + 30
    try:
        while time.time() < deadline:
            m = c.poll(1.0)
            if m is None:
                continue
            if m.error():
                assert m.error().code() == ck.KafkaError._PARTITION_EOF, str(m.error())
                if c.position([ck.TopicPartition(topic, 0)])[0].offset == 8:
                    break
                continue
            got.append((m.offset(), m.key(), m.value()))
        position = c.position([ck.TopicPartition(topic, 0)])[0].offset
    finally:
        c.close()
    return got, position


def kafka_python_read(port, topic, isolation):
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{port}", enable_auto_commit=False, group_id=None,
                      isolation_level=isolation, consumer_timeout_ms=3000, auto_offset_reset="earliest")
    tp = TopicPartition(topic, 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got, deadline = [], time.time() + 30
    try:
        while time.time() < deadline and c.position(tp) < 8:
            for tp_, msgs in c.poll(timeout_ms=1000).items():
                got.extend((m.offset, m.key, m.value) for m in msgs)
        position = c.position(tp)
    finally:
        c.close()
    return got, position


EXPECTED = [(0, None, b"a"), (1, None, b"b"), (5, b"k", b"c")]


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_librdkafka_reads_around_aborted_placeholders_and_ends_at_the_high_watermark(bridge_on_iggy, iggy, isolation):
    topic = "ph-rd-" + uuid.uuid4().hex[:8]
    history(bridge_on_iggy.port, iggy.address, topic)
    got, position = librdkafka_read(bridge_on_iggy.port, topic, isolation)
    assert got == EXPECTED
    assert position == 8


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_kafka_python_reads_around_aborted_placeholders_and_ends_at_the_high_watermark(bridge_on_iggy, iggy,
                                                                                      isolation):
    topic = "ph-kp-" + uuid.uuid4().hex[:8]
    history(bridge_on_iggy.port, iggy.address, topic)
    got, position = kafka_python_read(bridge_on_iggy.port, topic, isolation)
    assert got == EXPECTED
    assert position == 8


def test_a_consumer_positioned_inside_an_aborted_run_moves_past_it(bridge_on_iggy, iggy):
    topic = "ph-mid-" + uuid.uuid4().hex[:8]
    history(bridge_on_iggy.port, iggy.address, topic)
    got, position = librdkafka_read(bridge_on_iggy.port, topic, "read_uncommitted", start=3)
    assert [o for o, _, _ in got] == [5]
    assert position == 8
