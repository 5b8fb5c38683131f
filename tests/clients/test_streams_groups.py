"""Kafka Streams 4.4 with group.protocol=streams (KIP-1071 streams groups), against Kafka 4.4 and
against the bridge, with the same checks and the same results on both.

With the streams protocol the broker, not the application, owns the rebalance: StreamsGroupHeartbeat
carries the application's topology, the broker decides how many partitions the repartition and
changelog topics need and creates them (the application creates no topic), assigns the tasks and
hands them over member by member. The word count of test_frameworks.py runs once more with it: its
counts, its restore from the changelog after a wipe of the local state, and the internal topics
the broker created (partitions, cleanup.policy) must be those Kafka gives.
"""
from __future__ import annotations

import json
import re
import subprocess
import threading
import time
import uuid

import pytest

from harness import util
from harness.kafka_broker import java_bin
from test_frameworks import JVM, PHASE1, PHASE2, counts
from test_group_member_kill import wait_for
from conftest import TIMINGS

RESULTS: dict[str, dict] = {}


def run_streams_app(args: list[str], stdin: str, timeout: float, log_name: str) -> dict:
    from runners import java

    if not java.available():
        util.skip_loudly("no java/javac for the Kafka Streams 4.4 tests")
    java.compile_java("StreamsApp", next_tier=True)
    log = util.log_dir() / log_name
    with open(log, "wb") as err:
        p = subprocess.run([java_bin(), *JVM, "-cp", java.classpath(next_tier=True), "StreamsApp", *args],
                           input=stdin.encode(), stdout=subprocess.PIPE, stderr=err, timeout=timeout)
    assert p.returncode == 0 and p.stdout.strip(), \
        f"StreamsApp exit {p.returncode}, log {log}:\n{util.tail(log, 60)}"
    return json.loads(p.stdout.decode().strip().splitlines()[-1])


def test_kafka_streams_word_count_with_the_streams_group_protocol(target_next, tmp_path):
    target = target_next
    tag = f"sg-wc-{target.name}-{uuid.uuid4().hex[:8]}"
    r = run_streams_app([target.bootstrap, tag, str(tmp_path / "state"), "120000", "streams"],
                        "\n".join(PHASE1) + "\n--\n" + "\n".join(PHASE2) + "\n", 180,
                        f"streams-groups-{target.name}.log")
    app = tag + "-wc"
    total = counts(PHASE1 + PHASE2)
    assert r["errors"] == [], "\n".join(r["errors"])
    assert r["phase1"] == counts(PHASE1)
    assert r["task_dirs_before_wipe"] == ["0_0", "0_1", "1_0", "1_1"]
    assert r["local_state_wiped"] is True
    assert r["restored"] >= len(counts(PHASE1)), r
    assert r["final"] == total
    assert r["store"] == total
    # The broker created the internal topics from the topology: as many partitions as the input.
    assert r["internal_topics"] == {
        f"{app}-by-word-repartition": {"partitions": 2, "cleanup.policy": "delete"},
        f"{app}-counts-changelog": {"partitions": 2, "cleanup.policy": "compact"},
    }
    assert len(r["repartition_log_start"]) == 2 and sum(r["repartition_log_start"]) > 0, r
    RESULTS[target.name] = r
    other = RESULTS.get("kafka-next")
    if target.name == "bridge" and other:
        same = {k: v for k, v in r.items() if k not in ("restored", "repartition_log_start", "internal_topics")}
        assert same == {k: v for k, v in other.items() if k in same}


class Worker:
    """A StreamsWorker JVM (java/StreamsWorker.java): its state changes and active tasks as it
    prints them, read from a thread."""

    def __init__(self, name: str, bootstrap: str, app: str, topics: tuple[str, str], state_dir: str,
                 session_timeout_ms: int = 6000):
        from runners import java

        self.name = name
        self.states: list[str] = []
        self.tasks: list[tuple[int, frozenset[str]]] = []
        self.errors: list[str] = []
        self.log = util.log_dir() / f"{name}.log"
        self._err = open(self.log, "wb")
        self.p = subprocess.Popen(
            [java_bin(), *JVM, "-cp", java.classpath(next_tier=True), "StreamsWorker", bootstrap, app, *topics,
             state_dir, str(session_timeout_ms)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for raw in self.p.stdout:
            kind, wall, rest = (raw.decode().rstrip("\n").split(" ", 2) + ["", ""])[:3]
            if kind == "S":
                self.states.append(rest)
            elif kind == "T":
                self.tasks.append((int(wall), frozenset() if rest == "-" else frozenset(rest.split(","))))
            elif kind == "E":
                self.errors.append(rest)

    def owned(self) -> frozenset[str]:
        return self.tasks[-1][1] if self.tasks else frozenset()

    def running(self) -> bool:
        return bool(self.states) and self.states[-1] == "RUNNING"

    def kill(self):
        self.p.kill()
        self.p.wait(30)

    def stop(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.close()
                self.p.wait(40)
            except Exception:  # noqa: BLE001
                self.p.kill()
                self.p.wait(30)
        self._err.close()


def produce_lines(bootstrap: str, topic: str, lines: list[str]):
    import confluent_kafka

    p = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for i, line in enumerate(lines):
        p.produce(topic, value=line.encode(), key=str(i).encode())
    assert p.flush(30) == 0


def latest_counts(bootstrap: str, topic: str, want: dict[str, int], timeout: float) -> dict[str, int]:
    """The output topic read at read_committed until each word's latest count is `want`'s (or the
    timeout passes): word -> latest count."""
    import confluent_kafka

    c = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                                  "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False})
    c.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
    latest: dict[str, int] = {}
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and latest != want:
            m = c.poll(0.5)
            if m is not None and not m.error():
                latest[m.key().decode()] = int.from_bytes(m.value(), "big", signed=True)
    finally:
        c.close()
    return latest


TASKS = frozenset(f"{s}_{p}" for s in (0, 1) for p in range(4))


def test_two_streams_instances_share_the_tasks_and_one_killed_hands_them_over(target_next, tmp_path):
    """Two Kafka Streams 4.4 instances (exactly_once_v2, group.protocol=streams) of one word count
    over a 4-partition input: the second one to join gets half of the 8 tasks (subtopologies 0 and
    1, partitions 0-3) only after the first gave them up, each task active on one instance; the
    first killed with SIGKILL, the survivor owns all 8 after the session timeout (6 s here, the
    group's own streams.session.timeout.ms) and the
    counts over all the input are exact, as on Kafka 4.4."""
    pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not in the test venv")
    from confluent_kafka.admin import AdminClient, NewTopic
    from runners import java

    if not java.available():
        util.skip_loudly("no java/javac for the Kafka Streams 4.4 tests")
    java.compile_java("StreamsWorker", next_tier=True)
    target = target_next
    tag = f"sg-two-{target.name}-{uuid.uuid4().hex[:8]}"
    app, topics = tag + "-wc", (tag + "-input", tag + "-output")
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    for f in admin.create_topics([NewTopic(topics[0], 4, 1), NewTopic(topics[1], 1, 1)]).values():
        f.result(timeout=60)
    phases = [PHASE1 * 5, PHASE2 * 5, PHASE1 + PHASE2]
    workers: list[Worker] = []
    try:
        produce_lines(target.bootstrap, topics[0], phases[0])
        a = Worker(f"streams-worker-a-{target.name}", target.bootstrap, app, topics, str(tmp_path / "a"))
        workers.append(a)
        wait_for(lambda: a.owned() == TASKS and a.running(), 90, "the first instance running all 8 tasks")
        assert latest_counts(target.bootstrap, topics[1], counts(phases[0]), 60) == counts(phases[0])
        b = Worker(f"streams-worker-b-{target.name}", target.bootstrap, app, topics, str(tmp_path / "b"))
        workers.append(b)
        wait_for(lambda: len(a.owned()) == 4 and len(b.owned()) == 4 and a.owned() | b.owned() == TASKS, 90,
                 "the two instances owning 4 tasks each")
        # Never two owners: every task b was given had left a before (a task moves only once its
        # owner stopped reporting it, UNREVOKED_TASKS then UNRELEASED_TASKS).
        a_lost_at = {t: wall for wall, owned in a.tasks for t in TASKS - owned if wall > a.tasks[0][0]}
        for wall, owned in b.tasks:
            for t in owned:
                assert t in a_lost_at and a_lost_at[t] <= wall + 200, (t, a.tasks, b.tasks)
        produce_lines(target.bootstrap, topics[0], phases[1])
        want = counts(phases[0] + phases[1])
        assert latest_counts(target.bootstrap, topics[1], want, 60) == want
        killed_at = int(time.time() * 1000)
        a.kill()
        produce_lines(target.bootstrap, topics[0], phases[2])
        wait_for(lambda: b.owned() == TASKS and b.running(), 90, "the survivor running all 8 tasks")
        TIMINGS[f"streams_handover_s_{target.name}"] = round((b.tasks[-1][0] - killed_at) / 1000, 1)
        want = counts(phases[0] + phases[1] + phases[2])
        got = latest_counts(target.bootstrap, topics[1], want, 60)
    finally:
        for w in workers:
            w.stop()
    assert [e for w in workers for e in w.errors] == []
    # Exactly once: the killed instance's uncommitted work was redone, nothing counted twice.
    assert got == want


@pytest.fixture(scope="module")
def streams_restart_bridge(request):
    """A bridge of its own (stream kafka-sg-restart) for the kill test, so the session's bridge is
    not killed under the other tests."""
    from conftest import side_bridge

    yield from side_bridge(request, "bridge-sg-restart", "sg-restart", "")


def streams_group_epoch(br, group: str) -> int:
    import sqlite3

    db = sqlite3.connect(f"file:{br.state}?mode=ro", uri=True)
    try:
        return db.execute("SELECT group_epoch FROM streams_groups WHERE group_id = ?", (group,)).fetchone()[0]
    finally:
        db.close()


def test_streams_instances_carry_on_across_a_bridge_kill_without_a_rebalance(streams_restart_bridge, tmp_path):
    """Two Kafka Streams 4.4 instances (exactly_once_v2, group.protocol=streams) share the 8 tasks;
    the bridge is killed with SIGKILL and started again. The streams group comes back from SQLite
    with its topology, members, epochs and tasks: the group epoch does not move, neither instance
    loses or gains a task, and the counts over the input produced before and after the kill are
    exact. (Kafka keeps its streams groups across a broker restart the same way, from
    __consumer_offsets.)"""
    pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not in the test venv")
    from confluent_kafka.admin import AdminClient, NewTopic
    from runners import java

    if not java.available():
        util.skip_loudly("no java/javac for the Kafka Streams 4.4 tests")
    java.compile_java("StreamsWorker", next_tier=True)
    target = streams_restart_bridge
    br = target.server
    tag = f"sg-restart-{uuid.uuid4().hex[:8]}"
    app, topics = tag + "-wc", (tag + "-input", tag + "-output")
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    for f in admin.create_topics([NewTopic(topics[0], 4, 1), NewTopic(topics[1], 1, 1)]).values():
        f.result(timeout=60)
    workers: list[Worker] = []
    try:
        produce_lines(target.bootstrap, topics[0], PHASE1 * 5)
        for n in ("a", "b"):
            workers.append(Worker(f"streams-restart-{n}", target.bootstrap, app, topics, str(tmp_path / n)))
        a, b = workers
        wait_for(lambda: len(a.owned()) == 4 and len(b.owned()) == 4 and a.owned() | b.owned() == TASKS
                 and a.running() and b.running(), 120, "the two instances running 4 tasks each")
        want = counts(PHASE1 * 5)
        assert latest_counts(target.bootstrap, topics[1], want, 60) == want
        epoch = streams_group_epoch(br, app)
        before = (a.owned(), b.owned())
        killed_at = int(time.time() * 1000)
        br.kill_and_restart()
        produce_lines(target.bootstrap, topics[0], PHASE2 * 5)
        want = counts(PHASE1 * 5 + PHASE2 * 5)
        got = latest_counts(target.bootstrap, topics[1], want, 90)
        after = [[owned for wall, owned in w.tasks if wall > killed_at] for w in workers]
        epoch_after = streams_group_epoch(br, app)
    finally:
        for w in workers:
            w.stop()
    assert [e for w in workers for e in w.errors] == []
    assert got == want
    for w, owned, later in zip(workers, before, after):
        assert all(o == owned for o in later), f"{w.name} owned {sorted(owned)} before the kill, then {later}"
    assert epoch_after == epoch, "the group epoch moved: a rebalance after the restart"


STREAMS_GROUP_COMMAND = "org.apache.kafka.tools.streams.StreamsGroupCommand"
STREAMS_TOOL_RUNS: dict[str, list[tuple[list[str], int, object]]] = {}


def tool_view(out: str, app: str, tag: str) -> object:
    """A kafka-streams-groups answer without what differs between two runs of one scenario: the
    application's tag, UUIDs and Kafka ids (members, processes), and in tables the columns naming
    members, processes, clients, hosts, the coordinator's address and epochs (each side counts its
    own epochs). Tables become sorted lists of rows (column -> value): their column widths follow
    the values' lengths, and the tool prints rows in the order of Java hash maps keyed by topic
    names, which differ by the tag. Other lines stay as they are, spaces collapsed."""

    def mask(line: str) -> str:
        line = line.replace(app, "APP").replace(tag, "TAG")
        line = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "UUID", line)
        line = re.sub(r"(?<![\w-])[A-Za-z0-9_-]{22}(?![\w-])", "ID", line)
        line = re.sub(r"\s+", " ", line).strip()
        if "TARGET-ACTIVE:" in line:  # --members --verbose: the epochs are bare numbers there
            line = re.sub(r"(?<= )\d+(?= )", "N", line)
        return line

    lines = [mask(line) for line in out.splitlines()]
    view: list = []
    header, rows = None, []

    def flush():
        if rows:
            view.append(sorted(rows, key=lambda r: sorted(r.items())))
            rows.clear()

    for line in lines:
        cols = line.split(" ") if line else []
        if cols and cols[0] == "GROUP" and len(cols) > 1:
            flush()
            header = cols
        elif header and len(cols) == len(header):
            rows.append({h: ("*" if re.search(r"EPOCH|MEMBER$|PROCESS|CLIENT|HOST|COORDINATOR", h) else v)
                         for h, v in zip(header, cols)})
        else:
            flush()
            header = None
            if line:
                view.append(line)
    flush()
    return view


def test_kafka_streams_groups_tool_prints_what_it_prints_for_kafka(target_next, tmp_path):
    """Kafka 4.4's kafka-streams-groups (StreamsGroupCommand) on a running word count instance:
    --list, --describe with --state, --members, --offsets, then --delete once the instance left.
    Each answer, as tool_view() normalises it, is the same on the bridge as on Kafka 4.4."""
    pytest.importorskip("confluent_kafka", reason="SKIPPED: confluent-kafka not in the test venv")
    from confluent_kafka.admin import AdminClient, NewTopic
    from runners import java

    from harness.tool_shell import ToolSession

    if not java.available():
        util.skip_loudly("no java/javac for the Kafka Streams 4.4 tests")
    java.compile_java("StreamsWorker", next_tier=True)
    target = target_next
    tag = f"sg-tool-{target.name}-{uuid.uuid4().hex[:8]}"
    app, topics = tag + "-wc", (tag + "-input", tag + "-output")
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    for f in admin.create_topics([NewTopic(topics[0], 2, 1), NewTopic(topics[1], 1, 1)]).values():
        f.result(timeout=60)
    produce_lines(target.bootstrap, topics[0], PHASE1)
    runs: list[tuple[list[str], int, object]] = []
    w = Worker(f"streams-tool-{target.name}", target.bootstrap, app, topics, str(tmp_path / "w"))
    with ToolSession(STREAMS_GROUP_COMMAND, target.bootstrap, util.log_dir() / f"streams-tool-{target.name}.log",
                     next_tier=True) as tool:
        try:
            wait_for(lambda: len(w.owned()) == 4 and w.running(), 90, "the instance running its 4 tasks")
            want = counts(PHASE1)
            assert latest_counts(target.bootstrap, topics[1], want, 60) == want
            time.sleep(2)  # its last offsets committed (commit.interval.ms 200)
            listed = tool.run("--list")
            assert app in listed.stdout.split(), listed.stdout + listed.stderr
            for args in (["--describe", "--group", app], ["--describe", "--group", app, "--state"],
                         ["--describe", "--group", app, "--members"],
                         ["--describe", "--group", app, "--members", "--verbose"],
                         ["--describe", "--group", app, "--offsets"]):
                r = tool.run(*args)
                runs.append((args, r.exit_code, tool_view(r.stdout + r.stderr, app, tag)))
        finally:
            w.stop()
        for args in (["--describe", "--group", app, "--state"], ["--delete", "--group", app]):
            r = tool.run(*args)
            runs.append((args, r.exit_code, tool_view(r.stdout + r.stderr, app, tag)))
    STREAMS_TOOL_RUNS[target.name] = runs
    (util.log_dir() / f"streams-tool-{target.name}.views.json").write_text(json.dumps(runs, indent=1))
    for args, code, view in runs:
        assert code == 0, (args, view)
    other = STREAMS_TOOL_RUNS.get("kafka-next")
    if target.name == "bridge" and other:
        for (args, code, view), (_, kcode, kview) in zip(runs, other):
            assert (code, view) == (kcode, kview), f"kafka-streams-groups {' '.join(args)}"
