"""Topic lifecycle admin APIs against a real iggy-server: DeleteTopics (v1 by name, v6 by name
and by topic id, Kafka's INVALID_REQUEST texts, the state a delete removes), CreatePartitions
(v0/v3: grow, same count, shrink, validate_only, duplicates, assignments) and
DescribeTopicPartitions (v0 pagination with a cursor). Raw requests (harness/kafka_wire/admin.py,
not the bridge's codecs) for the exact answers; confluent-kafka for the producers and consumers
whose state a delete must take along."""
import os
import sqlite3
import time
import uuid

import pytest

from harness.kafka_wire.admin import AdminConn, random_id

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic  # noqa: E402

NONE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS, INVALID_REPLICA_ASSIGNMENT = 0, 3, 37, 39
INVALID_REQUEST, UNKNOWN_TOPIC_ID = 42, 100


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def bridge(bridge_factory, iggy):
    """Auto-create off: a deleted topic must stay deleted when a client asks for it."""
    return bridge_factory(kafka_extra="auto_create_topics = false\n", iggy_address=iggy.address).start().wait_ready()


def bs(b):
    return f"127.0.0.1:{b.port}"


def create(b, name, partitions=1, config=None):
    admin = AdminClient({"bootstrap.servers": bs(b)})
    fut = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name]
    fut.result(30)


def topic_id(b, name):
    with sqlite3.connect(b.state) as c:
        row = c.execute("SELECT topic_id FROM topics WHERE name = ?", (name,)).fetchone()
    return uuid.UUID(row[0]).bytes if row else None


def metadata_partitions(b, name):
    md = AdminClient({"bootstrap.servers": bs(b)}).list_topics(name, timeout=20)
    t = md.topics[name]
    return None if t.error is not None else len(t.partitions)


def produce(b, topic, n, idempotent=False):
    p = Producer({"bootstrap.servers": bs(b), "acks": "all", "linger.ms": 0, "enable.idempotence": idempotent,
                  "message.timeout.ms": 15000})
    errors = []
    for i in range(n):
        p.produce(topic, value=b"v%d" % i, partition=0, on_delivery=lambda e, m: e and errors.append(e))
    p.flush(30)
    assert not errors, errors
    return p


def commit(b, group, topic, offset):
    c = Consumer({"bootstrap.servers": bs(b), "group.id": group, "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(topic, 0, offset)], asynchronous=False)
    c.close()


def committed(b, group, topic):
    c = Consumer({"bootstrap.servers": bs(b), "group.id": group, "enable.auto.commit": False})
    try:
        return c.committed([TopicPartition(topic, 0)], timeout=20)[0].offset
    finally:
        c.close()


def rows(b, sql, *args):
    with sqlite3.connect(b.state) as c:
        return c.execute(sql, args).fetchall()


# ---- DeleteTopics ------------------------------------------------------------------------------

def test_delete_by_name_and_by_id_answers_name_and_id(bridge):
    a, b_ = unique("del-a"), unique("del-b")
    create(bridge, a, 2)
    create(bridge, b_, 1)
    id_a, id_b = topic_id(bridge, a), topic_id(bridge, b_)
    conn = AdminConn(bridge.port)
    found = conn.metadata_by_id(id_a)
    assert [(t["error"], t["name"], t["id"], len(t["partitions"])) for t in found] == [(NONE, a, id_a, 2)]
    found = conn.metadata_by_id(id_a, name="")
    assert [(t["error"], t["name"], t["id"], len(t["partitions"])) for t in found] == [(NONE, a, id_a, 2)]
    res = conn.delete_topics(entries=[(a, None), (None, id_b)])
    assert sorted(res) == sorted([(a, id_a, NONE, None), (b_, id_b, NONE, None)])
    assert topic_id(bridge, a) is None and topic_id(bridge, b_) is None
    # Gone for Metadata: by name UNKNOWN_TOPIC_OR_PARTITION (auto-create off), by id UNKNOWN_TOPIC_ID.
    assert metadata_partitions(bridge, a) is None
    assert conn.metadata_by_id(id_a)[0]["error"] == UNKNOWN_TOPIC_ID
    # Deleting again: unknown name, unknown id.
    res = conn.delete_topics(entries=[(a, None), (None, id_b)])
    assert sorted(res, key=repr) == sorted([
        (a, b"\x00" * 16, UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."),
        (None, id_b, UNKNOWN_TOPIC_ID, "This server does not host this topic ID."),
    ], key=repr)


def test_delete_v1_by_names(bridge):
    a = unique("del-v1")
    create(bridge, a)
    conn = AdminConn(bridge.port)
    assert conn.delete_topics(names=[a], version=1) == [(a, None, NONE, None)]
    assert conn.delete_topics(names=[a], version=1) == [(a, None, UNKNOWN_TOPIC_OR_PARTITION, None)]


def test_delete_refuses_duplicates_both_and_neither_as_kafka_does(bridge):
    a, b_ = unique("dup-a"), unique("dup-b")
    create(bridge, a)
    create(bridge, b_)
    id_b = topic_id(bridge, b_)
    conn = AdminConn(bridge.port)
    res = conn.delete_topics(entries=[(a, None), (a, None), (None, id_b), (None, id_b), (a, id_b), (None, None)])
    z = b"\x00" * 16
    assert sorted(res, key=repr) == sorted([
        (a, z, INVALID_REQUEST, "Duplicate topic name."),
        (None, id_b, INVALID_REQUEST, "Duplicate topic id."),
        (a, id_b, INVALID_REQUEST, "You may not specify both topic name and topic id."),
        (None, z, INVALID_REQUEST, "Neither topic name nor id were specified."),
    ], key=repr)
    # Nothing was deleted.
    assert topic_id(bridge, a) is not None and topic_id(bridge, b_) == id_b
    assert metadata_partitions(bridge, a) == 1


def test_recreated_topic_gets_new_id_and_no_old_offsets_or_producer_state(bridge):
    t, g = unique("recreate"), unique("grp")
    create(bridge, t)
    old_id = topic_id(bridge, t)
    produce(bridge, t, 3, idempotent=True)
    commit(bridge, g, t, 3)
    assert committed(bridge, g, t) == 3
    deadline = time.time() + 10  # producer batches are written by the batched state writer
    while rows(bridge, "SELECT count(*) FROM producer_batches WHERE topic = ?", t)[0][0] == 0 and time.time() < deadline:
        time.sleep(0.1)
    assert rows(bridge, "SELECT count(*) FROM producer_batches WHERE topic = ?", t)[0][0] > 0
    assert AdminConn(bridge.port).delete_topics(names=[t])[0][2] == NONE
    # Kafka's onPartitionsDeleted: the committed offsets go, and the producer state with the log.
    assert rows(bridge, "SELECT count(*) FROM committed_offsets WHERE topic = ?", t) == [(0,)]
    assert rows(bridge, "SELECT count(*) FROM producer_batches WHERE topic = ?", t) == [(0,)]
    # The group stays, as on Kafka.
    assert rows(bridge, "SELECT count(*) FROM consumer_groups WHERE group_id = ?", g) == [(1,)]
    create(bridge, t)
    new_id = topic_id(bridge, t)
    assert new_id is not None and new_id != old_id
    assert committed(bridge, g, t) == -1001  # librdkafka's OFFSET_INVALID: OffsetFetch answered -1
    # The new topic starts empty at offset 0 and takes a fresh idempotent producer.
    produce(bridge, t, 2, idempotent=True)
    c = Consumer({"bootstrap.servers": bs(bridge), "group.id": unique("g2"), "auto.offset.reset": "earliest"})
    c.assign([TopicPartition(t, 0, 0)])
    got, deadline = [], time.time() + 30
    while len(got) < 2 and time.time() < deadline:
        m = c.poll(0.5)
        if m is not None and m.error() is None:
            got.append((m.offset(), m.value()))
    c.close()
    assert got == [(0, b"v0"), (1, b"v1")]


def test_produce_and_commit_after_delete_get_unknown_topic(bridge):
    t, g = unique("gone"), unique("grp")
    create(bridge, t)
    p = produce(bridge, t, 1)
    # confluent-kafka's AdminClient (librdkafka: DeleteTopics v4).
    admin = AdminClient({"bootstrap.servers": bs(bridge)})
    admin.delete_topics([t], operation_timeout=30)[t].result(30)
    with pytest.raises(ck.KafkaException) as again:
        admin.delete_topics([t], operation_timeout=30)[t].result(30)
    assert again.value.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
    errors = []
    p.produce(t, value=b"late", partition=0, on_delivery=lambda e, m: errors.append(e))
    deadline = time.time() + 30
    while not errors and time.time() < deadline:
        p.poll(0.2)
    # librdkafka retries UNKNOWN_TOPIC_OR_PARTITION until the topic reappears or the message
    # times out (as against Kafka); the topic must not come back.
    assert errors and errors[0] is not None
    assert errors[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC,
                                KafkaError._MSG_TIMED_OUT), errors[0]
    assert topic_id(bridge, t) is None and metadata_partitions(bridge, t) is None
    # A commit for the deleted topic is refused (UNKNOWN_TOPIC_OR_PARTITION) and stores nothing.
    c = Consumer({"bootstrap.servers": bs(bridge), "group.id": g, "enable.auto.commit": False})
    try:
        res = c.commit(offsets=[TopicPartition(t, 0, 1)], asynchronous=False)
        assert res[0].error is not None and res[0].error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART, res
    except ck.KafkaException as e:
        assert e.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART, e
    finally:
        c.close()
    assert rows(bridge, "SELECT count(*) FROM committed_offsets WHERE topic = ?", t) == [(0,)]


def test_startup_sweep_removes_state_of_topics_iggy_no_longer_has(bridge):
    t, ghost = unique("kept"), unique("ghost")
    create(bridge, t)
    commit(bridge, "sweep-g", t, 1)
    bridge.stop()
    with sqlite3.connect(bridge.state) as c:
        c.execute("INSERT INTO committed_offsets(group_id, topic, partition, committed_offset, commit_time) "
                  "VALUES ('sweep-g', ?, 0, 5, 0)", (ghost,))
        c.execute("INSERT INTO producer_batches(producer_id, topic, partition, producer_epoch, first_sequence, "
                  "last_sequence, base_offset, appended_at) VALUES (1, ?, 0, 0, 0, 0, 0, 0)", (ghost,))
    bridge.start().wait_ready()
    deadline = time.time() + 10
    while rows(bridge, "SELECT count(*) FROM committed_offsets WHERE topic = ?", ghost) != [(0,)] and time.time() < deadline:
        time.sleep(0.1)
    assert rows(bridge, "SELECT count(*) FROM committed_offsets WHERE topic = ?", ghost) == [(0,)]
    assert rows(bridge, "SELECT count(*) FROM producer_batches WHERE topic = ?", ghost) == [(0,)]
    assert rows(bridge, "SELECT committed_offset FROM committed_offsets WHERE topic = ?", t) == [(1,)]
    assert committed(bridge, "sweep-g", t) == 1


# ---- CreatePartitions --------------------------------------------------------------------------

def test_create_partitions_grow_same_shrink_validate_only(bridge):
    t = unique("grow")
    create(bridge, t, 1)
    conn = AdminConn(bridge.port)
    assert conn.create_partitions([(t, 3, None)], validate_only=True) == [(t, NONE, None)]
    assert metadata_partitions(bridge, t) == 1
    assert conn.create_partitions([(t, 3, None)]) == [(t, NONE, None)]
    assert metadata_partitions(bridge, t) == 3
    assert conn.create_partitions([(t, 3, None)]) == [(t, INVALID_PARTITIONS, "Topic already has 3 partition(s).")]
    assert conn.create_partitions([(t, 2, None)], validate_only=True) == [
        (t, INVALID_PARTITIONS, f"The topic {t} currently has 3 partition(s); 2 would not be an increase.")]
    # v0 too, and a produce to a new partition works.
    assert conn.create_partitions([(t, 4, None)], version=0) == [(t, NONE, None)]
    assert metadata_partitions(bridge, t) == 4
    # confluent-kafka's AdminClient (librdkafka: CreatePartitions v0-2).
    admin = AdminClient({"bootstrap.servers": bs(bridge)})
    admin.create_partitions([NewPartitions(t, 5)], operation_timeout=30)[t].result(30)
    assert metadata_partitions(bridge, t) == 5
    with pytest.raises(ck.KafkaException) as same:
        admin.create_partitions([NewPartitions(t, 5)], operation_timeout=30)[t].result(30)
    assert same.value.args[0].code() == KafkaError.INVALID_PARTITIONS
    p = Producer({"bootstrap.servers": bs(bridge), "acks": "all"})
    errs = []
    p.produce(t, value=b"x", partition=4, on_delivery=lambda e, m: errs.append(e))
    p.flush(30)
    assert errs == [None]


def test_create_partitions_duplicates_unknown_and_assignments(bridge):
    t, u = unique("cp"), unique("cp-unknown")
    create(bridge, t, 1)
    conn = AdminConn(bridge.port)
    res = conn.create_partitions([(t, 2, None), (t, 3, None), (u, 2, None)])
    assert sorted(res, key=repr) == sorted([(t, INVALID_REQUEST, "Duplicate topic name."),
                                            (u, UNKNOWN_TOPIC_OR_PARTITION, None)], key=repr)
    assert metadata_partitions(bridge, t) == 1
    assert conn.create_partitions([(t, 3, [[1]])]) == [
        (t, INVALID_REPLICA_ASSIGNMENT, "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")]
    assert conn.create_partitions([(t, 2, [[2]])]) == [
        (t, INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker 2, but no such broker is registered.")]
    assert conn.create_partitions([(t, 2, [[]])]) == [
        (t, INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")]
    assert conn.create_partitions([(t, 2, [[1]])]) == [(t, NONE, None)]
    assert metadata_partitions(bridge, t) == 2


def test_create_partitions_keeps_retention_bytes_per_partition(bridge):
    t = unique("cp-ret")
    create(bridge, t, 1, {"retention.bytes": "1073741824"})
    assert AdminConn(bridge.port).create_partitions([(t, 2, None)]) == [(t, NONE, None)]
    log = bridge.read_log()
    assert f"topic {t} grown to 2 partitions" in log
    assert "max_topic_size was not raised" not in log


# ---- DescribeTopicPartitions -------------------------------------------------------------------

def test_describe_topic_partitions_paginates_with_cursor(bridge):
    tag = uuid.uuid4().hex[:8]
    a, b_, missing = f"dtp-{tag}-a", f"dtp-{tag}-b", f"dtp-{tag}-c"
    create(bridge, a, 3)
    create(bridge, b_, 2)
    conn = AdminConn(bridge.port)
    names = [b_, missing, a]  # answered sorted by name

    def short(topics):
        return [(t["name"], t["error"], [p["index"] for p in t["partitions"] or []]) for t in topics]
    topics, cur = conn.describe_topic_partitions(names, limit=2)
    assert short(topics) == [(a, NONE, [0, 1])] and cur == (a, 2)
    t0 = topics[0]
    assert t0["id"] == topic_id(bridge, a) and t0["internal"] is False
    p0 = t0["partitions"][0]
    assert (p0["leader"], p0["leader_epoch"], p0["replicas"], p0["isr"], p0["elr"], p0["last_known_elr"],
            p0["offline"]) == (1, 0, [1], [1], [], [], [])
    topics, cur = conn.describe_topic_partitions(names, limit=2, cursor=cur)
    assert short(topics) == [(a, NONE, [2]), (b_, NONE, [0])] and cur == (b_, 1)
    topics, cur = conn.describe_topic_partitions(names, limit=2, cursor=cur)
    assert short(topics) == [(b_, NONE, [1]), (missing, UNKNOWN_TOPIC_OR_PARTITION, [])] and cur is None
    assert topics[1]["id"] == b"\x00" * 16
    # Exactly at the limit: the next topic is the cursor.
    topics, cur = conn.describe_topic_partitions([a, b_], limit=3)
    assert short(topics) == [(a, NONE, [0, 1, 2])] and cur == (b_, 0)
    # Every topic (empty list), from a cursor.
    topics, cur = conn.describe_topic_partitions([], limit=2000, cursor=(b_, 1))
    ours = [x for x in short(topics) if tag in x[0]]
    assert ours == [(b_, NONE, [1])] and cur is None
    # A cursor topic not in the list, or a negative cursor partition: the request fails.
    topics, cur = conn.describe_topic_partitions([a], cursor=(b_, 0))
    assert short(topics) == [(a, INVALID_REQUEST, [])] and cur is None
    topics, _ = conn.describe_topic_partitions([a], cursor=(a, -1))
    assert short(topics) == [(a, INVALID_REQUEST, [])]


# ---- __consumer_offsets ------------------------------------------------------------------------

def test_consumer_offsets_is_listed_as_internal_once_a_group_was_used(bridge_factory, iggy):
    b = bridge_factory(kafka_extra="auto_create_topics = false\n", iggy_address=iggy.address,
                       extra_toml="[groups]\noffsets_topic_partitions = 3\n").start().wait_ready()
    conn = AdminConn(b.port)
    topics, _ = conn.describe_topic_partitions(["__consumer_offsets"])
    assert (topics[0]["name"], topics[0]["error"]) == ("__consumer_offsets", UNKNOWN_TOPIC_OR_PARTITION)
    t = unique("co")
    create(b, t)
    commit(b, unique("g"), t, 1)  # FindCoordinator: Kafka creates __consumer_offsets now
    topics, _ = conn.describe_topic_partitions(["__consumer_offsets"])
    co = topics[0]
    assert (co["error"], co["internal"], [p["index"] for p in co["partitions"]]) == (NONE, True, [0, 1, 2])
    everything, _ = conn.describe_topic_partitions([])
    assert [x["internal"] for x in everything if x["name"] == "__consumer_offsets"] == [True]
    assert [x["internal"] for x in everything if x["name"] == t] == [False]
    md = AdminClient({"bootstrap.servers": bs(b)}).list_topics(timeout=20)
    assert len(md.topics["__consumer_offsets"].partitions) == 3
    assert conn.metadata_by_id(co["id"])[0]["internal"] is True
    # Deleting it would delete every committed offset on Kafka; the bridge refuses.
    res = conn.delete_topics(names=["__consumer_offsets"])
    assert res[0][2] == INVALID_REQUEST and "internal to the bridge" in res[0][3]
    res = conn.delete_topics(entries=[(None, co["id"])])
    assert res[0][:3] == ("__consumer_offsets", co["id"], INVALID_REQUEST)
    conn.close()
    # For good, with the same id.
    b.stop()
    b.start().wait_ready()
    conn = AdminConn(b.port)
    topics, _ = conn.describe_topic_partitions(["__consumer_offsets"])
    assert (topics[0]["error"], topics[0]["id"]) == (NONE, co["id"])
