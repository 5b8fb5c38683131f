"""DeleteRecords against a real iggy-server, driven by confluent-kafka (librdkafka's DeleteRecords
v2, ListOffsets and Fetch): the log start floor the bridge keeps, OFFSET_OUT_OF_RANGE below it,
ListOffsets(earliest), consumers with auto.offset.reset=earliest starting at it, and the floor
surviving a bridge restart (SQLite partition_log_start)."""
import sqlite3, time, uuid
import pytest

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec  # noqa: E402


def bs(b):
    return f"127.0.0.1:{b.port}"


def create(b, topic, partitions=1):
    admin = AdminClient({"bootstrap.servers": bs(b)})
    for f in admin.create_topics([NewTopic(topic, partitions)]).values():
        f.result(30)
    return admin


def produce(b, topic, values, partition=0):
    p = Producer({"bootstrap.servers": bs(b), "linger.ms": 0})
    for v in values:
        p.produce(topic, v.encode(), partition=partition)
    assert p.flush(30) == 0


def delete_records(admin, topic, offset, partition=0):
    fs = admin.delete_records([TopicPartition(topic, partition, offset)], operation_timeout=30, request_timeout=30)
    return list(fs.values())[0].result(30)


def earliest(admin, topic, partition=0):
    fs = admin.list_offsets({TopicPartition(topic, partition): OffsetSpec.earliest()}, request_timeout=30)
    return list(fs.values())[0].result(30).offset


def consume(b, topic, n, reset="earliest", start=None, timeout=30):
    """(offsets read, errors) of up to `n` records; from `start` (assign) or as a new group."""
    c = Consumer({"bootstrap.servers": bs(b), "group.id": "g-" + uuid.uuid4().hex[:8],
                  "auto.offset.reset": reset, "enable.auto.commit": False})
    if start is None:
        c.subscribe([topic])
    else:
        c.assign([TopicPartition(topic, 0, start)])
    got, errors = [], []
    deadline = time.time() + timeout
    try:
        while len(got) < n and time.time() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                errors.append(m.error())
                if reset == "error":
                    break
                continue
            got.append(m.offset())
    finally:
        c.close()
    return got, errors


def test_delete_records_moves_the_log_start_and_survives_restart(bridge_factory, iggy):
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    topic = "dr-" + uuid.uuid4().hex[:8]
    admin = create(b, topic, 2)
    produce(b, topic, [f"v{i}" for i in range(10)])

    assert delete_records(admin, topic, 4).low_watermark == 4
    assert earliest(admin, topic) == 4
    # A lower offset changes nothing and answers the current start.
    assert delete_records(admin, topic, 2).low_watermark == 4
    # Above the high watermark: OFFSET_OUT_OF_RANGE.
    with pytest.raises(KafkaException) as e:
        delete_records(admin, topic, 11)
    assert e.value.args[0].code() == KafkaError.OFFSET_OUT_OF_RANGE
    # Unknown partition: librdkafka refuses it from Metadata before sending (no leader).
    with pytest.raises(KafkaException) as e:
        delete_records(admin, topic, 1, partition=5)
    assert e.value.args[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._NOENT)

    # A new consumer with auto.offset.reset=earliest starts at the floor.
    got, _ = consume(b, topic, 6)
    assert got == [4, 5, 6, 7, 8, 9]
    # A fetch below the floor is OFFSET_OUT_OF_RANGE (librdkafka reports it with reset=error).
    got, errors = consume(b, topic, 1, reset="error", start=1)
    assert got == []
    assert errors and "out of range" in errors[0].str().lower(), errors
    # ...and with reset=earliest a position below the floor moves to it.
    got, _ = consume(b, topic, 2, start=1)
    assert got[:1] == [4]

    with sqlite3.connect(b.state) as c:
        rows = c.execute("SELECT partition, log_start_offset FROM partition_log_start WHERE topic = ?",
                         (topic,)).fetchall()
    assert rows == [(0, 4)]

    b.stop()
    b.start().wait_ready()
    admin = AdminClient({"bootstrap.servers": bs(b)})
    assert earliest(admin, topic) == 4
    got, _ = consume(b, topic, 6)
    assert got == [4, 5, 6, 7, 8, 9]

    # -1 means the high watermark: everything is gone, and consumers start at the end.
    assert delete_records(admin, topic, -1).low_watermark == 10
    assert earliest(admin, topic) == 10
    produce(b, topic, ["after"])
    got, _ = consume(b, topic, 1)
    assert got == [10]
    # The other partition was never touched.
    assert earliest(admin, topic, partition=1) == 0
    assert "DeleteRecords %s-0: log start 10" % topic in b.read_log()
