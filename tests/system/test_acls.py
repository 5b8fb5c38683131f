"""ACLs on the real bridge (docs/security.md "Authorization"), with hand-written requests
(harness/kafka_wire/acl.py): CreateAcls, DescribeAcls and DeleteAcls answered as Kafka answers
them and kept across a restart; on a real iggy-server, a produce without WRITE and a fetch without READ are
refused with TOPIC_AUTHORIZATION_FAILED and nothing is written, Metadata lists only the topics the
principal may describe, and the refusal is logged in the authorizer's form. The connection's
principal is User:ANONYMOUS (a PLAINTEXT listener); `allow_everyone_if_no_acl_found` lets it
manage ACLs and topics (no ACL names the cluster), as the side-by-side test
(tests/clients/test_acls_tool.py) configures Kafka."""
import uuid

import pytest

from harness.kafka_wire import (Conn, batch, create_topic, latest_offset, parse_produce_v7, produce_v7, record,
                                recv_frame)
from harness.kafka_wire.acl import (ALL, ALLOW, ANY, CLUSTER, DENY, DESCRIBE, GROUP, LITERAL, MATCH, OP_ANY, PERM_ANY,
                                    PREFIXED, READ, TOPIC, TRANSACTIONAL_ID, WRITE, create_acls, delete_acls,
                                    describe_acls, fetch_v4, metadata_v1)

AUTHZ = "\n[authorization]\nenabled = true\nallow_everyone_if_no_acl_found = true\n"
NONE, TOPIC_AUTHORIZATION_FAILED, INVALID_REQUEST, SECURITY_DISABLED = 0, 29, 42, 54


def anonymous(resource_type, name, op, pattern=LITERAL, perm=ALLOW, principal="User:ANONYMOUS"):
    return (resource_type, name, pattern, principal, "*", op, perm)


def test_without_authorization_the_acl_apis_answer_security_disabled(bridge):
    c = Conn(bridge.port)
    try:
        for v in (1, 3):
            assert create_acls(c, [anonymous(TOPIC, "t", READ)], v) == [(SECURITY_DISABLED, "No Authorizer is configured.")]
            assert describe_acls(c, version=v)[:2] == (SECURITY_DISABLED, "No Authorizer is configured on the broker")
            res = delete_acls(c, [(ANY, None, ANY, None, None, OP_ANY, PERM_ANY)], v)
            assert [(e, m) for e, m, _ in res] == [(SECURITY_DISABLED, "No Authorizer is configured.")]
    finally:
        c.close()


def test_acls_are_answered_as_kafka_and_kept_across_a_restart(bridge_factory):
    b = bridge_factory(AUTHZ).start()  # the ACL APIs need no Iggy
    c = Conn(b.port)
    acls = [
        anonymous(TOPIC, "orders", READ, principal="User:alice"),
        (TOPIC, "orders", LITERAL, "User:alice", "10.0.0.1", WRITE, DENY),
        anonymous(GROUP, "app-", READ, PREFIXED, principal="User:*"),
        anonymous(TRANSACTIONAL_ID, "tx", WRITE, principal="User:alice"),
    ]
    assert create_acls(c, acls + [anonymous(CLUSTER, "other", ALL, principal="User:alice")], 3) == \
        [(NONE, "")] * 4 + [(INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster")]
    err, _, listed = describe_acls(c)
    assert err == NONE
    assert listed == {
        (TOPIC, "orders", LITERAL): {("User:alice", "*", READ, ALLOW), ("User:alice", "10.0.0.1", WRITE, DENY)},
        (GROUP, "app-", PREFIXED): {("User:*", "*", READ, ALLOW)},
        (TRANSACTIONAL_ID, "tx", LITERAL): {("User:alice", "*", WRITE, ALLOW)},
    }
    # MATCH: what applies to group app-1.
    assert describe_acls(c, (GROUP, "app-1", MATCH, None, None, OP_ANY, PERM_ANY), 1)[2] == \
        {(GROUP, "app-", PREFIXED): {("User:*", "*", READ, ALLOW)}}
    c.close()
    b.stop()
    b.start()
    c = Conn(b.port)
    try:
        assert describe_acls(c)[2] == listed
        res = delete_acls(c, [(TOPIC, "orders", LITERAL, "User:alice", None, OP_ANY, PERM_ANY)], 2)
        assert res == [(NONE, None, {(TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW),
                                     (TOPIC, "orders", LITERAL, "User:alice", "10.0.0.1", WRITE, DENY)})]
        assert set(describe_acls(c)[2]) == {(GROUP, "app-", PREFIXED), (TRANSACTIONAL_ID, "tx", LITERAL)}
    finally:
        c.close()


@pytest.fixture
def authz_bridge(bridge_factory, iggy):
    return bridge_factory(AUTHZ, iggy_address=iggy.address).start().wait_ready()


def test_produce_without_write_and_fetch_without_read_are_refused(authz_bridge):
    tag = uuid.uuid4().hex[:8]
    ro, wo = f"acl-ro-{tag}", f"acl-wo-{tag}"
    c = Conn(authz_bridge.port)
    try:
        create_topic(c.sock, ro, check=False)
        create_topic(c.sock, wo, check=False)
        assert create_acls(c, [anonymous(TOPIC, ro, READ), anonymous(TOPIC, wo, WRITE)]) == [(NONE, "")] * 2
        c.sock.sendall(produce_v7(11, ro, 0, batch(record(b"no"), 1)))
        assert parse_produce_v7(recv_frame(c.sock))[1] == TOPIC_AUTHORIZATION_FAILED
        assert latest_offset(c.sock, ro) == 0  # nothing was written (READ implies DESCRIBE)
        c.sock.sendall(produce_v7(12, wo, 0, batch(record(b"yes"), 1)))
        assert parse_produce_v7(recv_frame(c.sock))[1:] == (NONE, 0)
        assert fetch_v4(c, wo)[0] == TOPIC_AUTHORIZATION_FAILED
        assert fetch_v4(c, ro)[:2] == (NONE, 0)
        # The denial is logged in the form of Kafka's authorizer log.
        log = authz_bridge.read_log()
        assert (f"Principal = User:ANONYMOUS is Denied operation = WRITE from host = 127.0.0.1 on resource = "
                f"Topic:LITERAL:{ro} for request = Produce") in log
        # Taking the ACL away takes the right away at once.
        res = delete_acls(c, [(TOPIC, wo, LITERAL, None, None, OP_ANY, PERM_ANY)])
        assert res[0][0] == NONE and len(res[0][2]) == 1
        c.sock.sendall(produce_v7(13, wo, 0, batch(record(b"again"), 1)))
        assert parse_produce_v7(recv_frame(c.sock))[1] == NONE  # no ACL names it any more: everyone may
    finally:
        c.close()


def test_metadata_lists_only_the_topics_the_principal_may_describe(authz_bridge):
    tag = uuid.uuid4().hex[:8]
    shown, hidden, denied = f"acl-shown-{tag}", f"acl-hidden-{tag}", f"acl-denied-{tag}"
    c = Conn(authz_bridge.port)
    try:
        for t in (shown, hidden, denied):
            create_topic(c.sock, t, check=False)
        assert create_acls(c, [anonymous(TOPIC, hidden, READ, principal="User:bob"),
                               anonymous(TOPIC, denied, DESCRIBE, perm=DENY)]) == [(NONE, "")] * 2
        listed = metadata_v1(c)
        assert listed.get(shown) == NONE
        assert hidden not in listed and denied not in listed
        assert metadata_v1(c, [hidden, denied, shown]) == {hidden: TOPIC_AUTHORIZATION_FAILED,
                                                           denied: TOPIC_AUTHORIZATION_FAILED, shown: NONE}
        # Auto-creation needs CREATE on the cluster or the topic. Once an ACL names the cluster
        # (for an admin), the default no longer grants it; DESCRIBE alone does not create.
        nocreate = f"acl-nocreate-{tag}"
        assert create_acls(c, [anonymous(TOPIC, "acl-nocreate-", DESCRIBE, PREFIXED),
                               anonymous(CLUSTER, "kafka-cluster", ALL, principal="User:admin")]) == [(NONE, "")] * 2
        assert metadata_v1(c, [nocreate]) == {nocreate: TOPIC_AUTHORIZATION_FAILED}
        assert nocreate not in metadata_v1(c)
        # And the cluster's ACL took CreateAcls away from everyone but the admin.
        assert create_acls(c, [anonymous(TOPIC, shown, READ)]) == [(31, None)]
    finally:
        c.close()
