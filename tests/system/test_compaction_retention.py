"""`cleanup.policy=compact,delete` (issue 35): besides keeping the latest record of each key, the
cleaner drops records older than `retention.ms`, whatever their key, and the log start moves to
the first record kept, as Kafka's retention deletes a compact,delete topic's old segments
(docs/compaction.md, "What Kafka consumers see"). Against a real iggy-server; the reference
broker's retention runs every 5 minutes (log.retention.check.interval.ms), too seldom for the
client tier, so this check runs here.
"""
import time
import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from harness.read_partition import read_partition


def test_compact_delete_drops_what_retention_ms_expires_and_moves_the_log_start(bridge_factory, iggy):
    b = bridge_factory("[compaction]\nbackoff_ms = 500\n", iggy_address=iggy.address).start().wait_ready()
    bootstrap = f"127.0.0.1:{b.port}"
    topic = "compact-delete-" + uuid.uuid4().hex[:8]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(
        topic, num_partitions=1, replication_factor=1,
        config={"cleanup.policy": "compact,delete", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
                "retention.ms": "3000"})])[topic].result(30)
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    written = []

    def sent(err, m):
        assert err is None, err
        written.append((m.offset(), m.key().decode(), m.value().decode()))

    def round_of(keys, tag):
        for k in keys:
            p.produce(topic, key=f"k{k}", value=f"{tag}-{k}", on_delivery=sent)
        assert p.flush(30) == 0
        time.sleep(0.15)  # the next append rolls the virtual active segment

    round_of(range(10), "old")  # k0-k4 are never written again: only retention removes them
    time.sleep(3.5)
    round_of(range(5, 15), "new")
    p.produce(topic, key="roll", value="roll", on_delivery=sent)
    assert p.flush(30) == 0
    written.sort()
    assert [o for o, _, _ in written] == list(range(21))
    want = [r for r in written if r[0] >= 10]  # every "old" record is past retention.ms

    deadline = time.monotonic() + 60
    while True:
        got, low, high = read_partition(bootstrap, topic)
        if (got, low) == (want, 10) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert got == want, got
    # ListOffsets earliest (the low watermark) is the first record kept; the end did not move.
    assert (low, high) == (10, 21)
