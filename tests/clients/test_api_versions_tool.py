"""kafka-broker-api-versions (org.apache.kafka.tools.BrokerApiVersionsCommand) against the target."""
from __future__ import annotations

import pytest

from harness import util
from runners import java

# APIs the bridge must serve for the clients of this tier (DESIGN.md §3, GOTCHAS.md).
REQUIRED = ["Produce", "Fetch", "ListOffsets", "Metadata", "OffsetCommit", "OffsetFetch", "FindCoordinator",
            "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup", "DescribeGroups", "ListGroups",
            "SaslHandshake", "ApiVersions", "CreateTopics", "DeleteTopics", "InitProducerId"]


def test_broker_api_versions(target):
    if not java.available():
        util.skip_loudly("java/javac not installed")
    text = java.api_versions(target.bootstrap)
    apis = java.parse_api_versions(text)
    assert apis, f"no API lines in BrokerApiVersionsCommand output:\n{text}"
    missing = [a for a in REQUIRED if a not in apis]
    assert not missing, f"not listed: {missing}\n{text}"
    unusable = {a: apis[a]["text"] for a in REQUIRED if apis[a]["usable"] is None}
    assert not unusable, f"listed but not usable by kafka-clients {java.version()}: {unusable}\n{text}"
    # KIP-896 / GOTCHAS: Produce is advertised from v0, Fetch served from v4.
    assert apis["Produce"]["range"][0] == 0, apis["Produce"]
    assert apis["ApiVersions"]["range"][0] == 0, apis["ApiVersions"]
