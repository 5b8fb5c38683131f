"""Transactions against the real bridge binary and a real iggy-server (docs/transactions.md): the
coordinator's answers, what Iggy holds before and after EndTxn, and crash recovery of a decided
commit, made deterministic by editing the state database of a killed bridge."""
import asyncio, os, signal, sqlite3, time, uuid
import pytest

ck = pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not installed (tests/clients/setup.sh)")
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402


def create_topic(port, name, partitions=2):
    admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"})
    for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(30)


def producer(port, txn_id, **extra):
    conf = {"bootstrap.servers": f"127.0.0.1:{port}", "transactional.id": txn_id,
            "transaction.timeout.ms": 60000, "linger.ms": 5}
    conf.update(extra)
    p = ck.Producer(conf)
    p.init_transactions(30)
    return p


def consume(port, topic, isolation, expect, timeout=20):
    c = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "g-" + uuid.uuid4().hex[:8],
                     "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     "isolation.level": isolation})
    c.subscribe([topic])
    out, deadline = [], time.time() + timeout
    try:
        while time.time() < deadline and len(out) < expect:
            m = c.poll(0.5)
            if m is None or m.error():
                continue
            out.append((m.partition(), m.offset(), m.value().decode()))
        # a little longer, so that records beyond `expect` (duplicates) would show
        end = time.time() + 1.5
        while time.time() < end:
            m = c.poll(0.3)
            if m is not None and not m.error():
                out.append((m.partition(), m.offset(), m.value().decode()))
    finally:
        c.close()
    return sorted(out)


def iggy_count(iggy, topic, partitions=2):
    sdk = pytest.importorskip("apache_iggy", reason="SKIPPED: apache-iggy not installed (tests/clients/setup.sh)")

    async def run():
        c = sdk.IggyClient(iggy.address)
        await c.connect()
        await c.login_user("iggy", "iggy")
        n = 0
        for p in range(partitions):
            n += len(await c.poll_messages("kafka", topic, consumer=sdk.Consumer.Single("kib-txn-test"),
                                           polling_strategy=sdk.PollingStrategy.Offset(0), count=1000,
                                           auto_commit=False, partition_id=p))
        return n
    return asyncio.run(run())


def wait_for(cond, timeout=20):
    deadline = time.time() + timeout
    while not cond() and time.time() < deadline:
        time.sleep(0.1)
    return cond()


def test_commit_appends_and_abort_leaves_placeholders(bridge_factory, iggy):
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    topic = "txn-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic)
    p = producer(b.port, "tx-" + topic)
    p.begin_transaction()
    for i in range(10):
        p.produce(topic, f"a-{i}".encode(), partition=i % 2)
    p.flush(10)
    # Held in SQLite, not in Iggy: native consumers never see an open transaction.
    assert iggy_count(iggy, topic) == 0
    with sqlite3.connect(b.state) as db:
        assert db.execute("SELECT count(*) FROM held_batches WHERE outcome = 0").fetchone()[0] >= 2, b.read_log()[-3000:]
        assert db.execute("SELECT state FROM transactions").fetchone()[0] == "Ongoing"
    p.abort_transaction(30)
    # The aborted records' offsets hold placeholders (docs/mapping.md, "Aborted records").
    assert wait_for(lambda: iggy_count(iggy, topic) == 10)
    p.begin_transaction()
    for i in range(10):
        p.produce(topic, f"c-{i}".encode(), partition=i % 2)
    p.commit_transaction(30)
    assert wait_for(lambda: iggy_count(iggy, topic) == 20)
    got = consume(b.port, topic, "read_committed", 10)
    assert sorted(v for _, _, v in got) == sorted(f"c-{i}" for i in range(10))
    # The aborted transaction's records took offsets 0-4 of each partition, as on Kafka.
    for part in (0, 1):
        assert [o for pp, o, _ in got if pp == part] == list(range(5, 10))
    with sqlite3.connect(b.state) as db:
        assert db.execute("SELECT count(*) FROM held_batches").fetchone()[0] == 0
        assert db.execute("SELECT state FROM transactions").fetchone()[0] == "CompleteCommit"


def test_a_second_producer_fences_the_first(bridge_factory, iggy):
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    topic = "txn-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic)
    first = producer(b.port, "fence-" + topic)
    first.begin_transaction()
    first.produce(topic, b"zombie", partition=0)
    first.flush(10)
    second = producer(b.port, "fence-" + topic)  # bumps the epoch and aborts the open transaction
    second.begin_transaction()
    second.produce(topic, b"live", partition=0)
    second.commit_transaction(30)
    with pytest.raises(ck.KafkaException) as e:
        first.produce(topic, b"zombie-2", partition=0)
        first.commit_transaction(10)
    assert e.value.args[0].fatal() or e.value.args[0].code() in (
        ck.KafkaError._FENCED, ck.KafkaError.PRODUCER_FENCED, ck.KafkaError.INVALID_PRODUCER_EPOCH)
    assert [v for _, _, v in consume(b.port, topic, "read_committed", 1)] == ["live"]


def test_invalid_transaction_timeout_is_refused(bridge_factory, iggy):
    b = bridge_factory(extra_toml="[transactions]\nmax_timeout_ms = 10000\n", iggy_address=iggy.address)
    b.start().wait_ready()
    p = ck.Producer({"bootstrap.servers": f"127.0.0.1:{b.port}", "transactional.id": "too-long",
                     "transaction.timeout.ms": 20000})
    with pytest.raises(ck.KafkaException) as e:
        p.init_transactions(20)
    assert "INVALID_TRANSACTION_TIMEOUT" in str(e.value) or "timeout" in str(e.value).lower()


def delivered(p, topic, values, partition=0):
    """Produces `values` to `partition` in the producer's open transaction; the delivery-report
    offsets, in produce order."""
    reports = {}
    for v in values:
        p.produce(topic, v.encode(), partition=partition,
                  on_delivery=lambda err, msg, v=v: reports.__setitem__(v, (err, msg.offset())))
    p.flush(10)
    assert all(err is None for err, _ in reports.values()), reports
    return [reports[v][1] for v in values]


def test_a_commit_decided_before_a_crash_is_completed_once(bridge_factory, iggy):
    """The bridge is killed with a transaction open (its batches held in SQLite with the offsets
    they were answered with); the state database is then edited into the state a crash right after
    the commit's decision leaves (the held batches committed, the transaction CompleteCommit). The
    restart appends every batch at its offsets. The same database again, now that the batches are
    in Iggy (a crash after the appends, before the rows were deleted): the restart appends
    nothing."""
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    topic = "txn-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic)
    p = producer(b.port, "crash-" + topic)
    p.begin_transaction()
    answered = {}
    for part in (0, 1):
        values = [f"r-{part}-{i}" for i in range(10)]
        answered.update(zip(values, delivered(p, topic, values, partition=part)))
    assert sorted(answered.values()) == sorted(list(range(10)) * 2)
    b.stop(signal.SIGKILL)
    with sqlite3.connect(b.state) as db:
        db.execute("UPDATE transactions SET state = 'CompleteCommit'")
        db.execute("UPDATE held_batches SET outcome = 1")
    decided = f"{b.state}.decided"
    # The backup API, not a file copy: the state database is in WAL mode and the rows may still
    # be in its -wal file.
    with sqlite3.connect(b.state) as src, sqlite3.connect(decided) as dst:
        src.backup(dst)

    b.start().wait_ready()
    deadline = time.time() + 20
    while iggy_count(iggy, topic) < 20 and time.time() < deadline:
        time.sleep(0.2)
    got = consume(b.port, topic, "read_committed", 20)
    assert {v: o for _, o, v in got} == answered
    with sqlite3.connect(b.state) as db:
        assert db.execute("SELECT count(*) FROM held_batches").fetchone()[0] == 0

    b.stop(signal.SIGKILL)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(f"{b.state}{suffix}"):
            os.remove(f"{b.state}{suffix}")
    with sqlite3.connect(decided) as src, sqlite3.connect(b.state) as dst:
        src.backup(dst)
    b.start().wait_ready()
    deadline = time.time() + 10
    while time.time() < deadline:
        with sqlite3.connect(b.state) as db:
            if db.execute("SELECT count(*) FROM held_batches").fetchone()[0] == 0:
                break
        time.sleep(0.2)
    assert iggy_count(iggy, topic) == 20
    got = consume(b.port, topic, "read_committed", 20)
    assert {v: o for _, o, v in got} == answered, b.read_log()[-4000:]


def test_offsets_answered_to_transactional_and_plain_producers_are_the_offsets_read(bridge_factory, iggy):
    """A committed transaction, an aborted one and plain records produced while each was open, on
    one partition: every delivery report names the offset a read_committed consumer later reads the
    record at, the aborted records' offsets stay taken (the consumer skips them), and a consumer
    that read everything is positioned at the high watermark."""
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    topic = "txn-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic, 1)
    plain = ck.Producer({"bootstrap.servers": f"127.0.0.1:{b.port}", "linger.ms": 0})

    def plain_send(values):
        reports = {}
        for v in values:
            plain.produce(topic, v.encode(), partition=0,
                          on_delivery=lambda err, msg, v=v: reports.__setitem__(v, (err, msg.offset())))
        assert plain.flush(10) == 0
        return {v: o for v, (err, o) in reports.items() if err is None}

    answered = plain_send(["before"])
    p = producer(b.port, "mixed-" + topic)
    p.begin_transaction()
    answered.update(zip(["c-0", "c-1"], delivered(p, topic, ["c-0", "c-1"])))
    answered.update(plain_send(["during-commit"]))
    answered.update(zip(["c-2"], delivered(p, topic, ["c-2"])))
    p.commit_transaction(30)
    p.begin_transaction()
    aborted = delivered(p, topic, ["a-0", "a-1", "a-2"])
    answered.update(plain_send(["during-abort"]))
    p.abort_transaction(30)
    answered.update(plain_send(["after"]))

    assert answered["before"] == 0
    assert [answered[v] for v in ("c-0", "c-1", "during-commit", "c-2")] == [1, 2, 3, 4]
    assert aborted == [5, 6, 7]
    assert answered["during-abort"] == 8 and answered["after"] == 9
    for isolation in ("read_committed", "read_uncommitted"):
        got = consume(b.port, topic, isolation, len(answered))
        assert {v: o for _, o, v in got} == answered, isolation
    assert iggy_count(iggy, topic, 1) == 10  # the aborted records' offsets hold placeholders


def test_a_transaction_open_at_a_crash_survives_it(bridge_factory, iggy):
    """As on Kafka, whose coordinator keeps an open transaction across a restart: the producer
    reconnects, carries on and commits; nothing is lost or doubled."""
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    topic = "txn-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic)
    p = producer(b.port, "open-" + topic)
    p.begin_transaction()
    for i in range(4):
        p.produce(topic, f"o-{i}".encode(), partition=i % 2)
    p.flush(10)
    b.stop(signal.SIGKILL)
    b.start().wait_ready()
    assert "still open after the restart" in b.read_log(since=b.log_start)
    with sqlite3.connect(b.state) as db:
        assert db.execute("SELECT state, producer_epoch FROM transactions").fetchone() == ("Ongoing", 0)
    for i in range(4, 8):
        p.produce(topic, f"o-{i}".encode(), partition=i % 2)
    p.commit_transaction(30)
    got = consume(b.port, topic, "read_committed", 8)
    assert sorted(v for _, _, v in got) == sorted(f"o-{i}" for i in range(8))
    assert iggy_count(iggy, topic) == 8


def test_offsets_sent_to_a_transaction_commit_with_it_and_not_on_abort(bridge_factory, iggy):
    """consume-transform-produce: the group's offsets are committed only by the commit."""
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    src, dst = "in-" + uuid.uuid4().hex[:8], "out-" + uuid.uuid4().hex[:8]
    create_topic(b.port, src, 1)
    create_topic(b.port, dst, 1)
    plain = ck.Producer({"bootstrap.servers": f"127.0.0.1:{b.port}"})
    for i in range(6):
        plain.produce(src, f"in-{i}".encode(), partition=0)
    plain.flush(10)
    group = "ctp-" + uuid.uuid4().hex[:8]
    c = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{b.port}", "group.id": group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "isolation.level": "read_committed"})
    c.assign([ck.TopicPartition(src, 0, 0)])
    p = producer(b.port, "ctp-" + src)

    def step(n, commit):
        got = []
        while len(got) < n:
            m = c.poll(5)
            assert m is not None and not m.error(), m and m.error()
            got.append(m)
        p.begin_transaction()
        for m in got:
            p.produce(dst, m.value().upper(), partition=0)
        p.send_offsets_to_transaction([ck.TopicPartition(src, 0, got[-1].offset() + 1)],
                                      c.consumer_group_metadata(), 20)
        if commit:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)

    def committed():
        admin = ck.Consumer({"bootstrap.servers": f"127.0.0.1:{b.port}", "group.id": group})
        try:
            return admin.committed([ck.TopicPartition(src, 0)], timeout=10)[0].offset
        finally:
            admin.close()

    step(3, commit=True)
    assert committed() == 3
    with sqlite3.connect(b.state) as db:
        assert db.execute("SELECT count(*) FROM transaction_offsets").fetchone()[0] == 0
    step(3, commit=False)
    assert committed() == 3  # the aborted transaction's offsets went with it
    c.close()
    assert [v for _, _, v in consume(b.port, dst, "read_committed", 3)] == ["IN-0", "IN-1", "IN-2"]


def test_a_transaction_past_its_timeout_is_aborted_and_its_producer_fenced(bridge_factory, iggy):
    b = bridge_factory(extra_toml="[transactions]\nabort_timed_out_interval_ms = 200\n", iggy_address=iggy.address)
    b.start().wait_ready()
    topic = "txn-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic, 1)
    p = producer(b.port, "slow-" + topic, **{"transaction.timeout.ms": 1000})
    p.begin_transaction()
    p.produce(topic, b"late", partition=0)
    p.flush(10)
    deadline = time.time() + 10
    while time.time() < deadline:
        with sqlite3.connect(b.state) as db:
            state, epoch = db.execute("SELECT state, producer_epoch FROM transactions").fetchone()
        if state == "CompleteAbort":
            break
        time.sleep(0.1)
    assert (state, epoch) == ("CompleteAbort", 1)
    assert "aborting 'slow-" + topic + "'" in b.read_log()
    with pytest.raises(ck.KafkaException):
        p.commit_transaction(10)
    # Its record's offset holds a placeholder; no Kafka consumer sees anything.
    assert wait_for(lambda: iggy_count(iggy, topic, 1) == 1)
    assert consume(b.port, topic, "read_uncommitted", 1, timeout=3) == []


def test_a_transaction_beyond_its_buffer_limit_is_refused(bridge_factory, iggy):
    b = bridge_factory(extra_toml="[transactions]\nmax_buffered_bytes = 4096\n", iggy_address=iggy.address)
    b.start().wait_ready()
    topic = "txn-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic, 1)
    p = producer(b.port, "big-" + topic, **{"linger.ms": 0, "batch.num.messages": 1})
    errors = []
    p.begin_transaction()
    for i in range(8):
        try:
            p.produce(topic, bytes(1000), partition=0, on_delivery=lambda err, msg: errors.append(err))
        except ck.KafkaException:  # the transaction is in its abortable error state after the refusal
            break
        p.flush(10)
    codes = {e.code() for e in errors if e is not None}
    assert ck.KafkaError.POLICY_VIOLATION in codes, errors
    assert "max_buffered_bytes" in b.read_log()
    with pytest.raises(ck.KafkaException):
        p.commit_transaction(10)
    p.abort_transaction(10)
    # What was held before the refusal became placeholders; no Kafka consumer sees anything.
    assert consume(b.port, topic, "read_uncommitted", 1, timeout=3) == []


def test_plain_records_behind_an_open_transaction_take_their_offsets_after_it(bridge_factory, iggy):
    """As Kafka's last stable offset holds read_committed readers at an open transaction's first
    offset: plain records produced meanwhile are acknowledged at once with the offsets after the
    transaction's, and readers see them when the transaction ends (read_uncommitted readers too:
    the records wait in SQLite until then, docs/transactions.md "What each reader sees")."""
    b = bridge_factory(iggy_address=iggy.address).start().wait_ready()
    topic = "txn-" + uuid.uuid4().hex[:8]
    create_topic(b.port, topic, 1)
    p = producer(b.port, "open-" + topic)
    p.begin_transaction()
    assert delivered(p, topic, ["txn-0"]) == [0]
    plain = ck.Producer({"bootstrap.servers": f"127.0.0.1:{b.port}"})
    offsets = []
    for i in range(3):
        plain.produce(topic, f"plain-{i}".encode(), partition=0,
                      on_delivery=lambda err, msg: offsets.append((err, msg.offset())))
    assert plain.flush(10) == 0
    assert offsets == [(None, 1), (None, 2), (None, 3)]
    for isolation in ("read_uncommitted", "read_committed"):
        assert consume(b.port, topic, isolation, 1, timeout=3) == []
    p.commit_transaction(30)
    assert [(o, v) for _, o, v in consume(b.port, topic, "read_committed", 4)] == \
        [(0, "txn-0"), (1, "plain-0"), (2, "plain-1"), (3, "plain-2")]
