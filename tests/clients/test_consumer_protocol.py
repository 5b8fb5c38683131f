"""KIP-848 consumer groups beyond the member-kill scenario (test_group_member_kill.py runs that
with group.protocol=consumer): a Java consumer subscribed by regular expression with the
consumer protocol, on Kafka and on the bridge. The coordinator resolves the expression
(SubscribedTopicRegex, RE2/J syntax, whole names): the member consumes the matching topic that
exists when it joins, then a matching topic created while it runs, and never a topic that does
not match. The time from creating the new topic to its first record consumed is reported for
both targets (Kafka refreshes a group's expressions at most every 10 s, so does the bridge).
And on the bridge alone: a consumer-protocol group survives a SIGKILL of the bridge without a
rebalance."""
from __future__ import annotations

import subprocess
import time
import uuid

import pytest

from conftest import TIMINGS
from harness import util
from harness.kafka_broker import java_bin
from test_group_member_kill import PARTITIONS, Member, wait_for


def java_member(bootstrap: str, topic: str, group: str, client_id: str) -> list[str]:
    from runners import java

    if not java.available():
        util.skip_loudly("no java/javac for the Java group members")
    java.compile_java("GroupMember")
    return [java_bin(), *java.JVM_FAST, "-cp", java.classpath(), "GroupMember", bootstrap, topic, group, client_id,
            "consumer:uniform", "6000", "10000"]


def produce(bootstrap: str, topic: str, values: list[str], partitions: int):
    import confluent_kafka

    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, v in enumerate(values):
        p.produce(topic, value=v.encode(), partition=i % partitions)
    assert p.flush(30) == 0


def test_a_regex_subscription_picks_up_matching_topics_created_later(target):
    pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not in the test venv")
    from confluent_kafka.admin import AdminClient, NewTopic

    tag = uuid.uuid4().hex[:8]
    bs = target.bootstrap
    admin = AdminClient({"bootstrap.servers": bs})
    first, later, other = f"re-{tag}-a", f"re-{tag}-b", f"other-{tag}-b"
    admin.create_topics([NewTopic(first, 2, 1)])[first].result(timeout=60)
    member = Member.start("regex", java_member(bs, f"regex:re-{tag}-.*", f"re-{tag}-group", "regex-0"),
                          util.log_dir() / f"regex-{target.name}.log")
    try:
        a_values = [f"{first}-{i}" for i in range(10)]
        produce(bs, first, a_values, 2)
        consumed = lambda: {r[3] for r in member.records}  # noqa: E731
        wait_for(lambda: set(a_values) <= consumed(), 90, f"the member to consume {first}")
        created = time.monotonic()
        for t in (later, other):
            admin.create_topics([NewTopic(t, 1, 1)])[t].result(timeout=60)
        b_values, other_values = [f"{later}-{i}" for i in range(10)], [f"{other}-{i}" for i in range(10)]
        produce(bs, later, b_values, 1)
        produce(bs, other, other_values, 1)
        wait_for(lambda: bool(set(b_values) & consumed()), 90, f"the member to pick up {later}")
        picked_up_s = time.monotonic() - created
        wait_for(lambda: set(b_values) <= consumed(), 30, f"the member to consume all of {later}")
        time.sleep(2)
        assert not set(other_values) & consumed(), f"{other} does not match the expression"
    finally:
        member.stop()
    TIMINGS[f"regex_pickup_{target.name}_s"] = round(picked_up_s, 1)


@pytest.fixture(scope="module")
def restarted_bridge(request):
    """A bridge of its own (stream kafka-cp-restart) for the kill test, so the session's bridge
    is not killed under the other tests."""
    from conftest import side_bridge

    yield from side_bridge(request, "bridge-cp-restart", "cp-restart", "")


def test_consumer_protocol_members_carry_on_across_a_bridge_kill_without_a_rebalance(restarted_bridge):
    """Two Java members (group.protocol=consumer) share a 6-partition topic while records
    arrive; the bridge is killed with SIGKILL and started again. The group comes back from
    SQLite with its members, epochs and assignments: the members keep heartbeating at their
    epochs, nobody loses or gains a partition (no rebalance), and every acknowledged record is
    consumed. (Kafka keeps its groups across a broker restart the same way, from
    __consumer_offsets.)"""
    pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not in the test venv")
    from confluent_kafka.admin import AdminClient, NewTopic

    from test_group_member_kill import Producer

    target = restarted_bridge
    br = target.server
    tag = uuid.uuid4().hex[:8]
    topic, group = f"cp-restart-{tag}", f"cp-restart-{tag}-group"
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(timeout=60)
    producer = Producer(target.bootstrap, topic, tag)  # round-robin over the 6 partitions
    members = []
    try:
        producer.start()
        members = [Member.start(f"cp-{i}", java_member(target.bootstrap, topic, group, f"cp-{i}"),
                                util.log_dir() / f"cp-restart-{i}.log") for i in range(2)]
        wait_for(lambda: all(len(m.owned()) == 3 for m in members) and all(m.commits for m in members), 120,
                 "2 members owning 3 partitions each, each having committed")
        before = [m.owned() for m in members]
        killed_at = int(time.time() * 1000)
        br.kill_and_restart()
        t0 = time.monotonic()
        # Both members commit again through the restarted bridge.
        wait_for(lambda: all(any(ts > killed_at for ts, _, _ in m.commits) for m in members), 60,
                 "both members committing through the restarted bridge")
        resumed_s = time.monotonic() - t0
        time.sleep(3)
        producer.stop()
        acked = {v for _, _, v in producer.acked}
        wait_for(lambda: acked <= {r[3] for m in members for r in m.records}, 60,
                 "the members to consume every acknowledged record")
        after = [[parts for ts, parts in m.assignments if ts > killed_at] for m in members]
    finally:
        producer.stopping.set()
        for m in members:
            m.stop()
    TIMINGS["cp_restart_resumed_s"] = round(resumed_s, 1)
    for m, b, a in zip(members, before, after):
        assert all(parts == b for parts in a), f"{m.name} owned {sorted(b)} before the kill, then {a}"
    assert br.log_since_start().count("joins the consumer group") == 0, "a member joined again after the restart"
