"""Metadata, CreateTopics and FindCoordinator against a real iggy-server, driven by real
clients (kcat and the Java admin tools) and by raw requests."""
import os, shutil, sqlite3, subprocess, uuid
import pytest
from conftest import ROOT

JAVA_LIB = os.path.join(ROOT, "tests", ".java", "lib")


def kcat(*args):
    if not shutil.which("kcat"):
        pytest.skip("SKIPPED: kcat not installed (make deps)")
    return subprocess.run(["kcat", *args], capture_output=True, text=True, timeout=60)


def java_tool(main, *args):
    if not shutil.which("java") or not os.path.isdir(JAVA_LIB):
        pytest.skip("SKIPPED: Kafka jars not fetched (tools/fetch-kafka)")
    return subprocess.run(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", JAVA_LIB + "/*", main, *args],
                          capture_output=True, text=True, timeout=120)


def test_kcat_metadata_auto_creates_topic_with_default_partitions(bridge_factory, iggy):
    b = bridge_factory(kafka_extra="default_partitions = 4\n", iggy_address=iggy.address).start().wait_ready()
    name = "auto-" + uuid.uuid4().hex[:8]
    out = kcat("-b", f"127.0.0.1:{b.port}", "-L", "-t", name)
    assert out.returncode == 0, out.stderr
    assert f'topic "{name}" with 4 partitions' in out.stdout
    assert "broker 1 at 127.0.0.1:%d (controller)" % b.port in out.stdout


def test_auto_create_off_answers_unknown_topic(bridge_factory, iggy):
    b = bridge_factory(kafka_extra="auto_create_topics = false\n", iggy_address=iggy.address).start().wait_ready()
    out = kcat("-b", f"127.0.0.1:{b.port}", "-L", "-t", "missing-" + uuid.uuid4().hex[:6])
    assert "Broker: Unknown topic or partition" in out.stdout + out.stderr


def test_kafka_topics_create_list_duplicate_compact_and_unknown_configs(bridge_on_iggy):
    bs = f"127.0.0.1:{bridge_on_iggy.port}"
    name = "jt-" + uuid.uuid4().hex[:8]
    r = java_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bs, "--create", "--topic", name,
                  "--partitions", "3", "--config", "retention.ms=60000", "--config", "max.message.bytes=2048")
    assert f"Created topic {name}." in r.stdout, r.stdout + r.stderr
    r = java_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bs, "--list")
    assert name in r.stdout.split()
    r = java_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bs, "--create", "--topic", name)
    assert f"Topic '{name}' already exists" in r.stdout + r.stderr
    # Compacted topics are accepted (docs/mapping.md "Compaction"); unknown configs are not.
    r = java_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bs, "--create", "--topic", name + "c",
                  "--config", "cleanup.policy=compact")
    assert f"Created topic {name}c." in r.stdout, r.stdout + r.stderr
    r = java_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bs, "--create", "--topic", name + "u",
                  "--config", "message.format.version=3.0")
    assert "Unknown topic config name: message.format.version" in r.stdout + r.stderr
    r = java_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bs, "--create", "--topic", name + "r",
                  "--replication-factor", "3")
    assert "Replication factor must be 1" in r.stdout + r.stderr
    with sqlite3.connect(bridge_on_iggy.state) as c:
        row = c.execute("SELECT max_message_bytes, retention_ms FROM topics WHERE name = ?", (name,)).fetchone()
    assert row == (2048, 60000)


def test_topic_ids_and_cluster_id_are_stable_across_restart(bridge_factory, iggy):
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    name = "stable-" + uuid.uuid4().hex[:8]
    assert kcat("-b", f"127.0.0.1:{b.port}", "-L", "-t", name).returncode == 0
    with sqlite3.connect(b.state) as c:
        tid = c.execute("SELECT topic_id FROM topics WHERE name = ?", (name,)).fetchone()[0]
        cid = c.execute("SELECT value FROM bridge_meta WHERE key = 'cluster_id'").fetchone()[0]
    import signal
    b.stop(signal.SIGKILL)
    b.start().wait_ready()
    # The topic id a client sees in Metadata v12 after the restart is the one stored before.
    ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{b.port}"})
    td = admin.describe_topics(ck.TopicCollection([name]))[name].result(timeout=30)
    u = td.topic_id
    seen = uuid.UUID(int=((u.get_most_significant_bits() & (2**64 - 1)) << 64) | (u.get_least_significant_bits() & (2**64 - 1)))
    assert str(seen) == tid
    with sqlite3.connect(b.state) as c:
        assert c.execute("SELECT value FROM bridge_meta WHERE key = 'cluster_id'").fetchone()[0] == cid


def test_broker_api_versions_tool_lists_served_versions(bridge_on_iggy):
    r = java_tool("org.apache.kafka.tools.BrokerApiVersionsCommand", "--bootstrap-server",
                  f"127.0.0.1:{bridge_on_iggy.port}")
    assert "ApiVersions(18): 0 to 4 [usable: 4]" in r.stdout, r.stdout + r.stderr
    assert "Metadata(3): 0 to 12 [usable: 12]" in r.stdout
    assert "Heartbeat(12): 0 to 4 [usable: 4]" in r.stdout
    assert "SaslHandshake(17): 0 to 1 [usable: 1]" in r.stdout
    assert "SaslAuthenticate(36): 0 to 2 [usable: 2]" in r.stdout
