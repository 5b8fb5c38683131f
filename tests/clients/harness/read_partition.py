"""Every record of one partition from its log start, with confluent-kafka: what a checker compares
after compaction (tests/clients/test_compaction.py, tests/system/test_compaction_crash.py)."""
from __future__ import annotations

import time
import uuid


def read_partition(bootstrap: str, topic: str, partition: int = 0, timeout: float = 60):
    """([(offset, key or None, value or None)], low watermark, high watermark), keys and values
    decoded as UTF-8."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "read-partition-" + uuid.uuid4().hex[:6],
                  "enable.partition.eof": True, "enable.auto.commit": False})
    out = []
    try:
        c.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
        deadline = time.monotonic() + timeout
        while True:
            assert time.monotonic() < deadline, f"read_partition({topic}-{partition}): no end after {timeout}s"
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    break
                raise AssertionError(f"read_partition({topic}-{partition}): {m.error()}")
            out.append((m.offset(), m.key().decode() if m.key() is not None else None,
                        m.value().decode() if m.value() is not None else None))
        low, high = c.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
    finally:
        c.close()
    return out, low, high


def compacted_view(written: list[tuple[int, str, str | None]], point: int) -> list[tuple[int, str, str | None]]:
    """What Kafka's compaction guarantees of `written` ((offset, key, value) in offset order) after
    cleaning below `point`: the latest record of each key there (tombstones kept until
    delete.retention.ms), every record from it on, offsets unchanged."""
    latest = {k: o for o, k, _ in written if o < point}
    return [(o, k, v) for o, k, v in written if o >= point or latest[k] == o]


def wait_compacted(bootstrap: str, topic: str, want: list, timeout: float = 90):
    """read_partition until it reads `want` (the cleaner has run) or `timeout` passes: the last
    (records, low watermark, high watermark), for the caller's assertions."""
    deadline = time.monotonic() + timeout
    while True:
        got, low, high = read_partition(bootstrap, topic)
        if got == want or time.monotonic() > deadline:
            return got, low, high
        time.sleep(1)
