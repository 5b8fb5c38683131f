"""Reads across the cleaner point (issue 35, "Reads"), side by side with Kafka.

A compacted topic is written and cleaned once per target (the same records: 120 updates of 20
keys with tombstones, committed and aborted transactions among them, rounds 150 ms apart so each
rolls a segment, then one record that closes the last round). Once the cleaner has removed what
Kafka's compaction removes, on Kafka and on the bridge:

* every client of the matrix (kcat, confluent-kafka, kafka-python, kafkajs, the Java client and
  its console consumer) and franz-go read the partition from its beginning and get exactly the
  compacted view:
  the latest record of each key below the cleaner point, everything from it, offsets unchanged,
  no aborted record, no control record;
* a consumer group commits an offset whose record was cleaned away: the committed offset reads
  back as committed, and a new member of the group resumes at the first record kept after it;
* read_committed and read_uncommitted consumers get the same records (aborted ones are gone);
* DeleteRecords below the cleaner point answers as Kafka does for `compact` and for
  `compact,delete` topics, and where it succeeds the log start is the requested offset and the
  first record read is the first kept one at or after it.
"""
from __future__ import annotations

import json
import subprocess
import time
import uuid

import pytest

from harness import util
from harness.read_partition import compacted_view, read_partition, wait_compacted
from runners.registry import CLIENTS
from test_compaction import FAST_COMPACTION

# target name -> (topic, expected view); written and cleaned once per target.
CLEANED: dict[str, tuple[str, list]] = {}


def write_rounds(bootstrap: str, topic: str) -> list[tuple[int, str, str | None]]:
    """6 rounds of 20 keys, 150 ms apart; round 1 goes in a transaction that commits, round 2 in
    one that aborts (its records are not part of what was written), round 3 deletes k0-k4, round 5
    deletes k5 and k6 for good; then one record that rolls the last round. (offset, key, value)
    of what a consumer may see, in offset order."""
    from confluent_kafka import Producer

    written: list[tuple[int, str, str | None]] = []

    def sent(err, m):
        assert err is None, err
        written.append((m.offset(), m.key().decode(), m.value().decode() if m.value() is not None else None))
    plain = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    txn = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "transactional.id": "ct-" + uuid.uuid4().hex[:8]})
    txn.init_transactions(30)
    for rnd in range(6):
        values = {k: None if (rnd == 3 and k < 5) or (rnd == 5 and k in (5, 6)) else f"r{rnd}-{k}" for k in range(20)}
        if rnd in (1, 2):
            aborted: list = []
            txn.begin_transaction()
            for k, v in values.items():
                txn.produce(topic, key=f"k{k}", value=v, on_delivery=lambda e, m: aborted.append(m))
            assert txn.flush(30) == 0
            if rnd == 1:
                txn.commit_transaction(30)
                written += [(m.offset(), m.key().decode(), m.value().decode()) for m in aborted]
            else:
                txn.abort_transaction(30)
        else:
            for k, v in values.items():
                plain.produce(topic, key=f"k{k}", value=v, on_delivery=sent)
            assert plain.flush(30) == 0
        time.sleep(0.15)
    plain.produce(topic, key="roll", value="last", on_delivery=sent)
    assert plain.flush(30) == 0
    return sorted(written)


def cleaned_topic(target) -> tuple[str, list]:
    """The target's compacted topic once its cleaner has cleaned everything before the last
    record, and the view every reader must get."""
    if target.name not in CLEANED:
        from confluent_kafka.admin import AdminClient, NewTopic

        topic = f"compacted-reads-{uuid.uuid4().hex[:8]}"
        admin = AdminClient({"bootstrap.servers": target.bootstrap})
        admin.create_topics([NewTopic(topic, 1, 1, config=FAST_COMPACTION)])[topic].result(timeout=60)
        written = write_rounds(target.bootstrap, topic)
        want = compacted_view(written, written[-1][0])
        got, _, _ = wait_compacted(target.bootstrap, topic, want)
        assert got == want, (target.name, len(got), got[:8])
        CLEANED[target.name] = (topic, want)
    return CLEANED[target.name]


def as_view(consumed: list[dict]) -> list[tuple[int, str | None, str | None]]:
    text = lambda h: None if h is None else bytes.fromhex(h).decode()  # noqa: E731
    return [(c["offset"], text(c["key"]), text(c["value"])) for c in consumed]


@pytest.mark.parametrize("client_name", list(CLIENTS))
def test_every_client_reads_the_cleaned_partition(client_name, target):
    client = CLIENTS[client_name]
    why = client.missing()
    if why:
        util.skip_loudly(f"{client_name}: {why}")
    topic, want = cleaned_topic(target)
    observed = client.run({"bootstrap": target.bootstrap, "topic": topic, "partition": 0, "create_topic": False,
                           "timeout_ms": 30000, "records": [], "consume_count": len(want)})
    assert observed["errors"] == [], (client_name, target.name, observed["errors"])
    assert as_view(observed["consumed"]) == want, (client_name, target.name)


def test_franz_go_reads_the_cleaned_partition(target):
    from test_transactions import franz_go_binary

    topic, want = cleaned_topic(target)
    p = subprocess.run([str(franz_go_binary()), target.bootstrap, "read", topic, str(want[-1][0])],
                       capture_output=True, timeout=120)
    assert p.returncode == 0 and p.stdout.strip(), p.stderr.decode(errors="replace")[-4000:]
    got = json.loads(p.stdout)
    assert got["error"] is None, (target.name, got["error"])
    assert [tuple(r) for r in got["records"]] == want, target.name


def test_a_group_resumes_after_an_offset_that_was_cleaned_away(target):
    from confluent_kafka import Consumer, TopicPartition

    topic, want = cleaned_topic(target)
    kept = [o for o, _, _ in want]
    gone = kept[0] - 3  # a removed record's offset (every round before the last is superseded)
    assert gone > 0 and gone not in kept
    group = f"g-cleaned-{uuid.uuid4().hex[:8]}"
    conf = {"bootstrap.servers": target.bootstrap, "group.id": group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest"}
    c = Consumer(conf)
    try:
        c.commit(offsets=[TopicPartition(topic, 0, gone)], asynchronous=False)
        assert c.committed([TopicPartition(topic, 0)], timeout=30)[0].offset == gone
    finally:
        c.close()
    c = Consumer(conf)
    try:
        c.subscribe([topic])
        first = None
        deadline = time.monotonic() + 60
        while first is None and time.monotonic() < deadline:
            m = c.poll(1)
            if m is not None and not m.error():
                first = m.offset()
    finally:
        c.close()
    assert first == min(o for o in kept if o > gone), (target.name, gone, first)


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
def test_both_isolation_levels_read_the_same_cleaned_records(target, isolation):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    topic, want = cleaned_topic(target)
    c = Consumer({"bootstrap.servers": target.bootstrap, "group.id": "iso-" + uuid.uuid4().hex[:6],
                  "enable.partition.eof": True, "enable.auto.commit": False, "isolation.level": isolation})
    got = []
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                assert m.error().code() == KafkaError._PARTITION_EOF, m.error()
                break
            got.append((m.offset(), m.key().decode(), m.value().decode() if m.value() is not None else None))
    finally:
        c.close()
    assert got == want, (target.name, isolation)


# target name -> {policy: DeleteRecords' answer}, for the side-by-side comparison
DELETE_RECORDS: dict[str, dict] = {}


@pytest.mark.parametrize("policy", ["compact", "compact,delete"])
def test_delete_records_below_the_cleaner_point(target, policy):
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"compacted-dr-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=dict(FAST_COMPACTION, **{"cleanup.policy": policy}))])[topic] \
        .result(timeout=60)
    written = write_rounds(target.bootstrap, topic)
    want = compacted_view(written, written[-1][0])
    got, _, _ = wait_compacted(target.bootstrap, topic, want)
    assert got == want, target.name
    kept = [o for o, _, _ in want]
    at = kept[0] - 5  # a removed record's offset below the first kept one
    assert at > 0 and at not in kept
    try:
        result = admin.delete_records([TopicPartition(topic, 0, at)])[TopicPartition(topic, 0, at)].result(30)
        # (Raw offsets are not compared across targets: Kafka's transaction markers take offsets,
        # the bridge's commit markers do not, docs/transactions.md.)
        answer = ("ok", "log start = the requested offset" if result.low_watermark == at else result.low_watermark)
    except Exception as e:  # noqa: BLE001 - the error is the answer compared with Kafka's
        answer = ("error", e.args[0].name() if e.args and hasattr(e.args[0], "name") else str(e))
    DELETE_RECORDS.setdefault(target.name, {})[policy] = answer
    if answer[0] == "ok":
        assert answer[1] == "log start = the requested offset", (target.name, at, answer)
        got, low, high = read_partition(target.bootstrap, topic)
        assert low == at and high == written[-1][0] + 1, (target.name, low, high)
        assert got == [r for r in want if r[0] >= at], target.name
    kafka = DELETE_RECORDS.get("kafka", {}).get(policy)
    if target.name == "bridge" and kafka is not None:
        assert answer == kafka, (policy, answer, kafka)
    if policy == "compact,delete":
        assert answer[0] == "ok", (target.name, answer)
