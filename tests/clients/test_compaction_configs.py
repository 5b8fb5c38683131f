"""The topic configs that steer compaction (issue 35, "the cleaner"), side by side with Kafka:
the same writes, the same waits and the same records read back on both targets.

* `delete.retention.ms`: a tombstone survives the pass that first cleans it (its delete horizon is
  set then) and goes in a later pass once the horizon has passed (Kafka also cleans a log whose
  latest delete horizon has passed without new dirty records; the bridge when the next records
  come: after those, both have dropped them).
* `max.compaction.lag.ms`: a partition whose dirty ratio stays below `min.cleanable.dirty.ratio`
  is cleaned anyway once its oldest dirty record is older than the lag; a twin topic without the
  lag keeps its superseded records.
* `min.compaction.lag.ms`: nothing newer than the lag is cleaned; once the lag has passed, it is.

Every topic rolls by `segment.ms=100` (rounds of writes 150 ms apart, one record after the last
round rolls it), and both targets check for cleanable partitions every second.
"""
from __future__ import annotations

import time
import uuid

from harness.read_partition import compacted_view, read_partition, wait_compacted

ROLLING = {"cleanup.policy": "compact", "segment.ms": "100"}


def create(bootstrap: str, topic: str, **config: str):
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config={**ROLLING, **config})])[topic].result(timeout=60)


def write(bootstrap: str, topic: str, rounds: list[list[tuple[str, str | None]]],
          roll: str) -> list[tuple[int, str, str | None]]:
    """Each round's (key, value) records, rounds 150 ms apart, then (roll, "roll") so the last
    round's segment is rolled. (offset, key, value) of every record, in offset order."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    written: list[tuple[int, str, str | None]] = []

    def sent(err, m):
        assert err is None, err
        written.append((m.offset(), m.key().decode(), m.value().decode() if m.value() is not None else None))
    for records in rounds:
        for k, v in records:
            p.produce(topic, key=k, value=v, on_delivery=sent)
        assert p.flush(30) == 0
        time.sleep(0.15)
    p.produce(topic, key=roll, value="roll", on_delivery=sent)
    assert p.flush(30) == 0
    return sorted(written)


def values(keys: range, tag: str) -> list[tuple[str, str | None]]:
    return [(f"k{k}", f"{tag}-{k}") for k in keys]


def test_tombstones_go_once_their_delete_horizon_has_passed(target):
    topic = f"compacted-horizon-{uuid.uuid4().hex[:8]}"
    create(target.bootstrap, topic, **{"min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "4000"})
    first = write(target.bootstrap, topic, [values(range(10), "a"), [(f"k{k}", None) for k in range(5)]], "roll1")
    want = compacted_view(first, first[-1][0])
    assert sum(v is None for _, _, v in want) == 5
    got, _, _ = wait_compacted(target.bootstrap, topic, want)
    assert got == want, (target.name, "the first pass keeps the tombstones", got)

    time.sleep(4.5)  # past every tombstone's horizon (set by that first pass)
    written = first + write(target.bootstrap, topic, [values(range(5, 10), "b")], "roll2")
    point = written[-1][0]
    want = [r for r in compacted_view(written, point) if r[2] is not None]
    assert [k for _, k, _ in want] == ["roll1", "k5", "k6", "k7", "k8", "k9", "roll2"]
    got, low, high = wait_compacted(target.bootstrap, topic, want)
    assert got == want, (target.name, "a later pass drops the expired tombstones", got)
    assert (low, high) == (0, point + 1), target.name


def test_max_compaction_lag_cleans_below_the_dirty_ratio(target):
    """Two topics with min.cleanable.dirty.ratio 0.99, one with max.compaction.lag.ms=2000. Each
    first gets 40 updates of 20 keys in one batch, rolled: everything is dirty (ratio 1.0), so
    both are cleaned. Then 20 more updates, rolled: about half the log is dirty, below 0.99, so
    only the topic with the lag is cleaned again; its twin keeps the superseded records."""
    lagged, twin = (f"compacted-maxlag-{uuid.uuid4().hex[:8]}{s}" for s in ("", "-twin"))
    written = {}
    for topic, extra in ((lagged, {"max.compaction.lag.ms": "2000"}), (twin, {})):
        create(target.bootstrap, topic, **{"min.cleanable.dirty.ratio": "0.99", **extra})
        written[topic] = write(target.bootstrap, topic, [values(range(20), "a") + values(range(20), "b")], "roll1")
        want = compacted_view(written[topic], written[topic][-1][0])
        got, _, _ = wait_compacted(target.bootstrap, topic, want)
        assert got == want, (target.name, topic, "cleaned by the dirty ratio", got)
    first = {topic: compacted_view(w, w[-1][0]) for topic, w in written.items()}
    for topic in (lagged, twin):
        written[topic] += write(target.bootstrap, topic, [values(range(20), "c")], "roll2")
    point = written[lagged][-1][0]
    want = compacted_view(written[lagged], point)
    got, _, _ = wait_compacted(target.bootstrap, lagged, want)
    assert got == want, (target.name, "cleaned by max.compaction.lag.ms", got)
    # The twin, written at the same time, was not cleaned again: its superseded records are there.
    got, _, _ = read_partition(target.bootstrap, twin)
    assert got == first[twin] + written[twin][-21:], (target.name, "the twin stays below its dirty ratio", got)


def test_min_compaction_lag_keeps_recent_records_uncleaned(target):
    topic = f"compacted-minlag-{uuid.uuid4().hex[:8]}"
    create(target.bootstrap, topic, **{"min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "10000"})
    written = write(target.bootstrap, topic, [values(range(10), "a"), values(range(10), "b"),
                                              values(range(10), "c")], "roll")
    written_at = time.monotonic()
    time.sleep(3)  # three checks of the cleaner on each target, all within the lag
    got, _, _ = read_partition(target.bootstrap, topic)
    assert time.monotonic() - written_at < 9, "the read took too long to show anything about the lag"
    assert got == written, (target.name, "nothing newer than min.compaction.lag.ms is cleaned", got)
    want = compacted_view(written, written[-1][0])
    got, _, _ = wait_compacted(target.bootstrap, topic, want)
    assert got == want, (target.name, "cleaned once the lag has passed", got)
