"""Issue 31, finding 9 (decided and documented in docs/security.md):

* a KIP-368 re-authentication that a client starts (SaslHandshake on an authenticated connection)
  and never finishes is held to [limits] authentication_timeout_ms, as a first authentication
  is; before, the connection stayed open, reading one request at a time, until the 10-minute
  idle timeout;
* a principal whose mapped Iggy user cannot log in ([principals] per_principal, a wrong password)
  gets TOPIC_AUTHORIZATION_FAILED on its Produce and Fetch, an error every client reports with
  the topic; before, its partitions were answered SASL_AUTHENTICATION_FAILED (58), a
  connection-level error no client expects there."""
import time, uuid

import pytest

from test_amplification import with_http
from hostile import assert_serves_others, probe_latencies
from harness.kafka_wire import is_closed
from test_hostile_pending_answers import metrics_text, sample
from harness.kafka_wire.sasl import SaslConn, ScramClient
from test_sasl import sasl_factory  # noqa: F401  (a fixture)

AUTH_TIMEOUT_MS = 1000


@pytest.fixture
def reauth_bridge(sasl_factory):
    b = sasl_factory(f'[sasl]\nconnections_max_reauth_ms = 60000\n'
                     f'[limits]\nauthentication_timeout_ms = {AUTH_TIMEOUT_MS}\n')
    with_http(b)
    b.add_user("alice", "SCRAM-SHA-256", "alice-secret")
    return b.start()


def scram(conn, user="alice", password="alice-secret"):
    err, _ = conn.handshake("SCRAM-SHA-256")
    assert err == 0
    c = ScramClient("SCRAM-SHA-256", user, password)
    err, msg, first, _ = conn.authenticate(c.first())
    assert err == 0, msg
    err, msg, _, lifetime = conn.authenticate(c.final(first))
    assert err == 0, msg
    return lifetime


def test_a_reauthentication_started_and_never_finished_is_closed_after_authentication_timeout_ms(reauth_bridge):
    b = reauth_bridge
    idle = probe_latencies(b.port)
    conn = SaslConn(b.sasl_port)
    assert scram(conn) == 60000
    assert conn.describe_cluster() == 0
    # Authenticated well within the deadline: the connection stays past it.
    time.sleep(AUTH_TIMEOUT_MS * 1.5 / 1000)
    assert conn.describe_cluster() == 0
    # A re-authentication starts and the client goes quiet.
    err, _ = conn.handshake("SCRAM-SHA-256")
    assert err == 0
    started = time.time()
    during = probe_latencies(b.port)
    assert is_closed(conn.sock, timeout=10)
    took = time.time() - started
    assert AUTH_TIMEOUT_MS / 1000 * 0.8 <= took <= AUTH_TIMEOUT_MS / 1000 + 2, took
    assert "re-authentication not completed within authentication_timeout_ms 1000" in b.read_log()
    m = metrics_text(b)
    assert sample(m, "kib_connections_closed_total", 'reason="authentication_timeout"') >= 1, m
    assert_serves_others(idle, during, "unfinished re-authentication")
    # A re-authentication that completes keeps the connection.
    conn = SaslConn(b.sasl_port)
    scram(conn)
    time.sleep(1.1)  # Kafka's minimum interval between re-authentications
    scram(conn)
    time.sleep(AUTH_TIMEOUT_MS * 1.5 / 1000)
    assert conn.describe_cluster() == 0
    conn.close()


def test_a_mapped_iggy_user_that_cannot_log_in_is_an_authorization_failure(bridge_factory, iggy):
    from test_principals import cli, create_topic, fetch_all, produce_one
    from confluent_kafka import KafkaError
    # Unmapped principals run as the [iggy] user: a record goes in before the mapping is made.
    # (The produced-batch cache is off: the fetch must poll Iggy as the mapped user.)
    b = bridge_factory('[principals]\niggy_identity = "per_principal"\nunmapped = "shared"\n'
                       'sync_iggy_permissions = false\n[limits]\nproduced_batch_cache_bytes = 0\n',
                       iggy_address=iggy.address).start().wait_ready()
    topic = "login-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic)
    assert produce_one(b.port, topic, b"before") is None
    # User:ANONYMOUS mapped to the [iggy] user with a wrong password.
    r = cli(b, "principals", "map", "User:ANONYMOUS", "--iggy-user", "iggy", "--password-file", "-",
            stdin="not-the-password\n")
    assert r.returncode == 0, r.stderr
    assert produce_one(b.port, topic, b"x") == KafkaError.TOPIC_AUTHORIZATION_FAILED
    _, err = fetch_all(b.port, topic)
    assert err == KafkaError.TOPIC_AUTHORIZATION_FAILED
