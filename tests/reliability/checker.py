"""The acknowledged-writes ledger: a producer child (java/AckedProducer.java or ck_producer.py)
reports every record's fate on stdout; readback() reads each partition from offset 0 to its
high watermark; verify() compares the two by the record's unique id."""
from __future__ import annotations

import bisect
import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
JAVA_LIB = ROOT / "tests" / ".java" / "lib"
JAVA_CLASSES = ROOT / "tests" / ".java" / "classes-reliability"
JAVA_SRC = HERE / "java" / "AckedProducer.java"
JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
       "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"]


def java_missing() -> str | None:
    if not shutil.which("javac") or not shutil.which("java"):
        return "java/javac not installed"
    if not any(JAVA_LIB.glob("kafka-clients-*.jar")):
        return f"no kafka-clients jar in {JAVA_LIB} (tools/fetch-kafka)"
    return None


def compile_java():
    cls = JAVA_CLASSES / "AckedProducer.class"
    if cls.exists() and cls.stat().st_mtime >= JAVA_SRC.stat().st_mtime:
        return
    JAVA_CLASSES.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["javac", "-nowarn", "-d", str(JAVA_CLASSES), "-cp", str(JAVA_LIB / "*"), str(JAVA_SRC)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("javac AckedProducer.java failed:\n" + p.stdout + p.stderr)


class ProducerRun:
    """One producer child and what it reported."""

    def __init__(self, client: str, bootstrap: str, topic: str, partitions: int, prefix: str, rate: float,
                 log_path: Path, max_records: int = 10_000_000):
        self.client, self.topic, self.prefix = client, topic, prefix
        args = [bootstrap, topic, str(partitions), prefix, str(rate), str(max_records)]
        if client == "java":
            compile_java()
            argv = ["java", *JVM, "-cp", f"{JAVA_CLASSES}{os.pathsep}{JAVA_LIB / '*'}", "AckedProducer", *args]
        else:
            argv = [sys.executable, str(HERE / "ck_producer.py"), *args]
        self.stderr = open(log_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, bufsize=1, start_new_session=True)
        self.acked: dict[str, tuple[int, int]] = {}
        self.ack_times: list[float] = []  # monotonic arrival time of each acknowledgement line
        self.failed: dict[str, str] = {}
        self.no_offset: list[str] = []  # acknowledged without an offset
        self.double_acks = 0  # the same id acknowledged twice by the client (a client bug)
        self.done: dict[str, int] | None = None
        self.reader_error = ""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        try:
            self._parse()
        except Exception as e:  # noqa: BLE001 - a parse error must not silently stop the ledger
            self.reader_error = repr(e)
            for _ in self.proc.stdout:  # keep draining, or the producer blocks on a full pipe
                pass

    def _parse(self):
        for line in self.proc.stdout:
            parts = line.rstrip("\n").split(" ", 3)
            if parts[0] == "A" and len(parts) >= 4:
                if parts[1] in self.acked:
                    self.double_acks += 1
                # confluent-kafka reports offset None when the broker's answer carried none (-1)
                off = int(parts[3]) if parts[3].lstrip("-").isdigit() else -1
                if off < 0:
                    self.no_offset.append(parts[1])
                self.acked[parts[1]] = (int(parts[2]), off)
                self.ack_times.append(time.monotonic())
            elif parts[0] == "F" and len(parts) >= 2:
                self.failed[parts[1]] = " ".join(parts[2:])
            elif parts[0] == "DONE":
                self.done = {k: int(v) for k, v in (kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)}

    def alive(self) -> bool:
        return self.proc.poll() is None

    def first_ack_after(self, t: float) -> float | None:
        i = bisect.bisect_right(self.ack_times, t)
        return self.ack_times[i] if i < len(self.ack_times) else None

    def finish(self, timeout: float = 600.0) -> bool:
        """Asks it to stop, waits for its flush; True if it reported DONE."""
        try:
            self.proc.stdin.write("stop\n")
            self.proc.stdin.flush()
            self.proc.stdin.close()
        except (BrokenPipeError, OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=30)
        self.stderr.close()
        return self.done is not None

    def kill(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        if not self.stderr.closed:
            self.stderr.close()


def readback(bootstrap: str, topic: str, partitions: int, timeout: float = 300.0) -> tuple[list, dict]:
    """[(id, partition, offset)] of every record from offset 0 to the high watermark of each
    partition (assign, no group), and {partition: (low, high)}."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition, OFFSET_BEGINNING

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "kib-reliability-readback",
                  "enable.auto.commit": False, "enable.partition.eof": True, "fetch.max.bytes": 8 << 20,
                  "log_level": 3})
    out: list[tuple[str, int, int]] = []
    marks = {}
    try:
        for p in range(partitions):
            marks[p] = c.get_watermark_offsets(TopicPartition(topic, p), timeout=30, cached=False)
        want = {p: hi for p, (lo, hi) in marks.items() if hi > 0}
        if not want:
            return out, marks
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in want])
        pos = {p: -1 for p in want}
        deadline = time.monotonic() + timeout
        while any(pos[p] < want[p] - 1 for p in want):
            if time.monotonic() > deadline:
                raise TimeoutError(f"readback of {topic} incomplete after {timeout:.0f}s: at {pos}, watermarks {want}")
            for m in c.consume(1000, 1.0):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        continue
                    raise RuntimeError(f"readback error: {m.error()}")
                if m.offset() >= want[m.partition()]:
                    continue
                pos[m.partition()] = max(pos[m.partition()], m.offset())
                rid = (m.value() or b"").split(b"|", 1)[0].decode("utf-8", "replace")
                out.append((rid, m.partition(), m.offset()))
    finally:
        c.close()
    return out, marks


def verify(acked: dict[str, tuple[int, int]], read: list[tuple[str, int, int]]) -> dict:
    """lost: acknowledged and not read back; duplicated: extra copies of an id read back;
    offset_mismatch: the offset the client was given holds another record;
    stored_unacked: read back but never acknowledged (allowed: e.g. in flight at a kill)."""
    counts = Counter(rid for rid, _, _ in read)
    at = {(p, o): rid for rid, p, o in read}
    lost = sorted(rid for rid in acked if rid not in counts)
    dups = {rid: n for rid, n in counts.items() if n > 1}
    mismatch = sorted(rid for rid, po in acked.items() if rid in counts and po[1] >= 0 and at.get(po) != rid)
    offsets_seen = Counter((p, o) for _, p, o in read)
    return {
        "read": len(read),
        "lost": len(lost), "lost_ids": lost[:20],
        "duplicated": sum(n - 1 for n in dups.values()), "duplicated_ids": sorted(dups)[:20],
        "offset_mismatch": len(mismatch), "offset_mismatch_ids": mismatch[:20],
        "stored_unacked": sum(1 for rid in counts if rid not in acked),
        "offset_repeats": sum(n - 1 for n in offsets_seen.values() if n > 1),
    }


def self_test() -> list[str]:
    """The checker can fail: a loss, a duplicate and a wrong offset are each reported."""
    acked = {"a-0": (0, 0), "a-1": (1, 0), "a-2": (0, 1), "a-3": (1, 1)}
    read = [("a-0", 0, 0), ("a-2", 0, 1), ("a-2", 0, 2), ("a-1", 1, 0), ("x-9", 1, 1)]
    v = verify(acked, read)
    problems = []
    if v["lost"] != 1 or v["lost_ids"] != ["a-3"]:
        problems.append(f"loss not detected: {v}")
    if v["duplicated"] != 1 or v["duplicated_ids"] != ["a-2"]:
        problems.append(f"duplicate not detected: {v}")
    if v["stored_unacked"] != 1:
        problems.append(f"unacknowledged record not counted: {v}")
    v2 = verify({"b-0": (0, 5)}, [("b-0", 0, 4)])
    if v2["offset_mismatch"] != 1:
        problems.append(f"offset mismatch not detected: {v2}")
    clean = verify(acked, [("a-0", 0, 0), ("a-2", 0, 1), ("a-1", 1, 0), ("a-3", 1, 1)])
    if clean["lost"] or clean["duplicated"] or clean["offset_mismatch"]:
        problems.append(f"clean ledger flagged: {clean}")
    return problems
