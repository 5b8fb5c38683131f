"""DescribeCluster (key 60) v0-2 on the wire, with the hand-written codec of harness/kafka_wire:
the one broker (advertised address, no rack, not fenced), controller = own node id, the
configured cluster id, EndpointType errors and the authorized-operations field, as a single
KRaft broker answers (tests/clients/test_admin_clients.py compares the tools' output with
Kafka's). Needs no iggy-server: DescribeCluster reads only the config and the cluster id."""
import struct

from harness.kafka_wire import Reader, connect, recv_frame, request

CLUSTER_ID = "kib-describe-cluster-test"
INT32_MIN = -2147483648
# CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
# IDEMPOTENT_WRITE 12: what Kafka 4.1 without an authorizer answers when asked.
ALL_CLUSTER_OPS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))


def describe_cluster_body(version, include_ops=False, endpoint_type=1, include_fenced=False):
    body = struct.pack(">?", include_ops)
    if version >= 1:
        body += struct.pack(">b", endpoint_type)
    if version >= 2:
        body += struct.pack(">?", include_fenced)
    return body + b"\x00"


def parse_describe_cluster(frame, version):
    r = Reader(frame, flexible=True)
    corr = r.int32()
    r.tagged_fields()  # response header v1
    throttle, err = r.int32(), r.int16()
    out = {"corr": corr, "throttle": throttle, "error": err, "message": r.compact_string(), "endpoint_type": 1}
    if version >= 1:
        out["endpoint_type"] = r.int8()
    out["cluster_id"] = r.compact_string()
    out["controller_id"] = r.int32()

    def broker():
        b = {"id": r.int32(), "host": r.compact_string(), "port": r.int32(), "rack": r.compact_string()}
        if version >= 2:
            b["fenced"] = r.unpack("?")
        assert r.uvarint() == 0, "broker tagged fields"
        return b
    out["brokers"] = r.compact_array(broker)
    out["ops"] = r.int32()
    assert r.uvarint() == 0, "tagged fields"
    assert r.pos == len(frame), "trailing bytes"
    return out


def describe_cluster(port, version, corr=7, **kw):
    with connect(port) as s:
        s.sendall(request(60, version, corr, describe_cluster_body(version, **kw), flexible=True))
        r = parse_describe_cluster(recv_frame(s), version)
    assert r["corr"] == corr
    return r


def test_the_one_broker_is_the_controller_at_every_version(bridge_factory):
    b = bridge_factory(kafka_extra=f'node_id = 3\ncluster_id = "{CLUSTER_ID}"\n'
                                   'advertised_host = "kafka.example"\nadvertised_port = 19092\n').start()
    for v in (0, 1, 2):
        r = describe_cluster(b.port, v)
        assert r["error"] == 0 and r["message"] is None, r
        assert r["throttle"] == 0
        assert r["endpoint_type"] == 1
        assert r["cluster_id"] == CLUSTER_ID
        assert r["controller_id"] == 3
        expected = {"id": 3, "host": "kafka.example", "port": 19092, "rack": None}
        if v >= 2:
            expected["fenced"] = False
        assert r["brokers"] == [expected]
        assert r["ops"] == INT32_MIN  # not asked for


def test_include_fenced_brokers_changes_nothing(bridge):
    plain = describe_cluster(bridge.port, 2)
    fenced = describe_cluster(bridge.port, 2, include_fenced=True)
    assert fenced == plain
    assert [b["fenced"] for b in fenced["brokers"]] == [False]


def test_cluster_authorized_operations_when_asked(bridge):
    for v in (0, 2):
        r = describe_cluster(bridge.port, v, include_ops=True)
        assert r["error"] == 0
        assert r["ops"] == ALL_CLUSTER_OPS


def test_cluster_id_is_stable_across_restarts(bridge_factory):
    b = bridge_factory().start()
    first = describe_cluster(b.port, 2)["cluster_id"]
    assert first
    b.stop()
    b.start()
    assert describe_cluster(b.port, 2)["cluster_id"] == first


def test_controller_endpoint_type_is_mismatched(bridge):
    for v in (1, 2):
        r = describe_cluster(bridge.port, v, endpoint_type=2)
        assert r["error"] == 114, r  # MISMATCHED_ENDPOINT_TYPE
        assert r["message"] == ("The request was sent to an endpoint of type BROKER, "
                                "but we wanted an endpoint of type CONTROLLER")
        assert r["brokers"] == [] and r["cluster_id"] == "" and r["controller_id"] == -1
        assert r["ops"] == INT32_MIN


def test_unknown_endpoint_type_is_unsupported(bridge):
    for t in (0, 3):
        r = describe_cluster(bridge.port, 1, endpoint_type=t)
        assert r["error"] == 115, r  # UNSUPPORTED_ENDPOINT_TYPE
        assert r["message"] == f"Unsupported endpoint type {t}"
        assert r["brokers"] == []


def test_advertised_in_api_versions(bridge):
    from harness.kafka_wire import api_versions_request, parse_api_versions
    with connect(bridge.port) as s:
        s.sendall(api_versions_request(3, 1))
        _, err, apis = parse_api_versions(recv_frame(s), 3)
    assert err == 0
    assert apis[60] == (0, 2)
