"""Issue 35: a crash at every step of a compaction pass loses, duplicates and moves nothing
(docs/compaction.md, "Crashes, at every step").

The bridge runs against a real iggy-server with KIB_TEST_COMPACTION_CRASH naming a step of the
pass; the process ends there at once, as kill -9 would end it. Started again without it, the
bridge finishes or undoes the interrupted pass at startup, a new pass cleans the partition, and a
checker reads the partition from its log start: exactly what Kafka's compaction guarantees of
what was acknowledged (the latest record of every key below the cleaner point, every record from
it, offsets unchanged, tombstones kept within delete.retention.ms).
"""
import os, time, uuid

import pytest

from test_admin_cli import cli_json
from test_amplification import with_http
from test_hostile_pending_answers import metrics_text, sample

from confluent_kafka import Producer  # noqa: E402
from harness.read_partition import compacted_view, read_partition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

STEPS = ["written-row", "created-generation", "sent-copies", "committed", "stored-barrier", "deleted-segments"]


def produce_rounds(port, topic):
    """3 rounds of 10 keys (a tombstone for k9 in the last), 150 ms apart so each rolls the virtual
    active segment, then one record more: everything before it is cleanable. (offset, key, value)."""
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all", "linger.ms": 5})
    written = []

    def sent(err, m):
        assert err is None, err
        written.append((m.offset(), m.key().decode(), m.value().decode() if m.value() is not None else None))
    for rnd in range(3):
        for k in range(10):
            p.produce(topic, key=f"k{k}", value=None if (rnd == 2 and k == 9) else f"r{rnd}-{k}", on_delivery=sent)
        assert p.flush(30) == 0
        time.sleep(0.15)
    p.produce(topic, key="k0", value="last", on_delivery=sent)
    assert p.flush(30) == 0
    return sorted(written)


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_at_every_step_of_a_pass_loses_nothing(bridge_factory, iggy, step):
    # Passes are checked every 2 s: the rounds are all in before the first one starts.
    b = with_http(bridge_factory("[compaction]\nbackoff_ms = 2000\n", iggy_address=iggy.address))
    b.start(env={**os.environ, "KIB_TEST_COMPACTION_CRASH": step}).wait_ready()
    topic = "crash-" + uuid.uuid4().hex[:8]
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{b.port}"})
    admin.create_topics([NewTopic(
        topic, num_partitions=1, replication_factor=1,
        config={"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01"})])[topic].result(30)
    written = produce_rounds(b.port, topic)
    point = written[-1][0]
    assert point == 30
    deadline = time.monotonic() + 30
    while b.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not b.alive(), f"the bridge did not stop at {step}"
    assert f"KIB_TEST_COMPACTION_CRASH={step}" in b.read_log()

    b.start().wait_ready()  # this test's environment: no crash step
    # The virtual active segment is not kept across a restart: with no append since, the next
    # pass may clean up to the high watermark (31), the last record included.
    end = point + 1
    deadline = time.monotonic() + 30
    while True:
        part = {t["topic"]: t for t in cli_json(b, "topics", "list")}[topic]["partitions"][0]
        if part.get("cleaner_point") == end or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert part.get("cleaner_point") == end, part
    got, _, _ = read_partition(f"127.0.0.1:{b.port}", topic)
    assert got == compacted_view(written, end), (step, got)
    assert len(got) == 10 and got[-2] == (29, "k9", None) and got[-1] == (30, "k0", "last")
    m = metrics_text(b)
    # The interrupted pass was found at startup (its row was written before every step).
    assert sample(m, "kib_compaction_passes_total", 'result="recovered"') == 1, m
    assert sample(m, "kib_compaction_barrier_repairs_total") == 0
