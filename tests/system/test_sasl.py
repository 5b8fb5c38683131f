"""SASL on a SASL_PLAINTEXT listener of the real bridge binary (docs/security.md "SASL"): a
SCRAM-SHA-256/512 and PLAIN client written from RFC 5802/4616 and Kafka's wire format
(harness/kafka_wire/sasl.py, not the bridge's code), users made with `kafka-iggy-bridge users`,
the gate before authentication, the legacy SaslHandshake v0 path, KIP-368 re-authentication and
session expiry, and real clients (confluent-kafka, kafka-python, kcat, the Java kafka-configs
tool)."""
import hashlib, os, shutil, socket, sqlite3, stat, struct, subprocess, time, uuid

import pytest

from conftest import ROOT, free_port, system_bridge
from harness.bridge import BridgeProcess
from harness.kafka_wire import api_versions_request, is_closed, parse_api_versions, recv_frame, request
from harness.kafka_wire.sasl import SaslConn, ScramClient, plain

JAVA_LIB = os.path.join(ROOT, "tests", ".java", "lib")
SASL_AUTHENTICATION_FAILED, ILLEGAL_SASL_STATE, UNSUPPORTED_SASL_MECHANISM = 58, 34, 33
GENERIC = "Authentication failed during authentication due to invalid credentials with SASL mechanism "


class SaslBridge(BridgeProcess):
    """A bridge with a PLAINTEXT listener (its `port`, what start() waits for) and a
    SASL_PLAINTEXT one (`sasl_port`)."""

    def __init__(self, workdir, **kw):
        super().__init__(workdir, **kw)
        self.sasl_port = free_port()


@pytest.fixture
def sasl_factory(workdir):
    import tempfile
    made = []

    def make(sasl_toml="", **kw):
        b = system_bridge(tempfile.mkdtemp(dir=workdir), sasl_toml, cls=SaslBridge, listeners=lambda b: [
            f"PLAINTEXT://127.0.0.1:{b.port}", f"SASL_PLAINTEXT://127.0.0.1:{b.sasl_port}"], **kw)
        made.append(b)
        return b

    yield make
    for b in made:
        b.kill()


# ---- the wire: harness/kafka_wire/sasl.py (SaslHandshake, SaslAuthenticate, SCRAM) ----

def scram_login(conn, mechanism, user, password, version=1, tamper=False):
    err, _ = conn.handshake(mechanism)
    assert err == 0
    c = ScramClient(mechanism, user, password)
    err, msg, server_first, _ = conn.authenticate(c.first(), version)
    if err:
        return err, msg, None
    err, msg, server_final, lifetime = conn.authenticate(c.final(server_first, tamper), version)
    if err == 0:
        assert c.server_signature_ok(server_final)
    return err, msg, lifetime


# ---- the exchange ----

def test_scram_logins_with_users_made_by_the_cli(sasl_factory):
    b = sasl_factory()
    b.add_user("alice", "SCRAM-SHA-256", "alice-256")
    b.add_user("alice", "SCRAM-SHA-512", "alice-512")
    b.start()
    for mechanism, password in (("SCRAM-SHA-256", "alice-256"), ("SCRAM-SHA-512", "alice-512")):
        for version in (0, 1, 2):
            c = SaslConn(b.sasl_port)
            err, msg, lifetime = scram_login(c, mechanism, "alice", password, version)
            assert (err, msg) == (0, ""), msg
            assert lifetime == (None if version == 0 else 0)
            assert c.describe_cluster() == 0
            c.close()
    log = b.read_log()
    assert "SASL/SCRAM-SHA-512 authenticated as User:alice" in log
    assert "alice-512" not in log and "alice-256" not in log  # passwords never logged


def test_a_wrong_password_gets_sasl_authentication_failed_and_the_connection_closes(sasl_factory):
    b = sasl_factory()
    b.add_user("bob", "SCRAM-SHA-512", "right")
    b.start()
    c = SaslConn(b.sasl_port)
    err, msg, _ = scram_login(c, "SCRAM-SHA-512", "bob", "wrong")
    assert (err, msg) == (SASL_AUTHENTICATION_FAILED, GENERIC + "SCRAM-SHA-512")
    assert is_closed(c.sock)
    # An unknown user gets the same answer.
    c = SaslConn(b.sasl_port)
    err, msg, _ = scram_login(c, "SCRAM-SHA-512", "nobody", "x")
    assert (err, msg) == (SASL_AUTHENTICATION_FAILED, GENERIC + "SCRAM-SHA-512")
    assert is_closed(c.sock)


def read_until_closed(sock, timeout=5):
    """Every byte until the peer closes (b"" if it closed at once); None if it stays open."""
    received = b""
    sock.settimeout(timeout)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return received
            received += chunk
    except (ConnectionResetError, BrokenPipeError):
        return received
    except socket.timeout:
        return None


def correlation_ids(data):
    ids = []
    while len(data) >= 8:
        (n,) = struct.unpack_from(">i", data, 0)
        ids.append(struct.unpack_from(">i", data, 4)[0])
        data = data[4 + n:]
    return ids


def wrong_proof_exchange(b):
    """A connection whose SCRAM client-final message (with a wrong proof) is the next thing to send."""
    c = SaslConn(b.sasl_port)
    assert c.handshake("SCRAM-SHA-256")[0] == 0
    scram = ScramClient("SCRAM-SHA-256", "carol", "pw")
    err, _, server_first, _ = c.authenticate(scram.first())
    assert err == 0
    return c, scram.final(server_first, tamper=True)


def test_a_wrong_proof_whose_error_is_ignored_gets_no_api(sasl_factory):
    """The issue's test: a SCRAM client-final message with a wrong proof, the server's error
    ignored, then an API: refused (connection closed, no data)."""
    b = sasl_factory()
    b.add_user("carol", "SCRAM-SHA-256", "pw")
    b.start()
    # One after the other: the error read and ignored, then Metadata (v1, all topics).
    c, token = wrong_proof_exchange(b)
    err, msg, _, _ = c.authenticate(token)
    assert (err, msg) == (SASL_AUTHENTICATION_FAILED, GENERIC + "SCRAM-SHA-256")
    try:
        c.send(3, 1, struct.pack(">i", -1))
    except (BrokenPipeError, ConnectionResetError):
        pass  # already closed
    assert read_until_closed(c.sock) == b""
    # Pipelined: the wrong proof, Metadata and DescribeCluster in one write, the error not awaited.
    c, token = wrong_proof_exchange(b)
    frames = b"".join([request(36, 1, 101, struct.pack(">i", len(token)) + token),
                       request(3, 1, 102, struct.pack(">i", -1)),
                       request(60, 0, 103, b"\x00\x00", flexible=True)])
    c.sock.sendall(frames)
    received = read_until_closed(c.sock)
    assert received is not None, "the connection stayed open"
    # At most the SASL_AUTHENTICATION_FAILED answer; nothing for the two requests after it.
    assert set(correlation_ids(received)) <= {101}, correlation_ids(received)
    assert "SASL/SCRAM-SHA-256 authentication failed for user carol: Invalid client credentials" in b.read_log()


def test_a_request_other_than_api_versions_or_sasl_before_authentication_closes_the_connection(sasl_factory):
    b = sasl_factory().start()
    c = SaslConn(b.sasl_port)
    c.sock.sendall(api_versions_request(3, 7))
    corr, err, apis = parse_api_versions(recv_frame(c.sock), 3)
    assert (corr, err) == (7, 0)
    assert apis[17] == (0, 1) and apis[36] == (0, 2)
    c.send(3, 1, struct.pack(">i", -1))  # Metadata
    assert is_closed(c.sock)
    assert "Metadata before SASL authentication" in b.read_log()


def test_plain_logins(sasl_factory):
    b = sasl_factory()
    b.add_user("dave", "PLAIN", "plain-pw")
    b.start()
    c = SaslConn(b.sasl_port)
    assert c.handshake("PLAIN")[0] == 0
    assert c.authenticate(plain("", "dave", "plain-pw"))[:2] == (0, "")
    assert c.describe_cluster() == 0
    c = SaslConn(b.sasl_port)
    assert c.handshake("PLAIN")[0] == 0
    assert c.authenticate(plain("", "dave", "nope"))[:2] == (SASL_AUTHENTICATION_FAILED,
                                                              "Authentication failed: Invalid username or password")
    assert is_closed(c.sock)
    assert "plain-pw" not in b.read_log()


def test_legacy_v0_handshake_with_bare_tokens(sasl_factory):
    b = sasl_factory()
    b.add_user("erin", "SCRAM-SHA-256", "pw256")
    b.add_user("erin", "PLAIN", "pwplain")
    b.start()
    c = SaslConn(b.sasl_port)
    assert c.handshake("SCRAM-SHA-256", version=0)[0] == 0
    scram = ScramClient("SCRAM-SHA-256", "erin", "pw256")
    server_first = c.raw(scram.first())
    assert scram.server_signature_ok(c.raw(scram.final(server_first)))
    assert c.describe_cluster() == 0
    c = SaslConn(b.sasl_port)
    assert c.handshake("PLAIN", version=0)[0] == 0
    assert c.raw(plain("", "erin", "pwplain")) == b""  # Kafka answers PLAIN with an empty token
    assert c.describe_cluster() == 0
    # A failure has no room for an error code: the connection closes without an answer.
    c = SaslConn(b.sasl_port)
    assert c.handshake("PLAIN", version=0)[0] == 0
    token = plain("", "erin", "wrong")
    c.sock.sendall(struct.pack(">i", len(token)) + token)
    assert is_closed(c.sock)


def test_session_lifetime_reauthentication_and_expiry(sasl_factory):
    b = sasl_factory("[sasl]\nconnections_max_reauth_ms = 2000\n")
    b.add_user("frank", "SCRAM-SHA-512", "pw")
    b.add_user("grace", "SCRAM-SHA-512", "pw2")
    b.start()
    c = SaslConn(b.sasl_port)
    err, _, lifetime = scram_login(c, "SCRAM-SHA-512", "frank", "pw", version=1)
    assert (err, lifetime) == (0, 2000)
    assert c.describe_cluster() == 0
    time.sleep(1.2)
    # Re-authentication on the same connection, as the same user, renews the session.
    err, _, lifetime = scram_login(c, "SCRAM-SHA-512", "frank", "pw", version=2)
    assert (err, lifetime) == (0, 2000)
    time.sleep(1.2)  # past the first session's end, within the renewed one
    assert c.describe_cluster() == 0
    time.sleep(1.0)  # past the renewed session's end
    c.send(60, 0, b"\x00\x00", flexible=True)
    assert is_closed(c.sock)
    assert "after the SASL session expired" in b.read_log()
    # Re-authenticating as someone else fails and closes.
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-512", "frank", "pw")[0] == 0
    err, msg, _ = scram_login(c, "SCRAM-SHA-512", "grace", "pw2")
    assert (err, msg) == (SASL_AUTHENTICATION_FAILED,
                          "Cannot change principals during re-authentication from User.frank: User.grace")
    assert is_closed(c.sock)


def test_an_unsupported_mechanism_and_the_plaintext_listener(sasl_factory):
    b = sasl_factory('[sasl]\nenabled_mechanisms = ["SCRAM-SHA-512"]\n').start()
    c = SaslConn(b.sasl_port)
    assert c.handshake("PLAIN") == (UNSUPPORTED_SASL_MECHANISM, ["SCRAM-SHA-512"])
    assert is_closed(c.sock)
    c = SaslConn(b.port)  # PLAINTEXT: already authenticated, as on a Kafka broker
    assert c.handshake("SCRAM-SHA-512") == (ILLEGAL_SASL_STATE, [])
    assert c.describe_cluster() == 0


# ---- users: the CLI and the state database ----

def test_users_cli_changes_apply_to_the_next_login_without_a_restart(sasl_factory):
    b = sasl_factory().start()
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-512", "hank", "pw")[0] == SASL_AUTHENTICATION_FAILED
    pwfile = os.path.join(b.workdir, "pw")
    with open(pwfile, "w") as f:
        f.write("pw\n")
    r = b.users("add", "hank", "--mechanism", "SCRAM-SHA-512", "--password-file", pwfile, "--iterations", "4096")
    assert r.returncode == 0 and "Added SCRAM-SHA-512 credential for user hank (4096 iterations)" in r.stdout
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-512", "hank", "pw")[0] == 0
    listed = b.users("list")
    assert listed.returncode == 0
    assert listed.stdout.split("\n")[0].split() == ["USER", "MECHANISM", "ITERATIONS", "UPDATED"]
    assert listed.stdout.split("\n")[1].split()[:3] == ["hank", "SCRAM-SHA-512", "4096"]
    import json
    assert json.loads(b.users("list", "--json").stdout)[0]["user"] == "hank"
    # A new password replaces the old one.
    b.add_user("hank", "SCRAM-SHA-512", "pw-new")
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-512", "hank", "pw")[0] == SASL_AUTHENTICATION_FAILED
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-512", "hank", "pw-new")[0] == 0
    r = b.users("delete", "hank")
    assert r.returncode == 0 and "Deleted SCRAM-SHA-512 credential of user hank" in r.stdout
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-512", "hank", "pw-new")[0] == SASL_AUTHENTICATION_FAILED
    assert b.users("delete", "hank").returncode == 1
    assert stat.S_IMODE(os.stat(b.state).st_mode) == 0o600


def test_users_cli_refuses_bad_input_and_never_prints_secrets(sasl_factory):
    b = sasl_factory()
    r = b.users("add", "ivan", "--mechanism", "SCRAM-SHA-1", "--password-file", "-", password="x\n")
    assert r.returncode != 0
    r = b.users("add", "ivan", "--mechanism", "PLAIN", "--password-file", "-", "--iterations", "100", password="x\n")
    assert r.returncode == 1 and "4096 and 16384" in r.stderr
    r = b.users("add", "ivan", "--mechanism", "PLAIN", "--password-file", "-", password="\n")
    assert r.returncode == 1 and "empty" in r.stderr
    r = b.add_user("ivan", "PLAIN", "hunter2-secret")
    assert "hunter2" not in r.stdout + r.stderr
    listed = b.users("list")
    assert "hunter2" not in listed.stdout
    # The database holds a salt and a hash, not the password (the CLI created it 0600).
    assert stat.S_IMODE(os.stat(b.state).st_mode) == 0o600
    with sqlite3.connect(b.state) as db:
        salt, digest, iterations = db.execute("SELECT salt, hash, iterations FROM plain_credentials").fetchone()
    assert digest == hashlib.pbkdf2_hmac("sha512", b"hunter2-secret", salt, iterations)
    with open(b.state, "rb") as f:
        assert b"hunter2-secret" not in f.read()


# ---- real clients (need iggy-server) ----

def client_config(mechanism, user, password):
    return {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism, "sasl.username": user,
            "sasl.password": password}


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"])
def test_confluent_kafka_produces_and_consumes_over_sasl(sasl_factory, iggy, mechanism):
    ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
    b = sasl_factory(iggy_address=iggy.address)
    b.add_user("julia", mechanism, "julia-pw")
    b.start().wait_ready()
    bs = f"127.0.0.1:{b.sasl_port}"
    topic = "sasl-ck-" + uuid.uuid4().hex[:8]
    p = ck.Producer({"bootstrap.servers": bs, **client_config(mechanism, "julia", "julia-pw")})
    for i in range(5):
        p.produce(topic, value=b"v%d" % i, key=b"k")
    assert p.flush(30) == 0
    c = ck.Consumer({"bootstrap.servers": bs, "group.id": "g-" + topic, "auto.offset.reset": "earliest",
                     **client_config(mechanism, "julia", "julia-pw")})
    c.subscribe([topic])
    got, deadline = [], time.time() + 40
    while len(got) < 5 and time.time() < deadline:
        m = c.poll(1.0)
        if m is not None and not m.error():
            got.append(m.value())
    c.close()
    assert got == [b"v%d" % i for i in range(5)]
    # A wrong password: the client reports an authentication failure.
    errors = []
    bad = ck.Producer({"bootstrap.servers": bs, **client_config(mechanism, "julia", "wrong"),
                       "error_cb": lambda e: errors.append(e)})
    bad.produce(topic, value=b"x")
    bad.flush(5)
    assert any(e.code() == ck.KafkaError._AUTHENTICATION for e in errors), errors


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"])
def test_kafka_python_produces_and_consumes_over_sasl(sasl_factory, iggy, mechanism):
    kafka = pytest.importorskip("kafka", reason="SKIPPED: kafka-python not installed (tests/clients/setup.sh)")
    b = sasl_factory(iggy_address=iggy.address)
    b.add_user("kim", mechanism, "kim-pw")
    b.start().wait_ready()
    bs = f"127.0.0.1:{b.sasl_port}"
    topic = "sasl-kp-" + uuid.uuid4().hex[:8]
    auth = dict(security_protocol="SASL_PLAINTEXT", sasl_mechanism=mechanism, sasl_plain_username="kim",
                sasl_plain_password="kim-pw")
    p = kafka.KafkaProducer(bootstrap_servers=bs, **auth)
    for i in range(5):
        p.send(topic, b"v%d" % i).get(timeout=30)
    p.close()
    c = kafka.KafkaConsumer(topic, bootstrap_servers=bs, group_id="g-" + topic, auto_offset_reset="earliest",
                            consumer_timeout_ms=20000, **auth)
    got = []
    for m in c:
        got.append(m.value)
        if len(got) == 5:
            break
    c.close()
    assert got == [b"v%d" % i for i in range(5)]


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"])
def test_kcat_produces_and_consumes_over_sasl(sasl_factory, iggy, mechanism):
    if not shutil.which("kcat"):
        pytest.skip("SKIPPED: kcat not installed (make deps)")
    b = sasl_factory(iggy_address=iggy.address)
    b.add_user("lena", mechanism, "lena-pw")
    b.start().wait_ready()
    topic = "sasl-kcat-" + uuid.uuid4().hex[:8]
    auth = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", f"sasl.mechanism={mechanism}", "-X",
            "sasl.username=lena", "-X", "sasl.password=lena-pw"]
    bs = f"127.0.0.1:{b.sasl_port}"
    version = subprocess.run(["kcat", "-V"], capture_output=True, text=True)
    if mechanism.startswith("SCRAM") and "librdkafka 2.0." in version.stdout + version.stderr:
        # librdkafka < 2.6.1 repeats its nonce in the client-final-message: Kafka 4.1 refuses
        # the login (tests/clients/test_security.py shows it side by side), and so does the bridge.
        r = subprocess.run(["kcat", "-b", bs, *auth, "-L", "-m", "10"], capture_output=True, text=True, timeout=60)
        assert r.returncode != 0
        assert GENERIC + mechanism in r.stderr + r.stdout
        assert "Invalid client nonce" in b.read_log()
        return
    r = subprocess.run(["kcat", "-b", bs, *auth, "-P", "-t", topic], input="one\ntwo\nthree\n", capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["kcat", "-b", bs, *auth, "-C", "-t", topic, "-o", "beginning", "-e", "-q"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["one", "two", "three"]
    bad = ["-X", "security.protocol=SASL_PLAINTEXT", "-X", f"sasl.mechanism={mechanism}", "-X",
           "sasl.username=lena", "-X", "sasl.password=wrong"]
    r = subprocess.run(["kcat", "-b", bs, *bad, "-L"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "Authentication failed" in r.stderr + r.stdout


def java_tool(main, *args):
    if not shutil.which("java") or not os.path.isdir(JAVA_LIB):
        pytest.skip("SKIPPED: Kafka jars not fetched (tools/fetch-kafka)")
    return subprocess.run(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", JAVA_LIB + "/*", main, *args],
                          capture_output=True, text=True, timeout=120)


def test_kafka_configs_adds_describes_and_deletes_scram_credentials(sasl_factory):
    b = sasl_factory()
    b.add_user("admin", "SCRAM-SHA-512", "admin-pw")
    b.start()
    props = os.path.join(b.workdir, "admin.properties")
    with open(props, "w") as f:
        f.write("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
                'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
                'username="admin" password="admin-pw";\n')
    # Through the SASL listener, logged in with SCRAM-SHA-512 by the Java client.
    tool = lambda *a: java_tool("kafka.admin.ConfigCommand", "--bootstrap-server", f"127.0.0.1:{b.sasl_port}",
                                "--command-config", props, *a)
    # Both mechanisms in one command: Kafka 4.1's controller (ScramControlManager) alters a user
    # once per request, and so does the bridge.
    r = tool("--alter", "--add-config", "SCRAM-SHA-512=[password=mia-pw],SCRAM-SHA-256=[iterations=4096,password=mia-256]",
             "--entity-type", "users", "--entity-name", "mia")
    assert r.returncode != 0
    assert "DuplicateResourceException: A user credential cannot be altered twice in the same request" in r.stdout + r.stderr
    for config in ("SCRAM-SHA-512=[password=mia-pw]", "SCRAM-SHA-256=[iterations=4096,password=mia-256]"):
        r = tool("--alter", "--add-config", config, "--entity-type", "users", "--entity-name", "mia")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "Completed updating config for user mia." in r.stdout
    r = tool("--describe", "--entity-type", "users", "--entity-name", "mia")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SCRAM credential configs for user-principal 'mia' are SCRAM-SHA-256=iterations=4096, " \
           "SCRAM-SHA-512=iterations=4096" in r.stdout
    r = tool("--describe", "--entity-type", "users")
    assert "SCRAM credential configs for user-principal 'admin' are SCRAM-SHA-512=iterations=8192" in r.stdout
    assert "user-principal 'mia'" in r.stdout
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-512", "mia", "mia-pw")[0] == 0
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-256", "mia", "mia-256")[0] == 0
    r = tool("--alter", "--delete-config", "SCRAM-SHA-512", "--entity-type", "users", "--entity-name", "mia")
    assert r.returncode == 0, r.stdout + r.stderr
    r = tool("--describe", "--entity-type", "users", "--entity-name", "mia")
    assert "SCRAM credential configs for user-principal 'mia' are SCRAM-SHA-256=iterations=4096" in r.stdout
    c = SaslConn(b.sasl_port)
    assert scram_login(c, "SCRAM-SHA-512", "mia", "mia-pw")[0] == SASL_AUTHENTICATION_FAILED
    # Too many iterations: the broker's refusal (UNACCEPTABLE_CREDENTIAL), as the tool prints it
    # (too few the tool refuses itself).
    r = tool("--alter", "--add-config", "SCRAM-SHA-512=[iterations=20000,password=x]", "--entity-type", "users",
             "--entity-name", "nina")
    assert r.returncode != 0
    assert "UnacceptableCredentialException: Too many iterations" in r.stdout + r.stderr
    # A wrong password for the tool itself: it cannot connect.
    bad = os.path.join(b.workdir, "bad.properties")
    with open(bad, "w") as f:
        f.write(open(props).read().replace('password="admin-pw"', 'password="nope"'))
    r = java_tool("kafka.admin.ConfigCommand", "--bootstrap-server", f"127.0.0.1:{b.sasl_port}", "--command-config",
                  bad, "--describe", "--entity-type", "users")
    assert r.returncode != 0
    assert "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512" \
        in r.stdout + r.stderr


def test_confluent_kafka_reauthenticates_before_its_session_ends(sasl_factory, iggy):
    """KIP-368 with a real client: librdkafka re-authenticates on its connections when the
    session lifetime nears its end, and produces on without an error or a new connection."""
    ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
    b = sasl_factory("[sasl]\nconnections_max_reauth_ms = 2000\n", iggy_address=iggy.address)
    b.add_user("oscar", "SCRAM-SHA-512", "oscar-pw")
    b.start().wait_ready()
    topic = "sasl-reauth-" + uuid.uuid4().hex[:8]
    errors = []
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{b.sasl_port}", **client_config("SCRAM-SHA-512", "oscar", "oscar-pw"),
                     "error_cb": lambda e: errors.append(e)})
    delivered = []
    for i in range(14):  # 7 s: three and a half session lifetimes
        p.produce(topic, value=b"v%d" % i, on_delivery=lambda err, m: delivered.append(err))
        p.poll(0)
        time.sleep(0.5)
    assert p.flush(30) == 0
    assert delivered == [None] * 14
    assert errors == []
    log = b.read_log()
    assert "SASL/SCRAM-SHA-512 re-authenticated as User:oscar" in log
    assert "after the SASL session expired" not in log
