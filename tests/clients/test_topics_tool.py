"""`kafka-topics` (Kafka 4.1's TopicCommand) side by side: the same scripted session against a
real Kafka broker and against the bridge must print the same thing, command for command.

The session: --create (and again: already exists), --list, --describe by name and by
--topic-id, --alter --partitions (grow, same count, fewer), --delete, the errors for topics that
do not exist (describe, delete, alter, an unknown topic id), and a topic deleted and created again
under its name (its old id is unknown then). Then the same raw DeleteTopics v6, CreatePartitions
v3 and DescribeTopicPartitions v0 requests to both (and __consumer_offsets after a group commit)
(harness/kafka_wire/admin.py): Kafka's error codes and texts for duplicates, name and id together,
unknown names and ids, bad assignments and the cursor pagination.

Normalized, and only these: topic ids (TopicId: column, random on each side), and for the raw
requests the ids in the answers. Topics carry the same run tag on both sides; --list output is
reduced to this session's topics (the brokers are shared with other tests of the session).

--describe prints a "Configs:" column that comes from DescribeConfigs, which the bridge serves
only with the configs work (issue 15, chunk B). Until the bridge advertises DescribeConfigs (key
32), the commands that print it are recorded but left out of the comparison:
TODO(coordinator, issue 15 chunk B): once DescribeConfigs is merged, CONFIGS_NEEDED commands are
compared too (nothing to change here: the check below switches itself on), and the reference
broker needs log.retention.ms=-1 (plan §3.3) for the Configs column to match."""
from __future__ import annotations

import difflib
import re
import socket
import struct
import uuid

import pytest

from harness import util
from harness.bridge import target_mode
from harness.tool_shell import TOPIC_COMMAND, ToolSession

from harness.kafka_wire import api_versions_request, parse_api_versions, recv_frame
from harness.kafka_wire.admin import AdminConn, kafka_id_text, random_id

TAG = uuid.uuid4().hex[:8]
T = f"topics-tool-{TAG}"
T2 = f"topics-tool-{TAG}-b"
MISSING = f"topics-tool-{TAG}-missing"
W = f"topics-tool-{TAG}-wire"
W2 = f"topics-tool-{TAG}-wire2"
UNKNOWN_ID = random_id()

# target name -> [(label, stdout, stderr, exit code, needs DescribeConfigs)]
TRANSCRIPTS: dict[str, list[tuple[str, str, str, int, bool]]] = {}
CONFIGS_SERVED: dict[str, bool] = {}

TOPIC_ID_RE = re.compile(r"TopicId: \S+")


def normalize(text: str, ids: dict[str, str]) -> str:
    text = TOPIC_ID_RE.sub("TopicId: <id>", text)
    for real, name in ids.items():
        text = text.replace(real, name)
    return text


def only_this_session(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if TAG in line)


def host_port(bootstrap: str) -> tuple[str, int]:
    host, port = bootstrap.rsplit(":", 1)
    return host, int(port)


def advertises(bootstrap: str, key: int) -> bool:
    host, port = host_port(bootstrap)
    with socket.create_connection((host, port), timeout=10) as s:
        s.sendall(api_versions_request(3, 1))
        _, err, apis = parse_api_versions(recv_frame(s), 3)
    return err == 0 and key in apis


def wire_session(bootstrap: str, ids: dict[bytes, str]) -> list[tuple[str, str]]:
    """Raw requests: (label, repr of the answer with ids masked)."""
    host, port = host_port(bootstrap)
    conn = AdminConn(port, host=host)
    out = []

    def mask(v):
        if isinstance(v, bytes) and len(v) == 16:
            return "<zero>" if v == b"\x00" * 16 else ids.get(v, "<other id>")
        if isinstance(v, (list, tuple)):
            return type(v)(mask(x) for x in v)
        if isinstance(v, dict):
            return {k: mask(x) for k, x in v.items()}
        return v

    def record(label, value, unordered=False):
        v = mask(value)
        if unordered:  # answers Kafka gives in hash-map order: compared as sets
            v = sorted(v, key=repr)
        out.append((label, repr(v)))

    try:
        # A group commit (FindCoordinator first): Kafka has __consumer_offsets from then on, and
        # reports it internal; the bridge reports it the same way ([groups]
        # offsets_topic_partitions = 1 in the test config, offsets.topic.num.partitions=1 on Kafka).
        from confluent_kafka import Consumer, TopicPartition
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"topics-tool-{TAG}-g", "enable.auto.commit": False})
        c.commit(offsets=[TopicPartition(W2, 0, 0)], asynchronous=False)
        c.close()
        record("describe-topic-partitions __consumer_offsets", conn.describe_topic_partitions(["__consumer_offsets"]))
        topics, _ = conn.describe_topic_partitions([W])
        w_id = topics[0]["id"]
        ids[w_id] = "<id W>"
        # DescribeTopicPartitions: 3 + 2 partitions, 2 at a time, plus an unknown topic.
        names = [W2, MISSING, W]
        cur = None
        for i in range(4):
            topics, cur = conn.describe_topic_partitions(names, limit=2, cursor=cur)
            record(f"describe-topic-partitions page {i}", (topics, cur))
            if cur is None:
                break
        record("describe-topic-partitions cursor not listed", conn.describe_topic_partitions([W], cursor=(W2, 0)))
        record("describe-topic-partitions negative cursor", conn.describe_topic_partitions([W], cursor=(W, -1)))
        # CreatePartitions: the controller's checks.
        record("create-partitions duplicates and unknown",
               conn.create_partitions([(W, 4, None), (W, 5, None), (MISSING, 2, None)]), unordered=True)
        record("create-partitions same count", conn.create_partitions([(W, 3, None)]))
        record("create-partitions fewer", conn.create_partitions([(W, 2, None)]))
        record("create-partitions assignment count", conn.create_partitions([(W, 5, [[1]])]))
        record("create-partitions unknown broker", conn.create_partitions([(W, 4, [[2]])]))
        record("create-partitions empty replicas", conn.create_partitions([(W, 4, [[]])]))
        record("create-partitions broker twice", conn.create_partitions([(W, 4, [[1, 1]])]))
        record("create-partitions validate only", conn.create_partitions([(W, 4, None)], validate_only=True))
        record("create-partitions v0 grow", conn.create_partitions([(W, 4, [[1]])], version=0))
        # DeleteTopics v6: the controller's checks, then unknown name and id, then by id.
        record("delete-topics invalid entries", conn.delete_topics(
            entries=[(W2, None), (W2, None), (None, w_id), (None, w_id), (W, w_id), (None, None)]), unordered=True)
        record("delete-topics unknown", conn.delete_topics(entries=[(MISSING, None), (None, UNKNOWN_ID)]), unordered=True)
        record("delete-topics by id", conn.delete_topics(entries=[(None, w_id)]))
        record("delete-topics v1 by name", conn.delete_topics(names=[W2, W], version=1), unordered=True)
    finally:
        conn.close()
    return out


def session(target) -> tuple[list, list]:
    bs = target.bootstrap
    transcript: list[tuple[str, str, str, int, bool]] = []
    ids: dict[str, str] = {}
    with ToolSession(TOPIC_COMMAND, bs, util.log_dir() / f"topics-tool-{target.name}.log") as tool:
        def run(*args: str, listing: bool = False, configs: bool = False):
            r = tool.run(*args)
            out, err = normalize(r.stdout, ids), normalize(r.stderr, ids)
            if listing:
                out = only_this_session(out)
            transcript.append((normalize(" ".join(args), ids), out, err, r.exit_code, configs))
            return r

        def topic_id(name: str) -> bytes:
            host, port = host_port(bs)
            c = AdminConn(port, host=host)
            try:
                topics, _ = c.describe_topic_partitions([name])
            finally:
                c.close()
            assert topics[0]["error"] == 0, topics
            return topics[0]["id"]

        run("--create", "--topic", T, "--partitions", "2", "--replication-factor", "1")
        run("--create", "--topic", T, "--partitions", "2")
        run("--create", "--topic", T2, "--partitions", "1")
        run("--list", listing=True)
        first_id = kafka_id_text(topic_id(T))
        ids[first_id] = "<id T>"
        run("--describe", "--topic", T, configs=True)
        # TODO(coordinator): on the bridge this prints "TopicId <id> not found." (the Java
        # AdminClient's describeTopics(TopicCollection.ofTopicIds) over Metadata v12 by id), though
        # a raw Metadata v12 by id answers the topic (tests/system/test_admin_topics.py). Compared
        # once DescribeConfigs is served, so this shows up then; not investigated in chunk A.
        run("--describe", "--topic-id", first_id, configs=True)
        run("--alter", "--topic", T, "--partitions", "4")
        run("--alter", "--topic", T, "--partitions", "4")
        run("--alter", "--topic", T, "--partitions", "3")
        run("--describe", "--topic", T, configs=True)
        run("--describe", "--topic", T, "--unavailable-partitions", configs=True)
        run("--delete", "--topic", T2)
        run("--list", listing=True)
        run("--describe", "--topic", T2)
        run("--delete", "--topic", MISSING)
        run("--delete", "--topic", MISSING, "--if-exists")
        run("--alter", "--topic", MISSING, "--partitions", "3")
        run("--describe", "--topic-id", kafka_id_text(UNKNOWN_ID))
        run("--delete", "--topic", T)
        run("--create", "--topic", T, "--partitions", "1")
        second_id = kafka_id_text(topic_id(T))
        assert second_id != first_id  # a topic created again is a new topic
        ids[second_id] = "<id T again>"
        ids[kafka_id_text(UNKNOWN_ID)] = "<unknown id>"
        run("--describe", "--topic-id", first_id)
        run("--describe", "--topic-id", second_id, configs=True)
        run("--delete", "--topic", T)
        run("--list", listing=True)
        # For the raw requests.
        run("--create", "--topic", W, "--partitions", "3")
        run("--create", "--topic", W2, "--partitions", "2")
    wire = wire_session(bs, {UNKNOWN_ID: "<unknown id>"})
    return transcript, wire


WIRE: dict[str, list[tuple[str, str]]] = {}


def test_topics_tool_session(target):
    """The session runs to its end on each target; its own expectations hold on both."""
    CONFIGS_SERVED[target.name] = advertises(target.bootstrap, 32)
    transcript, wire = session(target)
    TRANSCRIPTS[target.name] = transcript
    WIRE[target.name] = wire
    text = "\n".join(f"$ kafka-topics {label}\n{out}\n{err}[exit {code}]" for label, out, err, code, _ in transcript)
    text += "\n\n" + "\n".join(f"{label}: {v}" for label, v in wire)
    (util.log_dir() / f"topics-tool-{target.name}.txt").write_text(text + "\n")
    by_label = {}
    for label, out, err, code, _ in transcript:
        by_label.setdefault(label, []).append((out + err, code))
    assert by_label[f"--create --topic {T} --partitions 2 --replication-factor 1"][0] == (f"Created topic {T}.\n", 0)
    assert by_label["--list"][0][0] == f"{T}\n{T2}"
    assert by_label["--list"][1][0] == T
    assert by_label["--list"][2][0] == ""


def compare(kafka, bridge, skip) -> list[str]:
    diffs = []
    for k, b in zip(kafka, bridge):
        if skip(k):
            continue
        label = k[0]
        for what, kv, bv in (("stdout", k[1], b[1]), ("stderr", k[2], b[2]), ("exit", str(k[3]), str(b[3]))):
            if kv != bv:
                diff = "\n".join(difflib.unified_diff(kv.split("\n"), bv.split("\n"), "kafka", "bridge", lineterm="", n=1))
                diffs.append(f"$ kafka-topics {label}  ({what})\n{diff}")
    return diffs


def test_topics_tool_prints_the_same_on_kafka_and_the_bridge(request):
    if target_mode() == "xfail":
        request.applymarker(pytest.mark.xfail(reason="bridge target in xfail mode (KIB_BRIDGE_TARGET=xfail)",
                                              strict=False))
    kafka, bridge = TRANSCRIPTS.get("kafka"), TRANSCRIPTS.get("bridge")
    if kafka is None or bridge is None:
        missing = " and ".join(n for n, t in (("kafka", kafka), ("bridge", bridge)) if t is None)
        util.skip_loudly(f"kafka-topics: no {missing} transcript to compare (that run was skipped or failed)")
    assert [t[0] for t in bridge] == [t[0] for t in kafka]
    configs = CONFIGS_SERVED.get("bridge", False)
    # TODO(coordinator, issue 15 chunk B): the --describe commands that print "Configs:" are
    # compared once the bridge serves DescribeConfigs (this switches on by itself).
    diffs = compare(kafka, bridge, lambda t: t[4] and not configs)
    compared = sum(1 for t in kafka if not (t[4] and not configs))
    assert compared >= 17
    assert not diffs, f"{len(diffs)} outputs differ:\n\n" + "\n\n".join(diffs)


def test_topic_admin_wire_answers_are_the_same_on_kafka_and_the_bridge(request):
    if target_mode() == "xfail":
        request.applymarker(pytest.mark.xfail(reason="bridge target in xfail mode (KIB_BRIDGE_TARGET=xfail)",
                                              strict=False))
    kafka, bridge = WIRE.get("kafka"), WIRE.get("bridge")
    if kafka is None or bridge is None:
        util.skip_loudly("admin wire: a transcript is missing (that run was skipped or failed)")
    assert [x[0] for x in bridge] == [x[0] for x in kafka]
    diffs = [f"{label}\n  kafka:  {k}\n  bridge: {b}" for (label, k), (_, b) in zip(kafka, bridge) if k != b]
    assert not diffs, f"{len(diffs)} answers differ:\n\n" + "\n\n".join(diffs)
