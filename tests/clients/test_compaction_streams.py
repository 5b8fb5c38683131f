"""A Kafka Streams KTable restored from a compacted changelog, against the reference Kafka broker
and against the bridge (issue 35: "a KTable over a topic updated 1,000,000 times over 1,000 keys:
changelog size on disk and restore time after compaction beside Kafka's; counts identical").

java/StreamsKTableApp.java runs the session in one JVM: it produces UPDATES updates over KEYS
keys to a source topic (2 partitions, values of 100 bytes); a Streams application aggregates them
per key into a persistent store ("count,last value") whose changelog gets every update (the
record cache is off) and is set up through StreamsConfig's `topic.` prefix to roll segments every
200 ms and be cleaned as soon as anything is dirty; one more record per partition rolls the last
segment of updates. The application stops; once the changelog, read from its log start, holds
each key once, its size on disk is read with DescribeLogDirs (on the bridge: the live Iggy
partition plus its generation topic); the local state is wiped and a new instance restores the
store from the compacted changelog (records restored, time taken) and is queried.

Checked on both targets: every update reached the changelog; compaction left each key once in
every partition, at a log start it did not move (0); the restore read exactly what compaction
left, not the updates (at most 2 x KEYS records); the restored store equals the store before the
wipe and holds every key's count and last sequence; the changelog is smaller on disk after
compaction than when processing ended. Then the bridge's restored store is Kafka's, record for
record restored.

The default (CI) variant: 20,000 updates over 200 keys. KIB_COMPACTION_STREAMS_FULL=1 runs the
issue's 1,000,000 updates over 1,000 keys (`make compaction-streams`) and prints the figures side
by side (changelog bytes on disk after compaction, restore ms, records restored), also written to
build/compaction-streams/figures.{txt,json}.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from pathlib import Path

from harness import util
from harness.kafka_broker import java_bin

FULL = os.environ.get("KIB_COMPACTION_STREAMS_FULL") == "1"
UPDATES, KEYS = (1_000_000, 1_000) if FULL else (20_000, 200)
PARTITIONS = 2
SEGMENT_MS = 200
VALUE_BYTES = 100  # padding in every value: records of a realistic size (about 130 bytes on Kafka)
APP_TIMEOUT_S = 600 if FULL else 80

JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx512m",
       "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dlog4j2.level=warn"]

# target name -> the session's result, for the side-by-side comparison and the figures
RESULTS: dict[str, dict] = {}


def run_app(target, tmp_path: Path) -> tuple[dict, float]:
    from runners import java

    if not java.available():
        util.skip_loudly("no java/javac for the Kafka Streams test")
    java.compile_java("StreamsKTableApp")
    tag = f"cs-{target.name}-{uuid.uuid4().hex[:8]}"
    log = util.log_dir() / f"streams-ktable-{target.name}.log"
    args = [target.bootstrap, tag, str(tmp_path / "state"), str(APP_TIMEOUT_S * 1000), str(UPDATES), str(KEYS),
            str(PARTITIONS), str(SEGMENT_MS), str(VALUE_BYTES)]
    t = time.monotonic()
    with open(log, "wb") as err:
        p = subprocess.run([java_bin(), *JVM, "-cp", java.classpath(), "StreamsKTableApp", *args],
                           stdout=subprocess.PIPE, stderr=err, timeout=APP_TIMEOUT_S + 60)
    took = time.monotonic() - t
    assert p.returncode == 0 and p.stdout.strip(), \
        f"StreamsKTableApp exit {p.returncode}, log {log}:\n{util.tail(log, 60)}"
    return json.loads(p.stdout.decode().strip().splitlines()[-1]), took


def figures(kafka: dict, bridge: dict) -> str:
    rows = [("changelog records written", "changelog_end_total"),
            ("source topic bytes on disk (the updates, uncompacted)", "source_bytes_total"),
            ("changelog bytes on disk when processed (cleaner on)", "changelog_bytes_processed_total"),
            ("changelog bytes on disk after compaction", "changelog_bytes_total"),
            ("records left by compaction (= restored)", "kept_total"),
            ("records restored", "restored"),
            ("restore ms (per changelog partition, summed)", "restore_ms"),
            ("restore ms (first partition's start to last's end)", "restore_wall_ms"),
            ("restart to RUNNING ms", "restart_ms"),
            ("produce ms", "produce_ms"),
            ("process ms", "process_ms"),
            ("stop to compacted ms", "compaction_ms"),
            ("whole session s", "session_s")]
    width = max(len(r[0]) for r in rows)
    out = [f"Kafka Streams KTable, {UPDATES:,} updates over {KEYS:,} keys, {PARTITIONS} partitions, "
           f"values of {VALUE_BYTES} bytes (changelog segment.ms={SEGMENT_MS}, segment.bytes=1 MiB, "
           "min.cleanable.dirty.ratio=0.01)",
           f"{'':{width}}  {'Kafka 4.1':>14}  {'bridge':>14}  {'bridge/Kafka':>12}"]
    for label, key in rows:
        k, b = kafka.get(key), bridge.get(key)
        ratio = f"{b / k:.2f}" if isinstance(k, (int, float)) and isinstance(b, (int, float)) and k else "-"
        out.append(f"{label:{width}}  {k!s:>14}  {b!s:>14}  {ratio:>12}")
    return "\n".join(out)


def test_ktable_restores_from_a_compacted_changelog(target, tmp_path):
    r, took = run_app(target, tmp_path)
    assert r["errors"] == [], "\n".join(r["errors"])
    expected_keys = KEYS + PARTITIONS  # the updated keys and one roll-<p> key per partition
    # Every update, and each partition's roll record, became one changelog record.
    assert sum(r["changelog_end"]) == UPDATES + PARTITIONS, (target.name, r["changelog_end"])
    # Compaction left the latest record of each key once, at the log start it did not move.
    parts = r["compacted"]
    assert [p["end"] for p in parts] == r["changelog_end"], target.name
    assert all(p["records"] == p["keys"] and p["log_start"] == 0 for p in parts), (target.name, parts)
    kept = sum(p["records"] for p in parts)
    assert kept == expected_keys, (target.name, parts)
    # The restore read the compacted changelog, not the updates.
    assert r["restored"] == kept, (target.name, r["restored"], kept)
    assert r["restored"] <= 2 * KEYS < UPDATES, (target.name, r["restored"])
    # The restored store is the store before the wipe, with every key's count and last sequence.
    assert r["count_mismatches"] == [], (target.name, r["count_mismatches"][:10])
    assert r["store_after"] == r["store_before"], target.name
    assert len(r["store_after"]) == expected_keys, target.name
    # Compaction shrank the changelog on disk.
    assert 0 < r["changelog_bytes_total"] < r["changelog_bytes_processed_total"], (
        target.name, r["changelog_bytes_total"], r["changelog_bytes_processed_total"])
    r["changelog_end_total"] = sum(r["changelog_end"])
    r["kept_total"] = kept
    r["session_s"] = round(took, 1)
    RESULTS[target.name] = r
    print(f"\n{target.name}: {r['changelog_bytes_total']} changelog bytes after compaction "
          f"({r['changelog_bytes_processed_total']} when processed), {r['restored']} records restored in "
          f"{r['restore_ms']} ms, session {took:.1f} s")
    other = RESULTS.get("kafka")
    if target.name == "bridge" and other:
        # Counts identical: the bridge's restored store is Kafka's.
        assert r["store_after"] == other["store_after"]
        assert r["restored"] == other["restored"]
        table = figures(other, r)
        print("\n" + table)
        if FULL:
            out = util.REPO_ROOT / "build" / "compaction-streams"
            out.mkdir(parents=True, exist_ok=True)
            (out / "figures.txt").write_text(table + "\n")
            keep = ("updates", "keys", "partitions", "value_bytes", "changelog_end", "source_bytes_total",
                    "changelog_bytes", "changelog_bytes_total", "changelog_bytes_processed_total", "compacted",
                    "restored", "restore_ms", "restore_wall_ms", "restart_ms", "produce_ms", "process_ms",
                    "compaction_ms", "session_s")
            (out / "figures.json").write_text(json.dumps(
                {name: {k: res.get(k) for k in keep} for name, res in (("kafka", other), ("bridge", r))}, indent=1))
