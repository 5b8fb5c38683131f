"""Moving a consumer group off a real Kafka broker with its position (README "Migrating off
Kafka", step 3): the same records on Kafka and on the bridge, a group that committed on Kafka,
`kafka-consumer-groups --describe` captured on Kafka and fed to `kafka-iggy-bridge offsets
import`. Afterwards kafka-consumer-groups shows the same positions and lag on both, and a
consumer of the group continues on the bridge exactly where it stopped on Kafka."""
import subprocess, time, uuid

import pytest

from harness import bridge as bridge_mod
from runners import java

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not in the test venv")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

GROUP_TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
RECORDS = {0: [f"p0-{i}" for i in range(10)], 1: [f"p1-{i}" for i in range(5)]}
COMMITS = {0: 7, 1: 2}


def load(bootstrap, topic):
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the topic exists
    admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])[topic].result(timeout=60)
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, values in RECORDS.items():
        for v in values:
            p.produce(topic, value=v.encode(), partition=partition)
    assert p.flush(60) == 0


def describe(bootstrap, group):
    if not java.available():
        pytest.skip("SKIPPED: Kafka tools not available (tests/clients/setup.sh)")
    r = java.tool(GROUP_TOOL, ["--bootstrap-server", bootstrap, "--describe", "--group", group])
    return r.stdout.decode() + r.stderr.decode()


def positions(text, group):
    """(topic, partition, CURRENT-OFFSET, LOG-END-OFFSET, LAG) rows of a --describe listing."""
    return sorted(tuple(line.split()[1:6]) for line in text.splitlines()
                  if line.startswith(group + " ") and line.split()[2].isdigit())


def consume_next(bootstrap, group, topic):
    """The first record the group reads from each partition."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    first = {}
    try:
        c.subscribe([topic])
        deadline = time.time() + 60
        while len(first) < 2 and time.time() < deadline:
            m = c.poll(0.5)
            if m is not None and not m.error():
                first.setdefault(m.partition(), (m.offset(), m.value().decode()))
    finally:
        c.close()
    return first


def test_group_offsets_move_from_kafka_to_the_bridge_with_offsets_import(kafka_broker, bridge, tmp_path):
    binary = bridge_mod.find_binary()
    topic, group = "migrate-" + uuid.uuid4().hex[:8], "billing-" + uuid.uuid4().hex[:8]
    load(kafka_broker.bootstrap, topic)
    load(bridge.bootstrap, topic)

    # On Kafka: the group committed, then its consumers stopped.
    c = Consumer({"bootstrap.servers": kafka_broker.bootstrap, "group.id": group, "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(topic, p, o) for p, o in COMMITS.items()], asynchronous=False)
    c.close()
    on_kafka = describe(kafka_broker.bootstrap, group)
    assert positions(on_kafka, group) == [(topic, "0", "7", "10", "3"), (topic, "1", "2", "5", "3")], on_kafka
    listing = tmp_path / "billing.txt"
    listing.write_text(on_kafka)

    # The bridge knows nothing of the group yet; the import prints its plan, then commits.
    assert positions(describe(bridge.bootstrap, group), group) == []
    run = lambda *extra: subprocess.run([str(binary), "offsets", "import", str(listing), "--bootstrap-server",
                                         bridge.bootstrap, *extra], capture_output=True, text=True, timeout=60)
    r = run()
    assert r.returncode == 0 and "Dry run" in r.stderr, r.stdout + r.stderr
    assert positions(describe(bridge.bootstrap, group), group) == []
    r = run("--execute")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("committed") == 2, r.stdout

    on_bridge = describe(bridge.bootstrap, group)
    assert positions(on_bridge, group) == positions(on_kafka, group), on_bridge
    # The group continues on the bridge where it stopped on Kafka, as it would on Kafka.
    assert consume_next(bridge.bootstrap, group, topic) == consume_next(kafka_broker.bootstrap, group, topic) == \
        {0: (7, "p0-7"), 1: (2, "p1-2")}
