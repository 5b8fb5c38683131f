"""Hostile: a TLS session made on one listener offered to another (docs/security.md "TLS").

A client without a certificate is served on a SASL_SSL listener (no certificate is asked for
there: SASL authenticates) and keeps its session (a TLS 1.3 ticket, a TLS 1.2 ticket or a TLS
1.2 session id). It then offers that session to the SSL listener beside it, whose client_auth
is "required". Were the session resumed, the client would skip the certificate request and be
served as User:ANONYMOUS. Each listener has a TLS context of its own (session cache, ticket
keys, session id context): the session does not resume there, the full handshake asks for the
certificate, and the connection closes without any Kafka answer, logged and counted. A client
with a certificate still resumes its own sessions on the SSL listener. No Iggy is needed: the
bridge answers ApiVersions and Metadata without it.
"""
import multiprocessing
import os
import re
import signal
import socket
import ssl
import time
import types

import pytest

from conftest import free_port
from hostile import assert_serves_others, probe_latencies
from harness.kafka_wire import api_versions_request, metadata_v4
from test_metrics import scrape, value
from test_tls import api_versions, client_context, metadata_brokers, pki, tls_bridge, tls_connect, wait_log  # noqa: F401

ATTEMPTS = 40      # at least, and until the probe has its samples
ATTEMPT_PAUSE_S = 0.02
# Each attempt is a full handshake the bridge refuses (~0.4 ms of its CPU on this machine): the
# probe takes enough samples (~1 s) that its p99 is not one unlucky turn on a shared core.
PROBE_SAMPLES = 400

# How a client keeps a session: (name, TLS version, whether it refuses tickets and so gets a
# session id the server caches).
KINDS = [
    ("tls13-ticket", ssl.TLSVersion.TLSv1_3, False),
    ("tls12-ticket", ssl.TLSVersion.TLSv1_2, False),
    ("tls12-session-id", ssl.TLSVersion.TLSv1_2, True),
]


def resumption_bridge(bridge_factory, pki):
    """Listeners PLAINTEXT (b.port), SSL with client_auth = "required" (b.ssl_port) and
    SASL_SSL (b.sasl_ssl_port), one certificate for both TLS listeners; /metrics on b.http_port."""
    b = tls_bridge(bridge_factory, pki, client_auth="required", http=True)
    # free_port() releases the port it found: the kernel may find the same one again.
    b.sasl_ssl_port = free_port()
    while b.sasl_ssl_port in (b.port, b.ssl_port, b.http_port):
        b.sasl_ssl_port = free_port()
    with open(b.config) as f:
        text = f.read()
    ssl_listener = f'"SSL://127.0.0.1:{b.ssl_port}"'
    assert ssl_listener in text
    text = text.replace(ssl_listener, f'{ssl_listener}, "SASL_SSL://127.0.0.1:{b.sasl_ssl_port}"')
    with open(b.config, "w") as f:
        f.write(text)
    return b.start()


def kind_context(pki, kind, cert=None):
    _, version, no_ticket = kind
    ctx = client_context(pki, cert)
    ctx.minimum_version = ctx.maximum_version = version
    if no_ticket:
        ctx.options |= ssl.OP_NO_TICKET
    return ctx


def session_from(port, ctx):
    """One ApiVersions round trip (a TLS 1.3 ticket arrives after the handshake: it has by the
    time the answer is read), then a clean close, so that the session stays resumable."""
    s = tls_connect(port, ctx)
    try:
        assert 18 in api_versions(s)
        session = s.session
        assert session is not None
        s = s.unwrap()
    finally:
        s.close()
    return session


def metadata_request(corr):
    return metadata_v4(corr, [], auto_create=False)


def offer(port, ctx, session):
    """Offers `session` to `port` and asks ApiVersions and Metadata at once. Returns (reused,
    outcome): outcome "refused" (the handshake failed), "closed" (the connection ended, no
    answer), "answered" (a Kafka answer came) or "silent" (neither, within the timeout)."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        try:
            s = ctx.wrap_socket(raw, server_hostname="localhost", session=session)
        except (ssl.SSLError, OSError):
            return False, "refused"
        try:
            reused = s.session_reused
            try:
                s.sendall(api_versions_request(3, 1) + metadata_request(2))
                data = s.recv(4)
            except socket.timeout:
                return reused, "silent"
            except (ssl.SSLError, OSError):
                return reused, "closed"
            return reused, ("answered" if data else "closed")
        finally:
            s.close()
    finally:
        raw.close()


def _attack(ca, kind, sasl_ssl_port, ssl_port, stop, out):
    """The attacker, in a process of its own so that the probe's latencies are the bridge's:
    spawned, not forked (a forked copy of this process would have the probe pay copy-on-write
    faults), and at the lowest priority, so that the client half of its handshakes does not
    take the probe's or the bridge's turn on the CPU (the bridge's work per attempt is the
    same). It takes its own session from the SASL_SSL listener and offers it to the SSL one."""
    os.nice(19)
    ctx = kind_context(types.SimpleNamespace(ca=ca), kind)
    session = session_from(sasl_ssl_port, ctx)
    out.send("ready")
    outcomes = []
    while not stop.is_set() or len(outcomes) < ATTEMPTS:
        outcomes.append(offer(ssl_port, ctx, session))
        time.sleep(ATTEMPT_PAUSE_S)
    out.send(outcomes)


def failures(b, reason):
    samples, _ = scrape(b)
    return value(samples, "kib_tls_handshake_failures_total", reason=reason)


@pytest.mark.parametrize("kind", KINDS, ids=[k[0] for k in KINDS])
def test_a_sasl_ssl_session_without_a_certificate_does_not_resume_on_the_ssl_listener(bridge_factory, pki, kind):
    b = resumption_bridge(bridge_factory, pki)
    alice = pki.issue("alice", "/O=Example/CN=alice", server=False)
    probe_ctx = client_context(pki, alice)
    anonymous = kind_context(pki, kind)
    session = session_from(b.sasl_ssl_port, anonymous)
    # The session is a good one: it resumes where it was made.
    reused, outcome = offer(b.sasl_ssl_port, anonymous, session)
    assert reused and outcome == "answered", (reused, outcome)
    before = failures(b, "no_client_certificate")

    idle = probe_latencies(b.ssl_port, n=PROBE_SAMPLES, tls_context=probe_ctx)
    mp = multiprocessing.get_context("spawn")
    stop = mp.Event()
    results, out = mp.Pipe(duplex=False)
    attacker = mp.Process(target=_attack, args=(pki.ca, kind, b.sasl_ssl_port, b.ssl_port, stop, out))
    attacker.start()
    try:
        assert results.poll(60) and results.recv() == "ready", "the attacker did not start"
        during = probe_latencies(b.ssl_port, n=PROBE_SAMPLES, tls_context=probe_ctx)
        stop.set()
        assert results.poll(120), "the attacker did not finish"
        outcomes = results.recv()
    finally:
        stop.set()
        attacker.join(30)
        if attacker.is_alive():
            attacker.kill()

    assert len(outcomes) >= ATTEMPTS
    assert [o for o in outcomes if o[0]] == [], "resumed on the SSL listener"
    assert [o for o in outcomes if o[1] not in ("refused", "closed")] == [], outcomes
    assert wait_log(b, "TLS handshake failed (no_client_certificate)"), b.read_log()
    assert failures(b, "no_client_certificate") - before == len(outcomes)
    assert_serves_others(idle, during, "resumption attempts on the SSL listener")
    # A client with its certificate is served on the SSL listener all along.
    with tls_connect(b.ssl_port, probe_ctx) as s:
        assert metadata_brokers(s) == [(1, "127.0.0.1", b.ssl_port)]
    assert b.alive()


@pytest.mark.parametrize("kind", KINDS, ids=[k[0] for k in KINDS])
def test_a_client_with_a_certificate_still_resumes_on_the_ssl_listener(bridge_factory, pki, kind):
    b = resumption_bridge(bridge_factory, pki)
    alice = pki.issue("alice", "/O=Example/CN=alice", server=False)
    ctx = kind_context(pki, kind, alice)
    session = session_from(b.ssl_port, ctx)
    for _ in range(3):
        raw = socket.create_connection(("127.0.0.1", b.ssl_port), timeout=10)
        with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as s:
            assert s.session_reused
            assert 18 in api_versions(s)
            assert metadata_brokers(s) == [(1, "127.0.0.1", b.ssl_port)]
    assert re.search(r"TLS handshake done: TLSv1\.[23] \S+, client certificate CN=alice,O=Example, principal "
                     r"User:CN=alice,O=Example", b.read_log())
    # The SSL listener's session is no more the SASL_SSL listener's than the other way round:
    # offered there it does not resume (a full handshake follows; SASL_SSL asks for no
    # certificate, so the client is served).
    reused, outcome = offer(b.sasl_ssl_port, ctx, session)
    assert (reused, outcome) == (False, "answered")
    assert "TLS handshake failed" not in b.read_log()


def test_after_sighup_every_listener_has_a_new_context_of_its_own(bridge_factory, pki):
    b = resumption_bridge(bridge_factory, pki)
    kind = KINDS[0]
    anonymous = kind_context(pki, kind)
    alice = pki.issue("alice", "/O=Example/CN=alice", server=False)
    with_cert = kind_context(pki, kind, alice)
    old_ssl_session = session_from(b.ssl_port, with_cert)
    b.proc.send_signal(signal.SIGHUP)
    assert wait_log(b, "SIGHUP: [tls] reloaded"), b.read_log()
    # A session from before the reload meets new ticket keys: a full handshake, still served.
    reused, outcome = offer(b.ssl_port, with_cert, old_ssl_session)
    assert (reused, outcome) == (False, "answered")
    # After it, as before: SASL_SSL sessions do not resume on the SSL listener, SSL ones do.
    session = session_from(b.sasl_ssl_port, anonymous)
    reused, outcome = offer(b.ssl_port, anonymous, session)
    assert not reused and outcome in ("refused", "closed"), (reused, outcome)
    session = session_from(b.ssl_port, with_cert)
    reused, outcome = offer(b.ssl_port, with_cert, session)
    assert (reused, outcome) == (True, "answered")
    assert b.alive()
