"""[principals] iggy_identity = "per_principal" (docs/security.md): a Kafka principal's Produce and
Fetch run on an Iggy connection pool of its own, logged in as the Iggy user
`kafka-iggy-bridge principals map` gave it, so Iggy's own permissions apply too.

Real bridge, real iggy-server; the Kafka side is confluent-kafka over a PLAINTEXT listener (the
principal is User:ANONYMOUS), the Iggy side the official Python SDK `apache-iggy` logged in as
root (to grant permissions) and as the mapped user (to see what it may poll).
"""
import asyncio, os, subprocess, time, uuid
import pytest

from conftest import bridge_bin
from test_sasl import sasl_factory  # noqa: F401  (a fixture: a bridge with a SASL_PLAINTEXT listener too)

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


def client_config(where):
    """A port (PLAINTEXT, User:ANONYMOUS) or a full client configuration."""
    return {"bootstrap.servers": f"127.0.0.1:{where}"} if isinstance(where, int) else where


def produce_one(where, topic, value):
    """The delivery error code of one record (None when it was stored)."""
    p = ck.Producer({**client_config(where), "enable.idempotence": False, "acks": "all",
                     "retries": 0, "message.timeout.ms": 15000})
    out = {}
    p.produce(topic, value=value, on_delivery=lambda err, msg: out.setdefault("err", err))
    p.flush(20)
    err = out.get("err", "no delivery report")
    return None if err is None else err.code()


def fetch_all(where, topic):
    """(values, error code or None) of an assign+read from offset 0 until the end or an error."""
    c = ck.Consumer({**client_config(where), "group.id": "kib-" + uuid.uuid4().hex,
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
    """The payloads of partition 0 from offset 0, polled natively as `user`."""
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


# ---- ACLs written onto the mapped Iggy users' permissions ([principals] sync_iggy_permissions) ----

SYNCED = ('[principals]\niggy_identity = "per_principal"\nunmapped = "shared"\nsync_iggy_permissions = true\n'
          '[authorization]\nenabled = true\nsuper_users = ["User:ANONYMOUS"]\n')


def native_outcome(call, *args):
    """("ok", result) of a native Iggy call, or ("refused", Iggy's message)."""
    try:
        return "ok", call(*args)
    except (RuntimeError, ValueError) as e:
        return "refused", str(e)


def native_poll_outcome(address, user, password, topic):
    return native_outcome(native_poll, address, user, password, topic)


def native_send_outcome(address, user, password, topic, value):
    async def send(c):
        await c.send_messages(STREAM, topic, 0, [iggy_sdk.SendMessage(value)])
        return True
    return native_outcome(native, address, user, password, send)


def eventually(fn, want, tries=60):
    """fn() until it returns something whose first element is `want` (the bridge writes Iggy
    permissions asynchronously after an ACL change); the last outcome either way."""
    got = None
    for _ in range(tries):
        got = fn()
        if got[0] == want:
            return got
        time.sleep(0.25)
    return got


def alice_config(b, password):
    return {"bootstrap.servers": f"127.0.0.1:{b.sasl_port}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": password}


def test_acls_become_the_mapped_iggy_users_permissions_so_a_native_client_sees_the_same_rights(sasl_factory, iggy):
    from confluent_kafka.admin import (AclBinding, AclBindingFilter, AclOperation, AclPermissionType,
                                       ResourcePatternType, ResourceType)
    b = sasl_factory(SYNCED, iggy_address=iggy.address).start().wait_ready()
    tag = uuid.uuid4().hex[:8]
    readable, other = f"acl-sync-r-{tag}", f"acl-sync-o-{tag}"
    for t in (readable, other):
        create_topic(b.port, t)
        assert produce_one(b.port, t, b"seed-" + t.encode()) is None  # the super user, as the [iggy] user

    kafka_pw, iggy_user, iggy_pw = "alice-secret", f"kib-alice-{tag}", "iggy-" + uuid.uuid4().hex
    b.add_user("alice", "SCRAM-SHA-512", kafka_pw)
    alice = alice_config(b, kafka_pw)
    r = cli(b, "principals", "map", "User:alice", "--iggy-user", iggy_user, "--password-file", "-", "--create",
            stdin=iggy_pw + "\n")
    assert r.returncode == 0, r.stderr

    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{b.port}"})
    # Her consumers' groups (a consumer asks for its group's coordinator even when assigned;
    # groups have no Iggy counterpart, the bridge alone enforces them) and DESCRIBE on the test's
    # topics (without it librdkafka retries Metadata quietly instead of reporting the refusal).
    base = [AclBinding(ResourceType.GROUP, "kib-", ResourcePatternType.PREFIXED, "User:alice", "*",
                       AclOperation.READ, AclPermissionType.ALLOW),
            AclBinding(ResourceType.TOPIC, "acl-sync-", ResourcePatternType.PREFIXED, "User:alice", "*",
                       AclOperation.DESCRIBE, AclPermissionType.ALLOW)]
    for f in admin.create_acls(base).values():
        f.result(30)

    # No READ for User:alice: the bridge refuses her fetch, and Iggy her mapped user's poll.
    assert fetch_all(alice, readable)[1] == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert native_poll_outcome(iggy.address, iggy_user, iggy_pw, readable)[0] == "refused"

    def acl(topic, op):
        return AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:alice", "*", op,
                          AclPermissionType.ALLOW)
    for f in admin.create_acls([acl(readable, AclOperation.READ)]).values():
        f.result(30)

    # READ on one topic: Kafka fetch and native poll of it work; the other topic stays refused in both.
    outcome = eventually(lambda: native_poll_outcome(iggy.address, iggy_user, iggy_pw, readable), "ok")
    assert outcome == ("ok", [b"seed-" + readable.encode()]), outcome
    assert fetch_all(alice, readable) == ([b"seed-" + readable.encode()], None)
    assert native_poll_outcome(iggy.address, iggy_user, iggy_pw, other)[0] == "refused"
    assert fetch_all(alice, other)[1] == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # READ is not WRITE, for the bridge nor for Iggy.
    assert produce_one(alice, readable, b"no") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert native_send_outcome(iggy.address, iggy_user, iggy_pw, readable, b"no")[0] == "refused"

    # WRITE added: both sides may send.
    for f in admin.create_acls([acl(readable, AclOperation.WRITE)]).values():
        f.result(30)
    assert eventually(lambda: native_send_outcome(iggy.address, iggy_user, iggy_pw, readable, b"native"), "ok")[0] == "ok"
    assert produce_one(alice, readable, b"kafka") is None

    # The READ ACL removed: Iggy refuses the poll again, as the bridge refuses the fetch.
    flt = AclBindingFilter(ResourceType.TOPIC, readable, ResourcePatternType.LITERAL, "User:alice", "*",
                           AclOperation.READ, AclPermissionType.ALLOW)
    for f in admin.delete_acls([flt]).values():
        assert len(f.result(30)) == 1
    outcome = eventually(lambda: native_poll_outcome(iggy.address, iggy_user, iggy_pw, readable), "refused")
    assert outcome[0] == "refused", outcome
    assert fetch_all(alice, readable)[1] == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert "not written" not in b.read_log()
