"""KIP-848's online migration with real Java consumers, against a real Kafka broker (the reference)
and against the bridge: a group of three classic members is restarted one member at a time as
group.protocol=consumer members (a rolling upgrade: the first one converts the live classic group
to a consumer group, the classic members keep working inside it through JoinGroup, SyncGroup and
Heartbeat; one of them is killed with SIGKILL and restarted in the mixed group), then one at a time back to the classic protocol (a rolling downgrade: the last
consumer-protocol member leaving turns the group back into a classic group), while a producer
writes records with unique values (acks=all).

After each restart the three members own two of the six partitions each; the time each step took
is reported beside Kafka's. At the end the checker of tests/clients/test_group_member_kill.py
compares what was acknowledged with what was consumed: nothing lost, no partition with two owners
at once, every new owner started at or after the group's committed offset. The group's type is
checked through the Admin API at both ends (consumer after the upgrade, classic after the
downgrade).
"""
from __future__ import annotations

import json
import time
import uuid

import pytest

from conftest import TIMINGS
from harness import util
from test_group_member_kill import (PARTITIONS, Member, Producer, check, each_partition_owned_once, member_argv,
                                    wait_for)

ASSIGNORS = ["java-cooperative-sticky", "java-range"]
MODERN = "java-consumer-uniform"
STEP_TIMEOUT_S = 90


def group_type(bootstrap: str, group: str) -> str | None:
    """The group's type as ListGroups v5 reports it ("classic", "consumer"), if the client can tell."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    listing = admin.list_consumer_groups(request_timeout=15).result()
    for g in listing.valid:
        if g.group_id == group:
            t = getattr(g, "type", None)
            return None if t is None else str(t.name).lower()
    return "absent"


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_a_rolling_upgrade_to_the_consumer_protocol_and_back_loses_nothing(assignor, target):
    pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka (the producer) not in the test venv")
    from confluent_kafka.admin import AdminClient, NewTopic

    tag = uuid.uuid4().hex[:8]
    topic, group = f"migrate-{assignor}-{tag}", f"migrate-{assignor}-{tag}-group"
    bs = target.bootstrap
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(timeout=60)
    t_start = time.monotonic()
    producer = Producer(bs, topic, tag).start()
    everyone: list[Member] = []
    live: list[Member] = []
    steps: list[tuple[str, float]] = []
    types: dict[str, str | None] = {}

    def start(client: str, name: str) -> Member:
        m = Member.start(name, member_argv(client, bs, topic, group, name),
                         util.log_dir() / f"migrate-{assignor}-{target.name}-{name}.log")
        everyone.append(m)
        return m

    def settled():
        return (each_partition_owned_once(live) and all(len(m.owned()) == 2 for m in live)
                and all(m.proc.poll() is None for m in live))

    def replace(i: int, client: str, name: str, what: str):
        old = live[i]
        t0 = time.monotonic()
        old.stop()  # SIGTERM: the consumer closes and leaves the group
        old.killed_at = int(time.time() * 1000)  # it consumes nothing after this
        live[i] = start(client, name)
        wait_for(settled, STEP_TIMEOUT_S, f"{what}: 3 members owning 2 partitions each")
        steps.append((what, round(time.monotonic() - t0, 1)))

    try:
        live.extend(start(assignor, f"classic-{i}") for i in range(3))
        wait_for(lambda: settled() and all(m.commits for m in live), 120,
                 "3 classic members owning 2 of the 6 partitions each, each having committed")
        types["start"] = group_type(bs, group)
        for i in range(3):
            replace(i, MODERN, f"consumer-{i}", f"upgrade {i + 1}/3")
            if i == 0:
                types["after first upgrade"] = group_type(bs, group)
                # A mixed group (one consumer-protocol member, two classic ones) loses a classic
                # member to SIGKILL: its own session timeout ends it and the two survivors take
                # its partitions over; then it is started again.
                victim = live[2]
                victim.kill()
                t0 = time.monotonic()
                survivors = live[:2]
                wait_for(lambda: each_partition_owned_once(survivors) and all(len(m.owned()) == 3 for m in survivors),
                         STEP_TIMEOUT_S, "the mixed group's 2 survivors owning 3 partitions each")
                steps.append(("mixed group: takeover after SIGKILL", round(time.monotonic() - t0, 1)))
                live[2] = start(assignor, "classic-restarted-2")
                wait_for(settled, STEP_TIMEOUT_S, "the restarted classic member back in the mixed group")
        types["upgraded"] = group_type(bs, group)
        for i in range(3):
            replace(i, assignor, f"classic-again-{i}", f"downgrade {i + 1}/3")
        types["downgraded"] = group_type(bs, group)
        time.sleep(1.0)
        producer.stop()
        acked_values = {v for _, _, v in producer.acked}
        wait_for(lambda: acked_values <= {r[3] for m in everyone for r in m.records}, 60,
                 "the members to consume every acknowledged record")
    finally:
        producer.stopping.set()
        for m in everyone:
            m.stop()

    report = check(producer.acked, everyone)
    report.update(assignor=assignor, target=target.name, steps=steps, types=types,
                  produce_failures=len(producer.failed), run_s=round(time.monotonic() - t_start, 1))
    (util.log_dir() / f"migrate-{assignor}-{target.name}.json").write_text(json.dumps(report, indent=1) + "\n")
    TIMINGS[f"migrate_{assignor}_{target.name}"] = " ".join(f"{s}" for _, s in steps)

    assert not report["missing"], f"{len(report['missing'])} acknowledged records never consumed: {report['missing'][:20]}"
    assert not report["wrong_value"], report["wrong_value"][:20]
    assert not report["two_owners"], report["two_owners"]
    assert not report["started_before_commit"], report["started_before_commit"]
    assert report["acked"] >= 1000, report
    # The group's type as the Admin API lists it, where the client reports types.
    if types["start"] is not None:
        assert types == {"start": "classic", "after first upgrade": "consumer", "upgraded": "consumer",
                         "downgraded": "classic"}, types
