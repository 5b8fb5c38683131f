"""OffsetForLeaderEpoch and DescribeLogDirs over the wire against a real iggy-server, with raw
requests (harness/kafka_wire, not the bridge's codecs): the answers of a single Kafka broker whose
partitions have only ever had leader epoch 0, and the bridge's one log dir (the Iggy stream)."""
import os, shutil, socket, struct, subprocess, uuid
import pytest
from conftest import ROOT
from harness.kafka_wire import Reader, array, recv_frame, request, string

ck = pytest.importorskip("confluent_kafka")
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH = 3, 74, 75


def call(port, api_key, version, body, flexible):
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request(api_key, version, 7, body, flexible=flexible))
        frame = recv_frame(s)
    r = Reader(frame, 0, flexible)
    assert r.unpack("i") == 7
    no_tags(r)  # response header v1
    return r


def no_tags(r):
    """No tagged fields end a flexible structure of these answers."""
    if r.flexible:
        assert r.tagged_fields() == 0


def offset_for_leader_epoch(port, version, topic, partitions):
    """partitions: [(partition, current_leader_epoch, leader_epoch)] -> {partition: (error, epoch, end)}"""
    flexible = version >= 4
    tags = b"\x00" if flexible else b""
    parts = [struct.pack(">iii", p, cur, ep) + tags for p, cur, ep in partitions]
    replica_id = struct.pack(">i", -1) if version >= 3 else b""  # v3+: the consumer's -1
    body = replica_id + array([string(topic, flexible) + array(parts, flexible) + tags], flexible) + tags
    r = call(port, 23, version, body, flexible)
    r.unpack("i")  # throttle
    out = {}
    for _ in range(r.length()):
        assert r.string() == topic
        for _ in range(r.length()):
            err, p, epoch, end = r.unpack("hiiq")
            no_tags(r)
            out[p] = (err, epoch, end)
        no_tags(r)
    return out


def describe_log_dirs(port, version, topics=None):
    """-> (top-level error or None, [(error, log_dir, {topic: {partition: size}}, total, usable)])"""
    flexible = version >= 2
    tags = b"\x00" if flexible else b""
    if topics is None:
        body = (b"\x00" if flexible else struct.pack(">i", -1)) + tags
    else:
        items = [string(t, flexible) + array([struct.pack(">i", p) for p in ps], flexible) + tags for t, ps in topics]
        body = array(items, flexible) + tags
    r = call(port, 35, version, body, flexible)
    r.unpack("i")
    top = r.unpack("h") if version >= 3 else None
    results = []
    for _ in range(r.length()):
        err = r.unpack("h")
        log_dir = r.string()
        got = {}
        for _ in range(r.length()):
            name = r.string()
            got[name] = {}
            for _ in range(r.length()):
                p, size, lag, future = r.unpack("iqq?")
                no_tags(r)
                assert lag == 0 and not future
                got[name][p] = size
            no_tags(r)
        total = usable = None
        if version >= 4:
            total, usable = r.unpack("qq")
        no_tags(r)
        results.append((err, log_dir, got, total, usable))
    return top, results


@pytest.fixture
def topic(bridge_on_iggy):
    name = "ca-" + uuid.uuid4().hex[:8]
    bs = f"127.0.0.1:{bridge_on_iggy.port}"
    admin = AdminClient({"bootstrap.servers": bs})
    for f in admin.create_topics([NewTopic(name, 2)]).values():
        f.result(30)
    p = Producer({"bootstrap.servers": bs, "linger.ms": 0})
    for i in range(3):
        p.produce(name, b"x" * 100, partition=0)
    assert p.flush(30) == 0
    return name


@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch_answers_for_epoch_zero(bridge_on_iggy, topic, version):
    port = bridge_on_iggy.port
    got = offset_for_leader_epoch(port, version, topic, [(0, -1, 0), (1, 0, 0), (0, -1, 5), (0, 1, 0)])
    # Duplicate partition indexes collapse in the dict; ask separately for each case instead.
    assert offset_for_leader_epoch(port, version, topic, [(0, -1, 0)]) == {0: (0, 0, 3)}
    assert offset_for_leader_epoch(port, version, topic, [(1, 0, 0)]) == {1: (0, 0, 0)}
    # A later epoch than any the log had: (-1, -1), as Kafka's LeaderEpochFileCache answers.
    assert offset_for_leader_epoch(port, version, topic, [(0, -1, 5)]) == {0: (0, -1, -1)}
    # The client believes in a later leader epoch than the bridge's 0.
    assert offset_for_leader_epoch(port, version, topic, [(0, 1, 0)]) == {0: (UNKNOWN_LEADER_EPOCH, -1, -1)}
    assert offset_for_leader_epoch(port, version, topic, [(0, -5, 0)]) == {0: (FENCED_LEADER_EPOCH, -1, -1)}
    assert offset_for_leader_epoch(port, version, topic, [(9, -1, 0)]) == {9: (UNKNOWN_TOPIC_OR_PARTITION, -1, -1)}
    missing = "missing-" + uuid.uuid4().hex[:6]
    assert offset_for_leader_epoch(port, version, missing, [(0, -1, 0)]) == {0: (UNKNOWN_TOPIC_OR_PARTITION, -1, -1)}
    assert got  # the mixed request was answered too


@pytest.mark.parametrize("version", [1, 4])
def test_describe_log_dirs_reports_the_stream_and_iggy_sizes(bridge_on_iggy, iggy, topic, version):
    port = bridge_on_iggy.port
    top, results = describe_log_dirs(port, version)
    assert top in (None, 0)
    [(err, log_dir, topics, total, usable)] = results
    assert err == 0
    assert log_dir == f"iggy://{iggy.address}/kafka"
    assert set(topics[topic]) == {0, 1}
    assert topics[topic][0] > 300  # three 100-byte values, as Iggy stores them
    assert topics[topic][1] == 0
    if version >= 4:
        # The test server's user is root: GetStats tells the disk.
        assert total > 0 and 0 <= usable <= total

    _, [(_, _, only, _, _)] = describe_log_dirs(port, version, [(topic, [1, 7]), ("missing-x", [0])])
    assert only == {topic: {1: 0}}  # unknown topics and partitions are left out


JAVA_LIB = os.path.join(ROOT, "tests", ".java", "lib")


def console_consumer(bs, topic, group, n):
    if not shutil.which("java") or not os.path.isdir(JAVA_LIB):
        pytest.skip("SKIPPED: Kafka jars not fetched (tools/fetch-kafka)")
    return subprocess.run(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", JAVA_LIB + "/*",
                           "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bs,
                           "--topic", topic, "--group", group, "--from-beginning", "--max-messages", str(n),
                           "--timeout-ms", "30000"], capture_output=True, text=True, timeout=120)


def test_a_java_consumer_validates_its_committed_position_and_keeps_it(bridge_on_iggy, topic):
    """Kafka 4.1's consumer validates a position that carries a leader epoch (a committed offset of
    a record it read, epoch 0) with OffsetForLeaderEpoch once the broker advertises v3+; the answer
    (0, high watermark) must let it continue where it was, not reset."""
    bs = f"127.0.0.1:{bridge_on_iggy.port}"
    group = "g-" + uuid.uuid4().hex[:8]
    first = console_consumer(bs, topic, group, 3)
    assert first.stdout.split("\n")[:3] == ["x" * 100] * 3, first.stdout + first.stderr
    p = Producer({"bootstrap.servers": bs, "linger.ms": 0})
    p.produce(topic, b"after", partition=0)
    assert p.flush(30) == 0
    second = console_consumer(bs, topic, group, 1)
    # Resumes at the committed offset 3, the new record: no reset (which would replay from 0).
    assert second.stdout.split("\n")[:1] == ["after"], second.stdout + second.stderr
    log = bridge_on_iggy.read_log()
    assert f"OffsetForLeaderEpoch {topic}-0 epoch 0 (current 0): error 0, epoch 0, end 4" in log, log[-3000:]
