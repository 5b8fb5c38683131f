"""Exactly-once through Kafka transactions, against the reference Kafka broker and against the
bridge, with the same checks on both; on the bridge the bridge itself is killed with SIGKILL
while transactions are open or being committed (docs/transactions.md, Crash recovery).

1. Kafka's own system-test tool, org.apache.kafka.tools.TransactionalMessageCopier (kafka-tools
   jar, unchanged), copies an input partition to an output topic in transactions of
   TXN_SIZE records, committing the consumed offsets in the same transaction
   (sendOffsetsToTransaction with the consumer's group metadata: AddOffsetsToTxn,
   TxnOffsetCommit) and aborting one transaction in three at random (--enable-random-aborts:
   abortTransaction, then a seek back to the group's committed offset, fetched with
   require_stable). On both targets the copier is SIGKILLed once mid-copy and restarted with
   the same transactional id (InitProducerId fences the old epoch and aborts its open
   transaction), as an operator would; on the bridge, the bridge is also SIGKILLed three times
   and restarted on the same state and Iggy stream, and a copier that dies of it (fenced,
   timed out) is restarted too. Then, read with isolation.level=read_committed, the output holds
   every input record exactly once (key and value), and the group's committed offset (fetched
   with require_stable) is the input's end offset; kafka-transactions describes the
   transactional id as CompleteCommit and find-hanging finds nothing. A copy that commits nothing for STALL_S
   seconds fails at once (a restart must not leave a client stuck), with the copier's
   main-thread frames in the message and both processes' stacks beside the logs.

2. Kafka Streams with processing.guarantee=exactly_once_v2 (java/StreamsEosApp.java): a word
   count with a state store; phase-2 input arrives while, on the bridge, the bridge is
   SIGKILLed and restarted, and on both targets the stream thread dies once with a
   transaction open (an exception injected on the word "boom"; the thread is replaced, the
   store restored from the changelog). Read with read_committed, every word's updates in the
   output are exactly 1, 2, ..., n (a double-counted or lost word breaks the sequence) and the
   final counts are the totals. Then the application is closed cleanly and started again on
   the same state directory: the close leaves a checkpoint with an offset for each changelog
   partition, and the second start restores from it (no changelog record replayed) and its
   store holds the totals (the bridge answered transactional records with offset -1 before, so
   Streams checkpointed nothing and restored every changelog from offset 0).
   KIB_EOS_CONTROL_GUARANTEE=at_least_once runs it without transactions as a control: it then
   fails on Kafka ("boom" counted twice).

Logs (build/test-logs/clients or $KIB_TEST_LOG_DIR): txn-<test>-<target>-bridge.log (all bridge
runs, one marker line per start) with the bridge's SQLite state copied beside it
(.state.db), copier-<target>-<run>.out/.err, streams-eos-<target>.log.
"""
from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass

import pytest

from conftest import TIMINGS, bridge_mode
from harness import bridge as bridge_mod
from harness import iggy_server, util
from harness.kafka_broker import java_bin

N_RECORDS = 1500
TXN_SIZE = 25
TXN_TIMEOUT_MS = 4000
COPY_DEADLINE_S = 80
# No record committed for this long: the copy is stuck. (A Java producer fenced -- say
# PRODUCER_FENCED for an AddPartitionsToTxn retried after a restart -- while the copier waits in
# sendOffsetsToTransaction stays stuck for max.block.ms, 60 s: its queued AddOffsetsToTxn is
# neither sent nor failed once the producer is in its fatal state. Kafka's coordinator keeps an
# open transaction across its own restart, so a restart alone fences no client there.)
STALL_S = 30
# progress (fraction of the input committed to the output) -> what is SIGKILLed then
KILLS = {
    "kafka": [(0.40, "copier")],
    "bridge": [(0.15, "bridge"), (0.40, "copier"), (0.60, "bridge"), (0.80, "bridge")],
}
MAX_COPIER_RUNS = 10
# As the test broker's transaction.abort.timed.out.transaction.cleanup.interval.ms: a dead
# producer's transaction is aborted about a second after its timeout.
BRIDGE_TOML = "\n[transactions]\nabort_timed_out_interval_ms = 1000\n"
START_TIMEOUT_S = 30.0  # each start of the bridge, until it listens

JVM = ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
       "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dlog4j2.level=warn"]


@dataclass
class EosTarget:
    name: str
    bootstrap: str
    bridge: bridge_mod.BridgeProcess | None  # the bridge this test may kill (None on Kafka)


@pytest.fixture(params=["kafka", "bridge"])
def target(request):
    """Overrides conftest's `target`: the bridge side is a bridge of this test's own, on the
    session iggy-server, that the test kills and restarts (the session bridge is shared)."""
    if request.param == "kafka":
        yield EosTarget("kafka", request.getfixturevalue("kafka_broker").bootstrap, None)
        return
    mode = bridge_mode()
    if mode == "off":
        util.skip_loudly("bridge target disabled (KIB_BRIDGE_TARGET=off)")
    if mode == "xfail":
        request.applymarker(pytest.mark.xfail(reason="bridge target in xfail mode (KIB_BRIDGE_TARGET=xfail)",
                                              strict=False))
    binary = bridge_mod.find_binary()
    if binary is None:
        util.skip_loudly(f"no bridge binary at {os.environ.get('BRIDGE_BIN', 'build/release/kafka-iggy-bridge')}")
    srv = request.getfixturevalue("iggy")
    test = "copier" if "copier" in request.node.originalname else "streams"
    # KIB_RESTARTABLE_BRIDGE_LOG_LEVEL=trace logs every request.
    b = bridge_mod.client_tier_bridge(binary, srv.address, iggy_server.USERNAME, iggy_server.PASSWORD,
                                      stream=f"txn-{test}-{uuid.uuid4().hex[:8]}", log_name=f"txn-{test}-bridge.log",
                                      extra_toml=BRIDGE_TOML, restartable=True,
                                      log_level=os.environ.get("KIB_RESTARTABLE_BRIDGE_LOG_LEVEL", "debug"))
    try:
        b.start(timeout=START_TIMEOUT_S)
        yield EosTarget("bridge", b.bootstrap, b)
    finally:
        b.cleanup(keep_state=True)


@contextlib.contextmanager
def bridge_state_on_failure(target: EosTarget):
    """A failing check on the bridge also shows the bridge's transaction tables."""
    try:
        yield
    except AssertionError as e:
        if target.bridge is None:
            raise
        raise AssertionError(f"{e}\n--- bridge state ({target.bridge.state}):\n"
                             f"{target.bridge.state_summary()}") from None


def java_available():
    from runners import java

    if not java.available():
        util.skip_loudly("no java/javac for the transaction tests")
    return java


# ---------------------------------------------------------------- Python-side setup and checks

def create_topics(bootstrap: str, names: list[str], partitions: int = 1):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(n, partitions, 1) for n in names], operation_timeout=30)
    for n, f in futures.items():
        f.result(timeout=60)


def produce_input(bootstrap: str, topic: str, records: list[tuple[str, str]]):
    from confluent_kafka import Producer

    errors: list[str] = []

    def on_delivery(err, _msg):
        if err is not None:
            errors.append(str(err))

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    for k, v in records:
        p.produce(topic, key=k.encode(), value=v.encode(), partition=0, on_delivery=on_delivery)
        p.poll(0)
    left = p.flush(60)
    assert left == 0 and not errors, f"input produce: {left} undelivered, errors {errors[:5]}"


def end_offset(bootstrap: str, topic: str) -> int:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "txn-probe-" + uuid.uuid4().hex[:6]})
    try:
        _lo, hi = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
        return hi
    finally:
        c.close()


def committed_offset(bootstrap: str, group: str, topic: str) -> int:
    """OffsetFetch with require_stable (librdkafka asks for stable offsets at read_committed)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "isolation.level": "read_committed",
                  "enable.auto.commit": False})
    try:
        return c.committed([TopicPartition(topic, 0)], timeout=30)[0].offset
    finally:
        c.close()


def read_committed(bootstrap: str, topic: str, timeout: float = 60) -> list[tuple[int, str | None, str]]:
    """Every record of partition 0 visible at read_committed, up to the partition's end."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "txn-verify-" + uuid.uuid4().hex[:6],
                  "isolation.level": "read_committed", "enable.partition.eof": True,
                  "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    out = []
    try:
        c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout
        while True:
            assert time.monotonic() < deadline, f"read_committed({topic}): no end of partition after {timeout}s " \
                                                f"({len(out)} records)"
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    break
                raise AssertionError(f"read_committed({topic}): {m.error()}")
            out.append((m.offset(), None if m.key() is None else m.key().decode(), m.value().decode()))
    finally:
        c.close()
    return out


def exactly_once_report(expected: list[tuple[str, str]], got: list[tuple[str | None, str]]) -> dict:
    want, have = Counter(expected), Counter(got)
    missing = sorted((want - have).elements())
    extra = sorted((have - want).elements())
    dup = sorted(v for v, n in have.items() if n > 1)
    return {"expected": len(expected), "got": len(got), "missing": len(missing), "extra": len(extra),
            "duplicated": len(dup), "first_missing": missing[:5], "first_extra": extra[:5], "first_dup": dup[:5]}


def describe_transactions(target: EosTarget, txn_id: str) -> tuple[str | None, list[list[str]]]:
    """kafka-transactions describe --transactional-id TXN_ID (its TransactionState) and
    find-hanging --broker-id 1 (the rows below the header)."""
    from harness.tool_shell import ToolSession

    def table(text: str) -> list[list[str]]:
        return [[c.strip() for c in line.rstrip("\t").split("\t")] for line in text.split("\n") if line.strip()]

    with ToolSession("org.apache.kafka.tools.TransactionsCommand", target.bootstrap,
                     util.log_dir() / f"txn-copier-tool-{target.name}.log") as tool:
        d = tool.run("describe", "--transactional-id", txn_id)
        rows = table(d.stdout)
        state = dict(zip(rows[0], rows[1])).get("TransactionState") if len(rows) > 1 else \
            f"<describe exit {d.exit_code}: {d.stdout.strip()} {d.stderr.strip()[-300:]}>"
        h = tool.run("find-hanging", "--broker-id", "1")
        hanging = table(h.stdout)[1:] if h.exit_code == 0 else \
            [[f"<find-hanging exit {h.exit_code}: {h.stderr.strip()[-300:]}>"]]
    return state, hanging


# ---------------------------------------------------------------- 1. TransactionalMessageCopier

class Copier:
    """One run of the stock TransactionalMessageCopier, its stdout (one JSON status line per
    poll loop) parsed for progress."""

    def __init__(self, java, target: EosTarget, run: int, args: list[str]):
        self.out_path = util.log_dir() / f"copier-{target.name}-{run}.out"
        self.err_path = util.log_dir() / f"copier-{target.name}-{run}.err"
        self._out = open(self.out_path, "wb")
        self._err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(
            [java_bin(), *JVM, "-Xmx256m", "-cp", str(java.lib() / "*"), "org.apache.kafka.tools.TransactionalMessageCopier",
             *args], stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err, start_new_session=True,
            preexec_fn=util._die_with_parent)
        self._pos = 0
        self.remaining: int | None = None  # last "remaining" it printed
        self.shutdown: dict | None = None
        self.main_frames: list[str] = []  # the main thread's top frames, from dump_stacks()

    def poll_progress(self):
        with open(self.out_path, "rb") as f:
            f.seek(self._pos)
            data = f.read()
        end = data.rfind(b"\n")
        if end < 0:
            return
        self._pos += end + 1
        for line in data[:end].splitlines():
            try:
                st = json.loads(line)
            except ValueError:
                continue
            if "remaining" in st:
                self.remaining = int(st["remaining"])
            if "shutdown_complete" in st:
                self.shutdown = st

    def dump_stacks(self) -> str:
        """The copier JVM's thread dump (jcmd Thread.print) into a file beside its log."""
        jcmd = shutil.which("jcmd")
        if self.proc.poll() is not None or jcmd is None:
            return "(no copier stacks: " + ("not running" if jcmd else "no jcmd") + ")"
        path = self.err_path.with_suffix(".stacks.txt")
        try:
            p = subprocess.run([jcmd, str(self.proc.pid), "Thread.print"], capture_output=True, text=True, timeout=30)
            path.write_text(p.stdout + p.stderr)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"(no copier stacks: {e})"
        main = re.search(r'^"main" .*?\n\n', p.stdout, re.S | re.M)
        frames = [l.strip() for l in (main.group(0) if main else "").splitlines() if l.strip().startswith("at ")]
        self.main_frames = frames[:8]
        return f"copier thread dump: {path}"

    def exited(self) -> int | None:
        return self.proc.poll()

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def close(self):
        if self.proc.poll() is None:
            self.kill()
        self._out.close()
        self._err.close()

    def error_summary(self) -> str:
        text = self.err_path.read_text(errors="replace")
        lines = [l for l in text.splitlines()
                 if " ERROR " in l or re.match(r"^(Caused by: )?[\w.]+(Exception|Error)\b", l)]
        return "\n".join(dict.fromkeys(lines[:12])) or util.tail(self.err_path, 8)


def test_transactional_message_copier_exactly_once(target):
    with bridge_state_on_failure(target):
        copier_session(target)


def copier_session(target: EosTarget):
    java = java_available()
    t0 = time.monotonic()
    tag = f"txcopy-{target.name}-{uuid.uuid4().hex[:8]}"
    input_topic, output_topic, group, txn_id = f"{tag}-in", f"{tag}-out", f"{tag}-group", f"{tag}-txn"
    records = [(f"k{i % 13}", f"{tag}-v{i:05d}") for i in range(N_RECORDS)]
    create_topics(target.bootstrap, [input_topic, output_topic])
    produce_input(target.bootstrap, input_topic, records)
    input_end = end_offset(target.bootstrap, input_topic)
    assert input_end == N_RECORDS

    for old in util.log_dir().glob(f"copier-{target.name}-*"):
        old.unlink()
    args = ["--broker-list", target.bootstrap, "--input-topic", input_topic, "--input-partition", "0",
            "--output-topic", output_topic, "--transactional-id", txn_id, "--consumer-group", group,
            "--transaction-size", str(TXN_SIZE), "--transaction-timeout", str(TXN_TIMEOUT_MS),
            "--use-group-metadata", "--enable-random-aborts"]
    schedule = list(KILLS[target.name])
    fired: list[dict] = []
    runs: list[dict] = []
    copier = Copier(java, target, 1, args)
    progress = last_progress = 0.0
    last_progress_t = time.monotonic()
    deadline = time.monotonic() + COPY_DEADLINE_S
    try:
        while True:
            if target.bridge:
                target.bridge.check_alive()
            copier.poll_progress()
            if copier.remaining is not None:
                progress = max(progress, (N_RECORDS - copier.remaining) / N_RECORDS)
            rc = copier.exited()
            if rc is not None:
                copier.poll_progress()
                runs.append({"run": len(runs) + 1, "rc": rc, "remaining": copier.remaining,
                             "errors": "" if rc == 0 else copier.error_summary()})
                copier.close()
                if rc == 0 and copier.remaining == 0:
                    break
                assert len(runs) < MAX_COPIER_RUNS, f"the copier failed {len(runs)} times: {runs}"
                # An operator restarts it with the same transactional id.
                copier = Copier(java, target, len(runs) + 1, args)
                continue
            if schedule and progress >= schedule[0][0]:
                at, what = schedule.pop(0)
                if what == "copier":
                    copier.kill()  # the loop sees it exit and restarts it
                else:
                    target.bridge.kill_and_restart(timeout=START_TIMEOUT_S)
                fired.append({"what": what, "at": round(progress, 3), "t": round(time.monotonic() - t0, 1)})
            if progress > last_progress:
                last_progress, last_progress_t = progress, time.monotonic()
            stalled = time.monotonic() - last_progress_t > STALL_S
            where = ""
            if stalled or time.monotonic() >= deadline:
                print("\n" + copier.dump_stacks())
                if target.bridge:
                    print(target.bridge.dump_stacks())
                where = "\ncopier main thread:\n  " + "\n  ".join(copier.main_frames)
            assert time.monotonic() < deadline and not stalled, \
                f"copy not done after {round(time.monotonic() - t0)}s" + \
                (f" (no progress for {STALL_S}s)" if stalled else "") + \
                f": progress {progress:.2f}, kills {fired}, runs {runs}, copier run {len(runs) + 1} " \
                f"stderr:\n{copier.error_summary()}" + where + \
                (f"\nbridge log tail:\n{util.tail(target.bridge.log_path, 25)}" if target.bridge else "")
            time.sleep(0.05)
    finally:
        copier.close()
    copy_s = round(time.monotonic() - t0, 1)

    txn_state, hanging = describe_transactions(target, txn_id)
    out = read_committed(target.bootstrap, output_topic)
    report = exactly_once_report(records, [(k, v) for _o, k, v in out])
    committed = committed_offset(target.bootstrap, group, input_topic)
    TIMINGS[f"txn_copier_{target.name}_s"] = round(time.monotonic() - t0, 1)
    diag = f"kills {fired}, copier runs {runs}, copy {copy_s}s" + \
        (f", bridge starts (s) {[round(t, 2) for t in target.bridge.start_seconds]}, log {target.bridge.log_path}"
         if target.bridge else "")
    print(f"\ncopier on {target.name}: {diag}; output {report}; committed {committed}; "
          f"transaction {txn_state}, hanging {hanging}")
    # Every scheduled kill happened while the copy was under way (else the test tested less).
    assert [f["what"] for f in fired] == [w for _a, w in KILLS[target.name]], diag
    assert report["missing"] == report["extra"] == report["duplicated"] == 0 and \
        report["got"] == N_RECORDS, f"read_committed output is not the input exactly once: {report}; {diag}"
    assert committed == input_end, f"group {group} committed {committed}, input end {input_end}; {diag}"
    # The copier's last transaction committed, and no transaction was left open by a kill
    # (kafka-transactions describe / find-hanging: DescribeTransactions, ListTransactions,
    # DescribeProducers).
    assert txn_state == "CompleteCommit" and hanging == [], \
        f"kafka-transactions: {txn_id} is {txn_state}, hanging {hanging}; {diag}"


# ---------------------------------------------------------------- 2. Kafka Streams exactly_once_v2

PHASE1 = [
    "the quick brown fox jumps over the lazy dog",
    "The dog barks; the fox runs",
    "a stream of words, a table of counts",
    "kafka streams counts words",
]
PHASE2 = [f"line {i} the fox and the dog count words {'again ' * (i % 3)}{'iggy' if i % 4 == 0 else 'kafka'}"
          for i in range(60)]
PHASE2[40] += " boom"  # StreamsEosApp's stream thread throws on the first update of this word
STREAMS_DEADLINE_MS = 110_000
# KIB_EOS_CONTROL_GUARANTEE=at_least_once runs the same test without transactions: it must fail
# (the injected crash double-counts), which shows the checks can see what EOS prevents.
KILL_AFTER_LINES = 20  # on the bridge: SIGKILL once this many phase-2 lines were sent


def word_counts(lines: list[str]) -> dict[str, int]:
    return dict(Counter(w for line in lines for w in re.split(r"\W+", line.lower()) if w))


def test_kafka_streams_exactly_once_v2_word_count(target, tmp_path):
    with bridge_state_on_failure(target):
        streams_session(target, tmp_path)


def streams_session(target: EosTarget, tmp_path):
    java = java_available()
    java.compile_java("StreamsEosApp")
    t0 = time.monotonic()
    tag = f"eos-{target.name}-{uuid.uuid4().hex[:8]}"
    log = util.log_dir() / f"streams-eos-{target.name}.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [java_bin(), *JVM, "-Xmx384m", "-cp", java.classpath(), "StreamsEosApp",
             target.bootstrap, tag, str(tmp_path / "state"), str(STREAMS_DEADLINE_MS),
             os.environ.get("KIB_EOS_CONTROL_GUARANTEE", "exactly_once_v2")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, start_new_session=True,
            preexec_fn=util._die_with_parent)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l.decode().rstrip("\n")) for l in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    kills: list[dict] = []
    result = None
    try:
        proc.stdin.write(("\n".join(PHASE1) + "\n--\n" + "\n".join(PHASE2) + "\n").encode())
        proc.stdin.close()
        deadline = time.monotonic() + STREAMS_DEADLINE_MS / 1000 + 30
        while True:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"StreamsEosApp gave no result in time; log {log}:\n{util.tail(log, 60)}")
            if target.bridge:
                target.bridge.check_alive()
            if line is None:
                break
            if line.startswith("EVENT "):
                ev = line.split()
                if target.bridge and ev[1] == "produced" and int(ev[2]) == KILL_AFTER_LINES and not kills:
                    target.bridge.kill_and_restart(timeout=START_TIMEOUT_S)
                    kills.append({"after_lines": KILL_AFTER_LINES, "t": round(time.monotonic() - t0, 1),
                                  "restart_s": round(target.bridge.start_seconds[-1], 2)})
            elif line.startswith("{"):
                result = json.loads(line)
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    TIMINGS[f"streams_eos_{target.name}_s"] = round(time.monotonic() - t0, 1)
    assert rc == 0 and result is not None, f"StreamsEosApp exit {rc}, log {log}:\n{util.tail(log, 60)}"
    diag = f"kills {kills}, recovered {result.get('recovered')}, log {log}" + \
        (f", bridge starts (s) {[round(t, 2) for t in target.bridge.start_seconds]}, log {target.bridge.log_path}"
         if target.bridge else "")
    print(f"\nstreams eos on {target.name}: {diag}; updates {result.get('updates')}")
    if target.bridge:
        assert len(kills) == 1, f"the bridge was not killed mid-run: {diag}"
    assert result["errors"] == [], "\n".join(result["errors"]) + "\n" + diag
    # The injected crash (a stream thread dying with a transaction open) happened, once.
    assert sum("injected crash" in r for r in result["recovered"]) == 1, diag
    total = word_counts(PHASE1 + PHASE2)
    assert result["phase1"] == word_counts(PHASE1), diag
    # Committed output, per word: exactly 1, 2, ..., n (no update lost, none counted twice).
    assert result["bad_sequences"] == {}, f"words whose committed updates are not 1..n: " \
                                          f"{dict(list(result['bad_sequences'].items())[:8])}; {diag}"
    assert result["final"] == total, diag
    assert result["updates"] == sum(total.values()), diag
    # The clean close checkpointed both changelog partitions, and the second start restored from
    # there: nothing replayed, the store as the first run left it.
    changelog = f"{tag}-wc-counts-changelog"
    checkpoint = result["checkpoint"]
    assert sorted(checkpoint) == [f"{changelog}-0", f"{changelog}-1"] and all(o > 0 for o in checkpoint.values()), \
        f"checkpoint after a clean close: {checkpoint}; {diag}"
    assert result["store"] == total, f"store after the second start: {result['store']}; {diag}"
    replayed = [r for r in result["restores"] if r["restored"] > 0 or r["start"] < checkpoint.get(r["partition"], 0)]
    assert replayed == [], f"restores of the second start: {result['restores']}, checkpoint {checkpoint}; {diag}"
    print(f"checkpoint {checkpoint}, restores of the second start {result['restores']}")
