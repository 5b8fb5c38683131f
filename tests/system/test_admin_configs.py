"""DescribeConfigs, IncrementalAlterConfigs and AlterConfigs against a real iggy-server: raw
requests at chosen versions (kafka-python's protocol classes encode and decode them), retention
read back from Iggy through the native Python SDK, persistence across a restart, and
cleanup.policy=compact (docs/mapping.md "Topic configs", "Compaction")."""
import asyncio, signal, socket, uuid
import pytest
from harness.kafka_wire import recv_frame

pytest.importorskip("kafka", reason="SKIPPED: kafka-python not installed (tests/clients/setup.sh)")
iggy_sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")
from kafka.protocol.admin.configs import (  # noqa: E402
    AlterConfigsRequest, DescribeConfigsRequest, IncrementalAlterConfigsRequest)
from kafka.protocol.admin.topics import CreateTopicsRequest  # noqa: E402

TOPIC, BROKER = 2, 4
NEVER = 2**64 - 1


def call(port, req, version):
    req.with_header(correlation_id=7, client_id="kib-test")
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(req.encode(version=version, header=True, framed=True))
        return _decode(req, recv_frame(s), version)
    finally:
        s.close()


def _decode(req, data, version):
    import importlib
    mod = importlib.import_module(type(req).__module__)
    resp = getattr(mod, type(req).__name__.split("_")[0].replace("Request", "Response"))
    return resp.decode(data, version=version, header=True)


def create_topic(port, name, configs=(), partitions=1):
    T = CreateTopicsRequest.CreatableTopic
    req = CreateTopicsRequest(topics=[T(name=name, num_partitions=partitions, replication_factor=1, assignments=[],
                                        configs=[T.CreatableTopicConfig(name=k, value=v) for k, v in configs])],
                              timeout_ms=30000, validate_only=False)
    r = call(port, req, 7).topics[0]
    assert r.error_code == 0, r.error_message
    return r


def describe(port, rtype, name, version=4, keys=None, synonyms=False, docs=False):
    R = DescribeConfigsRequest.DescribeConfigsResource
    req = DescribeConfigsRequest(resources=[R(resource_type=rtype, resource_name=name, configuration_keys=keys)],
                                 include_synonyms=synonyms, include_documentation=docs)
    return call(port, req, version).results[0]


def configs_of(result):
    return {c.name: c for c in result.configs}


def incremental(port, rtype, name, ops, validate_only=False, version=1):
    R = IncrementalAlterConfigsRequest.AlterConfigsResource
    req = IncrementalAlterConfigsRequest(
        resources=[R(resource_type=rtype, resource_name=name,
                     configs=[R.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops])],
        validate_only=validate_only)
    return call(port, req, version).responses[0]


def replace(port, rtype, name, values, validate_only=False, version=2):
    R = AlterConfigsRequest.AlterConfigsResource
    req = AlterConfigsRequest(resources=[R(resource_type=rtype, resource_name=name,
                                           configs=[R.AlterableConfig(name=k, value=v) for k, v in values])],
                              validate_only=validate_only)
    return call(port, req, version).responses[0]


def iggy_topic(address, name):
    async def go():
        c = iggy_sdk.IggyClient(address)
        await c.connect()
        await c.login_user("iggy", "iggy")
        return await c.get_topic("kafka", name)
    t = asyncio.run(go())
    return t


def expiry_us(t):
    """Iggy's message expiry in µs; NEVER for never (and for "server default", which the bridge never sends)."""
    e = t.message_expiry
    if isinstance(e, iggy_sdk.IggyExpiry.ExpireDuration):
        d = e.duration
        return (d.days * 86400 + d.seconds) * 1000000 + d.microseconds
    return NEVER


def max_size(t):
    m = t.max_topic_size
    if isinstance(m, iggy_sdk.MaxTopicSize.Custom):
        return m.bytes
    return NEVER


def test_describe_topic_v1_and_v4_sources_synonyms_docs(bridge_on_iggy):
    port = bridge_on_iggy.port
    name = "dc-" + uuid.uuid4().hex[:8]
    created = create_topic(port, name, [("retention.ms", "60000"), ("cleanup.policy", "compact,delete")])
    # CreateTopics v5+ returns the new topic's configs, as DescribeConfigs reports them.
    ct = {c.name: c for c in created.configs}
    assert ct["retention.ms"].value == "60000" and ct["retention.ms"].config_source == 1
    assert ct["min.insync.replicas"].config_source == 3  # the cluster default Kafka 4 formats with

    r = describe(port, TOPIC, name, version=4, synonyms=True, docs=True)
    assert r.error_code == 0
    c = configs_of(r)
    assert len([k for k in c if not k.startswith("iggy.")]) == 33
    assert c["retention.ms"].value == "60000" and c["retention.ms"].config_source == 1
    assert [(s.name, s.value, s.source) for s in c["retention.ms"].synonyms] == [
        ("retention.ms", "60000", 1), ("log.retention.ms", "-1", 4), ("log.retention.hours", "168", 5)]
    assert c["retention.ms"].config_type == 5 and "retain a log" in c["retention.ms"].documentation
    assert c["cleanup.policy"].value == "compact,delete" and c["cleanup.policy"].config_type == 7
    assert c["segment.bytes"].config_source == 5 and c["segment.bytes"].value == "1073741824"
    assert c["max.message.bytes"].value == "1048588" and c["max.message.bytes"].read_only is False

    r1 = describe(port, TOPIC, name, version=1, keys=["retention.ms", "flush.ms"])
    assert [x.name for x in r1.configs] == ["flush.ms", "retention.ms"]
    assert configs_of(r1)["retention.ms"].synonyms == []

    missing = describe(port, TOPIC, "nosuch-" + uuid.uuid4().hex[:6])
    assert missing.error_code == 3 and missing.configs == []


def test_describe_broker_and_wrong_ids(bridge_on_iggy):
    port = bridge_on_iggy.port
    r = describe(port, BROKER, "1", synonyms=True)
    c = configs_of(r)
    assert c["log.retention.ms"].value == "-1" and c["log.retention.ms"].config_source == 4
    assert c["log.retention.ms"].read_only is False and c["num.partitions"].read_only is True
    assert c["node.id"].value == "1"
    d = describe(port, BROKER, "")
    assert [(x.name, x.value, x.config_source) for x in d.configs] == [("min.insync.replicas", "1", 3)]
    bad = describe(port, BROKER, "2")
    assert bad.error_code == 42
    assert bad.error_message == "Unexpected broker id, expected 1 or empty string, but received 2"
    bad = describe(port, BROKER, "x")
    assert bad.error_code == 42 and bad.error_message == "Broker id must be an integer, but it is: x"


def test_incremental_ops_validate_only_and_errors(bridge_on_iggy, iggy):
    port = bridge_on_iggy.port
    name = "iac-" + uuid.uuid4().hex[:8]
    create_topic(port, name, partitions=2)
    t = iggy_topic(iggy.address, name)
    assert expiry_us(t) == NEVER

    r = incremental(port, TOPIC, name, [("retention.ms", 0, "120000")], validate_only=True)
    assert r.error_code == 0
    assert configs_of(describe(port, TOPIC, name))["retention.ms"].config_source == 4  # nothing written

    r = incremental(port, TOPIC, name, [("retention.ms", 0, "120000"), ("retention.bytes", 0, "2097152"),
                                        ("cleanup.policy", 2, "compact")])
    assert r.error_code == 0, r.error_message
    c = configs_of(describe(port, TOPIC, name))
    assert (c["retention.ms"].value, c["retention.ms"].config_source) == ("120000", 1)
    assert c["cleanup.policy"].value == "delete,compact"
    t = iggy_topic(iggy.address, name)
    assert expiry_us(t) == 120000 * 1000
    assert max_size(t) == max(2097152 * 2, 1 << 30)  # at least one (default 1 GiB) segment

    r = incremental(port, TOPIC, name, [("retention.ms", 1, None)])
    assert r.error_code == 0
    assert configs_of(describe(port, TOPIC, name))["retention.ms"].value == "-1"
    assert expiry_us(iggy_topic(iggy.address, name)) == NEVER

    r = incremental(port, TOPIC, name, [("foo.bar", 0, "1")])
    assert (r.error_code, r.error_message) == (40, "Unknown topic config name: foo.bar")
    r = incremental(port, TOPIC, name, [("retention.ms", 0, "abc")])
    assert (r.error_code, r.error_message) == (40, "Invalid value abc for configuration retention.ms: Not a number of type LONG")
    r = incremental(port, TOPIC, name, [("retention.ms", 2, "5")])
    assert (r.error_code, r.error_message) == (40, "Can't APPEND to key retention.ms because its type is not LIST.")
    r = incremental(port, TOPIC, name, [("retention.ms", 0, None)])
    assert (r.error_code, r.error_message) == (42, "Null value not supported for : retention.ms")
    r = incremental(port, TOPIC, name, [("iggy.enforce.fsync", 0, "false")])
    assert r.error_code == 40 and "only when the topic is created" in r.error_message
    missing = "nosuch-" + uuid.uuid4().hex[:6]
    r = incremental(port, TOPIC, missing, [("retention.ms", 0, "5")])
    assert (r.error_code, r.error_message) == (3, f"The topic '{missing}' does not exist.")  # as Kafka 4.1
    r = incremental(port, BROKER, "2", [("log.retention.ms", 0, "5")])
    assert r.error_code == 42 and r.error_message == "Unexpected broker id, expected 1, but received 2"
    r = incremental(port, BROKER, "", [("num.partitions", 0, "3")])
    assert (r.error_code, r.error_message) == (42, "Cannot update these configs dynamically: Set(num.partitions)")


def test_compact_only_switches_iggy_retention_off(bridge_on_iggy, iggy):
    port = bridge_on_iggy.port
    name = "cmp-" + uuid.uuid4().hex[:8]
    create_topic(port, name, [("cleanup.policy", "compact"), ("retention.ms", "60000")])
    t = iggy_topic(iggy.address, name)
    assert expiry_us(t) == NEVER and max_size(t) == NEVER
    c = configs_of(describe(port, TOPIC, name))
    assert c["cleanup.policy"].value == "compact" and c["retention.ms"].value == "60000"
    assert incremental(port, TOPIC, name, [("cleanup.policy", 0, "delete")]).error_code == 0
    assert expiry_us(iggy_topic(iggy.address, name)) == 60000 * 1000
    assert incremental(port, TOPIC, name, [("cleanup.policy", 0, "compact")]).error_code == 0
    assert expiry_us(iggy_topic(iggy.address, name)) == NEVER


def test_alter_configs_replaces_and_persists_across_restart(bridge_factory, iggy):
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    name = "ac-" + uuid.uuid4().hex[:8]
    create_topic(b.port, name, [("retention.ms", "60000"), ("segment.ms", "1000")])
    r = replace(b.port, TOPIC, name, [("retention.bytes", "1073741824")])
    assert r.error_code == 0, r.error_message
    c = configs_of(describe(b.port, TOPIC, name, version=1))
    assert c["segment.ms"].config_source == 5 and c["retention.ms"].config_source == 4  # dropped
    assert (c["retention.bytes"].value, c["retention.bytes"].config_source) == ("1073741824", 1)
    r = replace(b.port, TOPIC, name, [("retention.ms", "-5")], version=0)
    assert r.error_code == 40 and r.error_message == "Invalid value -5 for configuration retention.ms: Value must be at least -1"
    # A dynamic default broker retention reaches every topic without its own.
    assert incremental(b.port, BROKER, "", [("log.retention.ms", 0, "3600000")]).error_code == 0
    d = configs_of(describe(b.port, TOPIC, name, synonyms=True))["retention.ms"]
    assert (d.value, d.config_source) == ("3600000", 3)
    import time
    deadline = time.time() + 10
    while expiry_us(iggy_topic(iggy.address, name)) != 3600000 * 1000 and time.time() < deadline:
        time.sleep(0.1)
    assert expiry_us(iggy_topic(iggy.address, name)) == 3600000 * 1000

    b.stop(signal.SIGKILL)
    b.start().wait_ready()
    c = configs_of(describe(b.port, TOPIC, name))
    assert (c["retention.bytes"].value, c["retention.bytes"].config_source) == ("1073741824", 1)
    assert (c["retention.ms"].value, c["retention.ms"].config_source) == ("3600000", 3)
    d = describe(b.port, BROKER, "")
    assert {(x.name, x.value) for x in d.configs} == {("min.insync.replicas", "1"), ("log.retention.ms", "3600000")}
    assert incremental(b.port, BROKER, "", [("log.retention.ms", 1, None)]).error_code == 0
    deadline = time.time() + 10
    while expiry_us(iggy_topic(iggy.address, name)) != NEVER and time.time() < deadline:
        time.sleep(0.1)
    assert expiry_us(iggy_topic(iggy.address, name)) == NEVER


def test_confluent_kafka_admin_client(bridge_on_iggy, iggy):
    """librdkafka's describe_configs (DescribeConfigs v1), incremental_alter_configs and
    alter_configs (AlterConfigs v2) against the bridge."""
    ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed")
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource,
                                       NewTopic)
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{bridge_on_iggy.port}"})
    name = "ck-" + uuid.uuid4().hex[:8]
    admin.create_topics([NewTopic(name, 1, 1, config={"cleanup.policy": "compact"})])[name].result(timeout=30)
    res = ConfigResource(ConfigResource.Type.TOPIC, name)
    got = admin.describe_configs([res])[res].result(timeout=30)
    assert got["cleanup.policy"].value == "compact"
    assert got["cleanup.policy"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert got["retention.ms"].source == ConfigSource.STATIC_BROKER_CONFIG.value
    assert expiry_us(iggy_topic(iggy.address, name)) == NEVER

    inc = ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=[
        ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("retention.ms", "300000", incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([inc])[inc].result(timeout=30)
    assert expiry_us(iggy_topic(iggy.address, name)) == 300000 * 1000
    got = admin.describe_configs([res])[res].result(timeout=30)
    assert (got["retention.ms"].value, got["cleanup.policy"].value) == ("300000", "delete")

    legacy = ConfigResource(ConfigResource.Type.TOPIC, name, set_config={"retention.ms": "600000"})
    admin.alter_configs([legacy])[legacy].result(timeout=30)
    got = admin.describe_configs([res])[res].result(timeout=30)
    assert got["retention.ms"].value == "600000"
    assert got["cleanup.policy"].source == ConfigSource.DEFAULT_CONFIG.value  # replaced away
    assert expiry_us(iggy_topic(iggy.address, name)) == 600000 * 1000

    bad = ConfigResource(ConfigResource.Type.TOPIC, name, set_config={"foo.bar": "1"})
    with pytest.raises(ck.KafkaException) as e:
        admin.alter_configs([bad])[bad].result(timeout=30)
    assert "Unknown topic config name: foo.bar" in str(e.value)

    broker = ConfigResource(ConfigResource.Type.BROKER, "1")
    got = admin.describe_configs([broker])[broker].result(timeout=30)
    assert got["log.retention.ms"].value == "-1" and got["num.partitions"].is_read_only
