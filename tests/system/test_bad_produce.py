"""Bad Produce input against the real bridge on a real iggy-server: each case gets its Kafka
error code, the connection and the bridge survive, and nothing is written. Requests are built
by hand here (not by the bridge's codecs) so a codec bug cannot hide itself."""
import struct, uuid
import pytest
from kafka_wire import api_versions_request, connect, parse_api_versions, recv_frame, request, uvarint

CORRUPT_MESSAGE, UNKNOWN_TOPIC_OR_PARTITION, MESSAGE_TOO_LARGE, INVALID_TOPIC, INVALID_RECORD = 2, 3, 10, 17, 87
INVALID_TIMESTAMP = 32


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def zigzag(n):
    return uvarint((n << 1) ^ (n >> 63))


def record(value, offset_delta=0):
    body = b"\x00" + zigzag(0) + zigzag(offset_delta) + zigzag(-1) + zigzag(len(value)) + value + uvarint(0)
    return zigzag(len(body)) + body


def batch(records_blob, count, attributes=0, corrupt_crc=False, claimed_count=None):
    after_crc = struct.pack(">hiqqqhii", attributes, count - 1, 1700000000000, 1700000000000, -1, -1, -1,
                            claimed_count if claimed_count is not None else count) + records_blob
    crc = crc32c(after_crc) ^ (1 if corrupt_crc else 0)
    head = struct.pack(">iBI", -1, 2, crc)  # partitionLeaderEpoch, magic, crc
    return struct.pack(">qi", 0, len(head) + len(after_crc)) + head + after_crc


def produce_v7(corr, topic, partition, records):
    t = topic.encode()
    body = struct.pack(">hhi", -1, 1, 30000) + struct.pack(">i", 1) + struct.pack(">h", len(t)) + t
    body += struct.pack(">i", 1) + struct.pack(">ii", partition, len(records)) + records
    return request(0, 7, corr, body)


def parse_produce_v7(frame):
    corr, ntopics = struct.unpack_from(">ii", frame, 0)
    pos = 8
    (tl,) = struct.unpack_from(">h", frame, pos)
    pos += 2 + tl
    (nparts,) = struct.unpack_from(">i", frame, pos)
    pos += 4
    idx, err, base, _lat, _lso = struct.unpack_from(">ihqqq", frame, pos)
    return corr, err, base


def latest_offset(sock, topic, corr=900):
    t = topic.encode()
    body = struct.pack(">i", -1) + struct.pack(">i", 1) + struct.pack(">h", len(t)) + t
    body += struct.pack(">i", 1) + struct.pack(">iq", 0, -1)
    sock.sendall(request(2, 1, corr, body))
    f = recv_frame(sock)
    pos = 4 + 4
    (tl,) = struct.unpack_from(">h", f, pos)
    pos += 2 + tl + 4
    _idx, err, _ts, off = struct.unpack_from(">ihqq", f, pos)
    assert err == 0
    return off


def create_topic(sock, name):
    # Metadata v4 with auto-creation
    t = name.encode()
    sock.sendall(request(3, 4, 1, struct.pack(">i", 1) + struct.pack(">h", len(t)) + t + b"\x01"))
    recv_frame(sock)


def still_serving(sock, bridge):
    sock.sendall(api_versions_request(0, 4242))
    assert parse_api_versions(recv_frame(sock), 0)[:2] == (4242, 0)
    assert bridge.alive()


@pytest.fixture
def topic_conn(bridge_on_iggy):
    s = connect(bridge_on_iggy.port)
    name = "bad-" + uuid.uuid4().hex[:8]
    create_topic(s, name)
    yield bridge_on_iggy, s, name
    s.close()


def test_good_batch_is_appended_as_a_baseline(topic_conn):
    b, s, topic = topic_conn
    s.sendall(produce_v7(10, topic, 0, batch(record(b"ok"), 1)))
    assert parse_produce_v7(recv_frame(s)) == (10, 0, 0)
    assert latest_offset(s, topic) == 1


def test_corrupt_crc_is_corrupt_message_and_nothing_written(topic_conn):
    b, s, topic = topic_conn
    s.sendall(produce_v7(11, topic, 0, batch(record(b"x"), 1, corrupt_crc=True)))
    assert parse_produce_v7(recv_frame(s))[:2] == (11, CORRUPT_MESSAGE)
    assert latest_offset(s, topic) == 0
    still_serving(s, b)


def test_batch_claiming_two_billion_records_is_refused_without_allocating(topic_conn):
    b, s, topic = topic_conn
    rss = b.rss_kb()
    s.sendall(produce_v7(12, topic, 0, batch(record(b"x"), 1, claimed_count=2**31 - 1)))
    assert parse_produce_v7(recv_frame(s))[:2] == (12, INVALID_RECORD)
    assert b.rss_kb() - rss < 64 * 1024
    assert latest_offset(s, topic) == 0
    still_serving(s, b)


def test_zstd_bomb_hits_the_decompression_budget(bridge_factory, iggy):
    zstd = pytest.importorskip("zstandard", reason="SKIPPED: python zstandard not installed (tests/clients/setup.sh)")
    b = bridge_factory("[limits]\nmax_decompressed_bytes_per_request = 16777216\n", iggy_address=iggy.address).start().wait_ready()
    s = connect(b.port)
    topic = "bomb-" + uuid.uuid4().hex[:8]
    create_topic(s, topic)
    # One record whose value is 64 MiB of zeros: ~2 KiB compressed, 4x the budget.
    plain = record(bytes(64 << 20))
    bomb = zstd.ZstdCompressor(level=3).compress(plain)
    assert len(bomb) < 100_000
    rss = b.rss_kb()
    s.sendall(produce_v7(13, topic, 0, batch(bomb, 1, attributes=4)))
    assert parse_produce_v7(recv_frame(s))[:2] == (13, MESSAGE_TOO_LARGE)
    assert b.rss_kb() - rss < 48 * 1024, "decompressed past the budget"
    assert latest_offset(s, topic) == 0
    still_serving(s, b)
    s.close()


def test_empty_topic_name_is_unknown_on_produce_and_invalid_on_metadata(topic_conn):
    b, s, topic = topic_conn
    s.sendall(produce_v7(14, "", 0, batch(record(b"x"), 1)))
    assert parse_produce_v7(recv_frame(s))[:2] == (14, UNKNOWN_TOPIC_OR_PARTITION)
    s.sendall(request(3, 4, 15, struct.pack(">i", 1) + struct.pack(">h", 0) + b"\x01"))
    f = recv_frame(s)
    # v4: corr, throttle, brokers[...], cluster_id, controller, topics[error, name, ...]
    pos = 8
    (nb,) = struct.unpack_from(">i", f, pos)
    pos += 4
    for _ in range(nb):
        pos += 4
        (hl,) = struct.unpack_from(">h", f, pos)
        pos += 2 + hl + 4
        (rl,) = struct.unpack_from(">h", f, pos)
        pos += 2 + max(rl, 0)
    (cl,) = struct.unpack_from(">h", f, pos)
    pos += 2 + max(cl, 0) + 4
    (nt,) = struct.unpack_from(">i", f, pos)
    (err,) = struct.unpack_from(">h", f, pos + 4)
    assert (nt, err) == (1, INVALID_TOPIC)
    still_serving(s, b)


def test_produce_to_missing_partition_is_unknown_topic_or_partition(topic_conn):
    b, s, topic = topic_conn
    s.sendall(produce_v7(16, topic, 5, batch(record(b"x"), 1)))
    assert parse_produce_v7(recv_frame(s))[:2] == (16, UNKNOWN_TOPIC_OR_PARTITION)
    assert latest_offset(s, topic) == 0
    still_serving(s, b)


def test_pipelined_produces_past_max_inflight_request_bytes_pause_reading_and_lose_nothing(bridge_factory, iggy):
    # 100 pipelined 8 KiB Produce requests span many 64 KiB reads against a 16 KiB budget (the
    # frame limit may not exceed it): the bridge stops reading while Iggy answers, reads on, and
    # appends every one in order.
    b = bridge_factory('[limits]\nmax_inflight_request_bytes = 16384\nmax_frame_bytes = 16384\n',
                       iggy_address=iggy.address).start().wait_ready()
    topic = "pause-" + uuid.uuid4().hex[:8]
    with connect(b.port) as s:
        create_topic(s, topic)
        n = 100
        s.sendall(b"".join(produce_v7(100 + i, topic, 0, batch(record(bytes([i]) * 8192), 1)) for i in range(n)))
        for i in range(n):
            assert parse_produce_v7(recv_frame(s)) == (100 + i, 0, i)
        assert latest_offset(s, topic) == n
        still_serving(s, b)


def produce_v7_partitions(corr, topic, parts):
    """Produce v7, acks=1, one topic, `parts` = [(partition, records bytes)] (repeats allowed)."""
    t = topic.encode()
    body = struct.pack(">hhi", -1, 1, 30000) + struct.pack(">i", 1) + struct.pack(">h", len(t)) + t
    body += struct.pack(">i", len(parts))
    for idx, recs in parts:
        body += struct.pack(">ii", idx, len(recs)) + recs
    return request(0, 7, corr, body)


def parse_produce_v7_partitions(frame):
    """[(partition, error)] of the first topic of a Produce v7 response."""
    corr, _ntopics = struct.unpack_from(">ii", frame, 0)
    pos = 8
    (tl,) = struct.unpack_from(">h", frame, pos)
    pos += 2 + tl
    (nparts,) = struct.unpack_from(">i", frame, pos)
    pos += 4
    out = []
    for _ in range(nparts):
        idx, err = struct.unpack_from(">ih", frame, pos)
        pos += 4 + 2 + 8 + 8 + 8
        out.append((idx, err))
    return corr, out


def zstd_frame_claiming(claimed, content=10):
    """A zstd frame whose header claims `claimed` bytes (8-byte content size, 1 MiB window) and
    that holds one last raw block of `content` bytes: it ends far short of its claim."""
    frame = struct.pack("<I", 0xFD2FB528) + bytes([0xC0, (20 - 10) << 3]) + struct.pack("<Q", claimed)
    block = 1 | (content << 3)  # last block, raw
    return frame + struct.pack("<I", block)[:3] + b"a" * content


def test_many_partitions_each_claiming_256_mib_are_corrupt_without_zero_filling(topic_conn):
    # Before: each partition's decoder reserved (and zero-filled) min(claim, budget) = 256 MiB
    # before reading a byte of content; 64 such partitions memset 16 GiB on the loop thread.
    b, s, topic = topic_conn
    bomb = batch(zstd_frame_claiming(256 << 20), 1, attributes=4)
    assert len(bomb) < 100
    hwm = b.vm_hwm_kb()
    s.sendall(produce_v7_partitions(20, topic, [(0, bomb)] * 64))
    corr, parts = parse_produce_v7_partitions(recv_frame(s))
    assert corr == 20 and len(parts) == 64
    assert all(err == CORRUPT_MESSAGE for _idx, err in parts), parts[:4]
    grew = b.vm_hwm_kb() - hwm
    print(f"peak RSS (VmHWM) grew by {grew} KiB")
    assert grew < 64 * 1024, f"peak RSS grew by {grew} KiB"
    assert latest_offset(s, topic) == 0
    still_serving(s, b)


def test_produce_to_a_partition_the_topic_lacks_is_refused_before_decoding(topic_conn):
    # Kafka answers UNKNOWN_TOPIC_OR_PARTITION before it looks at the records; before, the
    # bridge decoded (and decompressed) them first and answered CORRUPT_MESSAGE here.
    b, s, topic = topic_conn
    bomb = batch(zstd_frame_claiming(256 << 20), 1, attributes=4)
    s.sendall(produce_v7_partitions(21, topic, [(7, bomb), (0, batch(record(b"ok"), 1))]))
    corr, parts = parse_produce_v7_partitions(recv_frame(s))
    assert corr == 21
    assert parts == [(7, UNKNOWN_TOPIC_OR_PARTITION), (0, 0)]
    assert latest_offset(s, topic) == 1
    still_serving(s, b)


def minimal_records(n):
    out = bytearray()
    for i in range(n):
        body = b"\x00" + zigzag(0) + zigzag(i) + zigzag(-1) + zigzag(-1) + uvarint(0)
        out += zigzag(len(body)) + body
    return bytes(out)


def test_a_million_minimal_records_are_charged_at_their_decoded_size(bridge_factory, iggy):
    # 1,000,000 records of 7-9 bytes: ~9 MB decompressed, ~150 KB as zstd, but 88 MB of decoded
    # Record structs. Before, the budget saw only the 9 MB and the bridge held all of it.
    zstd = pytest.importorskip("zstandard", reason="SKIPPED: python zstandard not installed (tests/clients/setup.sh)")
    b = bridge_factory("[limits]\nmax_decompressed_bytes_per_request = 16777216\n", iggy_address=iggy.address).start().wait_ready()
    s = connect(b.port, timeout=60)
    topic = "many-" + uuid.uuid4().hex[:8]
    create_topic(s, topic)
    packed = zstd.ZstdCompressor(level=3).compress(minimal_records(1_000_000))
    assert len(packed) < 1 << 20
    hwm = b.vm_hwm_kb()
    s.sendall(produce_v7(22, topic, 0, batch(packed, 1_000_000, attributes=4)))
    assert parse_produce_v7(recv_frame(s))[:2] == (22, MESSAGE_TOO_LARGE)
    grew = b.vm_hwm_kb() - hwm
    print(f"peak RSS (VmHWM) grew by {grew} KiB")
    assert grew < 64 * 1024, f"peak RSS grew by {grew} KiB"
    assert latest_offset(s, topic) == 0
    still_serving(s, b)
    s.close()


def test_timestamp_delta_overflowing_the_base_is_an_invalid_timestamp(topic_conn):
    """Kafka adds the two as Java longs and refuses the wrapped time: INVALID_TIMESTAMP."""
    b, s, topic = topic_conn
    body = b"\x00" + zigzag(10) + zigzag(0) + zigzag(-1) + zigzag(1) + b"x" + uvarint(0)
    rec = zigzag(len(body)) + body
    after_crc = struct.pack(">hiqqqhii", 0, 0, 2**63 - 5, 2**63 - 5, -1, -1, -1, 1) + rec
    head = struct.pack(">iBI", -1, 2, crc32c(after_crc))
    blob = struct.pack(">qi", 0, len(head) + len(after_crc)) + head + after_crc
    s.sendall(produce_v7(23, topic, 0, blob))
    assert parse_produce_v7(recv_frame(s))[:2] == (23, INVALID_TIMESTAMP)
    assert latest_offset(s, topic) == 0
    still_serving(s, b)


def test_a_produce_naming_more_partitions_than_the_budget_holds_is_closed_cleanly(bridge_factory, iggy):
    # 500,000 partition entries of 8 bytes (null records): a 4 MB frame that decodes and answers
    # as 144 bytes a partition (72 MB). Before, the bridge built all of it, then a produce job
    # per partition; now the request's decode budget (16 MiB here) refuses it up front.
    b = bridge_factory("[limits]\nmax_decompressed_bytes_per_request = 16777216\n", iggy_address=iggy.address).start().wait_ready()
    s = connect(b.port, timeout=60)
    topic = "wide-" + uuid.uuid4().hex[:8]
    create_topic(s, topic)
    t = topic.encode()
    body = struct.pack(">hhi", -1, 1, 30000) + struct.pack(">i", 1) + struct.pack(">h", len(t)) + t
    body += struct.pack(">i", 500_000) + struct.pack(">ii", 0, -1) * 500_000
    hwm = b.vm_hwm_kb()
    s.sendall(request(0, 7, 24, body))
    try:
        closed = s.recv(1) == b""
    except ConnectionResetError:
        closed = True
    assert closed, "expected the connection to be closed"
    grew = b.vm_hwm_kb() - hwm
    print(f"peak RSS (VmHWM) grew by {grew} KiB")
    assert grew < 48 * 1024, f"peak RSS grew by {grew} KiB"
    s.close()
    s = connect(b.port)
    assert latest_offset(s, topic) == 0
    still_serving(s, b)
    s.close()
