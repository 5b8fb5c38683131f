"""Fixtures of the client test tier.

kafka_broker  session: a real single-node KRaft Kafka broker (harness/kafka_broker.py)
iggy          session: iggy-server ($IGGY_SERVER, PATH, /usr/local/bin); skipped loudly if absent
bridge        session: the bridge binary ($BRIDGE_BIN or build/release/kafka-iggy-bridge) on iggy
target        function, parametrized "kafka" / "bridge": a Target(name, bootstrap) so one test
              body runs against both
secure_kafka, secure_bridge   module: the Kafka broker and the bridge with SASL_SSL and SSL
              listeners, the same certificates, users and super users (harness/security.py),
              started only by the modules that ask for them (test_security.py); each a
              SecureTarget(name, bootstrap, sasl_ssl, ssl, certs)

Environment:
  KIB_KAFKA_BOOTSTRAP=host:port   use an already running Kafka instead of starting one
  KIB_BRIDGE_TARGET=auto|off|xfail
        auto (default): bridge tests run when the bridge binary and iggy-server exist
        off:   every bridge-targeted test is skipped, with that reason
        xfail: bridge-targeted tests run, failures are reported as xfail (while it is built)
  KIB_CLIENTS=kcat,java           run a subset of the clients
  KIB_TEST_LOG_DIR                where process logs go (default build/test-logs/clients)
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import bridge as bridge_mod  # noqa: E402
from harness import iggy_server, security, util  # noqa: E402
from harness.kafka_broker import BrokerSecurity, KafkaBroker, kafka_version  # noqa: E402

TIMINGS: dict[str, float | str] = {}
_SESSION_START = time.monotonic()


@dataclass(frozen=True)
class Target:
    name: str  # "kafka", "bridge" or "bridge-rebuilt"
    bootstrap: str
    server: object = None  # the harness's BridgeProcess, for its /metrics


def bridge_mode() -> str:
    try:
        return bridge_mod.target_mode()
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None


@pytest.fixture(scope="session")
def kafka_broker():
    external = os.environ.get("KIB_KAFKA_BOOTSTRAP")
    if external:
        yield Target("kafka", external)
        return
    if shutil.which("java") is None:
        util.skip_loudly("no java: cannot run the reference Kafka broker (Java 17+ needed)")
    kb = KafkaBroker()
    try:
        kb.start()
    except BaseException:
        kb.stop()
        raise
    TIMINGS["kafka_version"] = kafka_version(kb.lib)
    TIMINGS["kafka_format_s"] = round(kb.format_seconds, 2)
    TIMINGS["kafka_broker_start_s"] = round(kb.startup_seconds, 2)
    TIMINGS["kafka_total_start_s"] = round(kb.total_seconds, 2)
    try:
        yield Target("kafka", kb.bootstrap)
    finally:
        t = time.monotonic()
        kb.stop()
        TIMINGS["kafka_stop_s"] = round(time.monotonic() - t, 2)


@pytest.fixture(scope="session")
def kafka_next():
    """The newer reference tier's broker (tests/java/pom-next.xml, Kafka 4.4): for what Kafka
    added after the pinned version (OffsetCommit/OffsetFetch v10, streams groups). Started only
    by the tests that ask for it."""
    if shutil.which("java") is None:
        util.skip_loudly("no java: cannot run the newer reference Kafka broker (Java 17+ needed)")
    kb = KafkaBroker(log_name="kafka-broker-next.log", next_tier=True)
    try:
        kb.start()
    except BaseException:
        kb.stop()
        raise
    TIMINGS["kafka_next_version"] = kafka_version(kb.lib)
    try:
        yield Target("kafka-next", kb.bootstrap)
    finally:
        kb.stop()


@pytest.fixture(params=["kafka-next", "bridge"])
def target_next(request) -> Target:
    """`target` with the newer reference tier's Kafka beside the bridge."""
    if request.param == "kafka-next":
        return request.getfixturevalue("kafka_next")
    return request.getfixturevalue("bridge")


@pytest.fixture(scope="session")
def iggy():
    binary = iggy_server.find_binary()
    if binary is None:
        env = os.environ.get("IGGY_SERVER")
        where = f"IGGY_SERVER={env} is not an executable file" if env else \
            "set IGGY_SERVER, or put iggy-server on PATH or in /usr/local/bin"
        util.skip_loudly(f"no iggy-server ({where})")
    srv = iggy_server.IggyServer(binary)
    try:
        srv.start()
    except BaseException:
        srv.stop()
        raise
    TIMINGS["iggy_start_s"] = round(srv.startup_seconds, 2)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="session")
def bridge(request):
    mode = bridge_mode()
    if mode == "off":
        util.skip_loudly("bridge target disabled (KIB_BRIDGE_TARGET=off)")
    binary = bridge_mod.find_binary()
    if binary is None:
        util.skip_loudly(f"no bridge binary at {os.environ.get('BRIDGE_BIN', 'build/release/kafka-iggy-bridge')} "
                         "(build it with make, or set BRIDGE_BIN to an executable)")
    srv = request.getfixturevalue("iggy")
    try:
        br = bridge_mod.start_client_tier_bridge(binary, srv.address, iggy_server.USERNAME, iggy_server.PASSWORD,
                                                 http=True)
    except BaseException as e:
        if mode == "xfail":
            pytest.xfail(f"bridge did not start (KIB_BRIDGE_TARGET=xfail): {e}")
        raise
    TIMINGS["bridge_start_s"] = round(br.start_seconds[-1], 2)
    try:
        yield Target("bridge", br.bootstrap, br)
    finally:
        br.cleanup()


def side_bridge(request, name: str, suffix: str, extra_toml: str):
    """A fixture's body: another bridge on the session's iggy-server, in its own stream
    (kafka-<suffix>, log bridge-<suffix>.log, HTTP on) with `extra_toml`, as Target `name`."""
    binary = bridge_mod.binary_or_skip()
    srv = request.getfixturevalue("iggy")
    br = bridge_mod.start_client_tier_bridge(binary, srv.address, iggy_server.USERNAME, iggy_server.PASSWORD,
                                             log_name=f"bridge-{suffix}.log", stream=f"kafka-{suffix}", http=True,
                                             extra_toml=extra_toml)
    try:
        yield Target(name, br.bootstrap, br)
    finally:
        br.cleanup()


@pytest.fixture(scope="module")
def rebuilt_bridge(request):
    """A second bridge with the produced-batch cache off ([limits] produced_batch_cache_bytes =
    0): every batch it answers is rebuilt from Iggy."""
    yield from side_bridge(request, "bridge-rebuilt", "rebuilt", "\n[limits]\nproduced_batch_cache_bytes = 0\n")


@dataclass(frozen=True)
class SecureTarget:
    name: str  # "kafka" or "bridge"
    bootstrap: str  # PLAINTEXT (User:ANONYMOUS, a super user as Kafka's inter-broker listener needs)
    sasl_ssl: str
    ssl: str
    certs: security.Certs


@pytest.fixture(scope="module")
def security_certs():
    d = util.make_temp_dir("kib-certs-")
    t = time.monotonic()
    try:
        certs = security.make_certs(d)
        TIMINGS["security_certs_s"] = round(time.monotonic() - t, 2)
        yield certs
    finally:
        util.remove_tree(d)


@pytest.fixture(scope="module")
def secure_kafka(security_certs):
    """The reference broker configured as the secure bridge is (see harness/kafka_broker.py
    secure_properties): separate from the session's broker, stopped with the module."""
    if os.environ.get("KIB_KAFKA_BOOTSTRAP"):
        util.skip_loudly("KIB_KAFKA_BOOTSTRAP names a plain broker; the security tests start their own")
    if shutil.which("java") is None:
        util.skip_loudly("no java: cannot run the reference Kafka broker (Java 17+ needed)")
    kb = KafkaBroker(log_name="kafka-broker-secure.log", security=BrokerSecurity(
        security_certs, security.USERS, security.MECHANISMS, security.SCRAM_ITERATIONS, security.SUPER_USERS))
    try:
        kb.start()
    except BaseException:
        kb.stop()
        raise
    TIMINGS["secure_kafka_start_s"] = round(kb.total_seconds, 2)
    try:
        yield SecureTarget("kafka", kb.bootstrap, kb.sasl_ssl_bootstrap, kb.ssl_bootstrap, security_certs)
    finally:
        kb.stop()


@pytest.fixture(scope="module")
def secure_bridge(request, security_certs):
    """The bridge with docs/security.md's listeners, [tls], [sasl] and [authorization], its own
    Iggy stream (kafka-secure) on the session's iggy-server, users added before it starts."""
    mode = bridge_mode()
    if mode == "off":
        util.skip_loudly("bridge target disabled (KIB_BRIDGE_TARGET=off)")
    binary = bridge_mod.find_binary()
    if binary is None:
        util.skip_loudly(f"no bridge binary at {os.environ.get('BRIDGE_BIN', 'build/release/kafka-iggy-bridge')} "
                         "(build it with make, or set BRIDGE_BIN to an executable)")
    srv = request.getfixturevalue("iggy")
    try:
        sec = bridge_mod.BridgeSecurity(security_certs, security.USERS, security.MECHANISMS, security.SCRAM_ITERATIONS,
                                        security.SUPER_USERS)
        br = bridge_mod.start_client_tier_bridge(binary, srv.address, iggy_server.USERNAME, iggy_server.PASSWORD,
                                                 log_name="bridge-secure.log", stream="kafka-secure", security=sec)
    except BaseException as e:
        if mode == "xfail":
            pytest.xfail(f"secure bridge did not start (KIB_BRIDGE_TARGET=xfail): {e}")
        raise
    TIMINGS["secure_bridge_start_s"] = round(br.start_seconds[-1], 2)
    try:
        yield SecureTarget("bridge", br.bootstrap, br.sasl_ssl_bootstrap, br.ssl_bootstrap, security_certs)
    finally:
        br.cleanup()


@pytest.fixture(params=["kafka", "bridge"])
def target(request) -> Target:
    if request.param == "kafka":
        return request.getfixturevalue("kafka_broker")
    if bridge_mode() == "xfail":
        request.applymarker(pytest.mark.xfail(reason="bridge target in xfail mode (KIB_BRIDGE_TARGET=xfail)",
                                              strict=False))
    return request.getfixturevalue("bridge")


def pytest_sessionstart(session):
    """Drop the previous session's logs and observations so nothing stale is read as this run's."""
    d = util.log_dir()
    for pattern in ("kafka-broker.log", "kafka-broker-next.log", "iggy-server.log", "bridge.log", "bridge.log.toml", "observed-*.json",
                    "timings.json", "kafka-broker-secure.log", "bridge-secure.log", "bridge-secure.log.toml",
                    "security-*"):
        for f in d.glob(pattern):
            f.unlink(missing_ok=True)


def pytest_collection_modifyitems(items):
    for item in items:
        cs = getattr(item, "callspec", None)
        if cs is not None and "bridge" in (cs.params.get("target"), cs.params.get("target_next")):
            item.add_marker(pytest.mark.bridge)


def pytest_terminal_summary(terminalreporter):
    TIMINGS["session_s"] = round(time.monotonic() - _SESSION_START, 1)
    line = ", ".join(f"{k}={v}" for k, v in TIMINGS.items())
    terminalreporter.write_line(f"client tier timings: {line}")
    if util.CLIENT_VERSIONS:
        terminalreporter.write_line("client versions: " + "; ".join(util.CLIENT_VERSIONS.values()))
    try:
        (util.log_dir() / "timings.json").write_text(
            json.dumps({**TIMINGS, "client_versions": util.CLIENT_VERSIONS}, indent=1) + "\n")
    except OSError:
        pass
