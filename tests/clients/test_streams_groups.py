"""Kafka Streams 4.4 with group.protocol=streams (KIP-1071 streams groups), against Kafka 4.4 and
against the bridge, with the same checks and the same results on both.

With the streams protocol the broker, not the application, owns the rebalance: StreamsGroupHeartbeat
carries the application's topology, the broker decides how many partitions the repartition and
changelog topics need and creates them (the application creates no topic), assigns the tasks and
hands them over member by member. The word count of test_frameworks.py runs once more with it: its
counts, its restore from the changelog after a wipe of the local state, and the internal topics
the broker created (partitions, cleanup.policy) must be those Kafka gives.
"""
from __future__ import annotations

import json
import subprocess
import uuid

from harness import util
from harness.kafka_broker import java_bin
from test_frameworks import JVM, PHASE1, PHASE2, counts

RESULTS: dict[str, dict] = {}


def run_streams_app(args: list[str], stdin: str, timeout: float, log_name: str) -> dict:
    from runners import java

    if not java.available():
        util.skip_loudly("no java/javac for the Kafka Streams 4.4 tests")
    java.compile_java("StreamsApp", next_tier=True)
    log = util.log_dir() / log_name
    with open(log, "wb") as err:
        p = subprocess.run([java_bin(), *JVM, "-cp", java.classpath(next_tier=True), "StreamsApp", *args],
                           input=stdin.encode(), stdout=subprocess.PIPE, stderr=err, timeout=timeout)
    assert p.returncode == 0 and p.stdout.strip(), \
        f"StreamsApp exit {p.returncode}, log {log}:\n{util.tail(log, 60)}"
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def test_kafka_streams_word_count_with_the_streams_group_protocol(target_next, tmp_path):
    target = target_next
    tag = f"sg-wc-{target.name}-{uuid.uuid4().hex[:8]}"
    r = run_streams_app([target.bootstrap, tag, str(tmp_path / "state"), "120000", "streams"],
                        "\n".join(PHASE1) + "\n--\n" + "\n".join(PHASE2) + "\n", 180,
                        f"streams-groups-{target.name}.log")
    app = tag + "-wc"
    total = counts(PHASE1 + PHASE2)
    assert r["errors"] == [], "\n".join(r["errors"])
    assert r["phase1"] == counts(PHASE1)
    assert r["task_dirs_before_wipe"] == ["0_0", "0_1", "1_0", "1_1"]
    assert r["local_state_wiped"] is True
    assert r["restored"] >= len(counts(PHASE1)), r
    assert r["final"] == total
    assert r["store"] == total
    # The broker created the internal topics from the topology: as many partitions as the input.
    assert r["internal_topics"] == {
        f"{app}-by-word-repartition": {"partitions": 2, "cleanup.policy": "delete"},
        f"{app}-counts-changelog": {"partitions": 2, "cleanup.policy": "compact"},
    }
    assert len(r["repartition_log_start"]) == 2 and sum(r["repartition_log_start"]) > 0, r
    RESULTS[target.name] = r
    other = RESULTS.get("kafka-next")
    if target.name == "bridge" and other:
        same = {k: v for k, v in r.items() if k not in ("restored", "repartition_log_start", "internal_topics")}
        assert same == {k: v for k, v in other.items() if k in same}
