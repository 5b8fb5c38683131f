"""A retried batch (network cut after the append, before the response) is not duplicated with the
idempotent Java producer, including across a bridge restart (docs/durability.md, "Retries").

A loopback proxy sits between the Java producer (kafka-clients 4.1, tests/system/java/
RetryProducer.java) and the bridge. The bridge advertises the proxy's port in Metadata
([kafka] advertised_port), so every client connection goes through it. The proxy forwards bytes
and parses Kafka frames: client→bridge it notes the correlation ids of Produce requests (and the
producer id, epoch and base sequence of their batches); bridge→client it drops the FIRST Produce
response and closes that client connection, once. The bridge has appended the batch by then, so
the client's retry is the case under test.

With restart=True the proxy also holds every new client connection at accept until the test has
killed the bridge with SIGKILL (after the bridge answered everything it was sent on the cut
connection) and started it again on the same port and state file.

The negative control (enable.idempotence=false, acks=1) shows that the same cut does duplicate the
batch without idempotence, which is also what a Kafka broker does: it proves the scenario really
retries an appended batch.

What the Java 4.1 client does (observed, and asserted through the proxy's parse of the Produce
requests): the cut fails every request in flight on that connection with NETWORK_EXCEPTION
("Disconnected from node 1"); it refreshes metadata, reconnects and re-sends each of those batches
unchanged: same producer id, same epoch (no bump), same base sequence and record count. The
bridge answers them as duplicates with their original offsets, also after a restart (it reloads
the last batches of each producer-partition from its state file: "producers: loaded 1
producer-partitions"). It logs nothing for a duplicate.

The restart in those tests happens after the bridge has answered, i.e. after it committed the
producer state to SQLite. The last test kills the bridge between Iggy's acknowledgement of an
append and that commit: the restarted bridge has no row for the batch, and finds it in the
partition's tail in Iggy instead (each idempotent record's Iggy message id carries its
producer id, epoch and sequence), so the client's retry is still a duplicate.
"""
import os, shutil, signal, socket, struct, subprocess, threading, time, uuid
import pytest
from conftest import ROOT
from harness.kafka_wire import Reader, recv_frame

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")

JAVA_LIB = os.path.join(ROOT, "tests", ".java", "lib")
JAVA_SRC = os.path.join(ROOT, "tests", "system", "java", "RetryProducer.java")
JAVA_CLASSES = os.path.join(ROOT, "tests", ".java", "classes-system")
JVM_FAST = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx256m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
            # Sender (retries) and TransactionManager (producer id / epoch) say what the client did
            "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.producer.internals=info"]
N = 20


# ---- Kafka frame parsing (harness/kafka_wire, independent of the bridge's codecs) ----

def parse_produce_request(payload):
    """payload = a request frame without its 4-byte size. Returns (acks, [(partition, producer_id,
    epoch, base_sequence, record_count)]) for Produce v3..v13."""
    r = Reader(payload)
    api_key, version, _corr = r.unpack("hhi")
    assert api_key == 0 and version >= 3, (api_key, version)
    r.raw(max(r.int16(), 0))  # client id
    r.flexible = version >= 9
    r.tags()  # request header v2
    r.string()  # transactional_id
    acks, _timeout = r.unpack("hi")
    batches = []
    for _ in range(r.length()):
        if version >= 13:
            r.uuid()
        else:
            r.string()
        for _ in range(r.length()):
            index = r.int32()
            records = r.nbytes() or b""
            b = 0
            while b + 61 <= len(records):
                (blen,) = struct.unpack_from(">i", records, b + 8)
                pid, epoch, seq, nrec = struct.unpack_from(">qhii", records, b + 43)
                batches.append((index, pid, epoch, seq, nrec))
                b += 12 + blen
            r.tags()
        r.tags()
    return acks, batches


def _read_frame(sock):
    """One size-prefixed Kafka frame (size included), or None at EOF / error."""
    try:
        payload = recv_frame(sock)
    except OSError:
        return None
    return struct.pack(">i", len(payload)) + payload


def _close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


class CutProxy:
    """client ⇄ proxy (127.0.0.1:port) ⇄ bridge (127.0.0.1:upstream_port), two threads per connection."""

    def __init__(self, hold_on_cut=False, cut_with_in_flight=1, cut_enabled=True):
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.upstream_port = None
        self.hold_on_cut = hold_on_cut
        # The first Produce response is held until this many Produce requests of its connection
        # are unanswered (at most 5 s), so a pipelining client has several in flight at the cut.
        self.cut_with_in_flight = cut_with_in_flight
        self.cut_enabled = cut_enabled  # False: a plain forwarding proxy (gate still works)
        self.gate = threading.Event()  # new connections wait for it before dialling the bridge
        self.gate.set()
        self.cut = threading.Event()  # the first Produce response was dropped
        self.drained = threading.Event()  # ... and the bridge answered every Produce of that connection
        self.lock = threading.Lock()
        self.dropped = None  # the batches of the Produce request whose response was dropped
        self.produce_log = []  # (connection number, correlation id, acks, batches), in send order
        self.connections = 0
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self):
        self.stopped = True
        _close(self.listener)

    def _accept(self):
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                n = self.connections
            threading.Thread(target=self._serve, args=(client, n), daemon=True).start()

    def _serve(self, client, n):
        if not self.gate.wait(60):
            return _close(client)
        try:
            up = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=10)
            up.settimeout(None)
        except OSError:
            return _close(client)
        for s in (client, up):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = {"produce": {}, "cut": False, "n": n}
        c2b = threading.Thread(target=self._client_to_bridge, args=(client, up, conn), daemon=True)
        c2b.start()
        self._bridge_to_client(up, client, conn, c2b)

    def _client_to_bridge(self, client, up, conn):
        while True:
            frame = _read_frame(client)
            if frame is None:
                break
            api_key, _ver, corr = struct.unpack_from(">hhi", frame, 4)
            if api_key == 0:
                acks, batches = parse_produce_request(frame[4:])
                with self.lock:
                    self.produce_log.append((conn["n"], corr, acks, batches))
                    if acks != 0:  # acks=0 has no response
                        conn["produce"][corr] = batches
            try:
                up.sendall(frame)
            except OSError:
                break
        if not conn["cut"]:
            _close(up)  # the client went away: so does its bridge connection

    def _bridge_to_client(self, up, client, conn, c2b):
        try:
            while True:
                frame = _read_frame(up)
                if frame is None:
                    break
                (corr,) = struct.unpack_from(">i", frame, 4)
                if self.cut_enabled and corr in conn["produce"] and not self.cut.is_set():
                    deadline = time.time() + 5
                    while len(conn["produce"]) < self.cut_with_in_flight and time.time() < deadline:
                        time.sleep(0.01)
                with self.lock:
                    batches = conn["produce"].pop(corr, None)
                    cut_now = self.cut_enabled and batches is not None and not self.cut.is_set()
                    if cut_now:
                        self.dropped = batches
                        conn["cut"] = True
                        if self.hold_on_cut:
                            self.gate.clear()  # before the client can reconnect
                        self.cut.set()
                if cut_now:
                    _close(client)  # the response is never sent: the network "failed" after the append
                    c2b.join(10)
                if conn["cut"]:
                    with self.lock:
                        if not conn["produce"]:
                            self.drained.set()  # responses of the cut connection are discarded
                            break
                    continue
                try:
                    client.sendall(frame)
                except OSError:
                    break
        finally:
            _close(up)
            _close(client)


# ---- helpers ----

def compile_producer():
    if not shutil.which("javac") or not os.path.isdir(JAVA_LIB):
        pytest.skip("SKIPPED: javac or the Kafka jars are missing (tools/fetch-kafka)")
    cls = os.path.join(JAVA_CLASSES, "RetryProducer.class")
    if os.path.exists(cls) and os.path.getmtime(cls) >= os.path.getmtime(JAVA_SRC):
        return
    os.makedirs(JAVA_CLASSES, exist_ok=True)
    jar = next(os.path.join(JAVA_LIB, f) for f in os.listdir(JAVA_LIB) if f.startswith("kafka-clients-"))
    p = subprocess.run(["javac", "-nowarn", "-d", JAVA_CLASSES, "-cp", jar, JAVA_SRC],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr


def start_producer(bootstrap, topic, idempotence, acks, mode):
    cp = JAVA_CLASSES + os.pathsep + os.path.join(JAVA_LIB, "*")
    return subprocess.Popen(["java", *JVM_FAST, "-cp", cp, "RetryProducer", bootstrap, topic, str(N),
                             "true" if idempotence else "false", acks, mode],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def producer_result(proc, timeout=150):
    out, err = proc.communicate(timeout=timeout)
    offsets = {}
    for line in out.splitlines():
        value, _, offset = line.partition(" ")
        offsets[value] = offset
    return proc.returncode, offsets, err


def create_topic(port, name):
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
    admin.create_topics([NewTopic(name, num_partitions=1, replication_factor=1)])[name].result(timeout=30)


def consume_all(port, topic, timeout=30):
    """(offset, value) of partition 0 from the beginning to its end (assign, no group use)."""
    c = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "unused-" + topic,
                     "enable.auto.commit": False, "enable.partition.eof": True})
    c.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])
    out, deadline = [], time.time() + timeout
    try:
        while time.time() < deadline:
            m = c.poll(1.0)
            if m is None:
                continue
            if m.error():
                if m.error().code() == ck.KafkaError._PARTITION_EOF:
                    break
                raise AssertionError(f"consume error: {m.error()}")
            out.append((m.offset(), m.value().decode()))
    finally:
        c.close()
    return out


def suspicious_log_lines(text):
    return [line for line in text.splitlines() if " warning " in line or " error " in line or " critical " in line]


def restart_same_port(bridge, before_start=None):
    """SIGKILL, then the same binary, config (port) and state file again; until it is ready."""
    readies = bridge.read_log().count("kafka-iggy-bridge ready")
    bridge.stop(signal.SIGKILL)
    if before_start:
        before_start()
    bridge.start()
    deadline = time.time() + 30
    while bridge.read_log().count("kafka-iggy-bridge ready") == readies:
        assert bridge.alive() and time.time() < deadline, "bridge not ready after restart:\n" + bridge.read_log()
        time.sleep(0.05)


def run_cut_scenario(bridge_factory, iggy, idempotence, acks, mode, restart):
    compile_producer()
    proxy = CutProxy(hold_on_cut=restart, cut_with_in_flight=3 if mode == "pipelined" else 1)
    b = bridge_factory(kafka_extra=f"advertised_port = {proxy.port}\n", iggy_address=iggy.address)
    proxy.upstream_port = b.port
    b.start().wait_ready()
    topic = "retry-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic)
    proc = start_producer(f"127.0.0.1:{proxy.port}", topic, idempotence, acks, mode)
    try:
        assert proxy.cut.wait(60), "no Produce response went through the proxy"
        if restart:
            # Everything the bridge was sent on the cut connection is appended and answered (the
            # answers went nowhere): the kill lands after the append, before the client saw it.
            assert proxy.drained.wait(30), "the bridge did not answer the Produce requests of the cut connection"
            restart_same_port(b)
            proxy.gate.set()
        rc, offsets, err = producer_result(proc)
        records = consume_all(b.port, topic)
    finally:
        proxy.gate.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proxy.stop()
    return dict(rc=rc, offsets=offsets, java_log=err, records=records, proxy=proxy, bridge=b)


def cut_connection_batches(proxy):
    """Every batch sent on the connection that was cut (the dropped one first), in send order."""
    dropped = set(proxy.dropped)
    cut_conn = next(n for n, _c, _a, batches in proxy.produce_log if set(batches) & dropped)
    return cut_conn, [b for n, _c, _a, batches in proxy.produce_log if n == cut_conn for b in batches]


def retried_same_identity(proxy):
    """Every batch sent on the cut connection (all unanswered there) was sent again on a later
    connection with the same producer id, epoch, base sequence and record count."""
    cut_conn, cut = cut_connection_batches(proxy)
    later = [b for n, _c, _a, batches in proxy.produce_log if n > cut_conn for b in batches]
    return set(cut) <= set(later), cut, later


# ---- tests ----

@pytest.mark.parametrize("restart", [False, True], ids=["no-restart", "bridge-restart"])
@pytest.mark.parametrize("mode", ["sync", "pipelined"])
def test_idempotent_retry_after_cut_is_not_duplicated(bridge_factory, iggy, mode, restart):
    r = run_cut_scenario(bridge_factory, iggy, idempotence=True, acks="all", mode=mode, restart=restart)
    diag = f"\njava stderr:\n{r['java_log'][-4000:]}\nbridge log tail:\n{r['bridge'].read_log()[-4000:]}"
    assert r["rc"] == 0, f"producer failed: {r['offsets']}" + diag
    # The client retried exactly what was cut, with its producer id, epoch and sequence unchanged.
    (pid, epoch) = {(b[1], b[2]) for b in r["proxy"].dropped}.pop()
    assert pid >= 0 and epoch >= 0
    # ... and never bumped its epoch or changed its producer id (no reset of sequences either).
    assert {(b[1], b[2]) for _n, _c, _a, bs in r["proxy"].produce_log for b in bs} == {(pid, epoch)}
    assert "Going to bump" not in r["java_log"] and "epoch 1" not in r["java_log"], diag
    ok, cut, later = retried_same_identity(r["proxy"])
    assert ok, f"batches of the cut connection {cut} not re-sent as they were; later batches: {later}" + diag
    if mode == "pipelined":
        assert len(cut) >= 3, f"expected several Produce requests in flight at the cut: {cut}"
    assert "retrying" in r["java_log"] and "NETWORK_EXCEPTION" in r["java_log"], diag
    # Every record once, in order: offsets 0..N-1 both as the producer was told and as stored.
    assert r["offsets"] == {f"v-{i}": str(i) for i in range(N)}, diag
    assert r["records"] == [(i, f"v-{i}") for i in range(N)], diag
    log = r["bridge"].read_log()
    assert suspicious_log_lines(log) == [], diag
    if restart:
        assert log.count("kafka-iggy-bridge ready") == 2
        assert "producers: loaded 1 producer-partitions" in log, diag


def test_without_idempotence_the_same_cut_duplicates_the_batch(bridge_factory, iggy):
    """Negative control: a plain producer (enable.idempotence=false, acks=1) retries the cut batch
    and it is appended twice, as it would be on a Kafka broker. This is what the tests above would
    see if the bridge did not deduplicate."""
    r = run_cut_scenario(bridge_factory, iggy, idempotence=False, acks="1", mode="sync", restart=False)
    diag = f"\njava stderr:\n{r['java_log'][-4000:]}\nbridge log tail:\n{r['bridge'].read_log()[-4000:]}"
    assert r["rc"] == 0, f"producer failed: {r['offsets']}" + diag
    assert {b[1:4] for b in r["proxy"].dropped} == {(-1, -1, -1)}  # no producer id: nothing to deduplicate on
    assert "retrying" in r["java_log"] and "NETWORK_EXCEPTION" in r["java_log"], diag
    # v-0 is stored twice: at offset 0 (whose answer was cut) and at 1 (the retry, which the
    # producer was told about); everything after it is shifted by one.
    assert r["records"] == [(0, "v-0")] + [(i + 1, f"v-{i}") for i in range(N)], diag
    assert r["offsets"] == {f"v-{i}": str(i + 1) for i in range(N)}, diag



def test_kill_between_iggy_append_and_state_commit_is_not_duplicated(bridge_factory, iggy):
    """The same retry, but the bridge dies after Iggy stored the batch and before the bridge
    committed its producer state (held back here by a write lock on the state file; the bridge
    waits up to its 5 s busy timeout)."""
    import asyncio, sqlite3
    sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")
    compile_producer()
    proxy = CutProxy(cut_enabled=False)
    b = bridge_factory(kafka_extra=f"advertised_port = {proxy.port}\n", iggy_address=iggy.address)
    proxy.upstream_port = b.port
    b.start().wait_ready()
    topic = "retry-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic)

    async def stored_count():
        c = sdk.IggyClient(iggy.address)
        await c.connect()
        await c.login_user("iggy", "iggy")
        return len(await c.poll_messages("kafka", topic, consumer=sdk.Consumer.Single("kib-retry-test"),
                                         polling_strategy=sdk.PollingStrategy.Offset(0), count=10,
                                         auto_commit=False, partition_id=0))

    lock = sqlite3.connect(b.state, timeout=5, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # the bridge's state writes wait behind this
    proc = start_producer(f"127.0.0.1:{proxy.port}", topic, True, "all", "sync")
    try:
        deadline = time.time() + 20
        while asyncio.run(stored_count()) == 0:  # v-0 is in Iggy; its answer waits for the state commit
            assert time.time() < deadline, "the first batch never reached Iggy"
            time.sleep(0.05)
        proxy.gate.clear()
        restart_same_port(b, before_start=lambda: (lock.execute("ROLLBACK"), lock.close()))
        proxy.gate.set()
        rc, offsets, err = producer_result(proc)
        records = consume_all(b.port, topic)
    finally:
        proxy.gate.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proxy.stop()
    assert rc == 0, err
    # Observed with the bridge as of this test: [(0, 'v-0'), (1, 'v-0'), (2, 'v-1'), ...] and the
    # producer told offset 1 for v-0; the bridge log says "producers: loaded 0 producer-partitions".
    assert records == [(i, f"v-{i}") for i in range(N)]
