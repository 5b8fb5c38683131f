"""kafka-broker-api-versions (org.apache.kafka.tools.BrokerApiVersionsCommand) against the target."""
from __future__ import annotations

import os
import re

from harness import util
from runners import java

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def served_by_registry() -> dict[int, tuple[int, int]]:
    """api key -> (advertised min, max) from the registrations in src/server/handlers/*.cc
    (serve<msg::FooRequest>(min, max, ...)), the one list the bridge builds ApiVersions from;
    each request message's key and version constants from its generated header."""
    generated = os.path.join(ROOT, "src", "kafka", "protocol", "generated")
    specs = {}  # request message -> (api key, spec's lowest version, lowest version Kafka advertises)
    for name in os.listdir(generated):
        if name.endswith(".h"):
            text = open(os.path.join(generated, name)).read()
            for m, k, lo, adv in re.findall(
                    r"struct (\w+Request) \{\s*static constexpr int16_t kApiKey = (\d+);"
                    r"\s*static constexpr int16_t kMinVersion = (\d+);.*?"
                    r"static constexpr int16_t kApiVersionsMinVersion = (\d+);", text, re.S):
                specs[m] = (int(k), int(lo), int(adv))
    handlers = os.path.join(ROOT, "src", "server", "handlers")
    served = {}
    for name in sorted(os.listdir(handlers)):
        if name.endswith(".cc"):
            text = open(os.path.join(handlers, name)).read()
            for m, mn, mx in re.findall(r"serve<msg::(\w+Request)>\(\s*(\d+),\s*(\d+),", text):
                key, lo, adv = specs[m]
                assert key not in served, f"{m} registered twice"
                # registry.h: advertised from the lowest served version, or from where Kafka's
                # ApiVersions starts the API when that is the spec's lowest (Produce: v0).
                served[key] = (adv if int(mn) == lo else int(mn), int(mx))
    return served


def listed(text: str) -> dict[int, tuple[int, int]]:
    # "Name(key): lo to hi [usable: v]", or "Name(key): v [usable: v]" for a single version; an API
    # the tool's client does not know (StreamsGroupTopologyDescriptionUpdate, 93, is newer than
    # the 4.1 tools) is printed "UNKNOWN(key): lo to hi" with no usable version.
    return {int(k): (int(lo), int(hi or lo))
            for _n, k, lo, hi in re.findall(r"(\w+)\((\d+)\): (\d+)(?: to (\d+))?(?= \[usable|,|\n|\)|$)", text)}


def test_broker_api_versions(target):
    if not java.available():
        util.skip_loudly("java/javac not installed")
    text = java.api_versions(target.bootstrap)
    apis = java.parse_api_versions(text)
    assert apis, f"no API lines in BrokerApiVersionsCommand output:\n{text}"
    # The clients of this tier need at least these on any broker.
    for name in ("Produce", "Fetch", "ListOffsets", "Metadata", "ApiVersions", "InitProducerId"):
        assert apis[name]["usable"] is not None, f"{name} not usable:\n{text}"
    # KIP-896 / KAFKA-18659: Produce is advertised from v0.
    assert apis["Produce"]["range"][0] == 0, apis["Produce"]
    assert apis["ApiVersions"]["range"][0] == 0, apis["ApiVersions"]
    if target.name == "bridge":
        # Exactly the registry's ranges, each usable by the Java client, and nothing else.
        assert listed(text) == served_by_registry(), text
