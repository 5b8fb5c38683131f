"""Amplification and work that outlives its connection (issue 12), against the real bridge on a
real iggy-server, with requests built by hand (harness/kafka_wire), not by the bridge's codecs:

* a Metadata request naming one 1,000-partition topic 350,000 times is answered with the topic
  once, and the bridge's peak RSS stays bounded;
* a Fetch asking max_bytes = 2^31-1 gets at most [limits] fetch_max_bytes;
* a Fetch naming one partition 1,000 times reads it (polls Iggy) once and answers it once;
* a Fetch asking max_wait_ms = 2^31-1 is answered once [limits] fetch_max_wait_ms has passed;
* 100 long-polling fetches of a connection that closes stop waiting at once (kib_fetch_waiters);
* a connection whose one request queues 50,000 Iggy lookups does not hold up another client's
  Produce: it is answered while the first request is still being worked on.
"""
import os, re, resource, select, socket, time, urllib.request, uuid

import pytest

from conftest import bridge_bin, free_port
from harness.kafka_wire import (INT32_MAX, batch, connect, create_topic, fetch_v4, fetch_v4_one_topic, metadata_v4,
                                parse_fetch_v4, parse_metadata_v4, parse_produce_v7, produce_v7, record, recv_frame)


# ---- helpers ----------------------------------------------------------------------------------

def with_http(bridge):
    """Turns on the /metrics listener in a not yet started bridge's config."""
    bridge.http_port = free_port()
    with open(bridge.config) as f:
        text = f.read()
    text, n = re.subn(r'(\[http\]\s*\n\s*listen\s*=\s*)""', r'\g<1>"127.0.0.1:%d"' % bridge.http_port, text)
    assert n == 1, text
    with open(bridge.config, "w") as f:
        f.write(text)
    return bridge


def metric(bridge, name):
    """The value of an unlabelled sample in /metrics, None when the bridge does not export it."""
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % bridge.http_port, timeout=10) as r:
        body = r.read().decode()
    m = re.search(r"^%s (\S+)$" % re.escape(name), body, re.M)
    return float(m.group(1)) if m else None


def wait_for(what, cond, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def produce_ok(sock, topic, values, corr=50):
    for i, v in enumerate(values):
        sock.sendall(produce_v7(corr + i, topic, 0, batch(record(v), 1)))
        _corr, err, _base = parse_produce_v7(recv_frame(sock))
        assert err == 0


def limit_address_space(bridge, gib):
    """Keeps a bridge that would allocate without bound from taking the machine down with it:
    it then fails its allocation instead. Not under ASan, whose shadow memory needs terabytes."""
    if "asan" not in bridge_bin():
        resource.prlimit(bridge.proc.pid, resource.RLIMIT_AS, (gib << 30, gib << 30))


@pytest.fixture
def started(bridge_factory, iggy):
    def start(limits="", kafka_extra=""):
        extra = "[limits]\n" + limits if limits else ""
        b = bridge_factory(extra, iggy_address=iggy.address, kafka_extra=kafka_extra)
        return with_http(b).start().wait_ready()
    return start


# ---- amplification ----------------------------------------------------------------------------

def test_metadata_repeating_one_topic_350000_times_answers_it_once_in_bounded_memory(started):
    b = started(kafka_extra="default_partitions = 1000\n")
    s = connect(b.port, timeout=120)
    topic = "amp-" + uuid.uuid4().hex[:6]
    assert create_topic(s, topic) == 1000
    limit_address_space(b, 4)
    before = b.vm_hwm_kb()
    s.sendall(metadata_v4(2, [topic] * 350000))
    topics = parse_metadata_v4(recv_frame(s))
    assert topics == [(0, topic, 1000)]
    grown = b.vm_hwm_kb() - before
    # The request is 4 MB and its decoded names some 15 MB; 3.5e8 partition entries would be
    # tens of GB (the address-space limit above turns that into a failed allocation).
    assert grown < 256 * 1024, "peak RSS grew by %d KiB" % grown
    assert b.alive()


def test_fetch_max_bytes_is_capped_by_fetch_max_bytes(started):
    b = started(limits="fetch_max_bytes = 65536\n")
    s = connect(b.port, timeout=60)
    topic = "amp-" + uuid.uuid4().hex[:6]
    create_topic(s, topic)
    produce_ok(s, topic, [bytes([i]) * 10000 for i in range(30)])  # ~300 KB in partition 0
    s.sendall(fetch_v4(3, [(topic, 0, 0, INT32_MAX)], max_bytes=INT32_MAX))
    (t, p, err, hw, records), = parse_fetch_v4(recv_frame(s))
    assert (t, p, err, hw) == (topic, 0, 0, 30)
    assert 10000 < len(records) <= 65536


def test_fetch_naming_one_partition_1000_times_reads_and_answers_it_once(started):
    b = started()
    s = connect(b.port, timeout=60)
    topic = "amp-" + uuid.uuid4().hex[:6]
    create_topic(s, topic)
    produce_ok(s, topic, [b"x" * 100 for _ in range(5)])
    # Warm: the partition's offsets are loaded, so the next fetch costs polls only.
    s.sendall(fetch_v4(4, [(topic, 0, 0, 1 << 20)]))
    parse_fetch_v4(recv_frame(s))
    before = metric(b, "kib_iggy_requests_total")
    s.sendall(fetch_v4_one_topic(5, topic, [(0, 0, 1 << 20)] * 1000))
    answered = parse_fetch_v4(recv_frame(s))
    polls = metric(b, "kib_iggy_requests_total") - before
    assert [(t, p, err, hw) for t, p, err, hw, _ in answered] == [(topic, 0, 0, 5)]
    assert len(answered[0][4]) > 500  # the five records
    assert polls < 10, "%d Iggy requests for one partition" % polls


def test_fetch_max_wait_is_capped_by_fetch_max_wait_ms(started):
    b = started(limits="fetch_max_wait_ms = 1000\n")
    s = connect(b.port, timeout=60)
    topic = "amp-" + uuid.uuid4().hex[:6]
    create_topic(s, topic)
    # At the high watermark of an empty partition: nothing ever arrives, so only the cap ends it.
    s.sendall(fetch_v4(6, [(topic, 0, 0, 1 << 20)], max_wait_ms=INT32_MAX))
    s.settimeout(60)  # generous: 60x the cap, far below 2^31-1 ms
    (t, p, err, hw, records), = parse_fetch_v4(recv_frame(s))
    assert (t, p, err, hw, records) == (topic, 0, 0, 0, b"")


# ---- work outliving its connection ------------------------------------------------------------

def test_long_polls_of_a_closed_connection_stop_waiting(started):
    b = started(limits="fetch_max_wait_ms = 120000\n")
    s = connect(b.port, timeout=60)
    topic = "amp-" + uuid.uuid4().hex[:6]
    create_topic(s, topic)
    s.sendall(b"".join(fetch_v4(100 + i, [(topic, 0, 0, 1 << 20)], max_wait_ms=120000) for i in range(100)))
    wait_for("100 waiting fetches", lambda: metric(b, "kib_fetch_waiters") == 100, 30)
    s.close()
    # Well before their 120 s deadline.
    wait_for("no waiting fetch", lambda: metric(b, "kib_fetch_waiters") == 0, 10)
    assert b.alive()


def test_a_request_queueing_50000_iggy_lookups_does_not_hold_up_another_clients_produce(started):
    # 50,000 of the pool's 100,000 queue slots for one connection, so its request takes a while.
    b = started(limits="max_iggy_queue_per_connection = 50000\n")
    other = connect(b.port, timeout=60)
    topic = "amp-" + uuid.uuid4().hex[:6]
    create_topic(other, topic)
    greedy = connect(b.port, timeout=120)
    # 50,000 distinct unknown topics, no auto-creation: one Iggy GetTopic each.
    names = ["nx-%05d-%s" % (i, uuid.uuid4().hex[:4]) for i in range(50000)]
    greedy.sendall(metadata_v4(7, names, auto_create=False))
    wait_for("the lookups to be queued", lambda: (metric(b, "kib_iggy_pool_queued") or 0) > 1000, 30)
    other.sendall(produce_v7(8, topic, 0, batch(record(b"fair"), 1)))
    _corr, err, base = parse_produce_v7(recv_frame(other))
    assert (err, base) == (0, 0)
    # Answered while the greedy request is still being worked on: its response has not come.
    readable, _, _ = select.select([greedy], [], [], 0)
    assert not readable, "the 50,000-topic Metadata was answered before the Produce that came after it"
    topics = parse_metadata_v4(recv_frame(greedy))
    assert len(topics) == 50000
    assert all(err != 0 for err, _, _ in topics)
