"""[principals] iggy_identity = "per_principal" (docs/security.md): a Kafka principal's Produce and
Fetch run on an Iggy connection pool of its own, logged in as the Iggy user
`kafka-iggy-bridge principals map` gave it, so Iggy's own permissions apply too.

Real bridge, real iggy-server; the Kafka side is confluent-kafka over a PLAINTEXT listener (the
principal is User:ANONYMOUS), the Iggy side the official Python SDK `apache-iggy` logged in as
root (to grant permissions) and as the mapped user (to see what it may poll).
"""
import asyncio, os, subprocess, uuid
import pytest

from conftest import bridge_bin

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
iggy_sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")
from confluent_kafka import KafkaError, KafkaException  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from apache_iggy import Consumer, IggyClient, PollingStrategy  # noqa: E402

STREAM = "kafka"
PER_PRINCIPAL = '[principals]\niggy_identity = "per_principal"\nunmapped = "refuse"\nsync_iggy_permissions = false\n'


def cli(bridge, *args, stdin=None):
    return subprocess.run([bridge_bin(), *args, "--config", bridge.config], input=stdin, capture_output=True,
                          text=True, timeout=60)


def create_topic(port, name):
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
    admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=1)])[name].result(30)


def produce_one(port, topic, value):
    """The delivery error code of one record (None when it was stored)."""
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "enable.idempotence": False, "acks": "all",
                     "retries": 0, "message.timeout.ms": 15000})
    out = {}
    p.produce(topic, value=value, on_delivery=lambda err, msg: out.setdefault("err", err))
    p.flush(20)
    err = out.get("err", "no delivery report")
    return None if err is None else err.code()


def fetch_all(port, topic):
    """(values, error code or None) of an assign+read from offset 0 until the end or an error."""
    c = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "kib-" + uuid.uuid4().hex,
                     "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        c.assign([ck.TopicPartition(topic, 0, 0)])
        values = []
        for _ in range(100):
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    return values, None
                return values, m.error().code()
            values.append(m.value())
        return values, "timed out"
    finally:
        c.close()


def native(address, user, password, fn):
    async def go():
        c = IggyClient(address)
        await c.connect()
        await c.login_user(user, password)
        return await fn(c)
    return asyncio.run(go())


def native_poll(address, user, password, topic):
    async def poll(c):
        msgs = await c.poll_messages(STREAM, topic, consumer=Consumer.Single("kib-principals-test"),
                                     polling_strategy=PollingStrategy.Offset(0), count=100, auto_commit=False,
                                     partition_id=0)
        return [m.payload() for m in msgs]
    return native(address, user, password, poll)


@pytest.fixture
def per_principal_bridge(bridge_factory, iggy):
    return bridge_factory(PER_PRINCIPAL, iggy_address=iggy.address).start().wait_ready()


def test_an_unmapped_principal_is_refused_and_a_mapped_one_runs_as_its_iggy_user(per_principal_bridge, iggy):
    b = per_principal_bridge
    topic = "principals-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic)  # topic administration runs as the bridge's [iggy] user

    # No mapping for User:ANONYMOUS: [principals] unmapped = "refuse".
    assert produce_one(b.port, topic, b"refused") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert "User:ANONYMOUS has no Iggy user" in b.read_log()

    # A mapping made with the CLI while the bridge runs; --create makes the Iggy user, with no
    # permission at all.
    user, password = "kib-anon-" + uuid.uuid4().hex[:6], "pw-" + uuid.uuid4().hex
    r = cli(b, "principals", "map", "User:ANONYMOUS", "--iggy-user", user, "--password-file", "-", "--create",
            stdin=password + "\n")
    assert r.returncode == 0, r.stderr
    listed = cli(b, "principals", "list")
    assert user in listed.stdout and "password" in listed.stdout and password not in listed.stdout

    # Iggy itself now refuses the principal's send: its user may not send to the topic.
    assert produce_one(b.port, topic, b"refused by iggy") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert f"runs as Iggy user {user}" in b.read_log()

    # Root gives the user send and poll on the stream; the same principal now produces and fetches.
    async def grant(c):
        await c.update_permissions(user, iggy_sdk.Permissions(
            global_permissions=iggy_sdk.GlobalPermissions(),
            streams={(await c.get_stream(STREAM)).id: iggy_sdk.StreamPermissions(poll_messages=True, send_messages=True)}))
    native(iggy.address, "iggy", "iggy", grant)
    assert produce_one(b.port, topic, b"stored") is None
    values, err = fetch_all(b.port, topic)
    assert err is None and values == [b"stored"]
    # The native client of the same user reads the same.
    assert native_poll(iggy.address, user, password, topic) == [b"stored"]

    # Unmapped again: refused again, on a new connection.
    assert cli(b, "principals", "unmap", "User:ANONYMOUS").returncode == 0
    assert produce_one(b.port, topic, b"refused again") == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_mapping_needs_exactly_one_secret_and_never_prints_it(per_principal_bridge):
    b = per_principal_bridge
    both = cli(b, "principals", "map", "User:x", "--iggy-user", "x", "--password-file", "-", "--token-file", "/dev/null")
    assert both.returncode != 0
    neither = cli(b, "principals", "map", "User:x", "--iggy-user", "x")
    assert neither.returncode != 0 and "exactly one" in neither.stderr
    bad = cli(b, "principals", "map", "alice", "--iggy-user", "x", "--password-file", "-", stdin="pw\n")
    assert bad.returncode != 0 and "TYPE:NAME" in bad.stderr
    ok = cli(b, "principals", "map", "User:x", "--iggy-user", "x", "--token-file", "-", stdin="secret-token\n")
    assert ok.returncode == 0, ok.stderr
    listed = cli(b, "principals", "list", "--json")
    assert '"credential": "personal_access_token"' in listed.stdout and "secret-token" not in listed.stdout
    assert "secret-token" not in b.read_log()
    assert os.stat(b.state).st_mode & 0o077 == 0, "state.db readable by others"
