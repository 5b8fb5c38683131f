"""Issue 31, finding 4: SASL/PLAIN logins flooded before authentication.

A PLAIN check is a PBKDF2 hash (thousands of HMACs) on libuv's thread pool. Before the fix every
attempt queued one, unbounded, and a queued check outlived its connection holding the password
it was sent (up to ~512 KiB): 2,000 attempts in 1.1 s made a legitimate PLAIN login take 5 s,
and 900 attempts with 500 KB passwords took the bridge's RSS from 21 MB to 403 MB.

Asserted: at most [sasl] max_pending_password_checks checks are under way and the rest are
refused at once (SASL_AUTHENTICATION_FAILED, counted in kib_sasl_password_checks_total
{result="refused"}, logged); checks whose connection closed are dropped unhashed
({result="dropped"}); a legitimate login right after the flood completes within a second; RSS
stays within the bound's worth of passwords; other clients keep their latency."""
import multiprocessing, os, select, socket, struct, time, urllib.request

import pytest

from hostile import assert_serves_others, probe_latencies
from harness.kafka_wire import recv_frame, request
from harness.kafka_wire.sasl import SaslConn, plain, sasl_authenticate_body, sasl_handshake_body
from test_amplification import with_http
from test_hostile_pending_answers import metrics_text, sample
from test_sasl import SASL_AUTHENTICATION_FAILED, sasl_factory  # noqa: F401  (a fixture)

MAX_PENDING = 16


@pytest.fixture
def plain_bridge(sasl_factory):
    b = sasl_factory(f'[sasl]\nenabled_mechanisms = ["PLAIN", "SCRAM-SHA-256"]\n'
                     f'max_pending_password_checks = {MAX_PENDING}\n'
                     f'[limits]\nmax_connections_per_ip = 5000\nfailed_authentication_delay_ms = 0\n')
    with_http(b)
    b.add_user("alice", "PLAIN", "alice-secret")
    return b.start()


def handshake_frame(corr):
    return request(17, 1, corr, sasl_handshake_body("PLAIN"))


def authenticate_frame(corr, token):
    return request(36, 1, corr, sasl_authenticate_body(token, 1))


class Flood:
    """`parallel` connections, each sending SaslHandshake and a PLAIN SaslAuthenticate with a wrong
    password, then reading until the bridge answers and closes (or, with close_early, closing as
    soon as the handshake is answered, so the check's connection is gone before its turn)."""

    def __init__(self, port, password_bytes=16, close_early=False):
        self.port = port
        self.token = plain("", "alice", "x" * password_bytes)
        self.close_early = close_early
        self.attempts = self.refused = self.failed = 0

    def _open(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.setblocking(False)
        data = handshake_frame(1) + authenticate_frame(2, self.token)
        return {"sock": s, "out": memoryview(data), "in": b"", "frames": 0}

    def run(self, attempts, parallel=64, seconds=30):
        conns = [self._open() for _ in range(min(parallel, attempts))]
        started = len(conns)
        deadline = time.time() + seconds
        while conns and time.time() < deadline:
            r, w, _ = select.select([c["sock"] for c in conns], [c["sock"] for c in conns if c["out"]], [], 0.5)
            done = []
            for c in conns:
                s = c["sock"]
                if s in w and c["out"]:
                    try:
                        n = s.send(c["out"])
                        c["out"] = c["out"][n:]
                    except BlockingIOError:
                        pass
                if s in r:
                    try:
                        chunk = s.recv(65536)
                    except BlockingIOError:
                        continue
                    except ConnectionResetError:
                        chunk = b""
                    if not chunk:
                        done.append(c)
                        continue
                    c["in"] += chunk
                    while len(c["in"]) >= 4:
                        (n,) = struct.unpack(">i", c["in"][:4])
                        if len(c["in"]) < 4 + n:
                            break
                        frame, c["in"] = c["in"][4:4 + n], c["in"][4 + n:]
                        c["frames"] += 1
                        if c["frames"] == 1 and self.close_early and not c["out"]:
                            done.append(c)
                        elif c["frames"] == 2:
                            (err,) = struct.unpack_from(">h", frame, 4)
                            self.failed += 1
                            if err == SASL_AUTHENTICATION_FAILED and b"too many logins" in frame:
                                self.refused += 1
            for c in done:
                if c in conns:
                    conns.remove(c)
                    c["sock"].close()
                    self.attempts += 1
                    if started < attempts:
                        conns.append(self._open())
                        started += 1
        for c in conns:
            c["sock"].close()


def flood_for(port, attempts, parallel):
    Flood(port).run(attempts, parallel=parallel)


def timed_login(port, password="alice-secret"):
    t0 = time.perf_counter()
    conn = SaslConn(port)
    try:
        err, _ = conn.handshake("PLAIN")
        assert err == 0
        err, msg, _, _ = conn.authenticate(plain("", "alice", password))
        return err, msg, time.perf_counter() - t0
    finally:
        conn.close()


def test_a_plain_flood_is_bounded_and_a_legitimate_login_right_after_it_is_quick(plain_bridge):
    b = plain_bridge
    err, _, idle_login = timed_login(b.sasl_port)
    assert err == 0
    idle = probe_latencies(b.port)
    # The review's burst: 2,000 attempts as fast as they go, each connection closed once its
    # password was sent (before the fix each queued a hash that outlived it).
    flood = Flood(b.sasl_port, close_early=True)
    t0 = time.time()
    flood.run(2000, parallel=200)
    flood_s = time.time() - t0
    # Right after the burst a real login waits for at most MAX_PENDING hashes (two at a time),
    # not for thousands: the checks of closed connections are dropped, the rest refused. The
    # login may still find the burst's last checks counted (the bridge reads the closes of the
    # burst's connections in no set order, and a check already hashing runs to its end): it is
    # then told "too many logins under way, retry later", and retried it must get in within the
    # same bound (a clean-clone CI run of 2026-12-07 saw the first try refused).
    t0 = time.perf_counter()
    tries = 0
    while True:
        err, msg, _ = timed_login(b.sasl_port)
        tries += 1
        after = time.perf_counter() - t0
        if err == 0 or "too many logins" not in (msg or "") or after >= 1.0:
            break
        time.sleep(0.05)
    assert err == 0, "%s (after %d tries, %.2f s)" % (msg, tries, after)
    assert after < 1.0, "login took %.2f s after %d attempts in %.1f s" % (after, flood.attempts, flood_s)
    assert flood.attempts >= 2000
    m = metrics_text(b)
    dropped = sample(m, "kib_sasl_password_checks_total", 'result="dropped"')
    checked = sample(m, "kib_sasl_password_checks_total", 'result="checked"')
    refused = sample(m, "kib_sasl_password_checks_total", 'result="refused"')
    assert dropped > 0, m
    assert checked + refused + dropped >= 2000
    assert sample(m, "kib_sasl_password_checks_pending") <= MAX_PENDING
    # Attempts that wait for their answer: past the bound they are refused at once.
    waiting = Flood(b.sasl_port)
    waiting.run(500, parallel=200)
    m = metrics_text(b)
    assert waiting.refused > 0 and waiting.failed >= 500
    assert sample(m, "kib_sasl_password_checks_total", 'result="refused"') == refused + waiting.refused
    assert "password checks under way ([sasl] max_pending_password_checks)" in b.read_log()
    # And while a flood runs (from another process: a thread would hold the probe behind the
    # interpreter lock), others on the PLAINTEXT listener keep their pace.
    flooder = multiprocessing.Process(target=flood_for, args=(b.sasl_port, 1500, 100))
    flooder.start()
    time.sleep(0.3)
    during = probe_latencies(b.port)
    flooder.join(120)
    assert_serves_others(idle, during, "PLAIN flood")
    print("login idle %.1f ms, after 2,000 attempts in %.2f s: %.1f ms; dropped %d, checked %d, refused %d" %
          (idle_login * 1e3, flood_s, after * 1e3, dropped, checked, refused))


def test_checks_of_closed_connections_are_dropped_and_big_passwords_do_not_pile_up(plain_bridge):
    """900 attempts with 500 KB passwords whose connections close before their turn: the bridge
    holds at most the bound's worth of passwords, and the checks are dropped unhashed."""
    b = plain_bridge
    base_kb = b.rss_kb()
    flood = Flood(b.sasl_port, password_bytes=500_000, close_early=True)
    flood.run(900, parallel=16)
    growth = (b.vm_hwm_kb() - base_kb) << 10
    # Per check under way: the password and the frame it came in (~1 MB), the bound's worth;
    # plus what 16 connections receiving a 500 KB frame hold at once, and the allocator's slack.
    allowance = MAX_PENDING * (1 << 20) + 16 * (1 << 20) + (32 << 20)
    assert growth <= allowance, "peak RSS grew by %.0f MiB" % (growth / 2**20)
    m = metrics_text(b)
    deadline = time.time() + 10
    while sample(m, "kib_sasl_password_checks_pending") != 0 and time.time() < deadline:
        time.sleep(0.2)
        m = metrics_text(b)
    assert sample(m, "kib_sasl_password_checks_total", 'result="dropped"') > 0, m
    # Fewer were hashed than were sent: the closed ones were not.
    assert sample(m, "kib_sasl_password_checks_total", 'result="checked"') < 900
    err, msg, _ = timed_login(b.sasl_port)
    assert err == 0, msg
    print("RSS growth %.1f MiB" % (growth / 2**20))
