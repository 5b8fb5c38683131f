"""The rehearsal's ledger: every record a producer had acknowledged and every record a consumer
group read, on Kafka, on the bridge and natively on Iggy, and the position each group restarted
from at each move. report() says, per group, what was lost (must be 0), what was read twice and
why, and whether each key's records were read in the order they were produced.

A record is identified by its value's "id"; "key" and "seq" (the key's own counter, continued
across the producer switch) check the per-key order."""
from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class Produced:
    rid: str
    cluster: str  # where the producer wrote it: "kafka" or "bridge"
    topic: str
    partition: int
    offset: int
    key: str
    seq: int


@dataclass(frozen=True)
class Consumed:
    rid: str
    group: str
    stage: str  # who read it: "kafka", "bridge" or "iggy"
    topic: str
    partition: int
    offset: int
    key: str
    seq: int


@dataclass(frozen=True)
class Handover:
    """A group moved from one stage to the next: its committed offsets where it stopped and the
    positions it resumed from (absent partition: resumed from the earliest record)."""
    group: str
    src: str
    dst: str
    committed: dict  # (topic, partition) -> offset committed at the source when it stopped
    restart: dict  # (topic, partition) -> offset the group resumed from at the destination


class Ledger:
    def __init__(self):
        self._lock = threading.Lock()
        self.produced: dict[str, Produced] = {}
        self.produce_failures = 0
        self.consumed: list[Consumed] = []
        self.handovers: list[Handover] = []

    def on_produced(self, p: Produced):
        with self._lock:
            self.produced[p.rid] = p

    def on_produce_failed(self):
        with self._lock:
            self.produce_failures += 1

    def on_consumed(self, c: Consumed):
        with self._lock:
            self.consumed.append(c)

    def on_handover(self, h: Handover):
        with self._lock:
            self.handovers.append(h)

    def consumed_ids(self, group: str) -> set[str]:
        with self._lock:
            return {c.rid for c in self.consumed if c.group == group}

    def report(self, group_topics: dict[str, set[str]], slack: dict[str, int] | None = None) -> dict:
        """`slack`: per group, offsets the bound may be off by (a move between two offset spaces:
        an exactly-once copy's aborted records hold offsets on the bridge that Kafka's log has
        not, so Kafka's committed offsets sit that much lower than the same records there)."""
        with self._lock:
            produced = dict(self.produced)
            consumed = list(self.consumed)
            handovers = list(self.handovers)
        out = {"produced": len(produced), "produce_failures": self.produce_failures, "groups": {}}
        for group, topics in group_topics.items():
            out["groups"][group] = group_report(group, topics, produced, consumed, handovers)
            if slack and slack.get(group):
                out["groups"][group]["duplicate_bound"] += slack[group]
        return out


def group_report(group: str, topics: set[str], produced: dict[str, Produced], consumed: list[Consumed],
                 handovers: list[Handover]) -> dict:
    mine = [c for c in consumed if c.group == group]
    expected = {rid for rid, p in produced.items() if p.topic in topics}
    seen: dict[str, list[Consumed]] = defaultdict(list)
    for c in mine:
        seen[c.rid].append(c)

    lost = sorted(expected - seen.keys())
    # Read but never acknowledged to its producer (a delivery report lost to a timeout): not a
    # loss, counted apart.
    unacknowledged = sorted(seen.keys() - produced.keys())

    # Every read after the first: explained when a move of the group resumed at or before the
    # record's offset after the stage it was first read on had read it (at-least-once at the
    # cutover). "translation" when the resume position lay before what the group had committed
    # (MirrorMaker's checkpoint lags the commit), "uncommitted" when the group had read it after
    # its last commit.
    by_move = {(h.src, h.dst): h for h in handovers if h.group == group}
    counts = {"translation": 0, "uncommitted": 0, "unexplained": 0}
    unexplained_examples = []
    for rid, reads in seen.items():
        for first, again in zip(reads, reads[1:]):
            h = by_move.get((first.stage, again.stage))
            tp = (again.topic, again.partition)
            if h is not None and again.offset >= h.restart.get(tp, 0):
                committed = h.committed.get(tp)
                counts["translation" if committed is not None and again.offset < committed else "uncommitted"] += 1
            else:
                counts["unexplained"] += 1
                if len(unexplained_examples) < 5:
                    unexplained_examples.append(f"{rid} read on {first.stage} at {first.topic}-{first.partition}"
                                                f"@{first.offset}, again on {again.stage} at @{again.offset}")
    # The most a move may re-read: the distance from where the group resumed to what it had
    # committed, plus what it had read beyond its commit.
    bound = 0
    for h in by_move.values():
        last_read = defaultdict(lambda: -1)
        for c in mine:
            if c.stage == h.src:
                tp = (c.topic, c.partition)
                last_read[tp] = max(last_read[tp], c.offset)
        for tp, restart in h.restart.items():
            bound += max(0, max(h.committed.get(tp, restart), last_read[tp] + 1) - restart)

    # Per key, the first read of each record must follow the key's production order.
    order_violations = 0
    last_seq: dict[tuple[str, str], int] = {}
    first_read: set[str] = set()
    for c in mine:
        if c.rid in first_read:
            continue
        first_read.add(c.rid)
        k = (c.topic, c.key)
        if k in last_seq and c.seq <= last_seq[k]:
            order_violations += 1
        last_seq[k] = c.seq

    stages = defaultdict(int)
    for c in mine:
        stages[c.stage] += 1
    return {
        "expected": len(expected),
        "read": len(mine),
        "read_by_stage": dict(stages),
        "lost": len(lost),
        "lost_examples": lost[:5],
        "unacknowledged_read": len(unacknowledged),
        "duplicates": sum(counts.values()),
        "duplicates_translation": counts["translation"],
        "duplicates_uncommitted": counts["uncommitted"],
        "duplicates_unexplained": counts["unexplained"],
        "unexplained_examples": unexplained_examples,
        "duplicate_bound": bound,
        "order_violations": order_violations,
    }
