"""An idempotent producer's retry of a batch whose Iggy send was stored, but whose reply never
reached the bridge, is answered as a duplicate and not stored twice (issue 12, found by
tests/reliability: `kill -9` of iggy-server during confluent-kafka's idempotent produce left
two copies of acknowledged records).

A loopback proxy sits between the bridge and iggy-server and forwards Iggy's framed protocol
(256-byte header, frame size at byte 48, request operation at 176, reply operation at 208).
Armed, it lets the first SendMessages request through to Iggy, waits for Iggy's reply (the
messages are stored: the bridge's topics fsync every send), drops that reply and closes the
connection. The bridge sees a transport failure, cannot know whether the batch was stored, and
answers the Produce with a retriable error; the client retries the same batch (same producer
id, epoch, sequence). Before the fix the bridge appended the retry again: the partition then held
the first batch twice. Now it reads Iggy's high watermark and tail before the next idempotent
append to that partition (as after a restart) and answers the retry with the original offset.

The negative control (enable.idempotence=false) shows that the same cut duplicates the batch
without idempotence, as it would on a Kafka broker: the scenario really retries a stored batch.
"""
import socket, struct, threading, uuid
import pytest

from conftest import free_port
from test_idempotent_retry import consume_all, create_topic

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")

HEADER = 256
SIZE_AT, REQ_OP_AT, REP_OP_AT = 48, 176, 208
OP_SEND_MESSAGES = 160
N = 10


def _recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def _recv_frame(s):
    head = _recv_exact(s, HEADER)
    (size,) = struct.unpack_from("<I", head, SIZE_AT)
    return head + _recv_exact(s, size - HEADER)


def _close(s):
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()


class IggyReplyDropper:
    """Loopback proxy to iggy-server; once armed, drops the reply to one SendMessages."""

    def __init__(self, iggy_port):
        self.iggy_port = iggy_port
        self.port = free_port()
        self.lock = threading.Lock()
        self.armed = False
        self.dropped = 0
        self.sends_seen = 0
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self):
        with self.lock:
            self.armed = True

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(("127.0.0.1", self.iggy_port))
            conn = {"drop_reply": False}
            threading.Thread(target=self._upstream, args=(client, up, conn), daemon=True).start()
            threading.Thread(target=self._downstream, args=(client, up, conn), daemon=True).start()

    def _upstream(self, client, up, conn):
        try:
            while True:
                frame = _recv_frame(client)
                if frame[REQ_OP_AT] == OP_SEND_MESSAGES:
                    with self.lock:
                        self.sends_seen += 1
                        if self.armed:
                            self.armed = False
                            conn["drop_reply"] = True
                up.sendall(frame)
        except (OSError, ConnectionError):
            pass
        finally:
            _close(up)
            _close(client)

    def _downstream(self, client, up, conn):
        try:
            while True:
                frame = _recv_frame(up)
                if conn["drop_reply"] and frame[REP_OP_AT] == OP_SEND_MESSAGES:
                    with self.lock:
                        self.dropped += 1
                    break  # Iggy stored the batch; the bridge never hears of it
                client.sendall(frame)
        except (OSError, ConnectionError):
            pass
        finally:
            _close(up)
            _close(client)

    def close(self):
        self.listener.close()


def produce_one_at_a_time(port, topic, idempotence):
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{port}", "enable.idempotence": idempotence,
                     "acks": "all", "linger.ms": 0, "retry.backoff.ms": 100, "message.timeout.ms": 60000})
    offsets, errors = {}, []

    def report(err, msg):
        if err is None:
            offsets[msg.value().decode()] = msg.offset()
        else:
            errors.append(str(err))

    for i in range(N):
        p.produce(topic, f"v-{i}".encode(), partition=0, on_delivery=report)
        assert p.flush(60) == 0
    return offsets, errors


@pytest.fixture
def cut_bridge(bridge_factory, iggy):
    proxy = IggyReplyDropper(iggy.port)
    bridge = bridge_factory(iggy_address=f"127.0.0.1:{proxy.port}").start().wait_ready()
    yield bridge, proxy
    proxy.close()


def test_an_idempotent_retry_of_a_send_iggy_stored_is_answered_as_a_duplicate(cut_bridge):
    bridge, proxy = cut_bridge
    topic = "reply-lost-" + uuid.uuid4().hex[:8]
    create_topic(bridge.port, topic)
    proxy.arm()
    offsets, errors = produce_one_at_a_time(bridge.port, topic, idempotence=True)
    assert proxy.dropped == 1, "the proxy never dropped a SendMessages reply: the scenario did not happen"
    assert not errors
    stored = consume_all(bridge.port, topic)
    values = [v for _, v in stored]
    assert values == [f"v-{i}" for i in range(N)], f"partition holds {values}"
    assert offsets == {f"v-{i}": i for i in range(N)}
    assert "append to " + topic in bridge.read_log()  # the send failure was logged


def test_negative_control_without_idempotence_the_same_cut_stores_the_batch_twice(cut_bridge):
    bridge, proxy = cut_bridge
    topic = "reply-lost-plain-" + uuid.uuid4().hex[:8]
    create_topic(bridge.port, topic)
    proxy.arm()
    offsets, errors = produce_one_at_a_time(bridge.port, topic, idempotence=False)
    assert proxy.dropped == 1
    assert not errors
    values = [v for _, v in consume_all(bridge.port, topic)]
    assert values == ["v-0", "v-0"] + [f"v-{i}" for i in range(1, N)], f"partition holds {values}"
