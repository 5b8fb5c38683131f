"""Hostile Iggy identities ([principals] iggy_identity = "per_principal", docs/security.md
"Users the bridge creates" and "ACLs as Iggy permissions"):

* an Iggy user kafka.<name> that exists before the bridge would create it is someone else's: the
  bridge refuses the principal and leaves the user alone (its password still logs in, its
  permissions are unchanged), says so in the log, in `principals list` and in a metric, and keeps
  serving others while the refused principal keeps asking;
* the permission sync rewrites only the topic entries of the bridge's stream: an operator-mapped
  user keeps its global permissions, its grants on other streams and the stream-wide flags;
* only ACLs whose host is "*" become Iggy permissions: one whose host is "" grants nothing there.

Real bridge, real iggy-server (the session's `iggy` fixture, so every name carries a tag); Kafka
clients are confluent-kafka over SASL/SCRAM, the Iggy side the official SDK as root.
"""
import time, uuid

import pytest

from hostile import assert_serves_others, probe_latencies
from test_metrics import scrape, value, with_http
from test_principals import STREAM, cli, create_topic, eventually, fetch_all, native, native_poll_outcome, produce_one
from test_sasl import sasl_factory  # noqa: F401  (a fixture)

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
iggy_sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")
from confluent_kafka import KafkaError  # noqa: E402
from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient,  # noqa: E402
                                   ResourcePatternType, ResourceType)

TOPIC_AUTHORIZATION_FAILED = 29

CREATE = ('[principals]\niggy_identity = "per_principal"\nunmapped = "create"\nsync_iggy_permissions = true\n'
          '[authorization]\nenabled = true\nsuper_users = ["User:ANONYMOUS"]\n')


def scram(b, user, password):
    return {"bootstrap.servers": f"127.0.0.1:{b.sasl_port}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": user, "sasl.password": password}


def root(iggy, fn):
    return native(iggy.address, "iggy", "iggy", fn)


def as_dict(p):
    """An SDK Permissions as plain data (None: no permissions), for comparisons and messages."""
    if p is None:
        return None
    g = p.global_permissions
    flags = ("manage_servers", "read_servers", "manage_users", "read_users", "manage_streams", "read_streams",
             "manage_topics", "read_topics", "poll_messages", "send_messages")
    out = {"global": {f for f in flags if getattr(g, f)}, "streams": {}}
    for sid, s in (p.streams or {}).items():
        sflags = ("manage_stream", "read_stream", "manage_topics", "read_topics", "poll_messages", "send_messages")
        topics = {}
        for tid, t in (s.topics or {}).items():
            topics[tid] = {f for f in ("manage_topic", "read_topic", "poll_messages", "send_messages") if getattr(t, f)}
        out["streams"][sid] = {"flags": {f for f in sflags if getattr(s, f)}, "topics": topics}
    return out


def permissions_of(iggy, user):
    async def get(c):
        u = await c.get_user(user)
        assert u is not None, f"Iggy user {user} is gone"
        return as_dict(u.permissions)
    return root(iggy, get)


def stream_id(iggy, name):
    async def get(c):
        return (await c.get_stream(name)).id
    return root(iggy, get)


def topic_id(iggy, topic):
    async def get(c):
        return (await c.get_topic(STREAM, topic)).id
    return root(iggy, get)


def create_stream(iggy, name):
    async def make(c):
        await c.create_stream(name)
        return (await c.get_stream(name)).id
    return root(iggy, make)


def create_iggy_user(iggy, user, password, permissions):
    async def make(c):
        await c.create_user(user, password, permissions=permissions)
    root(iggy, make)


def logs_in(iggy, user, password):
    async def ping(c):
        await c.ping()
        return True
    try:
        return native(iggy.address, user, password, ping)
    except (RuntimeError, ValueError):
        return False


def acl(topic, principal, op, host="*", pattern=ResourcePatternType.LITERAL, rtype=ResourceType.TOPIC):
    return AclBinding(rtype, topic, pattern, principal, host, op, AclPermissionType.ALLOW)


def create_acls(b, bindings):
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{b.port}"})  # User:ANONYMOUS, a super user
    for f in admin.create_acls(bindings).values():
        f.result(30)


def grant_data_rights(b, principal, topic):
    """What a Kafka producer and consumer of `topic` need from the bridge's own ACL check."""
    create_acls(b, [acl(topic, principal, AclOperation.READ), acl(topic, principal, AclOperation.WRITE),
                    acl(topic, principal, AclOperation.DESCRIBE),
                    acl("kib-", principal, AclOperation.READ, pattern=ResourcePatternType.PREFIXED,
                        rtype=ResourceType.GROUP)])


# A refused principal that keeps asking, in a process of its own (so that it does not share the
# probe's interpreter): `connections` SASL/SCRAM connections, each with one Fetch v4 in flight
# at all times, until a line on stdin; then it prints how many answers it got, by error code. It
# runs niced: on two cores shared with the bridge and the probe, a busy Python loop at the same
# priority would make the probe wait for a core, which measures the scheduler, not the bridge
# (the bridge still answers every request it sends).
_REFUSED_FETCHER = r"""
import json, os, select, struct, sys
os.nice(10)
sys.path[:0] = [sys.argv[1], os.path.join(sys.argv[1], "..", "clients")]
from harness.kafka_wire import fetch_v4_body, recv_frame, request
from harness.kafka_wire.sasl import SaslConn
from test_sasl import scram_login
port, user, password, topic, n = int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
body = fetch_v4_body([(topic, 0, 0, 1 << 20)], min_bytes=0, max_bytes=1 << 20)
conns = []
for _ in range(n):
    c = SaslConn(port)
    err, msg, _ = scram_login(c, "SCRAM-SHA-512", user, password)
    assert err == 0, msg
    conns.append(c)
print("ready", flush=True)
counts, corr = {}, 1000
while not select.select([sys.stdin], [], [], 0)[0]:
    for c in conns:
        corr += 1
        c.sock.sendall(request(1, 4, corr, body))
    for c in conns:
        f = recv_frame(c.sock)
        name_len = struct.unpack_from(">h", f, 12)[0]
        err = struct.unpack_from(">h", f, 14 + name_len + 8)[0]  # after the partition count and index
        counts[err] = counts.get(err, 0) + 1
print(json.dumps(counts), flush=True)
"""


def refused_fetcher(b, user, password, topic, connections=4):
    import os, subprocess, sys
    here = os.path.dirname(os.path.abspath(__file__))
    child = subprocess.Popen([sys.executable, "-c", _REFUSED_FETCHER, here, str(b.sasl_port), user, password, topic,
                              str(connections)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    return child


def stop_refused_fetcher(child):
    import json
    child.stdin.write("stop\n")
    child.stdin.flush()
    out = child.stdout.readline()
    child.wait(30)
    return {int(k): v for k, v in json.loads(out).items()}


def test_an_existing_iggy_user_the_bridge_did_not_create_is_never_taken_over(sasl_factory, iggy):
    tag = uuid.uuid4().hex[:8]
    bob, kafka_pw = f"bob{tag}", "bob-kafka-" + tag
    iggy_user, iggy_pw = f"kafka.{bob}", "bobs-own-" + uuid.uuid4().hex
    principal = f"User:{bob}"
    # Someone else's Iggy user of the name the bridge would create, with a global permission and
    # a grant on another stream.
    other = create_stream(iggy, f"kib-other-{tag}")
    create_iggy_user(iggy, iggy_user, iggy_pw, iggy_sdk.Permissions(
        global_permissions=iggy_sdk.GlobalPermissions(read_servers=True),
        streams={other: iggy_sdk.StreamPermissions(read_stream=True, poll_messages=True)}))
    before = permissions_of(iggy, iggy_user)
    assert before["global"] == {"read_servers"} and other in before["streams"], before

    b = with_http(sasl_factory(CREATE, iggy_address=iggy.address)).start().wait_ready()
    b.add_user(bob, "SCRAM-SHA-512", kafka_pw)
    topic = f"hostile-id-{tag}"
    create_topic(b.port, topic)
    grant_data_rights(b, principal, topic)  # the bridge's own check lets bob through

    # Bob's data requests reach the identity lookup, which refuses him.
    assert produce_one(scram(b, bob, kafka_pw), topic, b"mine?") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert fetch_all(scram(b, bob, kafka_pw), topic)[1] == KafkaError.TOPIC_AUTHORIZATION_FAILED

    # The Iggy user is as it was: its own password logs in, its permissions are unchanged.
    assert logs_in(iggy, iggy_user, iggy_pw)
    assert permissions_of(iggy, iggy_user) == before

    log = b.read_log()
    assert f"principals: {principal} is refused" in log and f"its Iggy user {iggy_user} exists and was not " \
        "created by the bridge" in log, log[-3000:]
    assert f"principals map {principal} --iggy-user {iggy_user} --password-file FILE" in log
    assert f"runs as Iggy user {iggy_user}" not in log
    listed = cli(b, "principals", "list")
    row = [line for line in listed.stdout.splitlines() if line.startswith(principal)]
    assert len(row) == 1 and iggy_user in row[0] and row[0].split()[-1] == "refused", listed.stdout
    assert iggy_pw not in listed.stdout
    samples, _ = scrape(b)
    assert value(samples, "kib_principal_identity_refusals_total", reason="not_created_by_bridge") >= 2

    # An ACL change makes the bridge sync every mapping: the refused user is not written.
    create_acls(b, [acl(topic, principal, AclOperation.ALTER)])
    time.sleep(1)
    assert permissions_of(iggy, iggy_user) == before

    # The refused principal keeps asking on several connections: every answer is a refusal, the
    # warning is not repeated for each, and the bridge keeps serving others.
    idle = probe_latencies(b.port)
    child = refused_fetcher(b, bob, kafka_pw, topic)
    try:
        time.sleep(0.3)
        during = probe_latencies(b.port)
    finally:
        counts = stop_refused_fetcher(child)
    answers = sum(counts.values())
    assert answers > 100 and set(counts) == {TOPIC_AUTHORIZATION_FAILED}, counts
    idle_p99, during_p99 = assert_serves_others(idle, during, "refused principal fetching")
    print(f"{answers} refused fetches; probe p99 idle {idle_p99 * 1e3:.2f} ms, during {during_p99 * 1e3:.2f} ms")
    warnings = [line for line in b.read_log().splitlines()
                if f"{principal} is refused" in line and " warning principals: " in line]
    assert 1 <= len(warnings) <= 2, len(warnings)  # once a minute at most (the rest at debug)
    assert permissions_of(iggy, iggy_user) == before

    # After a restart the refusal stands (it is in state.db), and the user is still untouched.
    b.stop()
    b.start().wait_ready()
    assert produce_one(scram(b, bob, kafka_pw), topic, b"mine now?") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert logs_in(iggy, iggy_user, iggy_pw)
    assert permissions_of(iggy, iggy_user) == before

    # The operator adopts it explicitly, with its password: bob runs as it, and the sync writes the
    # bridge's topic entries while the global grant and the other stream's stay.
    r = cli(b, "principals", "map", principal, "--iggy-user", iggy_user, "--password-file", "-", stdin=iggy_pw + "\n")
    assert r.returncode == 0, r.stderr
    assert produce_one(scram(b, bob, kafka_pw), topic, b"adopted") is None
    after = permissions_of(iggy, iggy_user)
    ours = stream_id(iggy, STREAM)
    assert after["global"] == before["global"] and after["streams"][other] == before["streams"][other], after
    assert after["streams"][ours]["topics"][topic_id(iggy, topic)] == {"read_topic", "poll_messages", "send_messages"}


def test_an_operator_mapped_users_other_grants_survive_the_sync(sasl_factory, iggy):
    tag = uuid.uuid4().hex[:8]
    carol, kafka_pw = f"carol{tag}", "carol-kafka-" + tag
    principal, iggy_user, iggy_pw = f"User:{carol}", f"kib-op-{tag}", "op-" + uuid.uuid4().hex
    b = sasl_factory(CREATE, iggy_address=iggy.address).start().wait_ready()
    b.add_user(carol, "SCRAM-SHA-512", kafka_pw)
    granted, taken = f"hostile-op-g-{tag}", f"hostile-op-t-{tag}"
    for t in (granted, taken):
        create_topic(b.port, t)
    ours, other = stream_id(iggy, STREAM), create_stream(iggy, f"kib-other-{tag}")
    granted_id, taken_id = topic_id(iggy, granted), topic_id(iggy, taken)
    # The operator's user: global rights, a grant on another stream, a stream-wide flag on the
    # bridge's stream, and a topic grant there that the ACLs do not give (the bridge's to replace).
    create_iggy_user(iggy, iggy_user, iggy_pw, iggy_sdk.Permissions(
        global_permissions=iggy_sdk.GlobalPermissions(read_servers=True, read_users=True),
        streams={other: iggy_sdk.StreamPermissions(manage_topics=True, topics={
                     1: iggy_sdk.TopicPermissions(read_topic=True)}),
                 ours: iggy_sdk.StreamPermissions(read_topics=True, topics={
                     taken_id: iggy_sdk.TopicPermissions(send_messages=True)})}))
    before = permissions_of(iggy, iggy_user)
    r = cli(b, "principals", "map", principal, "--iggy-user", iggy_user, "--password-file", "-", stdin=iggy_pw + "\n")
    assert r.returncode == 0, r.stderr

    # READ on one topic: the sync (at the ACL change) writes it; everything else stays.
    create_acls(b, [acl(granted, principal, AclOperation.READ)])

    def synced():
        p = permissions_of(iggy, iggy_user)
        return ("ok" if p["streams"].get(ours, {}).get("topics", {}).get(granted_id) else "waiting", p)
    state, after = eventually(synced, "ok")
    assert state == "ok", after
    assert after["global"] == before["global"] == {"read_servers", "read_users"}
    assert after["streams"][other] == before["streams"][other]
    assert after["streams"][ours]["flags"] == {"read_topics"}  # the operator's stream-wide flag
    assert after["streams"][ours]["topics"] == {granted_id: {"read_topic", "poll_messages"}}  # taken's grant replaced

    # WRITE added: the bridge's entries follow the ACLs, the rest still stays.
    create_acls(b, [acl(granted, principal, AclOperation.WRITE)])

    def written():
        p = permissions_of(iggy, iggy_user)
        return ("ok" if "send_messages" in p["streams"][ours]["topics"].get(granted_id, ()) else "waiting", p)
    state, after = eventually(written, "ok")
    assert state == "ok", after
    assert after["streams"][ours]["topics"] == {granted_id: {"read_topic", "poll_messages", "send_messages"}}
    assert after["global"] == before["global"] and after["streams"][other] == before["streams"][other]
    assert after["streams"][ours]["flags"] == {"read_topics"}
    assert "has global or stream-wide permissions, kept as they are" in b.read_log()
    assert logs_in(iggy, iggy_user, iggy_pw)  # its password is the operator's, untouched


def test_only_acls_for_every_host_become_iggy_permissions(sasl_factory, iggy):
    tag = uuid.uuid4().hex[:8]
    dave = f"dave{tag}"
    principal, iggy_user, iggy_pw = f"User:{dave}", f"kib-host-{tag}", "host-" + uuid.uuid4().hex
    b = sasl_factory(CREATE, iggy_address=iggy.address).start().wait_ready()
    empty_host, star_host = f"hostile-host-e-{tag}", f"hostile-host-s-{tag}"
    for t in (empty_host, star_host):
        create_topic(b.port, t)
    r = cli(b, "principals", "map", principal, "--iggy-user", iggy_user, "--password-file", "-", "--create",
            stdin=iggy_pw + "\n")
    assert r.returncode == 0, r.stderr
    ours, empty_id, star_id = stream_id(iggy, STREAM), topic_id(iggy, empty_host), topic_id(iggy, star_host)

    # READ from host "" on one topic, from "*" on the other, in one request (one sync).
    create_acls(b, [acl(empty_host, principal, AclOperation.READ, host=""),
                    acl(star_host, principal, AclOperation.READ, host="*")])

    def synced():
        p = permissions_of(iggy, iggy_user)
        topics = ((p or {}).get("streams", {}).get(ours) or {}).get("topics", {})
        return ("ok" if star_id in topics else "waiting", topics)
    state, topics = eventually(synced, "ok")
    assert state == "ok", topics
    assert empty_id not in topics, topics
    assert native_poll_outcome(iggy.address, iggy_user, iggy_pw, empty_host)[0] == "refused"
    assert native_poll_outcome(iggy.address, iggy_user, iggy_pw, star_host) == ("ok", [])

    # The same ACL with host "*": now it is projected.
    create_acls(b, [acl(empty_host, principal, AclOperation.READ, host="*")])
    outcome = eventually(lambda: native_poll_outcome(iggy.address, iggy_user, iggy_pw, empty_host), "ok")
    assert outcome == ("ok", []), outcome


def test_a_pending_mapping_after_a_crash_is_the_bridges_only_if_its_password_logs_in(sasl_factory, iggy):
    """The crash window of unmapped = "create": the mapping ('pending', with the random password)
    is durable, and Iggy may or may not have created the user before the crash."""
    import sqlite3
    tag = uuid.uuid4().hex[:8]
    b = sasl_factory(CREATE, iggy_address=iggy.address).start().wait_ready()
    b.stop()  # state.db exists, migrated
    erin, frank = f"erin{tag}", f"frank{tag}"
    erin_pw, frank_pw = uuid.uuid4().hex, uuid.uuid4().hex
    with sqlite3.connect(b.state) as db:
        for who, pw in ((erin, erin_pw), (frank, frank_pw)):
            db.execute("INSERT INTO principal_iggy_users(principal, iggy_username, iggy_password, created_by_bridge, "
                       "updated_at, iggy_user_status) VALUES (?, ?, ?, 1, 0, 'pending')",
                       (f"User:{who}", f"kafka.{who}", pw))
    # Iggy created erin's user before the crash (with the mapping's password); frank's was made by
    # someone else, with a password of its own and a global permission.
    create_iggy_user(iggy, f"kafka.{erin}", erin_pw, None)
    frank_own = "franks-own-" + uuid.uuid4().hex
    create_iggy_user(iggy, f"kafka.{frank}", frank_own, iggy_sdk.Permissions(
        global_permissions=iggy_sdk.GlobalPermissions(read_servers=True)))
    frank_before = permissions_of(iggy, f"kafka.{frank}")

    b.start().wait_ready()
    topic = f"hostile-crash-{tag}"
    create_topic(b.port, topic)
    for who in (erin, frank):
        b.add_user(who, "SCRAM-SHA-512", who + "-kafka")
        grant_data_rights(b, f"User:{who}", topic)

    assert produce_one(scram(b, erin, erin + "-kafka"), topic, b"erin") is None
    assert produce_one(scram(b, frank, frank + "-kafka"), topic, b"frank") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert logs_in(iggy, f"kafka.{frank}", frank_own)
    assert permissions_of(iggy, f"kafka.{frank}") == frank_before
    log = b.read_log()
    assert f"Iggy user kafka.{erin} logs in with the password the bridge gave it" in log
    assert f"Iggy user kafka.{frank} exists but does not log in with the password the bridge made for it" in log
    listed = {line.split()[0]: line.split()[-1] for line in cli(b, "principals", "list").stdout.splitlines()
              if line.startswith("User:")}
    assert listed[f"User:{erin}"] == "created" and listed[f"User:{frank}"] == "refused", listed
