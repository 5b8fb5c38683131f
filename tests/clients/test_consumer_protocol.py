"""KIP-848 consumer groups beyond the member-kill scenario (test_group_member_kill.py runs that
with group.protocol=consumer): a Java consumer subscribed by regular expression with the
consumer protocol, on Kafka and on the bridge. The coordinator resolves the expression
(SubscribedTopicRegex, RE2/J syntax, whole names): the member consumes the matching topic that
exists when it joins, then a matching topic created while it runs, and never a topic that does
not match. The time from creating the new topic to its first record consumed is reported for
both targets (Kafka refreshes a group's expressions at most every 10 s, so does the bridge)."""
from __future__ import annotations

import subprocess
import time
import uuid

import pytest

from conftest import TIMINGS
from harness import util
from harness.kafka_broker import java_bin
from test_group_member_kill import Member, wait_for


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
