"""Java runners: tests/clients/java/Scenario.java (kafka-clients) and the stock tools
(ConsoleProducer, ConsoleConsumer, BrokerApiVersionsCommand) from tests/.java/lib; the group
tests' GroupMember.java and GroupCommandShell.java (kafka-consumer-groups in one JVM).

Jars come from tools/fetch-kafka; the programs in tests/clients/java are compiled with javac
against Kafka's jars into tests/.java/classes (recompiled when the source is newer).

Security: the request's "security" becomes a client properties file
(client_security.java_properties) given to Scenario.java as --config FILE and to the console
tools as --producer.config / --consumer.config / --command-config. "mode": "metadata" lists the
topics the client is shown: Scenario.java --list-topics, and for the console tools
`kafka-topics --list`.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

from harness import util
from harness.kafka_broker import ensure_kafka_jars, java_bin, kafka_version
from scenario import Caps

from . import client_security

# Client JVMs are short-lived: favour start-up over peak speed.
JVM_FAST = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx256m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dlog4j2.level=warn"]

CAPS = Caps()
# The console tools are line/text based: no binary data, no timestamps; header values
# must avoid the separators; two codecs (compression is covered by Scenario.java).
CONSOLE_CAPS = Caps(codecs=("none", "lz4"), timestamps=False, header_binary=False, binary_data=False,
                    max_value_bytes=10_000, headers_on_every_record=True)

NULL_MARKER = "<KIB-NULL>"
FIELD_SEP = "\x1f"  # between key and value, and between the consumer's printed fields
HEADERS_DELIM = "\x1d"  # between the headers and the key on a producer line


def available() -> bool:
    return shutil.which("javac") is not None and shutil.which("java") is not None


def version() -> str:
    return f"kafka-clients {kafka_version()}"


def lib(next_tier: bool = False) -> Path:
    return ensure_kafka_jars(next_tier)


def classes_dir(next_tier: bool = False) -> Path:
    """Where compile_java puts its classes: tests/.java/classes, or classes-<version> for the
    newer reference tier (each compiled against its own Kafka jars)."""
    if not next_tier:
        return util.JAVA_CLASSES
    return util.JAVA_DIR / f"classes-{kafka_version(lib(True))}"


def compile_java(name: str, next_tier: bool = False) -> Path:
    """javac tests/clients/java/NAME.java -> classes_dir() (skipped when up to date)."""
    libdir = lib(next_tier)
    src = util.CLIENTS_DIR / "java" / f"{name}.java"
    out = classes_dir(next_tier)
    cls = out / f"{name}.class"
    if cls.exists() and cls.stat().st_mtime >= src.stat().st_mtime:
        return out
    out.mkdir(parents=True, exist_ok=True)
    javac = shutil.which("javac")
    p = subprocess.run([javac, "-nowarn", "-d", str(out), "-cp", str(libdir / "*"), str(src)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"javac {name}.java failed:\n{p.stdout}\n{p.stderr}")
    return out


def compile_scenario() -> Path:
    return compile_java("Scenario")


def classpath(next_tier: bool = False) -> str:
    """Compiled runners first, then Kafka's jars (the newer reference tier's with `next_tier`)."""
    return f"{classes_dir(next_tier)}{os.pathsep}{lib(next_tier) / '*'}"


def _field(h: str | None) -> str:
    return "-" if h is None else "x" + h


def scenario_input(req: dict) -> str:
    lines = [f"{req['bootstrap']} {req['topic']} {req['partition']} {1 if req['create_topic'] else 0} "
             f"{req['timeout_ms']} {len(req['records'])} {req.get('consume_count', len(req['records']))}"]
    for r in req["records"]:
        parts = [r["codec"], "-" if r["timestamp"] is None else str(r["timestamp"]), _field(r["key"]),
                 _field(r["value"]), str(len(r["headers"]))]
        for name, value in r["headers"]:
            parts += [_field(name.encode().hex()), _field(value)]
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


@contextmanager
def client_config(req: dict):
    """The request's security settings as a temporary properties file (None without any)."""
    props = client_security.java_properties(req.get("security"))
    if not props:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="kib-client-config-") as d:
        path = Path(d) / "client.properties"
        path.write_text(client_security.properties_text(props))
        yield str(path)


def run(req: dict, timeout: float | None = None) -> dict:
    compile_scenario()
    timeout = timeout or req["timeout_ms"] / 1000.0 * 3 + 30
    cp = classpath()
    if req.get("mode") == "metadata":
        req = {**req, "topic": "-", "partition": 0, "create_topic": False, "records": []}
    with client_config(req) as config:
        args = (["--config", config] if config else []) + (["--list-topics"] if req.get("mode") == "metadata" else [])
        p = subprocess.run([java_bin(), *JVM_FAST, "-cp", cp, "Scenario", *args], input=scenario_input(req).encode(),
                           capture_output=True, timeout=timeout)
    if p.returncode != 0 or not p.stdout.strip():
        raise RuntimeError(f"Scenario.java exit {p.returncode}:\n{p.stderr.decode(errors='replace')[-4000:]}")
    return json.loads(p.stdout)


def tool(main_class: str, args: list[str], input_bytes: bytes | None = None, timeout: float = 120):
    """Runs one stock Kafka tool (java -cp 'tests/.java/lib/*' MAIN ARGS)."""
    return subprocess.run([java_bin(), *JVM_FAST, "-cp", str(lib() / "*"), main_class, *args],
                          input=input_bytes, capture_output=True, timeout=timeout)


def api_versions(bootstrap: str, timeout: float = 120) -> str:
    p = tool("org.apache.kafka.tools.BrokerApiVersionsCommand", ["--bootstrap-server", bootstrap], timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"BrokerApiVersionsCommand exit {p.returncode}:\n{p.stdout.decode()[-2000:]}\n"
                           f"{p.stderr.decode(errors='replace')[-4000:]}")
    return p.stdout.decode()


API_LINE = re.compile(r"^\s*(\w+)\((\d+)\):\s*(.*?),?\s*$")


def parse_api_versions(text: str) -> dict[str, dict]:
    """{'Produce': {'key': 0, 'range': (3, 13), 'usable': 13} ...} from the tool's output."""
    apis = {}
    for line in text.splitlines():
        m = API_LINE.match(line)
        if not m:
            continue
        name, key, rest = m.group(1), int(m.group(2)), m.group(3)
        entry = {"key": key, "range": None, "usable": None, "text": rest}
        r = re.match(r"(\d+) to (\d+)", rest)
        if r:
            entry["range"] = (int(r.group(1)), int(r.group(2)))
        u = re.search(r"\[usable: (\d+)\]", rest)
        if u:
            entry["usable"] = int(u.group(1))
        apis[name] = entry
    return apis


def _console_text(h: str | None) -> str:
    return NULL_MARKER if h is None else bytes.fromhex(h).decode()


def console_run(req: dict) -> dict:
    """ConsoleProducer (one run per codec; records batched, flushed at exit) then ConsoleConsumer (--partition,
    --offset earliest: assign, no group); returns the usual result dict. Text data only."""
    with client_config(req) as config:
        if req.get("mode") == "metadata":
            return _console_list_topics(req, config)
        return _console_run(req, config)


def _console_list_topics(req: dict, config: str | None) -> dict:
    """kafka-topics --list [--command-config FILE]: the topics, or what the tool printed."""
    out = {"client": "java-console", "version": f"kafka-tools {kafka_version()}", "topics": None, "errors": []}
    p = tool("org.apache.kafka.tools.TopicCommand", ["--bootstrap-server", req["bootstrap"], "--list",
                                                     *(["--command-config", config] if config else [])],
             timeout=req["timeout_ms"] / 1000.0 + 60)
    if p.returncode == 0:
        out["topics"] = sorted(p.stdout.decode().split())
    else:
        out["errors"] = [f"kafka-topics --list exit {p.returncode}"] + \
            (p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")).strip().splitlines()
    return out


def _console_run(req: dict, config: str | None) -> dict:
    bootstrap, topic, part = req["bootstrap"], req["topic"], req["partition"]
    records = req["records"]
    errors: list[str] = []
    if req["create_topic"]:
        p = tool("org.apache.kafka.tools.TopicCommand", ["--bootstrap-server", bootstrap, "--create", "--topic", topic,
                                                         "--partitions", "1", "--replication-factor", "1",
                                                         *(["--command-config", config] if config else [])])
        if p.returncode != 0:
            errors.append(f"TopicCommand --create exit {p.returncode}: {p.stdout.decode()[-500:]}"
                          f"{p.stderr.decode(errors='replace')[-1500:]}")
    produced = [{"offset": None, "error": None} for _ in records]
    # parse.headers=true refuses a line without headers: records with and without headers
    # go through separate ConsoleProducer runs (as do codecs).
    def sig(r):
        return (r["codec"], bool(r["headers"]))

    i = 0
    while i < len(records):
        j = i
        while j < len(records) and sig(records[j]) == sig(records[i]):
            j += 1
        with_headers = bool(records[i]["headers"])
        lines = []
        for r in records[i:j]:
            hdrs = ",".join(f"{n}:{_console_text(v)}" for n, v in r["headers"])
            line = f"{_console_text(r['key'])}{FIELD_SEP}{_console_text(r['value'])}"
            lines.append(f"{hdrs}{HEADERS_DELIM}{line}" if with_headers else line)
        args = ["--bootstrap-server", bootstrap, "--topic", topic,
                "--compression-codec", records[i]["codec"],
                "--property", "parse.key=true", "--property", f"key.separator={FIELD_SEP}",
                "--property", f"parse.headers={'true' if with_headers else 'false'}",
                "--property", f"headers.delimiter={HEADERS_DELIM}",
                "--property", f"null.marker={NULL_MARKER}",
                "--producer-property", "acks=all", *(["--producer.config", config] if config else [])]
        p = tool("org.apache.kafka.tools.ConsoleProducer", args, ("\n".join(lines) + "\n").encode("utf-8"))
        if p.returncode != 0 or b"ERROR" in p.stderr or b"Exception" in p.stderr:
            msg = f"ConsoleProducer exit {p.returncode}: {p.stderr.decode(errors='replace')[-1500:]}"
            for k in range(i, j):
                produced[k]["error"] = msg
        i = j

    args = ["--bootstrap-server", bootstrap, "--topic", topic, "--partition", str(part), "--offset", "earliest",
            "--max-messages", str(req.get("consume_count", len(records))), "--timeout-ms", str(req["timeout_ms"]),
            "--property", "print.offset=true", "--property", "print.timestamp=true",
            "--property", "print.key=true", "--property", "print.headers=true",
            "--property", f"key.separator={FIELD_SEP}", "--property", "line.separator=\x1e\n",
            "--property", f"null.literal={NULL_MARKER}", *(["--consumer.config", config] if config else [])]
    p = tool("org.apache.kafka.tools.consumer.ConsoleConsumer", args)
    consumed = []
    text = p.stdout.decode("utf-8")
    for line in text.split("\x1e\n"):
        if not line:
            continue
        ts, off, hdrs, key, value = line.split(FIELD_SEP)
        ts_type, _, ts_val = ts.partition(":")
        headers = []
        if hdrs != "NO_HEADERS":
            for item in hdrs.split(","):
                n, _, v = item.partition(":")
                headers.append([n, None if v == NULL_MARKER else v.encode().hex()])
        consumed.append({
            "offset": int(off.partition(":")[2]),
            "key": None if key == NULL_MARKER else key.encode().hex(),
            "value": None if value == NULL_MARKER else value.encode().hex(),
            "headers": headers, "timestamp": int(ts_val),
            "timestamp_type": {"CreateTime": "create", "LogAppendTime": "log_append"}.get(ts_type),
        })
    if p.returncode != 0 or b"ERROR" in p.stderr:  # (it exits 0 after logging e.g. an authorization error)
        errors.append(f"ConsoleConsumer exit {p.returncode}: {p.stderr.decode(errors='replace')[-1500:]}")
    return {"client": "java-console", "version": f"kafka-tools {kafka_version()}", "produced": produced,
            "consumed": consumed, "errors": errors}
