"""A single-node Apache Kafka (KRaft, broker+controller in one JVM) for tests.

Jars come from tools/fetch-kafka (tests/.java/lib; with next_tier=True the newer reference tier of
tests/java/pom-next.xml, tests/.java/lib-<version>). Ports are free loopback ports; data lives
in a temp dir removed on stop; the broker log is kept in build/test-logs/clients/.

    with KafkaBroker() as kb:
        print(kb.bootstrap)      # "127.0.0.1:PORT"

Run as a script to measure start-up:  python3 -m harness.kafka_broker [--secure]  (from tests/clients)

The secure broker (security=BrokerSecurity, test_security.py's) adds SASL_SSL and SSL listeners,
SCRAM users at format time and StandardAuthorizer: see secure_properties().
"""
from __future__ import annotations

import base64
import os
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from . import util

READY_LINE = b"Kafka Server started"


def java_bin() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return str(Path(home, "bin", "java"))
    found = shutil.which("java")
    if not found:
        raise RuntimeError("java not found (Kafka 4.x needs Java 17+)")
    return found


def ensure_kafka_jars(next_tier: bool = False) -> Path:
    """Runs tools/fetch-kafka (a no-op when the jars are there) and returns the jar dir: the
    pinned version's, or with `next_tier` the newer reference tier's (tools/fetch-kafka --next)."""
    script = util.REPO_ROOT / "tools" / "fetch-kafka"
    out = subprocess.run([str(script)] + (["--next"] if next_tier else []), capture_output=True, text=True,
                         timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"tools/fetch-kafka failed ({out.returncode}):\n{out.stderr[-4000:]}")
    return Path(out.stdout.strip().splitlines()[-1])


def classpath(lib: Path | None = None) -> str:
    return str((lib or util.JAVA_LIB) / "*")


def kafka_version(lib: Path | None = None) -> str:
    for jar in sorted((lib or util.JAVA_LIB).glob("kafka-clients-*.jar")):
        return jar.name[len("kafka-clients-"):-len(".jar")]
    return "unknown"


def server_properties(data_dir: Path, port: int, controller_port: int, extra: dict[str, str] | None = None) -> str:
    """Broker settings sized for tests: one node, replication factor 1 everywhere, no delays;
    `extra` adds or replaces keys (the secure broker's listeners and security settings, the
    plaintext ACL tests' authorizer)."""
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(data_dir / "log"),
        "num.partitions": "1",
        "default.replication.factor": "1",
        "min.insync.replicas": "1",
        "auto.create.topics.enable": "true",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "1",
        # A transaction whose producer died is aborted this soon after its timeout (default 10 s):
        # until then OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT for its group
        # (test_transactions_eos.py; the bridge's [transactions] abort_timed_out_interval_ms).
        "transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        # KIP-848 consumer groups time out as the classic ones of the tests do (6 s, heartbeats
        # every second) instead of Kafka's 45 s/5 s: the bridge's client tier config says the same
        # ([groups] consumer_session_timeout_ms, consumer_heartbeat_interval_ms).
        "group.consumer.min.session.timeout.ms": "6000",
        "group.consumer.session.timeout.ms": "6000",
        "group.consumer.min.heartbeat.interval.ms": "1000",
        "group.consumer.heartbeat.interval.ms": "1000",
        # KIP-1071 streams groups keep Kafka's defaults (45 s / 5 s, what DescribeConfigs of a
        # group reports on both targets) but may go as low as 6 s / 1 s with a group's own
        # streams.* configs, as the streams tests set them (the bridge: [groups]
        # streams_min_session_timeout_ms, streams_min_heartbeat_interval_ms).
        "group.streams.min.session.timeout.ms": "6000",
        "group.streams.min.heartbeat.interval.ms": "1000",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "background.threads": "2",
        "num.recovery.threads.per.data.dir": "1",
        "log.cleaner.threads": "1",
        "log.cleaner.dedupe.buffer.size": str(8 * 1024 * 1024),
        # Compacted topics are checked every second, as the client-tier bridge's [compaction]
        # backoff_ms (test_compaction.py waits for a pass on both).
        "log.cleaner.backoff.ms": "1000",
        "delete.topic.enable": "true",
        # The bridge keeps records forever unless told otherwise ([topics] retention_ms = -1) and
        # reports it as STATIC_BROKER_CONFIG log.retention.ms=-1: the same here, so kafka-configs
        # and kafka-topics --describe print the same on both (docs/admin-apis-plan.md §3.3).
        "log.retention.ms": "-1",
    }
    props.update(extra or {})
    return "".join(f"{k}={v}\n" for k, v in props.items())


def secure_properties(ports: dict[str, int], certs, users: dict[str, str], mechanisms, super_users) -> dict[str, str]:
    """The secure broker's additions (test_security.py): beside PLAINTEXT (inter-broker, the
    controller's listener and admin bootstrap) a SASL_SSL listener (every mechanism in
    `mechanisms`; PLAIN users in the listener's PlainLoginModule entry, SCRAM users from
    StorageTool --add-scram) and an SSL listener; ssl.client.auth=required broker-wide, which
    Kafka applies to SSL listeners only (KIP-684: a SASL_SSL listener needs its own
    listener.name.sasl_ssl.ssl.client.auth); StandardAuthorizer with super users."""
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    plain_users = " ".join(f"user_{name}={q(pw)}" for name, pw in users.items())
    props = {
        "listeners": ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items()),
        "advertised.listeners": ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items() if n != "CONTROLLER"),
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,CONTROLLER:PLAINTEXT",
        "sasl.enabled.mechanisms": ",".join(mechanisms),
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certs.server_keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs.ca),
        "ssl.client.auth": "required",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": ";".join(super_users),
        "allow.everyone.if.no.acl.found": "false",
    }
    for mech in mechanisms:
        module = ("org.apache.kafka.common.security.plain.PlainLoginModule required " + plain_users
                  if mech == "PLAIN" else "org.apache.kafka.common.security.scram.ScramLoginModule required")
        props[f"listener.name.sasl_ssl.{mech.lower()}.sasl.jaas.config"] = module + ";"
    return props


def jvm_opts(heap: str) -> list[str]:
    return [
        f"-Xmx{heap}",
        f"-Xms{heap}",
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-Djava.awt.headless=true",
        "-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
        # Quieter: the broker logs every config value at INFO otherwise.
        "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.config.AbstractConfig=warn",
        "-Dlog4j2.level=warn",
    ]


@dataclass(frozen=True)
class BrokerSecurity:
    """What makes a KafkaBroker the secure one (harness/security.py has the values)."""
    certs: object  # harness.security.Certs
    users: dict[str, str]  # name -> password: SCRAM credentials at format time and PLAIN users
    mechanisms: tuple[str, ...]
    scram_iterations: int
    super_users: tuple[str, ...]


class KafkaBroker:
    def __init__(self, heap: str = "512m", start_timeout: float = 90.0, log_name: str = "kafka-broker.log",
                 security: BrokerSecurity | None = None, extra_props: dict[str, str] | None = None,
                 next_tier: bool = False):
        self.heap = heap
        self.next_tier = next_tier  # the newer reference tier's jars (tests/java/pom-next.xml)
        self.security = security
        self.extra_props = extra_props  # more settings (test_acls_tool.py's authorizer)
        self.sasl_ssl_port = 0
        self.ssl_port = 0
        self.start_timeout = start_timeout
        self.log_name = log_name
        self.lib: Path | None = None
        self.tmp: Path | None = None
        self.child: util.ChildProcess | None = None
        self.port = 0
        self.controller_port = 0
        self.cluster_id = ""
        self.format_seconds = 0.0
        self.startup_seconds = 0.0  # broker JVM start to ready (after format)
        self.total_seconds = 0.0  # format + start

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def sasl_ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.sasl_ssl_port}"

    @property
    def ssl_bootstrap(self) -> str:
        return f"127.0.0.1:{self.ssl_port}"

    @property
    def log_path(self) -> Path:
        return util.log_dir() / self.log_name

    def _ports(self) -> list[int]:
        ports: list[int] = []
        while len(ports) < (4 if self.security else 2):
            p = util.free_port()
            if p not in ports:
                ports.append(p)
        return ports

    def _security_setup(self) -> tuple[dict[str, str], list[str]]:
        """Extra server properties and StorageTool format arguments (--add-scram per user and
        SCRAM mechanism) of the secure broker."""
        if self.security is None:
            return {}, []
        sec = self.security
        ports = {"PLAINTEXT": self.port, "SASL_SSL": self.sasl_ssl_port, "SSL": self.ssl_port,
                 "CONTROLLER": self.controller_port}
        extra = secure_properties(ports, sec.certs, sec.users, sec.mechanisms, sec.super_users)
        args = []
        for mech in sec.mechanisms:
            if mech.startswith("SCRAM-"):
                for name, pw in sec.users.items():
                    args += ["--add-scram", f"{mech}=[name={name},password={pw},iterations={sec.scram_iterations}]"]
        return extra, args

    def start(self) -> "KafkaBroker":
        t0 = time.monotonic()
        self.lib = ensure_kafka_jars(self.next_tier)
        java = java_bin()
        last_error: Exception | None = None
        for _attempt in range(3):  # a free port can be taken between probing and binding
            self.tmp = util.make_temp_dir("kib-kafka-")
            ports = self._ports()
            self.port, self.controller_port = ports[0], ports[1]
            if self.security:
                self.sasl_ssl_port, self.ssl_port = ports[2], ports[3]
            extra, format_args = self._security_setup()
            props = self.tmp / "server.properties"
            props.write_text(server_properties(self.tmp, self.port, self.controller_port,
                                               {**extra, **(self.extra_props or {})}))
            # Kafka's Uuid.randomUuid never starts with '-': StorageTool's argument parser would read it as an option
            self.cluster_id = "-"
            while self.cluster_id.startswith("-"):
                self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
            tf = time.monotonic()
            fmt = subprocess.run(
                [java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", classpath(self.lib),
                 "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                 "kafka.tools.StorageTool", "format", "-t", self.cluster_id, "-c", str(props), *format_args],
                capture_output=True, text=True, timeout=120,
            )
            self.format_seconds = time.monotonic() - tf
            if fmt.returncode != 0:
                raise RuntimeError(f"StorageTool format failed ({fmt.returncode}):\n{fmt.stdout[-3000:]}\n{fmt.stderr[-3000:]}")
            ts = time.monotonic()
            self.child = util.ChildProcess(
                "kafka broker",
                [java, *jvm_opts(self.heap), "-cp", classpath(self.lib), "kafka.Kafka", str(props)],
                env=dict(os.environ), cwd=self.tmp, log_path=self.log_path,
            )
            try:
                util.wait_until(self._ready, self.start_timeout, "the Kafka broker to start", self.child)
            except Exception as e:  # noqa: BLE001 - retried on a port race, else re-raised
                last_error = e
                self.stop()
                if b"Address already in use" in self._log_bytes():
                    continue
                raise
            self.startup_seconds = time.monotonic() - ts
            self.total_seconds = time.monotonic() - t0
            return self
        raise RuntimeError(f"Kafka broker did not start: {last_error}")

    def _log_bytes(self) -> bytes:
        try:
            return self.log_path.read_bytes()
        except OSError:
            return b""

    def _ready(self) -> bool:
        ports = [self.port] + ([self.sasl_ssl_port, self.ssl_port] if self.security else [])
        return READY_LINE in self._log_bytes() and all(util.port_accepts("127.0.0.1", p) for p in ports)

    def stop(self):
        if self.child is not None:
            self.child.stop(timeout=20)
            self.child = None
        if self.tmp is not None:
            util.remove_tree(self.tmp)
            self.tmp = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _main():
    import sys

    from . import security

    sec, certs_dir = None, None
    if "--secure" in sys.argv[1:]:  # the security tests' broker (test_security.py)
        certs_dir = util.make_temp_dir("kib-certs-")
        certs = security.make_certs(certs_dir)
        sec = BrokerSecurity(certs, security.USERS, security.MECHANISMS, security.SCRAM_ITERATIONS,
                             security.SUPER_USERS)
    try:
        with KafkaBroker(security=sec, log_name="kafka-broker-secure.log" if sec else "kafka-broker.log") as kb:
            extra = f", SASL_SSL {kb.sasl_ssl_bootstrap}, SSL {kb.ssl_bootstrap}" if sec else ""
            print(f"Kafka {kafka_version(kb.lib)} at {kb.bootstrap}{extra}: format {kb.format_seconds:.2f}s, "
                  f"broker start {kb.startup_seconds:.2f}s, total {kb.total_seconds:.2f}s; log {kb.log_path}")
            ts = time.monotonic()
        print(f"stopped in {time.monotonic() - ts:.2f}s")
    finally:
        if certs_dir:
            util.remove_tree(certs_dir)


if __name__ == "__main__":
    _main()
