"""Hostile: /metrics read by whoever can reach the HTTP port.

The group ids and topic names a consumer group reads are what ListGroups and Metadata hide
from a principal without DESCRIBE on them; /metrics must not hand them to anyone who can open
a TCP connection. `[http] metrics_labels` ("auto" by default) leaves the labels naming them out
(each family summed over them, so totals stay true) unless the listener is on loopback or a
bearer token is required; `[http] metrics_bearer_token_file` makes /metrics ask for
`Authorization: Bearer <token>` (401 otherwise; /healthz and /readyz stay open). A burst of
unauthorized scrapes must not slow other clients (tests/system/hostile.py).
"""
import http.client, json, os, re, signal, socket, stat, subprocess, sys, time, uuid

import pytest

from conftest import bridge_bin, free_port
from hostile import assert_serves_others, probe_latencies

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not in the test venv")
try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # pragma: no cover - depends on the environment
    pytest.skip("SKIPPED: prometheus_client is not installed (pip install prometheus-client into .venv); "
                "these tests parse /metrics with its text-format parser", allow_module_level=True)


def own_address():
    """A non-loopback IPv4 address of this machine that a socket can bind, else None."""
    candidates = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.254.254.254", 9))  # UDP: nothing is sent, the kernel only picks a source address
            candidates.append(s.getsockname()[0])
    except OSError:
        pass
    try:
        candidates += subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        pass
    for ip in candidates:
        if ":" in ip or ip.startswith("127.") or ip == "0.0.0.0":
            continue
        try:
            with socket.socket() as s:
                s.bind((ip, 0))
            return ip
        except OSError:
            continue
    return None


OWN_IP = own_address()
# Where a non-loopback listener binds and where the test reaches it: the machine's own address,
# else every address ("auto" must count 0.0.0.0 as reachable from elsewhere too).
EXPOSED_LISTEN, EXPOSED_CONNECT = (OWN_IP, OWN_IP) if OWN_IP else ("0.0.0.0", "127.0.0.1")


def http_bridge(bridge_factory, listen_host, connect_host, http_toml="", **kw):
    """A bridge (not started) whose HTTP listener is on listen_host, with extra [http] keys."""
    b = bridge_factory(http_toml, **kw)
    b.http_port = free_port()
    b.http_host = connect_host
    with open(b.config) as f:
        text = f.read()
    text, n = re.subn(r'(\[http\]\s*\n\s*listen\s*=\s*)""', r'\g<1>"%s:%d"' % (listen_host, b.http_port), text)
    assert n == 1, "conftest's config no longer has [http] listen = \"\":\n" + text
    with open(b.config, "w") as f:
        f.write(text)
    return b


def get(b, path, headers=None, method="GET"):
    """(status, headers, body) of one request; http.client, so no proxy settings apply."""
    c = http.client.HTTPConnection(b.http_host, b.http_port, timeout=10)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.headers, r.read().decode()
    finally:
        c.close()


def wait_http(b, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if get(b, "/healthz")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError("HTTP listener not answering:\n" + b.read_log())


def samples_of(body):
    out = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())))


def label_sets(samples, name):
    return [dict(l) for (n, l) in samples if n == name]


def make_group(b):
    """A topic with 5 records, a group that committed offset 2 on it (lag 3) and one live
    member. Returns (topic, group, consumer): the caller closes the consumer."""
    topic, group = "secret-topic-" + uuid.uuid4().hex[:8], "secret-group-" + uuid.uuid4().hex[:8]
    bs = "127.0.0.1:%d" % b.port
    p = ck.Producer({"bootstrap.servers": bs, "acks": "all"})
    for i in range(5):
        p.produce(topic, value=b"v%d" % i, partition=0)
    assert p.flush(30) == 0
    committer = ck.Consumer({"bootstrap.servers": bs, "group.id": group, "enable.auto.commit": False})
    committer.commit(offsets=[ck.TopicPartition(topic, 0, 2)], asynchronous=False)
    committer.close()
    member = ck.Consumer({"bootstrap.servers": bs, "group.id": group, "enable.auto.commit": False,
                          "auto.offset.reset": "earliest"})
    member.subscribe([topic])
    deadline = time.time() + 30
    while not member.assignment() and time.time() < deadline:
        member.poll(0.2)
    assert member.assignment(), "the member never got its partition:\n" + b.read_log()
    return topic, group, member


def scrape_until(b, pred, timeout=20, headers=None):
    """Scrapes until pred(samples, body) holds; returns (samples, body) of the last scrape."""
    deadline = time.time() + timeout
    while True:
        status, _, body = get(b, "/metrics", headers)
        assert status == 200, body
        samples = samples_of(body)
        if pred(samples, body) or time.time() > deadline:
            return samples, body
        time.sleep(0.5)


def reload(b, **http_keys):
    """Sets [http] keys in the config file and sends SIGHUP; waits for the reload line."""
    with open(b.config) as f:
        text = f.read()
    for k, v in http_keys.items():
        text, n = re.subn(r'(?m)^%s = .*$' % k, '%s = %s' % (k, v), text)
        assert n == 1, (k, text)
    with open(b.config, "w") as f:
        f.write(text)
    before = b.read_log().count("configuration reloaded")
    b.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while time.time() < deadline and b.read_log().count("configuration reloaded") == before:
        time.sleep(0.1)
    assert b.read_log().count("configuration reloaded") > before, b.read_log()


# Unauthorized scrapes, one connection each, as fast as one process sends them, until terminated.
ATTACKER = r"""
import http.client, sys
host, port, n = sys.argv[1], int(sys.argv[2]), 0
while True:
    try:
        c = http.client.HTTPConnection(host, port, timeout=5)
        c.request("GET", "/metrics", headers={"Authorization": "Bearer guess-%d" % n})
        status = c.getresponse().status
        c.close()
        if status != 401:
            print("unexpected status", status, flush=True)
        n += 1
    except (OSError, http.client.HTTPException):
        pass  # above max_connections_per_ip: closed at accept, as it should be
"""


def write_token(path, token, mode=0o600):
    with open(path, "w") as f:
        f.write(token + "\n")
    os.chmod(path, mode)


def test_a_non_loopback_listener_names_no_group_or_topic_by_default_but_keeps_the_totals(bridge_factory, iggy):
    b = http_bridge(bridge_factory, EXPOSED_LISTEN, EXPOSED_CONNECT, 'metrics_labels = "auto"\n',
                    iggy_address=iggy.address).start().wait_ready()
    wait_http(b)
    topic, group, member = make_group(b)
    try:
        samples, body = scrape_until(b, lambda s, _: value(s, "kib_group_lag_sum") == 3)
        # Not a label, not a HELP text, not a substring anywhere.
        for secret in (topic, group, topic[-8:], group[-8:]):
            assert secret not in body, "%s leaked on %s:\n%s" % (secret, EXPOSED_LISTEN, body)
        # The families are there, summed over the labels left out.
        assert value(samples, "kib_group_lag") == 3
        assert value(samples, "kib_group_lag_sum") == 3
        assert value(samples, "kib_group_members") == 1
        assert label_sets(samples, "kib_group_lag") == [{}]
        assert value(samples, "kib_groups", state="Stable") == 1

        # "full" names them (SIGHUP applies it at once).
        reload(b, metrics_labels='"full"')
        samples, body = scrape_until(b, lambda s, _: value(s, "kib_group_lag", group=group, topic=topic,
                                                              partition="0") == 3)
        assert value(samples, "kib_group_lag", group=group, topic=topic, partition="0") == 3
        assert value(samples, "kib_group_lag_sum", group=group) == 3
        assert value(samples, "kib_group_members", group=group) == 1

        # And "redacted" leaves them out again.
        reload(b, metrics_labels='"redacted"')
        status, _, body = get(b, "/metrics")
        assert status == 200 and group not in body and topic not in body
    finally:
        member.close()


def test_a_loopback_listener_names_groups_and_topics_by_default(bridge_factory, iggy):
    b = http_bridge(bridge_factory, "127.0.0.1", "127.0.0.1", iggy_address=iggy.address).start().wait_ready()
    wait_http(b)
    topic, group, member = make_group(b)
    try:
        samples, body = scrape_until(b, lambda s, _: value(s, "kib_group_lag", group=group, topic=topic,
                                                              partition="0") == 3)
        assert value(samples, "kib_group_lag", group=group, topic=topic, partition="0") == 3
        assert value(samples, "kib_group_members", group=group) == 1
    finally:
        member.close()


def test_a_bearer_token_guards_metrics_only_and_unauthorized_bursts_do_not_slow_others(bridge_factory, iggy,
                                                                                          workdir):
    token_file = os.path.join(workdir, "metrics.token")
    token = "tok-" + uuid.uuid4().hex
    write_token(token_file, token)
    b = http_bridge(bridge_factory, EXPOSED_LISTEN, EXPOSED_CONNECT,
                    'metrics_bearer_token_file = "%s"\n' % token_file, iggy_address=iggy.address)
    b.start().wait_ready()
    wait_http(b)
    good = {"Authorization": "Bearer " + token}

    refused = 0
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Bearer " + token + "x"},
                    {"Authorization": "Bearer " + token[:-1]}, {"Authorization": "Basic " + token},
                    {"Authorization": token}):
        status, h, body = get(b, "/metrics", headers)
        assert status == 401, (headers, status, body)
        assert h["WWW-Authenticate"].startswith("Bearer"), h
        assert "kib_" not in body
        refused += 1
    status, h, _ = get(b, "/metrics", method="HEAD")
    assert status == 401
    refused += 1
    # The scheme is case-insensitive (RFC 9110 11.1).
    assert get(b, "/metrics", {"Authorization": "bearer " + token})[0] == 200
    # /healthz and /readyz never ask.
    assert get(b, "/healthz")[0] == 200
    assert get(b, "/readyz")[0] == 200

    # With a token required, "auto" names groups and topics.
    topic, group, member = make_group(b)
    try:
        samples, body = scrape_until(b, lambda s, _: value(s, "kib_group_lag", group=group, topic=topic,
                                                              partition="0") == 3, headers=good)
        assert value(samples, "kib_group_lag", group=group, topic=topic, partition="0") == 3
    finally:
        member.close()
    assert value(samples, "kib_http_requests_refused_total", reason="unauthorized") == refused

    # A burst of unauthorized scrapes from another process (as an attacker would be: threads here
    # would make the probe wait for the GIL): refused and counted, logged sparingly, others served.
    idle = probe_latencies(b.port)
    attacker = subprocess.Popen([sys.executable, "-c", ATTACKER, b.http_host, str(b.http_port)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.3)
        during = probe_latencies(b.port)
    finally:
        attacker.terminate()
        out, err = attacker.communicate(timeout=10)
    assert "unexpected" not in out + err, out + err
    i99, d99 = assert_serves_others(idle, during, "unauthorized /metrics burst")
    samples = samples_of(get(b, "/metrics", good)[2])
    burst = value(samples, "kib_http_requests_refused_total", reason="unauthorized") - refused
    print("probe p99 idle %.2f ms, during a burst of %d unauthorized scrapes %.2f ms" % (i99 * 1e3, burst, d99 * 1e3))
    assert burst > 100, burst
    lines = [l for l in b.read_log().splitlines() if "/metrics refused" in l]
    assert 1 <= len(lines) <= 3, "refusals not rate-limited in the log: %d lines" % len(lines)
    assert token not in b.read_log()

    # SIGHUP reads the file again: the new token holds at once, the old one no longer.
    new_token = "tok-" + uuid.uuid4().hex
    write_token(token_file, new_token)
    reload(b)
    assert get(b, "/metrics", good)[0] == 401
    assert get(b, "/metrics", {"Authorization": "Bearer " + new_token})[0] == 200
    assert new_token not in b.read_log()


def test_an_empty_or_unreadable_token_file_fails_check_config_and_serve_naming_the_key(bridge_factory, workdir):
    empty = os.path.join(workdir, "empty.token")
    write_token(empty, "   ")
    for path, why in ((empty, "empty"), (os.path.join(workdir, "missing.token"), "No such file")):
        b = http_bridge(bridge_factory, "127.0.0.1", "127.0.0.1", 'metrics_bearer_token_file = "%s"\n' % path)
        r = subprocess.run([bridge_bin(), "check-config", "--config", b.config], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 3, r.stdout + r.stderr
        assert "[http] metrics_bearer_token_file" in r.stderr and why in r.stderr, r.stderr
        with pytest.raises(RuntimeError) as e:
            b.start()
        assert "[http] metrics_bearer_token_file" in str(e.value) and why in str(e.value), str(e.value)


def test_a_token_file_others_may_read_is_warned_about_and_status_sends_the_token(bridge_factory, workdir):
    token_file = os.path.join(workdir, "metrics.token")
    token = uuid.uuid4().hex
    write_token(token_file, token, mode=0o644)
    b = http_bridge(bridge_factory, "127.0.0.1", "127.0.0.1", 'metrics_bearer_token_file = "%s"\n' % token_file)
    b.start()
    wait_http(b)
    assert re.search(r"metrics_bearer_token_file .*readable by others", b.read_log()), b.read_log()
    assert get(b, "/metrics")[0] == 401
    # `status` reads the token file the configuration names.
    r = subprocess.run([bridge_bin(), "status", "--json", "--config", b.config], capture_output=True, text=True,
                       timeout=30)
    doc = json.loads(r.stdout)
    assert doc["reachable"] is True and "requests_total" in doc, r.stdout + r.stderr
    # A file only its owner may read draws no warning.
    os.chmod(token_file, stat.S_IRUSR | stat.S_IWUSR)
    b.stop()
    b.start()
    wait_http(b)
    assert len(re.findall(r"metrics_bearer_token_file .*readable by others", b.read_log())) == 1
