#!/usr/bin/env python3
"""make bench / make bench-quick: the same Kafka workloads against the bridge and a Kafka broker,
and their nearest native-Iggy analogue, in one run on this machine, alternating targets so noise
hits all three alike. Writes bench/results/<UTC timestamp>.{md,csv,jsonl,png}.

Targets (bench/README.md says what each column means):
  bridge  kafka-iggy-bridge (release build) in front of iggy-server
  kafka   a single-node Apache Kafka 4.x broker (KRaft), from tests/.java/lib
  iggy    iggy-server driven natively by build/<b>/iggy-client-bench (the bridge's src/iggy client)

Tools: build/<b>/kafka-load (librdkafka), kafka-producer-perf-test / kafka-consumer-perf-test
(org.apache.kafka.tools.ProducerPerformance / ConsumerPerformance, Java), iggy-client-bench.
Nothing here asserts a timing; every figure is measured in this run, ratios come from one run.
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import logging
import os
import platform
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "clients"))
from harness import util  # noqa: E402
from harness.bridge import BridgeProcess, config_toml  # noqa: E402
from harness.kafka_wire import request  # noqa: E402
from harness.iggy_server import IggyServer, find_binary as find_iggy  # noqa: E402
from harness.kafka_broker import READY_LINE, KafkaBroker, classpath, java_bin, kafka_version  # noqa: E402

TARGETS = ("bridge", "kafka", "iggy")
# With --before DIR a second bridge (another build, e.g. main's) runs beside the first, in front
# of the same iggy-server (its own stream), as target "before": before/after ratios from one run.
KAFKA_TARGETS = ("bridge", "kafka")
# --targets: the targets that run (the others' columns stay empty), e.g. `bridge,before` for a
# before/after comparison that no other target's load (native Iggy's writes, which iggy-server is
# still flushing when the next target starts) falls between.
RUN_TARGETS = ("bridge", "before", "kafka", "iggy")
# Durability profiles. pagecache: acknowledged from memory, written later (Kafka's default;
# Iggy with enforce_fsync=false and its default messages_required_to_save). fsync: every
# append written and fsynced before the acknowledgement (the bridge's default topics; Kafka
# with flush.messages=1).
PROFILES = {
    "pagecache": {"bridge": {"iggy.enforce.fsync": "false", "iggy.messages.required.to.save": "1024"},
                  "kafka": {}, "iggy": (False, 1024)},
    "fsync": {"bridge": {"iggy.enforce.fsync": "true", "iggy.messages.required.to.save": "1"},
              "kafka": {"flush.messages": "1"}, "iggy": (True, 1)},
}


def log(msg: str):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---- processes -------------------------------------------------------------------------------

def proc_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status_kb(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Pki:
    """A CA, a server certificate for 127.0.0.1 and a client certificate (the openssl command),
    PEM files shared by the bridge's and Kafka's SSL listeners and the TLS clients."""

    def __init__(self):
        self.dir = util.make_temp_dir("kib-bench-pki-")

        def openssl(*a):
            subprocess.run(["openssl", *a], cwd=self.dir, check=True, capture_output=True, timeout=60)

        def issue(name, subject, ext):
            (self.dir / f"{name}.ext").write_text(ext)
            openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{name}.key",
                    "-out", f"{name}.csr", "-subj", subject)
            openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", f"{name}.crt", "-days", "7", "-extfile", f"{name}.ext")

        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                "-out", "ca.crt", "-subj", "/CN=bench CA", "-days", "7",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        issue("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        issue("client", "/CN=bench", "extendedKeyUsage=clientAuth\n")
        self.ca, self.cert, self.key = self.dir / "ca.crt", self.dir / "server.crt", self.dir / "server.key"
        self.client_cert, self.client_key = self.dir / "client.crt", self.dir / "client.key"
        # Kafka's PEM keystore: the (PKCS#8) key and the certificate chain in one file.
        self.keystore = self.dir / "server-keystore.pem"
        self.keystore.write_text(self.key.read_text() + self.cert.read_text())

    def client_props(self) -> list[str]:
        return ["security.protocol=ssl", f"ssl.ca.location={self.ca}", f"ssl.certificate.location={self.client_cert}",
                f"ssl.key.location={self.client_key}"]

    def remove(self):
        util.remove_tree(self.dir)


class TlsKafkaBroker(KafkaBroker):
    """The reference broker with an SSL listener beside PLAINTEXT: the bridge's PEM files (Kafka's
    ssl.keystore.type=PEM), client certificates required, and nothing else of the harness's
    secure broker (no SASL listener, no authorizer), so that TLS is all that differs from the
    plaintext rows."""

    def __init__(self, pki: Pki, **kw):
        super().__init__(**kw)
        self.pki = pki
        self.security = True  # the harness then takes ports for the secure listeners; SSL's is used

    def _security_setup(self):
        ports = {"PLAINTEXT": self.port, "SSL": self.ssl_port, "CONTROLLER": self.controller_port}
        return {
            "listeners": ",".join(f"{n}://127.0.0.1:{p}" for n, p in ports.items()),
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port},SSL://127.0.0.1:{self.ssl_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,CONTROLLER:PLAINTEXT",
            "ssl.keystore.type": "PEM", "ssl.keystore.location": str(self.pki.keystore),
            "ssl.truststore.type": "PEM", "ssl.truststore.location": str(self.pki.ca),
            "ssl.client.auth": "required",
        }, []

    def _ready(self) -> bool:
        ports = (self.port, self.ssl_port)  # no SASL_SSL listener here
        return READY_LINE in self._log_bytes() and all(util.port_accepts("127.0.0.1", p) for p in ports)


def start_bridge(binary: Path, iggy_address: str, stream: str = "kafka", name: str = "bridge",
                 pki: Pki | None = None) -> BridgeProcess:
    """The bridge (harness/bridge.py's launcher) in a temporary directory, logging warnings only,
    its log in the test-log directory; with a PKI, an SSL listener beside the PLAINTEXT one,
    client certificates required. Started: its PLAINTEXT port accepts."""
    log_path = util.log_dir() / f"bench-{name}.log"
    log_path.unlink(missing_ok=True)
    b = BridgeProcess(util.make_temp_dir("kib-bench-bridge-"), binary=binary, log_path=log_path, owns_workdir=True)
    listeners = [f"PLAINTEXT://{b.bootstrap}"]
    tls = ""
    if pki:
        b.ssl_port = util.free_port()
        listeners.append(f"SSL://{b.ssl_bootstrap}")
        tls = (f'[tls]\ncertificate_file = "{pki.cert}"\nkey_file = "{pki.key}"\nca_file = "{pki.ca}"\n'
               'client_auth = "required"\n')
    b.write_config(config_toml(listeners=listeners, iggy_address=iggy_address, state_path=b.state,
                               kafka=dict(auto_create_topics=True),
                               # As the reference broker (harness/kafka_broker.py): no initial
                               # rebalance delay, consumer-protocol sessions of 6 s, heartbeats every 1 s.
                               groups=dict(initial_rebalance_delay_ms=0, consumer_session_timeout_ms=6000,
                                           consumer_heartbeat_interval_ms=1000, consumer_min_session_timeout_ms=6000,
                                           consumer_min_heartbeat_interval_ms=1000),
                               iggy=dict(username="iggy", password="iggy", stream=stream), log_level="warn",
                               # Compacted topics checked every second, as the reference broker's
                               # log.cleaner.backoff.ms (the compaction rows).
                               extra_toml=tls + "[compaction]\nbackoff_ms = 1000\n"))
    try:
        return b.start(timeout=30, ports=[b.port])
    except BaseException:
        b.cleanup()
        raise


class Env:
    """The three servers, and how to reach and create topics on each."""

    def __init__(self, build: Path, iggy_bin: Path, heap: str, before: Path | None = None, tls: bool = False):
        self.build = build
        # TLS rows: the bridge's and Kafka's SSL listeners, same certificates, mTLS.
        self.pki = Pki() if tls else None
        self.tools = {"load": build / "kafka-load", "iggy": build / "iggy-client-bench"}
        log("starting iggy-server")
        self.iggy = IggyServer(iggy_bin, log_name="bench-iggy-server.log").start()
        log(f"iggy-server at {self.iggy.address}; starting the bridge")
        self.bridge = start_bridge(build / "kafka-iggy-bridge", self.iggy.address, pki=self.pki)
        time.sleep(1.0)
        self.bridge_idle_rss_kb = proc_status_kb(self.bridge.pid, "VmRSS")
        self.before = None
        if before:
            self.before = start_bridge(before / "kafka-iggy-bridge", self.iggy.address, "kafka-before", "bridge-before")
            log(f"bridge (before: {before}) at {self.before.bootstrap}")
        log(f"bridge at {self.bridge.bootstrap} (idle RSS {self.bridge_idle_rss_kb / 1024:.1f} MiB); starting Kafka")
        broker = TlsKafkaBroker(self.pki, heap=heap, log_name="bench-kafka-broker.log") if self.pki else \
            KafkaBroker(heap=heap, log_name="bench-kafka-broker.log")
        self.kafka = broker.start()
        log(f"Kafka {kafka_version(self.kafka.lib)} at {self.kafka.bootstrap} (started in {self.kafka.total_seconds:.1f}s)")
        from confluent_kafka.admin import AdminClient
        quiet = logging.getLogger("bench.admin")
        quiet.setLevel(logging.CRITICAL)  # connection-closed chatter when the servers stop
        self.admin = {t: AdminClient({"bootstrap.servers": self.bootstrap(t), "logger": quiet})
                      for t in KAFKA_TARGETS}
        self.pids = {"bridge": self.bridge.pid, "kafka": self.kafka.child.pid, "iggy": self.iggy.child.pid}
        if self.before:
            self.pids["before"] = self.before.pid

    def bootstrap(self, target: str, tls: bool = False) -> str:
        server = {"bridge": self.bridge, "before": self.before, "kafka": self.kafka}[target]
        return server.ssl_bootstrap if tls else server.bootstrap

    def port(self, target: str) -> int:
        return {"bridge": self.bridge, "before": self.before, "kafka": self.kafka, "iggy": self.iggy}[target].port

    def create_topic(self, target: str, name: str, partitions: int, profile: str, extra: dict | None = None):
        if target == "iggy":
            fsync, save = PROFILES[profile]["iggy"]
            run([self.tools["iggy"], "--address", self.iggy.address, "--topic", name, "--partitions", str(partitions),
                 "--fsync", "1" if fsync else "0", "--save", str(save), "--create-only"], timeout=60)
            return
        from confluent_kafka.admin import NewTopic
        options = dict(PROFILES[profile]["bridge" if target == "before" else target], **(extra or {}))
        nt = NewTopic(name, num_partitions=partitions, replication_factor=1, config=options)
        for _, fut in self.admin[target].create_topics([nt], operation_timeout=30).items():
            fut.result(timeout=60)
        time.sleep(0.2)  # metadata propagation on the broker

    def delete_topic(self, target: str, name: str):
        # The bridge has no DeleteTopics: its topics are deleted in Iggy (stream "kafka").
        try:
            if target == "kafka":
                for _, fut in self.admin["kafka"].delete_topics([name], operation_timeout=30).items():
                    fut.result(timeout=60)
            else:
                run([self.tools["iggy"], "--address", self.iggy.address, "--stream",
                     {"bridge": "kafka", "before": "kafka-before"}.get(target, "bench"), "--topic", name,
                     "--delete"], timeout=60)
        except Exception as e:  # noqa: BLE001 - disk space only; the figures are already taken
            log(f"  could not delete {target} topic {name}: {e}")

    def stop(self):
        stops = [("kafka", self.kafka.stop), ("bridge", self.bridge.cleanup)]
        if self.before:
            stops.append(("before", self.before.cleanup))
        for name, stop in stops + [("iggy", self.iggy.stop)]:
            try:
                stop()
            except Exception as e:  # noqa: BLE001
                log(f"stopping {name}: {e}")
        if self.pki:
            self.pki.remove()


def run(argv, timeout: float, json_despite_exit: bool = False) -> str:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0 and json_despite_exit and p.stdout.strip().splitlines()[-1:] and \
            p.stdout.strip().splitlines()[-1].startswith("{"):
        # The measurement finished and was printed; the process died at teardown (the Python
        # SDK's runtime has aborted at interpreter exit). The figure stands; the exit is logged.
        log(f"  {Path(str(argv[-1])).name}: exited {p.returncode} after printing its result")
        return p.stdout
    if p.returncode != 0:
        raise RuntimeError(f"{Path(str(argv[0])).name} exited {p.returncode}: {(p.stderr or p.stdout)[-800:]}")
    return p.stdout


def json_line(out: str) -> dict:
    for line in reversed(out.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"no JSON result in: {out[-400:]}")


def consumer_perf_result(out: str) -> dict:
    rows = [line for line in out.splitlines() if line and line[0].isdigit()]
    v = [x.strip() for x in rows[-1].split(",")]
    # start, end, MB, MB/s, nMsg, nMsg/s, rebalance ms, fetch ms, fetch MB/s, fetch nMsg/s
    return {"tool": "kafka-consumer-perf-test", "mode": "consume", "messages": int(float(v[4])),
            "msgs_per_s": float(v[9]), "mb_per_s": float(v[8]), "rebalance_ms": float(v[6])}


def disk_usage(dirs) -> tuple[int, int]:
    """(apparent bytes of the segment .log files, allocated bytes of every file, as du counts them:
    Kafka's preallocated index files are sparse) under `dirs`."""
    log_bytes = total = 0
    for d in dirs:
        for f in Path(d).rglob("*"):
            if f.is_file():
                st = f.stat()
                total += st.st_blocks * 512
                if f.suffix == ".log":
                    log_bytes += st.st_size
    return log_bytes, total


def disk_usage_stable(dirs, timeout: float = 15.0) -> tuple[int, int]:
    """disk_usage once two readings 0.5 s apart agree (servers may still be writing)."""
    last, deadline = disk_usage(dirs), time.time() + timeout
    while time.time() < deadline:
        time.sleep(0.5)
        now = disk_usage(dirs)
        if now == last and now[0] > 0:
            return now
        last = now
    return last


# ---- measurement -------------------------------------------------------------------------------

class Results:
    def __init__(self):
        self.samples: dict[tuple, dict[str, list[float]]] = {}
        self.meta: dict[tuple, dict] = {}
        self.order: list[tuple] = []
        self.raw: list[dict] = []
        self.errors: list[str] = []

    def add(self, key: tuple, target: str, value: float, meta: dict):
        if key not in self.samples:
            self.samples[key] = {t: [] for t in TARGETS}
            self.meta[key] = meta
            self.order.append(key)
        self.samples[key][target].append(value)

    def median(self, key, target):
        v = self.samples.get(key, {}).get(target) or []
        return statistics.median(v) if v else None


class Bench:
    def __init__(self, env: Env, quick: bool, out: Path):
        self.env, self.quick, self.out = env, quick, out
        self.res = Results()
        self.cpu = {t: {"seconds": 0.0, "messages": 0} for t in TARGETS}
        self.cpu_iggy_behind_bridge = 0.0
        self.seq = 0
        self.rss_peak_kb = 0

    def cpu_per_million(self, target: str) -> float | None:
        """Server CPU seconds per million messages over `target`'s throughput runs."""
        c = self.cpu[target]
        return None if not c["messages"] else c["seconds"] / c["messages"] * 1e6

    def cpu_per_million_iggy_behind_bridge(self) -> float | None:
        n = self.cpu["bridge"]["messages"]
        return None if not n else self.cpu_iggy_behind_bridge / n * 1e6

    def topic(self, target, tag) -> str:
        self.seq += 1
        return f"b{self.seq}-{target}-{tag}"

    def measured(self, target: str, fn, messages_of=lambda r: r.get("messages", 0)):
        """Runs fn() and charges the server CPU it used to `target` (the bridge also to Iggy behind it)."""
        pids = self.env.pids
        before = {t: proc_cpu_seconds(p) for t, p in pids.items()}
        r = fn()
        after = {t: proc_cpu_seconds(p) for t, p in pids.items()}
        msgs = messages_of(r)
        self.cpu[target]["seconds"] += after[target] - before[target]
        self.cpu[target]["messages"] += msgs
        if target == "bridge":  # "before" is charged to itself only
            self.cpu_iggy_behind_bridge += after["iggy"] - before["iggy"]
            self.rss_peak_kb = max(self.rss_peak_kb, proc_status_kb(pids["bridge"], "VmHWM"))
        if target in ("bridge", "before"):
            r = dict(r, server_rss_kb=proc_status_kb(pids[target], "VmRSS"),
                     server_hwm_kb=proc_status_kb(pids[target], "VmHWM"))
        self.res.raw.append({"target": target, **r})
        return r

    def attempt(self, what: str, fn):
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - a failed run is reported, never papered over
            msg = f"{what}: {e}"
            log("  FAILED " + msg)
            self.res.errors.append(msg)
            return None

    # -- tools
    def rdkafka(self, mode, target, topic, tls=False, **kw):
        a = [self.env.tools["load"], mode, "-b", self.env.bootstrap(target, tls), "-t", topic]
        if tls:
            for prop in self.env.pki.client_props():
                a += ["-X", prop]
        flags = {"size": "-s", "acks": "-a", "compression": "-z", "partitions": "-p", "seconds": "-d",
                 "messages": "-n", "rate": "-r", "threads": "-c", "payload": "-P", "commit_ms": "-i", "keys": "-k"}
        for k, v in kw.items():
            a += [flags[k], str(v)]
        return json_line(run(a, timeout=240))

    def native(self, mode, topic, **kw):
        a = [self.env.tools["iggy"], "--address", self.env.iggy.address, "--topic", topic, "--mode", mode]
        for k, v in kw.items():
            a += [f"--{k}", v]
        return json_line(run(a, timeout=240))

    def java_produce(self, target, topic, size, acks, compression, records):
        out = run([java_bin(), "-Xmx512m", "-cp", classpath(self.env.kafka.lib), "org.apache.kafka.tools.ProducerPerformance",
                   "--topic", topic, "--num-records", records, "--record-size", size, "--throughput", "-1",
                   "--producer-props", f"bootstrap.servers={self.env.bootstrap(target)}", f"acks={acks}",
                   f"compression.type={compression}"], timeout=300)
        # "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max latency, p50 ms 50th, ..."
        line = [l for l in out.splitlines() if "records sent" in l][-1]
        parts = [p.strip() for p in line.split(",")]
        n = int(parts[0].split()[0])
        rate = float(parts[1].split()[0])
        p99 = float(parts[6].split()[0])
        return {"tool": "kafka-producer-perf-test", "mode": "produce", "messages": n, "msgs_per_s": rate,
                "mb_per_s": rate * int(size) / 1e6, "p99_ms": p99}

    def java_consume(self, target, topic, messages):
        out = run([java_bin(), "-Xmx512m", "-cp", classpath(self.env.kafka.lib), "org.apache.kafka.tools.ConsumerPerformance",
                   "--bootstrap-server", self.env.bootstrap(target), "--topic", topic, "--messages", messages,
                   "--timeout", "60000", "--group", f"perf-{topic}"], timeout=300)
        return consumer_perf_result(out)

    def java_tail(self, target, topic, size, parts, messages):
        """kafka-consumer-perf-test tailing: it joins its group on the fresh, empty topic (so it sits at
        the end), and once the group is Stable with partitions assigned, `kafka-load produce` writes
        `messages`. Its fetch.nMsg.sec excludes the join but includes the moment between the
        assignment and the first record (a status poll every 50 ms and the producer's start)."""
        group = f"perf-tail-{topic}"
        # Its output goes to a file: a pipe nobody reads while we wait could block it.
        output = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen(
            [java_bin(), "-Xmx512m", "-cp", classpath(self.env.kafka.lib), "org.apache.kafka.tools.ConsumerPerformance",
             "--bootstrap-server", self.env.bootstrap(target), "--topic", topic, "--messages", str(messages),
             "--timeout", "30000", "--group", group], stdout=output, stderr=subprocess.STDOUT, text=True)

        def text():
            output.seek(0)
            return output.read()
        try:
            from confluent_kafka import ConsumerGroupState
            deadline = time.time() + 60
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"kafka-consumer-perf-test exited {proc.returncode} before joining: "
                                       f"{text()[-400:]}")
                if time.time() > deadline:
                    raise RuntimeError(f"group {group} not Stable with an assignment after 60 s")
                try:
                    d = self.env.admin[target].describe_consumer_groups([group], request_timeout=5)[group].result()
                    if d.state == ConsumerGroupState.STABLE and any(
                            m.assignment and m.assignment.topic_partitions for m in d.members):
                        break
                except Exception:  # noqa: BLE001 - the group does not exist yet
                    pass
                time.sleep(0.05)
            p = self.rdkafka("produce", target, topic, size=size, acks="1", partitions=parts, messages=messages,
                             seconds=0)
            proc.wait(timeout=120)
            out = text()
            if proc.returncode != 0:
                raise RuntimeError(f"kafka-consumer-perf-test exited {proc.returncode}: {out[-400:]}")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            output.close()
        return dict(consumer_perf_result(out), mode="tail", produced=p["messages"],
                    producer_msgs_per_s=p["msgs_per_s"])

    # -- workloads
    def order(self, rep: int, targets=None):
        t = [x for x in (TARGETS if targets is None else targets) if x in RUN_TARGETS]
        if not t:
            return t
        k = rep % len(t)
        return t[k:] + t[:k]

    def produce_case(self, rep, size, acks, comp, parts, profile, seconds, consume_after=False, java=False,
                     java_consume=False):
        key_base = dict(size=size, acks=acks, compression=comp, partitions=parts, durability=profile)
        targets = TARGETS if comp == "none" else KAFKA_TARGETS
        topics = {}
        for target in self.order(rep, targets):
            topic = self.topic(target, f"p{size}-{acks}-{comp}-{parts}")
            def go(target=target, topic=topic):
                self.env.create_topic(target, topic, parts, profile)
                if target == "iggy":
                    batch = 1000 if size <= 1024 else max(1, (1 << 20) // size)
                    r = self.measured(target, lambda: self.native("produce", topic, size=size, partitions=parts,
                                                                  seconds=seconds, batch=batch, inflight=4))
                else:
                    r = self.measured(target, lambda: self.rdkafka("produce", target, topic, size=size, acks=acks,
                                                                   compression=comp, partitions=parts,
                                                                   seconds=seconds))
                return r
            r = self.attempt(f"produce {target} {key_base}", go)
            if r:
                tool = "librdkafka"  # the native column's analogue shares the row (bench/README.md)
                self.res.add(("produce", tool, size, acks, comp, parts, profile, "msgs/s"), target, r["msgs_per_s"],
                             dict(key_base, tool=tool, workload="produce", unit="msgs/s"))
                self.res.add(("produce", tool, size, acks, comp, parts, profile, "MB/s"), target, r["mb_per_s"],
                             dict(key_base, tool=tool, workload="produce", unit="MB/s"))
                topics[target] = (topic, r["messages"])
        if java:
            # One record count for every target, from the fastest librdkafka run of this case: a
            # target given fewer records would run shorter and pay the JVM's warm-up on fewer.
            rates = self.res.samples.get(("produce", "librdkafka", size, acks, comp, parts, profile, "msgs/s"), {})
            fastest = max((rates[t][-1] for t in KAFKA_TARGETS if rates.get(t)), default=20000)
            records = int(min(max(fastest * seconds, 20000), 3_000_000))
            for target in self.order(rep, KAFKA_TARGETS):
                topic = self.topic(target, f"j{size}-{acks}-{comp}-{parts}")
                def go(target=target, topic=topic):
                    self.env.create_topic(target, topic, parts, profile)
                    r = self.measured(target, lambda: self.java_produce(target, topic, size, acks, comp, records))
                    self.env.delete_topic(target, topic)
                    return r
                r = self.attempt(f"java produce {target} {key_base}", go)
                if r:
                    meta = dict(key_base, tool="kafka-producer-perf-test", workload="produce")
                    self.res.add(("produce", "java", size, acks, comp, parts, profile, "msgs/s"), target,
                                 r["msgs_per_s"], dict(meta, unit="msgs/s"))
                    self.res.add(("produce", "java", size, acks, comp, parts, profile, "MB/s"), target,
                                 r["mb_per_s"], dict(meta, unit="MB/s"))
        if consume_after:
            self.consume_cases(rep, size, parts, profile, topics, java_consume)
        for target, (topic, _) in topics.items():
            self.env.delete_topic(target, topic)

    def consume_cases(self, rep, size, parts, profile, topics, java):
        base = dict(size=size, acks="-", compression="none", partitions=parts, durability=profile, consume="catch-up")
        for target in self.order(rep, tuple(t for t in TARGETS if t in topics)):
            topic, n = topics[target]
            if target == "iggy":
                r = self.attempt(f"consume iggy {base}", lambda: self.measured(
                    "iggy", lambda: self.native("consume", topic, partitions=parts, batch=1000)))
            else:
                r = self.attempt(f"consume {target} {base}", lambda: self.measured(
                    target, lambda: self.rdkafka("consume", target, topic, partitions=parts, messages=n)))
            if r:
                meta = dict(base, tool="librdkafka", workload="consume")
                self.res.add(("consume", "librdkafka", size, parts, profile, "msgs/s"), target, r["msgs_per_s"],
                             dict(meta, unit="msgs/s"))
                self.res.add(("consume", "librdkafka", size, parts, profile, "MB/s"), target, r["mb_per_s"],
                             dict(meta, unit="MB/s"))
        for target in self.order(rep, tuple(t for t in KAFKA_TARGETS if t in topics and java)):
            topic, n = topics[target]
            r = self.attempt(f"java consume {target} {base}", lambda: self.measured(
                target, lambda: self.java_consume(target, topic, n)))
            if r:
                meta = dict(base, tool="kafka-consumer-perf-test", workload="consume")
                self.res.add(("consume", "java", size, parts, profile, "msgs/s"), target, r["msgs_per_s"],
                             dict(meta, unit="msgs/s"))
                self.res.add(("consume", "java", size, parts, profile, "MB/s"), target, r["mb_per_s"],
                             dict(meta, unit="MB/s"))

    def tail_case(self, rep, size, parts, seconds, acks="1", java=False):
        """Tailing consume: `kafka-load tail`, a consumer at the end of a fresh, empty topic while a
        producer in the same process writes for `seconds`; messages consumed over first .. last
        consumed. With java, the same with kafka-consumer-perf-test (java_tail). No native column:
        iggy-client-bench has no tailing mode."""
        base = dict(size=size, acks="-", compression="none", partitions=parts, durability="pagecache",
                    consume="tailing")

        def run(target, tag, what, tool, key, workload):
            """One tailing run on a fresh topic; its msgs/s and MB/s rows."""
            topic = self.topic(target, f"{tag}{size}-{parts}")
            def go():
                self.env.create_topic(target, topic, parts, "pagecache")
                # The server carried every message twice (in and out): CPU per message counts both.
                r = self.measured(target, lambda: workload(topic),
                                  messages_of=lambda r: r.get("messages", 0) + r.get("produced", 0))
                self.env.delete_topic(target, topic)
                return r
            r = self.attempt(f"{what} {target} {base}", go)
            if r:
                meta = dict(base, tool=tool, workload="consume")
                for unit, field in (("msgs/s", "msgs_per_s"), ("MB/s", "mb_per_s")):
                    self.res.add(("consume", key, size, parts, "pagecache", unit), target, r[field],
                                 dict(meta, unit=unit))

        for target in self.order(rep, KAFKA_TARGETS):
            run(target, "tail", "tail", "librdkafka", "librdkafka-tail",
                lambda topic, target=target: self.rdkafka("tail", target, topic, size=size, acks=acks,
                                                          partitions=parts, seconds=seconds))
        for target in self.order(rep, KAFKA_TARGETS if java else ()):
            rate = self.res.samples.get(("consume", "librdkafka-tail", size, parts, "pagecache", "msgs/s"),
                                        {}).get(target)
            # At least 50,000: the wait between the assignment and the first record counts in its rate.
            records = int(min(max((rate[-1] if rate else 50000) * seconds, 50000), 3_000_000))
            run(target, "jtail", "java tail", "kafka-consumer-perf-test", "java-tail",
                lambda topic, target=target, records=records: self.java_tail(target, topic, size, parts, records))

    def storage_case(self, records: int, size: int = 1024):
        """Bytes on disk per record: `records` JSON-like values of `size` bytes, zstd from the producer
        (librdkafka, acks=all), to a 1-partition topic on the bridge and on Kafka. Kafka: the
        partition's directory under the broker's log.dirs. Bridge: the topic's directory in
        iggy-server's data dir (streams/<id>/topics/<id>/, the one the produce grew); the bridge's
        own state (SQLite, not per topic) is left out. Iggy buffers unsaved messages in memory, so
        the bridge topic saves every append (iggy.messages.required.to.save = 1, no fsync)."""
        meta = dict(tool="librdkafka", size=size, acks="all", compression="zstd", partitions=1, durability="pagecache",
                    unit="bytes/record")
        for target in KAFKA_TARGETS:
            if target == "before":
                continue
            topic = self.topic(target, "storage")
            def go(target=target, topic=topic):
                known = {d: disk_usage([d])[1] for d in self.iggy_topic_dirs()}
                self.env.create_topic(target, topic, 1, "pagecache",
                                      {"iggy.messages.required.to.save": "1"} if target == "bridge" else None)
                p = self.rdkafka("produce", target, topic, size=size, acks="all", compression="zstd", partitions=1,
                                 messages=records, seconds=0, payload="json")
                if target == "kafka":
                    dirs = [self.env.kafka.tmp / "log" / f"{topic}-0"]
                else:
                    # Iggy names directories by numeric ids and reuses a deleted topic's id (and its
                    # directory may outlive the deletion for a moment): the topic is the directory
                    # that grew by what was just produced.
                    grown = sorted(((disk_usage([d])[1] - known.get(d, 0), d) for d in self.iggy_topic_dirs()),
                                   reverse=True)
                    if not grown or grown[0][0] <= 0:
                        raise RuntimeError(f"no topic directory under {self.env.iggy.tmp / 'data'} grew")
                    dirs = [grown[0][1]]
                log_bytes, total = disk_usage_stable(dirs)
                self.rss_peak_kb = max(self.rss_peak_kb, proc_status_kb(self.env.pids["bridge"], "VmHWM"))
                r = {"tool": "librdkafka", "mode": "storage", "topic": topic, "records": p["messages"],
                     "value_bytes": size, "compression": "zstd", "dirs": [str(d) for d in dirs],
                     "log_bytes": log_bytes, "total_bytes": total, "produce_msgs_per_s": p["msgs_per_s"]}
                self.res.raw.append({"target": target, **r})
                self.env.delete_topic(target, topic)
                return r
            r = self.attempt(f"storage {target}", go)
            if r and r["records"]:
                n = r["records"]
                self.res.add(("storage", "log"), target, r["log_bytes"] / n,
                             dict(meta, workload="storage: bytes/record on disk, segment .log files "
                                            "(1 KiB JSON-like values, zstd from the producer)"))
                self.res.add(("storage", "total"), target, r["total_bytes"] / n,
                             dict(meta, workload="storage: bytes/record on disk, partition directory total "
                                            "incl. indexes (allocated)"))
                log(f"  {target}: {n} records, segment .log {r['log_bytes']:,} B, total {r['total_bytes']:,} B "
                    f"({r['log_bytes'] / n:.1f} / {r['total_bytes'] / n:.1f} B/record)")

    def compaction_case(self, records: int, keys: int, size: int = 1024, lat_seconds: float = 4.0):
        """Compaction, bridge beside Kafka, each with its defaults but the check interval (1 s:
        log.cleaner.backoff.ms, [compaction] backoff_ms): `records` updates of `keys` keys (1 KiB
        values, librdkafka acks=1) to a 1-partition topic (segment.bytes 8 MiB,
        min.cleanable.dirty.ratio 0.01) written as cleanup.policy=delete, then switched to compact
        (IncrementalAlterConfigs); while the cleaner works, a 1000 msg/s latency run on another
        topic. Cleaned MB/s: the segment bytes the cleaner removed over the time from the switch
        to the last shrink of the topic's segment files (Kafka's
        log/<topic>-0; the bridge's whole Iggy data dir: the live partition and the generation
        topic), the check interval included. Latency: that run's p99 beside the same run before the
        produce. Both cleaners are unthrottled (their defaults)."""
        conf = {"cleanup.policy": "compact", "segment.bytes": str(8 << 20), "min.cleanable.dirty.ratio": "0.01"}
        meta = dict(tool="librdkafka", size=size, acks="1", compression="none", partitions=1, durability="pagecache")

        def latency(target, seconds=lat_seconds):
            topic = self.topic(target, "clat")
            self.env.create_topic(target, topic, 1, "pagecache")
            # One record acknowledged first: the new partition has its leader before the clock starts.
            self.rdkafka("produce", target, topic, size=size, acks="all", partitions=1, messages=1, seconds=0)
            r = self.rdkafka("latency", target, topic, rate=1000, seconds=seconds, size=size, acks="all")
            self.env.delete_topic(target, topic)
            return r

        for target in KAFKA_TARGETS:
            if target == "before":
                continue
            topic = self.topic(target, "compact")
            def go(target=target, topic=topic):
                latency(target, 1.0)  # a warm-up: with --only compaction the servers have just started
                quiet = latency(target)
                known = {d: disk_usage([d])[0] for d in self.iggy_topic_dirs()}
                # Written as a `delete` topic, so that no cleaning overlaps the produce; the clock
                # starts when the policy becomes `compact` (both servers take it at once).
                self.env.create_topic(target, topic, 1, "pagecache", dict(conf, **{"cleanup.policy": "delete"}))
                p = self.rdkafka("produce", target, topic, size=size, acks="1", partitions=1, messages=records,
                                 seconds=0, keys=keys)
                if target == "kafka":
                    live = self.env.kafka.tmp / "log" / f"{topic}-0"
                else:  # the Iggy topic directory the produce grew (as in storage_case)
                    live = max(self.iggy_topic_dirs(), key=lambda d: disk_usage([d])[0] - known.get(d, 0))
                # The bridge's generation topics are in a stream of their own, created by the first pass.
                dirs = (lambda: [live]) if target == "kafka" else \
                    (lambda: [live] + [d for d in (self.env.iggy.tmp / "data" / "streams").glob("*")
                                       if d != live.parent.parent])
                time.sleep(1.0)  # the last segment rolled by neither: the same floor on both
                from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource
                res = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=[
                    ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET)])
                self.env.admin[target].incremental_alter_configs([res])[res].result(timeout=30)
                produced_at = time.monotonic()
                during = {}
                lat = threading.Thread(target=lambda: during.update(latency(target)))
                lat.start()
                peak = last = disk_usage(dirs())[0]
                shrunk_at, deadline = None, produced_at + 300
                while time.monotonic() < deadline:
                    time.sleep(0.25)
                    now = disk_usage(dirs())[0]
                    peak = max(peak, now)
                    if now < last:
                        shrunk_at = time.monotonic()
                    last = now
                    # Done: below half the peak and no shrink for 5 s (the lat run has ended).
                    if shrunk_at and now < peak / 2 and time.monotonic() - shrunk_at > 5 and not lat.is_alive():
                        break
                lat.join()
                if not shrunk_at or last >= peak / 2:
                    raise RuntimeError(f"{topic} was not compacted within 300 s (segment bytes {last:,} of {peak:,})")
                r = {"tool": "librdkafka", "mode": "compaction", "topic": topic, "records": p["messages"],
                     "keys": keys, "peak_log_bytes": peak, "compacted_log_bytes": last,
                     "clean_seconds": shrunk_at - produced_at,
                     "cleaned_mb_per_s": (peak - last) / 1e6 / (shrunk_at - produced_at),
                     "produce_msgs_per_s": p["msgs_per_s"], "quiet": quiet, "during": during}
                self.res.raw.append({"target": target, **r})
                self.env.delete_topic(target, topic)
                return r
            r = self.attempt(f"compaction {target}", go)
            if not r:
                continue
            w = f"compaction: {records:,} updates of {keys:,} keys"
            self.res.add(("compaction", "mb/s"), target, r["cleaned_mb_per_s"],
                         dict(meta, workload=f"{w}, MB of segments cleaned per second", unit="MB/s"))
            self.res.add(("compaction", "bytes"), target, r["compacted_log_bytes"] / keys,
                         dict(meta, workload=f"{w}, segment bytes left per key", unit="bytes/record"))
            for kind in ("produce", "e2e"):
                for when, lat in (("idle", r["quiet"]), ("while cleaning", r["during"])):
                    if lat:
                        self.res.add(("compaction", kind, when), target, lat[f"{kind}_p99_ms"],
                                     dict(meta, workload=f"compaction: {kind} latency p99, {when}", acks="all",
                                          unit="ms", rate=1000))
            log(f"  {target}: {r['records']} records, segments {r['peak_log_bytes']:,} -> "
                f"{r['compacted_log_bytes']:,} B in {r['clean_seconds']:.1f} s ({r['cleaned_mb_per_s']:.1f} MB/s); "
                f"p99 produce idle {r['quiet'].get('produce_p99_ms')} / cleaning {r['during'].get('produce_p99_ms')} ms")

    def iggy_topic_dirs(self) -> list[Path]:
        return sorted((self.env.iggy.tmp / "data" / "streams").glob("*/topics/*"))

    def tls_case(self, rep, size, acks, parts, seconds):
        """Produce, then consume what was produced, over the SSL listeners of the bridge and of Kafka
        (same certificates, client certificates required), beside the same over PLAINTEXT."""
        for tls in (True, False):
            base = dict(size=size, acks=acks, compression="none", partitions=parts, durability="pagecache", tls=tls)
            for target in self.order(rep, ("bridge", "kafka")):
                topic = self.topic(target, f"tls{int(tls)}-{size}-{acks}-{parts}")
                def go(target=target, topic=topic, tls=tls):
                    self.env.create_topic(target, topic, parts, "pagecache")
                    p = self.measured(target, lambda: self.rdkafka("produce", target, topic, tls=tls, size=size,
                                                                   acks=acks, partitions=parts, seconds=seconds))
                    c = self.measured(target, lambda: self.rdkafka("consume", target, topic, tls=tls,
                                                                   partitions=parts, messages=p["messages"]))
                    self.env.delete_topic(target, topic)
                    return p, c
                r = self.attempt(f"{'TLS' if tls else 'plaintext'} produce+consume {target} {base}", go)
                if not r:
                    continue
                for workload, x in zip(("produce", "consume"), r):
                    meta = dict(base, tool="librdkafka", workload=workload)
                    if workload == "consume":
                        meta["acks"] = "-"
                    for unit, field in (("msgs/s", "msgs_per_s"), ("MB/s", "mb_per_s")):
                        self.res.add((f"tls-{workload}", tls, size, acks, parts, unit), target, x[field],
                                     dict(meta, unit=unit))

    def latency_case(self, rep, profile, rate, seconds, size=1024):
        for target in self.order(rep):
            topic = self.topic(target, "lat")
            def go(target=target, topic=topic):
                self.env.create_topic(target, topic, 1, profile)
                if target == "iggy":
                    r = self.native("latency", topic, rate=rate, seconds=seconds, size=size)
                else:
                    r = self.rdkafka("latency", target, topic, rate=rate, seconds=seconds, size=size, acks="all")
                self.env.delete_topic(target, topic)
                return r
            r = self.attempt(f"latency {target} {profile}", go)
            if r:
                self.res.raw.append({"target": target, **r})
                for kind in ("produce", "e2e"):
                    for p in ("p50", "p99", "p999"):
                        self.res.add(("latency", kind, p, profile), target, r[f"{kind}_{p}_ms"],
                                     dict(tool="librdkafka", workload=f"{kind} latency {p}", size=size, acks="all",
                                          compression="none", partitions=1, durability=profile, unit="ms",
                                          rate=rate))

    def commit_case(self, rep, seconds, threads=4):
        for target in self.order(rep):
            topic = self.topic(target, "commit")
            def go(target=target, topic=topic):
                self.env.create_topic(target, topic, 1, "pagecache")
                if target == "iggy":
                    r = self.native("commit", topic, seconds=seconds, inflight=threads)
                else:
                    r = self.rdkafka("commit", target, topic, seconds=seconds, threads=threads)
                self.env.delete_topic(target, topic)
                return r
            r = self.attempt(f"commit {target}", go)
            if r:
                self.res.raw.append({"target": target, **r})
                self.res.add(("commit", threads), target, r["commits_per_s"],
                             dict(tool="librdkafka", workload=f"offset commits, {threads} committers", size="-",
                                  acks="-", compression="-", partitions=1, durability="-", unit="commits/s"))

    def txn_case(self, rep, size, parts, seconds, commit_ms=100):
        """Transactional produce: `kafka-load txproduce`, a transaction committed every commit_ms
        (Kafka Streams' default commit interval). No native column: Iggy has no transactions."""
        for target in self.order(rep, KAFKA_TARGETS):
            topic = self.topic(target, "txn")
            def go(target=target, topic=topic):
                self.env.create_topic(target, topic, parts, "pagecache")
                r = self.measured(target, lambda: self.rdkafka("txproduce", target, topic, size=size, partitions=parts,
                                                               seconds=seconds, commit_ms=commit_ms))
                self.env.delete_topic(target, topic)
                return r
            r = self.attempt(f"txproduce {target}", go)
            if not r:
                continue
            meta = dict(tool="librdkafka", size=size, acks="all", compression="none", partitions=parts,
                        durability="pagecache")
            w = f"produce, a transaction per {commit_ms} ms"
            self.res.add(("txn", size, parts, commit_ms, "msgs/s"), target, r["msgs_per_s"],
                         dict(meta, workload=w, unit="msgs/s"))
            for q in ("p50", "p99"):
                self.res.add(("txn", size, parts, commit_ms, q), target, r[f"commit_{q}_ms"],
                             dict(meta, workload=f"commit latency {q}, a transaction per {commit_ms} ms", unit="ms"))

    def rebalance_case(self, rep, members=50, partitions=50):
        """A group of `members` confluent-kafka consumers on a topic of as many partitions, with
        the classic protocol (librdkafka's range assignor) and the consumer protocol (KIP-848, the
        server's uniform assignor): seconds from the subscribes until every partition is owned by
        exactly one member and every member owns one ("join"), then from one member's close until
        the others own every partition again ("leave")."""
        from confluent_kafka import Consumer

        for protocol in ("classic", "consumer"):
            for target in self.order(rep, KAFKA_TARGETS):
                topic = self.topic(target, f"rebalance-{protocol}")

                def go(target=target, topic=topic, protocol=protocol):
                    self.env.create_topic(target, topic, partitions, "pagecache")
                    owned: dict[int, set] = {}
                    lock = threading.Lock()
                    stop = [threading.Event() for _ in range(members)]
                    group = f"{topic}-g"

                    def member(i):
                        conf = {"bootstrap.servers": self.env.bootstrap(target), "group.id": group,
                                "group.protocol": protocol, "enable.auto.commit": False, "log_level": 0}
                        if protocol == "classic":
                            conf.update({"session.timeout.ms": 10000, "heartbeat.interval.ms": 1000})
                        c = Consumer(conf)
                        c.subscribe([topic])
                        try:
                            while not stop[i].is_set():
                                c.poll(0.05)
                                mine = {tp.partition for tp in c.assignment()}
                                with lock:
                                    owned[i] = mine
                        finally:
                            c.close()
                            with lock:
                                owned.pop(i, None)

                    def settled(alive) -> bool:
                        """Every partition owned by exactly one member, and every member owns some:
                        a group's first member owns them all for a moment."""
                        with lock:
                            got = [owned.get(i, set()) for i in alive]
                        everyone = [p for s in got for p in s]
                        return (len(everyone) == partitions and len(set(everyone)) == partitions
                                and all(got))

                    def wait(alive, limit=120.0) -> float:
                        t0 = time.monotonic()
                        while not settled(alive):
                            if time.monotonic() - t0 > limit:
                                raise TimeoutError(f"{protocol} group on {target} not settled in {limit:.0f} s")
                            time.sleep(0.02)
                        return time.monotonic() - t0

                    threads = [threading.Thread(target=member, args=(i,), daemon=True) for i in range(members)]
                    try:
                        for t in threads:
                            t.start()
                        join = wait(range(members))
                        stop[0].set()
                        threads[0].join(timeout=60)
                        leave = wait(range(1, members))
                    finally:
                        for e in stop:
                            e.set()
                        for t in threads:
                            t.join(timeout=60)
                    self.env.delete_topic(target, topic)
                    return {"join_s": join, "leave_s": leave}

                r = self.attempt(f"rebalance {protocol} {target}", go)
                if not r:
                    continue
                self.res.raw.append({"target": target, "mode": "rebalance", "protocol": protocol, **r})
                for what, key in (("join", "join_s"), ("leave", "leave_s")):
                    self.res.add(("rebalance", members, protocol, what), target, r[key],
                                 dict(tool="librdkafka", workload=f"{members}-member group, {protocol} protocol: "
                                      + ("all joined to every partition owned" if what == "join"
                                         else "one left to every partition owned again"),
                                      size="-", acks="-", compression="-", partitions=partitions, durability="-",
                                      unit="s"))
                log(f"    {protocol} {target}: join {r['join_s']:.2f} s, leave {r['leave_s']:.2f} s")

    def idle_connections(self, n: int):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n * 3 + 256)), hard))
        # ApiVersions v0, correlation id 1, client id "idle": a connection the server has served.
        frame = request(18, 0, 1, client_id="idle")
        for target in TARGETS:
            pid = self.env.pids[target]
            port = self.env.port(target)
            time.sleep(0.5)
            before = proc_status_kb(pid, "VmRSS")
            socks = []
            try:
                for _ in range(n):
                    s = socket.create_connection(("127.0.0.1", port), timeout=10)
                    if target != "iggy":
                        s.sendall(frame)
                    socks.append(s)
                for s in socks:
                    if target != "iggy":
                        s.recv(4096)
                time.sleep(1.0)
                after = proc_status_kb(pid, "VmRSS")
                per = (after - before) * 1024 / n
                self.res.add(("idle",), target, per, dict(tool="raw TCP", workload=f"memory per idle connection ({n})",
                                                          size="-", acks="-", compression="-", partitions="-",
                                                          durability="-", unit="bytes"))
                self.res.raw.append({"target": target, "mode": "idle", "connections": n, "rss_before_kb": before,
                                     "rss_after_kb": after})
                log(f"  {target}: {n} idle connections, RSS {before / 1024:.1f} -> {after / 1024:.1f} MiB")
            except Exception as e:  # noqa: BLE001
                self.res.errors.append(f"idle connections {target}: {e}")
                log(f"  FAILED idle connections {target}: {e}")
            finally:
                for s in socks:
                    s.close()

    def sdk_comparison(self, messages: int):
        py = ROOT / ".venv" / "bin" / "python"
        py = py if py.exists() else Path(sys.executable)
        if subprocess.run([str(py), "-c", "import apache_iggy"], capture_output=True).returncode != 0:
            self.res.errors.append("Iggy client vs SDK: SKIPPED (apache-iggy missing: run tests/clients/setup.sh)")
            return
        addr = self.env.iggy.address
        for r in range(1 if self.quick else 3):
            ours = self.attempt("iggy client", lambda: json_line(run(
                [self.env.tools["iggy"], "--address", addr, "--topic", f"client-{r}", "--messages", messages], 240)))
            self.attempt("sdk create", lambda: run([self.env.tools["iggy"], "--address", addr, "--topic", f"sdk-{r}",
                                                    "--create-only"], 60))
            sdk = self.attempt("iggy sdk", lambda: json_line(run(
                [py, ROOT / "bench" / "iggy_sdk_bench.py", "--address", addr, "--topic", f"sdk-{r}",
                 "--messages", messages], 240, json_despite_exit=True)))
            for x in (ours, sdk):
                if x:
                    self.res.raw.append({"target": "sdk-comparison", **x})
            for t in (f"client-{r}", f"sdk-{r}"):
                self.attempt("delete", lambda t=t: run([self.env.tools["iggy"], "--address", addr, "--topic", t,
                                                         "--delete"], 60))


# ---- report --------------------------------------------------------------------------------------

def fmt(v, unit):
    if v is None:
        return "–"
    if unit in ("ms", "s"):
        return f"{v:.2f}"
    if unit in ("MB/s", "bytes/record"):
        return f"{v:,.1f}"
    return f"{v:,.0f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def machine() -> str:
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({model}), {mem:.1f} GiB RAM, Linux {platform.release()}"


def label(m: dict) -> str:
    w = m["workload"]
    if w in ("produce", "consume"):
        parts = [f"{m['size']} B" if m['size'] != 1024 else "1 KiB", f"{m['partitions']}p"]
        if w == "produce":
            parts += [f"acks={m['acks']}", m["compression"]]
        if m.get("consume"):
            parts.append(m["consume"])
        return (f"{w} {m['tool']} " + " ".join(parts) + (f" [{m['durability']}]" if m["durability"] == "fsync" else "")
                + {True: " [TLS]", False: " [plaintext, beside TLS]"}.get(m.get("tls"), ""))
    if "a transaction per" in w:
        return f"{w}, librdkafka 1 KiB {m['partitions']}p"
    if "latency" in w:
        return f"{w} @ {m['rate']:.0f} msg/s 1 KiB" + (f" [{m['durability']}]" if m["durability"] == "fsync" else "")
    return w


def write_report(bench: Bench, out: Path, started: float, args, env_desc: dict):
    res = bench.res
    rows = []
    for key in res.order:
        m = res.meta[key]
        med = {t: res.median(key, t) for t in TARGETS}
        runs = max(len(v) for v in res.samples[key].values())
        rows.append((key, m, med, runs))

    with open(out.with_suffix(".csv"), "w", newline="") as f:
        w = csv.writer(f)
        before = "before" in TARGETS
        w.writerow(["figure", "workload", "tool", "size", "acks", "compression", "partitions", "durability", "unit"]
                   + list(TARGETS) + ["bridge_over_kafka", "bridge_over_iggy"]
                   + (["bridge_over_before"] if before else []) + ["runs"])
        r3 = lambda r: "" if r is None else round(r, 3)  # noqa: E731
        for key, m, med, runs in rows:
            w.writerow([label(m), m["workload"], m["tool"], m["size"], m["acks"], m["compression"], m["partitions"],
                        m["durability"], m["unit"]] + [("" if med[t] is None else round(med[t], 3)) for t in TARGETS] +
                       [r3(ratio(med["bridge"], med["kafka"])), r3(ratio(med["bridge"], med["iggy"]))]
                       + ([r3(ratio(med["bridge"], med["before"]))] if before else []) + [runs])

    elapsed = time.time() - started
    L = [f"# kafka-iggy-bridge benchmark, {dt.datetime.utcfromtimestamp(started):%Y-%m-%d %H:%M} UTC"
         + (" (quick)" if bench.quick else ""), "",
         f"Machine: {machine()}. {env_desc['versions']}. Wall time {elapsed / 60:.1f} min; "
         f"median of {args.runs} alternating run(s) per figure. Ratios are from this run only; "
         "lower is better for latency and bytes, higher for the rest.", "",
         "| figure | unit | bridge | Kafka | native Iggy | bridge/Kafka | bridge/Iggy |"
         + (" bridge before | after/before |" if "before" in TARGETS else ""),
         "|---|---|---|---|---|---|---|" + ("---|---|" if "before" in TARGETS else "")]
    r2 = lambda r: "–" if r is None else f"{r:.2f}"  # noqa: E731
    for key, m, med, runs in rows:
        if key[0] in ("produce", "consume", "tls-produce", "tls-consume") and m["unit"] == "MB/s":
            continue
        line = (f"| {label(m)} | {m['unit']} | {fmt(med['bridge'], m['unit'])} | {fmt(med['kafka'], m['unit'])} | "
                f"{fmt(med['iggy'], m['unit'])} | {r2(ratio(med['bridge'], med['kafka']))} | "
                f"{r2(ratio(med['bridge'], med['iggy']))} |")
        if "before" in TARGETS:
            line += f" {fmt(med['before'], m['unit'])} | {r2(ratio(med['bridge'], med['before']))} |"
        L.append(line)
    per_m = bench.cpu_per_million
    bridge_pm, iggy_behind = per_m("bridge"), bench.cpu_per_million_iggy_behind_bridge()
    L += ["", "Bridge process:", "",
          f"- RSS idle (after start-up, before any load): {env_desc['idle_rss_kb'] / 1024:.1f} MiB",
          f"- peak RSS (VmHWM over the whole run): {bench.rss_peak_kb / 1024:.1f} MiB",
          f"- CPU per million messages (all throughput runs, produce and consume): "
          f"bridge {fmt(bridge_pm, 'ms') if bridge_pm is not None else '–'} s, plus iggy-server behind it "
          f"{fmt(iggy_behind, 'ms') if iggy_behind is not None else '–'} s; Kafka broker "
          f"{fmt(per_m('kafka'), 'ms') if per_m('kafka') is not None else '–'} s; iggy-server driven natively "
          f"{fmt(per_m('iggy'), 'ms') if per_m('iggy') is not None else '–'} s"]
    L += ["", "Targets (issue \"Benchmarks\"; measured and reported, never asserted):", ""] + targets(bench, env_desc)
    sdk = [r for r in res.raw if r.get("target") == "sdk-comparison"]
    if sdk:
        by: dict[str, list] = {}
        for r in sdk:
            by.setdefault(r["client"], []).append(r)
        L += ["", "Iggy client layer: the bridge's src/iggy client beside Iggy's own SDK (apache-iggy, Python binding "
              "of the Rust SDK), same iggy-server, 1 KiB messages in batches of 100, 4 in flight:", "",
              "| figure | bridge Iggy client | Iggy SDK | ratio |", "|---|---|---|---|"]
        ours, theirs = by.get("kafka-iggy-bridge src/iggy", []), by.get("apache-iggy (Iggy Rust SDK)", [])
        for k in ("send_msgs_per_s", "poll_msgs_per_s"):
            a = statistics.median(x[k] for x in ours) if ours else None
            b = statistics.median(x[k] for x in theirs) if theirs else None
            L.append(f"| {k} | {fmt(a, '')} | {fmt(b, '')} | {'–' if ratio(a, b) is None else f'{ratio(a, b):.2f}'} |")
    if res.errors:
        L += ["", "Failed or skipped runs (their figures are missing above):", ""] + [f"- {e}" for e in res.errors]
    L += ["", f"Chart: {out.with_suffix('.png').name}. Raw results: {out.with_suffix('.jsonl').name}; "
          f"table as CSV: {out.with_suffix('.csv').name}. Column meanings: bench/README.md."]
    text = "\n".join(L) + "\n"
    out.with_suffix(".md").write_text(text)
    with open(out.with_suffix(".jsonl"), "w") as f:
        for r in res.raw:
            f.write(json.dumps(r) + "\n")
    chart(bench, out)
    return text


def targets(bench: Bench, env_desc: dict) -> list[str]:
    """Each target of the issue against this run's figures: met or MISSED, and by how much. Only
    what this run measured is listed."""
    res, out = bench.res, []
    tally = {"met": 0, "MISSED": 0}

    def verdict(ok):
        v = "met" if ok else "MISSED"
        tally[v] += 1
        return v

    def at_least(r, goal):  # a ratio against its goal: "1.12 (>= 1.0: met, 12% over)", "0.72 (>= 0.8: MISSED by 10%)"
        off = abs(r / goal - 1) * 100
        return f"{r:.2f} (>= {goal}: " + (f"{verdict(True)}, {off:.0f}% over)" if r >= goal else
                                            f"{verdict(False)} by {off:.0f}%)")

    def at_most(v, goal, unit, name=None):  # an absolute figure under its ceiling, the margin in its unit
        head = f"(<= {name or f'{goal:g} {unit}'}: "
        return head + (f"{verdict(True)}, {goal - v:.2f} {unit} to spare)" if v <= goal else
                       f"{verdict(False)} by {v - goal:.2f} {unit})")

    # Throughput: every uncompressed page-cache produce row (1 KiB and 100 B, librdkafka and
    # kafka-producer-perf-test) and every consume row (catch-up and tailing; librdkafka and
    # kafka-consumer-perf-test). Native Iggy only where the run has a native figure.
    for key in res.order:
        m = res.meta[key]
        if key[0] not in ("produce", "consume") or m["unit"] != "msgs/s":
            continue
        if m["compression"] not in ("none", "-") or m["durability"] != "pagecache":
            continue
        b, k, i = (res.median(key, t) for t in ("bridge", "kafka", "iggy"))
        parts = []
        if b and k:
            parts.append(f"bridge/Kafka {at_least(b / k, 1.0)}")
        if b and i:
            parts.append(f"bridge/native Iggy {at_least(b / i, 0.8)}")
        elif b and m["tool"] == "librdkafka":
            parts.append("bridge/native Iggy – (" + ("iggy-client-bench has no tailing mode"
                                                      if m.get("consume") == "tailing" else "not measured") + ")")
        if parts:
            out.append(f"- {label(m)}: " + ", ".join(parts))
    cpu = bench.cpu_per_million("bridge")
    if cpu is not None:
        behind = bench.cpu_per_million_iggy_behind_bridge()
        out.append(f"- CPU per million messages, bridge alone: {cpu:.2f} s {at_most(cpu, 0.4, 's')}; iggy-server "
                   f"behind it {behind:.2f} s (reported, no target; together {cpu + behind:.2f} s"
                   + (f", Kafka broker {bench.cpu_per_million('kafka'):.2f} s"
                      if bench.cpu_per_million("kafka") is not None else "") + ")")
    for profile in ("pagecache", "fsync"):
        key = ("latency", "produce", "p99", profile)
        b, i = res.median(key, "bridge"), res.median(key, "iggy")
        if b is not None and i is not None:
            limit = i + 1.0
            out.append(f"- p99 produce latency at 1,000 msg/s [{profile}]: bridge {b:.2f} ms, native Iggy {i:.2f} ms "
                       + at_most(b, limit, "ms", f"native + 1 ms = {limit:.2f} ms"))
    idle = env_desc["idle_rss_kb"] * 1024 / 1e6
    out.append(f"- bridge RSS idle {idle:.1f} MB {at_most(idle, 50, 'MB')}")
    if bench.rss_peak_kb:
        peak = bench.rss_peak_kb * 1024 / 1e6
        out.append(f"- bridge peak RSS (VmHWM over the run) {peak:.1f} MB {at_most(peak, 200, 'MB')}")
    per = res.median(("idle",), "bridge")
    if per is not None:
        out.append(f"- bridge memory per idle connection {per / 1000:.1f} KB {at_most(per / 1000, 20, 'KB')}")
    log_b, log_k = res.median(("storage", "log"), "bridge"), res.median(("storage", "log"), "kafka")
    tot_b, tot_k = res.median(("storage", "total"), "bridge"), res.median(("storage", "total"), "kafka")
    if tot_b is not None or tot_k is not None:
        f1 = lambda v: "–" if v is None else f"{v:,.1f}"  # noqa: E731
        rt = ratio(tot_b, tot_k)
        out.append(f"- storage, 1 KiB JSON-like values, zstd from the producer (reported, no target): bridge+Iggy "
                   f"{f1(tot_b)} bytes/record ({f1(log_b)} in segment .log files), Kafka {f1(tot_k)} ({f1(log_k)}); "
                   f"bridge/Kafka {'–' if rt is None else f'{rt:.2f}x'}. The bridge stores records uncompressed "
                   "(Iggy's compression_algorithm is a label only, and the bridge has no iggy.* topic config for "
                   "it); its own state (SQLite, not per topic) is not counted")
    if tally["met"] or tally["MISSED"]:
        out.append(f"- in all: {tally['met']} met, {tally['MISSED']} MISSED")
    return out


def chart(bench: Bench, out: Path):
    gp = shutil.which("gnuplot")
    if not gp:
        bench.res.errors.append("chart: gnuplot missing (make deps installs gnuplot-nox)")
        return
    res = bench.res
    tp = [(label(res.meta[k]).replace("librdkafka ", "").replace(" none", ""), k) for k in res.order
          if k[0] in ("produce", "consume") and res.meta[k]["unit"] == "MB/s" and res.meta[k]["size"] == 1024
          and res.meta[k]["tool"] == "librdkafka" and res.meta[k]["compression"] == "none"]
    lat = [(f"{k[1]} {k[2]}" + (" fsync" if k[3] == "fsync" else ""), k) for k in res.order if k[0] == "latency"]
    dat = out.with_suffix(".chart.dat")
    with open(dat, "w") as f:
        for block in (tp, lat):
            for name, k in block:
                vals = [res.median(k, t) for t in ("bridge", "kafka", "iggy")]
                f.write('"' + name + '" ' + " ".join("NaN" if v is None else f"{v:.4f}" for v in vals) + "\n")
            f.write("\n\n")
    def plot(index, has_data):
        if not has_data:
            return 'set label 1 "not measured in this run" at graph 0.5,0.5 center\nplot NaN notitle\nunset label 1'
        return (f'plot "{dat}" index {index} using 2:xtic(1) title "bridge" lc rgb "#1f77b4", '
                f"'' index {index} using 3 title \"Kafka\" lc rgb \"#7f7f7f\", "
                f"'' index {index} using 4 title \"native Iggy\" lc rgb \"#ff7f0e\"")
    lat_rate = f"{res.meta[lat[0][1]]['rate']:.0f}" if lat else "a fixed rate"
    script = f"""set terminal pngcairo size 1500,560 font ",9"
set output "{out.with_suffix('.png')}"
set multiplot layout 1,2 title "kafka-iggy-bridge vs Apache Kafka vs native Iggy — {machine()}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -35 left noenhanced
set key top right
set grid ytics
set title "Throughput, 1 KiB records, librdkafka (MB/s, higher is better)"
set ylabel "MB/s"
set yrange [0:*]
{plot(0, bool(tp))}
set title "Latency at {lat_rate} msg/s, 1 KiB, acks=all (ms, log scale, lower is better)"
set ylabel "ms"
set yrange [*:*]
set logscale y
{plot(1, bool(lat))}
unset multiplot
"""
    gpf = out.with_suffix(".gnuplot")
    gpf.write_text(script)
    p = subprocess.run([gp, str(gpf)], capture_output=True, text=True)
    if p.returncode != 0:
        bench.res.errors.append(f"chart: gnuplot failed: {p.stderr[-300:]}")
    gpf.unlink(missing_ok=True)
    dat.unlink(missing_ok=True)


# ---- plan ----------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--build-dir", default="build/release")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--before", help="a second build dir whose bridge runs beside, as column 'bridge before'")
    ap.add_argument("--targets", help="comma list of the targets that run (default: all): bridge,before,kafka,iggy")
    ap.add_argument("--only", help="comma list of sections: "
                    "produce,java,fsync,consume,latency,commit,txn,rebalance,idle,sdk,tls,storage,compaction")
    args = ap.parse_args()
    args.runs = args.runs or (1 if args.quick else 3)
    build = (ROOT / args.build_dir).resolve()
    missing = [str(p) for p in (build / "kafka-iggy-bridge", build / "kafka-load", build / "iggy-client-bench")
               if not p.exists()]
    if missing:
        print(f"SKIPPED: missing {', '.join(missing)} (make bench builds them)")
        return 1
    iggy_bin = find_iggy()
    if not iggy_bin:
        print("SKIPPED: no iggy-server (set IGGY_SERVER, or install /usr/local/bin/iggy-server)")
        return 1
    try:
        java_bin()
        import confluent_kafka  # noqa: F401
    except Exception as e:  # noqa: BLE001
        print(f"SKIPPED: {e} (run make deps and tests/clients/setup.sh)")
        return 1

    sections = set((args.only or "produce,java,fsync,consume,latency,commit,txn,rebalance,idle,sdk,tls,storage,compaction").split(","))
    results_dir = ROOT / "bench" / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    out = results_dir / (dt.datetime.utcfromtimestamp(started).strftime("%Y%m%dT%H%M%SZ") + ("-quick" if args.quick else ""))
    global TARGETS, KAFKA_TARGETS, RUN_TARGETS
    if args.targets:
        RUN_TARGETS = tuple(args.targets.split(","))
    before = (ROOT / args.before).resolve() if args.before else None
    if before:
        TARGETS = ("bridge", "before", "kafka", "iggy")
        KAFKA_TARGETS = ("bridge", "before", "kafka")
    env = Env(build, iggy_bin, heap="1g", before=before, tls="tls" in sections)
    bench = Bench(env, args.quick, out)
    try:
        iggy_version = subprocess.run([str(iggy_bin), "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
        versions = (f"iggy-server {iggy_version or iggy_bin}, Apache Kafka {kafka_version(env.kafka.lib)} "
                    f"(1 GiB heap), librdkafka {rdkafka_version()}, Java {java_version()}")
        if args.quick:
            produce = [(1024, "1", "none", 1), (1024, "all", "none", 1), (1024, "all", "lz4", 8), (100, "1", "none", 8)]
            java = [(1024, "all", "none", 1)]
            fsync = [(1024, "all", "none", 1)]
            tls_cases = [(1024, "1", 1)]
            tail_parts = (1, 8)
            seconds, lat_seconds, idle_n = 1.0, 2, 200
        else:
            produce = [(s, a, c, p) for s in (1024, 100) for a in ("1", "all") for c in ("none", "lz4", "zstd")
                       for p in (1, 8)]
            java = [(s, "all", "none", p) for s in (1024, 100) for p in (1, 8)]
            fsync = [(1024, "all", "none", 1), (1024, "all", "none", 8)]
            tls_cases = [(1024, "1", 1), (1024, "all", 8), (100, "1", 8)]
            tail_parts = (1, 8)
            seconds, lat_seconds, idle_n = 1.5, 4, 1000
        if "idle" in sections:
            # First, on fresh processes: after load, freed memory hides what connections cost.
            log("idle connections")
            bench.idle_connections(idle_n)
        for rep in range(args.runs):
            log(f"run {rep + 1}/{args.runs}")
            cases = list(produce)
            random.Random(rep).shuffle(cases)
            if "produce" in sections or "consume" in sections:
                for (s, a, c, p) in cases:
                    consume = "consume" in sections and s == 1024 and a == "1" and c == "none"
                    if "produce" not in sections and not consume:
                        continue  # --only consume: just the produce runs the catch-up reads ride on
                    with_java = "java" in sections and (s, a, c, p) in java
                    log(f"  produce {s} B acks={a} {c} {p}p" + (" + java" if with_java else "")
                        + (" + consume" if consume else ""))
                    bench.produce_case(rep, s, a, c, p, "pagecache", seconds, consume_after=consume, java=with_java,
                                       java_consume="java" in sections)
            if "consume" in sections:
                for p in tail_parts:
                    log(f"  consume tailing 1024 B {p}p" + (" + java" if "java" in sections else ""))
                    bench.tail_case(rep, 1024, p, seconds, java="java" in sections)
            if "fsync" in sections:
                for (s, a, c, p) in fsync:
                    log(f"  produce {s} B acks={a} {c} {p}p [fsync]")
                    bench.produce_case(rep, s, a, c, p, "fsync", seconds)
            if "latency" in sections:
                log("  latency")
                bench.latency_case(rep, "pagecache", 1000, lat_seconds)
                if not args.quick:
                    bench.latency_case(rep, "fsync", 1000, lat_seconds)
            if "tls" in sections:
                for (s, a, p) in tls_cases:
                    log(f"  TLS and plaintext: produce+consume {s} B acks={a} {p}p")
                    bench.tls_case(rep, s, a, p, seconds)
            if "commit" in sections:
                log("  commits")
                bench.commit_case(rep, 2.0 if not args.quick else 1.5)
            if "rebalance" in sections:
                log("  rebalance: 50-member group, classic and consumer protocol")
                bench.rebalance_case(rep)
            if "txn" in sections:
                for p in ((1,) if args.quick else (1, 8)):
                    log(f"  transactional produce 1024 B {p}p, a transaction per 100 ms")
                    bench.txn_case(rep, 1024, p, 2.0 if not args.quick else 1.5)
        if "storage" in sections:
            log("storage: bytes on disk per record")
            bench.storage_case(50000)
        if "compaction" in sections:
            log("compaction: cleaning throughput and latency while cleaning")
            bench.compaction_case(50000 if args.quick else 200000, 1000)
        if "sdk" in sections:
            log("Iggy client vs Iggy SDK")
            bench.sdk_comparison("20000" if args.quick else "50000")
    finally:
        env.stop()
    text = write_report(bench, out, started, args, {"versions": versions, "idle_rss_kb": env.bridge_idle_rss_kb})
    print(text)
    log(f"results: {out}.md, .csv, .jsonl, .png")
    return 0


def rdkafka_version() -> str:
    try:
        import ctypes
        lib = ctypes.CDLL("librdkafka.so.1")
        lib.rd_kafka_version_str.restype = ctypes.c_char_p
        return lib.rd_kafka_version_str().decode()
    except OSError:
        return "?"


def java_version() -> str:
    p = subprocess.run([java_bin(), "-version"], capture_output=True, text=True)
    first = (p.stderr or p.stdout).splitlines()[0] if (p.stderr or p.stdout) else "?"
    return first.split('"')[1] if '"' in first else first


if __name__ == "__main__":
    sys.exit(main())
