"""Transaction version 2 (KIP-890 part 2) with the Java client, on the reference Kafka broker at
transaction.version 2 (Kafka 4.1 formats a new cluster at 2) and on a bridge whose `[transactions]
transaction_version` is 2: the scenarios of test_transactions.py's TxnClient.java (visibility,
fencing by a second producer, consume-transform-produce with the group's offsets), now with no
AddPartitionsToTxn or AddOffsetsToTxn (Produce v12 and TxnOffsetCommit v5 add the partition and
the group) and an epoch bump at every EndTxn v5.

On each target the same outcomes are asserted as at transaction version 1; on the bridge, its
/metrics show that the client spoke version 2 (EndTxn v5 and Produce v12 received, no
AddPartitionsToTxn or AddOffsetsToTxn), and `kafka-features describe` prints the feature as on
Kafka. The offsets the client was told for its transactional records are where read_committed
reads them, on both targets.
"""
from __future__ import annotations

import re

import pytest

from conftest import TIMINGS, Target
from harness import bridge as bridge_mod
from harness import iggy_server, util
from test_transactions import COMMITTED, fenced, java_results, kgo_txn_etl, set_transaction_version


@pytest.fixture(scope="module")
def kafka_tv2(kafka_broker):
    before = set_transaction_version(kafka_broker.bootstrap, 2)
    TIMINGS["kafka_transaction_version_tv2_module"] = f"{before}->2"
    yield kafka_broker
    if before != 2:
        set_transaction_version(kafka_broker.bootstrap, before)


@pytest.fixture(scope="module")
def tv2_bridge(request):
    """A bridge on the session's iggy-server (its own stream) that finalizes transaction.version 2."""
    binary = bridge_mod.binary_or_skip()
    srv = request.getfixturevalue("iggy")
    br = bridge_mod.start_client_tier_bridge(binary, srv.address, iggy_server.USERNAME, iggy_server.PASSWORD,
                                             log_name="bridge-tv2.log", stream="kafka-tv2", http=True,
                                             extra_toml="\n[transactions]\ntransaction_version = 2\n")
    try:
        yield Target("bridge", br.bootstrap, br)
    finally:
        br.cleanup()


@pytest.fixture(params=["kafka", "bridge"])
def tv2_target(request) -> Target:
    if request.param == "kafka":
        return request.getfixturevalue("kafka_tv2")
    return request.getfixturevalue("tv2_bridge")


def requests_by_version(target: Target, api: str) -> dict[int, float]:
    """kib_requests_total{api=...} of the bridge, by version."""
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{target.server.http_port}/metrics", timeout=10) as r:
        body = r.read().decode()
    out: dict[int, float] = {}
    for m in re.finditer(r'^kib_requests_total\{api="%s",version="(\d+)"\} (\S+)$' % re.escape(api), body, re.M):
        out[int(m.group(1))] = float(m.group(2))
    return out


def test_java_client_transactions_at_version_2(tv2_target):
    target = tv2_target
    name = f"{target.name}-tv2"
    obs = java_results(target.bootstrap, name)
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
        # The client spoke transaction version 2 to this bridge, which nothing else uses.
        end_txn, produce = requests_by_version(target, "EndTxn"), requests_by_version(target, "Produce")
        assert end_txn.get(5, 0) >= 3 and set(end_txn) == {5}, end_txn
        assert produce.get(12, 0) >= 1, produce
        assert requests_by_version(target, "AddPartitionsToTxn") == {}, "a version 2 client added partitions itself"
        assert requests_by_version(target, "AddOffsetsToTxn") == {}, "a version 2 client added the group itself"


def test_kafka_features_describes_the_transaction_version(tv2_target):
    """kafka-features describe prints transaction.version's supported range and finalized level
    as Kafka does (the bridge lists no other feature)."""
    from harness.tool_shell import ToolSession

    target = tv2_target
    with ToolSession("org.apache.kafka.tools.FeatureCommand", target.bootstrap,
                     util.log_dir() / f"features-{target.name}-tv2.log") as features:
        r = features.run("describe")
    line = re.search(r"^Feature: transaction\.version\s.*$", r.stdout, re.M)
    assert r.exit_code == 0 and line, r.stdout + r.stderr
    fields = dict(re.findall(r"(\w+): (\S+)", line.group(0)))
    assert (fields["SupportedMinVersion"], fields["SupportedMaxVersion"], fields["FinalizedVersionLevel"]) == \
        ("0", "2", "2"), line.group(0)


def test_franz_go_own_txn_etl_test_at_version_2(tv2_target):
    """franz-go's TestTxnEtl (test_transactions.py) with the feature at 2: franz-go then sends
    Produce v12 and EndTxn v5 and no AddPartitionsToTxn."""
    kgo_txn_etl(tv2_target, 2)
    if tv2_target.name == "bridge":
        assert requests_by_version(tv2_target, "EndTxn").keys() == {5}, requests_by_version(tv2_target, "EndTxn")
