"""Issue 31, finding 2: one principal writing into another principal's transaction.

alice may write transactional id `alice-tx` and the topic; admin runs a transaction under
`admin-tx`. Before the fix the coordinator found a transactional batch's transaction by its
producer id alone, whatever transactional id the request named (the one WRITE was checked on):
alice, knowing admin's producer id, epoch and next sequence (DescribeProducers tells them to
anyone who may read the topic), sent a batch naming `alice-tx` with admin's producer id; it was
accepted into admin's transaction, admin's own next batch was then answered as a duplicate and
dropped, and the commit published alice's record in place of admin's.

Asserted: that Produce gets INVALID_PRODUCER_ID_MAPPING (as Kafka's partition verification
answers), so does an idempotent (non-transactional) batch under admin's producer id, admin's
batches all commit and nothing of alice's is in the topic; others keep their latency."""
import struct, uuid

import pytest

from hostile import assert_serves_others, probe_latencies
from harness.kafka_wire import (TRANSACTIONAL, Conn, array, batch as batch_of, create_topic, decode_batches,
                                fetch_v4_body, init_producer_id_v1, produce_v7_body, record, string)
from harness.kafka_wire.acl import ALLOW, LITERAL, READ, TOPIC, TRANSACTIONAL_ID, WRITE, create_acls
from harness.kafka_wire.sasl import SaslConn, plain
from test_sasl import sasl_factory  # noqa: F401  (a fixture)

NONE, INVALID_REQUEST, INVALID_PRODUCER_ID_MAPPING, TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 0, 42, 49, 53


def login(port, user, password):
    """A wire connection authenticated with SASL/PLAIN as `user`."""
    c = SaslConn(port)
    err, _ = c.handshake("PLAIN")
    assert err == 0
    err, msg, _, _ = c.authenticate(plain("", user, password))
    assert err == 0, msg
    c.client_id = "kib-admin-test"
    return c


def init_producer_id(c, txn_id):
    return init_producer_id_v1(c, txn_id)


def add_partitions(c, txn_id, pid, epoch, topic, partition=0):
    body = string(txn_id) + struct.pack(">qh", pid, epoch)
    body += array([string(topic) + array([struct.pack(">i", partition)])])
    r = c.call(24, 1, body, False)
    r.int32()
    return r.array32(lambda: (r.str16(), r.array32(lambda: (r.int32(), r.int16()))))


def end_txn(c, txn_id, pid, epoch, commit):
    r = c.call(26, 1, string(txn_id) + struct.pack(">qh?", pid, epoch, commit), False)
    r.int32()
    return r.int16()


def batch(pid, epoch, seq, values, attributes):
    recs = b"".join(record(v, i) for i, v in enumerate(values))
    return batch_of(recs, len(values), attributes, producer_id=pid, producer_epoch=epoch, base_sequence=seq)


def produce_error(c, txn_id, topic, records, partition=0):
    r = c.call(0, 7, produce_v7_body(topic, [(partition, records)], transactional_id=txn_id, acks=-1), False)
    r.int32()  # topics
    r.str16()
    r.int32()  # partitions
    r.int32()  # index
    return r.int16()


def values_in(records):
    """The values of the records of v2 batches, in order (control batches left out)."""
    return [rec[3] for header, recs in decode_batches(records, check_crc=False) if not header["control"]
            for rec in recs]


def fetch_values(c, topic, partition=0):
    read_committed = 1
    body = fetch_v4_body([(topic, partition, 0, 1 << 20)], min_bytes=0, max_bytes=1 << 20, isolation=read_committed)
    r = c.call(1, 4, body, False)
    r.int32()
    r.int32()
    r.str16()
    r.int32()
    r.int32()
    err = r.int16()
    r.unpack("qq")  # high watermark, last stable offset
    r.array32(lambda: r.unpack("qq"))  # aborted transactions
    records = r.nbytes()
    return err, values_in(records or b"")


@pytest.fixture
def secured(sasl_factory, iggy):
    b = sasl_factory('[sasl]\nenabled_mechanisms = ["PLAIN"]\n'
                     '[authorization]\nenabled = true\nsuper_users = ["User:admin"]\n', iggy_address=iggy.address)
    b.add_user("admin", "PLAIN", "admin-secret")
    b.add_user("alice", "PLAIN", "alice-secret")
    return b.start().wait_ready()


def test_a_transactional_id_must_own_the_producer_id_of_its_batches(secured):
    b = secured
    topic = "shared-" + uuid.uuid4().hex[:8]
    admin = login(b.sasl_port, "admin", "admin-secret")
    create_topic(admin.sock, topic, check=False)
    admin.corr = 10
    assert create_acls(admin, [(TRANSACTIONAL_ID, "alice-tx", LITERAL, "User:alice", "*", WRITE, ALLOW),
                               (TOPIC, topic, LITERAL, "User:alice", "*", WRITE, ALLOW),
                               (TOPIC, topic, LITERAL, "User:alice", "*", READ, ALLOW)]) == [(0, "")] * 3
    idle = probe_latencies(b.port)

    err, pid, epoch = init_producer_id(admin, "admin-tx")
    assert err == NONE
    assert add_partitions(admin, "admin-tx", pid, epoch, topic) == [(topic, [(0, NONE)])]
    assert produce_error(admin, "admin-tx", topic, batch(pid, epoch, 0, [b"admin-0"], TRANSACTIONAL)) == NONE

    alice = login(b.sasl_port, "alice", "alice-secret")
    err, alice_pid, _ = init_producer_id(alice, "alice-tx")
    assert err == NONE and alice_pid != pid
    # alice names the transactional id she may write, with admin's producer id and next sequence.
    assert produce_error(alice, "alice-tx", topic, batch(pid, epoch, 1, [b"alice-evil"], TRANSACTIONAL)) == \
        INVALID_PRODUCER_ID_MAPPING
    # Naming no transactional id at all does not help her either (refused before the coordinator,
    # as KafkaApis does: transactional records need WRITE on the transactional id named).
    assert produce_error(alice, None, topic, batch(pid, epoch, 1, [b"alice-evil"], TRANSACTIONAL)) == \
        TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    # Nor does an idempotent batch under admin's producer id.
    assert produce_error(alice, None, topic, batch(pid, epoch, 1, [b"alice-idem"], 0)) == INVALID_PRODUCER_ID_MAPPING
    during = probe_latencies(b.port)
    # admin's next batch is not taken for a duplicate: its sequence was never used.
    assert produce_error(admin, "admin-tx", topic, batch(pid, epoch, 1, [b"admin-1"], TRANSACTIONAL)) == NONE
    assert end_txn(admin, "admin-tx", pid, epoch, True) == NONE
    err, values = fetch_values(admin, topic)
    assert err == NONE
    assert values == [b"admin-0", b"admin-1"]
    assert "is not that of transactional id 'alice-tx'" in b.read_log()
    assert_serves_others(idle, during, "transaction injection")
    # alice's own transaction still works.
    assert add_partitions(alice, "alice-tx", alice_pid, 0, topic) == [(topic, [(0, NONE)])]
    assert produce_error(alice, "alice-tx", topic, batch(alice_pid, 0, 0, [b"alice-0"], TRANSACTIONAL)) == NONE
    assert end_txn(alice, "alice-tx", alice_pid, 0, True) == NONE
    assert fetch_values(admin, topic)[1] == [b"admin-0", b"admin-1", b"alice-0"]


def test_without_authorization_the_mapping_is_checked_all_the_same(bridge_on_iggy):
    """No ACLs to stop anyone: the coordinator's own check is what refuses the batch."""
    b = bridge_on_iggy
    topic = "shared-" + uuid.uuid4().hex[:8]
    c = Conn(b.port, client_id="kib-admin-test")
    create_topic(c.sock, topic, check=False)
    c.corr = 10
    err, pid, epoch = init_producer_id(c, "owner-tx")
    assert err == NONE
    assert add_partitions(c, "owner-tx", pid, epoch, topic) == [(topic, [(0, NONE)])]
    evil = batch(pid, epoch, 0, [b"evil"], TRANSACTIONAL)
    assert produce_error(c, None, topic, evil) == INVALID_REQUEST
    assert produce_error(c, "unknown-tx", topic, evil) == INVALID_PRODUCER_ID_MAPPING
    err, other_pid, _ = init_producer_id(c, "other-tx")
    assert err == NONE
    assert produce_error(c, "other-tx", topic, evil) == INVALID_PRODUCER_ID_MAPPING
    assert produce_error(c, "owner-tx", topic, batch(pid, epoch, 0, [b"mine"], TRANSACTIONAL)) == NONE
    assert end_txn(c, "owner-tx", pid, epoch, True) == NONE
    assert fetch_values(c, topic)[1] == [b"mine"]
