"""Which Iggy server the bridge talks to decides how it reads a SendMessages reply (issue 13).

The release server (0.9.0, iggy_binary_protocol 0.11.0) answers a request it classified as a
duplicate with an empty body: nothing was appended for it. A bridge that took that for a stored
batch would acknowledge records Iggy never kept. The build these tests run against is the edge
server (0.9.0-edge.5), which always confirms a send with its offset; a loopback proxy between
the bridge and it makes the edge server look like the release (it rewrites the server version in
the Register reply) and, when told to, empties or garbles the reply to SendMessages. A real Kafka
producer must then get an error for its record, never an offset.

The same proxy plays two servers the bridge cannot talk to: one that evicts every Register with
IncompatibleProtocol (a protocol 0.12 server), and one speaking the legacy framing of Iggy 0.8.
A bridge started against either exits with status 5 and one line that names both versions,
instead of logging in again and again.
"""
import re, socket, struct, subprocess, threading, time, uuid
import pytest

from conftest import bridge_bin, free_port
from test_idempotent_retry import consume_all, create_topic
from test_metrics import http_get, scrape, total, value, with_http

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")

# The Iggy frame reader of the reply-dropping proxy (same framing: 256-byte header, size at 48).
from test_iggy_reply_lost import HEADER, REP_OP_AT, REQ_OP_AT, SIZE_AT, _close, _recv_exact, _recv_frame  # noqa: E402

COMMAND_AT = 60
OP_REGISTER, OP_CREATE_TOPIC, OP_SEND_MESSAGES = 1, 132, 160
COMMAND_REPLY = 8


def _with_body(frame, body):
    head = bytearray(frame[:HEADER])
    struct.pack_into("<I", head, SIZE_AT, HEADER + len(body))
    return bytes(head) + body


class IggyVersionProxy:
    """Loopback proxy to iggy-server.

    server_version: None passes the Register reply as is, else its server version string is
    replaced (e.g. "0.9.0", the release). send_reply: "pass", "empty" (the release's duplicate
    answer) or "malformed" (a confirmation count with no confirmation behind it)."""

    def __init__(self, iggy_port):
        self.iggy_port = iggy_port
        self.port = free_port()
        self.lock = threading.Lock()
        self.server_version = None
        self.send_reply = "pass"
        self.rewritten_sends = 0
        self.sends = 0
        self.conns = []
        self.create_topic_bodies = []
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.iggy_port))
            with self.lock:
                self.conns.append((client, up))
            threading.Thread(target=self._pump, args=(client, up, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, True), daemon=True).start()

    def _rewrite(self, frame):
        if frame[COMMAND_AT] != COMMAND_REPLY:
            return frame
        op = frame[REP_OP_AT]
        with self.lock:
            version, send_reply = self.server_version, self.send_reply
            if op == OP_SEND_MESSAGES:
                self.sends += 1
        if op == OP_REGISTER and version is not None and len(frame) > HEADER:
            body = frame[HEADER:]
            # [u32 result count = 0][u32 user][u64 session][u32 protocol][u8 len][version]
            v = version.encode()
            return _with_body(frame, body[:20] + bytes([len(v)]) + v)
        if op == OP_SEND_MESSAGES and send_reply != "pass":
            with self.lock:
                self.rewritten_sends += 1
            return _with_body(frame, b"" if send_reply == "empty" else struct.pack("<I", 1) + b"\x07")
        return frame

    def _pump(self, src, dst, from_server):
        try:
            while True:
                frame = _recv_frame(src)
                if not from_server and frame[REQ_OP_AT] == OP_CREATE_TOPIC:
                    with self.lock:
                        self.create_topic_bodies.append(frame[HEADER:])
                dst.sendall(self._rewrite(frame) if from_server else frame)
        except (OSError, ConnectionError):
            pass
        finally:
            _close(src)
            _close(dst)

    def drop_all(self):
        """Every bridge connection logs in again (and reads the Register reply again)."""
        with self.lock:
            conns, self.conns = self.conns, []
        for c, u in conns:
            _close(c)
            _close(u)

    def close(self):
        self.listener.close()
        self.drop_all()


def wait_for_generation(bridge, generation, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        samples, _ = scrape(bridge)
        gens = {dict(l).get("generation") for (n, l), v in samples.items() if n == "kib_iggy_server_info" and v == 1}
        if gens == {generation} and total(samples, "kib_iggy_pool_connected") >= 1:
            return samples
        time.sleep(0.1)
    raise AssertionError(f"the bridge never logged in to a '{generation}' server: {gens}")


def produce_once(port, topic, value_bytes):
    """One record, no retries: the producer reports exactly what the bridge answered."""
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "enable.idempotence": False, "acks": "all",
                     "linger.ms": 0, "message.send.max.retries": 0, "message.timeout.ms": 30000})
    out = {}

    def report(err, msg):
        out["error"] = err
        out["offset"] = None if err else msg.offset()

    p.produce(topic, value_bytes, partition=0, on_delivery=report)
    assert p.flush(40) == 0
    return out


@pytest.fixture
def proxied(bridge_factory, iggy):
    proxy = IggyVersionProxy(iggy.port)
    bridge = with_http(bridge_factory(iggy_address=f"127.0.0.1:{proxy.port}")).start().wait_ready()
    yield bridge, proxy
    proxy.close()


def test_the_bridge_shows_which_iggy_server_it_talks_to(proxied):
    bridge, proxy = proxied
    samples = wait_for_generation(bridge, "edge")
    info = [dict(l) for (n, l), v in samples.items() if n == "kib_iggy_server_info" and v == 1]
    assert info == [{"version": "0.9.0-edge.5", "protocol": "0.11.0", "generation": "edge"}]
    assert re.search(r"ready: Iggy at \S+ \(server 0\.9\.0-edge\.5, protocol 0\.11\.0, edge\)", bridge.read_log())
    # and `kafka-iggy-bridge status` names it
    out = subprocess.run([bridge_bin(), "status", "--config", bridge.config], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"iggy server\s+0\.9\.0-edge\.5, protocol 0\.11\.0", out.stdout), out.stdout


def test_an_empty_send_reply_from_a_release_server_is_never_acknowledged(proxied):
    bridge, proxy = proxied
    topic = "unconfirmed-" + uuid.uuid4().hex[:8]
    create_topic(bridge.port, topic)  # on the edge server: enforce_fsync is its durability option
    assert proxy.create_topic_bodies and all(b"enforce_fsync" in b for b in proxy.create_topic_bodies)
    assert produce_once(bridge.port, topic, b"edge")["offset"] == 0

    # The same server, now reporting itself as the release: sends it confirms still succeed (every
    # partition op takes a fresh request number, which both generations accept).
    proxy.server_version = "0.9.0"
    proxy.drop_all()
    wait_for_generation(bridge, "release")
    assert produce_once(bridge.port, topic, b"release")["offset"] == 1

    # An empty reply is the release's "duplicate, nothing appended": the producer gets an error.
    proxy.send_reply = "empty"
    before = proxy.rewritten_sends
    r = produce_once(bridge.port, topic, b"unconfirmed")
    assert proxy.rewritten_sends > before, "the proxy never emptied a SendMessages reply: the scenario did not happen"
    assert r["error"] is not None and r["offset"] is None, f"an unconfirmed send was acknowledged: {r}"
    # REQUEST_TIMED_OUT: retriable in Kafka's protocol (librdkafka retries it when retries are on)
    assert r["error"].code() == ck.KafkaError.REQUEST_TIMED_OUT, r["error"]
    samples, _ = scrape(bridge)
    assert total(samples, "kib_iggy_unconfirmed_sends_total") >= 1
    assert "Unconfirmed" in bridge.read_log()

    # A malformed confirmation is never a success either.
    proxy.send_reply = "malformed"
    r = produce_once(bridge.port, topic, b"garbled")
    assert r["error"] is not None and r["offset"] is None, f"a malformed confirmation was acknowledged: {r}"
    samples, _ = scrape(bridge)
    assert total(samples, "kib_iggy_unconfirmed_sends_total") >= 2

    # What the producer was told matches what a consumer can prove: the two acknowledged records
    # are at the offsets it was given.
    proxy.send_reply = "pass"
    values = consume_all(bridge.port, topic)
    assert values[:2] == [(0, "edge"), (1, "release")]


def test_topics_created_through_a_release_server_ask_for_durability_not_enforce_fsync(proxied, iggy):
    """The release refuses `enforce_fsync` (4041); the edge build refuses `durability` (4041) — so
    a CreateTopics through a bridge that believes it talks to the release fails here with
    INVALID_CONFIG, which shows the bridge switched the option it sends."""
    bridge, proxy = proxied
    proxy.server_version = "0.9.0"
    proxy.drop_all()
    wait_for_generation(bridge, "release")
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{bridge.port}"})
    name = "durability-" + uuid.uuid4().hex[:8]
    fut = admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=1)])[name]
    with pytest.raises(ck.KafkaException) as e:
        fut.result(timeout=30)
    assert e.value.args[0].code() == ck.KafkaError.INVALID_CONFIG, e.value
    bodies = proxy.create_topic_bodies
    assert bodies, "no CreateTopic reached Iggy"
    assert all(b"durability" in b and b"persisted" in b and b"enforce_fsync" not in b for b in bodies), bodies


class FakeUnsupportedIggy:
    """Answers every connection like a server this bridge cannot speak to."""

    def __init__(self, kind):
        self.kind = kind
        self.port = free_port()
        self.accepted = 0
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        try:
            if self.kind == "legacy":
                # Iggy <= 0.8 reads [u32 length][u32 code] and answers [u32 status 3][u32 length 0]
                while True:
                    _recv_exact(c, 8)
                    c.sendall(struct.pack("<II", 3, 0))
            _recv_frame(c)  # the Register
            ev = bytearray(HEADER)
            struct.pack_into("<I", ev, SIZE_AT, HEADER)
            ev[COMMAND_AT] = 13  # Eviction
            struct.pack_into("<II", ev, 144, (12 << 10) | 3, 12 << 10)  # accepts 0.12.0 .. 0.12.3
            ev[255] = 14  # IncompatibleProtocol
            c.sendall(bytes(ev))
            time.sleep(1)
        except (OSError, ConnectionError):
            pass
        finally:
            _close(c)

    def close(self):
        self.listener.close()


@pytest.mark.parametrize("kind, words", [("incompatible", ["0.11.0", "0.12"]), ("legacy", ["legacy", "0.11.0"])])
def test_a_bridge_pointed_at_an_unsupported_iggy_exits_with_status_5_and_one_clear_line(bridge_factory, kind, words):
    server = FakeUnsupportedIggy(kind)
    try:
        b = bridge_factory(iggy_address=f"127.0.0.1:{server.port}").start(wait=False)
        try:
            rc = b.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("the bridge kept running against an unsupported server:\n" + b.read_log()[-3000:])
        log = b.read_log()
        assert rc == 5, log[-3000:]
        fatal = [l for l in log.splitlines() if "cannot start: Iggy at" in l]
        assert len(fatal) == 1, log[-3000:]
        for w in words:
            assert w in fatal[0], fatal[0]
        # each connection tried once: no login loop
        assert server.accepted <= 4, f"{server.accepted} connections: the bridge retried the login"
    finally:
        server.close()


def test_a_running_bridge_whose_iggy_turns_unsupported_fails_readiness_instead_of_looping(bridge_factory, iggy):
    proxy = IggyVersionProxy(iggy.port)
    try:
        bridge = with_http(bridge_factory(iggy_address=f"127.0.0.1:{proxy.port}")).start().wait_ready()
        proxy.server_version = "0.10.0"  # its Register reply still says protocol 0.11: re-stamp it below
        # A server that accepts the login but speaks protocol 0.12: rewrite the protocol too.
        orig = proxy._rewrite

        def rewrite(frame):
            frame = orig(frame)
            if frame[COMMAND_AT] == COMMAND_REPLY and frame[REP_OP_AT] == OP_REGISTER and len(frame) > HEADER + 20:
                f = bytearray(frame)
                struct.pack_into("<I", f, HEADER + 16, 12 << 10)
                return bytes(f)
            return frame

        proxy._rewrite = rewrite
        proxy.drop_all()
        deadline = time.time() + 30
        while time.time() < deadline:
            status, _, body = http_get(bridge, "/readyz")
            if status == 503 and "not supported" in body:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"readiness never named the unsupported server: {status} {body}")
        assert "0.12.0" in body and "0.10.0" in body, body
        samples, _ = scrape(bridge)
        assert value(samples, "kib_iggy_unsupported_server") == 1
        n = len(proxy.conns)
        time.sleep(1)
        assert len(proxy.conns) == n, "the bridge kept logging in to an unsupported server"
        assert bridge.alive()
    finally:
        proxy.close()
