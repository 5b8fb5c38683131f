"""ACLs side by side (docs/security.md "Authorization"): a Kafka 4.1 broker with
`authorizer.class.name=StandardAuthorizer` and the bridge with `[authorization] enabled`, both with
`allow.everyone.if.no.acl.found` (so the plaintext principal, User:ANONYMOUS on both, may manage
ACLs and topics: no ACL names the cluster), run the same session:

- `kafka-acls` (Kafka 4.1's AclCommand, unchanged, one JVM): --add for users on literal and
  prefixed topics, a group and a transactional id, --list (all, by resource, by principal),
  --remove, the errors it prints; the output must be identical once the order Kafka prints
  resources and entries in (a hash map's) is made canonical;
- confluent-kafka clients as User:ANONYMOUS against topics whose ACLs give it READ only, WRITE
  only, or nothing: a produce without WRITE and a fetch without READ fail with the same error on
  both, a consumer group without READ too, and Metadata lists the same (only described-allowed)
  topics of the session.

Each target gets its own broker or bridge for this module (the session-wide ones run without an
authorizer)."""
from __future__ import annotations

import difflib
import re
import shutil
import time
import uuid

import pytest

from harness import bridge as bridge_mod
from harness import iggy_server, util
from harness.bridge import target_mode
from harness.kafka_broker import KafkaBroker
from harness.tool_shell import ToolSession, TOPIC_COMMAND

ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
TAG = uuid.uuid4().hex[:8]
ORDERS = f"acl-{TAG}-orders"     # alice READ+WRITE, carol producer/consumer: ANONYMOUS nothing
READ_ONLY = f"acl-{TAG}-ro"      # ANONYMOUS READ
WRITE_ONLY = f"acl-{TAG}-wo"     # ANONYMOUS WRITE
HIDDEN = f"acl-{TAG}-hidden"     # bob READ only: ANONYMOUS may not even DESCRIBE it
OPEN = f"acl-{TAG}-open"         # no ACL at all: allowed to everyone
PREFIX = f"acl-{TAG}-pre-"
GROUP = f"acl-{TAG}-group"       # bob READ: ANONYMOUS may not join
TXN = f"acl-{TAG}-tx"

RESULTS: dict[str, dict] = {}


def ck():
    return pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not in the test venv")


@pytest.fixture(scope="module")
def acl_kafka():
    if shutil.which("java") is None:
        util.skip_loudly("no java: cannot run the reference Kafka broker (Java 17+ needed)")
    kb = KafkaBroker(log_name="kafka-broker-acls.log", extra_props={
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found": "true",
    })
    try:
        kb.start()
    except BaseException:
        kb.stop()
        raise
    yield kb.bootstrap
    kb.stop()


@pytest.fixture(scope="module")
def acl_bridge(request):
    binary = bridge_mod.binary_or_skip()
    srv = request.getfixturevalue("iggy")
    br = bridge_mod.start_client_tier_bridge(
        binary, srv.address, iggy_server.USERNAME, iggy_server.PASSWORD, log_name="bridge-acls.log",
        extra_toml="\n[authorization]\nenabled = true\nallow_everyone_if_no_acl_found = true\n")
    yield br.bootstrap
    br.cleanup()


# ---- kafka-acls output, made canonical

BLOCK_RE = re.compile(r"^(Adding ACLs for resource|Current ACLs for resource|Removing ACLs from resource) ")


def canonical(text: str) -> str:
    """AclCommand prints each resource as a header line and its entries (" \t(e1)", "\t(e2) ")
    then a blank line, resources and entries in hash-map order: entries are stripped and sorted
    in their block, and each run of consecutive blocks is sorted."""
    lines = text.split("\n")
    out: list[str] = []
    blocks: list[list[str]] = []
    i = 0

    def flush():
        for b in sorted(blocks):
            out.extend(b)
        blocks.clear()

    while i < len(lines):
        if not BLOCK_RE.match(lines[i]):
            flush()
            out.append(lines[i])
            i += 1
            continue
        header = lines[i].rstrip()
        i += 1
        entries = []
        while i < len(lines) and lines[i].strip():
            entries.append(lines[i].strip())
            i += 1
        while i < len(lines) and not lines[i].strip() and i + 1 < len(lines):
            i += 1
        blocks.append([header] + sorted(entries) + [""])
    flush()
    return "\n".join(out).rstrip("\n")


def only_this_session(text: str) -> str:
    """--list prints every ACL of the broker; the session's carry its tag (User: ones name it)."""
    keep: list[str] = []
    for block in re.split(r"\n(?=Current ACLs for resource)", text):
        if TAG in block.split("\n", 1)[0]:
            keep.append(block)
    return "\n".join(keep)


def acl_session(bootstrap: str, name: str) -> list[tuple[str, str, str, int]]:
    transcript: list[tuple[str, str, str, int]] = []
    with ToolSession(TOPIC_COMMAND, bootstrap, util.log_dir() / f"acls-topics-{name}.log") as topics:
        for t in (ORDERS, READ_ONLY, WRITE_ONLY, HIDDEN, OPEN, PREFIX + "a"):
            r = topics.run("--create", "--topic", t, "--partitions", "1", "--replication-factor", "1")
            assert r.exit_code == 0, (t, r.stdout, r.stderr)
    with ToolSession(ACL_COMMAND, bootstrap, util.log_dir() / f"acls-tool-{name}.log") as tool:
        def run(*args: str, listing: bool = False):
            r = tool.run(*args)
            out = canonical(only_this_session(r.stdout) if listing else r.stdout)
            transcript.append((" ".join(args), out, r.stderr, r.exit_code))
            return r

        run("--add", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Write", "--topic", ORDERS)
        run("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Read", "--topic", READ_ONLY)
        run("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Write", "--topic", WRITE_ONLY)
        run("--add", "--allow-principal", "User:bob", "--operation", "Read", "--topic", HIDDEN)
        run("--add", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.1", "--operation", "All",
            "--resource-pattern-type", "prefixed", "--topic", PREFIX)
        run("--add", "--allow-principal", "User:bob", "--operation", "Read", "--group", GROUP)
        run("--add", "--allow-principal", "User:alice", "--operation", "Write", "--operation", "Describe",
            "--transactional-id", TXN)
        run("--add", "--producer", "--allow-principal", "User:carol", "--topic", ORDERS)
        run("--add", "--consumer", "--allow-principal", "User:carol", "--topic", ORDERS, "--group", GROUP)
        # Kafka answers CreateAcls once its controller committed them; its broker's authorizer
        # (which DescribeAcls reads) has them a moment later. The bridge has them at once.
        time.sleep(2)
        run("--list", "--topic", ORDERS)
        run("--list", "--topic", PREFIX, "--resource-pattern-type", "prefixed")
        run("--list", "--topic", PREFIX + "x", "--resource-pattern-type", "match")
        run("--list", "--group", GROUP)
        run("--list", "--transactional-id", TXN)
        run("--list", "--principal", "User:carol", listing=True)
        run("--list", listing=True)
        run("--remove", "--force", "--allow-principal", "User:carol", "--operation", "Describe", "--topic", ORDERS)
        time.sleep(2)
        run("--list", "--topic", ORDERS)
        run("--remove", "--force", "--topic", PREFIX, "--resource-pattern-type", "prefixed")
        time.sleep(2)
        run("--list", "--topic", PREFIX, "--resource-pattern-type", "any")
        # Refused by the tool or by the broker: the same text and exit code.
        run("--add", "--allow-principal", "alice", "--operation", "Read", "--topic", OPEN)
        run("--list", "--topic", OPEN)
    return transcript


# ---- what clients see

def client_session(bootstrap: str) -> dict[str, object]:
    ck()
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient
    out: dict[str, object] = {}

    def produce(topic: str) -> str:
        p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": False, "message.timeout.ms": 15000,
                      "retries": 0})
        result: list[str] = []
        p.produce(topic, b"v", callback=lambda e, m: result.append(e.name() if e else "OK"))
        p.flush(20)
        return result[0] if result else "no delivery report"

    def fetch(topic: str) -> str:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"acl-{TAG}-reader", "enable.auto.commit": False,
                      "auto.offset.reset": "earliest"})
        try:
            c.assign([TopicPartition(topic, 0, 0)])
            deadline = time.time() + 20
            while time.time() < deadline:
                m = c.poll(1.0)
                if m is None:
                    continue
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    return m.error().name()
                return "record"
            return "nothing"
        finally:
            c.close()

    def join(group: str) -> str:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                      "session.timeout.ms": 10000})
        try:
            c.subscribe([OPEN])
            deadline = time.time() + 20
            while time.time() < deadline:
                m = c.poll(1.0)
                if m is not None and m.error():
                    return m.error().name()
                if c.assignment():
                    return "assigned"
            return "nothing"
        finally:
            c.close()

    out["produce open"] = produce(OPEN)
    out["produce read-only"] = produce(READ_ONLY)
    out["produce write-only"] = produce(WRITE_ONLY)
    out["produce hidden"] = produce(HIDDEN)
    out["fetch open"] = fetch(OPEN)
    out["fetch write-only"] = fetch(WRITE_ONLY)
    out["fetch read-only"] = fetch(READ_ONLY)
    out["join denied group"] = join(GROUP)
    out["join open group"] = join(f"acl-{TAG}-open-group")
    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=15)
    out["metadata"] = sorted(t for t in md.topics if TAG in t and not md.topics[t].error)
    named = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic=HIDDEN, timeout=15)
    err = named.topics[HIDDEN].error
    out["metadata hidden by name"] = err.name() if err else "listed"
    return out


def admin_session(bootstrap: str) -> dict[str, object]:
    """confluent-kafka's AdminClient on resources User:ANONYMOUS may or may not touch: the error
    name of each outcome (or what succeeded), for the topic, group, config and cluster APIs.
    Nothing names the cluster, so cluster-wide rights (CREATE, DELETE, IDEMPOTENT_WRITE,
    DESCRIBE) are the default's: CreateTopics and DeleteTopics pass whatever the topic's ACLs say,
    as on Kafka."""
    ck()
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicCollection, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic, OffsetSpec, ResourceType
    admin = AdminClient({"bootstrap.servers": bootstrap})
    out: dict[str, object] = {}

    def outcome(label, fut):
        try:
            v = fut.result(timeout=30)
            out[label] = "OK" if v is None else v
        except Exception as e:  # noqa: BLE001 - the error is the observation
            err = e.args[0] if e.args else e
            out[label] = err.name() if hasattr(err, "name") else type(e).__name__

    outcome("describe configs hidden", admin.describe_configs([ConfigResource(ResourceType.TOPIC, HIDDEN)])[
        ConfigResource(ResourceType.TOPIC, HIDDEN)])
    res = admin.describe_configs([ConfigResource(ResourceType.TOPIC, READ_ONLY)])
    outcome("describe configs read-only", res[ConfigResource(ResourceType.TOPIC, READ_ONLY)])
    out["describe configs read-only"] = "OK" if isinstance(out["describe configs read-only"], dict) else \
        out["describe configs read-only"]
    outcome("create partitions read-only", admin.create_partitions([NewPartitions(READ_ONLY, 2)])[READ_ONLY])
    outcome("delete records read-only", admin.delete_records([TopicPartition(READ_ONLY, 0, 0)])[
        TopicPartition(READ_ONLY, 0, 0)])
    lo = admin.list_offsets({TopicPartition(HIDDEN, 0): OffsetSpec.latest()})
    outcome("list offsets hidden", lo[TopicPartition(HIDDEN, 0)])
    lo = admin.list_offsets({TopicPartition(WRITE_ONLY, 0): OffsetSpec.latest()})
    outcome("list offsets write-only", lo[TopicPartition(WRITE_ONLY, 0)])
    out["list offsets write-only"] = getattr(out["list offsets write-only"], "offset", out["list offsets write-only"])
    outcome("describe group denied", admin.describe_consumer_groups([GROUP])[GROUP])
    outcome("group offsets denied", admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(GROUP)])[GROUP])
    outcome("delete group denied", admin.delete_consumer_groups([GROUP])[GROUP])
    groups = admin.list_consumer_groups().result(timeout=30)
    out["listed groups"] = sorted(g.group_id for g in groups.valid if TAG in g.group_id)
    d = admin.describe_topics(TopicCollection([READ_ONLY]), include_authorized_operations=True)[READ_ONLY]
    out["read-only authorized operations"] = sorted(str(o) for o in d.result(timeout=30).authorized_operations)
    outcome("describe topic hidden", admin.describe_topics(TopicCollection([HIDDEN]))[HIDDEN])
    c = admin.describe_cluster(include_authorized_operations=True).result(timeout=30)
    out["cluster authorized operations"] = sorted(str(o) for o in c.authorized_operations or [])
    created = f"acl-{TAG}-created"
    outcome("create topic", admin.create_topics([NewTopic(created, 1, 1)])[created])
    outcome("delete topic hidden", admin.delete_topics([HIDDEN])[HIDDEN])
    return out


def run_target(name: str, bootstrap: str):
    RESULTS[name] = {"acls": acl_session(bootstrap, name), "clients": client_session(bootstrap)}
    RESULTS[name]["clients"].update(admin_session(bootstrap))
    text = "\n".join(f"$ kafka-acls {a}\n{o}\n{e}[exit {c}]" for a, o, e, c in RESULTS[name]["acls"])
    text += "\n\n" + "\n".join(f"{k}: {v}" for k, v in RESULTS[name]["clients"].items())
    (util.log_dir() / f"acls-{name}.txt").write_text(text + "\n")


def test_acl_session_on_kafka(acl_kafka):
    run_target("kafka", acl_kafka)
    c = RESULTS["kafka"]["clients"]
    # The reference behaves as the scenario assumes; the bridge must then do the same.
    assert c["produce read-only"] == "TOPIC_AUTHORIZATION_FAILED"
    assert c["fetch write-only"] == "TOPIC_AUTHORIZATION_FAILED"
    assert HIDDEN not in c["metadata"] and OPEN in c["metadata"]


def test_acl_session_on_the_bridge(request, acl_bridge):
    if target_mode() == "xfail":
        request.applymarker(pytest.mark.xfail(reason="KIB_BRIDGE_TARGET=xfail", strict=False))
    run_target("bridge", acl_bridge)


def test_kafka_acls_prints_the_same_on_kafka_and_the_bridge(request):
    if target_mode() == "xfail":
        request.applymarker(pytest.mark.xfail(reason="KIB_BRIDGE_TARGET=xfail", strict=False))
    if "kafka" not in RESULTS or "bridge" not in RESULTS:
        util.skip_loudly("kafka-acls: a transcript is missing (that run was skipped or failed)")
    kafka, bridge = RESULTS["kafka"]["acls"], RESULTS["bridge"]["acls"]
    assert [t[0] for t in bridge] == [t[0] for t in kafka]
    diffs = []
    for k, b in zip(kafka, bridge):
        for what, kv, bv in (("stdout", k[1], b[1]), ("stderr", k[2], b[2]), ("exit", str(k[3]), str(b[3]))):
            if kv != bv:
                d = "\n".join(difflib.unified_diff(kv.split("\n"), bv.split("\n"), "kafka", "bridge", lineterm="", n=1))
                diffs.append(f"$ kafka-acls {k[0]}  ({what})\n{d}")
    assert len(kafka) >= 20
    assert not diffs, f"{len(diffs)} outputs differ:\n\n" + "\n\n".join(diffs)


def test_clients_see_the_same_refusals_on_kafka_and_the_bridge(request):
    if target_mode() == "xfail":
        request.applymarker(pytest.mark.xfail(reason="KIB_BRIDGE_TARGET=xfail", strict=False))
    if "kafka" not in RESULTS or "bridge" not in RESULTS:
        util.skip_loudly("ACL clients: a result is missing (that run was skipped or failed)")
    kafka, bridge = RESULTS["kafka"]["clients"], RESULTS["bridge"]["clients"]
    diffs = [f"{k}: kafka {kafka[k]!r}, bridge {bridge.get(k)!r}" for k in kafka if kafka[k] != bridge.get(k)]
    assert not diffs, "\n".join(diffs)
