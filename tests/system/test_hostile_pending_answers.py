"""Issue 31, finding 1: clients that pipeline requests and never read their answers.

16 connections per listener kind (PLAINTEXT, SASL_PLAINTEXT, SSL with client_auth "required",
SASL_SSL), each with a 4 KiB receive buffer, send ApiVersions v0 as fast as the bridge reads
them (each ~20-byte request gets a ~400-byte answer) and read nothing. Before the fix the bridge
kept reading until 64 MiB of answers per connection were queued, each answer in its own write
request (~2.3x its bytes in memory): 16 such connections took its RSS to 2.4 GB in 8.5 s.

Asserted: the bridge's peak RSS grows by no more than [limits] max_pending_response_bytes_total
(plus a fixed allowance for the connections themselves), the pauses are counted in
kib_connection_read_pauses_total and logged, connections before authentication hold one
request at a time, and a well-behaved client on each listener kind keeps its latency (2x its
idle p99, tests/system/hostile.py)."""
import errno, os, re, select, shutil, socket, ssl, time, urllib.request

import pytest

from conftest import free_port
from hostile import assert_serves_others, probe_latencies
from harness.kafka_wire import api_versions_request, connect, recv_frame
from test_amplification import wait_for
from test_tls import Pki

TOTAL_BOUND = 32 << 20
# What the attack's connections hold whatever the bound: per connection the read chunk, TLS
# buffers and the slot deque; and the allocator's slack.
ALLOWANCE = 32 << 20
CONNECTIONS = 16
ATTACK_SECONDS = 8.5


def metrics_text(b):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % b.http_port, timeout=10) as r:
        return r.read().decode()


def sample(text, name, labels=""):
    key = "%s{%s}" % (name, labels) if labels else name
    m = re.search(r"^%s (\S+)$" % re.escape(key), text, re.M)
    return float(m.group(1)) if m else 0.0


@pytest.fixture
def four_listeners(bridge_factory, workdir):
    """A bridge with PLAINTEXT (port), SASL_PLAINTEXT, SSL (client_auth required) and SASL_SSL
    listeners, the total bound at TOTAL_BOUND and the per-connection bound at 64 MiB (the old
    default, so the total bound is what holds)."""
    if not shutil.which("openssl"):
        pytest.skip("SKIPPED: no openssl command")
    d = os.path.join(workdir, "pki")
    os.mkdir(d)
    pki = Pki(d)
    cert, key = pki.issue("server", "/CN=localhost/O=one", server=True)
    b = bridge_factory(extra_toml=(
        f'[tls]\ncertificate_file = "{cert}"\nkey_file = "{key}"\nca_file = "{pki.ca}"\n'
        f'client_auth = "required"\n'
        f'[limits]\nmax_pending_response_bytes = {64 << 20}\n'
        f'max_pending_response_bytes_total = {TOTAL_BOUND}\n'))
    b.sasl_port, b.ssl_port, b.sasl_ssl_port = free_port(), free_port(), free_port()
    b.http_port = free_port()
    with open(b.config) as f:
        text = f.read()
    text = text.replace(f'listeners = ["127.0.0.1:{b.port}"]',
                        f'listeners = ["PLAINTEXT://127.0.0.1:{b.port}", '
                        f'"SASL_PLAINTEXT://127.0.0.1:{b.sasl_port}", "SSL://127.0.0.1:{b.ssl_port}", '
                        f'"SASL_SSL://127.0.0.1:{b.sasl_ssl_port}"]')
    text = text.replace('[http]\nlisten = ""', f'[http]\nlisten = "127.0.0.1:{b.http_port}"')
    with open(b.config, "w") as f:
        f.write(text)
    b.pki = pki
    b.client_cert = pki.issue("mallory", "/CN=mallory", server=False)
    return b.start()


class Attacker:
    """Connections that pipeline ApiVersions v0 and never read: each keeps one chunk of requests
    ready and sends what the bridge reads, waiting in select() while the bridge reads nothing."""

    CHUNK = b"".join(api_versions_request(0, i) for i in range(1000))

    def __init__(self, port, n, tls_context=None):
        self.socks = []
        for _ in range(n):
            raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            raw.settimeout(10)
            raw.connect(("127.0.0.1", port))
            s = tls_context.wrap_socket(raw, server_hostname="localhost") if tls_context else raw
            s.setblocking(False)
            self.socks.append(s)
        self.left = {s: memoryview(self.CHUNK) for s in self.socks}
        self.sent = 0

    def run(self, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            _, writable, _ = select.select([], self.socks, [], 0.05)
            for s in writable:
                buf = self.left[s]
                try:
                    n = s.send(buf)
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError, BlockingIOError):
                    continue
                except OSError as e:
                    if e.errno in (errno.EPIPE, errno.ECONNRESET):
                        self.socks.remove(s)
                        continue
                    raise
                self.sent += n
                self.left[s] = buf[n:] if n < len(buf) else memoryview(self.CHUNK)

    def close(self):
        for s in self.socks:
            s.close()


def client_context(b, cert=True):
    ctx = ssl.create_default_context(cafile=b.pki.ca)
    if cert:
        ctx.load_cert_chain(*b.client_cert)
    return ctx


def test_clients_that_never_read_their_answers_take_no_more_than_the_total_bound(four_listeners):
    b = four_listeners
    tls = client_context(b)
    probes = {"PLAINTEXT": (b.port, None), "SASL_PLAINTEXT": (b.sasl_port, None), "SSL": (b.ssl_port, tls),
              "SASL_SSL": (b.sasl_ssl_port, tls)}
    idle = {k: probe_latencies(port, tls_context=ctx) for k, (port, ctx) in probes.items()}
    base_kb = b.rss_kb()
    attackers = [Attacker(port, CONNECTIONS, ctx) for port, ctx in probes.values()]
    try:
        start = time.time()
        for a in attackers:  # each gets its share of the time, over and over
            a.run(0.5)
        while time.time() - start < ATTACK_SECONDS:
            for a in attackers:
                a.run(0.25)
        # The bound holds now the connections are parked at it: every listener's client still
        # gets its answers at its idle pace, while the attack's connections stay open.
        for kind, (port, ctx) in probes.items():
            assert_serves_others(idle[kind], probe_latencies(port, tls_context=ctx), kind)
        growth = (b.vm_hwm_kb() - base_kb) << 10
        sent = sum(a.sent for a in attackers)
        print("RSS growth %.1f MiB, %d bytes of requests sent" % (growth / 2**20, sent))
        assert sent > 1 << 20, "the attack sent only %d bytes" % sent
        assert growth <= TOTAL_BOUND + ALLOWANCE, (
            "peak RSS grew by %.1f MiB under the attack (bound %d MiB + %d MiB allowance)" %
            (growth / 2**20, TOTAL_BOUND >> 20, ALLOWANCE >> 20))
        m = metrics_text(b)
        assert sample(m, "kib_connection_read_pauses_total", 'reason="pending_answers_total"') > 0, m
        assert sample(m, "kib_pending_response_bytes") <= TOTAL_BOUND + (CONNECTIONS * 4 << 10)
        assert "answers pending in all" in b.read_log()
    finally:
        for a in attackers:
            a.close()
    # Once the attackers are gone the bridge answers as before and lets the memory go.
    with connect(b.port) as s:
        s.sendall(api_versions_request(0, 7))
        assert recv_frame(s)[:4] == b"\x00\x00\x00\x07"
    wait_for("pending answers released", lambda: sample(metrics_text(b), "kib_pending_response_bytes") == 0, 10)


def test_before_authentication_a_connection_holds_one_request_at_a_time(four_listeners):
    """On a SASL listener a connection that has not authenticated gets its next request read
    only once the previous answer is written: 1,000 pipelined ApiVersions from a client that
    does not read leave at most one answer queued in the bridge."""
    b = four_listeners
    base_kb = b.rss_kb()
    a = Attacker(b.sasl_port, 1)
    try:
        a.run(3)
        m = metrics_text(b)
        # Whatever the kernel buffers hold, the bridge holds nothing for this connection beyond
        # one answer being written (before the fix: up to the 64 MiB per-connection bound).
        assert "kib_pending_response_bytes " in m
        assert sample(m, "kib_pending_response_bytes") <= 4096
        assert (b.vm_hwm_kb() - base_kb) << 10 < 8 << 20
        # And it was never paused for pending answers: it never got as far as queuing two.
        assert sample(m, "kib_connection_read_pauses_total", 'reason="pending_answers"') == 0
    finally:
        a.close()
