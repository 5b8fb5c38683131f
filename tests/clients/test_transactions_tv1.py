"""Transaction version 1 for the clients that know both versions, on the reference Kafka broker
downgraded to transaction.version 1 and on a bridge whose `[transactions] transaction_version`
is 1: the scenarios of test_transactions.py's TxnClient.java (visibility, fencing by a second
producer, consume-transform-produce with the group's offsets) and franz-go's own TestTxnEtl, now
with AddPartitionsToTxn and AddOffsetsToTxn and no epoch bump at EndTxn (test_transactions.py
runs both targets at version 2, Kafka 4.x's level for a new cluster and the bridge's default).

On each target the same outcomes are asserted as at version 2; on the bridge, its /metrics show
that the clients spoke version 1 (AddPartitionsToTxn received, no EndTxn v5), and
`kafka-features describe` prints the level as on Kafka. The offsets the client was told for its
transactional records are where read_committed reads them, on both targets.
"""
from __future__ import annotations

import pytest

from conftest import Target, side_bridge
from test_transactions import (COMMITTED, features_describe, fenced, java_results, kafka_at_transaction_version,
                               kgo_txn_etl, requests_by_version)


@pytest.fixture(scope="module")
def kafka_tv1(kafka_broker):
    yield from kafka_at_transaction_version(kafka_broker, 1)


@pytest.fixture(scope="module")
def tv1_bridge(request):
    """A bridge on the session's iggy-server (its own stream) that finalizes transaction.version 1."""
    yield from side_bridge(request, "bridge", "tv1", "\n[transactions]\ntransaction_version = 1\n")


@pytest.fixture(params=["kafka", "bridge"])
def tv1_target(request) -> Target:
    if request.param == "kafka":
        return request.getfixturevalue("kafka_tv1")
    return request.getfixturevalue("tv1_bridge")


def assert_spoke_version_1(target: Target):
    """The bridge received version 1's transactional requests only (no other client uses this
    bridge). Produce v12 is not counted: non-transactional producers of the same clients send it
    at either level."""
    end_txn = requests_by_version(target, "EndTxn")
    assert end_txn and max(end_txn) <= 4, end_txn
    assert requests_by_version(target, "AddPartitionsToTxn"), "a version 1 client added no partition"


def test_java_client_transactions_at_version_1(tv1_target):
    target = tv1_target
    obs = java_results(target.bootstrap, f"{target.name}-tv1")
    vis, eos = obs["visibility"], obs["eos"]
    assert "error" not in vis and "error" not in eos, obs
    rc = vis["read_committed"]
    assert rc["error"] is None and rc["values"] == COMMITTED, rc
    assert rc["offsets"] == sorted(set(rc["offsets"])), rc
    # The offsets the producer was told are where a read_committed consumer reads the records.
    read_at = dict(zip(rc["values"], rc["offsets"]))
    assert vis["txn_offsets"] == [read_at[v] for v in ("A0", "A1", "A2", "C0", "C1")], (vis["txn_offsets"], rc)
    for how in ("commit", "send"):
        f = obs[f"fence_{how}"]
        assert "error" not in f and f["read_committed"]["values"] == ["G0", "END"], f
        assert fenced("java", f), (how, f)
    assert eos["generation"] >= 1 and eos["committed"] == 3, eos
    assert eos["out0"]["values"] == ["o0", "o2", "END"] and eos["out1"]["values"] == ["o1", "END"], eos
    if target.name == "bridge":
        assert_spoke_version_1(target)
        assert requests_by_version(target, "AddOffsetsToTxn"), "a version 1 client added no group"


def test_kafka_features_describes_the_transaction_version_at_1(tv1_target):
    features_describe(tv1_target, 1, f"features-{tv1_target.name}-tv1.log")


def test_franz_go_own_txn_etl_test_at_version_1(tv1_target):
    """franz-go's TestTxnEtl (test_transactions.py) with the feature at 1: franz-go then adds
    partitions with AddPartitionsToTxn and ends with EndTxn v4 or below."""
    kgo_txn_etl(tv1_target, 1)
    if tv1_target.name == "bridge":
        assert_spoke_version_1(tv1_target)
