"""The admin subcommands (`topics list`, `groups list|describe`, `offsets import|export`) against
the real bridge on a real iggy-server, checked against what Kafka clients, the Java
kafka-consumer-groups tool and a native Iggy client (apache-iggy) observe."""
import asyncio, base64, json, os, re, shutil, subprocess, time, uuid
import pytest
from conftest import ROOT, bridge_bin

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

JAVA_LIB = os.path.join(ROOT, "tests", ".java", "lib")


def unique(prefix):
    return prefix + "-" + uuid.uuid4().hex[:8]


def cli(b, *args, input=None, timeout=60):
    r = subprocess.run([bridge_bin(), *args, "-c", b.config], input=input, capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def cli_json(b, *args):
    rc, out, err = cli(b, *args, "--json")
    assert rc == 0, out + err
    return json.loads(out)


def bs(b):
    return f"127.0.0.1:{b.port}"


def create_topic(b, topic, partitions):
    admin = AdminClient({"bootstrap.servers": bs(b)})
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic].result(timeout=30)
    return admin


def produce(b, topic, partition, values):
    p = Producer({"bootstrap.servers": bs(b), "acks": "all", "linger.ms": 5})
    failures = []
    for v in values:
        p.produce(topic, value=v.encode(), partition=partition, on_delivery=lambda e, m: e and failures.append(e))
    assert p.flush(30) == 0 and failures == []


def commit(b, group, offsets):
    """Commits {(topic, partition): (offset, metadata)} as a non-member (generation -1)."""
    c = Consumer({"bootstrap.servers": bs(b), "group.id": group, "enable.auto.commit": False})
    try:
        c.commit(offsets=[TopicPartition(t, p, o, metadata=m) for (t, p), (o, m) in offsets.items()],
                 asynchronous=False)
    finally:
        c.close()


def committed(b, group, topic, partitions):
    c = Consumer({"bootstrap.servers": bs(b), "group.id": group, "enable.auto.commit": False})
    try:
        got = c.committed([TopicPartition(topic, p) for p in partitions], timeout=20)
        return {tp.partition: (tp.offset, tp.metadata) for tp in got}
    finally:
        c.close()


class Member:
    """A live confluent-kafka group member, polled until it owns partitions."""

    def __init__(self, b, group, topic):
        self.c = Consumer({"bootstrap.servers": bs(b), "group.id": group, "client.id": "cli-test-member",
                           "enable.auto.commit": False, "session.timeout.ms": 10000})
        self.c.subscribe([topic])
        deadline = time.time() + 60
        while not self.c.assignment() and time.time() < deadline:
            self.c.poll(0.2)
        assert self.c.assignment(), "the member got no assignment"

    def close(self):
        self.c.close()


def test_topics_list_counts_partitions_and_messages_and_prints_kafka_topic_ids(bridge_on_iggy):
    b, topic = bridge_on_iggy, unique("orders")
    admin = create_topic(b, topic, 3)
    produce(b, topic, 0, [f"a{i}" for i in range(5)])
    produce(b, topic, 2, ["c0", "c1"])
    doc = {t["topic"]: t for t in cli_json(b, "topics", "list")}
    t = doc[topic]
    assert t["messages"] == 7
    assert [(p["partition"], p["log_start_offset"], p["log_end_offset"]) for p in t["partitions"]] == \
        [(0, 0, 5), (1, 0, 0), (2, 0, 2)]
    described = admin.describe_topics(ck.TopicCollection([topic]))[topic].result(timeout=30)
    # Kafka's own form (Uuid.toString(), as kafka-topics prints it) is URL-safe base64;
    # librdkafka prints the same 16 bytes in standard base64.
    assert len(t["topic_id"]) == 22 and "+" not in t["topic_id"] and "/" not in t["topic_id"]
    assert base64.urlsafe_b64decode(t["topic_id"] + "==") == base64.b64decode(str(described.topic_id) + "==")
    rc, out, err = cli(b, "topics", "list")
    assert rc == 0, err
    assert out.splitlines()[0].split() == ["TOPIC", "PARTITIONS", "MESSAGES", "TOPIC-ID", "CLEANED", "GENERATIONS"]
    assert re.search(rf"^{topic}\s+3\s+7\s+{re.escape(t['topic_id'])}\s+-\s+-$", out, re.M), out


def test_groups_list_and_describe_show_state_offsets_lag_and_members(bridge_on_iggy):
    b, topic, group = bridge_on_iggy, unique("t"), unique("g")
    create_topic(b, topic, 3)
    produce(b, topic, 0, [f"v{i}" for i in range(5)])
    produce(b, topic, 2, ["x", "y"])
    commit(b, group, {(topic, 0): (5, "done"), (topic, 2): (1, "")})

    listed = {g["group"]: g for g in cli_json(b, "groups", "list")}
    assert listed[group]["state"] == "Empty" and listed[group]["members"] == 0
    [d] = cli_json(b, "groups", "describe", group)
    assert d["state"] == "Empty" and d["members"] == []
    # confluent-kafka sends a metadata string with its C terminator (a Kafka broker stores that
    # NUL too, and confluent-kafka drops it again when it reads the commit back).
    assert [(o["partition"], o["committed_offset"], o["log_end_offset"], o["lag"], o["metadata"])
            for o in d["offsets"]] == [(0, 5, 5, 0, "done\0"), (2, 1, 2, 1, "\0")]

    rc, out, err = cli(b, "groups", "describe", group)
    assert rc == 0, err
    assert f"Consumer group '{group}': Empty, 0 members" in out
    assert re.search(rf"^{group}\s+{topic}\s+2\s+1\s+2\s+1\s+-\s+-\s+-$", out, re.M), out

    m = Member(b, group, topic)
    try:
        [d] = cli_json(b, "groups", "describe", group)
        assert d["state"] == "Stable" and d["assignor"] == "range"
        [member] = d["members"]
        assert member["client_id"] == "cli-test-member"
        assert sorted(p["partition"] for p in member["assignment"]) == [0, 1, 2]
        # Every partition the member owns is shown, committed or not.
        assert [(o["partition"], o["committed_offset"], o["member_id"]) for o in d["offsets"]] == \
            [(0, 5, member["member_id"]), (1, None, member["member_id"]), (2, 1, member["member_id"])]
        listed = {g["group"]: g for g in cli_json(b, "groups", "list")}
        assert listed[group]["state"] == "Stable" and listed[group]["members"] == 1
    finally:
        m.close()

    rc, out, err = cli(b, "groups", "describe", "no-such-group-" + uuid.uuid4().hex[:6])
    assert rc == 1 and "does not exist" in err, out + err


def test_groups_describe_agrees_with_kafka_consumer_groups(bridge_on_iggy):
    if not shutil.which("java") or not os.path.isdir(JAVA_LIB):
        pytest.skip("SKIPPED: Kafka jars not fetched (tools/fetch-kafka)")
    b, topic, group = bridge_on_iggy, unique("t"), unique("g")
    create_topic(b, topic, 2)
    produce(b, topic, 0, ["a", "b", "c"])
    produce(b, topic, 1, ["d"])
    commit(b, group, {(topic, 0): (1, ""), (topic, 1): (1, "")})
    r = subprocess.run(["java", "-cp", JAVA_LIB + "/*", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                        "--bootstrap-server", bs(b), "--describe", "--group", group],
                       capture_output=True, text=True, timeout=120)
    def rows(text):
        return sorted(tuple(line.split()[:6]) for line in text.splitlines()
                      if line.startswith(group + " ") and line.split()[2].isdigit())
    rc, ours, err = cli(b, "groups", "describe", group)
    assert rc == 0, err
    assert rows(ours) == rows(r.stdout) == [(group, topic, "0", "1", "3", "2"), (group, topic, "1", "1", "1", "0")], \
        ours + r.stdout + r.stderr


def test_offsets_import_plans_clamps_commits_and_refuses_active_groups(bridge_on_iggy, tmp_path):
    b, topic, group, busy = bridge_on_iggy, unique("t"), unique("g"), unique("busy")
    create_topic(b, topic, 2)
    produce(b, topic, 0, [f"v{i}" for i in range(10)])
    produce(b, topic, 1, ["w0", "w1", "w2"])
    listing = tmp_path / "offsets.csv"
    listing.write_text("group,topic,partition,offset,metadata\n"
                       f"{group},{topic},0,4,from-kafka\n"
                       f"{group},{topic},1,99\n")

    rc, out, err = cli(b, "offsets", "import", str(listing))
    assert rc == 0, out + err
    assert "Dry run" in err
    assert re.search(rf"^{group}\s+{topic}\s+1\s+3\s+planned \(clamped from 99 to the log end\)$", out, re.M), out
    assert committed(b, group, topic, [0, 1]) == {0: (ck.OFFSET_INVALID, None), 1: (ck.OFFSET_INVALID, None)}

    rc, out, err = cli(b, "offsets", "import", str(listing), "--execute")
    assert rc == 0, out + err
    assert committed(b, group, topic, [0, 1]) == {0: (4, "from-kafka"), 1: (3, None)}

    # Three columns, as `kafka-consumer-groups --reset-offsets --export` writes them, need --group;
    # standard input works as the file.
    rc, out, err = cli(b, "offsets", "import", "-", "--group", group, "--execute", input=f"{topic},0,2\n")
    assert rc == 0, out + err
    assert committed(b, group, topic, [0])[0][0] == 2

    # A group with a live member is refused, and nothing of it is committed.
    m = Member(b, busy, topic)
    try:
        rc, out, err = cli(b, "offsets", "import", "-", "--execute", input=f"{busy},{topic},0,1\n")
        assert rc == 1 and "stop its consumers first" in out, out + err
    finally:
        m.close()
    assert committed(b, busy, topic, [0])[0][0] == ck.OFFSET_INVALID

    # Rows naming what the bridge does not have fail on their own; the others still commit.
    rc, out, err = cli(b, "offsets", "import", "-", "--execute",
                       input=f"{group},{topic},0,6\n{group},{topic},7,1\n{group},no-such-topic-x,0,1\n")
    assert rc == 1, out + err
    assert "error: the topic has 2 partitions" in out and "error: no such topic on the bridge" in out, out
    assert committed(b, group, topic, [0])[0][0] == 6

    rc, out, err = cli(b, "offsets", "import", "-", input="g,t,zero,1\n")
    assert rc == 1 and "line 1: partition \"zero\" is not a number" in err, err


def native(address):
    iggy_sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")

    async def connect():
        c = iggy_sdk.IggyClient(address)
        await c.connect()
        await c.login_user("iggy", "iggy")
        return c
    return iggy_sdk, connect


def test_offsets_export_lets_native_iggy_consumers_continue_where_kafka_stopped(bridge_on_iggy, iggy):
    iggy_sdk, connect = native(iggy.address)
    b, topic, group = bridge_on_iggy, unique("t"), unique("g")
    create_topic(b, topic, 2)
    produce(b, topic, 0, [f"v{i}" for i in range(6)])
    produce(b, topic, 1, ["w0", "w1", "w2", "w3"])
    commit(b, group, {(topic, 0): (4, ""), (topic, 1): (0, "")})

    rc, out, err = cli(b, "offsets", "export", "--group", group)
    assert rc == 0, out + err
    assert "Dry run" in err
    assert re.search(rf"^{topic}\s+0\s+4\s+3\s+store 3$", out, re.M), out
    assert re.search(rf"^{topic}\s+1\s+0\s+-\s+delete$", out, re.M), out

    doc = cli_json(b, "offsets", "export", "--group", group, "--execute")
    assert [(p["partition"], p["iggy_offset"], p["action"], p["error"]) for p in doc["partitions"]] == \
        [(0, 3, "stored 3", None), (1, None, "none stored", None)]

    async def next_of_group():
        c = await connect()
        await c.join_consumer_group("kafka", topic, group)
        out = {}
        for p in (0, 1):
            msgs = await c.poll_messages("kafka", topic, consumer=iggy_sdk.Consumer.Group(group),
                                         polling_strategy=iggy_sdk.PollingStrategy.Next(), count=1,
                                         auto_commit=False, partition_id=p)
            out[p] = [(m.offset(), bytes(m.payload())) for m in msgs]
        await c.leave_consumer_group("kafka", topic, group)
        return out
    assert asyncio.run(next_of_group()) == {0: [(4, b"v4")], 1: [(0, b"w0")]}

    # A plain named Iggy consumer instead of a group.
    doc = cli_json(b, "offsets", "export", "--group", group, "--iggy-consumer", "native-app", "--execute")
    assert [p["action"] for p in doc["partitions"]] == ["stored 3", "none stored"]

    async def next_of_consumer():
        c = await connect()
        msgs = await c.poll_messages("kafka", topic, consumer=iggy_sdk.Consumer.Single("native-app"),
                                     polling_strategy=iggy_sdk.PollingStrategy.Next(), count=2, auto_commit=False,
                                     partition_id=0)
        return [(m.offset(), bytes(m.payload())) for m in msgs]
    assert asyncio.run(next_of_consumer()) == [(4, b"v4"), (5, b"v5")]


def test_offsets_export_refuses_live_kafka_members_and_busy_iggy_groups(bridge_on_iggy, iggy):
    iggy_sdk, connect = native(iggy.address)
    b, topic, group = bridge_on_iggy, unique("t"), unique("g")
    create_topic(b, topic, 1)
    produce(b, topic, 0, ["a", "b"])
    commit(b, group, {(topic, 0): (1, "")})

    m = Member(b, group, topic)
    try:
        rc, out, err = cli(b, "offsets", "export", "--group", group, "--execute")
        assert rc == 1 and "stop its Kafka consumers first" in err, out + err
    finally:
        m.close()

    async def hold_membership():
        c = await connect()
        await c.create_consumer_group("kafka", topic, group)
        await c.join_consumer_group("kafka", topic, group)
        rc, out, err = await asyncio.to_thread(cli, b, "offsets", "export", "--group", group, "--execute")
        await c.leave_consumer_group("kafka", topic, group)
        return rc, out, err
    rc, out, err = asyncio.run(hold_membership())
    assert rc == 1 and "has 1 members; stop its consumers before exporting" in out, out + err

    rc, out, err = cli(b, "offsets", "export", "--group", "never-committed-" + uuid.uuid4().hex[:6])
    assert rc == 1 and "has no committed offsets" in err, out + err


def test_admin_subcommands_say_when_the_bridge_does_not_answer(bridge_factory):
    b = bridge_factory()  # never started
    for args in (["topics", "list"], ["groups", "list"], ["groups", "describe", "g"]):
        rc, out, err = cli(b, *args)
        assert rc == 1 and f"not answering Kafka requests at 127.0.0.1:{b.port}" in err, (args, out, err)


def test_operator_queries_in_db_show_groups_members_and_offsets_readably(bridge_on_iggy):
    """db/queries.sql, as an operator runs it with sqlite3 against the live state database."""
    if not shutil.which("sqlite3"):
        pytest.skip("SKIPPED: the sqlite3 command line is not installed (make deps)")
    b, topic, group = bridge_on_iggy, unique("t"), unique("g")
    create_topic(b, topic, 2)
    produce(b, topic, 0, ["a", "b", "c"])
    commit(b, group, {(topic, 0): (2, "checkpoint-7")})
    m = Member(b, group, topic)
    try:
        deadline = time.time() + 10
        while True:  # the group's rows follow the rebalance through the batched state writer
            r = subprocess.run(["sqlite3", "-header", "-column", b.state],
                               stdin=open(os.path.join(ROOT, "db", "queries.sql")),
                               capture_output=True, text=True, timeout=30)
            if "Stable" in r.stdout or time.time() > deadline:
                break
            time.sleep(0.2)
    finally:
        m.close()
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # Group row: id, state, protocol, generation, members, offsets.
    assert re.search(rf"^{group}\s+Stable\s+consumer\s+range\s+1\s+\S+\s+1\s+1\s", out, re.M), out
    # Member row with client id and what it owns, readable.
    assert re.search(rf"^{group}\s+cli-test-member-\S+\s+cli-test-member\s+\S+\s+10000\s+{topic}\s+{topic}:0,1\s*$",
                     out, re.M), out
    # Committed offset with its metadata and a readable UTC time.
    assert re.search(rf"^{group}\s+{topic}\s+0\s+2\s+-1\s+checkpoint-7\s+20\d\d-\d\d-\d\d \d\d:\d\d:\d\d", out, re.M), out


def test_topics_list_names_a_compacted_partitions_cleaned_head(bridge_factory, iggy):
    """After the cleaner's first pass, `topics list` shows the partition as cleaned and its
    generation topic; --json gives the cleaner point and the records kept."""
    b = bridge_factory("[compaction]\nbackoff_ms = 200\n", iggy_address=iggy.address).start().wait_ready()
    topic = unique("compacted")
    admin = AdminClient({"bootstrap.servers": bs(b)})
    admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1,
                                  config={"cleanup.policy": "compact", "segment.ms": "100",
                                          "min.cleanable.dirty.ratio": "0.01"})])[topic].result(timeout=30)
    p = Producer({"bootstrap.servers": bs(b), "linger.ms": 5})
    for rnd in range(2):
        for k in range(4):
            p.produce(topic, key=f"k{k}", value=f"r{rnd}")
        assert p.flush(30) == 0
        time.sleep(0.15)  # the next round rolls the virtual active segment
    p.produce(topic, key="k0", value="last")
    assert p.flush(30) == 0
    deadline = time.time() + 30
    while True:
        doc = {t["topic"]: t for t in cli_json(b, "topics", "list")}
        part = doc[topic]["partitions"][0]
        if part.get("cleaner_point") == 8 or time.time() > deadline:  # a first pass may end at 4
            break
        time.sleep(0.3)
    assert part.get("cleaner_point") == 8 and part["generation"] >= 1 and part["kept_records"] == 4, part
    assert (part["log_start_offset"], part["log_end_offset"]) == (0, 9)
    rc, out, err = cli(b, "topics", "list")
    assert rc == 0, err
    assert re.search(rf"^{topic}\s+1\s+9\s+\S+\s+1\s+{re.escape(part['generation_topic'])}$", out, re.M), out
    assert "generation topics: Iggy stream 'kafka-" in out, out

    # `offsets export` warns of a committed offset below the cleaner point (the live Iggy topic
    # may start later; the kept records are in the generation topic), and only of that one.
    below, above = unique("g"), unique("g")
    commit(b, below, {(topic, 0): (2, "")})
    commit(b, above, {(topic, 0): (8, "")})
    rc, out, err = cli(b, "offsets", "export", "--group", below)
    assert rc == 0, out + err
    assert re.search(rf"^warning: {topic}-0: committed offset 2 is below the cleaner point 8; .*Iggy topic "
                     rf"'{re.escape(part['generation_topic'])}' of stream 'kafka-compacted'", err, re.M), err
    assert re.search(rf"^{topic}\s+0\s+2\s+1\s+store 1$", out, re.M), out
    doc = cli_json(b, "offsets", "export", "--group", below)
    assert part["generation_topic"] in doc["partitions"][0]["warning"], doc
    doc = cli_json(b, "offsets", "export", "--group", above)
    assert doc["partitions"][0]["warning"] is None and doc["partitions"][0]["action"] == "store 7", doc
