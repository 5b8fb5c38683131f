"""Requests whose answers echo client input (issue 12, remote crash class): error messages and
member ids built from client strings are bounded before they reach an encoder, config numbers
that overflow are INVALID_CONFIG, and a failure inside a callback fails one request, never the
process. Also: client strings in log lines are escaped (terminal/log injection).

Each case asserts the bridge stays up and keeps serving another client."""
import socket, struct, threading, time
import pytest
from harness.kafka_wire import api_versions_request, connect, is_closed, parse_api_versions, recv_frame, request, string

CREATE_TOPICS, JOIN_GROUP = 19, 11
INVALID_CONFIG, MEMBER_ID_REQUIRED = 40, 79


def create_topics_v4(topics, validate_only=False, timeout_ms=30000):
    """topics: [(name, partitions, {config name: value})]."""
    body = struct.pack(">i", len(topics))
    for name, partitions, configs in topics:
        body += string(name) + struct.pack(">ih", partitions, -1) + struct.pack(">i", 0)  # no assignments
        body += struct.pack(">i", len(configs))
        for k, v in configs.items():
            body += string(k) + string(v)
    return body + struct.pack(">i?", timeout_ms, validate_only)


def parse_create_topics_v4(resp):
    """-> (corr, [(name, error_code, error_message)])"""
    corr, _throttle, n = struct.unpack_from(">iii", resp, 0)
    pos, out = 12, []
    for _ in range(n):
        (ln,) = struct.unpack_from(">h", resp, pos)
        name = resp[pos + 2:pos + 2 + ln].decode()
        pos += 2 + ln
        err, ml = struct.unpack_from(">hh", resp, pos)
        pos += 4
        msg = None
        if ml >= 0:
            msg = resp[pos:pos + ml].decode("utf-8", "replace")
            pos += ml
        out.append((name, err, msg))
    return corr, out


def join_group_v5(group, member_id="", session_timeout_ms=10000):
    body = string(group) + struct.pack(">ii", session_timeout_ms, 30000) + string(member_id)
    body += struct.pack(">h", -1)  # group_instance_id null
    body += string("consumer") + struct.pack(">i", 1) + string("range") + struct.pack(">i", 0)
    return body


def parse_join_group_v5(resp):
    """-> (corr, error_code, member_id)"""
    corr, _throttle, err, _gen = struct.unpack_from(">iihi", resp, 0)
    pos = 14
    for _ in range(2):  # protocol_name, leader
        (ln,) = struct.unpack_from(">h", resp, pos)
        pos += 2 + max(ln, 0)
    (ln,) = struct.unpack_from(">h", resp, pos)
    return corr, err, resp[pos + 2:pos + 2 + ln].decode("utf-8", "replace")


def assert_still_serving(bridge):
    assert bridge.alive(), bridge.read_log()
    with connect(bridge.port) as s:
        s.sendall(api_versions_request(0, 4242))
        corr, err, _ = parse_api_versions(recv_frame(s), 0)
        assert (corr, err) == (4242, 0)


def call(bridge, req, timeout=30.0):
    with connect(bridge.port, timeout=timeout) as s:
        s.sendall(req)
        return recv_frame(s)


# ---- bounded error messages, no Iggy needed (validate_only answers without creating) ----

def test_config_name_near_the_string_bound_gets_invalid_config_with_a_bounded_message(bridge):
    # "Unknown topic config name: " + a 32,760-byte name is 32,787 bytes: more than a Kafka STRING
    # holds. The response could not be encoded and the connection was closed instead.
    long_name = "x" * 32760
    req = request(CREATE_TOPICS, 4, 71, create_topics_v4([("ok-topic", 1, {}), ("bad-topic", 1, {long_name: "1"})],
                                                         validate_only=True))
    corr, topics = parse_create_topics_v4(call(bridge, req))
    assert corr == 71
    assert topics[0] == ("ok-topic", 0, None)
    name, err, msg = topics[1]
    assert (name, err) == ("bad-topic", INVALID_CONFIG)
    assert msg.startswith("Unknown topic config name: xxx") and len(msg.encode()) <= 1024, msg[:80]
    assert_still_serving(bridge)


def test_a_config_value_above_int64_is_invalid_config_not_an_internal_error(bridge):
    # std::stoll threw std::out_of_range for 19 digits above INT64_MAX.
    req = request(CREATE_TOPICS, 4, 72, create_topics_v4([("t-overflow", 1, {"retention.ms": "9999999999999999999"})],
                                                         validate_only=True))
    corr, topics = parse_create_topics_v4(call(bridge, req))
    assert corr == 72
    name, err, msg = topics[0]
    assert (name, err) == ("t-overflow", INVALID_CONFIG)
    assert "9999999999999999999" in msg and "retention.ms" in msg
    assert "internal error" not in bridge.read_log()
    assert_still_serving(bridge)


def test_a_huge_config_value_is_quoted_bounded(bridge):
    req = request(CREATE_TOPICS, 4, 73, create_topics_v4([("t-big", 1, {"retention.ms": "1" * 32000})],
                                                         validate_only=True))
    corr, topics = parse_create_topics_v4(call(bridge, req))
    name, err, msg = topics[0]
    assert (corr, name, err) == (73, "t-big", INVALID_CONFIG)
    assert len(msg.encode()) <= 1024
    assert_still_serving(bridge)


# ---- member ids built from client ids ----

def test_join_group_with_a_client_id_near_the_string_bound_is_answered(bridge):
    # Kafka's memberId is clientId + "-" + UUID: 32,750 + 37 bytes did not fit the response's
    # STRING, the encoder threw inside the group coordinator and JoinGroup was never answered.
    client_id = b"c" * 32750
    req = request(JOIN_GROUP, 5, 81, join_group_v5("g-long-client"), client_id=client_id)
    corr, err, member_id = parse_join_group_v5(call(bridge, req, timeout=15.0))
    assert (corr, err) == (81, MEMBER_ID_REQUIRED)
    assert member_id.startswith("ccc") and len(member_id) < 1024
    # The member joins with that id and the group works as usual.
    req = request(JOIN_GROUP, 5, 82, join_group_v5("g-long-client", member_id, session_timeout_ms=6000),
                  client_id=client_id)
    with connect(bridge.port, timeout=15.0) as s:
        s.sendall(req)
        s.settimeout(15.0)
        corr, err, joined_as = parse_join_group_v5(recv_frame(s))  # after group.initial.rebalance.delay.ms
    assert (corr, err, joined_as) == (82, 0, member_id)
    assert_still_serving(bridge)


# ---- log injection ----

def test_client_ids_and_group_ids_are_escaped_in_the_log(bridge):
    evil = b"evil\x1b[31m\nFORGED ERROR line\x07\xff"
    # An unsupported version: the close reason names the client id.
    with connect(bridge.port) as s:
        s.sendall(request(JOIN_GROUP, 99, 1, b"", client_id=evil))
        assert is_closed(s)
    # A group id with a newline reaches the coordinator's info lines.
    group = "grp\nINFO forged\x1b]0;title\x07"
    with connect(bridge.port, timeout=15.0) as s:
        # JoinGroup v3: no group_instance_id, and a new member is added at once.
        body = string(group) + struct.pack(">ii", 10000, 30000) + string("") + string("consumer")
        s.sendall(request(JOIN_GROUP, 3, 2, body + struct.pack(">i", 1) + string("range") + struct.pack(">i", 0)))
        deadline = time.time() + 10
        while time.time() < deadline and "preparing to rebalance" not in bridge.read_log():
            time.sleep(0.05)
    log = bridge.read_log()
    assert "client=evil\\x1b[31m\\x0aFORGED ERROR line\\x07\\xff" in log, log[-2000:]
    assert "group=grp\\x0aINFO forged\\x1b]0;title\\x07 preparing to rebalance" in log, log[-2000:]
    raw = open(bridge.log_path, "rb").read()
    assert b"\x1b" not in raw and b"\x07" not in raw and b"\xff" not in raw
    assert b"\nFORGED" not in raw and b"\nINFO forged" not in raw
    assert_still_serving(bridge)


# ---- against a real iggy-server: answers encoded inside Iggy completion callbacks ----

def test_create_topics_mixing_a_new_topic_and_a_huge_config_name_does_not_kill_the_bridge(bridge_on_iggy):
    # The new topic completes in an Iggy callback, which then encodes the whole response; the
    # 32,787-byte error message of the other topic threw std::length_error there: terminate.
    import uuid
    name = "guard-" + uuid.uuid4().hex[:8]
    req = request(CREATE_TOPICS, 4, 91, create_topics_v4([(name, 1, {}), ("bad-" + name, 1, {"y" * 32760: "1"})]))
    corr, topics = parse_create_topics_v4(call(bridge_on_iggy, req))
    assert corr == 91
    assert topics[0] == (name, 0, None)
    assert topics[1][:2] == ("bad-" + name, INVALID_CONFIG) and len(topics[1][2].encode()) <= 1024
    assert_still_serving(bridge_on_iggy)


class GatedProxy:
    """TCP proxy to `upstream` that holds every connection (reading nothing) until open()."""

    def __init__(self, upstream):
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.gate = threading.Event()
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.address = "127.0.0.1:%d" % self.srv.getsockname()[1]
        self.socks = []
        threading.Thread(target=self._accept, daemon=True).start()

    def open(self):
        self.gate.set()

    def close(self):
        self.srv.close()
        for s in self.socks:
            try:
                s.close()
            except OSError:
                pass

    def _accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            self.socks.append(c)
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        self.gate.wait()
        try:
            u = socket.create_connection(self.upstream)
        except OSError:
            c.close()
            return
        self.socks.append(u)

        def pipe(a, b):
            try:
                while True:
                    d = a.recv(65536)
                    if not d:
                        break
                    b.sendall(d)
            except OSError:
                pass
            for x in (a, b):
                try:
                    x.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        threading.Thread(target=pipe, args=(c, u), daemon=True).start()
        pipe(u, c)


def test_a_deferred_create_with_an_overflowing_config_value_is_invalid_config(bridge_factory, iggy):
    # A create that arrives while the catalog is still starting waits for it and is validated in
    # the Iggy callback that finishes the start: std::stoll's out_of_range ended the process.
    proxy = GatedProxy(iggy.address)
    try:
        b = bridge_factory(iggy_address=proxy.address).start()
        with connect(b.port, timeout=60.0) as s:
            s.sendall(request(CREATE_TOPICS, 4, 95, create_topics_v4(
                [("deferred-overflow", 1, {"retention.ms": "9999999999999999999"})])))
            time.sleep(0.5)  # the request is waiting for the catalog
            assert "kafka-iggy-bridge ready" not in b.read_log()
            proxy.open()
            s.settimeout(60.0)
            corr, topics = parse_create_topics_v4(recv_frame(s))
        assert corr == 95
        assert topics[0][:2] == ("deferred-overflow", INVALID_CONFIG)
        assert "9999999999999999999" in topics[0][2]
        b.wait_ready()
        assert_still_serving(b)
    finally:
        proxy.close()
