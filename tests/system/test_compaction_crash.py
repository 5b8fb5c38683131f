"""Issue 35: a crash at every step of a compaction pass loses, duplicates and moves nothing
(docs/compaction.md, "Crashes, at every step"), whether the bridge or iggy-server is killed.

The bridge runs against a real iggy-server with KIB_TEST_COMPACTION_CRASH naming a step of the
pass; the process ends there at once, as kill -9 would end it. Started again without it, the
bridge finishes or undoes the interrupted pass at startup, a new pass cleans the partition, and a
checker reads the partition from its log start: exactly what Kafka's compaction guarantees of
what was acknowledged (the latest record of every key below the cleaner point, every record from
it, offsets unchanged, tombstones kept within delete.retention.ms).

For iggy-server, KIB_TEST_COMPACTION_PAUSE holds the first pass at the step (the bridge serves
on) while the test kills iggy-server -9, lets the pass go on against the dead server, and starts
iggy-server again on the same data: the bridge reconnects, the pass is abandoned or finished,
later passes clean what came since, and the same checker passes.
"""
import os, time, uuid

import pytest

from harness.iggy_server import IggyServer, find_binary

from test_admin_cli import cli_json
from test_amplification import with_http
from test_hostile_pending_answers import metrics_text, sample

from confluent_kafka import Producer  # noqa: E402
from harness.read_partition import compacted_view, read_partition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

STEPS = ["written-row", "created-generation", "sent-copies", "committed", "stored-barrier", "deleted-segments"]


def produce_rounds(port, topic, rounds=range(3), last="k0"):
    """Rounds of 10 keys (a tombstone for k9 in round 2), 150 ms apart so each rolls the virtual
    active segment, then one record more (key `last`): everything before it is cleanable.
    (offset, key, value)."""
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all", "linger.ms": 5,
                  "message.timeout.ms": 60000})
    written = []

    def sent(err, m):
        assert err is None, err
        written.append((m.offset(), m.key().decode(), m.value().decode() if m.value() is not None else None))
    for rnd in rounds:
        for k in range(10):
            p.produce(topic, key=f"k{k}", value=None if (rnd == 2 and k == 9) else f"r{rnd}-{k}", on_delivery=sent)
        assert p.flush(60) == 0
        time.sleep(0.15)
    p.produce(topic, key=last, value="last", on_delivery=sent)
    assert p.flush(60) == 0
    return sorted(written)


def create_compacted(port, topic):
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
    admin.create_topics([NewTopic(
        topic, num_partitions=1, replication_factor=1,
        config={"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01"})])[topic].result(30)


def bridge_with_rounds(bridge_factory, iggy_address, env, prefix):
    """A bridge checking for passes every 2 s (the rounds are all in before the first one starts),
    started with the fault hook `env`, and a compacted topic written by produce_rounds: (bridge,
    topic, written)."""
    b = with_http(bridge_factory("[compaction]\nbackoff_ms = 2000\n", iggy_address=iggy_address))
    b.start(env={**os.environ, **env}).wait_ready()
    topic = prefix + uuid.uuid4().hex[:8]
    create_compacted(b.port, topic)
    written = produce_rounds(b.port, topic)
    assert written[-1][0] == 30
    return b, topic, written


def wait_cleaner_point(b, topic, end, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        try:
            part = {t["topic"]: t for t in cli_json(b, "topics", "list")}[topic]["partitions"][0]
        except Exception:  # noqa: BLE001 - the CLI reads the state file; a moment of contention
            part = {}
        if part.get("cleaner_point") == end or time.monotonic() > deadline:
            return part
        time.sleep(0.3)


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_at_every_step_of_a_pass_loses_nothing(bridge_factory, iggy, step):
    b, topic, written = bridge_with_rounds(bridge_factory, iggy.address, {"KIB_TEST_COMPACTION_CRASH": step}, "crash-")
    point = written[-1][0]
    deadline = time.monotonic() + 30
    while b.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not b.alive(), f"the bridge did not stop at {step}"
    assert f"KIB_TEST_COMPACTION_CRASH={step}" in b.read_log()

    b.start().wait_ready()  # this test's environment: no crash step
    # The virtual active segment is not kept across a restart: with no append since, the next
    # pass may clean up to the high watermark (31), the last record included.
    end = point + 1
    part = wait_cleaner_point(b, topic, end, 30)
    assert part.get("cleaner_point") == end, part
    got, _, _ = read_partition(f"127.0.0.1:{b.port}", topic)
    assert got == compacted_view(written, end), (step, got)
    assert len(got) == 10 and got[-2] == (29, "k9", None) and got[-1] == (30, "k0", "last")
    m = metrics_text(b)
    # The interrupted pass was found at startup (its row was written before every step).
    assert sample(m, "kib_compaction_passes_total", 'result="recovered"') == 1, m
    assert sample(m, "kib_compaction_barrier_repairs_total") == 0


@pytest.fixture
def own_iggy():
    """An iggy-server of this test alone: it is killed."""
    binary = find_binary()
    if binary is None:
        pytest.skip("SKIPPED: no iggy-server (set IGGY_SERVER or install /usr/local/bin/iggy-server)")
    server = IggyServer(binary, log_name="iggy-server-compaction-kill.log").start()
    yield server
    server.stop()


@pytest.mark.parametrize("step", STEPS)
def test_iggy_server_killed_at_every_step_of_a_pass_loses_nothing(bridge_factory, own_iggy, step, tmp_path):
    held = tmp_path / "paused"
    b, topic, written = bridge_with_rounds(
        bridge_factory, own_iggy.address,
        {"KIB_TEST_COMPACTION_PAUSE": step, "KIB_TEST_COMPACTION_PAUSE_FILE": str(held)}, "iggykill-")
    point = written[-1][0]
    deadline = time.monotonic() + 30
    while not held.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert held.exists(), f"no pass reached {step}"

    own_iggy.kill9()
    held.unlink()  # the pass goes on against a dead iggy-server
    time.sleep(1.0)
    own_iggy.restart()
    assert b.alive()
    # The record at 30 opened the virtual active segment, which the running bridge keeps: the
    # cleaner point reaches 30 (a pass committed before the kill, or one after the restart).
    part = wait_cleaner_point(b, topic, point)
    assert part.get("cleaner_point") == point, (step, part)
    got, _, _ = read_partition(f"127.0.0.1:{b.port}", topic)
    assert got == compacted_view(written, point), (step, got)

    # The bridge and its cleaner go on: another round and a record to roll it are cleaned as well.
    written += produce_rounds(b.port, topic, rounds=[3], last="k1")
    end = written[-1][0]
    assert end == 41
    part = wait_cleaner_point(b, topic, end)
    assert part.get("cleaner_point") == end, (step, part)
    got, low, high = read_partition(f"127.0.0.1:{b.port}", topic)
    assert got == compacted_view(written, end), (step, got)
    assert (low, high) == (0, 42)
    log = b.read_log()
    assert f"KIB_TEST_COMPACTION_PAUSE={step}: pass goes on" in log
    m = metrics_text(b)
    assert sample(m, 'kib_compaction_passes_total', 'result="committed"') >= 2, m
