"""Issue 31, finding 5: one request whose answer fans out per entry.

A DescribeConfigs v1 naming one topic 150,000 times (a 3.5 MB request, no authentication on a
PLAINTEXT listener) kept the bridge from answering ApiVersions for over 2 s and took its RSS from
16 MB to 2.2 GB. Asserted here, against a real iggy-server: an entry named twice is answered once
(or refused, ListOffsets' INVALID_REQUEST, as Kafka does), the bridge's RSS stays within
[limits] max_response_bytes' worth, another client's ApiVersions keep their latency while it is
worked on (2x the idle p99, tests/system/hostile.py), a request whose answer would pass
max_response_bytes closes its connection with a log line and
kib_request_errors_total{code="response_too_large"}, and a request naming 200,000 distinct
partitions is answered in full, a slice at a time."""
import json, os, struct, subprocess, sys, time, uuid

import pytest

from conftest import free_port
from hostile import assert_serves_others, probe_latencies
from harness.kafka_wire import (Reader, array, connect, create_topic, is_closed, list_offsets_v1, parse_list_offsets_v1,
                                recv_frame, request, string)
from test_amplification import metric, with_http
from test_hostile_pending_answers import metrics_text, sample

TOPIC_RESOURCE = 2
INVALID_REQUEST, UNKNOWN_TOPIC_OR_PARTITION = 42, 3


def describe_configs_v1(corr, names, synonyms=True):
    body = array([struct.pack(">b", TOPIC_RESOURCE) + string(n) + struct.pack(">i", -1) for n in names])
    return request(32, 1, corr, body + struct.pack(">?", synonyms))


def parse_describe_configs_v1(frame):
    """[(error, name, number of configs)]"""
    r = Reader(frame, 8)  # correlation id, throttle

    def config():
        r.str16()
        r.str16()
        r.boolean()
        r.int8()
        r.boolean()
        r.array32(lambda: (r.str16(), r.str16(), r.int8()))

    def result():
        err = r.int16()
        r.str16()
        r.int8()
        name = r.str16()
        return err, name, len(r.array32(config))
    return r.array32(result)


def timed_call(sock, data):
    """Sends, then waits for the answer: (frame, seconds)."""
    t0 = time.perf_counter()
    sock.sendall(data)
    frame = recv_frame(sock)
    return frame, time.perf_counter() - t0


@pytest.fixture
def fanout_bridge(bridge_factory, iggy):
    b = with_http(bridge_factory(iggy_address=iggy.address))
    return b.start().wait_ready()


# The probe runs in a process of its own: in a thread of this one it shared Python's GIL with
# the attacking thread, which copies the megabytes of its request and answer with the GIL held,
# and measured that (probe p99 4-7 ms while the bridge's longest loop turn was 2.3 ms).
PROBE_PROCESS = r"""
import json, select, sys
sys.path[:0] = sys.argv[2:]
from hostile import probe_latencies
port, lat = int(sys.argv[1]), []
print("ready", flush=True)
while not lat or not select.select([sys.stdin], [], [], 0)[0]:
    lat += probe_latencies(port, n=20, pause_s=0.001)
print(json.dumps(lat), flush=True)
"""


def probe_while(b, work):
    """The latencies of a probe in another process while work() runs; work's result."""
    here = os.path.dirname(os.path.abspath(__file__))
    probe = subprocess.Popen([sys.executable, "-c", PROBE_PROCESS, str(b.port), *sys.path], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, cwd=here)
    try:
        assert probe.stdout.readline().strip() == "ready"
        result = work()
        out, _ = probe.communicate("stop\n", timeout=60)
    finally:
        probe.kill()
    return json.loads(out), result


def test_describe_configs_naming_one_topic_150000_times_is_answered_once(fanout_bridge):
    b = fanout_bridge
    topic = "fanout-configs-" + uuid.uuid4().hex[:6]
    with connect(b.port) as s:
        create_topic(s, topic)
    idle = probe_latencies(b.port)
    base_kb = b.rss_kb()
    req = describe_configs_v1(7, [topic] * 150_000)
    assert len(req) > 3_000_000

    def work():
        with connect(b.port, timeout=60) as s:
            return timed_call(s, req)
    during, (frame, took) = probe_while(b, work)
    results = parse_describe_configs_v1(frame)
    assert len(results) == 1
    err, name, configs = results[0]
    assert (err, name) == (0, topic) and configs > 10
    growth = (b.vm_hwm_kb() - base_kb) << 10
    assert growth < 64 << 20, "peak RSS grew by %.0f MiB" % (growth / 2**20)
    assert_serves_others(idle, during, "DescribeConfigs x150000")
    print("answered in %.3f s, RSS growth %.1f MiB" % (took, growth / 2**20))


def test_an_answer_past_max_response_bytes_closes_the_connection(bridge_factory, iggy):
    b = with_http(bridge_factory("[limits]\nmax_response_bytes = 1048576\n", iggy_address=iggy.address))
    b.start().wait_ready()
    names = ["missing-%d" % i for i in range(20000)]  # distinct: each would be answered
    with connect(b.port) as s:
        s.sendall(describe_configs_v1(1, names, synonyms=False))
        assert is_closed(s, 20)
    assert "past [limits] max_response_bytes (1048576)" in b.read_log()
    m = metrics_text(b)
    assert sample(m, "kib_request_errors_total", 'api="DescribeConfigs",code="response_too_large"') == 1, m
    # Within the bound the same kind of request is answered.
    with connect(b.port) as s:
        s.sendall(describe_configs_v1(2, names[:100], synonyms=False))
        results = parse_describe_configs_v1(recv_frame(s))
    assert len(results) == 100 and {e for e, _, _ in results} == {UNKNOWN_TOPIC_OR_PARTITION}


def test_list_offsets_naming_200000_partitions_is_answered_a_slice_at_a_time(fanout_bridge):
    b = fanout_bridge
    topic = "fan-" + uuid.uuid4().hex[:8]
    with connect(b.port) as s:
        create_topic(s, topic)
    idle = probe_latencies(b.port)
    # Built before the probe starts: building it in the worker thread would hold Python's GIL
    # for ~100 ms against the probe thread and measure the interpreter, not the bridge.
    data = list_offsets_v1(3, topic, list(range(200_000)) + [0])

    def work():
        with connect(b.port, timeout=120) as s:
            return timed_call(s, data)
    # Measured twice when the first misses: on two cores the probe, the attacking process, the
    # bridge and iggy-server share the CPU, and the bridge's longest turn here (the decode, 2-3 ms)
    # sits near the bound, so a scheduling delay alone missed it in 1 of 12 runs (of the bridge
    # before and after this measure was added, 2026-12-07). A bridge that holds its loop too long
    # misses it both times.
    for attempt in (1, 2):
        during, (frame, took) = probe_while(b, work)
        try:
            assert_serves_others(idle, during, "ListOffsets x200000")
            break
        except AssertionError:
            if attempt == 2:
                raise
    answered = parse_list_offsets_v1(frame)
    assert len(answered) == 200_001
    # Partition 0, named twice, is refused both times, as Kafka does.
    assert answered[0][1] == INVALID_REQUEST and answered[-1][1] == INVALID_REQUEST
    assert answered[1][1] == 0 or answered[1][1] == UNKNOWN_TOPIC_OR_PARTITION
    assert {e for _, e, _ in answered[2:-1]} <= {0, UNKNOWN_TOPIC_OR_PARTITION}
    print("answered in %.3f s" % took)
