"""The operations HTTP listener of a running bridge: /metrics in the Prometheus text format
(parsed with prometheus_client's parser), /healthz, /readyz, the `status` subcommand, and
SIGHUP reload while the listener serves."""
import json, os, re, signal, socket, subprocess, time, urllib.error, urllib.request

import pytest

from conftest import bridge_bin, free_port

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:  # pragma: no cover - depends on the environment
    pytest.skip("SKIPPED: prometheus_client is not installed (pip install prometheus-client into .venv); "
                "the /metrics tests need its text-format parser", allow_module_level=True)


def with_http(bridge):
    """Turns on [http] listen on a free port in a not yet started bridge's config."""
    bridge.http_port = free_port()
    with open(bridge.config) as f:
        text = f.read()
    text, n = re.subn(r'(\[http\]\s*\n\s*listen\s*=\s*)""', r'\g<1>"127.0.0.1:%d"' % bridge.http_port, text)
    assert n == 1, "conftest's config no longer has [http] listen = \"\":\n" + text
    with open(bridge.config, "w") as f:
        f.write(text)
    return bridge


def http_get(bridge, path, method="GET"):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (bridge.http_port, path), method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def scrape(bridge):
    """{(sample name, frozenset(labels)): value} of one /metrics scrape, and the family types."""
    status, headers, body = http_get(bridge, "/metrics")
    assert status == 200, body
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples, types = {}, {}
    for family in text_string_to_metric_families(body):
        types[family.name] = family.type
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples, types


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples, name):
    return sum(v for (n, _), v in samples.items() if n == name)


def wait_ready(bridge, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, _, body = http_get(bridge, "/readyz")
        if status == 200:
            return
        time.sleep(0.2)
    raise AssertionError("bridge not ready after %ss: %s\n%s" % (timeout, body, bridge.read_log()))


def kcat_metadata(bridge):
    r = subprocess.run(["kcat", "-b", "127.0.0.1:%d" % bridge.port, "-L", "-m", "10"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture
def http_bridge(bridge_factory):
    """A bridge with the HTTP listener on and no Iggy server behind it."""
    return with_http(bridge_factory()).start()


@pytest.fixture
def http_bridge_on_iggy(bridge_factory, iggy):
    return with_http(bridge_factory(iggy_address=iggy.address)).start()


def test_healthz_is_ok_while_the_process_runs_even_without_iggy(http_bridge):
    assert http_get(http_bridge, "/healthz")[::2] == (200, "ok\n")


def test_readyz_is_503_naming_the_reason_while_iggy_is_unreachable(http_bridge):
    status, _, body = http_get(http_bridge, "/readyz")
    assert status == 503
    assert body.startswith("not ready: ") and len(body) > len("not ready: \n"), body


def test_unknown_path_is_404_and_other_methods_405(http_bridge):
    assert http_get(http_bridge, "/nope")[0] == 404
    status, headers, _ = http_get(http_bridge, "/metrics", method="POST")
    assert status == 405
    assert headers["Allow"] == "GET, HEAD"


def test_metrics_parse_as_prometheus_text_with_the_documented_families(http_bridge):
    samples, types = scrape(http_bridge)
    # prometheus_client names counter families without their _total suffix.
    expected = {
        "kib_requests": "counter", "kib_request_errors": "counter", "kib_request_duration_seconds": "histogram",
        "kib_bytes_received": "counter", "kib_bytes_sent": "counter", "kib_connections": "gauge",
        "kib_connections_refused": "counter", "kib_iggy_pool_connected": "gauge", "kib_iggy_pool_queued": "gauge",
        "kib_state_write_batches": "counter", "kib_ready": "gauge", "kib_build_info": "gauge",
        "process_start_time_seconds": "gauge", "process_resident_memory_bytes": "gauge",
    }
    missing = {name: kind for name, kind in expected.items() if types.get(name) != kind}
    assert not missing, "missing or mistyped families: %s (have %s)" % (missing, sorted(types))
    assert value(samples, "kib_ready") == 0  # no Iggy behind this bridge
    assert value(samples, "process_resident_memory_bytes") > 0
    assert abs(value(samples, "process_start_time_seconds") - time.time()) < 120


def test_counters_move_when_kcat_lists_metadata(http_bridge_on_iggy):
    b = http_bridge_on_iggy
    wait_ready(b)
    before, _ = scrape(b)
    kcat_metadata(b)
    after, _ = scrape(b)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert any(n == "kib_requests_total" and dict(l).get("api") == "ApiVersions" for n, l in after), after.keys()
    assert sum(v for (n, l), v in after.items() if n == "kib_requests_total" and dict(l)["api"] == "Metadata") > \
        sum(v for (n, l), v in before.items() if n == "kib_requests_total" and dict(l)["api"] == "Metadata")
    assert moved("kib_request_duration_seconds_count", api="Metadata") >= 1
    assert moved("kib_bytes_received_total") > 0
    assert moved("kib_bytes_sent_total") > 0
    assert value(after, "kib_ready") == 1
    assert value(after, "kib_iggy_pool_connected") >= 1
    assert value(after, "kib_iggy_pool_queued") == 0


def test_connections_gauge_counts_open_kafka_connections(http_bridge):
    socks = [socket.create_connection(("127.0.0.1", http_bridge.port)) for _ in range(5)]
    try:
        deadline = time.time() + 5
        while time.time() < deadline and value(scrape(http_bridge)[0], "kib_connections") < 5:
            time.sleep(0.1)
        assert value(scrape(http_bridge)[0], "kib_connections") >= 5
    finally:
        for s in socks:
            s.close()


def test_status_subcommand_reports_ready_as_table_and_json(http_bridge_on_iggy):
    b = http_bridge_on_iggy
    wait_ready(b)
    r = subprocess.run([bridge_bin(), "status", "--config", b.config], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^ready\s+yes$", r.stdout, re.M), r.stdout
    r = subprocess.run([bridge_bin(), "status", "--json", "--config", b.config], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert doc["ready"] is True and doc["reachable"] is True
    assert doc["iggy_pool"]["connected"] >= 1


def test_status_subcommand_exits_1_when_nothing_answers(bridge_factory):
    b = with_http(bridge_factory())  # configured, never started
    r = subprocess.run([bridge_bin(), "status", "--config", b.config], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "no:" in r.stdout


def test_sighup_reloads_log_level_and_names_http_listen_as_needing_restart(http_bridge):
    b = http_bridge
    with open(b.config) as f:
        text = f.read()
    text = text.replace('level = "debug"', 'level = "info"')
    text = re.sub(r'(\[http\]\s*\n\s*listen\s*=\s*)"[^"]*"', r'\g<1>"127.0.0.1:%d"' % free_port(), text)
    with open(b.config, "w") as f:
        f.write(text)
    b.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 5
    while time.time() < deadline and "configuration reloaded" not in b.read_log():
        time.sleep(0.1)
    log = b.read_log()
    assert "log level debug -> info" in log
    assert "[http] listen changed; it takes effect after a restart" in log
    assert b.alive()
    assert http_get(b, "/healthz")[0] == 200  # still on the old address


def test_group_metrics_count_groups_by_state_and_report_lag_also_for_native_appends(http_bridge_on_iggy, iggy):
    """kib_groups, kib_group_members, kib_group_lag and kib_group_lag_sum; lag follows records a
    native Iggy producer appends (the bridge learns them from Iggy within its 10 s refresh)."""
    ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed")
    iggy_sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed")
    import asyncio, uuid
    b = http_bridge_on_iggy
    wait_ready(b)
    topic, group = "lag-" + uuid.uuid4().hex[:8], "g-" + uuid.uuid4().hex[:8]
    bs = "127.0.0.1:%d" % b.port
    p = ck.Producer({"bootstrap.servers": bs, "acks": "all"})
    for i in range(5):
        p.produce(topic, value=b"v%d" % i, partition=0)
    assert p.flush(30) == 0
    c = ck.Consumer({"bootstrap.servers": bs, "group.id": group, "enable.auto.commit": False})
    c.commit(offsets=[ck.TopicPartition(topic, 0, 2)], asynchronous=False)

    def lag_is(n, timeout):
        deadline = time.time() + timeout
        while True:
            samples, types = scrape(b)
            got = value(samples, "kib_group_lag", group=group, topic=topic, partition="0")
            if got == n or time.time() > deadline:
                return got, samples, types
            time.sleep(0.5)
    got, samples, types = lag_is(3, 15)
    assert got == 3
    assert value(samples, "kib_group_lag_sum", group=group) == 3
    assert types["kib_groups"] == "gauge" and value(samples, "kib_groups", state="Empty") >= 1
    assert value(samples, "kib_groups", state="Dead") == 0

    # A live member shows in kib_group_members and moves its group to Stable.
    c.subscribe([topic])
    deadline = time.time() + 30
    while not c.assignment() and time.time() < deadline:
        c.poll(0.2)
    samples, _ = scrape(b)
    assert value(samples, "kib_group_members", group=group) == 1
    assert value(samples, "kib_groups", state="Stable") >= 1
    c.close()

    async def native_append():
        n = iggy_sdk.IggyClient(iggy.address)
        await n.connect()
        await n.login_user("iggy", "iggy")
        await n.send_messages("kafka", topic, 0, [iggy_sdk.SendMessage(b"native-%d" % i) for i in range(4)])
    asyncio.run(native_append())
    got, samples, _ = lag_is(7, 25)
    assert got == 7, "lag did not follow the native appends"
    assert value(samples, "kib_group_lag_sum", group=group) == 7


def test_produce_partition_errors_are_counted_per_partition(http_bridge_on_iggy):
    # Before, only a response's top-level error_code was counted, and Produce has none: 64
    # partitions refused as CORRUPT_MESSAGE left kib_request_errors_total untouched.
    import uuid
    from test_bad_produce import CORRUPT_MESSAGE, zstd_frame_claiming
    from harness.kafka_wire import (batch, connect, create_topic, parse_produce_v7_partitions, produce_v7_partitions,
                                    recv_frame)
    b = http_bridge_on_iggy
    wait_ready(b)
    s = connect(b.port)
    topic = "cnt-" + uuid.uuid4().hex[:8]
    create_topic(s, topic, check=False)
    before = value(scrape(b)[0], "kib_request_errors_total", api="Produce", code="CORRUPT_MESSAGE")
    s.sendall(produce_v7_partitions(30, topic, [(0, batch(zstd_frame_claiming(256 << 20), 1, attributes=4))] * 5))
    _corr, parts = parse_produce_v7_partitions(recv_frame(s))
    assert [err for _i, err in parts] == [CORRUPT_MESSAGE] * 5
    after = value(scrape(b)[0], "kib_request_errors_total", api="Produce", code="CORRUPT_MESSAGE")
    assert after - before == 5
    s.close()
