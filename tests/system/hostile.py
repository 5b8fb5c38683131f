"""What every hostile test (tests/system/test_hostile_*.py) asserts besides its own bound: the
bridge keeps serving other clients while the attack runs, within 2x their idle p99.

A probe is a well-behaved client on its own connection that sends ApiVersions v0 and waits for
each answer. Its p99 is measured once before the attack (idle) and once while it runs; the
second must stay within 2x the first. The idle p99 counts as at least IDLE_FLOOR_S: on this
project's 2-core machines a loopback round trip to an idle bridge is ~0.1 ms, and below a
couple of milliseconds the scheduler (the attacking process, the probe, the bridge and, in CI,
whatever else the tier runs share two cores) decides more than the bridge does: two clean-clone
CI runs each had one probe at a p99 of 2.47-2.48 ms against a 2.00 ms bound, in different
tests, on requests the attacks do not touch, and the same test passed alone. The floor of 2 ms
(a 4 ms bound) still separates an unbounded bridge by far: before the hostile-client fixes the
probe's p99 under attack was 227 ms and a DescribeConfigs flood stalled it for 7.8 s.
"""
import socket, ssl, struct, time

from harness.kafka_wire import api_versions_request, recv_frame

IDLE_FLOOR_S = 0.002


def _connect(port, tls_context=None, host="127.0.0.1", timeout=10.0):
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if tls_context is not None:
        s = tls_context.wrap_socket(s, server_hostname="localhost")
    return s


WARMUP = 10


def probe_latencies(port, n=300, tls_context=None, connect=None, pause_s=0.002):
    """Round trips of `n` ApiVersions v0 requests on one fresh connection (seconds each), after
    WARMUP more that are not counted (a new connection's first answers wait for its TLS tickets,
    the allocator and the caches). `connect`: a function returning a ready socket (e.g. one that
    has authenticated), else a plain (or TLS) connection to `port`."""
    sock = connect() if connect else _connect(port, tls_context)
    out = []
    try:
        for i in range(n + WARMUP):
            t0 = time.perf_counter()
            sock.sendall(api_versions_request(0, 1000 + i))
            frame = recv_frame(sock)
            out.append(time.perf_counter() - t0)
            (corr,) = struct.unpack_from(">i", frame, 0)
            assert corr == 1000 + i, "answer out of order"
            time.sleep(pause_s)
    finally:
        sock.close()
    return out[WARMUP:]


def p99(samples):
    s = sorted(samples)
    return s[min(len(s) - 1, int(len(s) * 0.99))]


def assert_serves_others(idle, during, what=""):
    """`idle`, `during`: latency lists from probe_latencies. Returns (idle p99, during p99)."""
    i, d = p99(idle), p99(during)
    bound = 2 * max(i, IDLE_FLOOR_S)
    assert d <= bound, "%s: probe p99 %.2f ms under attack, idle p99 %.2f ms (bound %.2f ms)" % (
        what, d * 1e3, i * 1e3, bound * 1e3)
    return i, d
