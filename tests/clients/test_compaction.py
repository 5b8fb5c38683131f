"""Compacted topics (docs/compaction.md), side by side with Kafka.

Keyless records on a topic whose cleanup.policy includes compact are refused as Kafka's
LogValidator refuses them: INVALID_RECORD, one record error per keyless record, Kafka's summary
message; the batch is not appended (the next keyed record takes the offset the refused batch
would have had). Checked on the wire (Produce v8, where record_errors and error_message first
appear), with librdkafka's producer and inside a transaction, which must then abort as on Kafka.
"""
from __future__ import annotations

import json
import time
import uuid

from harness.kafka_wire import Conn
from harness.kafka_wire.client_apis import produce_v7_body
from harness.kafka_wire.codec import Reader, request
from harness.kafka_wire.conn import recv_frame
from harness.kafka_wire.records import batch, record
from harness.read_partition import compacted_view, wait_compacted

PRODUCE = 0


def create_compacted(bootstrap: str, name: str, policy: str = "compact") -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config={"cleanup.policy": policy})])[name].result(timeout=60)


def produce_v8(port: int, topic: str, records: bytes) -> dict:
    """Produce v8 of one batch to partition 0; the partition's answer with its record errors."""
    with Conn(port) as c:
        c.sock.sendall(request(PRODUCE, 8, 11, produce_v7_body(topic, [(0, records)])))
        r = Reader(recv_frame(c.sock))
    assert r.int32() == 11
    assert r.int32() == 1
    assert r.str16() == topic
    assert r.int32() == 1
    idx, err, base, _append_time, _log_start = r.unpack("ihqqq")
    errors = r.array32(lambda: (r.int32(), r.str16()))
    return {"partition": idx, "error": err, "base_offset": base, "record_errors": errors, "message": r.str16()}


def produce_v8_when_ready(port: int, topic: str, records: bytes) -> dict:
    """produce_v8 once the new topic's partition has its leader (Kafka answers NOT_LEADER_OR_FOLLOWER
    or UNKNOWN_TOPIC_OR_PARTITION for a moment after CreateTopics)."""
    deadline = time.time() + 30
    while True:
        got = produce_v8(port, topic, records)
        if got["error"] not in (3, 6) or time.time() > deadline:
            return got
        time.sleep(0.2)


def keyed_batch(keys: list[bytes | None]) -> bytes:
    blob = b"".join(record(b"v%d" % i, offset_delta=i, key=k) for i, k in enumerate(keys))
    return batch(blob, len(keys))


def test_keyless_records_refused_on_the_wire(target):
    topic = f"compacted-wire-{uuid.uuid4().hex[:8]}"
    for policy_topic, policy in ((topic, "compact"), (topic + "-cd", "compact,delete")):
        create_compacted(target.bootstrap, policy_topic, policy)
        port = int(target.bootstrap.rsplit(":", 1)[1])
        got = produce_v8_when_ready(port, policy_topic, keyed_batch([b"a", None, b"", None, None, None]))
        one = f"Compacted topic cannot accept message without key in topic partition {policy_topic}-0"
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{one}')" for i in (1, 3, 4))
        assert got == {
            "partition": 0, "error": 87, "base_offset": -1,
            "record_errors": [(1, one), (3, one), (4, one), (5, one)],
            "message": "One or more records have been rejected due to 4 record errors in total, and only "
                       f"showing the first three errors at most: [{shown}]",
        }, (target.name, policy)
        # Nothing of the refused batch was appended: a keyed batch now starts at offset 0.
        ok = produce_v8(port, policy_topic, keyed_batch([b"a", b"b"]))
        assert (ok["error"], ok["base_offset"], ok["record_errors"]) == (0, 0, []), (target.name, ok)
    if target.server is not None:
        assert (target.server.metric("kib_produce_keyless_compacted_total") or 0) >= 8


def delivery_errors(bootstrap: str, topic: str, keys: list[bytes | None], **conf) -> list[str | None]:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, **conf})
    out: list[str | None] = []
    for i, k in enumerate(keys):
        p.produce(topic, key=k, value=b"v%d" % i,
                  on_delivery=lambda err, _m: out.append(err.name() if err else None))
    assert p.flush(30) == 0
    return out


def test_librdkafka_producer_gets_invalid_record(target):
    topic = f"compacted-rdk-{uuid.uuid4().hex[:8]}"
    create_compacted(target.bootstrap, topic)
    # Each record in its own produce call, so each is its own batch: only the keyless one fails.
    assert delivery_errors(target.bootstrap, topic, [b"k1"], **{"linger.ms": 0}) == [None]
    assert delivery_errors(target.bootstrap, topic, [None], **{"linger.ms": 0}) == ["INVALID_RECORD"]
    # (A batch mixing keyed and keyless records fails whole: the wire test above sends one; how
    # librdkafka batches two produce() calls is its own timing, not a stable check.)


def test_transactional_keyless_record_aborts_the_transaction(target):
    from confluent_kafka import Consumer, KafkaException, Producer

    topic = f"compacted-txn-{uuid.uuid4().hex[:8]}"
    create_compacted(target.bootstrap, topic)
    p = Producer({"bootstrap.servers": target.bootstrap, "transactional.id": f"txn-{uuid.uuid4().hex[:8]}",
                  "linger.ms": 0})
    p.init_transactions(30)
    p.begin_transaction()
    errs: list[str] = []
    p.produce(topic, key=None, value=b"keyless", on_delivery=lambda err, _m: errs.append(err.name() if err else ""))
    p.flush(30)
    assert errs == ["INVALID_RECORD"], (target.name, errs)
    try:
        p.commit_transaction(30)
        committed = True
    except KafkaException as e:
        committed = False
        assert e.args[0].txn_requires_abort(), (target.name, e)
    assert not committed
    p.abort_transaction(30)
    # The application's usual loop: abort and retry on an abortable error. Kafka 4.1 fails the next
    # transaction's first batch once more (KIP-890's verification entry still holds the refused
    # batch's sequence 0, so sequence 1 is OUT_OF_ORDER_SEQUENCE_NUMBER and librdkafka bumps the
    # epoch); the bridge keeps no such entry and commits at once. Either way the record is kept.
    attempts = 0
    while True:
        attempts += 1
        p.begin_transaction()
        p.produce(topic, key=b"k", value=b"kept")
        try:
            p.commit_transaction(30)
            break
        except KafkaException as e:
            assert attempts < 3 and e.args[0].txn_requires_abort(), (target.name, e)
            p.abort_transaction(30)
    assert attempts == (2 if target.name == "kafka" else 1), (target.name, attempts)

    c = Consumer({"bootstrap.servers": target.bootstrap, "group.id": f"g-{uuid.uuid4().hex[:8]}",
                  "auto.offset.reset": "earliest", "isolation.level": "read_committed"})
    c.subscribe([topic])
    got = []
    try:
        for _ in range(60):
            m = c.poll(1)
            if m is not None and not m.error():
                got.append((m.key(), m.value()))
                break
    finally:
        c.close()
    assert got == [(b"k", b"kept")], (target.name, got)


# Rolled by time after 100 ms, cleaned as soon as anything is dirty: what the compaction test needs
# of both targets (the reference broker and the client-tier bridge check every second:
# log.cleaner.backoff.ms, [compaction] backoff_ms).
FAST_COMPACTION = {"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01"}


def test_a_compacted_topic_keeps_the_latest_record_of_each_key_at_its_offset(target):
    """120 updates of 20 keys in rounds 150 ms apart (so each round rolls a segment), tombstones
    among them, then one more record: everything before that record's segment is cleaned. The
    same records at the same offsets remain on Kafka and on the bridge."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"compacted-view-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=FAST_COMPACTION)])[topic].result(timeout=60)
    p = Producer({"bootstrap.servers": target.bootstrap, "linger.ms": 5, "enable.idempotence": True})
    written: list[tuple[int, str, str | None]] = []

    def sent(err, m):
        assert err is None, err
        written.append((m.offset(), m.key().decode(), m.value().decode() if m.value() is not None else None))
    for rnd in range(6):
        for k in range(20):
            # Round 3 deletes k0-k4 (superseded again in round 4); round 5 deletes k5 and k6 for good.
            value = None if (rnd == 3 and k < 5) or (rnd == 5 and k in (5, 6)) else f"r{rnd}-{k}"
            p.produce(topic, key=f"k{k}", value=value, on_delivery=sent)
        assert p.flush(30) == 0
        time.sleep(0.15)
    p.produce(topic, key="roll", value="last", on_delivery=sent)
    assert p.flush(30) == 0
    written.sort()
    point = written[-1][0]
    assert point == 120
    want = compacted_view(written, point)
    assert len(want) == 21 and sum(v is None for _, _, v in want) == 2
    got, low, high = wait_compacted(target.bootstrap, topic, want)
    assert got == want, (target.name, len(got), got[:5])
    # Cleaning moves neither end: the log start stays 0 (Kafka's, unchanged by compaction).
    assert (low, high) == (0, 121), target.name
    if target.server is not None:
        assert (target.server.metric('kib_compaction_passes_total{result="committed"}') or 0) >= 1


# ---- a schema registry's `_schemas` topic -------------------------------------------------------

def sr_key(keytype: str, subject: str | None = None, version: int | None = None) -> str:
    """A key as Confluent Schema Registry's KafkaStore serializes it (Jackson, fields in this
    order; magic 1 for SCHEMA keys, 0 for the others)."""
    if keytype == "SCHEMA":
        return json.dumps({"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1},
                          separators=(",", ":"))
    if keytype == "NOOP":
        return json.dumps({"keytype": "NOOP", "magic": 0}, separators=(",", ":"))
    return json.dumps({"keytype": keytype, "subject": subject, "magic": 0}, separators=(",", ":"))


def sr_schema(subject: str, version: int, schema_id: int, deleted: bool = False) -> str:
    fields = [{"name": f"f{i}", "type": "string", "default": ""} for i in range(version)]
    schema = json.dumps({"type": "record", "name": subject.capitalize(), "fields": fields}, separators=(",", ":"))
    return json.dumps({"subject": subject, "version": version, "id": schema_id, "schemaType": "AVRO",
                       "schema": schema, "deleted": deleted}, separators=(",", ":"))


def sr_sessions() -> list[list[tuple[str, str | None]]]:
    """What four registry instances write, one after the other: each starts with a NOOP (the
    registry learns the end of the log from the offset of its own NOOP, a tombstone), then
    registers, configures, soft-deletes (the schema re-written with "deleted": true, and a
    DELETE_SUBJECT record) and hard-deletes (a tombstone of a soft-deleted schema's key)."""
    noop = (sr_key("NOOP"), None)

    def schema(subject, version, schema_id, deleted=False):
        return sr_key("SCHEMA", subject, version), sr_schema(subject, version, schema_id, deleted)

    def config(level, subject=None):
        return sr_key("CONFIG", subject), json.dumps({"compatibilityLevel": level}, separators=(",", ":"))

    def mode(m, subject=None):
        return sr_key("MODE", subject), json.dumps({"mode": m}, separators=(",", ":"))

    def delete_subject(subject, version):
        return sr_key("DELETE_SUBJECT", subject), json.dumps({"subject": subject, "version": version},
                                                               separators=(",", ":"))

    def hard_delete(subject, version):
        return sr_key("SCHEMA", subject, version), None
    return [
        [noop, config("BACKWARD"), mode("READWRITE"), schema("s1", 1, 1), schema("s1", 2, 2), schema("s2", 1, 3),
         schema("s3", 1, 4), schema("s3", 2, 5), schema("s3", 3, 6), schema("s4", 1, 7), schema("s4", 2, 8)],
        [noop, schema("s1", 3, 9), config("FULL", "s1"), schema("s2", 1, 3, deleted=True), delete_subject("s2", 1),
         schema("s3", 2, 5, deleted=True), schema("s4", 1, 7, deleted=True), schema("s4", 2, 8, deleted=True),
         delete_subject("s4", 2), mode("IMPORT", "s5"), schema("s5", 1, 100)],
        [noop, hard_delete("s2", 1), hard_delete("s3", 2), hard_delete("s4", 1), hard_delete("s4", 2),
         config("FULL_TRANSITIVE"), mode("READONLY"), mode("READWRITE"), schema("s1", 1, 1),  # re-written as is
         schema("s2", 2, 10), config("NONE", "s1"), mode("READWRITE", "s5")],
        [noop, schema("s3", 4, 11), schema("s1", 4, 12), config("FULL", "s1"), config("NONE", "s3"),
         schema("s3", 1, 4, deleted=True)],
    ]


def sr_apply(records) -> dict[str, tuple[int, str]]:
    """The registry's in-memory store as its reader thread builds it: each key's latest value
    with its offset, a tombstone removing the key (NOOPs carry no value, so never appear)."""
    store: dict[str, tuple[int, str]] = {}
    for o, k, v in records:
        if v is None:
            store.pop(k, None)
        else:
            store[k] = (o, v)
    return store


def sr_view(store: dict[str, tuple[int, str]]) -> dict:
    """What the registry answers from its store: per subject its live and soft-deleted versions
    (version -> schema id), the compatibility levels and modes (None: the global one)."""
    view: dict = {"live": {}, "soft_deleted": {}, "config": {}, "mode": {}, "deleted_subjects": {}}
    for k, (_o, v) in sorted(store.items()):
        key, value = json.loads(k), json.loads(v)
        if key["keytype"] == "SCHEMA":
            side = "soft_deleted" if value["deleted"] else "live"
            view[side].setdefault(key["subject"], {})[key["version"]] = value["id"]
        elif key["keytype"] == "CONFIG":
            view["config"][key["subject"]] = value["compatibilityLevel"]
        elif key["keytype"] == "MODE":
            view["mode"][key["subject"]] = value["mode"]
        elif key["keytype"] == "DELETE_SUBJECT":
            view["deleted_subjects"][key["subject"]] = value["version"]
    return view


def sr_start_read(bootstrap: str, topic: str, until: int, timeout: float = 60) -> list[tuple[int, str, str | None]]:
    """A registry's start-up read (KafkaStoreReaderThread): partition 0 from the beginning until
    the offset its NOOP got, every record on the way."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "schema-registry-" + uuid.uuid4().hex[:6],
                  "enable.auto.commit": False})
    out: list[tuple[int, str, str | None]] = []
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout
        while not out or out[-1][0] < until:
            assert time.monotonic() < deadline, f"{topic}: offset {until} not reached in {timeout}s: {out[-3:]}"
            m = c.poll(0.5)
            if m is None:
                continue
            assert not m.error(), m.error()
            out.append((m.offset(), m.key().decode(), m.value().decode() if m.value() is not None else None))
    finally:
        c.close()
    return out


# target name -> the _schemas test's result, for the side-by-side comparison
SCHEMAS_RESULTS: dict[str, dict] = {}


def test_a_schema_registry_rebuilds_its_state_from_a_compacted_schemas_topic(target):
    """A `_schemas` topic written as Confluent Schema Registry's KafkaStore writes it (one
    partition, compacted; JSON keys and values, one synchronous send at a time): four registry
    instances 150 ms apart (so each rolls a segment), each starting with a NOOP, registering
    schemas of several subjects and versions, setting global and subject compatibility levels and
    modes, soft-deleting (the schema re-written with "deleted": true), hard-deleting (a
    tombstone), re-writing a record unchanged. A fifth instance's NOOP rolls the segment, so
    everything before it is cleaned; that instance then reads from the beginning until its NOOP's
    offset, as the registry's reader does on start.

    What it reads must be exactly what Kafka's compaction guarantees of what was written (the
    latest record of each key before the NOOP, tombstones kept, offsets unchanged), and the
    store it rebuilds (each key's latest value at its offset, tombstoned keys dropped) the store
    a registry built from the uncompacted log. The same records at the same offsets on Kafka and
    on the bridge."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"_schemas-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=FAST_COMPACTION)])[topic].result(timeout=60)
    p = Producer({"bootstrap.servers": target.bootstrap, "acks": "all", "enable.idempotence": True, "linger.ms": 0})
    written: list[tuple[int, str, str | None]] = []

    def sent(err, m):
        assert err is None, err
        written.append((m.offset(), m.key().decode(), m.value().decode() if m.value() is not None else None))

    def send(key: str, value: str | None) -> None:  # KafkaStore.put: send(...).get()
        p.produce(topic, key=key, value=value, on_delivery=sent)
        assert p.flush(30) == 0
    sessions = sr_sessions()
    for session in sessions:
        for key, value in session:
            send(key, value)
        time.sleep(0.15)
    send(sr_key("NOOP"), None)  # the fifth instance starts
    assert [o for o, _, _ in written] == list(range(sum(map(len, sessions)) + 1))
    point = written[-1][0]  # the fifth instance's NOOP: the end of the log it waits for
    want = compacted_view(written, point)
    before = sr_apply(written)
    view = sr_view(before)
    # The scenario's deletes took effect: s2 v1, s3 v2 and s4 hard-deleted after their soft
    # deletes, s3 v1 soft-deleted only.
    assert view["live"] == {"s1": {1: 1, 2: 2, 3: 9, 4: 12}, "s2": {2: 10}, "s3": {3: 6, 4: 11}, "s5": {1: 100}}, view
    assert view["soft_deleted"] == {"s3": {1: 4}} and view["deleted_subjects"] == {"s2": 1, "s4": 2}, view
    # Kept: 4 hard deletes and the 4th instance's NOOP (tombstones, within delete.retention.ms), the 5th's.
    assert len(want) < len(written) and sum(v is None for _, _, v in want) == 6

    got, low, high = wait_compacted(target.bootstrap, topic, want)
    assert got == want, (target.name, len(got), len(want))
    assert (low, high) == (0, point + 1), target.name
    if target.server is not None:
        assert (target.server.metric(f'kib_compaction_cleaner_point{{topic="{topic}",partition="0"}}') or 0) == point

    read = sr_start_read(target.bootstrap, topic, point)
    assert read == want, target.name
    after = sr_apply(read)
    assert after == before, target.name
    assert sr_view(after) == view
    SCHEMAS_RESULTS[target.name] = {"read": read, "store": after}
    other = SCHEMAS_RESULTS.get("kafka")
    if target.name == "bridge" and other:
        assert SCHEMAS_RESULTS["bridge"] == other
